"""Plots: the helpers shared by comparisons, sweeps and reports (a figure that needs no
display, fixed margins, readable axis units), and a comparison's plots (FCT by size bin,
slowdown CDF and by size, queue depth and its time series, goodput), each drawn from a
:class:`~dcnsim.comparison.Comparison`."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

import numpy as np
import pandas as pd

from .stats import ci95, format_change, number, relative_change
from .tables import fct_table, format_size

if TYPE_CHECKING:
    from .api import Result
    from .comparison import Comparison


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


# --------------------------------------------------------------------------- queue samples


def _has_samples(result: Result) -> bool:
    q = result.queues
    return bool(len(q.columns)) and len(q) > 0 and "samples" in q


def sampled_depth_histogram(queues: pd.DataFrame, queue: int) -> Tuple[np.ndarray, np.ndarray]:
    """``(depth_bytes, samples)`` of one queue class, summed over all sampled switch
    queues, sorted by depth (lower bin edges)."""
    if not len(queues.columns) or not len(queues):
        return np.zeros(0), np.zeros(0)
    sel = queues[queues["queue"] == queue]
    agg = sel.groupby("depth_bytes", sort=True)["samples"].sum()
    return agg.index.to_numpy(dtype=np.float64), agg.to_numpy(dtype=np.float64)


def _busiest_port_busy(queues: pd.DataFrame, queue: int) -> Optional[float]:
    """The largest share (%) of its samples in which one switch queue of this class held at
    least one histogram bin: the busiest port's (a bottleneck's), not an average that
    idle ports dilute."""
    if not len(queues.columns) or not len(queues):
        return None
    sel = queues[queues["queue"] == queue]
    if not len(sel):
        return None
    busy = sel["samples"].where(sel["depth_bytes"] > 0, 0)
    by_port = pd.DataFrame({"node": sel["node"], "port": sel["port"], "busy": busy, "all": sel["samples"]}).groupby(["node", "port"]).sum()
    return float((by_port["busy"] / by_port["all"]).max() * 100)


def _busy_depth(queues: pd.DataFrame, queue: int, q: float) -> Tuple[Optional[float], Optional[float]]:
    """Share of the samples (%) in which a queue of this class held at least one
    histogram bin, and the ``q`` quantile (KB, lower bin edge) of those busy samples."""
    depth, count = sampled_depth_histogram(queues, queue)
    total = count.sum()
    if total <= 0:
        return None, None
    busy = depth > 0
    if count[busy].sum() <= 0:
        return 0.0, None
    d, c = depth[busy], count[busy]
    cum = np.cumsum(c) / c.sum()
    k = int(np.searchsorted(cum, q, side="left"))
    return float(c.sum() / total * 100), float(d[min(k, len(d) - 1)]) / 1e3


# --------------------------------------------------------------------------- plots


def _plot_flows(r: Result, tag: Optional[str]) -> pd.DataFrame:
    """A variant's flows restricted to ``tag`` (all flows when None or when no flow has a
    tag column)."""
    fl = r.flows
    if tag is None or "tag" not in fl:
        return fl
    return fl[np.asarray(fl["tag"].astype(str) == tag)]


def _plot_tag(cmp: Comparison, tag: Optional[str]) -> Optional[str]:
    """``tag`` where every variant has flows of it, else None (all flows)."""
    have = tag is not None and all("tag" in r.flows and (r.flows["tag"].astype(str) == tag).any() for r in cmp.results.values())
    return tag if have else None


def fct_plot_flows(cmp: Comparison, tag: Optional[str] = "background") -> str:
    """The flow set fct_by_bin.png shows, in words (the table's rows of the same set)."""
    use = _plot_tag(cmp, tag)
    return f"flows tagged {use!r} (the table's `{use}:` rows)" if use else "every flow"


def plot_fct_by_bin(cmp: Comparison, tag: Optional[str] = "background") -> Any:
    """Mean FCT per flow-size bin, one panel per bin with its own linear axis (a log axis
    measures bars from an arbitrary floor and hides differences), one bar per variant,
    each annotated with its value, its change against the base and its flow count.

    ``tag``: only the flows of that workload tag (default ``"background"``, so that incast
    flows do not fill the background's size bins); ``None`` or a tag no flow has: all flows.
    """
    use = _plot_tag(cmp, tag)
    edges = cmp.fct_bins()
    tables = {n: fct_table(_plot_flows(r, use), edges or None) for n, r in cmp.results.items()}
    labels = list(next(iter(tables.values()))["bin"])
    errors: Dict[str, List[float]] = {}
    if cmp.n_seeds > 1:  # bars at the mean over seeds, error bars at its 95% CI, counts per seed

        for n in cmp.variants:
            per_seed = [fct_table(_plot_flows(r, use), edges or None) for r in cmp.replicas[n]]
            stats = [ci95([number(t.iloc[i]["mean_fct_us"]) for t in per_seed if number(t.iloc[i]["mean_fct_us"]) is not None]) for i in range(len(labels))]
            tables[n] = tables[n].copy()
            tables[n]["mean_fct_us"] = [m for m, _ in stats]
            for col in ("count", "unfinished"):
                tables[n][col] = [float(np.mean([int(t.iloc[i][col]) for t in per_seed])) for i in range(len(labels))]
            errors[n] = [h for _, h in stats]
    keep = [i for i, lab in enumerate(labels) if lab == "all" or any(float(t.iloc[i]["count"]) + float(t.iloc[i]["unfinished"]) for t in tables.values())]
    names = cmp.variants
    fig = figure(max(6.0, 2.4 * len(keep) + 0.6), 4.4)
    for k, i in enumerate(keep):
        ax = fig.add_subplot(1, len(keep), k + 1)
        values = [number(tables[n].iloc[i]["mean_fct_us"]) for n in names]
        errs = [errors[n][i] if errors and errors[n][i] == errors[n][i] else 0.0 for n in names]
        base = values[0]
        for j, (n, v, err) in enumerate(zip(names, values, errs)):
            ax.bar(j, np.nan if v is None else v, 0.8, color=f"C{j % 10}", label=n)
            if v is None or v != v:
                # an empty slot says why, so that it is not read as a missing bar
                why = "none\nfinished" if float(tables[n].iloc[i]["unfinished"]) > 0 else "no\nflows"
                ax.annotate(why, (j, 0), ha="center", va="bottom", fontsize="x-small", color="0.3", xytext=(0, 2), textcoords="offset points")
                continue
            if err:
                ax.errorbar(j, v, yerr=err, color="k", capsize=3)
            change = "" if j == 0 else "\n" + format_change(relative_change(base, v), base, v)
            count = float(tables[n].iloc[i]["count"])
            # with seeds: the mean count per seed, as the table's "flows" row has it
            n_text = f"n={count:,.0f}" if not errors else f"n={count:,.1f}/seed"
            # above the error bar's cap, not through it
            ax.annotate(f"{v:,.1f}{change}\n{n_text}", (j, v + err), ha="center", va="bottom", fontsize="x-small", xytext=(0, 2), textcoords="offset points")
        top = max([v + e for v, e in zip(values, errs) if v is not None] or [1.0])
        ax.set_ylim(0, top * 1.35)
        ax.set_xticks([])
        ax.set_title(labels[i], fontsize="medium")
        # every panel labelled: a panel cut out for a paper keeps its unit
        ax.set_ylabel("mean FCT (us)", fontsize="small")
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
    fig.legend(*fig.axes[0].get_legend_handles_labels(), loc="lower center", ncol=min(len(names), 4), fontsize="small")
    which = f"flows tagged {use!r}" if use else "all flows"
    fig.suptitle(f"{cmp.scenario}: mean flow completion time by flow size ({which}); changes vs {cmp.base}", fontsize="medium")
    margins(fig, top=0.65, bottom=0.75, left=0.75, wspace=0.75, right=0.1)
    return fig


def plot_slowdown_cdf(cmp: Comparison) -> Any:
    """Per-flow slowdown (finished flows), one line per variant, log x axis: its CDF, and
    beside it the CCDF on a log axis, where the tail (the p99 and beyond that a CDF
    squeezes against 1) can be read."""
    fig = figure(10.0, 4.2)
    cdf_ax = fig.add_subplot(1, 2, 1)
    tail_ax = fig.add_subplot(1, 2, 2)
    any_data = False
    for i, (n, r) in enumerate(cmp.results.items()):
        fl = r.flows
        sd = np.asarray(fl["slowdown"], dtype=np.float64) if "slowdown" in fl else np.zeros(0)
        sd = np.sort(sd[np.isfinite(sd) & (sd > 0)])
        unfinished = r.unfinished
        label = f"{n} ({len(sd)} flows" + (f", {unfinished} unfinished)" if unfinished else ")")
        if len(sd) == 0:
            cdf_ax.plot([], [], color=f"C{i % 10}", label=label)
            continue
        any_data = True
        y = np.arange(1, len(sd) + 1) / len(sd)
        cdf_ax.step(np.concatenate([[sd[0]], sd]), np.concatenate([[0.0], y]), where="post", color=f"C{i % 10}", label=label)
        # P(slowdown >= x) at each flow's value: 1 at the smallest, 1/n at the largest
        tail_ax.step(sd, 1.0 - np.arange(len(sd)) / len(sd), where="post", color=f"C{i % 10}", label=n)
    for ax in (cdf_ax, tail_ax):
        if any_data:
            ax.set_xscale("log")
        ax.set_xlabel("slowdown (FCT / ideal FCT), log scale")
        ax.grid(alpha=0.3)
    cdf_ax.set_ylim(0, 1.02)
    cdf_ax.set_ylabel("fraction of flows")
    cdf_ax.set_title("CDF", fontsize="medium")
    cdf_ax.legend(fontsize="small", loc="lower right")
    if any_data:
        tail_ax.set_yscale("log")
    tail_ax.set_ylabel("P(slowdown >= x), log scale")
    tail_ax.set_title("tail (CCDF)", fontsize="medium")
    fig.suptitle(f"{cmp.scenario}: slowdown of the finished flows", fontsize="medium")
    margins(fig, top=0.6, wspace=0.9)
    return fig


#: Flow-size groups of slowdown_by_size.png: equal shares of the base variant's flows.
SIZE_GROUPS = 10


def _size_edges(cmp: Comparison) -> np.ndarray:
    """Edges (bytes) of :data:`SIZE_GROUPS` flow-size groups holding equal shares of the base
    variant's flows over its seeds (fewer where sizes repeat), as the HPCC and Swift papers
    group flows along the x axis of their slowdown figures."""
    sizes = np.concatenate([np.asarray(r.flows["size_bytes"], dtype=np.float64) for r in cmp.runs(cmp.base)])
    if not len(sizes):
        return np.zeros(0)
    edges = np.unique(np.quantile(sizes, np.linspace(0, 1, SIZE_GROUPS + 1), method="lower"))
    edges[-1] = sizes.max() + 1  # the largest flow in the last group
    return edges


def _slowdown_quantiles(r: Result, edges: np.ndarray, q: float) -> List[float]:
    """The ``q`` quantile of the finished flows' slowdown per size group (NaN where none)."""
    fl = r.flows
    size = np.asarray(fl["size_bytes"], dtype=np.float64)
    sd = np.asarray(fl["slowdown"], dtype=np.float64) if "slowdown" in fl else np.full(len(fl), np.nan)
    out = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        s = sd[(size >= lo) & (size < hi) & np.isfinite(sd)]
        out.append(float(np.quantile(s, q)) if len(s) else math.nan)
    return out


def plot_slowdown_by_size(cmp: Comparison) -> Any:
    """Median and 99th-percentile slowdown (FCT / ideal FCT, finished flows) against flow
    size, in groups of equal shares of the flows (the figure of the HPCC, Swift and Homa
    papers), one line per variant; with seeds, the mean over seeds and its 95% CI."""
    edges = _size_edges(cmp)
    fig = figure(9.0, 4.2)
    if len(edges) < 2:
        return fig
    x = np.arange(len(edges) - 1)
    for k, (q, name) in enumerate(((0.5, "median"), (0.99, "99th percentile"))):
        ax = fig.add_subplot(1, 2, k + 1)
        for i, n in enumerate(cmp.variants):
            runs = cmp.runs(n)
            per_run = [_slowdown_quantiles(r, edges, q) for r in runs]
            stats = [ci95([v[j] for v in per_run]) for j in range(len(x))]
            y = np.array([m for m, _ in stats])
            err = np.array([h if h == h else 0.0 for _, h in stats])
            ax.errorbar(x, y, yerr=err if len(runs) > 1 else None, marker="o", markersize=3, capsize=2, color=f"C{i % 10}", label=n)
        ax.set_yscale("log")
        ax.set_xticks(x)
        ax.set_xticklabels([format_size(float(f"{e:.3g}")) for e in edges[1:]], rotation=60, fontsize="x-small")
        ax.set_xlabel("flow size, up to (groups of equal flow counts)")
        ax.set_ylabel(f"{name} slowdown, log scale")
        ax.set_title(name, fontsize="medium")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="x-small")
    seeds = f"mean over {cmp.n_seeds} seeds, 95% CI" if cmp.n_seeds > 1 else "one seed"
    fig.suptitle(f"{cmp.scenario}: slowdown against flow size, finished flows ({seeds})", fontsize="medium")
    margins(fig, top=0.45, bottom=1.2, wspace=0.9)
    return fig


