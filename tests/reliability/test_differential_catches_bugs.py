"""The test of the test: each bug below, planted in the caches alone (monkeypatched, in this
process), makes the differential test (``test_cache_differential.py``) fail at the size CI runs.
A differential test weakened so that it would pass with one of them fails here."""

from __future__ import annotations

from operator import attrgetter

import pytest
from hypothesis import Phase, given, settings

from hami_sim.engine import annotations, cache, registration_templates
from hami_sim.engine.cache import RegistrationCache
from hami_sim.engine.model import PodView
from tests.reliability.differential import PROOF, proof_arguments
from tests.reliability.test_cache_differential import (
    test_the_cached_path_answers_as_a_fresh_simulator as differential_test,
)


def _pod_key_drops_annotations(monkeypatch):
    monkeypatch.setattr(PodView, "FIT_READS", tuple(f for f in PodView.FIT_READS if f != "annotations"))


def _rebuilt_uuids_reversed(monkeypatch):
    rebuild, init = registration_templates.rebuilt, registration_templates.RebuiltDevices.__init__
    monkeypatch.setattr(annotations, "rebuilt", lambda split: rebuild((split[0], split[1][::-1])))
    monkeypatch.setattr(
        registration_templates.RebuiltDevices,
        "__init__",
        lambda self, template, ids: init(self, template, ids[::-1]),
    )


def _live_verdict_shared_at_any_usage(monkeypatch):
    monkeypatch.setattr(cache, "usage_signature", lambda ids, keys: ())


def _live_verdict_ignores_the_usage_object(monkeypatch):
    def live_verdict(self, inventory, pod_key, usage):
        live = inventory.entry.live if inventory.entry is not None else None
        found = live.get(pod_key) if live else None
        return found[1] if found is not None else None

    monkeypatch.setattr(RegistrationCache, "live_verdict", live_verdict)


def _usage_signature_ignores_usedcores(monkeypatch):
    fields = [f for f in ("used", "usedmem", "usedcores", "unhealthy") if f != "usedcores"]
    monkeypatch.setattr(cache, "_USAGE_KEY", attrgetter(*fields))


def _unshrunk(vendor: str) -> None:
    """The differential test as CI runs it (its body, arguments and size), stopping at its first
    failing example (shrinking one would take minutes and prove nothing more)."""
    no_shrinking = settings(PROOF, phases=(Phase.explicit, Phase.reuse, Phase.generate))
    no_shrinking(given(**proof_arguments())(differential_test.hypothesis.inner_test))(vendor=vendor)


#: (the bug, where it is planted) -> the vendors to run the differential test for, in order (it
#: stops at the first that fails; the bug must be caught by one of them)
BUGS = {
    _pod_key_drops_annotations: ["NVIDIA", "AMD"],
    _rebuilt_uuids_reversed: ["NVIDIA", "AMD"],
    _live_verdict_shared_at_any_usage: ["NVIDIA"],
    _live_verdict_ignores_the_usage_object: ["NVIDIA", "AMD"],
    _usage_signature_ignores_usedcores: ["NVIDIA"],
}


@pytest.mark.engine
def test_the_bugs_planted_here_are_the_caches_own():
    """Without a bug the differential test passes for each vendor used below (so a failure under a
    bug is the bug's)."""
    for vendor in sorted({v for vendors in BUGS.values() for v in vendors}):
        differential_test(vendor=vendor)


@pytest.mark.engine
@pytest.mark.parametrize("plant", list(BUGS), ids=lambda plant: plant.__name__.strip("_"))
def test_the_differential_test_fails_with_a_bug_planted_in_the_caches(plant, monkeypatch):
    plant(monkeypatch)
    caught = []
    for vendor in BUGS[plant]:
        try:
            _unshrunk(vendor)
        except AssertionError as failure:
            caught.append((vendor, failure))
            break
    assert caught, f"the differential test passed with {plant.__name__} on {BUGS[plant]}"
