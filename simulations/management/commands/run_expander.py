"""``manage.py run_expander --bind HOST:PORT [--tls-cert F --tls-key F]``: CA's gRPC expander."""

from __future__ import annotations

import signal

from django.core.management.base import BaseCommand, CommandError

from simulations.grpcexpander.server import build_server
from simulations.grpcexpander.service import load_daemon_sets


class Command(BaseCommand):
    help = (
        "Serve Cluster Autoscaler's gRPC expander (grpcplugin.Expander/BestOptions) with HAMi's device rules."
    )

    def add_arguments(self, parser):
        parser.add_argument("--bind", default="127.0.0.1:8443", help="HOST:PORT to listen on")
        parser.add_argument("--tls-cert", default="", help="PEM certificate (chain) to serve TLS with")
        parser.add_argument("--tls-key", default="", help="PEM private key of --tls-cert")
        parser.add_argument(
            "--workers",
            type=int,
            default=0,
            help="concurrent calls (default EXPANDER_MAX_CONCURRENT); more are refused",
        )
        parser.add_argument(
            "--metrics-bind",
            default="",
            help="HOST:PORT to serve this process's Prometheus metrics on (counts and bytes: "
            "hami_sim_expander_*, its caches, the process), plain HTTP; off by default",
        )
        parser.add_argument(
            "--daemonsets",
            default="",
            help="YAML/JSON list of the cluster's DaemonSets (kubectl get daemonsets -A -o yaml): their "
            "pods take cpu, memory and pod slots on each new node before the pending pods",
        )

    def handle(self, *args, **opts):
        try:
            daemon_pods = load_daemon_sets(opts["daemonsets"]) if opts["daemonsets"] else ()
            server, port = build_server(
                opts["bind"],
                tls_cert=opts["tls_cert"] or None,
                tls_key=opts["tls_key"] or None,
                workers=opts["workers"] or None,
                daemon_pods=daemon_pods,
            )
        except (ValueError, OSError) as exc:
            raise CommandError(str(exc)) from None
        if opts["metrics_bind"]:
            from prometheus_client import start_http_server

            from hami_sim.project.metrics import process_registry

            metrics_host, _, metrics_port = opts["metrics_bind"].rpartition(":")
            try:
                # the series read from the database are the web listener's: exported there once
                start_http_server(
                    int(metrics_port), addr=metrics_host or "0.0.0.0", registry=process_registry()
                )
            except (ValueError, OSError) as exc:
                raise CommandError(f"--metrics-bind {opts['metrics_bind']}: {exc}") from None
        server.start()
        scheme = "tls" if opts["tls_cert"] else "plaintext"
        host = opts["bind"].rsplit(":", 1)[0]
        self.stdout.write(
            f"gRPC expander listening on {host}:{port} ({scheme}, {len(daemon_pods)} DaemonSet pod(s))",
            ending="\n",
        )
        self.stdout.flush()
        signal.signal(signal.SIGTERM, lambda *_: server.stop(5))
        try:
            server.wait_for_termination()
        except KeyboardInterrupt:
            server.stop(5)
