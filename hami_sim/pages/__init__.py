"""What every app's pages share: login gate, list pages, panels, Plotly figures.

Each app owns its pages (``<app>/views.py``, ``tables.py``, ``urls_pages.py``, ``templates/<app>/``)
and may import only itself and the layers below it (``.importlinter``), so what they all use lives
here, below every app. The ``dashboard`` app keeps the overview, the navigation and the base
templates (``dashboard/base.html``, ``dashboard/list.html``, ``dashboard/_plot.html``).
"""
