"""Benchmark of CA's gRPC expander (``simulations.grpcexpander``). Never run by tests.

One ``BestOptions`` call carries 50 options x 100 pods (five Deployments' mixed GPU requests, each pod
its own Pod message with its own uid) and 50 template Nodes: 25 warm (8-GPU registration annotation in
the template) and 25 cold (no annotation; resolved from the NodeGroup's device profile). The client is
real grpcio over 127.0.0.1 sending the newest CA's encoding (CA 1.35+: ``nodeBytesMap = 3`` and
``Option.podBytes = 5``, each Pod and Node proto-serialized on its own); the server is ``build_server``
in this process. Prints p50/p99/max over the calls, in ms, for ``fresh`` calls (new pods every call) and
``repeat`` calls (the same request again, as CA sends while its pods stay pending). Target: p99 < 500 ms.

``ca-loop``: a big cluster's loop, 100 options (4- and 8-GPU templates of five GPU types, five zones,
on-demand and spot, each registered with its own UUIDs; ``nodeCount`` 100) x 1,000 pods of 100
Deployments (GPU memory 2,000-35,000 MiB, cores 0-50 %), new pods every call, 20 calls. Target: p99 < 1 s.

Run: ``PYTHONPATH=. .venv/bin/python bench/expander_bench.py [calls] [case]`` (the second argument runs
only one case: ``same-fresh``, ``same-repeat``, ``distinct-fresh``, ``distinct-repeat`` or ``ca-loop``) (``DATABASE_URL`` or a SQLite file
under var/; migrated on the way).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", f"sqlite:///{ROOT / 'var' / 'expander-bench.db'}")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hami_sim.project.settings")
(ROOT / "var").mkdir(exist_ok=True)

import django  # noqa: E402

django.setup()

import grpc  # noqa: E402
import orjson  # noqa: E402
from django.core.management import call_command  # noqa: E402

from simulations.grpcexpander.protos import expander_pb2 as pb  # noqa: E402
from simulations.grpcexpander.protos import k8s_core_pb2 as core  # noqa: E402
from simulations.grpcexpander.server import build_server  # noqa: E402

OPTIONS, PODS = 50, 100
# (deployment, gpu count, gpumem MiB, gpucores)
MIX = (
    ("infer-small", 1, 4000, 10),
    ("infer-medium", 1, 10000, 20),
    ("train-pair", 2, 20000, 50),
    ("notebook", 1, 2000, 0),
    ("batch", 1, 8000, 30),
)
H100 = {
    "type": "NVIDIA H100 80GB HBM3",
    "devmem": 81559,
    "devcore": 100,
    "count": 10,
    "numa": 0,
    "mode": "hami-core",
}


def q(values: dict) -> dict:
    return {k: core.Quantity(string=str(v)) for k, v in values.items()}


def pod(option: int, i: int, salt: str = "") -> core.Pod:
    name, count, mem, cores = MIX[i % len(MIX)]
    limits = {"nvidia.com/gpu": count, "nvidia.com/gpumem": mem, "nvidia.com/gpucores": cores}
    return core.Pod(
        metadata=core.ObjectMeta(
            name=f"{name}-{i}",
            namespace="ml",
            uid=f"uid-{salt}{i}",
            ownerReferences=[
                core.OwnerReference(kind="ReplicaSet", name=name, uid=f"rs-{name}", controller=True)
            ],
        ),
        spec=core.PodSpec(
            containers=[
                core.Container(
                    name="c",
                    resources=core.ResourceRequirements(
                        limits=q(limits), requests=q({"cpu": "1", "memory": "2Gi"})
                    ),
                )
            ]
        ),
    )


def template(group: str, warm: bool, devmem: int) -> core.Node:
    annotations = {}
    if warm:
        devices = [
            {**H100, "devmem": devmem, "id": f"GPU-{group}-{g}", "index": g, "health": True} for g in range(8)
        ]
        annotations["hami.io/node-nvidia-register"] = orjson.dumps(devices).decode()
    status = {"cpu": "96", "memory": "768Gi", "pods": "110"}
    return core.Node(
        metadata=core.ObjectMeta(
            name=f"template-node-for-{group}-1", labels={"pool": group}, annotations=annotations
        ),
        status=core.NodeStatus(capacity=q(status), allocatable=q(status)),
    )


def ensure_cold_groups(names: list[str], devmem) -> None:
    from profiles.models import DeviceProfile, NodeGroup
    from profiles.services import save_profile

    for name in names:
        group, created = NodeGroup.objects.get_or_create(name=name, defaults={"match_labels": {"pool": name}})
        if created:
            rows = [{**H100, "devmem": devmem(name), "quantity": 8, "mig_profiles": []}]
            save_profile(DeviceProfile(node_group=group, vendor="NVIDIA"), rows=rows)


def request(distinct: bool, salt: str = "") -> bytes:
    """``distinct``: every group's cards differ in memory, so no two options pack alike (worst case);
    else the groups are one instance type in 50 pools (what CA's options often are). ``salt`` makes
    the pods' uids (so their bytes) new: nothing of an earlier call can be reused."""
    prefix = "bench-distinct" if distinct else "bench"
    groups = [f"{prefix}-{'warm' if i % 2 == 0 else 'cold'}-{i}" for i in range(OPTIONS)]

    def devmem(group: str) -> int:
        return 81559 - 100 * int(group.rsplit("-", 1)[1]) if distinct else 81559

    ensure_cold_groups([g for g in groups if "-cold-" in g], devmem)
    # CA 1.35+'s grpc_client.go: newOptionMessage sets PodBytes (pod.Marshal() each),
    # populateNodeInfoForGRPC fills NodeBytesMap (node.Marshal() each); nodeMap and pod stay empty
    options = [
        pb.CAOption(
            nodeGroupId=g, nodeCount=3, podBytes=[pod(o, i, salt).SerializeToString() for i in range(PODS)]
        )
        for o, g in enumerate(groups)
    ]
    node_bytes = {g: template(g, "-warm-" in g, devmem(g)).SerializeToString() for g in groups}
    return pb.CABestOptionsRequest(options=options, nodeBytesMap=node_bytes).SerializeToString()


LOOP_OPTIONS, LOOP_PODS, LOOP_NODE_COUNT = 100, 1000, 100
# (GPU type, devmem MiB) of the CA-loop case: five GPU types, as bench/estimate_bench.py's t_ca_loop
LOOP_TYPES = (
    ("NVIDIA A100-SXM4-80GB", 81920),
    ("NVIDIA H100 80GB HBM3", 81559),
    ("NVIDIA A10", 23028),
    ("NVIDIA L4", 23034),
    ("NVIDIA L40S", 46068),
)


def loop_pod(i: int, salt: str) -> core.Pod:
    """Replica ``i % 10`` of Deployment ``i // 10``: GPU memory 2,000-35,000 MiB, cores 0-50 %, one or
    two GPUs, cpu and memory requests (the formulas of estimate_bench's ``ca_loop_pods``)."""
    d = i // 10
    name = f"deploy-{d:03d}"
    limits = {"nvidia.com/gpu": 2 if d % 7 == 3 else 1, "nvidia.com/gpumem": 2000 + (d * 3301) % 33001}
    if (d * 7) % 6:
        limits["nvidia.com/gpucores"] = (d * 7) % 6 * 10
    requests = {"cpu": f"{250 * (1 + d % 16)}m", "memory": f"{1 + (d * 5) % 32}Gi"}
    return core.Pod(
        metadata=core.ObjectMeta(
            name=f"{name}-7d9c5b-{salt}{i:05x}",
            namespace="ml",
            uid=f"uid-{salt}{i}",
            labels={"app": name, "pod-template-hash": "7d9c5b"},
            ownerReferences=[
                core.OwnerReference(
                    kind="ReplicaSet", name=f"{name}-7d9c5b", uid=f"rs-{name}", controller=True
                )
            ],
        ),
        spec=core.PodSpec(
            containers=[
                core.Container(
                    name="c", resources=core.ResourceRequirements(limits=q(limits), requests=q(requests))
                )
            ]
        ),
    )


def loop_template(group: str, kind: str, devmem: int, gpus: int, zone: str, capacity: str) -> core.Node:
    """A registered template of the CA-loop case: its own name, labels and device UUIDs."""
    devices = [
        {**H100, "type": kind, "devmem": devmem, "numa": g // 4, "id": f"GPU-{group}-{g}", "index": g}
        for g in range(gpus)
    ]
    cpu, memory = ("48", "384Gi") if gpus == 4 else ("96", "768Gi")
    status = {"cpu": cpu, "memory": memory, "pods": "110"}
    labels = {"pool": group, "topology.kubernetes.io/zone": zone, "karpenter.sh/capacity-type": capacity}
    return core.Node(
        metadata=core.ObjectMeta(
            name=f"template-node-for-{group}",
            labels=labels,
            annotations={
                "hami.io/node-nvidia-register": orjson.dumps(
                    [{**d, "health": True} for d in devices]
                ).decode()
            },
        ),
        status=core.NodeStatus(capacity=q(status), allocatable=q(status)),
    )


def loop_request(salt: str) -> bytes:
    """CA's loop in a big cluster: 100 options (4- and 8-GPU templates of five GPU types, five zones,
    on-demand and spot) x 1,000 pods of 100 Deployments, every option with every pod."""
    groups = []
    for kind, devmem in LOOP_TYPES:
        for gpus in (4, 8):
            for zone in "abcdf":
                for capacity in ("on-demand", "spot"):
                    name = f"{kind.split()[1].lower()}x{gpus}-us-east-1{zone}-{capacity}"
                    groups.append((name, kind, devmem, gpus, f"us-east-1{zone}", capacity))
    pods = [loop_pod(i, salt).SerializeToString() for i in range(LOOP_PODS)]
    options = [pb.CAOption(nodeGroupId=g[0], nodeCount=LOOP_NODE_COUNT, podBytes=pods) for g in groups]
    node_bytes = {g[0]: loop_template(*g).SerializeToString() for g in groups}
    return pb.CABestOptionsRequest(options=options, nodeBytesMap=node_bytes).SerializeToString()


def run(requests: list[bytes]) -> tuple[list[float], list[float], int]:
    """Wall-clock and process CPU ms of one call per request, in order (after a warm-up call of the
    first). CPU time (client and server share this process) does not grow with the machine's load."""
    server, port = build_server("127.0.0.1:0", max_request_bytes=64 << 20)
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = channel.unary_unary(
                "/grpcplugin.Expander/BestOptions", response_deserializer=pb.BestOptionsResponse.FromString
            )
            kept = len(stub(requests[0], timeout=60).options)  # warm-up
            times, cpu = [], []
            for raw in requests:
                started, cpu_started = time.perf_counter(), time.process_time()
                stub(raw, timeout=60)
                times.append((time.perf_counter() - started) * 1000)
                cpu.append((time.process_time() - cpu_started) * 1000)
    finally:
        server.stop(None)
    return times, cpu, kept


def percentile(times: list[float], q: float) -> float:
    return times[min(len(times) - 1, int(len(times) * q))]


def main() -> None:
    """Two cases per template mix: ``repeat`` sends one request again and again (CA's loop while the
    same pods stay pending: decoded pods and packings are reused), ``fresh`` gives every call new pod
    uids (a new set of pending pods: everything is decoded and packed again)."""
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    only = sys.argv[2] if len(sys.argv) > 2 else ""
    call_command("migrate", verbosity=0)
    for distinct in (False, True):
        kind = "50 distinct templates" if distinct else "one instance type in 50 groups"
        for case in ("fresh", "repeat"):
            if only and only != f"{'distinct' if distinct else 'same'}-{case}":
                continue
            if case == "repeat":
                requests = [request(distinct)] * (calls + 1)
            else:
                requests = [request(distinct, salt=f"{n}-") for n in range(calls + 1)]
            times, cpu, kept = run(requests)
            skip = 1 if case == "fresh" else 0  # the warm-up packed request 0
            times, cpu = sorted(times[skip:]), sorted(cpu[skip:])
            print(
                f"expander BestOptions, {OPTIONS} options x {PODS} pods ({kind}, {case}), "
                f"{len(requests[0])} bytes, {len(times)} calls, {kept} kept"
            )
            report(times, cpu, 500)
    if not only or only == "ca-loop":
        # the big cluster's loop: fewer calls (each packs 100 options x 1,000 pods), new pods each call
        requests = [loop_request(f"{n}-") for n in range(min(calls, 20) + 1)]
        times, cpu, kept = run(requests)
        times, cpu = sorted(times[1:]), sorted(cpu[1:])
        print(
            f"expander BestOptions, {LOOP_OPTIONS} options x {LOOP_PODS} pods of 100 Deployments (ca-loop, "
            f"fresh), {len(requests[0])} bytes, {len(times)} calls, {kept} kept"
        )
        report(times, cpu, 1000)


def report(times: list[float], cpu: list[float], target_ms: int) -> None:
    """One line of sorted wall and CPU times against the p99 target."""
    p99 = percentile(times, 0.99)
    print(
        f"  p50_ms={statistics.median(times):.1f} p99_ms={p99:.1f} max_ms={times[-1]:.1f} "
        f"target_p99_ms={target_ms} {'OK' if p99 < target_ms else 'MISSED'} "
        f"cpu_p50_ms={statistics.median(cpu):.1f} cpu_p99_ms={percentile(cpu, 0.99):.1f} "
        f"load1={os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
