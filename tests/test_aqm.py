"""AQMs of `switch.aqm` end to end: PI2 holds the queue delay at its target whatever the
load (seed 002's Classic AQM, RFC 9332's controller), and RED as tc configures it keeps the
average queue between its thresholds. The controllers' arithmetic is checked beside the
code (switch/aqm/pi2.rs, switch/aqm/red.rs)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

import dcnsim
from dcnsim.api import shipped_scenarios

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

RATE = 40e6  # seed 002's access bottleneck
# seed 002's path as its scenarios build it: 8 ms of unloaded RTT (tests/test_source_fidelity.py)
SEED002 = tomllib.loads(shipped_scenarios()["seed002_dualq"].read_text())["topology"]
BASE_RTT = 8e-3


def _bottleneck(tmp_path: Path, transports: List[str], aqm: str, ecn: bool = True, extra: str = "", seconds: int = 60):
    """One flow per entry of `transports` (host i sends with transports[i]) over seed 002's
    path: a 40 Mbit/s bottleneck, base RTT 8 ms, `aqm` on every switch queue. The run and
    the bottleneck's rows, one per queue."""
    n = len(transports)
    specs = ", ".join(f'{{ src = {i}, dst = {n}, size = "10GB", transport = "{t}" }}' for i, t in enumerate(transports))
    text = f"""
[scenario]
name = "aqm"
seed = 1
max_time = "{seconds}s"
[topology]
kind = "dumbbell"
senders = {n}
host_link = {{ rate = "{SEED002['host_link']['rate']}", delay = "{SEED002['host_link']['delay']}" }}
bottleneck = {{ rate = "{SEED002['bottleneck']['rate']}", delay = "{SEED002['bottleneck']['delay']}" }}
[switch]
buffer = {{ queue = "1600000B" }}
{extra}
aqm = {aqm}
[transport]
kind = "reno"
ecn = {str(ecn).lower()}
min_rto = "200ms"
[[workload]]
kind = "flows"
flows = [ {specs} ]
[metrics]
throughput_bin = "1s"
"""
    path = tmp_path / f"aqm_{'_'.join(transports)}_{ecn}.toml"
    path.write_text(text)
    r = dcnsim.run(str(path))
    p = r.ports
    return r, p[(p["node_name"] == "left") & (p["peer_name"] == "right")].set_index("queue")


def _dumbbell(tmp_path: Path, flows: int, aqm: str, ecn: bool = True, seconds: int = 60) -> Dict:
    """`flows` Reno flows through `aqm`: the bottleneck's time-averaged delay, bytes sent and
    sojourn statistics."""
    r, rows = _bottleneck(tmp_path, ["reno"] * flows, aqm, ecn, seconds=seconds)
    bn = rows.iloc[0]
    return {
        "result": r,
        "mean_delay_ms": float(bn["mean_depth_bytes"]) * 8 / RATE * 1e3,
        "tx": int(bn["tx_bytes"]),
        "sojourn_mean_ms": float(bn["sojourn_mean_ps"]) / 1e9,
        "sojourn_p99_ms": float(bn["sojourn_p99_ps"]) / 1e9,
    }


@pytest.mark.parametrize("flows,ecn", [(1, True), (4, True), (4, False)])
def test_pi2_holds_queue_delay_at_target(tmp_path, flows, ecn):
    """PI2 (target 15 ms, the Linux defaults) integrates the delay error until the queue's
    sojourn sits at the target: with 1 or 4 Reno flows, marked or dropped, the time-averaged
    queue over 60 s (the start-up included) is 15 ms +- 30%, and the link stays busy (above
    90% of 40 Mbit/s)."""
    m = _dumbbell(tmp_path, flows, '{ kind = "pi2" }', ecn)
    assert 10.5 <= m["mean_delay_ms"] <= 19.5, m["mean_delay_ms"]
    assert m["tx"] * 8 / 60 > 0.9 * RATE
    # the per-queue sojourn statistics agree with Little's law on the busy bottleneck (the
    # mean depth over the mean rate, the link busy throughout), and the p99 lies above the mean
    assert abs(m["sojourn_mean_ms"] / m["mean_delay_ms"] - 1) < 0.05, m
    assert m["sojourn_p99_ms"] > m["sojourn_mean_ms"], m


