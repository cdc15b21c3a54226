"""The profile CLI as an operator meets it: stdin, unknown groups, unwritable files, typos that name the fix."""

from __future__ import annotations

import io
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

pytestmark = [pytest.mark.django_db]
ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "demo" / "profiles.yaml"


def test_import_reads_stdin(monkeypatch):
    from profiles.models import NodeGroup

    monkeypatch.setattr(sys, "stdin", io.StringIO(DEMO.read_text()))
    out = StringIO()
    call_command("import_profiles", "-", stdout=out)
    assert "imported 3 new" in out.getvalue()
    assert sorted(NodeGroup.objects.values_list("name", flat=True)) == ["gpu-a10", "gpu-h100", "gpu-l4"]


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (["nope"], "unknown node group: nope; known: gpu-a10, gpu-h100, gpu-l4"),
        (["gpu-a10", "nope", "zz"], "unknown node groups: nope, zz; known: gpu-a10, gpu-h100, gpu-l4"),
    ],
)
def test_export_of_an_unknown_group_fails(names, message):
    call_command("import_profiles", str(DEMO), stdout=StringIO())
    out = StringIO()
    with pytest.raises(CommandError) as raised:
        call_command("export_profiles", *names, stdout=out)
    assert str(raised.value) == message
    assert out.getvalue() == ""


@pytest.mark.parametrize("where", ["missing-dir/out.yaml", "."])
def test_export_to_an_unwritable_file_is_a_clear_error(tmp_path, where):
    """A CommandError: manage.py prints one line and exits 1, no traceback."""
    with pytest.raises(CommandError, match=r"^cannot write .*: "):
        call_command("export_profiles", "-o", str(tmp_path / where))


def test_import_with_a_vendor_typo_lists_the_valid_vendors(tmp_path):
    from profiles.choices import vendor_choices

    path = tmp_path / "typo.yaml"
    path.write_text(DEMO.read_text().replace("vendor: NVIDIA", "vendor: Nvidia", 1))
    with pytest.raises(CommandError) as raised:
        call_command("import_profiles", str(path), stdout=StringIO())
    text = str(raised.value)
    assert "Nvidia" in text and "nothing was changed" in text
    for value, _label in vendor_choices():
        assert value in text


@pytest.mark.parametrize(
    ("groups", "message"),
    [
        (
            ["gpu-a10", "nope"],
            "unknown node group 'nope': give its template inline or create it first; "
            "known: gpu-a10, gpu-h100, gpu-l4",
        ),
        (
            ["zz", "gpu-l4", "nope"],
            "unknown node groups 'zz', 'nope': give their templates inline or create them first; "
            "known: gpu-a10, gpu-h100, gpu-l4",
        ),
    ],
)
def test_estimate_names_every_unknown_group_and_the_known_ones(client, groups, message):
    call_command("import_profiles", str(DEMO), stdout=StringIO())
    body = {"pods": [], "nodeGroups": groups}
    response = client.post("/api/v1/estimate", body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["detail"].endswith(message)
