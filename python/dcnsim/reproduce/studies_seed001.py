"""Seed 001 (M. Wadekar, G. McAlpine, T. Gupta, Intel, "Rate Control in Short Range 802.3
Interconnects", IEEE 802.3, September 2004) and QCN (IEEE 802.1Qau, the standardised form
of its L2 congestion indication): the studies of docs/reproductions.md's seed 001 and QCN
sections and the blocks that render them.

Studies (one case each, the shipped scenario; every variant):

* ``seed001_simple``: the "Simple Topology" (database entries over TCP, 3 clients, 2
  servers, one 150 KB shared-memory switch): NoFC_RED, 802.3x, NoFC_RED_ECN (L2-CI),
  DRC_RED_ECN. The seed's figure is "Application Throughput & Response Time" and "Number of
  drops".
* ``seed001_mixed``: the "Multi-stage system w/ mixed link speeds" at 64 KB and 32 KB per
  port; the seed states its drop counts.
* ``seed001_backplane`` / ``seed001_multistage``: the L2 generators; "Per Port Buffer vs.
  Total Throughput & Mean Latency" for 802.3x, RED and DRC.
* ``seed001_backplane_voq`` / ``seed001_multistage_voq``: the same on input-buffered (VOQ)
  switches (issue 58's study 2): 802.3x by the inputs' fill, and DRC with feedback per
  (ingress, direction) in its two readings ("DRC", "DRC+input").
* ``seed001_qcn``: ten line-rate flows into one port, without and with QCN.

The response time is the seed's "TCP Delay = DB Entry request to completion": the flows
table's FCT of each entry (each entry is its own connection). Throughput is the bytes of
the entries that finished within the run over the run's length, as the former bench/seed001.py
measured it (the docs' earlier tables).

The verdicts: the seed states directions ("L2-CI with ECN improves TCP performance") and
drop counts (mixed speeds). A direction is judged by
:func:`~dcnsim.reproduce.render.judge_direction`; a stated count by :func:`judge_count`,
the size rule of :func:`~dcnsim.reproduce.render.judge` applied to the count (within a
factor :data:`~dcnsim.reproduce.render.SIZE_FACTOR` of the seed's number); a stated zero
reproduces only when every seed's run drops nothing.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np

from .core import Case, Study
from .render import SIZE_FACTOR, Context, Results, change, fmt_change, fmt_mean, fmt_num, judge, judge_direction, md_table, mean_ci
from .studies import block, register

#: the simple topology's traffic that 802.3x blocks at client 1 (the seed's "HOL blocking")
VICTIM = "client1_server2"
#: an entry that took longer than this waited for a retransmission timeout (min RTO 200 ms)
STALL_PS = 50e9
#: the seed's drop counts on the mixed-speed system (slides "Application Throughput &
#: Response Time (Buffer = 64 KB / 32 KB per Switch Port)")
SEED_MIXED_DROPS = {
    "64KB": {"NoFC_RED": 2554, "802.3x": 0, "NoFC_RED_ECN": 72, "DRC_RED_ECN": 0},
    "32KB": {"NoFC_RED": 2373, "802.3x": 0, "NoFC_RED_ECN": 105, "DRC_RED_ECN": 0},
}
TCP_VARIANTS = ("NoFC_RED", "802.3x", "NoFC_RED_ECN", "DRC_RED_ECN")
L2_SIZES = ("16KB", "32KB", "64KB", "128KB", "256KB")
L2_MECHS = ("802.3x", "RED", "DRC")
#: the input-buffered studies' mechanisms: RED runs on output queues, which a VOQ switch
#: does not keep; DRC in its two readings of a direction's fill at an input (switch/drc.rs)
VOQ_MECHS = ("802.3x", "DRC", "DRC+input")
QCN_VARIANTS = ("UDP, no QCN", "UDP, QCN", "Reno, QCN")
SHIPPED = "shipped"
#: TCP's segment payload (1500 B frames less 40 B of headers)
MSS = 1460
#: the simple topology's links
LINK_BPS = 10e9
#: its base round trip, client -> switch -> server and back (us): 4 x 500 ns of links, a
#: 1,538 B frame serialised twice at 10 Gbit/s (2 x 1.23 us), the ACK twice (2 x 0.07 us)
BASE_RTT_US = 4.6


# --------------------------------------------------------------------------- metrics


def _secs(r: Any) -> float:
    return int(r.summary["sim_time_ps"]) / 1e12


def _pct(x: np.ndarray, p: float) -> float:
    return float(np.percentile(x, p)) if len(x) else math.nan


def _fct_stats(f: Any, end_ps: float, secs: float, prefix: str) -> Dict[str, Any]:
    """One group of entries: throughput of the finished (Gbit/s), entries finished, response
    time of the finished (mean, p50, p99, p99.9 in us, max in ms), censored mean (an
    unfinished entry counted at the end of the run minus its start), entries that waited
    for a retransmission timeout (FCT > 50 ms) and the time-mean number of entries parked in
    such a wait, entries with a retransmission, entries with a CE mark."""
    done = f["finished"].to_numpy(dtype=bool)
    fct = f["fct_ps"].to_numpy(dtype=float, na_value=np.nan)
    start = f["start_ps"].to_numpy(dtype=float)
    size = f["size_bytes"].to_numpy(dtype=float)
    fin = fct[done]
    held = np.where(done, fct, end_ps - start)  # how long each entry held its slot in the run
    us = fin / 1e6
    return {
        f"{prefix}gbps": float(size[done].sum() * 8 / secs / 1e9),
        f"{prefix}entries": int(done.sum()),
        f"{prefix}unfinished": int((~done).sum()),
        f"{prefix}resp_mean_us": float(us.mean()) if len(us) else math.nan,
        f"{prefix}resp_p50_us": _pct(us, 50),
        f"{prefix}resp_p99_us": _pct(us, 99),
        f"{prefix}resp_p999_us": _pct(us, 99.9),
        f"{prefix}resp_max_ms": float(fin.max() / 1e9) if len(fin) else math.nan,
        f"{prefix}resp_censored_us": float(held.mean() / 1e6) if len(held) else math.nan,
        f"{prefix}stalled": int((held > STALL_PS).sum()),
        # Little's law: the time-mean number of entries outstanding in a timeout wait
        f"{prefix}stalled_slots": float(held[held > STALL_PS].sum() / end_ps),
        f"{prefix}in_flight": float(held.sum() / end_ps),
        f"{prefix}retx_entries": int((f["retx"].to_numpy() > 0).sum()),
        f"{prefix}ce_entries": int((f["ecn_marks"].to_numpy() > 0).sum()),
        f"{prefix}size_p99_kb": _pct(size[done][fin >= _pct(fin, 99)], 50) / 1e3 if len(fin) else math.nan,
    }


def _bottleneck(r: Any) -> Dict[str, Any]:
    """The switch egress port that sent the most bytes over its capacity: its utilisation,
    its mean depth (KB; the engine's per-port time mean) and its drops."""
    p = r.ports[~r.ports["is_host"].astype(bool)]
    util = p["tx_bytes"].to_numpy(dtype=float) * 8 / (p["rate_bps"].to_numpy(dtype=float) * _secs(r))
    i = int(np.argmax(util))
    row = p.iloc[i]
    return {
        "bn_util": float(util[i]),
        "bn_depth_kb": float(row["mean_depth_bytes"]) / 1e3,
        "bn_peer": str(row["peer_name"]),
        "bn_drops": int(row["drops"]),
        "bn_marks": int(row["ecn_marks"]),
        # the share of the frames it sent that carried CE
        "bn_marked_pct": float(100 * row["ecn_marks"] / row["tx_packets"]) if row["tx_packets"] else 0.0,
    }


def tcp_metrics(r: Any, sc: Dict[str, Any]) -> Dict[str, Any]:
    """The database-entry studies (simple, mixed): per run and per workload tag,
    :func:`_fct_stats`; the bottleneck port; drops, CE marks, DRC and PAUSE frames."""
    end = float(r.summary["sim_time_ps"])
    secs = _secs(r)
    f = r.flows
    out: Dict[str, Any] = _fct_stats(f, end, secs, "")
    for tag, g in f.groupby("tag"):
        out.update(_fct_stats(g, end, secs, f"{tag}."))
    out.update(_bottleneck(r))
    s = r.summary
    out["drops"] = int(s["data_packets_dropped"])
    sw = r.ports[~r.ports["is_host"].astype(bool)]
    # tail drops (the buffer was full) against RED's own (early) drops
    out["drops_buffer_full"] = int(sw["drops_buffer_full"].sum())
    out["drops_aqm"] = int(sw["drops_aqm"].sum())
    # entries that fit in TCP's initial window (sent in the first round trip, before any
    # ECN-Echo or loss can cut their window)
    iw = int(sc.get("transport", {}).get("init_cwnd", 10)) * MSS
    out["entries_within_iw_pct"] = float(100 * (f["size_bytes"].to_numpy() <= iw).mean())
    out["ecn_marks"] = int(s.get("ecn_marks", 0))
    out["drc_frames"] = int(s.get("drc_frames", 0))
    out["pfc_frames"] = int(r.ports["pfc_tx_frames"].sum()) if "pfc_tx_frames" in r.ports else 0
    out["sim_time_s"] = secs
    return out


def l2_metrics(r: Any, sc: Dict[str, Any]) -> Dict[str, Any]:
    """The L2-generator studies (backplane, multi-stage): throughput (Gbit/s delivered over
    the run), mean frame latency (us, each generator's mean weighted by its bytes; the seed's
    "1st byte of frame from source memory to last byte in dest memory"), drops, DRC and
    PAUSE frames."""
    f, s = r.flows, r.summary
    secs = _secs(r)
    w = f["delivered_bytes"].to_numpy(dtype=float)
    lat = f["mean_frame_latency_ps"].to_numpy(dtype=float, na_value=np.nan)
    ok = ~np.isnan(lat)
    return {
        "gbps": float(w.sum() * 8 / secs / 1e9),
        "latency_us": float((lat[ok] * w[ok]).sum() / max(w[ok].sum(), 1.0) / 1e6),
        "drops": int(s["data_packets_dropped"]),
        "drc_frames": int(s.get("drc_frames", 0)),
        "pfc_frames": int(r.ports["pfc_tx_frames"].sum()) if "pfc_tx_frames" in r.ports else 0,
        "sim_time_s": secs,
    }


#: QCN's rates are taken after this (the queue samples start there too: queue_sample_from)
QCN_WARMUP_PS = 10e9


def qcn_metrics(r: Any, sc: Dict[str, Any]) -> Dict[str, Any]:
    """QCN (as the former bench/seed001_qcn.py): the bottleneck queue's time mean, p5 and p95 (KB, bin
    centres of the sampled depth histogram), goodput after the warm-up (Gbit/s), Jain's
    index of the per-flow rates, CNMs, drops."""
    q = r.queues
    deep = q[q["depth_bytes"] > 0].groupby(["node", "port"])["samples"].sum()
    node, port = deep.idxmax()
    h = q[(q["node"] == node) & (q["port"] == port)].sort_values("depth_bytes")
    centre = h["depth_bytes"].to_numpy(dtype=float) + 500.0
    w = h["samples"].to_numpy(dtype=float)
    w = w / w.sum()
    cdf = w.cumsum()
    ts = r.timeseries
    late = ts[ts["bin_start_ps"].to_numpy(dtype=float) >= QCN_WARMUP_PS]
    seconds = (float(late["bin_start_ps"].max()) - QCN_WARMUP_PS) / 1e12 + 1e-3
    rates = late.groupby("flow")["bytes"].sum().reindex(range(len(r.flows)), fill_value=0).to_numpy(dtype=float) * 8 / seconds
    return {
        "queue_kb": float((centre * w).sum()) / 1e3,
        "p5_kb": float(centre[(cdf >= 0.05).argmax()]) / 1e3,
        "p95_kb": float(centre[(cdf >= 0.95).argmax()]) / 1e3,
        "gbps": float(rates.sum()) / 1e9,
        "jain": float(rates.sum() ** 2 / (len(rates) * (rates**2).sum())),
        "cnms": int(r.summary.get("qcn_cnms", 0)),
        "drops": int(r.summary["data_packets_dropped"]),
        # how the rates are shared: the largest flow's share, flows that dropped nothing
        "top_share": float(rates.max() / rates.sum()) if rates.sum() > 0 else math.nan,
        "flows_without_drops": int((r.flows["drops"].to_numpy() == 0).sum()),
        "sim_time_s": _secs(r),
    }


# --------------------------------------------------------------------------- studies

register(Study(
    name="seed001_simple",
    title="Seed 001 simple topology: DB entries over TCP; NoFC_RED, 802.3x, L2-CI (RED+ECN), DRC+L2-CI: throughput, response time, drops",
    scenario="seed001_simple",
    metrics=tcp_metrics,
    cases=(Case(SHIPPED),),
    cost_s={"small": 8, "full": 80},
))
register(Study(
    name="seed001_mixed",
    title="Seed 001 multi-stage system with mixed link speeds, 64 KB and 32 KB per port: throughput, response time, drops",
    scenario="seed001_mixed",
    metrics=tcp_metrics,
    cases=(Case(SHIPPED),),
    cost_s={"small": 30, "full": 280},
))
def peak_fabric(sc: Dict[str, Any]) -> Dict[str, Any]:
    """The fabric's peak (tests/test_source_fidelity.py): the scenario's own workload with
    every switch mechanism removed and 4 MB queues, so that the links alone limit it."""
    s = copy.deepcopy(sc)
    s.pop("variant", None)
    s["switch"] = {"buffer": {"queue": "4MB"}}
    return s


PEAK = "peak fabric"


def peak_fabric_voq(sc: Dict[str, Any]) -> Dict[str, Any]:
    """:func:`peak_fabric` on the scenario's VOQ switches (4 MB inputs): what their crossbars
    carry of the workload when no buffer limits it."""
    s = peak_fabric(sc)
    s["switch"]["architecture"] = copy.deepcopy(sc["switch"]["architecture"])
    return s


PEAK_ISLIP4 = "peak fabric, iSLIP 4 iterations"


def peak_fabric_islip4(sc: Dict[str, Any]) -> Dict[str, Any]:
    """:func:`peak_fabric_voq` with four iSLIP iterations per cell time: how much of the
    peak's shortfall is one iteration's matching."""
    s = peak_fabric_voq(sc)
    s["switch"]["architecture"]["iterations"] = 4
    return s

register(Study(
    name="seed001_backplane",
    title="Seed 001 backplane switch: 16 L2 generators, 802.3x / RED / DRC at 16-256 KB per port",
    scenario="seed001_backplane",
    metrics=l2_metrics,
    cases=(Case(SHIPPED), Case(PEAK, peak_fabric)),
    cost_s={"small": 6, "full": 30},
))
register(Study(
    name="seed001_multistage",
    title="Seed 001 multi-stage L2 fabric: 12 L2 generators, 802.3x / RED / DRC at 16-256 KB per port",
    scenario="seed001_multistage",
    metrics=l2_metrics,
    cases=(Case(SHIPPED), Case(PEAK, peak_fabric)),
    cost_s={"small": 6, "full": 30},
))
SHARED_INPUTS = "inputs sharing one pool"


def shared_inputs(sc: Dict[str, Any]) -> Dict[str, Any]:
    """The scenario's DRC variants with each switch's inputs pooling their memory
    (``input_memory = "shared"``: one pool of the ports' buffers, each VOQ held to alpha x
    its free bytes), as VOQ switches keep one ingress buffer, where the shipped reading
    gives each input its port's buffer. The 802.3x variants are left out: they are
    lossless, bounded by XOFF and its headroom whatever memory the input has, so a pool
    would rerun them unchanged."""
    s = copy.deepcopy(sc)
    s["switch"]["architecture"]["input_memory"] = "shared"
    s["variant"] = [v for v in s["variant"] if v["name"].startswith("DRC")]
    return s

for _fabric, _what in (("backplane", "backplane switch"), ("multistage", "multi-stage L2 fabric")):
    register(Study(
        name=f"seed001_{_fabric}_voq",
        title=f"Seed 001 {_what} on input-buffered (VOQ) switches: 802.3x and DRC per (ingress, direction), two readings, at 16-256 KB per port; DRC with the inputs pooling their memory",
        scenario=f"seed001_{_fabric}_voq",
        metrics=l2_metrics,
        cases=(Case(SHIPPED), Case(PEAK, peak_fabric_voq), Case(PEAK_ISLIP4, peak_fabric_islip4), Case(SHARED_INPUTS, shared_inputs)),
        cost_s={"small": 16, "full": 100},
    ))

@dataclass(frozen=True)
class QEq:
    """A case edit: QCN's set point Q_eq moved (the engine's default, 802.1Q's, is 26 KB)
    in every variant that runs QCN."""

    q_eq: str

    def __call__(self, sc: Dict[str, Any]) -> Dict[str, Any]:
        s = copy.deepcopy(sc)
        for v in s.get("variant", []):
            qcn = v.get("switch", {}).get("qcn")
            if qcn is not None:
                qcn["q_eq"] = self.q_eq
        return s


#: "full utilisation": every run's goodput within 3% of the payload's line rate (tests/test_qcn.py's band)
FULL_UTIL = 0.97
#: the set point of 802.1Q's defaults (bytes) and the moved ones
Q_EQ = 26_000
QCN_CASES = ((SHIPPED, None), ("Q_eq 13 KB", "13000B"), ("Q_eq 52 KB", "52000B"))

register(Study(
    name="seed001_qcn",
    title="QCN (IEEE 802.1Qau): ten line-rate flows into one port; UDP without / with QCN, Reno with QCN",
    scenario="seed001_qcn",
    metrics=qcn_metrics,
    cases=tuple(Case(label) if q is None else Case(label, QEq(q), ("UDP, QCN", "Reno, QCN")) for label, q in QCN_CASES),
    cost_s={"small": 2, "full": 20},
))


# --------------------------------------------------------------------------- verdicts


def judge_count(xs: Sequence[float], target: float) -> str:
    """The verdict on a count the seed states (drops): the size rule of
    :func:`~dcnsim.reproduce.render.judge` applied to the count, "reproduces" when the mean
    over seeds is within a factor SIZE_FACTOR of the seed's number; a stated zero reproduces
    when every seed's run gives zero."""
    ys = [x for x in xs if not math.isnan(x)]
    if not ys:
        return "not reproduced"
    m = sum(ys) / len(ys)
    if target == 0:
        return "reproduces" if all(y == 0 for y in ys) else f"not reproduced ({m:,.0f} where the seed has 0)"
    if m <= 0:
        return "not reproduced (0)"
    f = max(m / target, target / m)
    if f <= SIZE_FACTOR:
        return "reproduces"
    return f"not reproduced ({m / target:.2f}x the seed's)"


def _b(v: str) -> str:
    return f"**{v}**" if v else ""


def _seeds_text(res: Results) -> str:
    n = len(res.seeds)
    return f"{n} seed{'s' if n > 1 else ''}"


def _m(res: Results, variant: str, key: str, digits: int) -> str:
    return fmt_mean(mean_ci(res.values(SHIPPED, variant, key)), digits)


def _mu(res: Results, variant: str, key: str) -> float:
    xs = [x for x in res.values(SHIPPED, variant, key) if not math.isnan(x)]
    return sum(xs) / len(xs) if xs else math.nan


def _ch(res: Results, a: str, b: str, key: str):
    return change(res.values(SHIPPED, a, key), res.values(SHIPPED, b, key))


def _arrow(res: Results, a: str, b: str, key: str, digits: int, unit: str = "") -> str:
    c = _ch(res, a, b, key)
    u = f" {unit}" if unit else ""
    return f"{fmt_mean(c.base, digits)} -> {fmt_mean(c.other, digits)}{u}, {fmt_change(c)}"


def _wall(res: Results) -> float:
    return sum(float(res.run(c, v, s).get("_wall_s", 0.0)) for c in res.cases() for v in res.variants(c) for s in res.seeds)


def _runtime(res: Results) -> str:
    m = res.data.get("machine")
    where = f" ({m})" if isinstance(m, str) and m else ""
    return f"{_wall(res):.0f} CPU-seconds of runs for {_seeds_text(res)}{where}"


# --------------------------------------------------------------------------- TCP tables

TCP_COLS = [
    ("throughput (Gbit/s)", "gbps", 2),
    ("mean response (us)", "resp_mean_us", 1),
    ("p99 response (us)", "resp_p99_us", 0),
    ("max response (ms)", "resp_max_ms", 1),
    ("drops", "drops", 0),
    ("entries with CE", "ce_entries", 0),
]


def tcp_table(res: Results, variants: Sequence[str], victim: bool) -> str:
    cols = list(TCP_COLS)
    if victim:
        cols.insert(1, ("client 1 -> server 2 (Gbit/s)", f"{VICTIM}.gbps", 2))
    rows = [[v] + [_m(res, v, k, d) for _, k, d in cols] for v in variants]
    return md_table(["variant", *[h for h, _, _ in cols]], rows)


def _tcp_foot(res: Results) -> str:
    sec = res.run(SHIPPED, res.variants(SHIPPED)[0], res.seeds[0])["sim_time_s"]
    return (f"Mean ± 95% CI over {_seeds_text(res)}, {sec:g} s each; throughput: the bytes of the entries finished within the run; "
            f"response: each finished entry's request to completion; run time {_runtime(res)}.")


@block("seed001_simple:table_full")
def _simple_table(ctx: Context) -> str:
    res = ctx.results("seed001_simple", "full")
    return tcp_table(res, TCP_VARIANTS, True) + "\n\n" + _tcp_foot(res)


@block("seed001_mixed:table_full")
def _mixed_table(ctx: Context) -> str:
    res = ctx.results("seed001_mixed", "full")
    vs = [f"{v} {b}" for b in ("64KB", "32KB") for v in TCP_VARIANTS]
    return tcp_table(res, vs, False) + "\n\n" + _tcp_foot(res)


@block("seed001_simple:tail_full")
def _simple_tail(ctx: Context) -> str:
    """Why the response time's tail differs: the entries to server 1 (8 per pair, 24 in
    all) parked in retransmission timeouts, the server 1 port's load and queue, and each
    tag's response time. The closed loop keeps 32 entries in flight, so by Little's law the
    mean response over all entries (finished or not, the censored mean) is 32 / entries
    per second: it falls as the throughput rises, whatever the distribution."""
    res = ctx.results("seed001_simple", "full")
    t = "to_server1."
    rows = []
    for v in TCP_VARIANTS:
        share = [100 * a / b for a, b in zip(res.values(SHIPPED, v, "stalled"), res.values(SHIPPED, v, "entries"))]
        rows.append([
            v,
            _m(res, v, f"{t}stalled_slots", 1),
            _m(res, v, "retx_entries", 0),
            _m(res, v, "stalled", 0) + f" ({fmt_mean(mean_ci(share), 3)}%)",
            _m(res, v, "bn_util", 3),
            _m(res, v, "bn_depth_kb", 1),
            _m(res, v, f"{t}resp_p50_us", 0),
            _m(res, v, f"{t}resp_p99_us", 0),
            _m(res, v, f"{VICTIM}.resp_p99_us", 0),
            _m(res, v, "size_p99_kb", 1),
            _m(res, v, "resp_p999_us", 0),
            _m(res, v, "resp_censored_us", 1),
            _m(res, v, "resp_mean_us", 1),
        ])
    head = ["variant", "entries to server 1 waiting in a retransmission timeout (time mean, of 24 in flight)",
            "entries with a retransmission", "entries that waited one (FCT > 50 ms; share of all)", "server 1 port busy (fraction of the run)", "its mean queue (KB)",
            "to server 1: p50 response (us)", "to server 1: p99", "client 1 -> server 2: p99", "all: median size of the entries at or above the p99 (KB)",
            "all: p99.9 (us)", "all: mean, censored (us)", "all: mean of the finished (us)"]
    # NoFC_RED_ECN's tail entry at the two-segment window floor: one round trip per 2 MSS
    ecn = TCP_VARIANTS[2]
    size_b = 1e3 * _mu(res, ecn, "size_p99_kb")
    qdelay_us = 1e3 * _mu(res, ecn, "bn_depth_kb") * 8 / LINK_BPS * 1e6
    rounds = math.ceil(size_b / (2 * MSS))
    est = rounds * (BASE_RTT_US + qdelay_us)
    return md_table(head, rows) + (
        f"\n\nMean ± 95% CI over {_seeds_text(res)}. The censored mean counts an entry unfinished at the end "
        "of the run at the end minus its start (the time it held its slot); with 32 entries always in flight it "
        "equals 32 / (entries finished per second), Little's law. "
        f"Under NoFC_RED_ECN {_m(res, ecn, 'bn_marked_pct', 1)}% of the frames server 1's port sends carry CE. "
        f"An entry of the tail's size ({size_b / 1e3:.1f} KB) sent two segments per round trip (Reno's floor, 2 x {MSS} B) "
        f"needs {rounds} round trips of {BASE_RTT_US:g} us (base) + {qdelay_us:.1f} us (the mean queue at 10 Gbit/s): "
        f"{est:.0f} us, against the measured p99 of {_mu(res, ecn, 'resp_p99_us'):.0f} us.")


@block("seed001_simple:claims_full")
def _simple_claims(ctx: Context) -> str:
    res = ctx.results("seed001_simple", "full")
    red, pause, ecn, drc = TCP_VARIANTS
    hol = _ch(res, drc, pause, f"{VICTIM}.gbps")
    hol_ecn = _ch(res, ecn, pause, f"{VICTIM}.gbps")
    rows = [[
        '"HOL blocking at Client1 for Client1-Server2 traffic" (under 802.3x)', "lower under 802.3x",
        f"client 1 -> server 2, DRC_RED_ECN -> 802.3x: {_arrow(res, drc, pause, f'{VICTIM}.gbps', 2, 'Gbit/s')}; NoFC_RED_ECN -> 802.3x: {fmt_change(hol_ecn)}",
        _b(judge_direction(hol, -1)),
    ]]
    for label, key, digits, sign, unit in (
        ("throughput", "gbps", 2, 1, "Gbit/s"),
        ("mean response time, censored (every entry; the docs' FCT convention)", "resp_censored_us", 1, -1, "us"),
        ("mean response time of the finished entries", "resp_mean_us", 1, -1, "us"),
        ("p99 response time", "resp_p99_us", 0, -1, "us"),
    ):
        c = _ch(res, red, ecn, key)
        rows.append([f'"L2-CI with ECN improves TCP performance" (figure: "Application Throughput & Response Time"): {label}', "higher" if sign > 0 else "lower",
                     f"NoFC_RED -> NoFC_RED_ECN: {_arrow(res, red, ecn, key, digits, unit)}", _b(judge_direction(c, sign))])
    c = _ch(res, red, ecn, "drops")
    rows.append(['"L2-CI can significantly reduce packet drops"', "lower", f"NoFC_RED -> NoFC_RED_ECN: {_arrow(res, red, ecn, 'drops', 0, 'drops per run')}",
                 _b(judge_direction(c, -1))])
    c = _ch(res, red, drc, "drops")
    rows.append(["DRC_RED_ECN drops (\"DRC eliminates drops\", stated on the mixed-speed system)", "0",
                 f"{_m(res, drc, 'drops', 0)} per run", _b(judge_count(res.values(SHIPPED, drc, "drops"), 0))])
    return md_table(["claim (seed 001, simple topology)", "seed", f"dcnsim (full size, {_seeds_text(res)}, mean ± 95% CI; change of the means, \\* significant)", "verdict"], rows)


def _kb(buf: str) -> str:
    return buf.replace("KB", " KB")


@block("seed001_mixed:claims_full")
def _mixed_claims(ctx: Context) -> str:
    res = ctx.results("seed001_mixed", "full")
    rows = []
    for buf in ("64KB", "32KB"):
        seed = SEED_MIXED_DROPS[buf]
        for v in TCP_VARIANTS:
            xs = res.values(SHIPPED, f"{v} {buf}", "drops")
            rows.append([f"{_kb(buf)} per port: {v} drops", f"{seed[v]:,}", f"{_m(res, f'{v} {buf}', 'drops', 0)} (seeds: {min(xs):,.0f}..{max(xs):,.0f})",
                         _b(judge_count(xs, seed[v]))])
        src = seed["NoFC_RED_ECN"] / seed["NoFC_RED"] - 1
        c = _ch(res, f"NoFC_RED {buf}", f"NoFC_RED_ECN {buf}", "drops")
        ratio = _mu(res, f"NoFC_RED_ECN {buf}", "drops") / _mu(res, f"NoFC_RED {buf}", "drops")
        seed_ratio = seed["NoFC_RED_ECN"] / seed["NoFC_RED"]
        rows.append([f"{_kb(buf)} per port: L2-CI (ECN) cuts RED's drops (follows from the seed's counts)", f"{100 * src:+.1f}% (ECN / RED = {seed_ratio:.3f})",
                     f"{fmt_change(c)} (ECN / RED = {ratio:.3f}, {ratio / seed_ratio:.1f}x the seed's)", _b(judge(c, src))])
    # "maintains performance even with small switch buffers"
    c32 = _ch(res, "NoFC_RED_ECN 64KB", "NoFC_RED_ECN 32KB", "gbps")
    rows.append(['"L2-CI/ECN maintains performance even with small switch buffers" (32 KB against 64 KB per port)', "no loss of throughput",
                 f"NoFC_RED_ECN 64 KB -> 32 KB: {_arrow(res, 'NoFC_RED_ECN 64KB', 'NoFC_RED_ECN 32KB', 'gbps', 2, 'Gbit/s')}; "
                 f"mean response {_arrow(res, 'NoFC_RED_ECN 64KB', 'NoFC_RED_ECN 32KB', 'resp_mean_us', 1, 'us')}",
                 _b("reproduces" if not c32.significant else ("not reproduced (throughput falls)" if c32.rel < 0 else "reproduces"))])
    c = _ch(res, "NoFC_RED 32KB", "NoFC_RED_ECN 32KB", "gbps")
    rows.append(["(the same at 32 KB, against RED dropping)", "higher", f"NoFC_RED -> NoFC_RED_ECN, 32 KB: {_arrow(res, 'NoFC_RED 32KB', 'NoFC_RED_ECN 32KB', 'gbps', 2, 'Gbit/s')}",
                 _b(judge_direction(c, 1))])
    for buf in ("64KB", "32KB"):
        c = _ch(res, f"NoFC_RED_ECN {buf}", f"DRC_RED_ECN {buf}", "resp_max_ms")
        rows.append([f'"Addition of DRC eliminates drops and response spikes" ({_kb(buf)}): the longest response', "lower",
                     f"NoFC_RED_ECN -> DRC_RED_ECN: {_arrow(res, f'NoFC_RED_ECN {buf}', f'DRC_RED_ECN {buf}', 'resp_max_ms', 1, 'ms')}; "
                     f"p99 {_arrow(res, f'NoFC_RED_ECN {buf}', f'DRC_RED_ECN {buf}', 'resp_p99_us', 0, 'us')}",
                     _b(judge_direction(c, -1))])
    return md_table(["claim (seed 001, mixed link speeds)", "seed", f"dcnsim (full size, {_seeds_text(res)}, mean ± 95% CI)", "verdict"], rows)


# --------------------------------------------------------------------------- L2 generators

L2_COLS = [("throughput (Gbit/s)", "gbps", 1), ("mean frame latency (us)", "latency_us", 1), ("drops", "drops", 0), ("DRC frames", "drc_frames", 0),
           ("PAUSE frames", "pfc_frames", 0)]


def peak_text(res: Results, scenario: str, fabric: str = "4 MB queues") -> str:
    """The fabric's measured peak (case :data:`PEAK`) against the seed's stated one."""
    from .core import scenario_dict
    from .metrics import quantity

    want = quantity(scenario_dict(scenario)["source"]["peak_throughput"], "bps") / 1e9
    got = mean_ci(res.values(PEAK, "", "gbps"))
    drops = max(res.values(PEAK, "", "drops"))
    return (f"The fabric's peak (the same workload, {fabric}, no mechanism): {fmt_mean(got, 1)} Gbit/s against the seed's {want:g} "
            f"({100 * got[0] / want:.1f}%; {drops:,.0f} drops in the worst run).")


def l2_table(res: Results, scenario: str, mechs: Sequence[str] = L2_MECHS, fabric: str = "4 MB queues") -> str:
    rows = [[f"{m} {s}"] + [_m(res, f"{m} {s}", k, d) for _, k, d in L2_COLS] for s in L2_SIZES for m in mechs]
    sec = res.run(SHIPPED, res.variants(SHIPPED)[0], res.seeds[0])["sim_time_s"]
    peak = f" {peak_text(res, scenario, fabric)}" if PEAK in res.cases() else ""
    return (md_table(["variant", *[h for h, _, _ in L2_COLS]], rows)
            + f"\n\nMean ± 95% CI over {_seeds_text(res)}, {1e3 * sec:g} ms each; run time {_runtime(res)}.{peak}")


@block("seed001_backplane:table_full")
def _backplane_table(ctx: Context) -> str:
    return l2_table(ctx.results("seed001_backplane", "full"), "seed001_backplane")


@block("seed001_multistage:table_full")
def _multistage_table(ctx: Context) -> str:
    return l2_table(ctx.results("seed001_multistage", "full"), "seed001_multistage")


VOQ_PEAK = "VOQ switches with 4 MB inputs"


@block("seed001_backplane_voq:table_full")
def _backplane_voq_table(ctx: Context) -> str:
    return l2_table(ctx.results("seed001_backplane_voq", "full"), "seed001_backplane_voq", VOQ_MECHS, VOQ_PEAK)


@block("seed001_multistage_voq:table_full")
def _multistage_voq_table(ctx: Context) -> str:
    return l2_table(ctx.results("seed001_multistage_voq", "full"), "seed001_multistage_voq", VOQ_MECHS, VOQ_PEAK)


def _drops_text(res: Results, variant: str) -> str:
    """Where ``variant`` (a mechanism; every size) dropped nothing in any run, and what it
    dropped elsewhere."""
    lossless = [s.replace("KB", "") for s in L2_SIZES if all(x == 0 for x in res.values(SHIPPED, f"{variant} {s}", "drops"))]
    lossy = [f"{s.replace('KB', ' KB')} ({_mu(res, f'{variant} {s}', 'drops'):,.0f} per run)" for s in L2_SIZES
             if not all(x == 0 for x in res.values(SHIPPED, f"{variant} {s}", "drops"))]
    if not lossless:
        return f"drops at every size: {', '.join(lossy)}"
    return f"no drop in any run at {', '.join(lossless)} KB" + (f"; drops at {', '.join(lossy)}" if lossy else "")


@block("seed001_l2_voq:claims_full")
def _l2_voq_claims(ctx: Context) -> str:
    """The seed's L2 claims on input-buffered switches, in both DRC readings, beside the
    output-queued studies' answers."""
    rows = []
    for study, oq, claim in (("seed001_backplane_voq", "seed001_backplane", '"Directional Mechanisms reduce HOL Blocking at Tx Ports" (backplane)'),
                             ("seed001_multistage_voq", "seed001_multistage", '"Directional Mechanisms also show benefit in Multi-stage Topologies"')):
        res, out = ctx.results(study, "full"), ctx.results(oq, "full")
        for drc in VOQ_MECHS[1:]:
            text, vs = _per_size(res, "802.3x", drc, "gbps")
            rows.append([f"{claim}: throughput, {drc} over 802.3x, VOQ", "higher", text, _b(_sizes_where(vs, 1))])
            text, vs = _per_size(res, "802.3x", drc, "latency_us")
            rows.append([f"{claim}: mean frame latency, {drc} over 802.3x, VOQ", "lower", text, _b(_sizes_where(vs, -1))])
            rows.append([f"(ours) {drc} is lossless ({study.split('_')[1]}, VOQ)", "", _drops_text(res, drc), ""])
        rows.append([f"(ours) DRC is lossless ({oq.split('_')[1]}, output-queued: `{oq}`)", "", _drops_text(out, "DRC"), ""])
    n = len(ctx.used[0].seeds) if ctx.used else 0
    return md_table(["claim (seed 001, L2 generators, input-buffered switches)", "seed", f"dcnsim (full size, {n} seeds; change of the means per buffer, \\* significant)", "verdict"], rows)


@block("seed001_l2_voq:architecture_full")
def _l2_voq_against_oq(ctx: Context) -> str:
    """What the input-buffered switch costs: each mechanism's throughput on VOQ switches
    against the output-queued study's at each size."""
    rows = []
    for study, oq in (("seed001_backplane_voq", "seed001_backplane"), ("seed001_multistage_voq", "seed001_multistage")):
        res, out = ctx.results(study, "full"), ctx.results(oq, "full")
        for m in ("802.3x", "DRC"):
            cells = []
            for size in L2_SIZES:
                c = change(out.values(SHIPPED, f"{m} {size}", "gbps"), res.values(SHIPPED, f"{m} {size}", "gbps"))
                cells.append(f"{fmt_num(c.base[0], 1)} -> {fmt_num(c.other[0], 1)} ({fmt_change(c)})")
            rows.append([f"{study.split('_')[1]}, {m}", *cells])
        for label, case in (("peak fabric (4 MB)", PEAK), ("peak fabric (4 MB), iSLIP 4 iterations", PEAK_ISLIP4)):
            peak = change(out.values(PEAK, "", "gbps"), res.values(case, "", "gbps"))
            rows.append([f"{study.split('_')[1]}, {label}", f"{fmt_num(peak.base[0], 1)} -> {fmt_num(peak.other[0], 1)} ({fmt_change(peak)})", "", "", "", ""])
    return md_table(["throughput (Gbit/s), output-queued -> VOQ", *[s.replace("KB", " KB") for s in L2_SIZES]], rows)


@block("seed001_l2_voq:shared_full")
def _l2_voq_shared(ctx: Context) -> str:
    """DRC with each input's own buffer (the shipped reading) against the inputs pooling
    the same memory (case :data:`SHARED_INPUTS`), per fabric, reading and size."""
    rows = []
    for study in ("seed001_backplane_voq", "seed001_multistage_voq"):
        res = ctx.results(study, "full")
        for m in ("DRC", "DRC+input"):
            for size in L2_SIZES:
                v = f"{m} {size}"
                cells = []
                for key, digits in (("gbps", 1), ("latency_us", 1)):
                    c = change(res.values(SHIPPED, v, key), res.values(SHARED_INPUTS, v, key))
                    cells.append(f"{fmt_num(c.base[0], digits)} -> {fmt_num(c.other[0], digits)} ({fmt_change(c)})")
                for key in ("drops", "drc_frames"):
                    own, pooled = (mean_ci(res.values(case, v, key))[0] for case in (SHIPPED, SHARED_INPUTS))
                    cells.append(f"{own:,.0f} -> {pooled:,.0f}")
                rows.append([f"{study.split('_')[1]}, {m}, {size.replace('KB', ' KB')}", *cells])
    return md_table(["variant (each input's own buffer -> one pool)", "throughput (Gbit/s)", "mean frame latency (us)", "drops per run", "DRC frames per run"], rows)


def _per_size(res: Results, a: str, b: str, key: str) -> Tuple[str, List[str]]:
    parts, verdicts = [], []
    for s in L2_SIZES:
        c = _ch(res, f"{a} {s}", f"{b} {s}", key)
        parts.append(f"{s.replace('KB', ' KB')} {fmt_change(c)}")
        verdicts.append((s, c))
    return "; ".join(parts), verdicts


def _sizes_where(verdicts, sign: int) -> str:
    ok = [s.replace("KB", "") for s, c in verdicts if judge_direction(c, sign).startswith("reproduces")]
    if len(ok) == len(verdicts):
        return "reproduces (direction, every size)"
    if not ok:
        return "not reproduced"
    return f"at {', '.join(ok)} KB only"


@block("seed001_l2:claims_full")
def _l2_claims(ctx: Context) -> str:
    rows = []
    for study, claim in (("seed001_backplane", '"Directional Mechanisms reduce HOL Blocking at Tx Ports" (backplane)'),
                         ("seed001_multistage", '"Directional Mechanisms also show benefit in Multi-stage Topologies"')):
        res = ctx.results(study, "full")
        text, vs = _per_size(res, "802.3x", "DRC", "gbps")
        rows.append([f"{claim}: throughput, DRC over 802.3x", "higher", text, _b(_sizes_where(vs, 1))])
        text, vs = _per_size(res, "802.3x", "DRC", "latency_us")
        rows.append([f"{claim}: mean frame latency, DRC over 802.3x", "lower", text, _b(_sizes_where(vs, -1))])
        text, vs = _per_size(res, "802.3x", "RED", "gbps")
        drops = ", ".join(f"{_mu(res, f'RED {s}', 'drops'):,.0f}" for s in L2_SIZES)
        rows.append([f'RED "reduces blocking with random drops" ({study.split("_")[1]}): throughput, RED over 802.3x', "higher",
                     f"{text}; RED's drops per run at 16-256 KB: {drops}", _b(_sizes_where(vs, 1))])
        rows.append([f"(ours, not the seed's) DRC is lossless ({study.split('_')[1]})", "", _drops_text(res, "DRC"), ""])
    n = len(ctx.used[0].seeds) if ctx.used else 0
    return md_table(["claim (seed 001, L2 generators)", "seed", f"dcnsim (full size, {n} seeds; change of the means per buffer, \\* significant)", "verdict"], rows)


# --------------------------------------------------------------------------- QCN

QCN_COLS = [("mean queue (KB)", "queue_kb", 1), ("p5 (KB)", "p5_kb", 1), ("p95 (KB)", "p95_kb", 1), ("goodput (Gbit/s)", "gbps", 2),
            ("Jain index", "jain", 3), ("CNMs", "cnms", 0), ("drops", "drops", 0)]


@block("seed001_qcn:table_full")
def _qcn_table(ctx: Context) -> str:
    res = ctx.results("seed001_qcn", "full")
    rows = [[v] + [_m(res, v, k, d) for _, k, d in QCN_COLS] for v in QCN_VARIANTS]
    sec = res.run(SHIPPED, QCN_VARIANTS[0], res.seeds[0])["sim_time_s"]
    return (md_table(["variant", *[h for h, _, _ in QCN_COLS]], rows)
            + f"\n\nMean ± 95% CI over {_seeds_text(res)}, {sec:g} s each; queue and rates after 10 ms; run time {_runtime(res)}.")


def _qv(res: Results, case: str, v: str, key: str) -> List[float]:
    return res.values(case, v, key)


@block("seed001_qcn:claims_full")
def _qcn_claims(ctx: Context) -> str:
    res = ctx.results("seed001_qcn", "full")
    rows = []
    for v, payload in (("UDP, QCN", 1.0), ("Reno, QCN", 1460 / 1500)):
        q = mean_ci(_qv(res, SHIPPED, v, "queue_kb"))
        drops = _qv(res, SHIPPED, v, "drops")
        rows.append([
            f"QCN holds the queue near its set point Q_eq at full utilisation, without drops ({v}; the QCN design: its fluid model's fixed point is "
            f"Q = Q_eq; full: every run within {100 * (1 - FULL_UTIL):.0f}% of the payload's line rate)",
            f"{Q_EQ / 1e3:g} KB",
            f"mean queue {fmt_mean(q, 1)} KB (p5-p95 {_m(res, v, 'p5_kb', 1)} - {_m(res, v, 'p95_kb', 1)}), goodput {_m(res, v, 'gbps', 2)} Gbit/s "
            f"(the payload's line rate: {10 * payload:.2f}), drops {max(drops):,.0f} in the worst run",
            _b(judge_count(_qv(res, SHIPPED, v, "queue_kb"), Q_EQ / 1e3) if max(drops) == 0 and min(_qv(res, SHIPPED, v, "gbps")) >= FULL_UTIL * 10 * payload
               else "not reproduced (drops or not full utilisation)"),
        ])
    for label, q in QCN_CASES[1:]:
        target = float(q.rstrip("B")) / 1e3
        xs = _qv(res, label, "UDP, QCN", "queue_kb")
        rows.append([f"... and the queue follows Q_eq when it is moved ({label}, UDP)", f"{target:g} KB", f"mean queue {fmt_mean(mean_ci(xs), 1)} KB; Reno {fmt_mean(mean_ci(_qv(res, label, 'Reno, QCN', 'queue_kb')), 1)} KB",
                     _b(judge_count(xs, target))])
    v = "UDP, no QCN"
    rows.append(["Without congestion management, line-rate L2 sources fill the buffer and drop", "full buffer, drops",
                 f"mean queue {_m(res, v, 'queue_kb', 1)} KB of 2,000, {_m(res, v, 'drops', 0)} frames dropped per run", "as expected"])
    return md_table(["claim", "design", f"dcnsim (full size, {_seeds_text(res)}, mean ± 95% CI)", "verdict"], rows)


@block("seed001_qcn:fairness_full")
def _qcn_fair(ctx: Context) -> str:
    res = ctx.results("seed001_qcn", "full")
    v = "UDP, no QCN"
    top = res.values(SHIPPED, v, "top_share")
    clean = res.values(SHIPPED, v, "flows_without_drops")
    jq = [x for w in ("UDP, QCN", "Reno, QCN") for x in res.values(SHIPPED, w, "jain")]
    rng = lambda xs, fmt: fmt.format(min(xs)) if fmt.format(min(xs)) == fmt.format(max(xs)) else f"{fmt.format(min(xs))}-{fmt.format(max(xs))}"
    return (f"Without QCN Jain's index is {_m(res, v, 'jain', 3)}: the largest flow carries {rng([100 * x for x in top], '{:.1f}')}% of the goodput "
            f"and {rng(clean, '{:.0f}')} of the 10 flows drop nothing (each of {_seeds_text(res)}). "
            f"With QCN the per-flow shares give Jain {min(jq):.3f}-{max(jq):.3f} (UDP and Reno, every seed).")


# --------------------------------------------------------------------------- what changed

#: the numbers docs/reproductions.md quoted before these studies (bench/seed001.py and
#: bench/seed001_qcn.py, means over seeds 1-5, engines up to commit d7f3986 / c0e815a)
OLD_COMMIT = "d7f3986"
OLD_QCN_COMMIT = "c0e815a"
OLD = {
    ("seed001_simple", "NoFC_RED", "gbps"): 15.57,
    ("seed001_simple", "NoFC_RED", "resp_mean_us"): 122.8,
    ("seed001_simple", "NoFC_RED", "resp_p99_us"): 267,
    ("seed001_simple", "NoFC_RED", "drops"): 529,
    ("seed001_simple", "NoFC_RED_ECN", "resp_mean_us"): 121.7,
    ("seed001_simple", "NoFC_RED_ECN", "resp_p99_us"): 553,
    ("seed001_simple", "NoFC_RED_ECN", "drops"): 62,
    ("seed001_mixed", "NoFC_RED 64KB", "drops"): 1209,
    ("seed001_mixed", "NoFC_RED_ECN 64KB", "drops"): 228,
    ("seed001_mixed", "NoFC_RED 32KB", "drops"): 1160,
    ("seed001_mixed", "NoFC_RED_ECN 32KB", "drops"): 806,
    ("seed001_mixed", "NoFC_RED_ECN 32KB", "gbps"): 17.70,
    ("seed001_backplane", "DRC 16KB", "drops"): 1628,
    ("seed001_backplane", "RED 16KB", "drops"): 66271,
    ("seed001_qcn", "UDP, no QCN", "jain"): 0.200,
    ("seed001_qcn", "UDP, QCN", "queue_kb"): 25.1,
    ("seed001_qcn", "Reno, QCN", "queue_kb"): 24.9,
}


def _old_new(ctx: Context, study: str, variant: str, key: str, digits: int) -> str:
    res = ctx.results(study, "full")
    new = _mu(res, variant, key)
    return f"{fmt_num(OLD[(study, variant, key)], digits)} -> {fmt_num(new, digits)}"


@block("seed001:what_changed_full")
def _what_changed(ctx: Context) -> str:
    on = lambda s, v, k, d: _old_new(ctx, s, v, k, d)
    simple, mixed = "seed001_simple", "seed001_mixed"
    sres = ctx.results(simple, "full")
    walls = " / ".join(f"{_wall(ctx.results(s, 'full')):.0f}" for s in (simple, mixed, "seed001_backplane", "seed001_multistage"))
    lines = [
        f"* **Numbers now rendered, not typed**: means ± 95% CI over seeds 1-5 from `docs/results/seed001_*.full.json`, where the earlier tables "
        f"gave mean (min..max) typed from `bench/seed001.py` at commit {OLD_COMMIT} ({OLD_QCN_COMMIT} for QCN). Engine changes since "
        "(deliberate model changes, each listed in the log with the fingerprints it moved; not traced one by one here) moved single runs a little: "
        f"simple topology, NoFC_RED throughput {on(simple, 'NoFC_RED', 'gbps', 2)} Gbit/s, mean response {on(simple, 'NoFC_RED', 'resp_mean_us', 1)} us, "
        f"p99 {on(simple, 'NoFC_RED', 'resp_p99_us', 0)} us, drops {on(simple, 'NoFC_RED', 'drops', 0)}; NoFC_RED_ECN mean {on(simple, 'NoFC_RED_ECN', 'resp_mean_us', 1)} us, "
        f"p99 {on(simple, 'NoFC_RED_ECN', 'resp_p99_us', 0)} us, drops {on(simple, 'NoFC_RED_ECN', 'drops', 0)}; backplane DRC at 16 KB "
        f"{on('seed001_backplane', 'DRC 16KB', 'drops', 0)} drops, RED at 16 KB {on('seed001_backplane', 'RED 16KB', 'drops', 0)}.",
        f"* **L2-CI on the simple topology: \"reproduces\" -> \"partly\".** It was judged on throughput and drops; it is now judged on the seed's "
        f"figure, throughput and response time: the p99 response time doubles from NoFC_RED to NoFC_RED_ECN ({fmt_num(_mu(sres, 'NoFC_RED', 'resp_p99_us'), 0)} -> "
        f"{fmt_num(_mu(sres, 'NoFC_RED_ECN', 'resp_p99_us'), 0)} us today), because RED's drops park most of server 1's entries in 200 ms timeouts and ECN "
        "does not (above). The mean is judged censored (every entry, the docs' convention), which Little's law ties to the throughput.",
        f"* **Mixed speeds: \"reproduces the size of RED's count\" -> each count judged against the seed's** by the size rule (not reproduced "
        f"but the zeros); the counts moved little: NoFC_RED {on(mixed, 'NoFC_RED 64KB', 'drops', 0)} at 64 KB and {on(mixed, 'NoFC_RED 32KB', 'drops', 0)} "
        f"at 32 KB, NoFC_RED_ECN {on(mixed, 'NoFC_RED_ECN 64KB', 'drops', 0)} and {on(mixed, 'NoFC_RED_ECN 32KB', 'drops', 0)}. ECN's cut at 32 KB: "
        "\"partly\" -> \"direction only\". \"Maintains performance even with small switch buffers\": \"partly\" -> \"not reproduced\" against its own "
        f"64 KB throughput (NoFC_RED_ECN at 32 KB {on(mixed, 'NoFC_RED_ECN 32KB', 'gbps', 2)} Gbit/s), \"reproduces\" against RED dropping.",
        "* **L2 fabrics: one verdict per buffer size.** \"Less latency than 802.3x at small buffers\" was a single \"reproduces\" with \"equal from "
        "64 KB\"; today's changes are significant at most sizes, so the table names the sizes where DRC's latency is lower. \"DRC never drops at "
        "16-32 KB\" (\"partly\") is ours, not the seed's (the seed states DRC's zero drops for the mixed-speed system), and is now a row without a verdict.",
        f"* **QCN.** The queue under QCN {on('seed001_qcn', 'UDP, QCN', 'queue_kb', 1)} KB (UDP), {on('seed001_qcn', 'Reno, QCN', 'queue_kb', 1)} KB (Reno); "
        f"the baseline's Jain index {on('seed001_qcn', 'UDP, no QCN', 'jain', 3)} (one source now takes every freed slot, two did); "
        "the set-point sweep (Q_eq halved and doubled) is now part of the study instead of a test's numbers.",
        "* **Run time.** The earlier tables quoted 40 / 138 / 14 / 15 s for 5 seeds of simple / mixed / backplane / multi-stage (summed over the "
        f"runs, at {OLD_COMMIT}); these results record {walls} "
        "CPU-seconds (the same runs, the multi-stage and backplane studies with their peak-fabric case added), made on a 2-CPU machine shared "
        "with other jobs: not a timing to compare.",
    ]
    return "\n".join(lines)


@block("seed001_mixed:why_full")
def _mixed_why(ctx: Context) -> str:
    """Where the mixed-speed system drops: tail drops (the port's buffer full) against RED's
    own, the busiest port, its queue and CE share, and the entries parked in timeouts."""
    res = ctx.results("seed001_mixed", "full")
    rows = []
    for b in ("64KB", "32KB"):
        for v in ("NoFC_RED", "NoFC_RED_ECN", "DRC_RED_ECN"):
            w = f"{v} {b}"
            peers = sorted({str(res.run(SHIPPED, w, s)["bn_peer"]) for s in res.seeds})
            rows.append([w, _m(res, w, "drops_buffer_full", 0), _m(res, w, "drops_aqm", 0), ", ".join(peers), _m(res, w, "bn_util", 3),
                         _m(res, w, "bn_depth_kb", 1), _m(res, w, "bn_marked_pct", 1), _m(res, w, "stalled_slots", 1), _m(res, w, "resp_censored_us", 1)])
    head = ["variant", "tail drops (buffer full)", "RED's drops", "busiest switch port (towards)", "its busy fraction", "its mean queue (KB)",
            "CE share of its frames (%)", "entries waiting in a retransmission timeout (time mean, of 64 in flight)", "mean response, censored (us)"]
    return md_table(head, rows) + f"\n\nMean ± 95% CI over {_seeds_text(res)}; the busiest port is the one that sent the most over its capacity."
