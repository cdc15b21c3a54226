"""nginx in front of the web and extender listeners, as ``deploy/`` runs it.

Each listener's pod runs a pinned official nginx image beside the application, with its
configuration from the ``hami-sim-nginx`` ConfigMap: the file ``hami_sim.server.nginx`` renders for
that listener (``make nginx-config``; the tests' servers run the same rendering), which the real
nginx accepts. nginx listens on the Service's port with the TLS Secret (mTLS on the extender) and
proxies to the unix socket the application binds on a volume both containers share; the kubelet's
probes go through nginx.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest
import yaml

from hami_sim.server.nginx import POD_SOCKET, production_site, render
from hami_sim.server.serve import NGINX

from .conftest import DEPLOY, Pki
from .test_manifests import _objects, _probe_port

LISTENERS = {"web": "hami-sim-web", "extender": "hami-sim-extender"}


@pytest.fixture(scope="module")
def manifests() -> dict[str, list[dict]]:
    """``kubectl kustomize`` of deploy/base and deploy/production."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        if os.environ.get("CI") == "true":
            pytest.fail("kubectl is required on CI (it renders deploy/ kustomizations)")
        pytest.skip("kubectl is not installed")
    out = {}
    for name in ("base", "production"):
        result = subprocess.run(
            [kubectl, "kustomize", str(DEPLOY / name)], capture_output=True, text=True, timeout=120
        )
        assert result.returncode == 0, result.stderr
        out[name] = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
    return out


def _pod(manifests, kustomization: str, listener: str) -> dict:
    return _objects(manifests, kustomization, "Deployment")[LISTENERS[listener]]["spec"]["template"]["spec"]


def _config_map(manifests, kustomization: str) -> dict:
    (found,) = [
        o
        for o in manifests[kustomization]
        if o["kind"] == "ConfigMap" and o["metadata"]["name"].startswith("hami-sim-nginx")
    ]
    return found


@pytest.mark.parametrize("listener", list(LISTENERS))
def test_the_committed_nginx_configuration_is_what_the_code_renders(listener):
    """``make nginx-config`` was run: the file the pods mount is the tests' nginx configuration."""
    assert (DEPLOY / "base" / "nginx" / f"{listener}.conf").read_text() == render(production_site(listener))


@pytest.mark.parametrize("kustomization", ["base", "production"])
@pytest.mark.parametrize("listener", list(LISTENERS))
def test_nginx_fronts_each_listener_in_its_pod(manifests, kustomization, listener):
    pod = _pod(manifests, kustomization, listener)
    containers = {c["name"]: c for c in pod["containers"]}
    app, nginx = containers[listener], containers["nginx"]
    assert re.fullmatch(r"nginx:\d+\.\d+\.\d+-alpine", nginx["image"]), nginx["image"]  # official, pinned
    conf_file = f"/etc/nginx/hami-sim/{listener}.conf"
    assert nginx["command"] == ["nginx", "-e", "stderr", "-c", conf_file]
    mounts = {m["mountPath"]: m["name"] for m in nginx["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    config_map = _config_map(manifests, kustomization)
    assert volumes[mounts["/etc/nginx/hami-sim"]]["configMap"]["name"] == config_map["metadata"]["name"]
    assert config_map["data"][f"{listener}.conf"] == render(production_site(listener))
    assert volumes[mounts["/etc/hami-sim/tls"]]["secret"]["secretName"] == "hami-sim-tls"
    # the application binds the socket nginx proxies to, on a volume both mount; no port of its own
    env = {e["name"]: e.get("value") for e in app["env"]}
    assert env["HAMI_SIM_BIND"] == f"unix:{POD_SOCKET}"
    socket_dir = POD_SOCKET.rsplit("/", 1)[0]
    assert {m["mountPath"]: m["name"] for m in app["volumeMounts"]}[socket_dir] == mounts[socket_dir]
    assert "emptyDir" in volumes[mounts[socket_dir]]
    assert {p["containerPort"] for p in app.get("ports", [])} <= {9100}  # only the workers' metrics
    assert not {m["mountPath"] for m in app["volumeMounts"]} & {"/etc/hami-sim/tls"}  # nginx holds TLS
    # the Service's port is nginx's, and the kubelet's probes go through nginx
    site = production_site(listener)
    assert site.port in {p["containerPort"] for p in nginx["ports"]}
    for probe in ("startupProbe", "readinessProbe"):
        assert nginx[probe]["httpGet"]["path"] in ("/healthz", "/readyz")
        assert _probe_port(nginx, nginx[probe]) in (site.port, site.probe_port)


def test_only_the_extender_asks_for_a_client_certificate():
    extender, web = render(production_site("extender")), render(production_site("web"))
    assert (
        "ssl_verify_client on;" in extender and "ssl_client_certificate /etc/hami-sim/tls/ca.crt;" in extender
    )
    assert "ssl_verify_client" not in web
    for text in (extender, web):  # what reaches the application about the client, from nginx only
        for header in ("X-Client-Cert $ssl_client_escaped_cert", "X-Real-IP $remote_addr"):
            assert f"proxy_set_header {header};" in text


@pytest.mark.parametrize("listener", list(LISTENERS))
def test_the_real_nginx_accepts_the_configuration(listener, tmp_path):
    """``nginx -t`` on the ConfigMap's file, its pod paths moved into a temporary directory."""
    if not os.path.exists(NGINX):
        pytest.skip("nginx is not installed (.ci/run installs it)")
    pki = Pki(tmp_path)
    text = (DEPLOY / "base" / "nginx" / f"{listener}.conf").read_text()
    text = text.replace("/etc/hami-sim/tls/tls.crt", pki.server_cert).replace(
        "/etc/hami-sim/tls/tls.key", pki.server_key
    )
    text = text.replace("/etc/hami-sim/tls/ca.crt", pki.ca_cert).replace("/tmp/nginx", str(tmp_path))
    text = text.replace(POD_SOCKET, str(tmp_path / "gunicorn.sock"))
    conf = tmp_path / "nginx.conf"
    conf.write_text(text)
    result = subprocess.run(
        [NGINX, "-t", "-e", "stderr", "-p", str(tmp_path), "-c", str(conf)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
