"""Plotly figures for the dashboard, built server-side and rendered by our own plotly.min.js.

Each builder returns a plain dict (``{"data": [...], "layout": {...}}``) ready for ``json_script``.

Plotly draws text with its own HTML subset, ``<a href>`` included: a node name, a reason or a pod's
annotation drawn as it is would be a clickable link any caller (a read-only token) can plant in an
operator's chart. Every value that comes from data goes through ``_plain`` (HTML-escaped: Plotly
shows ``&lt;a&gt;`` as the literal text); only our own ``<br>`` stays markup.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping, Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from hami_sim.engine.vendors import ProfileFields, profile_fields
from hami_sim.engine.vendors.registry import DEFAULT_PANELS, CapacityPanel

from .scores import format_score

__all__ = [
    "VERDICT_COLORS",
    "decisions_over_time",
    "top_reasons",
    "device_grid",
    "GRID_MAX_NODES",
    "capacity_bars",
    "capacity_panels",
    "usage_bars",
    "group_usage",
    "CapacityPanel",
]

VERDICT_COLORS = {"fit": "#2e9e5b", "no_fit": "#d9534f", "unresolvable": "#8a8f98"}
GRID_MAX_NODES = 40
_LAYOUT = {"margin": {"l": 10, "r": 10, "t": 30, "b": 10}, "height": 300, "template": "plotly_white"}


def _out(fig: go.Figure) -> dict:
    return json.loads(fig.to_json())


def _plain(value: object) -> str:
    """Data as Plotly text: its markup escaped, so it is shown, never made a tag (or a link)."""
    return html.escape(str(value), quote=False)


def decisions_over_time(rows: Iterable[tuple], window: tuple | None = None) -> dict:
    """Stacked bars of answered filter calls per hour by overall verdict. ``rows``: (hour, verdict, n);
    ``window``: (start, end) datetimes the x axis spans (the last 24 hours on the overview)."""
    by_verdict: dict[str, dict] = {}
    for bucket, verdict, n in rows:
        by_verdict.setdefault(verdict, {})[bucket] = int(n or 0)
    fig = go.Figure()
    for verdict in ("fit", "no_fit", "unresolvable"):
        points = by_verdict.get(verdict)
        if not points:
            continue
        xs = sorted(points)
        fig.add_bar(
            x=xs,
            y=[points[x] for x in xs],
            name=verdict.replace("_", " "),
            marker_color=VERDICT_COLORS[verdict],
            width=3_300_000,  # ms: an hour's bar, not the axis' whole width
            xperiod=3_600_000,
            xperiodalignment="start",
        )
    fig.update_layout(barmode="stack", title="Filter answers per hour by verdict (UTC)", **_LAYOUT)
    if window is not None:  # the whole window on the axis: one busy hour reads as one hour, not a wall
        fig.update_xaxes(range=[window[0].isoformat(), window[1].isoformat()])
    fig.update_yaxes(title_text="answers")
    return _out(fig)


def top_reasons(rows: Sequence[tuple[str, int]]) -> dict:
    """Horizontal bars: the rules that rejected pods most often (folded counts)."""
    rows = list(rows)[::-1]
    fig = go.Figure(
        go.Bar(
            x=[n for _, n in rows],
            y=[_plain(r) for r, _ in rows],
            orientation="h",
            marker_color=VERDICT_COLORS["no_fit"],
        )
    )
    fig.update_layout(title="Top failure reasons", **_LAYOUT)
    fig.update_yaxes(automargin=True)
    return _out(fig)


_GRID_CODES = {"unresolvable": -1, "rejected": 0, "unchecked": 1, "free": 2, "chosen": 3, "unhealthy": 4}
#: One colour band per code, in code order: unresolvable, rejected, unchecked, free, chosen, unhealthy.
_GRID_COLOURS = ["#c7cad1", "#e46b66", "#f3e3b3", "#cfe9d6", "#2e9e5b", "#9a6fb0"]
_GRID_SCALE = [
    [round(edge, 4), colour]
    for i, colour in enumerate(_GRID_COLOURS)
    for edge in (i / len(_GRID_COLOURS), (i + 1) / len(_GRID_COLOURS))
]
#: Drawn for an unhealthy card's unusable capacity in the usage charts (never as "free").
UNHEALTHY_COLOUR = "#9a6fb0"


def _unhealthy(dev: Mapping) -> bool:
    return dev.get("health", True) is False or dev.get("healthy", True) is False


def _verdict(dev: Mapping) -> str:
    """The cell's state: an unhealthy card that was not chosen is "unhealthy", never "free"."""
    verdict = dev.get("verdict", "")
    return "unhealthy" if _unhealthy(dev) and verdict != "chosen" else verdict


