"""The proof by difference, as a function the tests call: the cached path answers exactly as a
fresh, cache-free simulator (``check_cached_against_fresh``).

Shared by the differential test (``test_cache_differential.py``) and the test of that test
(``test_differential_catches_bugs.py``), which plants bugs in the caches one at a time and asserts
the differential test fails on each. What is generated, per vendor: four registrations (two groups of
one shape whose UUIDs differ, a larger one, and a second node with the first one's UUIDs), node
decorations drawn per call (device cordons, pair scores, the vendor's read labels and others), pods
from a small pool of requests (so pods that differ only in their annotations meet) with the vendor's
device-selection annotations (by UUID and by type), scheduler policies and NUMA binding, live usage
per device position (so nodes of one shape meet at equal and at different usage), usage objects
handed out again or anew, and caches forgotten between calls.
"""

from __future__ import annotations

import copy
import re
import sys

import orjson
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from hami_sim.engine.annotations import DEVICE_CORDON, NVIDIA_PAIR_SCORE, encode_pair_scores
from hami_sim.engine.cache import usage_keys
from hami_sim.engine.requests import PodError
from hami_sim.engine.sightings import SightedNodes
from hami_sim.engine.simulate import EngineConfig, Simulator


#: what the differential test draws (``test_cache_differential``; the test of the test reuses it)
def proof_arguments() -> dict:
    return {"data": st.data(), "budget": BUDGETS}


#: the size CI runs (the test of the test asserts each planted bug is caught at this size)
PROOF = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)

#: cache budgets: off, tiny, evictions, roomy, and one whose registration templates are kept (the
#: roomy ones listed more than once: most examples should reach every memo)
BUDGETS = st.sampled_from([1 << 26, 1 << 22, 1 << 26, 0, 1 << 26, 300, 1 << 22, 6000, 1 << 26, 40000])

ALL_VENDORS = [v.common_word for v in Simulator().vendors.values()]

#: vendors whose verdicts registrations that differ only in UUIDs share (``Vendor.fit_ignores_uuids``
#: and ``uuid_blind_device``: declared only where the vendor's rules were read for it); every other
#: vendor fits each node itself
UUID_SHARING = {"NVIDIA"}


class UseOf:  # what ``apply_usage`` reads of one device's live usage
    def __init__(self, used: int, usedmem: int, usedcores: int, unhealthy: bool = False) -> None:
        self.used, self.usedmem, self.usedcores = used, usedmem, usedcores
        self.mig, self.unhealthy, self.pod_infos = (), unhealthy, ()

    def __repr__(self) -> str:
        return f"UseOf({self.used}, {self.usedmem}, {self.usedcores}, {self.unhealthy})"


class LiveUsage:  # one object per content, as the usage store hands them out
    def __init__(self, devices: dict) -> None:
        self.devices = devices
        self.keys = usage_keys(devices)  # (as the store computes them when it loads a row)


def vendor_nodes(vendor: str) -> list[dict]:
    """Four registrations of ``vendor``: two groups of one shape (their UUIDs differ), a larger one,
    and a node registering the first one's devices, UUIDs included."""
    from profiles.render import template_node
    from tests.profiles.test_vendor_profiles import PROFILES, full

    rows = full(vendor, PROFILES[vendor])
    bigger = [{**row, "quantity": row["quantity"] + 1} for row in rows]
    nodes = [
        template_node(group, match_labels={}, profiles=[(vendor, r, {})])
        for group, r in (("g-a", rows), ("g-b", rows), ("g-c", bigger))
    ]
    twin = copy.deepcopy(nodes[0])
    twin["metadata"]["name"] = twin["metadata"]["name"].replace("g-a", "g-d")
    return [*nodes, twin]


def resource_roles(sim: Simulator, vendor: str) -> dict[str, str]:
    """The vendor's pod resources by role (count, mem, core), from its config's resource fields."""
    backend = sim.vendors[vendor]
    roles: dict[str, str] = {}
    for name in backend.resource_fields:
        role = "mem" if "memory" in name else "core" if "core" in name else "count"
        if "percentage" not in name and "priority" not in name:
            roles.setdefault(role, getattr(backend.config, name))
    return roles


_SELECTING = re.compile(r"^[\w.-]+/(no)?use-?[\w-]*(uuid|type)$")


def pod_selectors(sim: Simulator, vendor: str) -> tuple[list[str], list[str], list[str]]:
    """The pod annotations ``vendor``'s module names: (by UUID, by type, NUMA binding)."""
    backend = sim.vendors[vendor]
    names: set[str] = set()
    for cls in type(backend).__mro__:
        module = sys.modules.get(cls.__module__)
        names |= {v for v in vars(module).values() if isinstance(v, str)} if module else set()
    selecting = sorted(n for n in names if _SELECTING.match(n))
    by_uuid = [n for n in selecting if n.endswith("uuid")]
    return (
        by_uuid,
        [n for n in selecting if n not in by_uuid],
        sorted(n for n in names if n.endswith("/numa-bind")),
    )


