"""``manage.py expander_example``: the upstream-CA path made visible, one real grpcio call to the expander."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from simulations.grpcexpander.server import build_server
from simulations.management.commands.expander_example import WIRE_WORDS, WIRES

pytestmark = [pytest.mark.django_db(transaction=True)]
DEMO = Path(__file__).resolve().parents[2] / "demo" / "profiles.yaml"


@pytest.fixture
def expander():
    server, port = build_server("127.0.0.1:0")
    server.start()
    yield f"127.0.0.1:{port}"
    server.stop(None)


@pytest.mark.parametrize("wire", WIRES)
def test_example_asks_the_running_expander_and_leaves_a_decision(expander, wire):
    from decisions import recorder
    from decisions.models import Decision

    call_command("import_profiles", str(DEMO), stdout=StringIO())
    out = StringIO()
    call_command("expander_example", "--target", expander, "--wire", wire, stdout=out)
    text = out.getvalue()
    assert "options gpu-a10, gpu-h100, gpu-l4" in text
    assert f"wire: {WIRE_WORDS[wire]}\n" in text
    # 30000 MiB fits an H100 card, not an A10G; gpu-l4 has no device profile: kept, not judged, and
    # said so on every line that names it
    assert "kept: gpu-h100; kept, not judged: gpu-l4\n" in text
    assert "  gpu-a10: dropped (its reason: the dashboard's Decisions page, caller expander)\n" in text
    assert "  gpu-h100: kept: places 2/2 pod(s) on 1 of 1 new node(s)" in text
    assert "  gpu-l4: kept, not judged: no-device-profile: " in text
    recorder.flush(timeout=30)
    decision = Decision.objects.get(caller="expander")
    assert decision.pod_name.startswith("llm-serving-5b7c-")


def test_example_without_an_expander_says_where_it_looked():
    call_command("import_profiles", str(DEMO), stdout=StringIO())
    with pytest.raises(CommandError, match=r"^127\.0\.0\.1:1: UNAVAILABLE"):
        call_command("expander_example", "--target", "127.0.0.1:1")


def test_the_readme_names_the_wire_the_example_sends_by_default():
    """The README says which of CA's two request forms the command sends when not told."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    sentence = readme.split("manage.py expander_example`", 1)[1].split("prints the options", 1)[0]
    fields = {"bytes": ("`nodeBytesMap`", "`podBytes`"), "objects": ("`nodeMap`", "`pod`")}[WIRES[-1]]
    assert all(field in sentence.split("`--wire")[0] for field in fields), sentence
    assert "CA 1.35 and later" in sentence
