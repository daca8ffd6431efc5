"""Reproductions of the Congestion Isolation studies of seed 000 (Congdon, IETF 101, 2018)
and seed 003 (Shen & Sun, IEEE 802.1, Jan 2018) at small scale.

Each test runs :func:`dcnsim.compare` on a shipped ``*_small`` scenario ("without CI" =
PFC + ECN with flows hashed by destination onto two queues, "CI" = PFC + CI) and checks the
*direction* of one claim of the seeds. The full-size studies, our numbers next to the
seeds' and the diagnosis of every difference are in docs/reproductions.md.

How a claim is judged. A 64-server run holds about 170 flows under 100 KB, and whether a
run has PFC victims at all depends on where its incast receiver lands, so one seed is not
evidence either way. Every statistical claim is therefore pooled over the same five seeds
(1..5, the first five, not selected): flows are pooled for FCT means, counters are summed.
A claim "CI lowers X" passes when the pooled CI value is at least 10% below the pooled
"without CI" value (``MARGIN``): a smaller difference is within what the seeds change. The
structural claims (queue 1 below XOFF, the latency increment) are checked on every run.

Claims our engine does not reproduce at this scale are ``xfail(raises=AssertionError, strict=True)`` with what
we observe and why; nothing was tuned to make a test pass (docs/reproductions.md lists
every choice and why it was made).

The runs go through one pool of two worker processes (the whole file: about 20 s on an
idle two-core machine, 45 s on a busy one).
"""

from __future__ import annotations

import concurrent.futures as cf
import copy
import multiprocessing
import tomllib
from importlib import resources
from typing import Any, Dict, List, Tuple

import numpy as np
import pandas as pd
import pytest

import dcnsim

SEEDS = (1, 2, 3, 4, 5)
#: "CI lowers X" means: pooled CI value <= MARGIN x pooled "without CI" value.
MARGIN = 0.9
BASE, CI = "without CI", "CI"
XOFF = 750_000  # bytes, seeds 000/003
MICE = 100_000  # the seeds' smallest FCT bin: flows < 100 KB
LATENCY_PS = 400_000  # seed 003: 400 ns static latency per switch

TWO_Q = "seed003_ci_2queue_small"
THREE_Q = "seed000_ci_3queue_small"
LOSSY = "seed003_lossy_small"
LATENCY = "seed003_latency_small"
#: The 2-queue study with the servers numbered ToR by ToR (see ``by_tor``).
TWO_Q_BY_TOR = "seed003_ci_2queue_small (servers by ToR)"

FLOW_COLS = ["src", "dst", "size_bytes", "start_ps", "fct_ps", "ideal_fct_ps", "finished", "tag", "paused"]


