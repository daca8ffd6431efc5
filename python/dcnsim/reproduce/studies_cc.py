"""FCT slowdown of five congestion controls on a k = 8 fat-tree (issue 37's study, our own):
the per-size slowdown plots of the HPCC (Li et al., SIGCOMM 2019, Fig. 11) and Swift (Kumar
et al., SIGCOMM 2020) papers, for DCTCP, DCQCN, HPCC, Swift and TIMELY on the web-search
and Google RPC workloads (`cc_k8_websearch`, `cc_k8_rpc`)."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np

from .core import Study, scenario_dict
from .metrics import quantity
from .render import Context, md_table
from .studies import register, scaled

QUANTILES = (("p50", 50), ("p95", 95), ("p99", 99))


def bins_of(sc: Dict[str, Any]) -> List[Tuple[str, float, float]]:
    """The scenario's `metrics.fct_bins` as (label, lo, hi) in bytes, the last open."""
    edges = [quantity(b, "B") for b in sc["metrics"]["fct_bins"]]
    out = []
    lo = 0.0
    for hi in edges + [math.inf]:
        out.append((bin_label(lo, hi), lo, hi))
        lo = hi
    return out


def bin_label(lo: float, hi: float) -> str:
    def f(x: float) -> str:
        for unit, m in (("MB", 1e6), ("KB", 1e3)):
            if x >= m:
                return f"{x / m:g}{unit}"
        return f"{x:g}B"

    return f"<{f(hi)}" if lo == 0 else (f">{f(lo)}" if math.isinf(hi) else f"{f(lo)}-{f(hi)}")


def slowdown_metrics(r: Any, sc: Dict[str, Any]) -> Dict[str, Any]:
    """Per size bin: flows, unfinished, median / p95 / p99 slowdown of the finished flows;
    PAUSE frames; the switch egress queues' time-averaged depth, averaged over every switch
    egress queue and the largest of them (KB); drops."""
    f = r.flows
    size = f["size_bytes"].to_numpy(dtype=float)
    done = f["finished"].to_numpy(dtype=bool)
    slow = f["slowdown"].to_numpy(dtype=float, na_value=np.nan)
    out: Dict[str, Any] = {}
    for label, lo, hi in bins_of(sc):
        sel = (size >= lo) & (size < hi)
        s = slow[sel & done]
        out[f"{label}.flows"] = int(sel.sum())
        out[f"{label}.unfinished"] = int((sel & ~done).sum())
        for name, q in QUANTILES:
            out[f"{label}.{name}"] = float(np.percentile(s, q)) if len(s) else math.nan
    p = r.ports
    sw = p[~p["is_host"].astype(bool)]
    depth = sw["mean_depth_bytes"].to_numpy(dtype=float)
    out["queue_mean_kb"] = float(depth.mean() / 1e3) if len(depth) else 0.0
    out["queue_busiest_kb"] = float(depth.max() / 1e3) if len(depth) else 0.0
    out["pfc_frames"] = int(p["pfc_tx_frames"].sum()) if "pfc_tx_frames" in p else 0
    out["drops"] = int(r.summary.get("packets_dropped", 0))
    out["flows"] = len(f)
    out["unfinished"] = int((~done).sum())
    return out


for _name in ("cc_k8_websearch", "cc_k8_rpc"):
    register(Study(
        name=_name,
        title=f"FCT slowdown per flow size of DCTCP, DCQCN, HPCC, Swift and TIMELY on a k = 8 fat-tree ({_name[6:]} workload)",
        scenario=_name,
        metrics=slowdown_metrics,
        cost_s={"small": 60, "full": 1500},
    ))

CCS = ("DCTCP", "DCQCN", "HPCC", "Swift", "TIMELY")


def _range(xs: Sequence[float]) -> str:
    xs = [x for x in xs if not math.isnan(x)]
    if not xs:
        return "-"
    m = sum(xs) / len(xs)
    return f"{m:.2f}" if len(xs) == 1 else f"{m:.2f} [{min(xs):.2f}-{max(xs):.2f}]"


def _bins(res: Any) -> List[str]:
    """The bins in the scenario's order (the results file keeps its keys sorted)."""
    return [label for label, _, _ in bins_of(scenario_dict(res.data["scenario"]))]


def _mean(xs: Sequence[float]) -> float:
    xs = [x for x in xs if not math.isnan(x)]
    return sum(xs) / len(xs) if xs else math.nan


