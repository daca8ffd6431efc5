"""Source Flow Control (IEEE P802.1Qdw, seed 004) end to end: the incast bound, the
benefits study (small, 5 seeds pooled) and the fairness study, against what the seed
claims (docs/reproductions.md, "Source Flow Control"). The hook-level evidence (pause to
the ps, suppression, proxy quanta, ToR cache) is in crates/dcnsim-core/src/switch/sfc.rs."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np
import pandas as pd
import pytest

import dcnsim
from dcnsim.api import shipped_scenarios

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

HERE = Path(__file__).parent
INCAST16 = str(HERE / "scenarios" / "sfc_incast16.toml")
BENEFITS = "seed004_sfc_benefits_small"
PFC, PROXY, NATIVE = "PFC+DCQCN", "SFC proxy+DCQCN", "SFC native+DCQCN"
SEEDS = [1, 2, 3, 4, 5]

RATE = 100e9  # every link of the incast scenario, bit/s
MTU = 1086
MSG = 64
DELAY_PS = 500_000  # per link


def _ser_ps(nbytes: float) -> float:
    return nbytes * 8 / RATE * 1e12


def _switch_peak(r: dcnsim.Result) -> int:
    p = r.ports
    return int(p[~p["is_host"]]["max_depth_bytes"].max())


# ------------------------------------------------------------------ the incast bound


@pytest.fixture(scope="module")
def incast() -> Dict[str, dcnsim.Result]:
    return {v: dcnsim.run(INCAST16, variant=v) for v in ("off", "native", "proxy", "no-suppression")}


def test_incast_peak_within_one_signalling_round_trip(incast):
    """16 senders, one receiver, one 100G switch. Once the receiver's queue reaches the
    trigger, every data packet that joins it signals its sender; with no suppression each
    sender is signalled by the first of its packets to arrive past the trigger. From that
    arrival (t0) the message may wait behind the frame on the wire to the sender (one MTU),
    takes 64 B and 0.5 us to reach it, the sender finishes the frame it has started (one
    MTU) and stops; what it sent before stopping and had not arrived by t0 (0.5 us of
    propagation and one frame) still comes. So each sender adds at most line rate x
    (2 x 0.5 us + 2 MTU + 64 B) plus one frame after its signal, and the queue peaks below
    trigger + crossing frame + 16 x that, ignoring the drain (a safe bound). 100 KB +
    1.1 KB + 16 x 16.6 KB = 366 KB (derived, not measured); without SFC the same incast
    queues more than 5x that (a regression guard, not a claim of the seed's)."""
    window_ps = 2 * DELAY_PS + _ser_ps(2 * MTU + MSG)
    per_sender = window_ps * 1e-12 * RATE / 8 + MTU
    bound = 100_000 + MTU + 16 * per_sender
    r = incast["no-suppression"]
    peak = _switch_peak(r)
    assert peak <= bound, f"peak {peak} B > derived bound {bound:.0f} B"
    assert peak >= 100_000, "the trigger was reached"
    assert r.summary["packets_dropped"] == 0
    assert r.summary["sfc_suppressed"] == 0 and r.summary["sfc_sent"] >= 16
    off = _switch_peak(incast["off"])
    assert off > 5 * bound, f"without SFC the incast queues {off} B"


def test_incast_sfc_defaults_signal_every_sender_and_drop_nothing(incast):
    """With the seed's suppression (6 us) and the ToR cache, the queue stays far below the
    no-SFC peak, every sender was paused, nothing is dropped, and both reactions deliver
    every byte."""
    off = _switch_peak(incast["off"])
    for v in ("native", "proxy"):
        r = incast[v]
        s = r.summary
        assert s["end_reason"] == "completed" and s["flows_finished"] == 16, v
        assert s["packets_dropped"] == 0, v
        assert _switch_peak(r) < off / 3, v
        assert s["sfc_sent"] > 0 and s["sfc_suppressed"] > 0 and s["sfc_cache_hits"] > 0, v
        assert (r.flows["sfc_paused_ps"] > 0).all(), v
        # goodput series: every byte of every flow is in it
        ts = r.timeseries
        assert ts.groupby("flow")["bytes"].sum().eq(1_000_000).all(), v
    assert incast["native"].summary["sfc_received"] == incast["native"].summary["sfc_sent"]
    p = incast["proxy"].summary
    assert p["sfc_received"] == 0 and p["sfc_proxy_pauses"] > 0
    # the proxy's PAUSEs reach the NICs: the senders' ports record paused time
    ports = incast["proxy"].ports
    assert int(ports[ports["is_host"]]["xoff_time_ps"].sum()) > 0


def test_a_nics_pause_frames_are_its_tor_ports_pfc_and_proxy_frames(incast):
    """Counters that describe the same frames agree: every PAUSE frame a NIC received was
    sent by its ToR port, by PFC (pfc_tx_frames) or by the SFC proxy (sfc_proxy_pauses);
    a pause given while a frame waits at the port travels in that frame and counts in
    neither (the proxy counted it as sent, 4,000-5,200 more than the NICs received in the
    seed004 variants)."""
    p = incast["proxy"].ports
    tor = p[~p["is_host"] & p["peer_name"].astype(str).str.startswith("h")].groupby("peer_name")[["pfc_tx_frames", "sfc_proxy_pauses"]].sum()
    nic = p[p["is_host"]].groupby("node_name")["pfc_rx_frames"].sum()
    sent = tor["pfc_tx_frames"] + tor["sfc_proxy_pauses"]
    assert (nic.reindex(sent.index) == sent).all(), pd.concat([nic, sent], axis=1)
    assert sent.sum() > 0


def test_sfc_fct_beats_no_sfc_on_the_incast(incast):
    """The seed: SFC "does not negatively affect the incast FCT"; with DCQCN alone the
    deep queue (previous test) cuts every sender deep and the slow recovery stretches the
    incast. A regression guard on this 16:1 test scenario."""
    base = incast["off"].flows["fct_ps"].astype(float).max()
    for v in ("native", "proxy"):
        assert incast[v].flows["fct_ps"].astype(float).max() < base, v


@pytest.mark.parametrize("kind", ["udp", "reno", "dctcp"])
def test_sfc_works_for_udp_and_tcp(tmp_path, kind):
    """The seed: SFC "works with many types of transport protocols (RoCEv2, TCP, UDP)". The
    same 16:1 incast with line-rate UDP datagrams or TCP: with SFC (native and proxy)
    nothing is dropped and every flow completes. UDP overflows the receiver's buffer share
    without SFC; with SFC the pause drains the queue to the target, never to empty, so the
    receiver's port never idles and the last datagram arrives within 1% of 16 x 1 MB at
    100 Gbit/s."""
    text = Path(INCAST16).read_text().replace('kind = "dcqcn"', f'kind = "{kind}"').replace('dcqcn = { preset = "seed004" }\n', "")
    path = tmp_path / f"incast_{kind}.toml"
    path.write_text(text)
    for v in ("native", "proxy"):
        r = dcnsim.run(str(path), variant=v)
        assert r.summary["end_reason"] == "completed" and r.summary["flows_finished"] == 16, (kind, v)
        assert r.summary["packets_dropped"] == 0 and r.summary["sfc_sent"] > 0, (kind, v)
        if kind == "udp":
            last = float(r.flows["fct_ps"].astype(float).max())
            wire = 16 * 1_000_000 * 8 / RATE * 1e12
            assert wire <= last <= 1.01 * wire, (v, last, wire)
    if kind == "udp":
        off = dcnsim.run(str(path), variant="off")
        assert off.summary["packets_dropped"] > 0


def test_proxy_beside_lossless_pfc_warns(tmp_path):
    """The ToR's own XON and the proxy's PAUSEs share the NIC's pause timer: valid, said."""
    text = Path(INCAST16).read_text().replace('aqm = { kind = "step", threshold = "50KB" }', 'aqm = { kind = "step", threshold = "50KB" }\npfc = { alpha = 1.0 }')
    path = tmp_path / "proxy_pfc.toml"
    path.write_text(text)
    with pytest.warns(dcnsim.DcnsimWarning, match="proxy.*XON|XON.*proxy"):
        r = dcnsim.run(str(path), variant="proxy")
    assert any("proxy" in w and "XON" in w for w in r.summary.get("warnings", [])), r.summary.get("warnings")
    assert r.summary["packets_dropped"] == 0 and r.summary["flows_finished"] == 16
    assert not dcnsim.run(str(path), variant="native").summary.get("warnings")


# ------------------------------------------------------------------ benefits (small)


@pytest.fixture(scope="module")
def benefits() -> Dict[str, List[dcnsim.Result]]:
    return {v: [dcnsim.run(BENEFITS, variant=v, seed=s) for s in SEEDS] for v in (PFC, PROXY, NATIVE)}


def _pooled(results: List[dcnsim.Result], tag: str) -> pd.DataFrame:
    fl = pd.concat([r.flows for r in results], ignore_index=True)
    fl = fl[fl["tag"].astype(str) == tag]
    assert bool(fl["finished"].all())
    return fl


def _p99_us(fl: pd.DataFrame) -> float:
    return float(np.percentile(fl["fct_ps"].astype(float), 99)) / 1e6


def test_benefits_small_sfc_lowers_background_tail_and_queueing(benefits):
    """Seed 004: "SFC can significantly reduce FCT for background traffic" and "in-network
    queueing". Pooled over seeds 1-5: the p99 FCT of background messages < 10 KB and the
    largest switch queue are lower with SFC (both modes) than with PFC, and nothing is
    dropped in any run (the seed's buffers make every variant lossless in practice)."""
    pfc_small = _pooled(benefits[PFC], "background")
    pfc_peak = max(_switch_peak(r) for r in benefits[PFC])
    for v in (PROXY, NATIVE):
        small = _pooled(benefits[v], "background")
        small, base = small[small["size_bytes"] < 10_000], pfc_small[pfc_small["size_bytes"] < 10_000]
        assert _p99_us(small) < 0.9 * _p99_us(base), f"{v}: p99 < 10 KB {_p99_us(small):.1f} us vs PFC {_p99_us(base):.1f} us"
        peak = max(_switch_peak(r) for r in benefits[v])
        assert peak < 0.9 * pfc_peak, f"{v}: max switch queue {peak} B vs PFC {pfc_peak} B"
    for v, runs in benefits.items():
        assert all(r.summary["packets_dropped"] == 0 for r in runs), v


def test_benefits_small_incast_fct_not_worse(benefits):
    """Seed 004: "SFC does not negatively affect the incast FCT": the mean FCT of the
    256 KB incast messages, pooled over seeds 1-5, is within 10% of PFC's (or better)."""
    base = _pooled(benefits[PFC], "incast")["fct_ps"].astype(float).mean()
    for v in (PROXY, NATIVE):
        mean = _pooled(benefits[v], "incast")["fct_ps"].astype(float).mean()
        assert mean <= 1.1 * base, f"{v}: incast mean FCT {mean / 1e6:.1f} us vs PFC {base / 1e6:.1f} us"


# ------------------------------------------------------------------ fairness


def phase_shares(r: dcnsim.Result, skip: float = 0.5) -> List[Tuple[float, float, Dict[int, float]]]:
    """The phases between consecutive flow starts and ends, each as (start ms, end ms,
    {flow: mean goodput in Gbit/s} of every flow active throughout it, measured over the
    phase's last (1 - skip) share so that DCQCN's reaction to the change is left out)."""
    fl, ts = r.flows, r.timeseries
    bin_ps = int(r.summary["throughput_bin_ps"])
    ends = fl["end_ps"].astype("Int64")
    events = sorted(set(fl["start_ps"].astype(int)) | set(int(e) for e in ends.dropna()))
    out = []
    for a, b in zip(events, events[1:]):
        active = fl[(fl["start_ps"] <= a) & (ends >= b)]["flow_id"].tolist()
        lo = a + (b - a) * skip
        sel = ts[(ts["bin_start_ps"] >= lo) & (ts["bin_start_ps"] + bin_ps <= b)]
        span = (b - lo) // bin_ps * bin_ps
        rates = {int(f): float(sel[sel["flow"] == f]["bytes"].sum()) * 8 / span * 1e3 if span else 0.0 for f in active}
        out.append((a / 1e9, b / 1e9, rates))
    return out


def jain(x: Dict[int, float]) -> float:
    a = np.asarray(list(x.values()), dtype=float)
    return float(a.sum() ** 2 / (len(a) * (a**2).sum()))


FAIRNESS = ["seed004_sfc_fairness_intra", "seed004_sfc_fairness_inter"]


@pytest.fixture(scope="module")
def fairness() -> Dict[str, Dict[str, dcnsim.Result]]:
    return {f: {v: dcnsim.run(f, variant=v) for v in (PFC, NATIVE, PROXY)} for f in FAIRNESS}


@pytest.mark.parametrize("name", FAIRNESS)
def test_fairness_sfc_does_not_hurt_dcqcn_fairness(fairness, name):
    """Seed 004: "SFC does not hurt fairness provided by DCQCN". In every phase with two or
    more flows (1, 2, 3, 4, 3, 2, 1 active), Jain's index with SFC is at least PFC's minus
    0.05, and over all such phases at least PFC's minus 0.005 on average: regression guards
    on seed 1. The measured values over seeds 1-5, and the verdict on the claim in runs
    where PFC and SFC act, are in docs/results/seed004_sfc_fairness_{intra,inter}.full.json
    (`dcnsim reproduce`; rendered in docs/reproductions.md, "Fairness"). Here PFC sends no
    PAUSE and SFC few messages: this compares DCQCN with DCQCN."""
    base = [jain(r) for _, _, r in phase_shares(fairness[name][PFC]) if len(r) > 1]
    for v in (NATIVE, PROXY):
        sfc = [jain(r) for _, _, r in phase_shares(fairness[name][v]) if len(r) > 1]
        assert len(sfc) == len(base) == 5, (v, sfc, base)
        for i, (j, b) in enumerate(zip(sfc, base)):
            assert j >= b - 0.05, f"{name} {v} phase {i}: Jain {j:.3f} vs PFC {b:.3f}"
        assert np.mean(sfc) >= np.mean(base) - 0.005, f"{name} {v}: mean Jain {np.mean(sfc):.4f} vs PFC {np.mean(base):.4f}"


@pytest.mark.parametrize("name", FAIRNESS)
def test_fairness_shares_step_as_flows_join_and_leave(fairness, name):
    """The shares step as the seed's figure shows them: at every join the flows already
    active get less than before (their mean goodput falls), at every leave the flows that
    stay get more, in every variant; every flow finishes and nothing is dropped."""
    for v, r in fairness[name].items():
        assert r.summary["end_reason"] == "completed" and r.summary["packets_dropped"] == 0, v
        phases = phase_shares(r)
        counts = [len(x) for _, _, x in phases]
        assert counts == [1, 2, 3, 4, 3, 2, 1], (v, counts)
        for (_, t, before), (_, _, after) in zip(phases, phases[1:]):
            both = sorted(set(before) & set(after))
            old, new = np.mean([before[f] for f in both]), np.mean([after[f] for f in both])
            if len(after) > len(before):
                assert new < old, f"{name} {v}: a flow joined at {t:.2f} ms, the others went {old:.1f} -> {new:.1f} Gbit/s"
            else:
                assert new > old, f"{name} {v}: a flow left at {t:.2f} ms, the others went {old:.1f} -> {new:.1f} Gbit/s"


@pytest.mark.parametrize("name", FAIRNESS)
def test_fairness_jain_at_least_095_in_every_phase(fairness, name):
    """The issue's absolute bar: Jain's index >= 0.95 over each phase's active flows, in
    every variant (a regression guard; the measured values are the "shipped" rows of the
    per-phase table in docs/reproductions.md, "Fairness")."""
    for v, r in fairness[name].items():
        for a, b, rates in phase_shares(r):
            assert jain(rates) >= 0.95, f"{name} {v} {a:.2f}-{b:.2f} ms: Jain {jain(rates):.3f} {rates}"


GOODPUT_GBPS = 100 * 1024 / 1086  # the receiver's link, in payload


@pytest.mark.parametrize("name", FAIRNESS)
def test_fairness_increase_steps_as_fractions_keep_the_link_busy(fairness, name):
    """The reading of the seed's unitless "AI: 0.0125" and "Hyper AI: 0.025". As fractions
    of the line rate (1.25 / 2.5 Gbit/s, the shipped scenarios) the flows of every phase
    together deliver at least 75% of the receiver's link in every variant, so the phases
    are the "congested link" whose shares the seed compares. Read as Gbit/s (12.5 / 25
    Mbit/s), DCQCN recovers from the cuts at a join by 12.5 Mbit/s every 4 us and PFC +
    DCQCN leaves the link more than half idle through the second half of some phase. Both
    bars are regression guards; the measured goodput per phase of both readings is in the
    goodput table of docs/reproductions.md, "Fairness" (`dcnsim reproduce
    seed004_sfc_fairness_intra seed004_sfc_fairness_inter --scale full`)."""
    for v, r in fairness[name].items():
        for a, b, rates in phase_shares(r):
            assert sum(rates.values()) >= 0.75 * GOODPUT_GBPS, f"{name} {v} {a:.2f}-{b:.2f} ms: {rates}"
    s = tomllib.loads(shipped_scenarios()[name].read_text())
    dc = s["transport"]["dcqcn"]
    assert (dc.pop("rate_ai_fraction"), dc.pop("rate_hai_fraction")) == (0.0125, 0.025)
    dc.update(rate_ai="12.5Mbps", rate_hai="25Mbps")
    low = min(sum(x.values()) for _, _, x in phase_shares(dcnsim.run(s, variant=PFC)))
    assert low < 0.5 * GOODPUT_GBPS, f"{name}: with AI in Gbit/s PFC + DCQCN delivers {low:.1f} Gbit/s in its emptiest phase"
