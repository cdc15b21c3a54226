"""``make ca-config`` renders for the configured CA release (``CA_VERSION``, ``--ca-version``): every
release from 1.32 to the newest reads the same one-profile ``kubescheduler.config.k8s.io/v1`` file."""

from __future__ import annotations

import pytest
import yaml
from django.conf import settings
from django.core.management import CommandError, call_command

from hami_sim.engine.ca_releases import SUPPORTED, releases
from hami_sim.runtime.simulator import build_vendors
from simulations.caconfig import rendered_files
from tests.deploy.conftest import REPO


@pytest.mark.parametrize("release", releases(), ids=str)
def test_every_supported_release_reads_the_committed_files(release):
    for path, text in rendered_files(build_vendors(settings.HAMI), release).items():
        assert (REPO / path).read_text() == text, f"{path} differs for CA {release}"
        config = yaml.safe_load(text)
        assert config["apiVersion"] == release.scheduler_api_version
        assert len(config["profiles"]) == 1  # CA's framework handle refuses any other count
        assert f"every Cluster Autoscaler from {SUPPORTED}" in text


@pytest.mark.parametrize("version", ["1.32", "1.34.2", "1.36.1"])
def test_check_passes_for_each_release(version):
    call_command("ca_config", "--check", "--ca-version", version, root=str(REPO))


@pytest.mark.parametrize(("version", "message"), [("1.31", "follows CA 1.32 to"), ("1.36.9", "newer than")])
def test_an_unsupported_release_is_a_clear_error(version, message):
    with pytest.raises(CommandError, match=message):
        call_command("ca_config", "--check", "--ca-version", version, root=str(REPO))