def plot_queue_depth(cmp: Comparison) -> Any:
    """Queue-depth distribution per queue class, one line per variant.

    With queue sampling in every variant: the CCDF of the sampled depth over all switch
    egress queues of the class. Without: the CCDF over switch egress ports of each
    port's time-averaged depth (said in the title). Panels are named by the queue's role
    where a mechanism gives one (CI: "congested", "non-congested"), and the depth
    thresholds the mechanisms declare (CI High, a static PFC XOFF) are drawn as vertical
    lines, per variant when they differ.
    """
    roles: Dict[int, str] = {}
    lines: Dict[int, Dict[Tuple[str, float], List[str]]] = {}
    for n, r in cmp.results.items():
        for note in r.summary.get("queue_notes") or []:
            if "role" in note:
                roles.setdefault(int(note["queue"]), str(note["role"]))
            elif "threshold" in note:
                for q in [int(note["queue"])] if note.get("queue") is not None else cmp.queue_classes():
                    lines.setdefault(q, {}).setdefault((str(note["threshold"]), float(note["bytes"]) / 1e3), []).append(n)
    classes = cmp.queue_classes()
    sampled = all(_has_samples(r) for r in cmp.results.values())
    sw = cmp._switch_ports()
    ncols = min(len(classes), 3)
    nrows = int(math.ceil(len(classes) / ncols))
    fig = figure(max(7.2, 4.6 * ncols + 0.6), 3.6 * nrows + 1.0)
    for k, q in enumerate(classes):
        ax = fig.add_subplot(nrows, ncols, k + 1)
        drawn = False
        for i, n in enumerate(cmp.variants):
            if sampled:
                depth, count = sampled_depth_histogram(cmp.results[n].queues, q)
                if count.sum() <= 0:
                    continue
                ccdf = count[::-1].cumsum()[::-1] / count.sum()
                x, y = depth / 1e3, ccdf
            else:
                sel = sw[n][sw[n]["queue"] == q] if "queue" in sw[n] else sw[n].iloc[0:0]
                means = np.sort(np.asarray(sel["mean_depth_bytes"], dtype=np.float64)) / 1e3
                if not len(means):
                    continue
                x = means
                y = 1.0 - np.arange(len(means)) / len(means)  # fraction of ports with depth >= x
            ax.step(x, y, where="post", color=f"C{i % 10}", label=n, marker="." if len(x) < 30 else None)
            drawn = True
        for (label, kb), who in sorted(lines.get(q, {}).items(), key=lambda kv: kv[0][1]):
            suffix = "" if len(who) == len(cmp.variants) else f" ({', '.join(who)})"
            ax.axvline(kb, color="0.35", linestyle="--", linewidth=1.0)
            ax.annotate(f"{label} {kb:,.0f} KB{suffix}", (kb, 1.0), xycoords=("data", "axes fraction"), rotation=90, va="top", ha="right", fontsize="x-small", color="0.25")
        if drawn:
            ax.set_yscale("log")
            ax.legend(fontsize="small")
        ax.set_xlabel("queue depth (KB)" if sampled else "time-averaged queue depth (KB)")
        ax.set_ylabel("P(depth >= x), samples" if sampled else "fraction of switch ports >= x")
        ax.set_title(f"queue {q} ({roles[q]})" if q in roles else f"queue {q}", fontsize="medium")
        ax.grid(alpha=0.3)
    if sampled:
        title = f"{cmp.scenario}: sampled queue depth, switch egress queues (CCDF)"
    else:
        title = (
            f"{cmp.scenario}: time-averaged depth per switch egress port (CCDF)\n"
            "(no queue sampling: set [metrics] queue_sample for the sampled distribution)"
        )
    fig.suptitle(title, fontsize="medium")
    margins(fig, top=0.7 if "\n" in title else 0.55, hspace=0.7, wspace=0.75)
    return fig


