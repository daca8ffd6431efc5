"""The registry: every study ``dcnsim reproduce`` runs and every block of the docs rendered
from their results.

A study is registered once, here, with its cases and its per-run metrics; a block is a
function of a :class:`~dcnsim.reproduce.render.Context` returning Markdown. The seeds'
numbers that the claims are judged against are written here, each with where the seed
states it.
"""

from __future__ import annotations

import copy
import math
from typing import Any, Callable, Dict, List, Sequence

from .core import Case, Study
from .metrics import ci_metrics
from .render import Context, change, fmt_change, fmt_mean, md_table
from .tables import Row, cases_table, claims_table, detail_table, pairs_table

BASE, CI = "without CI", "CI"


# --------------------------------------------------------------------------- case edits
# module-level functions: worker processes pickle them by name


def by_tor(sc: Dict[str, Any]) -> Dict[str, Any]:
    """clos2's servers numbered ToR by ToR (the seeds state no placement; the shipped
    scenarios interleave them over the ToRs)."""
    sc = copy.deepcopy(sc)
    sc["topology"]["placement"] = "by_tor"
    return sc


def no_latency(sc: Dict[str, Any]) -> Dict[str, Any]:
    """The static-latency study without its 400 ns per switch: the 2-queue study."""
    sc = copy.deepcopy(sc)
    sc["switch"].pop("latency", None)
    return sc


def _set_xoff_high(sc: Dict[str, Any], xoff: str, high: str) -> Dict[str, Any]:
    sc = copy.deepcopy(sc)
    sc.pop("sweep", None)
    sc["switch"]["pfc"]["xoff"] = xoff
    for v in sc.get("variant", []):
        if v["name"] == CI:
            v["switch"]["ci"]["high"] = high
    return sc


def xoff750_high300(sc: Dict[str, Any]) -> Dict[str, Any]:
    return _set_xoff_high(sc, "750KB", "300KB")


def xoff750_high600(sc: Dict[str, Any]) -> Dict[str, Any]:
    return _set_xoff_high(sc, "750KB", "600KB")


def xoff1500_high300(sc: Dict[str, Any]) -> Dict[str, Any]:
    return _set_xoff_high(sc, "1500KB", "300KB")


def xoff1500_high600(sc: Dict[str, Any]) -> Dict[str, Any]:
    return _set_xoff_high(sc, "1500KB", "600KB")


# --------------------------------------------------------------------------- studies

STUDIES: Dict[str, Study] = {}


def register(st: Study) -> Study:
    assert st.name not in STUDIES, st.name
    STUDIES[st.name] = st
    return st


register(Study(
    name="seed003_ci_2queue",
    title="Seed 000/003 2-queue Congestion Isolation study: FCT per bin, PAUSE frames, XOFF time; both server placements",
    scenario="seed003_ci_2queue",
    metrics=ci_metrics,
    cases=(Case("interleaved"), Case("by_tor", by_tor)),
    cost_s={"small": 30, "full": 1500},
))
register(Study(
    name="seed000_ci_3queue",
    title="Seed 000 3-queue model: a strict-priority mice queue in both variants",
    scenario="seed000_ci_3queue",
    metrics=ci_metrics,
    cases=(Case("interleaved"),),
    cost_s={"small": 15, "full": 750},
))
register(Study(
    name="seed003_lossy",
    title="Seed 003 lossy scenario (no PFC) / seed 000's -66% loss rate",
    scenario="seed003_lossy",
    metrics=ci_metrics,
    cases=(Case("interleaved"),),
    cost_s={"small": 15, "full": 750},
))
register(Study(
    name="seed003_latency",
    title="Seed 003 static switch latency: 400 ns per switch against none",
    scenario="seed003_latency",
    metrics=ci_metrics,
    cases=(Case("400ns"), Case("0ns", no_latency)),
    cost_s={"small": 30, "full": 1500},
))
register(Study(
    name="seed003_memory",
    title="Seed 003 memory sensitivity: queue 1 MB -> 2 MB, XOFF 750 -> 1500 KB, CI High 300 -> 600 KB",
    scenario="seed003_memory",
    metrics=ci_metrics,
    cases=(Case("shipped"),),
    cost_s={"small": 45, "full": 2300},
))
register(Study(
    name="seed003_sensitivity",
    title="Seed 003 memory sensitivity as a grid: XOFF 750/1500 KB x CI High 300/600 KB (CI variant)",
    scenario="seed003_sensitivity",
    metrics=ci_metrics,
    cases=(
        Case("XOFF 750KB, High 300KB", xoff750_high300),
        Case("XOFF 750KB, High 600KB", xoff750_high600, (CI,)),
        Case("XOFF 1500KB, High 300KB", xoff1500_high300),
        Case("XOFF 1500KB, High 600KB", xoff1500_high600, (CI,)),
    ),
    cost_s={"small": 45, "full": 2300},
))
register(Study(
    name="seed003_scale",
    title="Seed 003 scaling comparison: 128, 512 and 1152 servers, without and with CI",
    scenario="seed003_scale",
    metrics=ci_metrics,
    cost_s={"small": 45, "full": 1500},
))
register(Study(
    name="seed000_ci_with_cc",
    title="Seed 000's next step: CI with other congestion controls (DCQCN, HPCC, Swift, TIMELY, BBR)",
    scenario="seed000_ci_with_cc",
    metrics=ci_metrics,
    cost_s={"small": 60, "full": 4000},
))


