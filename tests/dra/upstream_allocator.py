"""Kubernetes' DRA allocator tests, restated as data.

Origin of every case: ``k8s.io/dynamic-resource-allocation`` v0.36.2 (the version CA 1.36.1's
go.mod pins), ``structured/internal/allocatortesting/allocator_testing.go``, ``TestAllocator``,
the sub-test of the same name, run with the features each case needs (``DRAConsumableCapacity``
for the capacity cases). Only the cases of features hami-sim simulates are here: ``ExactCount`` and
``All``, CEL selectors, node selection of slices, pool generations and completeness, consumable
capacity with its request policies, ``allowMultipleAllocations`` and devices already allocated.
The upstream tests compare device results (and node selectors, which we do not build); each case
here keeps the device results, in order, with the capacity a shared device consumes.
"""

from __future__ import annotations

from tests.dra.builders import (
    CLASS_A,
    CLASS_B,
    DRIVER_A,
    DRIVER_B,
    NODE_1,
    NODE_2,
    Case,
    claim,
    device,
    device_class,
    labels_in,
    node,
    one_device,
    range_policy,
    request,
    resource_slice,
    values_policy,
)

ORIGIN = "dynamic-resource-allocation v0.36.2 structured/internal/allocatortesting/allocator_testing.go TestAllocator/"
A = [device_class(CLASS_A, DRIVER_A)]
A_SHARED = [device_class(CLASS_A, DRIVER_A, multiple=True)]
A_DEDICATED = [device_class(CLASS_A, DRIVER_A, multiple=False)]
GIB = 'device.capacity["driver-a"].memory.compareTo(quantity("{}")) >= 0'


def whole(req: str, where: str) -> tuple:
    return (req, where, None)


def share(req: str, where: str, amount: int | None = None) -> tuple:
    return (req, where, {} if amount is None else {"capacity-0": amount})


def memory_devices(*pairs: tuple[str, str]) -> dict:
    return resource_slice(
        "slice-1", NODE_1, "pool-1", DRIVER_A, *(device(n, {"memory": q}) for n, q in pairs)
    )


def all_request(name: str = "req-0", class_name: str = CLASS_A, **kw: int) -> dict:
    return request(name, class_name, all_devices=True, **kw)


