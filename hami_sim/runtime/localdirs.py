"""Create the local directories the settings point at, when a process starts (not at settings import).

Importing ``hami_sim.project.settings`` must have no side effects (a linter, a test collector or a one-off
``python -c`` would otherwise create ``var/``). The entry points call ``ensure_local_dirs()``:
``manage.py``, WSGI/ASGI, the Celery worker and beat, the demo and the test session.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

__all__ = ["ensure_local_dirs", "local_dirs"]


def local_dirs() -> list[Path]:
    """The SQLite database's folder, ``STATIC_ROOT`` and the filesystem broker's folders, as configured."""
    dirs: list[Path] = []
    db = settings.DATABASES["default"]
    name = str(db.get("NAME") or "")
    if db["ENGINE"].endswith("sqlite3") and name and name != ":memory:" and not name.startswith("file:"):
        dirs.append(Path(name).parent)
    if settings.STATIC_ROOT:
        dirs.append(Path(settings.STATIC_ROOT))
    if str(settings.CELERY_BROKER_URL).startswith("filesystem"):
        options = settings.CELERY_BROKER_TRANSPORT_OPTIONS
        for key in ("data_folder_in", "data_folder_out", "control_folder"):
            if options.get(key):
                dirs.append(Path(options[key]))
    return dirs


def ensure_local_dirs() -> None:
    """Create every directory of ``local_dirs()`` that is missing (idempotent, cheap)."""
    for path in local_dirs():
        path.mkdir(parents=True, exist_ok=True)
