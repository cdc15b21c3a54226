"""gunicorn vs granian for the extender: latency of /filter-simulation (1 pod x 1 node) over mTLS.

Not a test (no timing assertions anywhere in tests/): a measurement whose result and reasoning are in
docs/production.md. Both servers run the same WSGI app with one worker on loopback, with TLS and a
required client certificate (made here with trustme), and are called sequentially over one
keep-alive connection, as CA's extender client does. Also checks that each server refuses a client
without a certificate.

Run: PYTHONPATH=. .venv/bin/python deploy/tools/compare_servers.py [requests]
"""

from __future__ import annotations

import http.client
import os
import shutil
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trustme
from cryptography.hazmat.primitives import serialization

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from hami_sim.server.serve import free_port, start_server, stop_server, wait_for_port  # noqa: E402
from tests.factories import extender_args, gpu, node, pod  # noqa: E402

BODY = extender_args(pod("p", gpumem=1000, uid="uid-bench"), [node("n1", [gpu("GPU-1")])])


def pki(directory: Path) -> dict[str, str]:
    ca = trustme.CA()
    server = ca.issue_cert("127.0.0.1")
    key = serialization.load_pem_private_key(server.private_key_pem.bytes(), password=None)
    files = {
        "cert": directory / "server.crt",
        "key": directory / "server.key",
        "ca": directory / "ca.crt",
        "client": directory / "client.pem",
    }
    files["cert"].write_bytes(b"".join(b.bytes() for b in server.cert_chain_pems))
    files["key"].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    files["ca"].write_bytes(ca.cert_pem.bytes())
    files["client"].write_bytes(ca.issue_cert("cluster-autoscaler").private_key_and_cert_chain_pem.bytes())
    return {k: str(v) for k, v in files.items()}


def client_context(files: dict[str, str], with_cert: bool = True) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=files["ca"])
    if with_cert:
        ctx.load_cert_chain(files["client"])
    return ctx


def measure(port: int, ctx: ssl.SSLContext, n: int) -> list[float]:
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=30)
    headers = {"Content-Type": "application/json"}
    out = []
    for i in range(n + 20):
        started = time.perf_counter()
        conn.request("POST", "/filter-simulation", body=BODY, headers=headers)
        response = conn.getresponse()
        payload = response.read()
        elapsed = time.perf_counter() - started
        assert response.status == 200 and b'"Error":""' in payload, payload[:200]
        if i >= 20:  # warm-up: first connection and handshake
            out.append(elapsed)
    conn.close()
    return out


def refuses_without_certificate(port: int, files: dict[str, str]) -> bool:
    try:
        conn = http.client.HTTPSConnection(
            "127.0.0.1", port, context=client_context(files, False), timeout=10
        )
        conn.request("POST", "/filter-simulation", body=BODY, headers={"Content-Type": "application/json"})
        conn.getresponse().read()
    except (ssl.SSLError, ConnectionError, http.client.HTTPException):
        return True
    return False


def start_granian(files: dict[str, str], env: dict[str, str]) -> tuple[subprocess.Popen, int]:
    port = free_port()
    granian = shutil.which("granian", path=str(Path(sys.executable).parent)) or "granian"
    proc = subprocess.Popen(
        [
            granian,
            "--interface",
            "wsgi",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            "1",
            "--blocking-threads",
            "1",
            "--ssl-certificate",
            files["cert"],
            "--ssl-keyfile",
            files["key"],
            "--ssl-ca",
            files["ca"],
            "--ssl-client-verify",
            "--ssl-protocol-min",
            "tls1.2",
            "--log-level",
            "warning",
            "hami_sim.project.wsgi:application",
        ],
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    wait_for_port(port, proc)
    return proc, port


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    env = {
        "DECISION_RECORDING": "off",
        "LOG_LEVEL": "WARNING",
        "ACCESS_LOG": "false",
        "HAMI_SIM_LISTENER": "extender",
        "PYTHONPATH": str(ROOT),
    }
    with tempfile.TemporaryDirectory() as tmp:
        files = pki(Path(tmp))
        db = Path(tmp) / "db.sqlite3"
        env["DATABASE_URL"] = f"sqlite:///{db}"
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env={**os.environ, **env}, check=True
        )
        # Both servers run at once and are measured in alternating blocks, so load from anything
        # else on the machine hits both alike.
        proc_g, url = start_server(
            cert=files["cert"],
            key=files["key"],
            client_ca=files["ca"],
            workers=1,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        ports = {"gunicorn": int(url.rsplit(":", 1)[1])}
        proc_r, ports["granian"] = start_granian(files, env)
        results = {name: ([], refuses_without_certificate(port, files)) for name, port in ports.items()}
        try:
            blocks = 10
            for _ in range(blocks):
                for name, port in ports.items():
                    results[name][0].extend(measure(port, client_context(files), n // blocks))
        finally:
            stop_server(proc_g)
            stop_server(proc_r)
    print(
        f"/filter-simulation, 1 pod x 1 node, mTLS, 1 worker, keep-alive, {n} sequential requests each, "
        f"interleaved in 10 blocks"
    )
    base = statistics.median(results["gunicorn"][0])
    for name, (lat, refuses) in results.items():
        lat = sorted(lat)
        median, p99 = statistics.median(lat), lat[int(len(lat) * 0.99) - 1]
        print(
            f"  {name:9s} median {median * 1000:.3f} ms  p99 {p99 * 1000:.3f} ms  "
            f"median/gunicorn {median / base:.2f}  refuses client without certificate: {refuses}"
        )


if __name__ == "__main__":
    main()
