"""Run ``collectstatic`` when the collected files are missing or older than their sources.

Static files are served by content hash (``STORAGES["staticfiles"]``: WhiteNoise's compressed manifest
storage), so ``{% static %}`` needs ``STATIC_ROOT/staticfiles.json``. The Dockerfile collects at build
time; ``make demo`` and the test session call ``collect_static_if_stale()`` so neither needs a manual
step, and a second start skips the ~15 s of hashing and gzipping when nothing changed.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from django.conf import settings

__all__ = ["collect_static_if_stale", "sources_fingerprint"]

STAMP = ".hami-sim-collected"


def sources_fingerprint() -> str:
    """A digest of every source static file's name, size and mtime, and of the storage backend."""
    from django.contrib.staticfiles.finders import get_finders

    digest = hashlib.sha256(str(settings.STORAGES["staticfiles"]).encode())
    entries = []
    for finder in get_finders():
        for name, storage in finder.list([]):
            stat = Path(storage.path(name)).stat()
            entries.append(f"{name}\0{stat.st_size}\0{stat.st_mtime_ns}")
    for entry in sorted(entries):
        digest.update(entry.encode())
    return digest.hexdigest()


def collect_static_if_stale(verbosity: int = 0) -> bool:
    """``collectstatic`` unless ``STATIC_ROOT`` already holds these sources; True when it ran."""
    root = Path(settings.STATIC_ROOT)
    stamp = root / STAMP
    fingerprint = sources_fingerprint()
    if (root / "staticfiles.json").exists() and stamp.exists() and stamp.read_text() == fingerprint:
        return False
    from django.core.management import call_command

    root.mkdir(parents=True, exist_ok=True)
    call_command("collectstatic", interactive=False, verbosity=verbosity)
    stamp.write_text(fingerprint)
    return True