#: Most flows drawn per panel of the throughput plot (the ones that delivered most).
THROUGHPUT_FLOWS = 16


def goodput_series(ts: pd.DataFrame, bin_ps: int, by: str) -> Dict[Any, Tuple[np.ndarray, np.ndarray]]:
    """Goodput series from a timeseries table, one per value of column ``by`` ("flow" or
    "tag"): ``{key: (bin start in ps, Gbit/s)}``, the bins between its first and last
    delivery that delivered nothing set to 0."""
    out: Dict[Any, Tuple[np.ndarray, np.ndarray]] = {}
    if not len(ts.columns) or not len(ts):
        return out
    keys = ts[by].astype(str) if by == "tag" else ts[by]
    for k, g in ts.groupby(keys, sort=True):
        sums = g.groupby("bin_start_ps", sort=True)["bytes"].sum()
        bins = (np.asarray(sums.index, dtype=np.int64) // bin_ps).astype(np.int64)
        full = np.arange(bins.min(), bins.max() + 1)
        gbps = np.zeros(len(full))
        gbps[bins - bins.min()] = np.asarray(sums.values, dtype=np.float64) * 8 / (bin_ps * 1e-12) / 1e9
        out[k] = (full * bin_ps, gbps)
    return out


def plot_queue_depth_time(cmp: Comparison) -> Any:
    """The deepest switch egress queue at each sample, against time: one panel per queue
    class that held anything, one line per variant (queue_series.parquet)."""
    names = cmp.variants
    series = {n: cmp.results[n].queue_series for n in names}
    classes = sorted({int(q) for s in series.values() for q in s.loc[s["max_depth_bytes"] > 0, "queue"]}) or [0]
    end = max(float(s["time_ps"].max()) for s in series.values())
    # the span where some queue held bytes (a run that idles after its flows, or before
    # them, would leave the action a sliver of the axis), with a margin either side
    busy = [s.loc[s["max_depth_bytes"] > 0, "time_ps"] for s in series.values()]
    busy = [b for b in busy if len(b)]
    lo, hi = (min(float(b.min()) for b in busy), max(float(b.max()) for b in busy)) if busy else (0.0, end)
    pad = 0.05 * (hi - lo) if hi > lo else 0.05 * end
    lo, hi = max(0.0, lo - pad), min(end, hi + pad)
    unit, per = time_unit(hi)
    fig = figure(7.2, 2.4 * len(classes) + 0.9)
    for k, q in enumerate(classes):
        ax = fig.add_subplot(len(classes), 1, k + 1)
        for i, n in enumerate(names):
            s = series[n][series[n]["queue"] == q]
            ax.plot(np.asarray(s["time_ps"], dtype=np.float64) / per, np.asarray(s["max_depth_bytes"], dtype=np.float64) / 1e3, color=f"C{i % 10}", linewidth=0.7, label=n)
        ax.set_title(f"queue {q}: deepest switch egress queue", fontsize="medium")
        ax.set_ylabel("depth (KB)")
        if hi > lo:
            ax.set_xlim(lo / per, hi / per)
        ax.ticklabel_format(axis="x", useOffset=False, style="plain")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="x-small", loc="upper right")
    fig.axes[-1].set_xlabel(f"time ({unit})")
    shown = f"; shown while a queue held bytes, of 0-{end / per:g} {unit}" if busy and (lo > 0.0 or hi < end) else ""
    fig.suptitle(f"{cmp.scenario}: queue depth over time (every {_sample_text(cmp)}{shown})", fontsize="medium")
    margins(fig)
    return fig