def test_red_seed_line_keeps_the_average_between_thresholds(tmp_path):
    """Seed 002's tc line (min 120 KB, max 360 KB, burst 220, ECN, 40 Mbit/s): 4 Reno flows
    with ECN keep the time-averaged queue between min and max (24-72 ms at 40 Mbit/s), with
    no drop (ECN marks instead) and the link busy."""
    aqm = ('{ kind = "red", limit = "1600000B", min = "120000B", max = "360000B", avpkt = "1000B", '
           'burst = 220, ecn = true, bandwidth = "40Mbps" }')
    m = _dumbbell(tmp_path, 4, aqm, True)
    assert 24 <= m["mean_delay_ms"] <= 72, m["mean_delay_ms"]
    assert m["result"].summary["packets_dropped"] == 0
    assert m["tx"] * 8 / 60 > 0.9 * RATE


def _mix(tmp_path: Path, aqm: str, extra: str = "", seconds: int = 60):
    """One Reno (classic ECN, ECT(0)) and one DCTCP (ECT(1)) flow over seed 002's 40 Mbit/s,
    8 ms path: their goodput (Mbit/s, after 10 s) and the bottleneck's rows."""
    r, bn = _bottleneck(tmp_path, ["reno", "dctcp"], aqm, True, extra, seconds)
    ts = r.timeseries
    late = ts[ts["bin_start_ps"] >= 10e12]
    rate = late.groupby("flow")["bytes"].sum() * 8 / (seconds - 10) / 1e6
    return r, float(rate[0]), float(rate[1]), bn


def test_dualpi2_window_ratio_follows_the_rate_laws(tmp_path):
    """RFC 9332's coupling k = 2 makes Reno's window 1.22 / sqrt(p'^2) = 1.22 / p' and, with
    the 2 / p law it assumes for DCTCP, DCTCP's 2 / (k p') = 1 / p': equal windows. Linux's
    DCTCP, with its CWR round trip, runs at sqrt(2) / p (tests/test_rate_laws.py, ns-3 alike),
    so its window is 0.71 / p' and the Reno / DCTCP window ratio 1.22 [0.92, 1.03] /
    (0.71 [0.94, 1.03]) = 1.54-1.89 (the laws' measured ranges); measured within 20% of that,
    each window = goodput x (base RTT + its queue's mean sojourn, by Little's law). The L
    queue's sojourn stays below the 1 ms step, the Classic queue's within 30% of 15 ms."""
    r, reno, dctcp, bn = _mix(tmp_path, '{ kind = "dualpi2" }', 'queues = 2\nscheduler = "dwrr"\nweights = [1, 9]')
    base = BASE_RTT
    soj_c = float(bn.loc[0, "mean_depth_bytes"]) * 8 / (reno * 1e6)
    soj_l = float(bn.loc[1, "mean_depth_bytes"]) * 8 / (dctcp * 1e6)
    ratio = reno * (base + soj_c) / (dctcp * (base + soj_l))
    lo = 1.22 * 0.92 / (math.sqrt(2) / 2 * 1.03)
    hi = 1.22 * 1.03 / (math.sqrt(2) / 2 * 0.94)
    assert 0.8 * lo <= ratio <= 1.2 * hi, (reno, dctcp, soj_c, soj_l, ratio, lo, hi)
    assert soj_l < 0.001 and abs(soj_c / 0.015 - 1) < 0.3, (soj_l, soj_c)
    assert r.summary["dualpi2_coupled_marks"] > 0 and reno + dctcp > 0.9 * RATE / 1e6


def test_single_red_queue_lets_dctcp_starve_reno(tmp_path):
    """Seed 002, slide 11: "DCTCP does not work on traditional RED-ECN": in one RED queue
    (the seed's tc line) DCTCP, which halves nothing on a mark, takes most of the link:
    Reno gets less than a fifth of DCTCP's rate (the seed's chart spans 0.01-10; with
    DualPI2 the windows are equal, above)."""
    aqm = ('{ kind = "red", limit = "1600000B", min = "120000B", max = "360000B", avpkt = "1000B", '
           'burst = 220, ecn = true, bandwidth = "40Mbps" }')
    _, reno, dctcp, _ = _mix(tmp_path, aqm)
    assert reno < 0.2 * dctcp, (reno, dctcp)


