"""Serve ``plotly.min.js`` from the installed ``plotly`` package as ``dashboard/plotly.min.js``.

No CDN, and no 4.8 MB copy in git: the file comes with the pinned PyPI package, so its version
always matches the Python figure builder. Works with ``collectstatic`` and WhiteNoise's finders.
"""

from __future__ import annotations

from pathlib import Path

import plotly
from django.contrib.staticfiles.finders import BaseFinder
from django.core.files.storage import FileSystemStorage

__all__ = ["PlotlyFinder", "PLOTLY_JS"]

PLOTLY_JS = "dashboard/plotly.min.js"
_SOURCE = Path(plotly.__file__).resolve().parent / "package_data"


class PlotlyFinder(BaseFinder):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.storage = FileSystemStorage(location=str(_SOURCE))
        self.storage.prefix = "dashboard"

    def check(self, **kwargs):
        return []

    def find(self, path, find_all=False, **kwargs):
        if path == PLOTLY_JS:
            found = str(_SOURCE / "plotly.min.js")
            return [found] if find_all else found
        return []

    def list(self, ignore_patterns):
        yield "plotly.min.js", self.storage
