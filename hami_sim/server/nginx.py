"""nginx in front of gunicorn: the one place its configuration is written.

nginx terminates TLS (and mTLS on the extender listener), reads each request head and body whole
within its timeouts and size limits, bounds connections, and only then hands the request to
gunicorn on a unix socket: gunicorn never reads from a client, so no slow or malformed client holds
one of its threads, and HTTP framing is nginx's, not ours.

``render(site)`` writes a complete ``nginx.conf`` for one listener. The files in
``deploy/base/nginx/`` are ``render(production_site(listener))`` (``make nginx-config`` writes them;
``tests/deploy`` checks they are current), and ``hami_sim.server.serve.start_server`` runs the same
rendering with loopback ports and a temporary prefix for the tests and ``bench/``.

What reaches the application from nginx, and only from it (``hami_sim.project.proxied``):
``X-Client-Cert`` (the verified client certificate, URL-encoded PEM, ``$ssl_client_escaped_cert``),
``X-Real-IP`` (the address nginx received the request from) and ``X-Forwarded-Proto``.
``proxy_set_header`` replaces any header of those names a client sent, and sends none when the value
is empty. ``X-Forwarded-For`` passes as the client sent it (an Ingress controller's, which
``API_NUM_PROXIES`` counts), as it reached gunicorn before nginx was put in front.

Refusals nginx answers itself (a head or body over the limits, a request not sent in time, broken
framing, the application unreachable) are the project's JSON error shape on the paths whose clients
read JSON (``{"error": ...}`` on the extender verbs, which Go reads as ``Error``; ``{"detail": ...}``
on the REST API), nginx's own page elsewhere.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, field

__all__ = ["Limits", "Site", "production_site", "render", "PROBE_PATHS", "LISTENERS"]

#: where the application's unix socket lives in the pods (an emptyDir both containers mount)
POD_SOCKET = "/run/hami-sim/gunicorn.sock"
#: nginx's listen port per production listener (the Services' target ports), and its probe port
POD_PORTS = {"web": 8080, "extender": 8443}
#: the largest body each listener's application accepts (``EXTENDER_MAX_BODY_BYTES`` of its container
#: in deploy/base: CA's extender calls up to 64 MiB; 8 MiB on the web listener, whose workers a 64 MiB
#: body took past their memory share)
POD_BODY_BYTES = {"web": 8 * 1024 * 1024, "extender": 64 * 1024 * 1024}
POD_PROBE_PORT = 8081
POD_TLS = "/etc/hami-sim/tls"
PROBE_PATHS = ("/healthz", "/readyz")
LISTENERS = tuple(POD_PORTS)
MiB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """What nginx allows a client. The body limit is the application's largest
    (``EXTENDER_MAX_BODY_BYTES``, 64 MiB, CA's extender calls); the views refuse smaller limits
    of their own (``DATA_UPLOAD_MAX_MEMORY_SIZE`` ...) after nginx has read the body."""

    body_bytes: int = 64 * MiB
    header_timeout: int = 10  # seconds for the whole request head, from the connection's start
    body_timeout: int = 10  # seconds between two reads of the body
    send_timeout: int = 30  # seconds between two writes of the answer
    keepalive_timeout: int = 75  # longer than Go's idle timeout, so CA reuses its connections
    header_buffer: int = 8 * 1024  # a request line, and each header field, must fit in one
    header_buffers: int = 16  # ... and the whole head in this many: 128 KiB
    connections_per_address: int = 256  # requests in progress from one client address
    worker_connections: int = 4096  # per nginx worker: idle and half-sent connections included
    proxy_read_timeout: int = 65  # longer than gunicorn's worker timeout (60 s)


@dataclass(frozen=True)
class Site:
    """One listener: where nginx listens, with which certificates, and where gunicorn is."""

    listener: str  # "web", "extender" or "all" (the tests' demo-like listener)
    port: int
    upstream: str  # the unix socket gunicorn binds
    prefix: str  # a writable directory: the pid file and the temporary files of request bodies
    cert: str = ""  # TLS when set (with key)
    key: str = ""
    client_ca: str = ""  # mTLS: the handshake needs a certificate this CA signed
    probe_port: int = 0  # plain HTTP on this port for /healthz and /readyz only (the kubelet's)
    host: str = ""  # listen address ("" = all interfaces)
    workers: int | str = 2
    limits: Limits = field(default_factory=Limits)


def production_site(listener: str) -> Site:
    """The listener as ``deploy/base`` runs it (the ConfigMap's file)."""
    return Site(
        listener=listener,
        port=POD_PORTS[listener],
        upstream=POD_SOCKET,
        prefix="/tmp/nginx",
        cert=f"{POD_TLS}/tls.crt",
        key=f"{POD_TLS}/tls.key",
        client_ca=f"{POD_TLS}/ca.crt" if listener == "extender" else "",
        probe_port=POD_PROBE_PORT if listener == "extender" else 0,
        limits=Limits(body_bytes=POD_BODY_BYTES[listener]),
    )


# (status nginx decides on, status sent, message) for every refusal nginx answers itself. 494 is
# nginx's "request header too large", sent as 431 here. A 408 reaches a client only when nginx can
# still write to it (it closes a connection whose head never arrived).
def _refusals(limits: Limits) -> list[tuple[int, int, str]]:
    head = limits.header_buffer * limits.header_buffers
    return [
        (400, 400, "malformed request"),
        (408, 408, f"the request was not received in time ({limits.header_timeout} s for the head, "
                   f"{limits.body_timeout} s between two reads of the body)"),
        (413, 413, f"request body exceeds the limit of {limits.body_bytes} bytes"),
        (414, 414, f"request line exceeds {limits.header_buffer} bytes"),
        (494, 431, f"a request header field exceeds {limits.header_buffer} bytes or the head {head} bytes"),
        (429, 429, "too many requests in progress from this address"),
        (495, 403, "the client certificate is not valid here"),
        (496, 403, "a client certificate is required"),
        (501, 501, "unsupported transfer coding"),
        (502, 502, "the application server is not answering"),
        (503, 503, "the application server is unavailable"),
        (504, 504, "the application server did not answer in time"),
        (505, 505, "unsupported HTTP version"),
    ]  # fmt: skip


def _error_pages(limits: Limits) -> str:
    """Server-level ``error_page`` entries and the internal location answering them: JSON on the
    API paths, nginx's own page elsewhere (``return`` inside an error page does not recurse)."""
    out = [
        f"        error_page {status} ={sent} /.refused/{status};" for status, sent, _ in _refusals(limits)
    ]
    out.append("        location ^~ /.refused/ {")
    out.append("            internal;")
    out.append("            default_type application/json;")
    for status, sent, message in _refusals(limits):
        body = json.dumps(message)[1:-1].replace("'", "\\'")
        out.append(f"            location = /.refused/{status} {{")
        out.append(f'                if ($hami_error_key = "") {{ return {sent}; }}')
        out.append(f'                return {sent} \'{{"$hami_error_key": "{body}"}}\';')
        out.append("            }")
    out.append("        }")
    return "\n".join(out)


def _json_error_map() -> str:
    """``$hami_error_key``: which key a refusal's JSON uses on this request's path ("" for nginx's
    page). Keyed by ``$request_uri`` (the request's own, with its query): an error page is an
    internal redirect, which changes ``$uri``; empty when the request line could not be read."""
    from hami_sim.project.errorviews import EXTENDER_VERB_PATH, JSON_CLIENT_PATH

    def with_query(pattern: str) -> str:
        return pattern.replace("$", r"(?:\?|$)")

    return "\n".join(
        [
            "    map $request_uri $hami_error_key {",
            '        default "";',
            f'        "~{with_query(EXTENDER_VERB_PATH.pattern)}" error;',
            f'        "~{with_query(JSON_CLIENT_PATH.pattern)}" detail;',
            "    }",
        ]
    )


_PROXY = """\
            proxy_pass http://hami_sim_app;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_set_header X-Real-IP $remote_addr;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_set_header X-Client-Cert $ssl_client_escaped_cert;"""


def _tls(site: Site) -> str:
    if not site.cert:
        return ""
    lines = [
        f"        ssl_certificate {site.cert};",
        f"        ssl_certificate_key {site.key};",
        "        ssl_protocols TLSv1.2 TLSv1.3;",
        "        ssl_session_cache shared:hami_sim_tls:10m;",
        "        ssl_session_timeout 1h;",
    ]
    if site.client_ca:
        lines += [
            f"        ssl_client_certificate {site.client_ca};",
            "        ssl_verify_client on;",
            "        ssl_verify_depth 3;",
        ]
    return "\n".join(lines) + "\n"


def _listen(site: Site, port: int, tls: bool) -> str:
    address = f"{site.host}:{port}" if site.host else str(port)
    return f"        listen {address}{' ssl' if tls else ''} backlog=4096;"


def _probe_server(site: Site) -> str:
    """Plain HTTP for the kubelet, which has no client certificate: the probes and nothing else."""
    if not site.probe_port:
        return ""
    locations = "\n".join(f"        location = {path} {{\n{_PROXY}\n        }}" for path in PROBE_PATHS)
    return f"""
    server {{
{_listen(site, site.probe_port, False)}
{locations}
        location / {{ return 404; }}
    }}
"""


def render(site: Site) -> str:
    """The complete ``nginx.conf`` of one listener."""
    lim, p = site.limits, site.prefix.rstrip("/")
    return f"""\
# nginx in front of the {site.listener} listener: written by hami_sim/server/nginx.py
# (make nginx-config); do not edit by hand.
daemon off;
worker_processes {site.workers};
worker_rlimit_nofile {lim.worker_connections * 2};
pid {p}/nginx.pid;
error_log stderr warn;
events {{
    worker_connections {lim.worker_connections};
}}
http {{
    access_log off;  # the application writes one JSON access line per request, with its id
    server_tokens off;
    client_body_temp_path {p}/body;
    proxy_temp_path {p}/proxy;
    fastcgi_temp_path {p}/fastcgi;
    uwsgi_temp_path {p}/uwsgi;
    scgi_temp_path {p}/scgi;
    default_type application/octet-stream;

    client_header_timeout {lim.header_timeout}s;
    client_body_timeout {lim.body_timeout}s;
    client_max_body_size {lim.body_bytes};
    client_body_buffer_size 1m;
    client_header_buffer_size {lim.header_buffer};
    large_client_header_buffers {lim.header_buffers} {lim.header_buffer};
    send_timeout {lim.send_timeout}s;
    keepalive_timeout {lim.keepalive_timeout}s;
    keepalive_requests 10000;
    reset_timedout_connection on;
    limit_conn_zone $binary_remote_addr zone=per_address:10m;
    limit_conn per_address {lim.connections_per_address};
    limit_conn_status 429;
    proxy_connect_timeout 5s;
    proxy_read_timeout {lim.proxy_read_timeout}s;
    proxy_send_timeout {lim.proxy_read_timeout}s;
    proxy_request_buffering on;
    proxy_buffering on;

{_json_error_map()}

    upstream hami_sim_app {{
        server unix:{site.upstream} max_fails=0;
        keepalive 32;
        keepalive_timeout 60s;  # under gunicorn's keep-alive (75 s): nginx closes first
    }}

    server {{
{_listen(site, site.port, bool(site.cert))}
{_tls(site)}
{_error_pages(lim)}
        location / {{
{_PROXY}
        }}
    }}
{_probe_server(site)}}}
"""


def main(argv: list[str] | None = None) -> None:
    """``python -m hami_sim.server.nginx web|extender``: print the production configuration."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("listener", choices=LISTENERS)
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hami_sim.project.settings")
    sys.stdout.write(render(production_site(args.listener)))


if __name__ == "__main__":
    main()
