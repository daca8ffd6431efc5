"""Issue 59's first study, our own: web search at 60% on the k = 8 fat tree
(`multipath_websearch`, `_small` on k = 4) under per-flow ECMP, flowlet switching, adaptive
routing and packet spraying with DCTCP, and over Ultra Ethernet's transport (NSCC,
trimming) sprayed obliviously or with REPS; each healthy and with an aggregation-to-core
link down from the start: FCT slowdown per flow size, drops and trims."""

from __future__ import annotations

from typing import Any, Dict, List

from .core import Study, scenario_dict
from .render import Context, md_table
from .studies import register, scaled
from .studies_cc import _mean, _range, bins_of, slowdown_metrics

#: the engine's FCT bins where the scenario sets none (`metrics.fct_bins`' default)
DEFAULT_BINS = ["100KB", "1MB", "10MB"]


def _with_bins(sc: Dict[str, Any]) -> Dict[str, Any]:
    metrics = dict(sc.get("metrics", {}))
    metrics.setdefault("fct_bins", DEFAULT_BINS)
    return {**sc, "metrics": metrics}


def multipath_metrics(r: Any, sc: Dict[str, Any]) -> Dict[str, Any]:
    """The slowdown metrics of the congestion-control study, and the packets trimmed."""
    out = slowdown_metrics(r, _with_bins(sc))
    out["trims"] = int(r.summary.get("trims", 0))
    return out


register(Study(
    name="multipath_websearch",
    title="Web search at 60% on a fat tree: ECMP, flowlets, adaptive routing and spraying with DCTCP; UET sprayed and with REPS; healthy and with a core link down",
    scenario="multipath_websearch",
    metrics=multipath_metrics,
    cost_s={"small": 20, "full": 600},
))


@scaled("multipath_websearch:slowdown")
def _table(ctx: Context, scale: str) -> str:
    res = ctx.results("multipath_websearch", scale)
    sc = scenario_dict(res.data["scenario"])
    bins = [label for label, _, _ in bins_of(_with_bins(sc))]
    # in the scenario's order (the results file keeps its keys sorted)
    ran = set(res.variants("shipped"))
    variants = [v["name"] for v in sc.get("variant", []) if v["name"] in ran]
    rows: List[List[str]] = []
    for v in variants:
        val = lambda k: res.values("shipped", v, k)
        cells = [v] + [f"{_range(val(f'{b}.p50'))} / {_range(val(f'{b}.p99'))}" for b in bins]
        cells += [f"{_mean(val('drops')):,.0f}", f"{_mean(val('trims')):,.0f}", f"{_mean(val('unfinished')):g}"]
        rows.append(cells)
    table = md_table(["variant", *[f"{b}: p50 / p99" for b in bins], "drops", "trims", "unfinished"], rows)
    return f"FCT slowdown of the finished flows, median / p99 per size bin, mean over seeds [range over seeds]; drops, trims and unfinished flows per run:\n\n{table}"