@pytest.fixture(scope="module")
def seed002() -> Dict[str, "dcnsim.Result"]:
    return {v: dcnsim.run("seed002_dualq_small", variant=v) for v in ("RED", "DualPI2", "DualQ 2015", "Coupled")}


def _per_flow(r: "dcnsim.Result") -> Dict[str, float]:
    ts = r.timeseries
    late = ts[ts["bin_start_ps"] >= 10e12]
    return (late.groupby("tag")["bytes"].sum() * 8 / 50 / 1e6).to_dict()


def test_seed002_red_starves_cubic_dualq_balances(seed002):
    """Seed 002 (slides 13, 26, 28), 1 drop-based Cubic + 1 DCTCP, 40 Mbit/s, 8 ms: under RED
    DCTCP starves Cubic (their ratio far below 1; the seed's RED chart reaches 0.01); RFC
    9332's DualPI2 (k = 2) gives equal windows, so at equal base RTT Cubic's rate is its RTT
    share below DCTCP's; the seed's DualQ (dualq2015: strict priority, coupling factor 8 for
    rate equality at a 1:5 RTT ratio) gives Cubic more than DualPI2 does. Every variant keeps
    the link busy. What is asserted is this order and RED's ratio under 0.2, a regression
    guard; the measured ratios and the verdicts on the seed's claims (equal rates under the
    DualQ and the coupled queue) are rendered from the results in docs/reproductions.md
    (blocks seed002_dualq:claims_full and seed002_dualq:detail_full)."""
    ratio = {}
    for v, r in seed002.items():
        rate = _per_flow(r)
        ratio[v] = rate["cubic"] / rate["dctcp"]
        assert rate["cubic"] + rate["dctcp"] > 0.9 * RATE / 1e6, (v, rate)
    assert ratio["RED"] < 0.2, ratio
    assert ratio["RED"] < ratio["DualPI2"] < ratio["DualQ 2015"], ratio


@pytest.mark.xfail(strict=True, reason="issue 34 part 7: with Linux's CWR round trip DCTCP runs at sqrt(2) / p, not "
                   "the 2 / p the seed's coupling factors assume, and on the 1 + 1 run the 2015 DualQ gives Cubic "
                   "more than twice DCTCP's rate; the measured ratios and the verdicts, 1 + 1 and over the flow-mix "
                   "grid, are rendered in docs/reproductions.md (block seed002_dualq:claims_full)")
def test_seed002_dualq_and_coupled_keep_the_ratio_near_1(seed002):
    """Seed 002 slides 21 and 28: the seed's DualQ keeps the Cubic / DCTCP ratio within 0.5-2,
    its single-queue coupled AQM ("DCTCP behaves exactly as Reno") within 30% of 1."""
    ratio = {v: _per_flow(r)["cubic"] / _per_flow(r)["dctcp"] for v, r in seed002.items()}
    assert 0.5 <= ratio["DualQ 2015"] <= 2.0, ratio
    assert 0.7 <= ratio["Coupled"] <= 1.3, ratio


def test_seed002_l_queue_delay_stays_low(seed002):
    """Seed 002: with the DualQ "the L queue's delay stays around a millisecond while
    Classic's stays near the 15 ms target" (RFC 9332's DualPI2): the L queue's mean sojourn
    (Little's law) under 1 ms, the Classic queue's within 30% of 15 ms; RED's single queue
    sits between its thresholds (24-72 ms of the average queue)."""
    r = seed002["DualPI2"]
    rate = _per_flow(r)
    p = r.ports
    bn = p[(p["node_name"] == "left") & (p["peer_name"] == "right")].set_index("queue")
    soj_l = float(bn.loc[1, "mean_depth_bytes"]) * 8 / (rate["dctcp"] * 1e6)
    soj_c = float(bn.loc[0, "mean_depth_bytes"]) * 8 / (rate["cubic"] * 1e6)
    assert soj_l < 0.001 and abs(soj_c / 0.015 - 1) < 0.3, (soj_l, soj_c)
    p = seed002["RED"].ports
    red = p[(p["node_name"] == "left") & (p["peer_name"] == "right")].iloc[0]
    assert 24 <= float(red["mean_depth_bytes"]) * 8 / RATE * 1e3 <= 72


