"""Builders for the vendor tests: template nodes, pods, HAMi's example pods, a full simulator."""

from __future__ import annotations

from pathlib import Path

import orjson
import yaml

from hami_sim.engine.requests import parse_pod
from hami_sim.engine.simulate import EngineConfig, Simulator
from hami_sim.engine.vendors import default_vendors
from tests.factories import kube

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "hami_examples"
VENDORS = default_vendors()
BY_WORD = {v.common_word: v for v in VENDORS}


def simulator(**kwargs) -> Simulator:
    return Simulator(EngineConfig(vendors=tuple(VENDORS), **kwargs))


def node(
    name: str,
    *,
    annotations: dict | None = None,
    capacity: dict | None = None,
    labels: dict | None = None,
) -> dict:
    """A template node with these annotations (a vendor's registration), ``capacity`` entries over
    ``kube.CAPACITY``, all of it allocatable."""
    return kube.node(
        name, annotations=annotations, labels=labels, capacity={**kube.CAPACITY, **(capacity or {})}
    )


def json_register(devices: list[dict]) -> str:
    return orjson.dumps(devices).decode()


def pod(
    *containers: dict, annotations: dict | None = None, name: str = "p", init: list[dict] | None = None
) -> dict:
    """A pod whose containers (and ``init`` containers) have these resource blocks, in order."""
    return kube.pod(
        name,
        annotations=annotations,
        containers=[kube.container(f"c{i}", resources=c) for i, c in enumerate(containers)],
        init=[kube.container(f"i{i}", resources=c) for i, c in enumerate(init or ())],
    )


def limits(**values) -> dict:
    """``limits(**{"hygon.com/dcunum": 1})`` -> a container resources block."""
    return {"limits": {k: str(v) for k, v in values.items()}}


def requests_of(pod_obj: dict) -> list[dict]:
    """Per container (init first): ``{type: (nums, memreq, mempct, cores)}``."""
    view = parse_pod(pod_obj, VENDORS)
    return [
        {t: (r.nums, r.memreq, r.mem_percentage_req, r.coresreq) for t, r in c.items()}
        for c in view.requests.containers
    ]


def verdicts(sim: Simulator, pod_obj: dict, nodes: list[dict]) -> dict:
    ctx = sim.pod_context(pod_obj)
    return {v.name: v for v in sim.filter_nodes(ctx, nodes)}


def examples(filename: str) -> list[tuple[str, dict]]:
    """HAMi's example YAMLs (``##### FILE:`` separated); Deployments yield their pod template."""
    text = (FIXTURES / filename).read_text()
    out: list[tuple[str, dict]] = []
    current = None
    chunks: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.startswith("##### FILE:"):
            current = line.split(":", 1)[1].strip()
            chunks[current] = []
        elif current is not None:
            chunks[current].append(line)
    for path, lines in chunks.items():
        for i, doc in enumerate(d for d in yaml.safe_load_all("\n".join(lines)) if d):
            if doc.get("kind") in ("Deployment", "StatefulSet", "DaemonSet", "Job"):
                template = doc["spec"]["template"]
                doc = {"metadata": template.get("metadata") or {}, "spec": template["spec"]}
            out.append((f"{path}#{i}", doc))
    return out


def body(pod_obj: dict, nodes: list[dict]) -> bytes:
    return orjson.dumps({"Pod": pod_obj, "Nodes": {"metadata": {}, "items": nodes}, "NodeNames": None})