def _cell_text(dev: Mapping) -> str:
    verdict = _verdict(dev)
    if verdict == "chosen":
        return f"chosen<br>{_plain(dev.get('usedmem', 0))} MiB · {_plain(dev.get('usedcores', 0))}%"
    if verdict == "rejected":
        return _plain(dev.get("reason") or "rejected")
    return _plain(verdict or "")


def _grid_row(node: Mapping, width: int) -> tuple[list, list, list]:
    """One node's row of the grid: each device's colour code, cell text and hover text (a node
    without devices shows its verdict in the first cell)."""
    # vendor ScoreNode terms make scores unbounded (MetaX sGPU: +-10000 x topology): text only,
    # never a colour scale
    scored = f"<br>node score {format_score(node.get('score'))}" if node.get("fits") else ""
    row_z: list = [None] * width
    row_t: list = [""] * width
    row_h: list = [""] * width
    devices = node.get("devices") or []
    if not devices:
        code = _GRID_CODES["unresolvable"] if node.get("unresolvable") else (3 if node.get("fits") else 0)
        row_z[0] = code
        reason = node.get("reason") or ("fits (no device requested)" if node.get("fits") else "")
        row_t[0] = "no inventory" if node.get("unresolvable") else _plain(reason)
        row_h[0] = _plain(reason) + scored
    for i, dev in enumerate(devices[:width]):
        row_z[i] = _GRID_CODES.get(_verdict(dev), 1)
        row_t[i] = _cell_text(dev)
        row_h[i] = (
            f"{_plain(dev.get('type', ''))} {_plain(dev.get('uuid', ''))}<br>{_plain(dev.get('devmem', 0))} MiB, "
            f"{_plain(dev.get('devcore', 0))}% cores, {_plain(dev.get('count', 0))} slots, "
            f"NUMA {_plain(dev.get('numa', 0))}<br>{_plain(_verdict(dev))} {_plain(dev.get('reason', ''))}{scored}"
        )
    return row_z, row_t, row_h


def device_grid(nodes: Sequence[Mapping]) -> dict:
    """Node (group) x device heatmap: each cell the device's verdict and the rule or the allocation."""
    nodes = list(nodes)[:GRID_MAX_NODES]
    width = max([len(n.get("devices") or []) for n in nodes] + [1])
    xs = [f"GPU {i}" for i in range(width)]
    ys, z, text, hover = [], [], [], []
    for node in nodes:
        name = _plain(node["name"])
        ys.append(f"{_plain(node['group'])} · {name}" if node.get("group") else name)
        row_z, row_t, row_h = _grid_row(node, width)
        z.append(row_z)
        text.append(row_t)
        hover.append(row_h)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=xs,
            y=ys,
            text=text,
            customdata=hover,
            texttemplate="%{text}",
            hovertemplate="%{y}<br>%{x}: %{customdata}<extra></extra>",
            colorscale=_GRID_SCALE,
            zmin=-1,
            zmax=len(_GRID_COLOURS) - 2,
            showscale=False,
            xgap=3,
            ygap=3,
            textfont={"size": 11},
        )
    )
    layout = dict(_LAYOUT, height=max(180, 60 + 48 * len(ys)), title="Node group × device")
    fig.update_layout(**layout)
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_xaxes(side="top")
    return _out(fig)


def _profile(vendor: str | None) -> ProfileFields | None:
    """The backend's descriptor fields (chart panels, device noun); None for an unknown vendor."""
    return profile_fields().get(vendor or "")


def capacity_panels(vendor: str | None, devices: Sequence[Mapping]) -> tuple[CapacityPanel, ...]:
    """The vendor's panels (its descriptor's), without those no device fills (a total of 0
    everywhere: nothing to show)."""
    profile = _profile(vendor)
    panels = profile.panels if profile is not None else DEFAULT_PANELS
    shown = tuple(
        p
        for p in panels
        if any(int(d.get(p.total_key, 0) or 0) or int(d.get(p.used_key, 0) or 0) for d in devices)
    )
    return shown or panels[-1:]


def _device_noun(vendor: str | None) -> str:
    profile = _profile(vendor)
    return profile.device_noun if profile is not None else "GPU"