def _rate_law_point(c_reno: float, c_dctcp: float, slope: int) -> Tuple[float, float]:
    """Where one Reno-like and one DCTCP flow settle under dualq2015 (switch/aqm/dualq2015.rs) at
    40 Mbit/s, base RTT 8 ms: the Classic delay q (s) at which Reno's c_reno / (R_C sqrt(p'^2))
    plus DCTCP's c_dctcp / (R_L 8 p') fill the link, with p' = q 2^slope / 2^32 ns, R_C =
    8 ms + q and R_L = 8 ms (the L queue near empty): q and the Reno / DCTCP rate ratio.
    Mathis' 1.22 and the probabilistic-marking DCTCP law's 2, times the constants measured
    in tests/test_rate_laws.py."""
    pkts = RATE / (8 * PACKET)
    s = 2**slope * 1e9 / 2**32
    reno = lambda q: c_reno / ((BASE_RTT + q) * s * q)
    dctcp = lambda q: c_dctcp / (BASE_RTT * 8 * s * q)
    lo, hi = 1e-6, 1.0
    for _ in range(100):
        q = (lo + hi) / 2
        lo, hi = (q, hi) if reno(q) + dctcp(q) > pkts else (lo, q)
    return q, reno(q) / dctcp(q)


def test_seed002_dualq2015_settles_where_the_rate_laws_put_it():
    """The seed's DualQ with its default slopes (S_r = 2, S_d = 5), 1 drop-based Cubic + 1
    DCTCP (seed002_dualq_small): the Classic queue's steady-state delay (sampled after 10 s,
    Little's law on Cubic's wire rate: the packets' sojourn, not depth / 40 Mbit/s, since
    strict priority drains the Classic queue at what L leaves) and the Cubic / DCTCP rate
    ratio lie where the rate laws meet the AQM, Reno's constant 1.22 x [0.92, 1.03] and
    DCTCP's sqrt(2) x [0.94, 1.03] (the ranges dcnsim and ns-3 give under a fixed-p marker,
    bench/peers/ns3/; Cubic is Reno in this regime), each within 20% outside the bracket
    _rate_law_point computes. The bracket and the measured values, with today's numbers,
    are rendered in docs/mechanisms.md (block seed002_dualq:mechanisms_dualq2015). The L
    queue's delay stays below 1 ms (slide 25: "zero Q latency"); Cubic sees drops and no
    mark, DCTCP marks and no drop."""
    s = tomllib.loads(shipped_scenarios()["seed002_dualq_small"].read_text())
    s["metrics"]["queue_sample_from"] = "10s"
    r = dcnsim.run(s, variant="DualQ 2015")
    rate = _per_flow(r)
    q = r.queues
    bn = q[(q["node_name"] == "left") & (q["port"] == 0)]
    depth = {int(i): float((g["depth_bytes"] * g["samples"]).sum() / g["samples"].sum()) for i, g in bn.groupby("queue")}
    wire = PACKET / (PACKET - 40)  # wire bytes per payload byte of a full segment
    soj_c = depth[0] * 8 / (rate["cubic"] * 1e6 * wire)
    soj_l = depth[1] * 8 / (rate["dctcp"] * 1e6 * wire)
    ratio = rate["cubic"] / rate["dctcp"]
    points = [_rate_law_point(1.22 * a, math.sqrt(2) * b, 2) for a in (0.92, 1.03) for b in (0.94, 1.03)]
    q_lo, q_hi = min(p[0] for p in points), max(p[0] for p in points)
    r_lo, r_hi = min(p[1] for p in points), max(p[1] for p in points)
    assert 0.8 * q_lo <= soj_c <= 1.2 * q_hi, (soj_c, q_lo, q_hi)
    assert 0.8 * r_lo <= ratio <= 1.2 * r_hi, (ratio, r_lo, r_hi)
    assert soj_l < 0.001, soj_l
    f = r.flows.set_index("tag")
    assert f.loc["cubic", "drops"] > 0 and f.loc["cubic", "ecn_marks"] == 0, f
    assert f.loc["dctcp", "drops"] == 0 and f.loc["dctcp", "ecn_marks"] > 0, f
    assert r.summary["dualq2015_coupled_marks"] > 0


