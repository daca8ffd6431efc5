"""Congestion Isolation, seeds 000 and 003 (P. Congdon, "P802.1Qcz Congestion Isolation",
IETF 101 ICCRG, 2018; K. Shen, S. Sun, "Simulation Analysis of Congestion Isolation (CI)",
IEEE 802.1 DCB, Geneva, January 2018): the studies of docs/reproductions.md's first part
and the blocks that render them."""

from __future__ import annotations

import copy
from typing import Any, Callable, Dict, List, Sequence

from .core import Case, Study, run_cpu_s
from .metrics import ci_metrics
from .render import Context, MissingResults, change, fmt_change, fmt_mean, md_table
from .studies import block, register, scaled
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


def ingress_pfc(sc: Dict[str, Any]) -> Dict[str, Any]:
    """IEEE 802.1Qbb's per-(ingress port, class) PFC accounting (the engine's default, its
    headroom from the cable) in place of the seeds' queue-based reading."""
    sc = copy.deepcopy(sc)
    sc["switch"]["pfc"].pop("accounting", None)
    return sc


def output_dt(sc: Dict[str, Any]) -> Dict[str, Any]:
    """802.1Qbb ingress PFC on output queues that share the switch's memory by a dynamic
    threshold (alpha 1, nothing guaranteed) in place of 1 MB per queue: the same memory, a
    ToR's ports times its two 1 MB queues, as one pool."""
    sc = ingress_pfc(sc)
    t = sc["topology"]
    ports = t["servers_per_tor"] + t["spines"]
    sc["switch"]["buffer"] = {"model": "shared", "pool": f"{2 * ports}MB", "guaranteed": "0B", "alpha": 1.0}
    return sc


def _architecture(sc: Dict[str, Any], kind: str) -> Dict[str, Any]:
    """802.1Qbb ingress PFC on the inputs of a switch of memory architecture ``kind``, its
    buffers the ports' shares of the shipped 1 MB queues (engine defaults: iSLIP with one
    iteration, a CIOQ's speed-up 2, ECN marked by the VOQ's depth, CI judging each (output,
    class)'s backlog)."""
    sc = ingress_pfc(sc)
    sc["switch"]["architecture"] = {"kind": kind}
    return sc


def voq(sc: Dict[str, Any]) -> Dict[str, Any]:
    return _architecture(sc, "voq")


def cioq(sc: Dict[str, Any]) -> Dict[str, Any]:
    return _architecture(sc, "cioq")


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