def _slowdown(ctx: Context, name: str, scale: str) -> str:
    res = ctx.results(name, scale)
    rows = []
    for b in _bins(res):
        n = _mean(res.values("shipped", CCS[0], f"{b}.flows"))
        cells = [b, f"{n:,.0f}"]
        for cc in CCS:
            parts = [_range(res.values("shipped", cc, f"{b}.{q}")) for q, _ in QUANTILES]
            unf = _mean(res.values("shipped", cc, f"{b}.unfinished"))
            cells.append(" / ".join(parts) + (f", {unf:g} unfinished" if unf else ""))
        rows.append(cells)
    table = md_table(["bin", "flows/run", *CCS], rows)
    extra = md_table(["per run (mean over seeds)", *CCS], [
        ["time-averaged depth of a switch egress queue, mean over all switch egress queues (KB)",
         *[f"{_mean(res.values('shipped', cc, 'queue_mean_kb')):.2f}" for cc in CCS]],
        ["the same, the busiest switch egress queue (KB)", *[f"{_mean(res.values('shipped', cc, 'queue_busiest_kb')):.1f}" for cc in CCS]],
        ["PAUSE frames", *[f"{_mean(res.values('shipped', cc, 'pfc_frames')):,.0f}" for cc in CCS]],
        ["packets dropped", *[f"{_mean(res.values('shipped', cc, 'drops')):,.0f}" for cc in CCS]],
        ["flows unfinished", *[f"{_mean(res.values('shipped', cc, 'unfinished')):,.1f}" for cc in CCS]],
    ])
    bins = _bins(res)
    small, large = bins[0], bins[-1]

    def best(b: str, q: str, low: bool = True) -> str:
        vals = {cc: _mean(res.values("shipped", cc, f"{b}.{q}")) for cc in CCS}
        return (min if low else max)(vals, key=vals.get)

    order = (f"- Lowest p99 slowdown of the smallest flows ({small}): **{best(small, 'p99')}**; highest: "
             f"{best(small, 'p99', False)}. Lowest median slowdown of the largest flows ({large}): "
             f"**{best(large, 'p50')}**; highest: {best(large, 'p50', False)}.")
    return f"Median / p95 / p99 slowdown of the finished flows, mean over seeds [range over seeds]:\n\n{table}\n\n{extra}\n\n{order}"


@scaled("cc_k8_websearch:slowdown")
def _websearch(ctx: Context, scale: str) -> str:
    return _slowdown(ctx, "cc_k8_websearch", scale)


@scaled("cc_k8_rpc:slowdown")
def _rpc(ctx: Context, scale: str) -> str:
    return _slowdown(ctx, "cc_k8_rpc", scale)


def _draw_slowdown(data: Dict[str, Any]) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 4))
    FigureCanvasAgg(fig)
    axes = [fig.add_subplot(1, 2, i + 1) for i in range(2)]
    x = np.arange(len(data["bins"]))
    for cc in CCS:
        for ax, q in zip(axes, ("p50", "p99")):
            ax.plot(x, data[cc][q], marker="o", label=cc)
    for ax, q in zip(axes, ("median", "99th percentile")):
        ax.set_xticks(x, data["bins"])
        ax.set_yscale("log")
        ax.set_xlabel("flow size")
        ax.set_ylabel(f"{q} FCT slowdown (mean over seeds)")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"{data['name']}: FCT slowdown by flow size, seeds {data['seeds']}", fontsize=10)
    fig.tight_layout()
    return fig


def _slowdown_figure(ctx: Context, name: str, scale: str) -> str:
    res = ctx.results(name, scale)
    bins = _bins(res)
    data: Dict[str, Any] = {"name": name, "bins": bins, "seeds": f"{res.seeds[0]}-{res.seeds[-1]}"}
    for cc in CCS:
        data[cc] = {q: [round(_mean(res.values("shipped", cc, f"{b}.{q}")), 4) for b in bins] for q in ("p50", "p99")}
    return ctx.figure(f"{name}_slowdown", data, _draw_slowdown, f"{name}: median and p99 FCT slowdown per flow size")


@scaled("cc_k8_websearch:figure", ("full",))
def _websearch_figure(ctx: Context, scale: str) -> str:
    return _slowdown_figure(ctx, "cc_k8_websearch", scale)


@scaled("cc_k8_rpc:figure", ("full",))
def _rpc_figure(ctx: Context, scale: str) -> str:
    return _slowdown_figure(ctx, "cc_k8_rpc", scale)
