"""Sessions carry vendor registration data (custom_info) across requests, so a second placement on a
device whose Fit reads it (Enflame DRS slice profiles) is judged exactly as the first."""

import pytest

from tests.factories import node

pytestmark = [pytest.mark.api, pytest.mark.django_db]

DRS = '{"devices":[{"index":"0","minor":"0","capacity":6}],"profiles":{"1g.6gb":"0","3g.20gb":"1","6g.40gb":"2"}}'


def drs_pod(name: str, uid: str) -> dict:
    return {
        "metadata": {"name": name, "namespace": "default", "uid": uid},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "resources": {
                        "limits": {"enflame.com/gcu-memory": "20480", "enflame.com/gcu-core": "40"}
                    },
                }
            ]
        },
    }


def test_second_drs_placement_still_sees_the_slice_profiles(api):
    sid = api.create()["id"]
    template = node("tmpl-drs", annotations={"enflame.com/gcu-drs-capacity": DRS})
    status, first = api.place(sid, drs_pod("a", "uid-a"), node_obj=template)
    assert status == 201, first
    used_once = sum(d["used"] for d in api.get(sid)["nodes"][0]["devices"])
    assert used_once > 0
    # the node now comes from the session's stored state, not the annotation
    status, second = api.place(sid, drs_pod("b", "uid-b"), node_name="tmpl-drs")
    assert status == 201, second
    devices = api.get(sid)["nodes"][0]["devices"]
    assert sum(d["used"] for d in devices) == 2 * used_once