#: a container's request by role: small ones fit every vendor's profiles, large ones fail on memory
#: or cores, more devices than a node has fail on every vendor
REQUESTS = st.fixed_dictionaries(
    {"count": st.sampled_from([1, 1, 2, 64])},
    optional={"mem": st.sampled_from([1, 4, 1000, 10**6]), "core": st.sampled_from([10, 50, 100])},
)

#: a pod whose verdict reads every field of a device's usage (a slot, 4000 MiB, half the cores):
#: every usage variant (``usage_variants``) changes its answer
PROBE = {"count": 1, "mem": 4000, "core": 50}

#: per device position, what a live node's usage holds
BASE_USAGE = st.lists(
    st.builds(
        UseOf,
        st.integers(0, 1),
        st.sampled_from([0, 20000]),
        st.sampled_from([0, 100]),
        st.sampled_from([False, False, False, True]),
    ),
    min_size=1,
    max_size=3,
)  # (devices past the list's end hold no usage)
#: what each variant of a usage changes on every device (the fields a live verdict reads)
FLIPPED = {"used": (0, 1), "usedmem": (0, 20000), "usedcores": (0, 100), "unhealthy": (False, True)}


def usage_variants(base: list[UseOf]) -> list[list[UseOf]]:
    """``base`` and, per field a live verdict reads, ``base`` with that field changed on every
    device: nodes of one shape meet at usages that differ in exactly one field, enough for a pod to
    fit on one and not on the other."""
    variants = [base]
    for name, (low, high) in FLIPPED.items():
        changed = []
        for was in base:
            now = UseOf(was.used, was.usedmem, was.usedcores, was.unhealthy)
            setattr(now, name, high if getattr(was, name) == low else low)
            changed.append(now)
        variants.append(changed)
    return variants


def _subset_text(values: list[str]) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(values), min_size=1, max_size=2, unique=True).map(",".join)


def pod_annotations(
    sim: Simulator, vendor: str, registered: list[list[str]], types: list[str]
) -> st.SearchStrategy:
    """A pod's annotations: the vendor's selections by UUID and type, policies, NUMA binding."""
    by_uuid, by_type, numa = pod_selectors(sim, vendor)
    ids = sorted({uuid for uuids in registered for uuid in uuids}) or ["none"]
    choices: dict[str, st.SearchStrategy[str]] = {
        "hami.io/gpu-scheduler-policy": st.sampled_from(["binpack", "spread", "topology-aware"]),
        "hami.io/node-scheduler-policy": st.sampled_from(["binpack", "spread"]),
        "team": st.just("a"),
    }
    # some of the UUIDs, or every UUID of one registration
    uuids = _subset_text(ids) | st.sampled_from(registered).map(",".join)
    choices |= {key: uuids for key in by_uuid}
    choices |= {key: _subset_text(types) for key in by_type}
    choices |= {key: st.just("true") for key in numa}
    keys = st.lists(st.sampled_from(sorted(choices)), min_size=1, max_size=2, unique=True)
    return keys.flatmap(lambda ks: st.fixed_dictionaries({k: choices[k] for k in ks}))


def vendor_pod(roles: dict[str, str], containers: list[dict], annotations: dict, i: int) -> dict:
    return {
        "metadata": {"name": f"p{i}", "annotations": annotations},
        "spec": {
            "containers": [
                {
                    "name": f"c{k}",
                    "resources": {"limits": {roles[r]: str(a) for r, a in amounts.items() if r in roles}},
                }
                for k, amounts in enumerate(containers)
            ]
        },
    }


def decorated(node: dict, ids: list[str], labels: list[str], data: st.DataObject) -> dict:
    """``node`` (a copy) with what a call may add: device cordons, pair scores, labels."""
    node = copy.deepcopy(node)
    meta = node["metadata"]
    if ids and data.draw(st.integers(0, 3), label="cordon") == 3:
        meta["annotations"][DEVICE_CORDON] = data.draw(_subset_text(ids), label="cordoned")
    if len(ids) > 1 and data.draw(st.integers(0, 3), label="pair scores") == 3:
        score = data.draw(st.sampled_from([0, 10, 100]), label="pair score")
        scores = {a: {b: score for b in ids if b != a} for a in ids}
        meta["annotations"][NVIDIA_PAIR_SCORE] = encode_pair_scores(scores)
    if data.draw(st.booleans(), label="labels"):
        value = st.sampled_from(["trn1.32xlarge", "inf2.xlarge", "x"])
        meta["labels"] = data.draw(
            st.fixed_dictionaries({k: value for k in [*labels, "zone"]}), label="labels"
        )
    return node


def answer(v) -> tuple:
    fit = v.fit
    chosen = (
        [[(d.uuid, d.usedmem, d.usedcores, d.mig_profile) for d in c] for c in fit.containers] if fit else []
    )
    return (
        v.name,
        v.fits,
        v.reason,
        v.unresolvable,
        chosen,
        dict(fit.device_reasons) if fit else {},
        v.score_after,
    )


