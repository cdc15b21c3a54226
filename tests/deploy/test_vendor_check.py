"""``HAMI["VENDORS"]`` set in settings code is checked by ``manage.py check``, not by the first request."""

from __future__ import annotations

import copy
from io import StringIO

import pytest
from django.core.checks import run_checks
from django.core.management import call_command
from django.core.management.base import SystemCheckError


def _hami(settings, vendors: dict) -> dict:
    hami = copy.deepcopy(settings.HAMI)
    hami["VENDORS"] = vendors
    return hami


def _errors() -> list:
    return [e for e in run_checks() if e.id == "hami_sim.E001"]


def test_a_typo_in_a_vendor_field_fails_check_naming_vendor_and_field(settings):
    settings.HAMI = _hami(settings, {"hygon": {"resourceCountNmae": "hygon.com/dcunum"}})
    (error,) = _errors()
    assert 'HAMI["VENDORS"]["hygon"].resourceCountNmae is not a field of HygonConfig' in error.msg
    with pytest.raises(SystemCheckError, match="resourceCountNmae"):
        call_command("check", stdout=StringIO(), stderr=StringIO())


def test_an_unknown_vendor_and_a_bad_value_are_errors(settings):
    settings.HAMI = _hami(settings, {"nvidai": {}})
    (error,) = _errors()
    assert "unknown vendors ['nvidai']" in error.msg
    settings.HAMI = _hami(settings, {"cambricon": {"resourceCountName": ""}})
    (error,) = _errors()
    assert 'HAMI["VENDORS"]["cambricon"].resourceCountName must be a non-empty string' in error.msg
    settings.HAMI = _hami(settings, {"ascend": {"Ascend999": {}}})
    (error,) = _errors()
    assert "unknown chips ['Ascend999']" in error.msg


def test_a_valid_override_passes_check(settings):
    settings.HAMI = _hami(settings, {"hygon": {"resourceCountName": "hygon.com/dcu-renamed"}})
    assert _errors() == []
    out = StringIO()
    call_command("check", stdout=out)
    assert "no issues" in out.getvalue()


def test_a_missing_nvidia_setting_is_an_error_not_a_crash(settings):
    hami = copy.deepcopy(settings.HAMI)
    del hami["NVIDIA"]["resourceCoreName"]
    settings.HAMI = hami
    (error,) = _errors()
    assert "resourceCoreName" in error.msg


@pytest.mark.django_db
def test_the_migrate_job_stops_on_a_bad_vendor_config(settings):
    """deploy/base/migrate-job.yaml runs ``manage.py migrate``, which runs the checks: a typo fails the rollout."""
    settings.HAMI = _hami(settings, {"kunlun": {"resourceCountName": 7}})
    with pytest.raises(SystemCheckError, match=r'HAMI\["VENDORS"\]\["kunlun"\]\.resourceCountName'):
        call_command("migrate", verbosity=0, skip_checks=False, stdout=StringIO())  # as on the CLI