def shipped(name: str) -> Dict[str, Any]:
    """A shipped scenario as a dict."""
    text = resources.files("dcnsim").joinpath("scenarios", f"{name}.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def by_tor(sc: Dict[str, Any]) -> Dict[str, Any]:
    """The same study with clos2's servers numbered ToR by ToR (``placement = "by_tor"``)
    instead of interleaved over the ToRs: the clusters then sit inside one ToR each and the
    incast sets on the last ToRs, so PFC's congestion trees seldom cross the clusters'
    paths. The seeds do not say how their servers were placed."""
    sc = copy.deepcopy(sc)
    assert sc["topology"]["kind"] == "clos2"
    sc["topology"]["placement"] = "by_tor"
    return sc


def _job(label: str, scenario: Any, seed: int) -> Tuple[str, int, Dict[str, Any]]:
    """One comparison (run in a worker process): its table and, per variant, the summary,
    the flows and the switch-port rows of the ports table."""
    cmp = dcnsim.compare(scenario, seed=seed, jobs=1)
    out: Dict[str, Any] = {"table": cmp.table(), "variants": {}}
    for name, r in cmp.results.items():
        ports = r.ports
        out["variants"][name] = {
            "summary": {k: v for k, v in r.summary.items() if not isinstance(v, (list, dict))},
            # "paused" and "pfc_tx_frames" are PFC's columns: absent from runs without PFC
            "flows": r.flows[[c for c in FLOW_COLS if c in r.flows]].copy(),
            "switch_ports": ports[~ports["is_host"].astype(bool)][
                [c for c in ("node", "port", "queue", "max_depth_bytes", "pfc_tx_frames") if c in ports]
            ].copy(),
        }
    return label, seed, out


@pytest.fixture(scope="module")
def runs() -> Dict[str, Dict[int, Dict[str, Any]]]:
    """Every comparison this file needs, run once: {label: {seed: job output}}."""
    jobs: List[Tuple[str, Any, int]] = []
    for name in (TWO_Q, THREE_Q, LOSSY):
        jobs += [(name, name, s) for s in SEEDS]
    jobs.append((LATENCY, LATENCY, 1))
    jobs += [(TWO_Q_BY_TOR, by_tor(shipped(TWO_Q)), s) for s in SEEDS]
    out: Dict[str, Dict[int, Dict[str, Any]]] = {}
    ctx = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(max_workers=2, mp_context=ctx) as pool:
        for fut in cf.as_completed([pool.submit(_job, *j) for j in jobs]):
            label, seed, res = fut.result()
            out.setdefault(label, {})[seed] = res
    return out


# ------------------------------------------------------------------------- pooled metrics


def pooled_flows(runs, label: str, variant: str) -> pd.DataFrame:
    return pd.concat([runs[label][s]["variants"][variant]["flows"] for s in SEEDS], ignore_index=True)


def mice_mean_fct_us(runs, label: str, variant: str) -> float:
    f = pooled_flows(runs, label, variant)
    m = f[(f["size_bytes"] < MICE) & f["finished"].astype(bool)]
    assert len(m) > 500, "too few mice to judge"
    return float(m["fct_ps"].mean() / 1e6)


def summed(runs, label: str, variant: str, key: str) -> float:
    return float(sum(runs[label][s]["variants"][variant]["summary"][key] for s in SEEDS))


def pooled_loss_rate(runs, label: str, variant: str) -> float:
    return summed(runs, label, variant, "data_packets_dropped") / summed(runs, label, variant, "data_packets_sent")


def _lowers(base: float, ci: float) -> bool:
    return ci <= MARGIN * base


# ------------------------------------------------------------------------------ the claims


def test_lossless_runs_lose_nothing_and_finish_their_small_flows(runs):
    """PFC keeps the lossless studies lossless and deadlock-free; the only flows a run may
    leave unfinished at max_time are large background flows (a CI run can slow one of them
    down to well below its ideal rate, see the elephants test)."""
    for label in (TWO_Q, THREE_Q, TWO_Q_BY_TOR):
        for s in SEEDS:
            for v in (BASE, CI):
                sm = runs[label][s]["variants"][v]["summary"]
                assert sm["end_reason"] in ("completed", "max_time"), (label, s, v, sm["end_reason"])
                assert sm["data_packets_dropped"] == 0, (label, s, v)
                f = runs[label][s]["variants"][v]["flows"]
                left = f[~f["finished"].astype(bool)]
                assert (left["size_bytes"] > 10_000_000).all() and (left["tag"] == "background").all(), (label, s, v)
    # the lossy study does lose packets (otherwise its claim would be empty)
    for s in SEEDS:
        assert runs[LOSSY][s]["variants"][BASE]["summary"]["data_packets_dropped"] > 0


def test_ci_lowers_mice_fct_2queue(runs):
    """Seeds 000/003, 2-queue model: CI cuts the mean FCT of flows < 100 KB the most
    (seed 000: -63%). With the servers interleaved over the ToRs (the shipped placement)
    the incast's PFC congestion trees cross the clusters' paths and without CI many mice
    wait behind paused queues; with CI the incast is isolated and paused in the congested
    class only. A regression guard on the direction: the numbers are in
    docs/reproductions.md ("Small-scale versions", rendered from
    docs/results/seed003_ci_2queue.small.json by `dcnsim reproduce`)."""
    base, ci = mice_mean_fct_us(runs, TWO_Q, BASE), mice_mean_fct_us(runs, TWO_Q, CI)
    assert _lowers(base, ci), f"mice mean FCT without CI {base:.2f} us, CI {ci:.2f} us"


def test_ci_lowers_mice_fct_with_servers_by_tor(runs):
    """The same claim with the servers numbered ToR by ToR, as a sensitivity check: the
    clusters are then ToR-local and the incast sets sit on ToRs of their own, so there are
    few PFC victims to rescue, and CI still takes away the few there are (pooled over
    the five seeds; per seed the change is within the noise: docs/reproductions.md's
    small-scale table). A regression guard, not a claim of size."""
    base, ci = mice_mean_fct_us(runs, TWO_Q_BY_TOR, BASE), mice_mean_fct_us(runs, TWO_Q_BY_TOR, CI)
    assert _lowers(base, ci), f"mice mean FCT without CI {base:.2f} us, CI {ci:.2f} us"


def test_three_queue_model_improves_mice_less(runs):
    """Seed 000: with a strict-priority mice queue in both variants "the performance of the
    mice is not improved as much". The mice are never PFC victims in their own queue, so
    CI has little left to improve."""
    gain2 = 1 - mice_mean_fct_us(runs, TWO_Q, CI) / mice_mean_fct_us(runs, TWO_Q, BASE)
    gain3 = 1 - mice_mean_fct_us(runs, THREE_Q, CI) / mice_mean_fct_us(runs, THREE_Q, BASE)
    assert abs(gain3) < 0.1, f"3-queue mice FCT change {-gain3:+.1%}"
    assert gain3 < gain2, f"3-queue gain {gain3:.1%} vs 2-queue gain {gain2:.1%}"


def test_ci_lowers_pause_frames(runs):
    """Seed 000: CI reduces PAUSE frames (-84%, "switch model dependent") and XOFF time.
    The incast's own pauses at its receiver remain in both variants, so ours fall far less
    (a regression guard on the direction; the numbers: docs/reproductions.md, rendered
    from docs/results/)."""
    base, ci = summed(runs, TWO_Q, BASE, "pfc_frames"), summed(runs, TWO_Q, CI, "pfc_frames")
    assert _lowers(base, ci), f"PAUSE frames without CI {base:.0f}, CI {ci:.0f}"


def test_ci_keeps_the_non_congested_queue_below_xoff(runs):
    """Seed 003 "CI: Queue Depth": the max depth of the non-congested queue (queue 1) never
    exceeds the PFC XOFF threshold, in any switch egress port of any run."""
    for label in (TWO_Q, TWO_Q_BY_TOR, LATENCY):
        for s, res in runs[label].items():
            p = res["variants"][CI]["switch_ports"]
            q1 = p[p["queue"] == 1]
            assert len(q1) > 0
            assert int(q1["max_depth_bytes"].max()) <= XOFF, (label, s)
            # queue 1 did carry a standing queue (the claim is not empty): isolation
            # starts above 10 KB, and every run reaches it somewhere
            assert int(q1["max_depth_bytes"].max()) > 10_000, (label, s)


def test_ci_all_but_removes_pauses_of_the_non_congested_queue(runs):
    """Seed 003: "With CI, HOLB never occur in Queue 1 because PFC XOFF threshold never be
    exceeded"; seed 000: CI "reduces or eliminates the need for PFC on non-congested flow
    queues". With CI the congested queue pauses the congested class upstream; class 1 is
    paused only by the last resort that keeps the class lossless (packets the upstream had
    queued in its non-congested queue before it isolated the flow filling half the room
    above XOFF). Claim checked: class-1 PAUSE frames with CI are at most 5% of those
    without CI (pooled), and without CI both classes pause."""
    for label in (TWO_Q, TWO_Q_BY_TOR):
        base_q1 = ci_q1 = 0
        for s in SEEDS:
            p = runs[label][s]["variants"][CI]["switch_ports"]
            assert int(p[p["queue"] == 0]["pfc_tx_frames"].sum()) > 0, (label, s)
            ci_q1 += int(p[p["queue"] == 1]["pfc_tx_frames"].sum())
            b = runs[label][s]["variants"][BASE]["switch_ports"]
            base_q1 += int(b[b["queue"] == 1]["pfc_tx_frames"].sum())
        assert base_q1 > 0, label
        assert ci_q1 <= 0.05 * base_q1, (label, ci_q1, base_q1)


@pytest.mark.xfail(
    raises=AssertionError,
    strict=True,
    reason=(
        "Seeds 000/003 (lossy, no PFC): CI cuts the packet loss rate (seed 000: -66%) and "
        "the flows with loss. Pooled over seeds 1-5 our loss rate does not fall with CI "
        "(docs/reproductions.md, lossy scenario, rendered from docs/results/seed003_lossy.*.json). Almost every drop is the 20:1 incast's, at its receiver's ToR port: twenty "
        "senders overfill one 1 MB queue whether their flows are hashed there or isolated "
        "there, and without PFC nothing upstream holds them back (upstream isolation moves "
        "them to a queue that drains at line rate). CI keeps queue 1 below 302 KB, so the "
        "non-congested flows lose nothing, but they seldom did. Marking every isolated "
        "packet (mark = 'every_isolated') does not change the loss either."
    ),
)
def test_ci_lowers_loss_rate_lossy(runs):
    base, ci = pooled_loss_rate(runs, LOSSY, BASE), pooled_loss_rate(runs, LOSSY, CI)
    assert _lowers(base, ci), f"loss rate without CI {base:.3%}, CI {ci:.3%}"


def test_static_latency_adds_the_hop_latency_to_small_flows(runs):
    """Seed 003 "Including Static Switch Latency": 400 ns per switch raises the FCT of
    small flows by about 400 ns x 3 hops. Our FCT ends when the last ACK is back, so a
    flow between ToRs crosses 3 switches each way (2 x 1.2 us = 2.4 us) and one within a
    ToR 1 switch each way (0.8 us). Tolerances: in both variants the median increment is
    the path's (+-0.1 us) and at least 75% of the small flows are within 0.1 us of their
    path's (the rest shift by a packet time or more where the changed timing reorders
    them in a queue); with CI, where no small flow is a PFC victim, the mean increment is
    within 10% of the mean expected one. Without CI the victims' waits change with the
    latency and inflate the mean (as the seed's elephants show), so only the median and
    the share are checked there."""
    for v in (BASE, CI):
        base = runs[TWO_Q][1]["variants"][v]["flows"]
        lat = runs[LATENCY][1]["variants"][v]["flows"]
        key = ["src", "dst", "size_bytes", "start_ps"]
        m = base.merge(lat, on=key, suffixes=("_0", "_400"))
        m = m[(m["size_bytes"] < MICE) & m["finished_0"].astype(bool) & m["finished_400"].astype(bool)]
        assert len(m) > 100
        d = (m["fct_ps_400"] - m["fct_ps_0"]).astype(np.int64)
        # switches crossed by data and ACK: 2 x 1 (same ToR) or 2 x 3 (via a spine)
        expected = (m["ideal_fct_ps_400"] - m["ideal_fct_ps_0"]).astype(np.int64)
        assert set(expected.unique()) <= {2 * 1 * LATENCY_PS, 2 * 3 * LATENCY_PS}, expected.unique()
        near = (d - expected).abs() <= 100_000
        assert near.mean() >= 0.75, f"{v}: {near.mean():.0%} of small flows within 0.1 us"
        inter_tor = expected == 2 * 3 * LATENCY_PS
        assert abs(float(d[inter_tor].median()) - 2 * 3 * LATENCY_PS) <= 100_000, v
        if v == CI:
            assert abs(d.mean() - expected.mean()) <= 0.1 * expected.mean(), (v, d.mean(), expected.mean())


@pytest.mark.xfail(
    raises=AssertionError,
    strict=True,
    reason="not reproduced, compared like with like: with unfinished flows counted at a lower bound of "
    "their FCT (end of run minus start), CI moves the elephants' and all flows' mean FCT by a few percent "
    "either way, against the seed's -23% and -38% (docs/reproductions.md, rendered from docs/results/: "
    "the small-scale and the full-size tables). Averaging finished flows only flattered CI: survivorship.",
)
def test_ci_lowers_elephant_and_overall_fct(runs):
    """Seed 000: CI also cuts the mean FCT of elephants (> 10 MB, -23%) and of all flows
    (-38%): without CI the incast's pauses stop every flow that shares a paused queue;
    with CI the elephants that do not go to an incast receiver stay in the non-congested
    queue. Background flows only (the incast flows are the congested ones). Unfinished
    flows count at a lower bound of their FCT (end of run minus start), so that a flow
    one variant does not finish is not dropped from its mean (censored means)."""

    def mean_fct(variant: str, lo: float) -> float:
        total, n = 0, 0
        for s in SEEDS:
            res = runs[TWO_Q][s]["variants"][variant]
            f = res["flows"]
            f = f[(f["size_bytes"] >= lo) & (f["tag"] == "background")]
            done = f["finished"].astype(bool)
            end = int(res["summary"]["sim_time_ps"])
            total += int(f.loc[done, "fct_ps"].sum()) + int((end - f.loc[~done, "start_ps"]).sum())
            n += len(f)
        return total / n

    assert _lowers(mean_fct(BASE, 10e6), mean_fct(CI, 10e6))
    assert _lowers(mean_fct(BASE, 0), mean_fct(CI, 0))