def as_sent(sim: Simulator, nodes: list[dict]) -> SightedNodes:
    """``nodes`` as the extender hands them to the filter: their bytes, looked up among those seen."""
    raws = [orjson.dumps(node) for node in nodes]
    return SightedNodes(raws, [sim.sightings.get(raw) for raw in raws], [None] * len(raws))


def _registered_ids(node: dict) -> tuple[list[str], list[str]]:
    """The node's device UUIDs and card types, decoded without any memo."""
    devices = Simulator(EngineConfig(cache_bytes=0)).annotation_inventory(node).devices
    return [d.id for d in devices], sorted({d.type for d in devices})


def _ask(cached: Simulator, pod: dict, sent: list[dict], live) -> set[bool]:
    """``pod`` on ``sent``: the cached simulator answers as a fresh one (asserted); the outcomes."""
    try:
        ctx = cached.pod_context(pod)
        fresh = Simulator(EngineConfig(cache_bytes=0))
        fresh_ctx = fresh.pod_context(pod)
    except (PodError, ValueError):
        return set()
    got = [answer(v) for v in cached.filter_nodes(ctx, as_sent(cached, sent), live=live)]
    want = [answer(v) for v in fresh.filter_nodes(fresh_ctx, sent, live=live)]
    assert got == want
    return {a[1] for a in got}


def check_cached_against_fresh(vendor: str, data: st.DataObject, budget: int) -> set[bool]:
    """Calls drawn from ``data`` on a simulator of ``budget`` bytes, each answered as a fresh
    simulator with no memo at all answers it (asserted); the outcomes met."""
    cached = Simulator(EngineConfig(cache_bytes=budget))
    roles = resource_roles(cached, vendor)
    nodes = vendor_nodes(vendor)
    read = [_registered_ids(n) for n in nodes]
    types = sorted({t for _, ts in read for t in ts} | {"other"})
    labels = sorted(cached.vendors[vendor].reads.labels)
    requests = data.draw(st.lists(st.lists(REQUESTS, min_size=1, max_size=2), min_size=1, max_size=2))
    annotations = pod_annotations(cached, vendor, [ids for ids, _ in read if ids], types)
    # per request, a pod without annotations and one with (they meet in the caches by their key)
    pods = [
        vendor_pod(roles, containers, data.draw(annotations, label="annotations") if k else {}, 2 * i + k)
        for i, containers in enumerate(requests)
        for k in (0, 1)
    ]
    probe = vendor_pod(roles, [PROBE], {}, len(pods))
    usages = usage_variants(data.draw(BASE_USAGE, label="usage"))
    held: dict[str, LiveUsage] = {}  # per live node, the usage object the store hands out now
    outcomes: set[bool] = set()
    for _ in range(data.draw(st.integers(2, 8), label="calls")):
        # half the calls: the probe on the two groups of one shape, live and undecorated, one at a
        # usage, the other once at each usage that differs from it in one field (where a live
        # verdict is shared, or must not be); the others: drawn pods on drawn nodes
        if data.draw(st.booleans(), label="one shape at near usages"):
            first = data.draw(st.sampled_from([0, 1]), label="first")
            asked = [probe]
            plan = [(first, 0, False)] + [(1 - first, k, False) for k in range(1, len(usages))]
        else:
            p = data.draw(st.integers(0, len(pods) - 1), label="pod")
            asked = [pods[p], pods[p ^ 1]]  # then its twin: the same request, other annotations
            registrations = st.lists(st.integers(0, len(nodes) - 1), min_size=1, max_size=3, unique=True)
            # usage -2: a template, -1: live without usage, else live at usages[i]
            usage = st.integers(-2, len(usages) - 1)
            plan = [(r, data.draw(usage, label="usage"), True) for r in data.draw(registrations)]
        sent, usage_of = [], {}
        for k, (registration, usage_at, decorate) in enumerate(plan):
            node = nodes[registration]
            node = decorated(node, read[registration][0], labels, data) if decorate else copy.deepcopy(node)
            if usage_at != -2:
                name = node["metadata"]["name"] = f"ip-10-0-{k}-{registration}"  # real: usage applies
                per_position = usages[usage_at] if usage_at >= 0 else []
                ids = read[registration][0]
                devices = {u: use for u, use in zip(ids, per_position, strict=False) if use}
                if data.draw(st.booleans(), label="usage handed out anew") or name not in held:
                    held[name] = LiveUsage(devices)
                usage_of[name] = held[name]
            sent.append(node)
        for pod in asked:
            outcomes |= _ask(cached, pod, sent, usage_of.get)
        assert cached.cache_stats()["bytes"] <= budget
        forget = data.draw(st.sampled_from(["", "", "registrations", "node bytes"]), label="then forget")
        if forget == "registrations":  # evicted while the nodes' bytes are still remembered
            cached.cache.clear()
        elif forget == "node bytes":
            cached.sightings.clear()
    return outcomes