def test_seed002_classic_ecn_is_one_key_away():
    """seed002_dualq's Cubic is drop-based (the seed's); `transport.ecn = true` makes it
    send ECT(0) while DCTCP keeps ECT(1): under the seed's DualQ Cubic's packets stay in
    the Classic queue, which now marks them (marks, no AQM drop there) and DCTCP's go to
    the L queue. 10 s."""
    s = tomllib.loads(shipped_scenarios()["seed002_dualq_small"].read_text())
    assert s["transport"]["ecn"] is False
    s["transport"]["ecn"] = True
    s["scenario"]["max_time"] = "10s"
    r = dcnsim.run(s, variant="DualQ 2015")
    f = r.flows.set_index("tag")
    assert f.loc["cubic", "ecn_marks"] > 0 and f.loc["dctcp", "ecn_marks"] > 0, f
    p = r.ports
    bn = p[(p["node_name"] == "left") & (p["peer_name"] == "right")].set_index("queue")
    # the flows count the marks that reached their receiver: those still queued at the end
    # are the queues' alone
    assert int(bn.loc[0, "drops_aqm"]) == 0 and int(bn.loc[0, "ecn_marks"]) >= int(f.loc["cubic", "ecn_marks"]), bn
    assert int(bn.loc[1, "ecn_marks"]) >= int(f.loc["dctcp", "ecn_marks"]) and int(bn.loc[1, "tx_bytes"]) > 0, bn


PACKET = 1500
BDP_PKTS = RATE * 8e-3 / 8 / PACKET  # 26.7 packets


def _queue_pdf_stats(variant: str) -> Dict[str, float]:
    """p5, mean and p95 (in packets) of the bottleneck queue's sampled pdf, steady state."""
    r = dcnsim.run("seed002_queue_pdf_small", variant=variant)
    q = r.queues
    # the bottleneck is the one queue that ever holds more than a packet
    deep = q[q["depth_bytes"] >= PACKET].groupby(["node", "port"])["samples"].sum()
    assert len(deep) == 1, f"one bottleneck expected, got {deep.to_dict()}"
    node, port = deep.index[0]
    h = q[(q["node"] == node) & (q["port"] == port)].sort_values("depth_bytes")
    centre = (h["depth_bytes"].to_numpy() + PACKET / 2) / PACKET
    w = h["samples"].to_numpy() / h["samples"].sum()
    cdf = w.cumsum()
    at = lambda p: float(centre[(cdf >= p).argmax()])
    return {"p5": at(0.05), "mean": float((centre * w).sum()), "p95": at(0.95)}


@pytest.fixture(scope="module")
def queue_pdfs() -> Dict[str, Dict[str, float]]:
    return {v: _queue_pdf_stats(v) for v in ["Reno, RED", "DCTCP, RED", "DCTCP, step"]}


def test_dctcp_step_keeps_the_queue_in_a_narrow_band(queue_pdfs):
    """Seed 002 slide 10 and DCTCP's analysis (Alizadeh et al., SIGCOMM 2010, sec. 3.3): one
    flow through a step at K packets oscillates between Q_max = K + N and Q_max - A with
    A = 1/2 sqrt(2 N (C RTT + K)) = 4.0 packets here (K = 5 + 1: the step marks a packet
    that finds more than 7500 B queued). Tolerance: one 1500 B bin on each side, two below."""
    s = queue_pdfs["DCTCP, step"]
    k, n = 6, 1
    amplitude = 0.5 * (2 * n * (BDP_PKTS + k)) ** 0.5
    q_max = k + n
    # one more bin below: Linux's CWR round trip spreads the cut and sometimes cuts again on
    # the ACK that ends it, so the trough goes deeper than the analysis's (engine test
    # dctcp_matches_the_papers_analysis, and ns-3)
    assert q_max - amplitude - 2 <= s["p5"] and s["p95"] <= q_max + 1, s
    assert 1 <= s["p95"] - s["p5"] <= amplitude + 2, s