def _sample_text(cmp: Comparison) -> str:
    t = cmp.results[cmp.base].queue_series["time_ps"].drop_duplicates()
    step = float(t.iloc[1] - t.iloc[0]) if len(t) > 1 else 0.0
    unit, per = time_unit(step)
    return f"{step / per:g} {unit}"


def plot_throughput(cmp: Comparison) -> Any:
    """Goodput against time, one panel per variant: one line per flow, labelled by its tag,
    where a run has at most ``THROUGHPUT_FLOWS`` flows (as seed 004's fairness figure draws
    the shares of a congested link), else one line per tag, its flows together."""
    from . import goodput as gp

    names = cmp.variants
    fig = figure(7.2, 2.6 * len(names) + 0.8)
    end = max(float(r.summary.get("sim_time_ps") or 0) for r in cmp.results.values())
    unit, per = time_unit(end)
    series_of = {}
    for n in names:
        r = cmp.results[n]
        bin_ps = int(r.summary.get("throughput_bin_ps") or 0)
        per_flow = r.timeseries["flow"].nunique() <= THROUGHPUT_FLOWS if len(r.timeseries) else True
        series_of[n] = (per_flow, goodput_series(r.timeseries, bin_ps, "flow" if per_flow else "tag") if bin_ps else {})
    top = max((float(y.max()) for _, ser in series_of.values() for _, y in ser.values() if len(y)), default=0.0)
    # a host's link rate bounds what one receiver can take in a bin; in-order delivery can
    # exceed it for one bin when a retransmission fills a hole and releases the bytes held
    # behind it: the axis stops above the link rate and says where a bin went beyond
    hosts = pd.concat([r.ports[r.ports["is_host"].astype(bool)] for r in cmp.results.values() if "is_host" in r.ports and "rate_bps" in r.ports])
    link = float(hosts["rate_bps"].max()) / 1e9 if len(hosts) else 0.0
    ceiling = 1.25 * link if link and top > 1.25 * link else 0.0
    top = min(top, ceiling) if ceiling else top
    rate_unit, rate_scale = ("Gbit/s", 1.0) if top >= 1.0 else ("Mbit/s", 1e3)
    for k, n in enumerate(names):
        r = cmp.results[n]
        ax = fig.add_subplot(len(names), 1, k + 1)
        ts = r.timeseries
        per_flow, series = series_of[n]
        tag_of = dict(zip(ts["flow"], ts["tag"].astype(str))) if per_flow and len(ts) else {}
        counts = {} if per_flow else gp.flows_per_tag(r)
        for i, key in enumerate(series):
            x, y = series[key]
            label = f"{tag_of.get(key) or 'flow'} (flow {key})" if per_flow else f"{key or 'untagged'} ({counts.get(key, 0):,} flows)"
            ax.step(x / per, y * rate_scale, where="post", color=f"C{i % 10}", linewidth=1.0, label=label)
            if ceiling:
                over = y > ceiling
                if over.any():
                    ax.plot(x[over] / per, np.full(int(over.sum()), ceiling * rate_scale * 0.97), linestyle="none", marker="^", markersize=4, color=f"C{i % 10}")
        if link:
            ax.axhline(link * rate_scale, color="0.4", linestyle="--", linewidth=0.8)
        if ceiling:
            ax.set_ylim(0, ceiling * rate_scale)
        ax.set_title(n if per_flow else f"{n}: goodput per tag", fontsize="medium")
        ax.set_ylabel(f"goodput ({rate_unit})")
        ax.ticklabel_format(axis="x", useOffset=False, style="plain")
        ax.grid(alpha=0.3)
        if 0 < len(series) <= 8:
            ax.legend(fontsize="x-small", loc="upper right")
    fig.axes[-1].set_xlabel(f"time ({unit})")
    bin_text = ""
    bins = {int(r.summary.get("throughput_bin_ps") or 0) for r in cmp.results.values()} - {0}
    if len(bins) == 1:
        b_unit, b_per = time_unit(float(next(iter(bins))))
        bin_text = f" per {next(iter(bins)) / b_per:g} {b_unit}"
    note = f"\nbytes delivered in order{bin_text}; dashed: the host link rate ({link:g} Gbit/s)" if link else f"\nbytes delivered in order{bin_text}"
    if ceiling:
        note += "\n^: a bin beyond the axis (a filled hole releases the bytes held behind it at once)"
    fig.suptitle(f"{cmp.scenario}: goodput per {'flow' if all(pf for pf, _ in series_of.values()) else 'tag'}{note}", fontsize="small")
    margins(fig, top=0.45 + 0.17 * (note.count("\n") + 1))
    return fig