# --------------------------------------------------------------------------- rows

#: seed 000, slide "Simulation Highlights": "Reduction in FCT: 63% for mice, 23% for
#: elephant, 38% on average"; "Reduction in Pause Frame Counts 84%"; "66% reduction in
#: loss rate" (lossy).
SEED000_MICE, SEED000_ELEPHANTS, SEED000_ALL, SEED000_PAUSE, SEED000_LOSS = -0.63, -0.23, -0.38, -0.84, -0.66

MICE = Row("<100KB mean FCT (us)", "bg.<100KB.mean_us", 2, SEED000_MICE, claim="mice (< 100 KB) mean FCT (000: -63%)")
ELEPHANTS = Row(">10MB censored mean FCT (us)", "bg.>10MB.censored_us", 0, SEED000_ELEPHANTS, claim="elephants (> 10 MB) mean FCT, censored (000: -23%)")
ALL = Row("all censored mean FCT (us)", "bg.all.censored_us", 0, SEED000_ALL, claim="all background flows' mean FCT, censored (000: -38% on average)")
PAUSE = Row("PAUSE frames (PFC frames sent)", "pfc_frames", 0, SEED000_PAUSE, claim="PAUSE frames, all classes (000: -84%)")
XOFF_T = Row("XOFF time (ms)", "xoff_ms", 1, sign=-1, claim="XOFF time (000, 003: lower)")
Q1_PAUSE = Row("PAUSE frames, class 1 (non-congested)", "pfc_frames.q1", 0, sign=-1, claim='PAUSE frames of the non-congested class 1 (000: "reduces or eliminates the need for PFC on non-congested flow queues")')

CI_ROWS: List[Row] = [
    Row("<100KB mean FCT (us)", "bg.<100KB.mean_us", 2),
    Row("<100KB p99 FCT (us)", "bg.<100KB.p99_us", 1),
    Row("100KB-1MB mean FCT (us)", "bg.100KB-1MB.mean_us", 1),
    Row("1MB-10MB mean FCT, censored (us)", "bg.1MB-10MB.censored_us", 0),
    Row(">10MB mean FCT, censored (us)", "bg.>10MB.censored_us", 0),
    Row(">10MB mean FCT, finished only (us)", "bg.>10MB.mean_us", 0),
    Row("all background, mean FCT, censored (us)", "bg.all.censored_us", 0),
    Row("all background, mean slowdown (finished)", "bg.all.slowdown", 2),
    Row("unfinished flows at the end", "s.flows_unfinished", 1),
    Row("unfinished background flows > 10 MB", "bg.>10MB.unfinished", 1),
    Row("offered load of the background, measured", "offered_load.background", 3),
    Row("PAUSE frames (PFC frames sent)", "pfc_frames", 0),
    Row("PAUSE frames, class 0", "pfc_frames.q0", 0),
    Row("PAUSE frames, class 1", "pfc_frames.q1", 0),
    Row("PAUSE frames, class 2", "pfc_frames.q2", 0),
    Row("distinct pause periods", "pause_periods", 0),
    Row("XOFF time (ms)", "xoff_ms", 1),
    Row("XOFF time, class 1 (ms)", "xoff_ms.q1", 2),
    Row("flows paused in a switch queue", "s.flows_paused", 0),
    Row("switch queues above XOFF, class 0", "above_xoff.q0", 1),
    Row("switch queues above XOFF, class 1", "above_xoff.q1", 1),
    Row("largest queue 0 depth (KB)", "max_depth_kb.q0", 1),
    Row("largest queue 1 depth (KB)", "max_depth_kb.q1", 1),
    Row("data packet loss (%)", "loss_pct", 4),
    Row("flows with loss", "s.flows_with_loss", 1),
    Row("CI isolations", "s.ci_isolations", 0),
    Row("simulated time (ms)", "sim_time_ms", 1),
]