def test_reno_red_queue_swings_with_the_sawtooth(queue_pdfs):
    """Seed 002 slide 9: Reno halves its window (BDP + Q) on a mark, so its queue swings by
    about (BDP + Q_max) / 2, a band more than five times DCTCP's (a regression guard; the
    measured bands are rendered in docs/reproductions.md, block seed002_queue_pdf:table_full).
    Tolerance: p5..p95 covers 60-100% of that swing."""
    s = queue_pdfs["Reno, RED"]
    swing = (BDP_PKTS + s["p95"]) / 2
    assert 0.6 * swing <= s["p95"] - s["p5"] <= swing, (s, swing)
    step = queue_pdfs["DCTCP, step"]
    assert s["p95"] - s["p5"] > 5 * (step["p95"] - step["p5"]), (s, step)


def test_dctcp_through_red_sits_where_its_rate_law_meets_red(queue_pdfs):
    """DCTCP through the seed's RED: its window sqrt(2) / p (the probabilistic-marking law with
    Linux's CWR round trip, tested in test_rate_laws.py) equals BDP + Q where RED marks with p = 0.02 (Q - 80) / 160 per packet
    (tc min 120000 B, max 360000 B, in 1500 B packets), or twice that with tc's uniformised
    spacing of marks: the queue settles at 119-146 packets, deep and narrow (the reason it
    starves Cubic in one RED queue). Tolerance: 10% outside that bracket."""
    s = queue_pdfs["DCTCP, RED"]

    def equilibrium(spacing: float) -> float:
        # (BDP + Q) * spacing * 0.02 (Q - 80) / 160 = sqrt(2)
        a = spacing * 0.02 / 160
        lo, hi = 80.0, 400.0
        for _ in range(60):
            mid = (lo + hi) / 2
            if (BDP_PKTS + mid) * a * (mid - 80) > math.sqrt(2):
                hi = mid
            else:
                lo = mid
        return lo

    low, high = equilibrium(2.0), equilibrium(1.0)
    assert 0.9 * low <= s["mean"] <= 1.1 * high, (s, low, high)
    reno = queue_pdfs["Reno, RED"]
    assert s["p95"] - s["p5"] < (reno["p95"] - reno["p5"]) / 3, (s, reno)


@pytest.mark.parametrize("at", ["enqueue", "dequeue"])
def test_a_fabric_only_marker_never_marks_a_downlink_to_a_host(at):
    """`switch.aqm.ports = "fabric"` (htsim's fabric for receiver-driven congestion control):
    on the UET incast the ToR's downlink to the receiver holds the deepest queue, and with
    "all" it marks most; with "fabric" it marks none while the other switch ports still do,
    at either marking point."""
    text = shipped_scenarios()["uet_incast_small"].read_text()
    marks = {}
    for ports in ("all", "fabric"):
        sc = tomllib.loads(text)
        sc["switch"]["aqm"].update(at=at, ports=ports)
        r = dcnsim.run(sc, variant="UET, no trimming")
        df = r.ports.to_pandas() if hasattr(r.ports, "to_pandas") else r.ports
        sw = df[~df["is_host"]]
        host_facing = sw["peer_name"].isin(df.loc[df["is_host"], "node_name"])
        marks[ports] = (int(sw.loc[host_facing, "ecn_marks"].sum()), int(sw.loc[~host_facing, "ecn_marks"].sum()))
        assert r.summary["flows_unfinished"] == 0
    assert marks["all"][0] > 100, marks
    assert marks["fabric"][0] == 0 and marks["fabric"][1] > 100, marks


def test_the_marked_ports_are_named_in_a_refusal():
    sc = tomllib.loads(shipped_scenarios()["uet_incast_small"].read_text())
    sc["switch"]["aqm"]["ports"] = "downlinks"
    with pytest.raises(Exception, match=r'switch\.aqm\.ports.*"downlinks".*"all", "fabric"'):
        dcnsim.run(sc, variant="UET, no trimming")