CASES = [
    Case("empty", claims=[], expect=[]),
    Case(
        "simple",
        claims=[claim("claim-0", request("req-0", CLASS_A))],
        classes=A,
        slices=[one_device("slice-1", NODE_1, "pool-1", DRIVER_A)],
        expect=[[whole("req-0", "driver-a/pool-1/device-1")]],
    ),
    Case(
        "other-node",
        claims=[claim("claim-0", request("req-0", CLASS_A))],
        classes=A,
        slices=[
            one_device("slice-1", NODE_1, "pool-1", DRIVER_B),
            one_device("slice-2", NODE_2, "pool-2", DRIVER_A),
        ],
        node=node(NODE_2, "region-2"),
        expect=[[whole("req-0", "driver-a/pool-2/device-1")]],
    ),
    Case(
        "small-and-large",
        claims=[
            claim(
                "claim-0",
                request("req-0", CLASS_A, 1, GIB.format("1Gi")),
                request("req-1", CLASS_A, 1, GIB.format("2Gi")),
            )
        ],
        classes=A,
        slices=[memory_devices(("device-1", "1Gi"), ("device-2", "2Gi"))],
        expect=[[whole("req-0", "driver-a/pool-1/device-1"), whole("req-1", "driver-a/pool-1/device-2")]],
    ),
    Case(
        "small-and-large-backtrack-requests",
        claims=[
            claim(
                "claim-0",
                request("req-0", CLASS_A, 1, GIB.format("1Gi")),
                request("req-1", CLASS_A, 1, GIB.format("2Gi")),
            )
        ],
        classes=A,
        slices=[memory_devices(("device-2", "2Gi"), ("device-1", "1Gi"))],
        expect=[[whole("req-0", "driver-a/pool-1/device-1"), whole("req-1", "driver-a/pool-1/device-2")]],
    ),
    Case(
        "small-and-large-backtrack-claims",
        claims=[
            claim("claim-0", request("req-0", CLASS_A, 1, GIB.format("1Gi"))),
            claim("claim-1", request("req-1", CLASS_A, 1, GIB.format("2Gi"))),
        ],
        classes=A,
        slices=[memory_devices(("device-2", "2Gi"), ("device-1", "1Gi"))],
        expect=[[whole("req-0", "driver-a/pool-1/device-1")], [whole("req-1", "driver-a/pool-1/device-2")]],
    ),
    Case(
        "devices-split-across-different-slices",
        claims=[claim("claim-0", request("req-0", CLASS_A, 2))],
        classes=A,
        slices=[
            one_device("slice-1", NODE_1, "pool-1", DRIVER_A),
            one_device("slice-2", NODE_1, "pool-2", DRIVER_A),
        ],
        expect=[[whole("req-0", "driver-a/pool-1/device-1"), whole("req-0", "driver-a/pool-2/device-1")]],
    ),
    Case(
        "obsolete-slice",
        claims=[claim("claim-0", request("req-0", CLASS_A))],
        classes=A,
        slices=[
            resource_slice("slice-1-obsolete", NODE_1, "pool-1", DRIVER_A, device("device-1"), count=2),
            resource_slice(
                "slice-1-obsolete", NODE_1, "pool-1", DRIVER_A, device("device-2"), count=2, generation=2
            ),
        ],
        expect=None,
    ),
    Case(
        "duplicate-slice",
        claims=[claim("claim-0", request("req-0", CLASS_A))],
        classes=A,
        slices=[
            one_device("slice-1", NODE_1, "pool-1", DRIVER_A, count=2),
            one_device("slice-1-2", NODE_1, "pool-1", DRIVER_A, count=2),
        ],
        error="invalid resource pools were encountered",
    ),
    Case("no-slices", claims=[claim("claim-0", request("req-0", CLASS_A))], classes=A, expect=None),
    Case(
        "not-enough-suitable-devices",
        claims=[claim("claim-0", request("req-0", CLASS_A)), claim("claim-0", request("req-1", CLASS_A))],
        classes=A,
        slices=[one_device("slice-1", NODE_1, "pool-1", DRIVER_A)],
        expect=None,
    ),
    Case(
        "no-classes",
        claims=[claim("claim-0", request("req-0", CLASS_A))],
        slices=[one_device("slice-1", NODE_1, "pool-1", DRIVER_A)],
        error="could not retrieve device class class-a",
    ),
    Case(
        "unknown-class",
        claims=[claim("claim-0", request("req-0", "unknown-class"))],
        classes=A,
        slices=[one_device("slice-1", NODE_1, "pool-1", DRIVER_A)],
        error="could not retrieve device class unknown-class",
    ),
    Case(
        "empty-class",
        claims=[claim("claim-0", request("req-0", ""))],
        classes=A,
        slices=[one_device("slice-1", NODE_1, "pool-1", DRIVER_A)],
        error="claim claim-0, request req-0: missing device class name (unsupported request type?)",
    ),
    Case(
        "no-claims-to-allocate",
        claims=[],
        classes=A,
        slices=[one_device("slice-1", NODE_1, "pool-1", DRIVER_A)],
        expect=[],
    ),
    Case(
        "all-devices-single",
        claims=[claim("claim-0", all_request())],
        classes=A,
        slices=[one_device("slice-1", NODE_1, "pool-1", DRIVER_A)],
        expect=[[whole("req-0", "driver-a/pool-1/device-1")]],
    ),
    Case(
        "all-devices-many",
        claims=[claim("claim-0", all_request())],
        classes=A,
        slices=[
            one_device("slice-1", NODE_1, "pool-1", DRIVER_A),
            one_device("slice-1", NODE_1, "pool-2", DRIVER_A),
        ],
        expect=[[whole("req-0", "driver-a/pool-1/device-1"), whole("req-0", "driver-a/pool-2/device-1")]],
    ),
    Case(
        "all-devices-of-the-incomplete-pool",
        claims=[claim("claim-0", all_request())],
        classes=A,
        slices=[one_device("slice-1", NODE_1, "pool-1", DRIVER_A, count=2)],
        error="claim claim-0, request req-0: asks for all devices, but resource pool driver-a/pool-1 is currently being updated",
    ),
    Case(
        "all-devices-plus-another",
        claims=[claim("claim-0", all_request()), claim("claim-1", request("req-0", CLASS_B))],
        classes=[*A, device_class(CLASS_B, DRIVER_B)],
        slices=[
            one_device("slice-1", NODE_1, "pool-1", DRIVER_A),
            one_device("slice-1", NODE_1, "pool-1", DRIVER_B),
        ],
        expect=[[whole("req-0", "driver-a/pool-1/device-1")], [whole("req-0", "driver-b/pool-1/device-1")]],
    ),
    Case(
        "all-devices-plus-another-reversed",
        claims=[claim("claim-1", request("req-0", CLASS_B)), claim("claim-0", all_request())],
        classes=[*A, device_class(CLASS_B, DRIVER_B)],
        slices=[
            one_device("slice-1", NODE_1, "pool-1", DRIVER_A),
            one_device("slice-1", NODE_1, "pool-1", DRIVER_B),
        ],
        expect=[[whole("req-0", "driver-b/pool-1/device-1")], [whole("req-0", "driver-a/pool-1/device-1")]],
    ),
    Case(
        "all-devices-many-plus-another",
        claims=[claim("claim-0", all_request()), claim("claim-1", request("req-0", CLASS_B))],
        classes=[*A, device_class(CLASS_B, DRIVER_B)],
        slices=[
            resource_slice("slice-1", NODE_1, "pool-1", DRIVER_A, device("device-1"), device("device-2")),
            one_device("slice-1", NODE_1, "pool-1", DRIVER_B),
        ],
        expect=[
            [whole("req-0", "driver-a/pool-1/device-1"), whole("req-0", "driver-a/pool-1/device-2")],
            [whole("req-0", "driver-b/pool-1/device-1")],
        ],
    ),
    Case(
        "all-devices-no-solution",
        claims=[claim("claim-1", request("req-0", CLASS_A)), claim("claim-0", all_request())],
        classes=A,
        slices=[one_device("slice-1", NODE_1, "pool-1", DRIVER_A)],
        expect=None,
    ),
    Case(
        "all-devices-no-solution-reversed",
        claims=[claim("claim-0", all_request()), claim("claim-1", request("req-0", CLASS_A))],
        classes=A,
        slices=[one_device("slice-1", NODE_1, "pool-1", DRIVER_A)],
        expect=None,
    ),
    Case(
        "all-devices-slice-without-devices",
        claims=[claim("claim-0", all_request())],
        classes=A,
        slices=[resource_slice("slice-1", NODE_1, "pool-1", DRIVER_A)],
        expect=None,
    ),
    Case("all-devices-no-slices", claims=[claim("claim-0", all_request())], classes=A, expect=None),
    Case(
        "all-devices-some-allocated",
        claims=[claim("claim-0", all_request())],
        classes=A,
        slices=[
            resource_slice("slice-1", NODE_1, "pool-1", DRIVER_A, device("device-1"), device("device-2"))
        ],
        dedicated=["driver-a/pool-1/device-1"],
        expect=None,
    ),
    Case(
        "network-attached-device",
        claims=[claim("claim-0", request("req-0", CLASS_A))],
        classes=A,
        slices=[one_device("slice-1", labels_in("region", "region-1"), "pool-1", DRIVER_A)],
        expect=[[whole("req-0", "driver-a/pool-1/device-1")]],
    ),
    Case(
        "unsuccessful-allocation-network-attached-device",
        claims=[claim("claim-0", request("req-0", CLASS_A))],
        classes=A,
        slices=[one_device("slice-1", labels_in("region", "region-1"), "pool-1", DRIVER_A)],
        node=node(NODE_2, "region-2"),
        expect=None,
    ),
    Case(
        "many-network-attached-devices",
        claims=[claim("claim-0", request("req-0", CLASS_A, 4))],
        classes=A,
        slices=[
            one_device("slice-1", labels_in("region", "region-1"), "pool-1", DRIVER_A),
            one_device("slice-1", "all", "pool-2", DRIVER_A),
            one_device("slice-1", labels_in("planet", "earth"), "pool-3", DRIVER_A),
            one_device(
                "slice-1",
                {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [NODE_1]}]}
                    ]
                },
                "pool-4",
                DRIVER_A,
            ),
        ],
        expect=[[whole("req-0", f"driver-a/pool-{i}/device-1") for i in range(1, 5)]],
    ),
    Case(
        "local-and-network-attached-devices",
        claims=[claim("claim-0", request("req-0", CLASS_A, 2))],
        classes=A,
        slices=[
            one_device("slice-1", labels_in("region", "region-1"), "pool-1", DRIVER_A),
            one_device("slice-1", NODE_1, "pool-2", DRIVER_A),
        ],
        expect=[[whole("req-0", "driver-a/pool-1/device-1"), whole("req-0", "driver-a/pool-2/device-1")]],
    ),
    Case(
        "several-different-drivers",
        claims=[claim("claim-0", request("req-0", CLASS_A)), claim("claim-0", request("req-0", CLASS_B))],
        classes=[*A, device_class(CLASS_B, DRIVER_B)],
        slices=[
            resource_slice("slice-1", NODE_1, "pool-1", DRIVER_A, device("device-1"), device("device-2")),
            one_device("slice-1", NODE_1, "pool-1", DRIVER_B),
        ],
        expect=[[whole("req-0", "driver-a/pool-1/device-1")], [whole("req-0", "driver-b/pool-1/device-1")]],
    ),
    Case(
        "already-allocated-devices",
        claims=[claim("claim-0", request("req-0", CLASS_A))],
        classes=A,
        slices=[one_device("slice-1", NODE_1, "pool-1", DRIVER_A)],
        dedicated=["driver-a/pool-1/device-1", "driver-a/pool-1/device-2"],
        expect=None,
    ),
    Case(
        "invalid-CEL-one-device",
        claims=[claim("claim-0", request("req-0", CLASS_A, 1, "noSuchVar"))],
        classes=A,
        slices=[one_device("slice-1", NODE_1, "pool-1", DRIVER_A)],
        error="undeclared reference",
    ),
    Case(
        "invalid-CEL-one-device-class",
        claims=[claim("claim-0", request("req-0", CLASS_A))],
        classes=[
            {"metadata": {"name": CLASS_A}, "spec": {"selectors": [{"cel": {"expression": "noSuchVar"}}]}}
        ],
        slices=[one_device("slice-1", NODE_1, "pool-1", DRIVER_A)],
        error="undeclared reference",
    ),
    Case(
        "invalid-CEL-all-devices",
        claims=[claim("claim-0", request("req-0", CLASS_A, 1, "noSuchVar", all_devices=True))],
        classes=A,
        slices=[one_device("slice-1", NODE_1, "pool-1", DRIVER_A)],
        error="undeclared reference",
    ),
    Case(
        "too-many-devices-single-request",
        claims=[claim("claim-0", request("req-0", CLASS_A, 500))],
        classes=A,
        error="exceeds the claim limit",
    ),
    Case(
        "many-devices-okay", claims=[claim("claim-0", request("req-0", CLASS_A, 32))], classes=A, expect=None
    ),
    Case(
        "too-many-devices-total",
        claims=[claim("claim-0", request("req-0", CLASS_A, 32), request("req-1", CLASS_A, 1))],
        classes=A,
        slices=[
            resource_slice("slice-1", NODE_1, "pool-1", DRIVER_A, *(device(f"device-{i}") for i in range(33)))
        ],
        error="exceeds the claim limit",
    ),
    # Consumable capacity (DRAConsumableCapacity on). "capacity-0" is the upstream tests' capacity name.
    Case(
        "consumable-capacity-multi-allocatable-device-with-missing-capacity-request",
        claims=[claim("claim-0", request("req-0", CLASS_A, capacity=1))],
        classes=A,
        slices=[
            resource_slice(
                "slice-1", NODE_1, "pool-1", DRIVER_A, device("device-1", {"capacity-1": 1}, multiple=True)
            )
        ],
        expect=None,
    ),
    Case(
        "consumable-capacity-multi-allocatable-device-allocation-mode-all-with-missing-capacity-request",
        claims=[claim("claim-0", all_request(capacity=1))],
        classes=A_SHARED,
        slices=[
            resource_slice(
                "slice-1", NODE_1, "pool-1", DRIVER_A, device("device-1", {"capacity-1": 1}, multiple=True)
            )
        ],
        expect=None,
    ),
    Case(
        "consumable-capacity-multi-allocatable-device-without-capacity-without-capacity-request",
        claims=[claim("claim-0", request("req-0", CLASS_A)), claim("claim-1", request("req-0", CLASS_A))],
        classes=A_SHARED,
        slices=[resource_slice("slice-1", NODE_1, "pool-1", DRIVER_A, device("device-1", multiple=True))],
        expect=[[share("req-0", "driver-a/pool-1/device-1")], [share("req-0", "driver-a/pool-1/device-1")]],
    ),
    Case(
        "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request",
        claims=[claim("claim-0", request("req-0", CLASS_A)), claim("claim-1", request("req-0", CLASS_A))],
        classes=A_SHARED,
        slices=[
            resource_slice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                device("device-1", {"capacity-0": 1}, multiple=True),
                device("device-2", {"capacity-0": 1}, multiple=True),
            )
        ],
        expect=[
            [share("req-0", "driver-a/pool-1/device-1", 1)],
            [share("req-0", "driver-a/pool-1/device-2", 1)],
        ],
    ),
    Case(
        "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request-block",
        claims=[claim("claim-0", request("req-0", CLASS_A)), claim("claim-1", request("req-0", CLASS_A))],
        classes=A_SHARED,
        slices=[
            resource_slice(
                "slice-1", NODE_1, "pool-1", DRIVER_A, device("device-1", {"capacity-0": 2}, multiple=True)
            )
        ],
        expect=None,
    ),
    Case(
        "consumable-capacity-multi-allocatable-device-without-policy-with-capacity-request",
        claims=[
            claim("claim-0", request("req-0", CLASS_A, capacity=1)),
            claim("claim-1", request("req-0", CLASS_A, capacity=1)),
        ],
        classes=A_SHARED,
        slices=[
            resource_slice(
                "slice-1", NODE_1, "pool-1", DRIVER_A, device("device-1", {"capacity-0": 2}, multiple=True)
            )
        ],
        expect=[
            [share("req-0", "driver-a/pool-1/device-1", 1)],
            [share("req-0", "driver-a/pool-1/device-1", 1)],
        ],
    ),
    Case(
        "consumable-capacity-multi-allocatable-device-with-policy-without-capacity-request",
        claims=[claim("claim-0", request("req-0", CLASS_A)), claim("claim-1", request("req-0", CLASS_A))],
        classes=A_SHARED,
        slices=[
            resource_slice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                device("device-1", {"capacity-0": range_policy(4)}, multiple=True),
            )
        ],
        expect=[
            [share("req-0", "driver-a/pool-1/device-1", 2)],
            [share("req-0", "driver-a/pool-1/device-1", 2)],
        ],
    ),
    Case(
        "consumable-capacity-multi-allocatable-device-with-zero-request-policy",
        claims=[claim("claim-0", request("req-0", CLASS_A)), claim("claim-1", request("req-0", CLASS_A))],
        classes=A_SHARED,
        slices=[
            resource_slice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                device("device-1", {"capacity-0": values_policy(1, 0)}, multiple=True),
            )
        ],
        expect=[
            [share("req-0", "driver-a/pool-1/device-1", 0)],
            [share("req-0", "driver-a/pool-1/device-1", 0)],
        ],
    ),
    Case(
        "consumable-capacity-multi-allocatable-device-violates-zero-request-policy",
        claims=[claim("claim-0", request("req-0", CLASS_A, capacity=1))],
        classes=A_SHARED,
        slices=[
            resource_slice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                device("device-1", {"capacity-0": values_policy(1, 0)}, multiple=True),
            )
        ],
        expect=None,
    ),
    Case(
        "consumable-capacity-multi-allocatable-device-with-range-policy-with-capacity-request",
        claims=[
            claim("claim-0", request("req-0", CLASS_A, capacity=1)),
            claim("claim-1", request("req-0", CLASS_A, capacity=1)),
        ],
        classes=A_SHARED,
        slices=[
            resource_slice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                device("device-1", {"capacity-0": range_policy(4)}, multiple=True),
            )
        ],
        expect=[
            [share("req-0", "driver-a/pool-1/device-1", 2)],
            [share("req-0", "driver-a/pool-1/device-1", 2)],
        ],
    ),
    Case(
        "consumable-capacity-multi-allocatable-device-with-range-policy-step",
        claims=[claim("claim-0", request("req-0", CLASS_A, capacity=3))],
        classes=A_SHARED,
        slices=[
            resource_slice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                device("device-1", {"capacity-0": range_policy(4)}, multiple=True),
            )
        ],
        expect=[[share("req-0", "driver-a/pool-1/device-1", 4)]],
    ),
    Case(
        "consumable-capacity-multi-allocatable-device-with-valid-values-policy",
        claims=[claim("claim-0", request("req-0", CLASS_A, capacity=2))],
        classes=A_SHARED,
        slices=[
            resource_slice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                device("device-1", {"capacity-0": values_policy(4, 1, 2)}, multiple=True),
            )
        ],
        expect=[[share("req-0", "driver-a/pool-1/device-1", 2)]],
    ),
    Case(
        "consumable-capacity-multi-allocatable-device-with-valid-values-policy-round-up",
        claims=[claim("claim-0", request("req-0", CLASS_A, capacity=2))],
        classes=A_SHARED,
        slices=[
            resource_slice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                device("device-1", {"capacity-0": values_policy(3, 1, 3)}, multiple=True),
            )
        ],
        expect=[[share("req-0", "driver-a/pool-1/device-1", 3)]],
    ),
    Case(
        "consumable-capacity-multi-allocatable-device-with-exceeded-consumable-capacity-request",
        claims=[
            claim("claim-0", request("req-0", CLASS_A, capacity=1)),
            claim("claim-1", request("req-0", CLASS_A, capacity=2)),
        ],
        classes=A_SHARED,
        slices=[
            resource_slice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                device("device-1", {"capacity-0": range_policy(2)}, multiple=True),
            )
        ],
        expect=None,
    ),
    Case(
        "consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy",
        claims=[claim("claim-0", request("req-0", CLASS_A, capacity=6))],
        classes=A_SHARED,
        slices=[
            resource_slice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                device("device-1", {"capacity-0": range_policy(10)}, multiple=True),
            )
        ],
        expect=None,
    ),
    Case(
        "consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining",
        claims=[claim("claim-0", request("req-0", CLASS_A, capacity=2))],
        classes=A_SHARED,
        slices=[
            resource_slice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                device("device-1", {"capacity-0": range_policy(4)}, multiple=True),
            )
        ],
        shares={"driver-a/pool-1/device-1": {"capacity-0": "2"}},
        expect=[[share("req-0", "driver-a/pool-1/device-1", 2)]],
    ),
    Case(
        "consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device",
        claims=[claim("claim-0", request("req-0", CLASS_A, capacity=2))],
        classes=A_SHARED,
        slices=[
            resource_slice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                device("device-1", {"capacity-0": range_policy(2)}, multiple=True),
                device("device-2", {"capacity-0": range_policy(2)}, multiple=True),
            )
        ],
        shares={"driver-a/pool-1/device-1": {"capacity-0": "2"}},
        expect=[[share("req-0", "driver-a/pool-1/device-2", 2)]],
    ),
    Case(
        "consumable-capacity-multi-allocatable-device-with-no-available-consumable-capacity",
        claims=[claim("claim-0", request("req-0", CLASS_A, capacity=2))],
        classes=A_SHARED,
        slices=[
            resource_slice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                device("device-1", {"capacity-0": range_policy(2)}, multiple=True),
            )
        ],
        shares={"driver-a/pool-1/device-1": {"capacity-0": "2"}},
        expect=None,
    ),
    Case(
        "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-no-capacity",
        claims=[claim("claim-0", all_request(capacity=2))],
        classes=A_SHARED,
        slices=[
            resource_slice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                device("device-1", {"capacity-0": 2}, multiple=True),
                device("device-2", multiple=True),
            )
        ],
        expect=[[share("req-0", "driver-a/pool-1/device-1", 2)]],
    ),
    Case(
        "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-insufficient-capacity",
        claims=[claim("claim-0", all_request(capacity=2))],
        classes=A_SHARED,
        slices=[
            resource_slice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                device("device-1", {"capacity-0": 2}, multiple=True),
                device("device-2", {"capacity-0": 1}, multiple=True),
            )
        ],
        expect=[[share("req-0", "driver-a/pool-1/device-1", 2)]],
    ),
    Case(
        "consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-sufficient",
        claims=[claim("claim-0", request("req-0", CLASS_A, capacity=1), all_request("req-1", capacity=1))],
        classes=A,
        slices=[
            resource_slice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                device("device-1", {"capacity-0": 2}, multiple=True),
                device("device-2", {"capacity-0": 1}, multiple=True),
            )
        ],
        expect=[
            [
                share("req-0", "driver-a/pool-1/device-1", 1),
                share("req-1", "driver-a/pool-1/device-1", 1),
                share("req-1", "driver-a/pool-1/device-2", 1),
            ]
        ],
    ),
    Case(
        "consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-sufficient",
        claims=[claim("claim-0", all_request(capacity=1))],
        classes=A,
        slices=[
            resource_slice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                device("device-1", {"capacity-0": 2}, multiple=True),
                device("device-2", {"capacity-0": 1}, multiple=True),
            )
        ],
        shares={"driver-a/pool-1/device-1": {"capacity-0": "1"}},
        expect=[
            [share("req-0", "driver-a/pool-1/device-1", 1), share("req-0", "driver-a/pool-1/device-2", 1)]
        ],
    ),
    Case(
        "consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-insufficient",
        claims=[claim("claim-0", request("req-0", CLASS_A, capacity=1), all_request("req-1", capacity=1))],
        classes=A,
        slices=[
            resource_slice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                device("device-1", {"capacity-0": 1}, multiple=True),
                device("device-2", {"capacity-0": 1}, multiple=True),
            )
        ],
        expect=None,
    ),
    Case(
        "consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-insufficient",
        claims=[claim("claim-0", all_request(capacity=1))],
        classes=A,
        slices=[
            resource_slice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                device("device-1", {"capacity-0": 1}, multiple=True),
                device("device-2", {"capacity-0": 1}, multiple=True),
            )
        ],
        shares={"driver-a/pool-1/device-1": {"capacity-0": "1"}},
        expect=[[share("req-0", "driver-a/pool-1/device-2", 1)]],
    ),
    Case(
        "consumable-capacity-dedicated-device-with-consumable-capacity-request",
        claims=[claim("claim-0", request("req-0", CLASS_A, capacity=1))],
        classes=A_DEDICATED,
        slices=[resource_slice("slice-1", NODE_1, "pool-1", DRIVER_A, device("device-1", {"capacity-0": 1}))],
        expect=[[whole("req-0", "driver-a/pool-1/device-1")]],
    ),
    Case(
        "consumable-capacity-dedicated-device-with-multiple-consumable-capacity-request",
        claims=[
            claim("claim-0", request("req-0", CLASS_A, capacity=1)),
            claim("claim-1", request("req-0", CLASS_A, capacity=1)),
        ],
        classes=A_DEDICATED,
        slices=[
            resource_slice(
                "slice-1", NODE_1, "pool-1", DRIVER_A, device("device-1", {"capacity-0": range_policy(2)})
            )
        ],
        expect=None,
    ),
    Case(
        "allow-multiple-allocations-exclude-multi-allocatable-device-by-class-selector",
        claims=[claim("claim-0", request("req-0", CLASS_A, capacity=1))],
        classes=A_DEDICATED,
        slices=[
            resource_slice(
                "slice-1", NODE_1, "pool-1", DRIVER_A, device("device-1", {"capacity-0": 1}, multiple=True)
            )
        ],
        expect=None,
    ),
    Case(
        "allow-multiple-allocations-not-allocate-multi-allocatable-device-which-already-dedicated",
        claims=[claim("claim-0", request("req-0", CLASS_A, capacity=1))],
        classes=A_SHARED,
        slices=[
            resource_slice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                device("device-1", {"capacity-0": range_policy(2)}, multiple=True),
            )
        ],
        dedicated=["driver-a/pool-1/device-1"],
        expect=None,
    ),
    Case(
        "allow-multiple-allocations-not-allocate-dedicated-device-which-change-from-multi-allocatable",
        claims=[claim("claim-0", request("req-0", CLASS_A, capacity=1))],
        classes=A_SHARED,
        slices=[
            resource_slice(
                "slice-1", NODE_1, "pool-1", DRIVER_A, device("device-1", {"capacity-0": range_policy(2)})
            )
        ],
        shares={"driver-a/pool-1/device-1": {"capacity-0": "1"}},
        expect=None,
    ),
]
