"""The Cluster Autoscaler examples in deploy/ run the newest CA release hami-sim follows, with flags that
release accepts, and every Secret and ConfigMap the CA pod mounts has a source.

The flag list is restated from CA 1.36.1's source (``cluster-autoscaler/config/flags/flags.go``; ``--v``
and ``--stderrthreshold`` are klog's, registered by ``klog.InitFlags`` in ``main.go``): only the flags
the examples and the Components use. Each of them exists under the same name in 1.32.7, 1.33.6,
1.34.5 and 1.35.2 too.
"""

from __future__ import annotations

import pytest

from hami_sim.engine.ca_releases import DEFAULT_VERSION, MINORS, NEWEST, ca_release
from tests.deploy.conftest import REPO
from tests.deploy.test_sources import _doc_texts, mounted, unsourced

CA_136_FLAGS = {
    "v",
    "stderrthreshold",
    "cloud-provider",
    "skip-nodes-with-local-storage",
    "node-group-auto-discovery",
    "expander",
    "grpc-expander-url",
    "grpc-expander-cert",
    "scheduler-config-file",
}
EXAMPLES = ["cluster-autoscaler-example", "cluster-autoscaler-extender-example"]


def _ca(rendered: dict, example: str) -> dict:
    (deployment,) = [
        o
        for o in rendered[example]
        if o["kind"] == "Deployment" and o["metadata"]["name"] == "cluster-autoscaler"
    ]
    return deployment


def test_the_default_ca_version_is_the_newest_release():
    assert DEFAULT_VERSION == NEWEST.pinned == "1.36.1"  # newest cluster-autoscaler-1.x.y tag read
    assert NEWEST.minor == max(m.minor for m in MINORS)


@pytest.mark.parametrize("example", EXAMPLES)
def test_the_example_runs_the_newest_ca_with_flags_it_accepts(every_overlay, example):
    container = _ca(every_overlay, example)["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == ca_release(DEFAULT_VERSION).image
    flags = [word for word in container["command"] if word.startswith("--")]
    names = {flag[2:].split("=", 1)[0] for flag in flags}
    assert names <= CA_136_FLAGS, names - CA_136_FLAGS
    # the last --expander wins in CA's flag parsing: exactly one, so nothing overrides the chain
    assert len([f for f in flags if f.startswith("--expander=")]) == 1


def test_the_upstream_example_mounts_only_what_has_a_source(every_overlay):
    """Done when: the upstream-CA example is a CA of the newest release whose every mounted Secret has a
    source (the expander's CA bundle in kube-system, from a documented step)."""
    ca = _ca(every_overlay, "cluster-autoscaler-example")
    refs = mounted(ca)
    assert ("Secret", "kube-system", "hami-sim-expander-ca") in refs
    overlay = {"cluster-autoscaler-example": every_overlay["cluster-autoscaler-example"]}
    assert unsourced(overlay, _doc_texts()) == {}


def _release_rows() -> dict[int, list[str]]:
    """docs/cluster-autoscaler.md's "Which CA release" table: {minor: cells}."""
    text = (REPO / "docs" / "cluster-autoscaler.md").read_text()
    section = text.split("## Which CA release", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[0].startswith("1."):
            rows[int(cells[0].split(".")[1])] = cells
    return rows


_WIRE_WORDS = {
    "objects": "`nodeMap` = 2 and `Option.pod` = 4",
    "both": "both forms",
    "bytes": "only `nodeBytesMap` = 3",
}


def test_the_docs_table_says_what_ca_releases_knows():
    """One row per supported minor, each saying what hami_sim.engine.ca_releases says of its pinned patch,
    and naming every patch release inside the minor where a fact changed."""
    from hami_sim.engine.ca_releases import CHANGES, releases

    rows = _release_rows()
    assert sorted(rows) == [m.minor for m in MINORS]
    for release in releases():
        minor, pinned, wire, retry, expander, dra = rows[release.minor]
        assert pinned == f"`{release.version}`", release
        assert wire.startswith(_WIRE_WORDS[release.wire.value]), (release, wire)
        assert retry.startswith("yes" if release.hostname_retry else "no"), (release, retry)
        assert expander == f"`{release.default_expander}`", release
        assert dra.startswith("locked on" if release.dra_locked_on else "off by default"), release
    for change in CHANGES:
        major, minor, patch = change.since
        if patch and change.attribute in ("wire", "hostname_retry"):
            assert f"{major}.{minor}.{patch}" in " ".join(rows[minor]), change