register(Study(
    name="seed003_ci_2queue",
    title="Seed 000/003 2-queue Congestion Isolation study: FCT per bin, PAUSE frames, XOFF time; both server placements",
    scenario="seed003_ci_2queue",
    metrics=ci_metrics,
    cases=(Case("interleaved"), Case("by_tor", by_tor)),
    cost_s={"small": 30, "full": 1500},
))
register(Study(
    name="seed003_ingress_pfc",
    title="Seed 000's \"switch model dependent\" PAUSE count: the 2-queue study with 802.1Qbb ingress PFC accounting",
    scenario="seed003_ci_2queue",
    metrics=ci_metrics,
    cases=(Case("ingress", ingress_pfc),),
    cost_s={"small": 15, "full": 750},
))
#: the switch models of seed 000's "next step" (alternative switch memory architectures)
ARCHITECTURES = (
    Case("output, static", ingress_pfc),
    Case("output, dynamic threshold", output_dt),
    Case("VOQ", voq),
    Case("CIOQ", cioq),
)
register(Study(
    name="seed003_architectures",
    title="Seed 000's next step: the 2-queue CI study on output-queued (static, dynamic threshold), VOQ and CIOQ switches, 802.1Qbb ingress PFC",
    scenario="seed003_ci_2queue",
    metrics=ci_metrics,
    cases=ARCHITECTURES,
    cost_s={"small": 120, "full": 9000},
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


def _xoff_vs_pause(res: Any, case: str) -> str:
    p = change(res.values(case, BASE, "pfc_frames"), res.values(case, CI, "pfc_frames"))
    x = change(res.values(case, BASE, "xoff_ms"), res.values(case, CI, "xoff_ms"))
    holds = abs(x.rel) < abs(p.rel)
    if not (p.significant and x.significant):
        verdict = "not shown (a change within the noise)"
    else:
        verdict = "reproduces" if holds else "not reproduced"
    return (f"PAUSE frames {fmt_change(p)}, XOFF time {fmt_change(x)}: the XOFF-time reduction is "
            f"{'smaller' if holds else 'larger'} than the PAUSE-frame reduction: **{verdict}**")


@scaled("seed003_ci_2queue:claims")
def _headline(ctx: Context, scale: str) -> str:
    res = ctx.results("seed003_ci_2queue", scale)
    cols = [("servers interleaved over the ToRs (shipped)", res, "interleaved"), ("servers by ToR", res, "by_tor")]
    table = claims_table(cols, BASE, CI, [MICE, ELEPHANTS, ALL, PAUSE, XOFF_T, Q1_PAUSE])
    lines = [table, ""]
    for title, r, case in cols:
        lines.append(f"- XOFF duration \"less significant than Pause frame count\" (000), {title}: {_xoff_vs_pause(r, case)}.")
    return "\n".join(lines)


def _detail(study: str, scale: str, case: str, base: str = BASE, others: Sequence[str] = (CI,)) -> Callable[[Context], str]:
    def fn(ctx: Context) -> str:
        return detail_table(ctx.results(study, scale), case, base, others, CI_ROWS)

    return fn


for _scale in ("full", "small"):
    for _case in ("interleaved", "by_tor"):
        block(f"seed003_ci_2queue:detail_{_scale}_{_case}")(_detail("seed003_ci_2queue", _scale, _case))
    block(f"seed000_ci_3queue:detail_{_scale}")(_detail("seed000_ci_3queue", _scale, "interleaved"))
    block(f"seed003_lossy:detail_{_scale}")(_detail("seed003_lossy", _scale, "interleaved"))


def _seeds_text(xs: Sequence[float], digits: int) -> str:
    return ", ".join(f"{x:,.{digits}f}" for x in xs)


@scaled("seed000_ci_3queue:claims")
def _three_queue(ctx: Context, scale: str) -> str:
    three = ctx.results("seed000_ci_3queue", scale)
    two = ctx.results("seed003_ci_2queue", scale)
    c3 = change(three.values("interleaved", BASE, MICE.key), three.values("interleaved", CI, MICE.key))
    c2 = change(two.values("interleaved", BASE, MICE.key), two.values("interleaved", CI, MICE.key))
    holds = bool(c2.significant) and abs(c3.rel) < abs(c2.rel)
    lines = [
        claims_table([("3-queue model (strict-priority mice queue in both variants)", three, "interleaved")], BASE, CI,
                     [ELEPHANTS, ALL, PAUSE, XOFF_T]),
        "",
        f"- Mice \"not improved as much\" with the mice queue (000): CI's change of the mice's mean FCT is "
        f"{fmt_change(c3)} in the 3-queue model ({fmt_mean(c3.base, 2)} -> {fmt_mean(c3.other, 2)} us) against "
        f"{fmt_change(c2)} in the 2-queue model: **{'reproduces' if holds else 'not reproduced'}**.",
    ]
    return "\n".join(lines)


LOSS = Row("data packet loss (%)", "loss_pct", 3, SEED000_LOSS, claim="data packet loss rate (000: -66%)")
LOSS_FLOWS = Row("flows with loss", "s.flows_with_loss", 1, sign=-1, claim="flows with loss (003: lower)")


@scaled("seed003_lossy:claims")
def _lossy(ctx: Context, scale: str) -> str:
    res = ctx.results("seed003_lossy", scale)
    table = claims_table([("no PFC (lossy)", res, "interleaved")], BASE, CI, [LOSS, LOSS_FLOWS, MICE, ELEPHANTS, ALL])
    q1 = res.values("interleaved", CI, "switch_drops.q1")
    q0 = res.values("interleaved", CI, "switch_drops.q0")
    d1 = res.values("interleaved", CI, "max_depth_kb.q1")
    b1 = res.values("interleaved", BASE, "switch_drops.q1")
    only = all(x == 0 for x in q1)
    return "\n".join([
        table, "",
        f"- \"Only congested flows lose packets\" (003): with CI the switches drop {_seeds_text(q0, 0)} packets in queue 0 "
        f"and {_seeds_text(q1, 0)} in queue 1 (seeds {', '.join(map(str, res.seeds))}); without CI {_seeds_text(b1, 0)} in queue 1: "
        f"**{'reproduces' if only else 'not reproduced'}**. Queue 1's largest depth with CI: {_seeds_text(d1, 1)} KB.",
    ])


@block("seed003_ci_2queue:queues_full")
def _queues_full(ctx: Context) -> str:
    res = ctx.results("seed003_ci_2queue", "full")
    rows = []
    for case in ("interleaved", "by_tor"):
        d1 = res.values(case, CI, "max_depth_kb.q1")
        q1 = res.values(case, CI, "pfc_frames.q1")
        a0 = change(res.values(case, BASE, "above_xoff.q0"), res.values(case, CI, "above_xoff.q0"))
        a1 = change(res.values(case, BASE, "above_xoff.q1"), res.values(case, CI, "above_xoff.q1"))
        rows.append([
            case.replace("_", " "),
            f"{max(d1):.1f} KB (XOFF 750 KB): **{'reproduces' if max(d1) < 750 else 'not reproduced'}**",
            f"{_seeds_text(q1, 0)} (without CI {_seeds_text(res.values(case, BASE, 'pfc_frames.q1'), 0)}): "
            f"**{'reproduces' if max(q1) == 0 else 'direction only: a few last-resort frames remain'}**",
            f"queue 0: {fmt_mean(a0.base, 1)} -> {fmt_mean(a0.other, 1)} ({fmt_change(a0)}); queue 1: {fmt_mean(a1.base, 1)} -> {fmt_mean(a1.other, 1)}: "
            f"**{'reproduces' if a0.significant and a0.rel < 0 else 'not reproduced'}**",
        ])
    return md_table([
        "servers", "with CI, queue 1's largest depth over every switch and seed never above XOFF (003)",
        "with CI, class-1 PAUSE frames per seed: \"HOLB never occur[s] in Queue 1\" (003)",
        "switch queues above XOFF without -> with CI: fewer congested queue-0 ports (003)",
    ], rows)


#: seed 003, "Including Static Switch Latency": 400 ns per switch; a mouse's data crosses 3
#: switches (ToR, spine, ToR) and its acknowledgement 3 back: 6 x 400 ns
LATENCY_EXPECTED_US = 6 * 0.4


@scaled("seed003_latency:claims")
def _latency(ctx: Context, scale: str) -> str:
    res = ctx.results("seed003_latency", scale)
    rows = []
    for v in (BASE, CI):
        def inc(key: str) -> List[float]:
            return [b - a for a, b in zip(res.values("0ns", v, key), res.values("400ns", v, key))]
        med = inc("bg.<100KB.p50_us")
        mean = inc("bg.<100KB.mean_us")
        el = change(res.values("0ns", v, ELEPHANTS.key), res.values("400ns", v, ELEPHANTS.key))
        pa = change(res.values("0ns", v, "pfc_frames"), res.values("400ns", v, "pfc_frames"))
        el_inc = inc(ELEPHANTS.key)
        rows.append([
            v,
            f"{min(med):+.3f} .. {max(med):+.3f} us",
            f"{min(mean):+.2f} .. {max(mean):+.2f} us",
            f"{sum(el_inc) / len(el_inc):+.0f} us ({fmt_change(el)})",
            fmt_change(pa),
        ])
    return md_table([
        "variant", f"mice' median FCT, 400 ns - 0 ns, range over seeds (expected +{LATENCY_EXPECTED_US:.2f} us: 3 switches each way, since dcnsim's FCT ends at the acknowledgement; the seed's +1.2 us counts one way)",
        "mice' mean FCT, same", "elephants, censored mean (003: about +200 us \"because of more pause frames\")",
        "PAUSE frames, 400 ns against 0 ns",
    ], rows)


MEMORY_ROWS = [
    Row("PAUSE frames", "pfc_frames", 0),
    Row("XOFF time (ms)", "xoff_ms", 1),
    Row("all, censored (us)", "bg.all.censored_us", 0),
    Row("1-10 MB, censored (us)", "bg.1MB-10MB.censored_us", 0),
    Row("> 10 MB, censored (us)", "bg.>10MB.censored_us", 0),
    Row("largest queue 0 depth (KB)", "max_depth_kb.q0", 1),
]


@scaled("seed003_memory:claims")
def _memory(ctx: Context, scale: str) -> str:
    res = ctx.results("seed003_memory", scale)
    pairs = [
        ("CI, queue 1 MB -> 2 MB (003: \"performance does not change at all\")", CI, "CI queue 2MB"),
        ("CI, XOFF 750 -> 1500 KB, 2 MB queue (003: fewer pauses, better FCT)", CI, "CI XOFF 1500KB"),
        ("without CI, XOFF 750 -> 1500 KB, 2 MB queue", BASE, "without CI XOFF 1500KB"),
        ("CI, High 300 -> 600 KB (003: fewer pauses, better FCT)", CI, "CI High 600KB"),
    ]
    table = pairs_table(res, "shipped", pairs, MEMORY_ROWS)
    same = [res.run("shipped", CI, s)["flows_hash"] == res.run("shipped", "CI queue 2MB", s)["flows_hash"] for s in res.seeds]
    return table + f"\n\n- Queue 1 MB -> 2 MB with CI: every flow's outcome identical in {sum(same)} of {len(same)} seeds."


#: the memory table's pauses and FCTs, and the unfinished flows in place of queue 0's depth
SENS_ROWS = [*MEMORY_ROWS[:5], Row("unfinished flows", "s.flows_unfinished", 1)]


@scaled("seed003_sensitivity:grid")
def _sensitivity(ctx: Context, scale: str) -> str:
    res = ctx.results("seed003_sensitivity", scale)
    ref = "XOFF 750KB, High 300KB"
    pairs = [
        ("CI: XOFF 750 -> 1500 KB (High 300 KB)", (ref, CI), ("XOFF 1500KB, High 300KB", CI)),
        ("CI: High 300 -> 600 KB (XOFF 750 KB)", (ref, CI), ("XOFF 750KB, High 600KB", CI)),
        ("CI: High 300 -> 600 KB (XOFF 1500 KB)", ("XOFF 1500KB, High 300KB", CI), ("XOFF 1500KB, High 600KB", CI)),
        ("without CI: XOFF 750 -> 1500 KB", (ref, BASE), ("XOFF 1500KB, High 300KB", BASE)),
        ("XOFF 1500 KB: without CI -> CI", ("XOFF 1500KB, High 300KB", BASE), ("XOFF 1500KB, High 300KB", CI)),
    ]
    return cases_table(res, pairs, SENS_ROWS)


SCALE_ROWS = [MICE, PAUSE, ALL, ELEPHANTS]


@scaled("seed003_scale:claims")
def _scale(ctx: Context, scale: str) -> str:
    res = ctx.results("seed003_scale", scale)
    sizes = [v.split(" ")[0] for v in res.variants("shipped") if v.endswith(" CI") and not v.endswith("without CI")]
    sizes = sorted(set(sizes), key=int)
    pairs = [(f"{n} servers", f"{n} {BASE}", f"{n} {CI}") for n in sizes]
    rows = [Row("mice mean FCT (us)", MICE.key, 2), Row("PAUSE frames", "pfc_frames", 0),
            Row("all, censored (us)", ALL.key, 0), Row("> 10 MB, censored (us)", ELEPHANTS.key, 0)]
    return pairs_table(res, "shipped", pairs, rows)


CC_ROWS = [
    Row("mice mean FCT (us)", MICE.key, 2),
    Row("PAUSE frames", "pfc_frames", 0),
    Row("class-1 PAUSE frames", "pfc_frames.q1", 0),
    Row("all, censored (us)", ALL.key, 0),
    Row("> 10 MB, censored (us)", ELEPHANTS.key, 0),
    Row("unfinished flows", "s.flows_unfinished", 1),
]


@scaled("seed000_ci_with_cc:claims")
def _cc(ctx: Context, scale: str) -> str:
    res = ctx.results("seed000_ci_with_cc", scale)
    ccs = [v[: -len(" without CI")] for v in res.variants("shipped") if v.endswith(" without CI")]
    order = ["DCQCN", "HPCC", "Swift", "TIMELY", "BBR"]
    ccs.sort(key=lambda c: order.index(c) if c in order else len(order))
    pairs = [(cc, f"{cc} {BASE}", f"{cc} {CI}") for cc in ccs]
    return pairs_table(res, "shipped", pairs, CC_ROWS)


@block("seed003_ci_2queue:censoring_full")
def _censoring_full(ctx: Context) -> str:
    res = ctx.results("seed003_ci_2queue", "full")
    rows = []
    for case in ("interleaved", "by_tor"):
        for v in (BASE, CI):
            load = res.values(case, v, "offered_load.background")
            unf = res.values(case, v, "s.flows_unfinished")
            big = res.values(case, v, "bg.>10MB.flows")
            rows.append([case.replace("_", " "), v, _seeds_text(load, 3), _seeds_text(unf, 0), _seeds_text(big, 0)])
    return md_table(["servers", "variant", "background load offered in the 10 ms of arrivals, per seed (scenario: 0.5)",
                     "flows unfinished at 50 ms, per seed", "background flows > 10 MB, per seed"], rows)


@block("ci:runtime")
def _runtime(ctx: Context) -> str:
    from .studies import STUDIES

    rows = []
    for name in ("seed003_ci_2queue", "seed000_ci_3queue", "seed003_lossy", "seed003_latency", "seed003_memory",
                 "seed003_sensitivity", "seed003_scale", "seed000_ci_with_cc", "seed003_architectures"):
        for scale in STUDIES[name].scales:
            try:
                res = ctx.results(name, scale)
            except MissingResults:  # a study not yet run at this scale is left out
                continue
            walls = [r["_wall_s"] for c in res.data["runs"].values() for v in c.values() for r in v.values()]
            cpu = sum(run_cpu_s(r, res.data) for c in res.data["runs"].values() for v in c.values() for r in v.values())
            events = [r["_events"] for c in res.data["runs"].values() for v in c.values() for r in v.values()]
            rows.append([f"`{name}`", scale, str(len(walls)), f"{cpu / 60:.1f} min",
                         f"{min(walls):.1f}-{max(walls):.1f} s", f"{min(events) / 1e6:.0f}-{max(events) / 1e6:.0f} M",
                         res.data.get("machine", "not recorded")])
    return md_table(["study", "scale", "runs", "CPU time of the runs", "one run", "events per run", "machine"], rows)


@scaled("seed003_architectures:compare")
def _architectures(ctx: Context, scale: str) -> str:
    res = ctx.results("seed003_architectures", scale)
    rows = [MICE, Row("100 KB-1 MB mean FCT (us)", "bg.100KB-1MB.mean_us", 1), ELEPHANTS, ALL, PAUSE, XOFF_T, Q1_PAUSE,
            Row("data packets dropped", "s.data_packets_dropped", 1)]
    cases = [c.label for c in ARCHITECTURES]
    table = md_table(["without CI -> CI", "seed", *cases], _ci_changes(rows, [(res, c) for c in cases]))
    # the two output-queued buffer models meet no packet of the lossless class differently
    same = [res.run(cases[0], v, s)["flows_hash"] == res.run(cases[1], v, s)["flows_hash"] for v in (BASE, CI) for s in res.seeds]
    return table + f"\n\n- {cases[1]} against {cases[0]}: every flow's outcome identical in {sum(same)} of {len(same)} runs."


@scaled("seed003_ingress_pfc:compare", ("full",))
def _ingress(ctx: Context, scale: str) -> str:
    ing = ctx.results("seed003_ingress_pfc", scale)
    queue = ctx.results("seed003_ci_2queue", scale)
    rows = [MICE, Row("100 KB-1 MB mean FCT (us)", "bg.100KB-1MB.mean_us", 1), ELEPHANTS, ALL, PAUSE, XOFF_T, Q1_PAUSE,
            Row("largest queue 1 depth (KB)", "max_depth_kb.q1", 1), Row("data packets dropped", "s.data_packets_dropped", 1)]
    out = _ci_changes(rows, [(ing, "ingress"), (queue, "interleaved")])
    return md_table(["without CI -> CI", "seed", "ingress PFC (802.1Qbb)", "queue-based PFC (shipped)"], out)


def _ci_changes(rows: Sequence[Row], columns: Sequence[Any]) -> List[List[str]]:
    """Per row: its claim, the seed's change, and without CI -> CI in each (results, case)
    of ``columns``."""
    out = []
    for r in rows:
        cells = [r.claim or r.label, f"{100 * r.source:+.0f}%" if r.source is not None else ""]
        for res, case in columns:
            c = change(res.values(case, BASE, r.key), res.values(case, CI, r.key))
            cells.append(f"{fmt_mean(c.base, r.digits)} -> {fmt_mean(c.other, r.digits)}, {fmt_change(c)}")
        out.append(cells)
    return out
