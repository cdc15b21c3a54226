"""Random place/remove/fork/revert/commit sequences against a simple model (hypothesis state machine).

The model keeps which pod sits on which node, a stack of full snapshots (GET bodies) for the forks,
and the revision. After every step the session must agree with it: the same placements, device
usage equal to the sum of what the placed pods hold (nothing lost, nothing double-counted), a
revert that restores the snapshot exactly (which devices each pod holds, MIG placements included),
and a revision that grows with every successful mutation and never goes back.
"""

from __future__ import annotations

from collections import defaultdict

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from tests.factories import gpu, node, pod

from .conftest import Api

pytestmark = [pytest.mark.api, pytest.mark.slow, pytest.mark.django_db]  # property-based: not in test-fast

MIG_PROFILES = [
    {
        "name": "1g.5gb",
        "memoryMB": 5120,
        "core": 14,
        "sliceCount": 1,
        "placements": [{"start": s, "size": 1} for s in range(7)],
    },
    {
        "name": "2g.10gb",
        "memoryMB": 10240,
        "core": 28,
        "sliceCount": 2,
        "placements": [{"start": s, "size": 2} for s in (0, 2, 4)],
    },
]
NODES = {
    "a10-x": node("a10-x", [gpu("GPU-X0", count=4), gpu("GPU-X1", index=1, count=4, numa=1)]),
    "a10-y": node("a10-y", [gpu("GPU-Y0", count=4)]),
    "mig-z": node(
        "mig-z",
        [
            gpu(
                "GPU-Z0",
                count=7,
                devmem=40960,
                type="NVIDIA A100-SXM4-40GB",
                mode="mig",
                migProfiles=MIG_PROFILES,
            )
        ],
    ),
}
PODS = [f"p{i}" for i in range(5)]
SIZES = {"gpumem": st.sampled_from([3000, 6000, 9000, 12000]), "gpucores": st.sampled_from([0, 10, 30])}


class SessionMachine(RuleBasedStateMachine):
    api: Api

    @initialize()
    def start(self):
        self.sid = self.api.create(name="property")["id"]
        self.placed: dict[str, str] = {}
        self.stack: list[tuple[dict, dict[str, str]]] = []
        self.revision = 0
        self.last = self._state()

    def _state(self) -> dict:
        return self.api.get(self.sid)

    @rule(
        uid=st.sampled_from(PODS),
        where=st.sampled_from(["mig-z", "a10-x", "a10-y"]),
        mem=SIZES["gpumem"],
        cores=SIZES["gpucores"],
    )
    def place(self, uid, where, mem, cores):
        before = self.last  # the invariant read it right after the previous step
        known = any(n["name"] == where for n in before["nodes"])
        p = pod(uid, uid=uid, gpumem=mem, gpucores=cores)
        status, body = (
            self.api.place(self.sid, p, node_name=where)
            if known
            else self.api.place(self.sid, p, NODES[where])
        )
        if uid in self.placed:
            if self.placed[uid] == where:
                assert status == 200 and body["revision"] == self.revision
            else:
                assert status == 409
            assert self._state()["placements"] == before["placements"]
            return
        if status == 201:
            self.revision += 1
            assert body["revision"] == self.revision
            self.placed[uid] = where
        else:
            assert status == 422 and body["detail"] == "pod does not fit" and body["reason"], body
            after = self._state()
            assert after["nodes"] == before["nodes"] and after["placements"] == before["placements"]

    @rule(uid=st.sampled_from(PODS))
    def remove(self, uid):
        status, body = self.api.call("delete", f"/api/v1/sessions/{self.sid}/placements/{uid}")
        if uid in self.placed:
            assert status == 200
            self.revision += 1
            assert body["revision"] == self.revision
            del self.placed[uid]
        else:
            assert status == 404

    @rule()
    def fork(self):
        snapshot = self.last
        status, body = self.api.call("post", f"/api/v1/sessions/{self.sid}/fork")
        assert status == 200
        self.revision += 1
        self.stack.append((snapshot, dict(self.placed)))
        assert body["depth"] == len(self.stack)

    @rule()
    def revert(self):
        status, body = self.api.call("post", f"/api/v1/sessions/{self.sid}/revert")
        if not self.stack:
            assert status == 409
            return
        assert status == 200
        self.revision += 1
        snapshot, placed = self.stack.pop()
        self.placed = placed
        assert body == {"depth": len(self.stack), "revision": self.revision}
        state = self._state()
        assert state["nodes"] == snapshot["nodes"]
        assert state["placements"] == snapshot["placements"]

    @rule()
    def commit(self):
        status, body = self.api.call("post", f"/api/v1/sessions/{self.sid}/commit")
        if not self.stack:
            assert status == 409
            return
        assert status == 200
        self.revision += 1
        self.stack.pop()
        assert body["depth"] == len(self.stack)

    @invariant()
    def agrees_with_model(self):
        if not hasattr(self, "sid"):
            return
        state = self.last = self._state()
        assert state["revision"] == self.revision
        assert state["depth"] == len(self.stack)
        assert {p["podUID"]: p["nodeName"] for p in state["placements"]} == self.placed
        held: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
        mig_held: dict[str, list] = defaultdict(list)
        for placement in state["placements"]:
            for container in placement["containers"]:
                for dev in container:
                    h = held[dev["uuid"]]
                    h[0] += 1
                    h[1] += dev["usedmem"]
                    h[2] += dev["usedcores"]
                    if "migProfile" in dev:
                        slot = dev["migPlacement"]
                        mig_held[dev["uuid"]].append((dev["migProfile"], slot["start"], slot["size"]))
        for n in state["nodes"]:
            for dev in n["devices"]:
                assert [dev["used"], dev["usedmem"], dev["usedcores"]] == held.get(dev["uuid"], [0, 0, 0]), (
                    dev
                )
                assert dev["used"] <= dev["count"] and dev["usedmem"] <= dev["devmem"]
                if "migInUse" in dev:
                    in_use = sorted((m["profile"], m["start"], m["size"]) for m in dev["migInUse"])
                    assert in_use == sorted(mig_held.get(dev["uuid"], []))


def test_session_matches_model(api):
    SessionMachine.api = api
    run_state_machine_as_test(
        SessionMachine,
        settings=settings(
            max_examples=25,
            stateful_step_count=20,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
            derandomize=True,
        ),
    )
