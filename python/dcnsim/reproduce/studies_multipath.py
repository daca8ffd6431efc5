"""Issue 59's first study, our own: web search at 60% on the k = 8 fat tree
(`multipath_websearch`, `_small` on k = 4; doubled to k = 16 and 8 in a second case) under per-flow ECMP, flowlet switching, adaptive
routing and packet spraying with DCTCP, and over Ultra Ethernet's transport (NSCC,
trimming) sprayed obliviously or with REPS; each healthy and with an aggregation-to-core
link down from the start: FCT slowdown per flow size, drops and trims. And the same schemes on
a permutation of 4 MB flows (`multipath_permutation_cc`, k = 8; doubled to k = 16 in a second
case; `_small` on k = 4 and 8), healthy, with a core link failing mid-run and with one at a
quarter of its rate: the permutation's completion against the ideal."""

from __future__ import annotations

import math
from typing import Any, Dict, List

import numpy as np

from .core import Case, Study, scenario_dict
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


def doubled_k(sc: Dict[str, Any]) -> Dict[str, Any]:
    """The same scenario on a fat tree of twice the radix (8 times the hosts)."""
    return {**sc, "topology": {**sc["topology"], "k": 2 * sc["topology"]["k"]}}


#: each study of this module runs its scenario's fat tree and the one of twice its radix
CASES = (Case("shipped"), Case("k doubled", doubled_k))


def _cases_of(res: Any, sc: Dict[str, Any]) -> List[Any]:
    """(case, k, variants in the scenario's order) for each case the results hold (the
    results file keeps its keys sorted)."""
    out = []
    for case in CASES:
        ran = set(res.variants(case.label))
        if ran:
            k = (case.edit(sc) if case.edit else sc)["topology"]["k"]
            out.append((case.label, k, [v["name"] for v in sc.get("variant", []) if v["name"] in ran]))
    return out


register(Study(
    name="multipath_websearch",
    title="Web search at 60% on k = 8 and k = 16 fat trees: ECMP, flowlets, adaptive routing and spraying with DCTCP; UET sprayed and with REPS; healthy and with a core link down",
    scenario="multipath_websearch",
    metrics=multipath_metrics,
    cases=CASES,
    cost_s={"small": 60, "full": 1200},
))


@scaled("multipath_websearch:slowdown")
def _table(ctx: Context, scale: str) -> str:
    res = ctx.results("multipath_websearch", scale)
    sc = scenario_dict(res.data["scenario"])
    bins = [label for label, _, _ in bins_of(_with_bins(sc))]
    out = []
    for case, k, variants in _cases_of(res, sc):
        rows: List[List[str]] = []
        for v in variants:
            val = lambda key: res.values(case, v, key)
            cells = [v] + [f"{_range(val(f'{b}.p50'))} / {_range(val(f'{b}.p99'))}" for b in bins]
            cells += [f"{_mean(val('drops')):,.0f}", f"{_mean(val('trims')):,.0f}", f"{_mean(val('unfinished')):g}"]
            rows.append(cells)
        table = md_table(["variant", *[f"{b}: p50 / p99" for b in bins], "drops", "trims", "unfinished"], rows)
        out.append(f"k = {k} ({k**3 // 4:,} hosts), FCT slowdown of the finished flows, median / p99 per size bin, mean over seeds [range over seeds]; drops, trims and unfinished flows per run:\n\n{table}")
    return "\n\n".join(out)


# --------------------------------------------------------------------------- permutation


def permutation_metrics(r: Any, sc: Dict[str, Any]) -> Dict[str, Any]:
    """The permutation's last flow against the ideal (a flow alone at line rate), the median
    and mean slowdown of its flows, the last FCT (us), packets dropped (and of them at a
    dead link), trimmed and resent, unfinished flows."""
    f = r.flows
    done = f["finished"].to_numpy(dtype=bool)
    slow = f["slowdown"].to_numpy(dtype=float, na_value=np.nan)[done]
    p = r.ports
    return {
        "flows": int(len(f)),
        "unfinished": int((~done).sum()),
        "last_slowdown": float(slow.max()) if len(slow) else math.nan,
        "median_slowdown": float(np.median(slow)) if len(slow) else math.nan,
        "mean_slowdown": float(slow.mean()) if len(slow) else math.nan,
        "last_fct_us": float(f["fct_ps"].max() / 1e6) if done.all() else math.nan,
        "drops": int(r.summary.get("packets_dropped", 0)),
        "drops_link_down": int(p["drops_link_down"].sum()) if "drops_link_down" in p else 0,
        "trims": int(r.summary.get("trims", 0)),
        "retx": int(f["retx"].sum()),
    }


register(Study(
    name="multipath_permutation_cc",
    title="A 4 MB permutation on k = 8 and k = 16 fat trees: DCTCP under ECMP, flowlets, adaptive routing and spraying; UET sprayed and with REPS; healthy, a core link failing, a core link at 25G",
    scenario="multipath_permutation_cc",
    metrics=permutation_metrics,
    cases=CASES,
    cost_s={"small": 30, "full": 600},
))


def _us_range(xs: List[float]) -> str:
    """Mean [range] in whole microseconds over the runs whose every flow finished, and how
    many did not (their completion is unknown, not max_time)."""
    done = [x for x in xs if not math.isnan(x)]
    text = "-" if not done else f"{_mean(done):,.0f}" if len(done) == 1 else f"{_mean(done):,.0f} [{min(done):,.0f}-{max(done):,.0f}]"
    return text if len(done) == len(xs) else f"{text} ({len(xs) - len(done)} of {len(xs)} runs unfinished)"


@scaled("multipath_permutation_cc:completion")
def _permutation_table(ctx: Context, scale: str) -> str:
    res = ctx.results("multipath_permutation_cc", scale)
    sc = scenario_dict(res.data["scenario"])
    out = []
    for case, k, variants in _cases_of(res, sc):
        hosts = k**3 // 4
        flows = {int(x) for v in variants for x in res.values(case, v, "flows")}
        rows: List[List[str]] = []
        for v in variants:
            val = lambda key: res.values(case, v, key)
            rows.append([
                v,
                _range(val("last_slowdown")),
                _us_range(val("last_fct_us")),
                _range(val("median_slowdown")),
                _range(val("mean_slowdown")),
                f"{_mean(val('drops')):,.0f} ({_mean(val('drops_link_down')):,.0f})",
                f"{_mean(val('trims')):,.0f}",
                f"{_mean(val('retx')):,.0f}",
                f"{_mean(val('unfinished')):g}",
            ])
        table = md_table(["variant", "last flow", "all done (us)", "median flow", "mean", "drops (at the dead link)", "trims", "resent", "unfinished"], rows)
        note = ""
        if any(_mean(res.values(case, v, "unfinished")) > 0 for v in variants):
            note = (f"\n\nWhere \"unfinished\" is above 0, some runs ended at max_time ({sc['scenario']['max_time']}) with flows still"
                    " running: the FCT columns are over the finished flows and understate those runs.")
        n = "/".join(f"{x:,}" for x in sorted(flows))
        out.append(f"k = {k} ({hosts:,} hosts, {n} flows), FCT of the finished flows over the ideal (4 MB alone at line rate) and when the last"
                   f" flow finished, mean over seeds [range over seeds]; packets per run:\n\n{table}{note}")
    return "\n\n".join(out)