def capacity_bars(
    devices: Sequence[Mapping], title: str = "Per-device capacity", vendor: str | None = None
) -> dict:
    """One panel per capacity the vendor's devices have (memory MiB, cores %, slots for NVIDIA-like
    vendors; NeuronCores only for AWS Neuron, ...); used parts stacked on free ones."""
    panels = capacity_panels(vendor, devices)
    noun = _device_noun(vendor)
    labels = [f"{noun} {_plain(d.get('index', i))}" for i, d in enumerate(devices)]
    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=[p.title for p in panels])
    sick = [_unhealthy(d) for d in devices]
    for col, panel in enumerate(panels, start=1):
        used = [int(d.get(panel.used_key, 0) or 0) for d in devices]
        rest = [max(0, int(d.get(panel.total_key, 0) or 0) - u) for d, u in zip(devices, used, strict=True)]
        free = [0 if bad else r for r, bad in zip(rest, sick, strict=True)]
        fig.add_bar(
            x=labels, y=used, name="used", marker_color="#2e9e5b", showlegend=col == 1, row=1, col=col
        )
        fig.add_bar(
            x=labels, y=free, name="free", marker_color="#cfe9d6", showlegend=col == 1, row=1, col=col
        )
        if any(sick):
            fig.add_bar(
                x=labels,
                y=[r if bad else 0 for r, bad in zip(rest, sick, strict=True)],
                name="unhealthy (unusable)",
                marker_color=UNHEALTHY_COLOUR,
                showlegend=col == 1,
                row=1,
                col=col,
            )
    layout = dict(_LAYOUT, margin={"l": 10, "r": 10, "t": 70, "b": 10}, height=330)
    fig.update_layout(barmode="stack", title=title, **layout)
    return _out(fig)


def usage_bars(nodes: Sequence[Mapping], title: str = "Device memory per node") -> dict:
    """Session usage: one bar per node/device, used vs free memory, hover with cores and slots."""
    xs, used, free, sick, hover = [], [], [], [], []
    for node in nodes:
        for dev in node.get("devices", []):
            xs.append(f"{_plain(node['name'])}<br>GPU {_plain(dev.get('index', 0))}")
            u = int(dev.get("usedmem", 0) or 0)
            used.append(u)
            rest = max(0, int(dev.get("devmem", 0) or 0) - u)
            free.append(0 if _unhealthy(dev) else rest)
            sick.append(rest if _unhealthy(dev) else 0)
            hover.append(
                f"cores {_plain(dev.get('usedcores', 0))}/{_plain(dev.get('devcore', 0))}%, "
                f"slots {_plain(dev.get('used', 0))}/{_plain(dev.get('count', 0))}"
            )
    fig = go.Figure()
    fig.add_bar(
        x=xs,
        y=used,
        name="used MiB",
        marker_color="#2e9e5b",
        customdata=hover,
        hovertemplate="%{x}: %{y} MiB used, %{customdata}<extra></extra>",
    )
    fig.add_bar(x=xs, y=free, name="free MiB", marker_color="#cfe9d6")
    if any(sick):
        fig.add_bar(x=xs, y=sick, name="unhealthy MiB (unusable)", marker_color=UNHEALTHY_COLOUR)
    fig.update_layout(barmode="stack", title=title, **_LAYOUT)
    return _out(fig)


def group_usage(groups: Sequence[tuple[str, object]]) -> dict:
    """Per node group, from live usage: allocated vs free device memory and cores (stacked, so the
    bar's length is what the group's live nodes register). ``groups``: ``(name, usage Totals)``;
    a group with no live node has an empty bar and says "cold" on hover."""
    names = [_plain(name) for name, _ in groups]
    fig = make_subplots(rows=1, cols=2, subplot_titles=["device memory (MiB)", "device cores (%)"])
    panels = (("usedmem", "devmem", "unhealthymem"), ("usedcores", "devcore", "unhealthycores"))
    for col, (used_key, total_key, sick_key) in enumerate(panels, start=1):
        used = [int(getattr(t, used_key)) for _, t in groups]
        total = [int(getattr(t, total_key)) for _, t in groups]
        free = [max(0, tot - u) for tot, u in zip(total, used, strict=True)]
        sick = [int(getattr(t, sick_key, 0) or 0) for _, t in groups]
        hover = [
            f"{getattr(t, 'live_nodes', 0)} of {getattr(t, 'nodes', 0)} nodes with live usage"
            if getattr(t, "nodes", 0)
            else "cold: no node yet"
            for _, t in groups
        ]
        bars = [("allocated", used, "#2e9e5b"), ("free", free, "#cfe9d6")]
        if any(sick):
            bars.append(("unhealthy (unusable)", sick, UNHEALTHY_COLOUR))
        for label, values, color in bars:
            fig.add_bar(
                y=names,
                x=values,
                name=label,
                orientation="h",
                marker_color=color,
                customdata=hover,
                hovertemplate=f"%{{y}}: %{{x}} {label}<br>%{{customdata}}<extra></extra>",
                showlegend=col == 1,
                row=1,
                col=col,
            )
    layout = dict(_LAYOUT, margin={"l": 10, "r": 10, "t": 60, "b": 10})
    layout["height"] = max(220, 90 + 36 * len(names))
    fig.update_layout(barmode="stack", title="Allocated vs free per node group (live nodes)", **layout)
    fig.update_yaxes(automargin=True, autorange="reversed")
    return _out(fig)
