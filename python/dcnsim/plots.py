"""Plot helpers shared by comparisons, sweeps and reports: a figure that needs no
display, fixed margins, and readable axis units."""

from __future__ import annotations

from typing import Any, Tuple


def figure(width: float, height: float) -> Any:
    """A matplotlib figure of that size (inches) drawn without a display (Agg)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig


def margins(fig: Any, *, left: float = 0.9, right: float = 0.2, top: float = 0.55, bottom: float = 0.55, hspace: float = 0.6, wspace: float = 0.3) -> None:
    """Fixed margins and gaps between panels, in inches. matplotlib's tight_layout measures
    every tick label to place them and cost more than drawing (1.4 of 2.5 s of a
    comparison's plots): the plots here have known labels, so fixed room suffices."""
    w, h = fig.get_figwidth(), fig.get_figheight()
    axes = [a for a in fig.axes if a.get_subplotspec() is not None]
    rows = max((a.get_subplotspec().get_gridspec().nrows for a in axes), default=1)
    cols = max((a.get_subplotspec().get_gridspec().ncols for a in axes), default=1)
    ax_h = max((h - top - bottom - (rows - 1) * hspace) / rows, 0.1)
    ax_w = max((w - left - right - (cols - 1) * wspace) / cols, 0.1)
    fig.subplots_adjust(left=left / w, right=1 - right / w, top=1 - top / h, bottom=bottom / h, hspace=hspace / ax_h, wspace=wspace / ax_w)


#: Axis units for sizes (bytes), rates (bit/s) and durations (ps): see :func:`axis_unit`.
_AXIS_UNITS = {
    "B": [(1e9, "GB"), (1e6, "MB"), (1e3, "KB"), (1.0, "B")],
    "bps": [(1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "Kbit/s"), (1.0, "bit/s")],
    "ps": [(1e12, "s"), (1e9, "ms"), (1e6, "us"), (1e3, "ns"), (1.0, "ps")],
}


def axis_unit(top: float, kind: str) -> Tuple[str, float]:
    """The readable unit of ``kind`` ("B", "bps" or "ps") for an axis reaching ``top``:
    (name, base units per unit), the largest whose scale ``top`` reaches."""
    units = _AXIS_UNITS[kind]
    return next(((n, f) for f, n in units if top >= f), (units[-1][1], units[-1][0]))


def time_unit(end_ps: float) -> Tuple[str, float]:
    """A readable unit for a time axis ending at ``end_ps``: (name, picoseconds per unit),
    microseconds at the finest."""
    name, ps = axis_unit(end_ps, "ps")
    return (name, ps) if ps >= 1e6 else ("us", 1e6)