# --------------------------------------------------------------------------- blocks

BLOCKS: Dict[str, Callable[[Context], str]] = {}


def block(name: str) -> Callable[[Callable[[Context], str]], Callable[[Context], str]]:
    def deco(fn: Callable[[Context], str]) -> Callable[[Context], str]:
        assert name not in BLOCKS, name
        BLOCKS[name] = fn
        return fn

    return deco


def _xoff_vs_pause(res: Any, case: str) -> str:
    p = change(res.values(case, BASE, "pfc_frames"), res.values(case, CI, "pfc_frames"))
    x = change(res.values(case, BASE, "xoff_ms"), res.values(case, CI, "xoff_ms"))
    holds = abs(x.rel) < abs(p.rel)
    return (f"PAUSE frames {fmt_change(p)}, XOFF time {fmt_change(x)}: the XOFF-time reduction is "
            f"{'smaller' if holds else 'larger'} than the PAUSE-frame reduction: **{'reproduces' if holds else 'not reproduced'}**")


def _headline(ctx: Context, scale: str) -> str:
    res = ctx.results("seed003_ci_2queue", scale)
    cols = [("servers interleaved over the ToRs (shipped)", res, "interleaved"), ("servers by ToR", res, "by_tor")]
    table = claims_table(cols, BASE, CI, [MICE, ELEPHANTS, ALL, PAUSE, XOFF_T, Q1_PAUSE])
    lines = [table, ""]
    for title, r, case in cols:
        lines.append(f"- XOFF duration \"less significant than Pause frame count\" (000), {title}: {_xoff_vs_pause(r, case)}.")
    return "\n".join(lines)


@block("seed003_ci_2queue:claims_full")
def _claims_full(ctx: Context) -> str:
    return _headline(ctx, "full")


@block("seed003_ci_2queue:claims_small")
def _claims_small(ctx: Context) -> str:
    return _headline(ctx, "small")


def _detail(study: str, scale: str, case: str, base: str = BASE, others: Sequence[str] = (CI,)) -> Callable[[Context], str]:
    def fn(ctx: Context) -> str:
        return detail_table(ctx.results(study, scale), case, base, others, CI_ROWS)

    return fn


for _scale in ("full", "small"):
    for _case in ("interleaved", "by_tor"):
        BLOCKS[f"seed003_ci_2queue:detail_{_scale}_{_case}"] = _detail("seed003_ci_2queue", _scale, _case)
    BLOCKS[f"seed000_ci_3queue:detail_{_scale}"] = _detail("seed000_ci_3queue", _scale, "interleaved")
    BLOCKS[f"seed003_lossy:detail_{_scale}"] = _detail("seed003_lossy", _scale, "interleaved")


def _load_study_modules() -> None:
    """Import every ``studies_*.py`` of this package: each registers its studies and blocks
    (one module per source document), so that adding one touches no shared file."""
    import importlib
    import pkgutil
    from pathlib import Path

    for m in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if m.name.startswith("studies_"):
            importlib.import_module(f"{__package__}.{m.name}")


_load_study_modules()
