"""BBR v1 (`transport.cc = "bbr"`, Linux tcp_bbr.c) end to end on the dumbbell of
bench/peers/ns3/bbr_dumbbell.py (10 Gbit/s links, 20 us host links, a 10 us bottleneck:
base RTT 103.8 us, BDP 86.5 packets of 1500 B):

- a lone flow fills the link; where the bottleneck is slower than its NIC, its flight stays
  within one BDP plus 3 send quanta (Linux's quantization budget) plus the quarter BDP of
  its 5/4 probing phase;
- two flows in a deep buffer are window-limited: the standing queue is what their windows,
  2 x bw x min_rtt plus 3 send quanta each, hold beyond one BDP - with Linux's TSO quantum
  (44 segments at 5 Gbit/s) and with ns-3's one segment (ns-3 3.44 measures 75 packets
  there, bench/peers/ns3/);
- against Cubic, BBR v1 takes the link in a shallow buffer and yields most of it in a deep
  one (Hock et al., ICNP 2017; Ware et al., IMC 2019), qualitatively.

The model's pieces (windowed max filter, gains, delivery-rate samples) are tested beside the
code (host/cc/bbr.rs, host/cc/delivery_rate.rs)."""

from __future__ import annotations

from pathlib import Path

import dcnsim

MTU, PAYLOAD = 1500, 1460
BASE_RTT_US = 2 * (2 * 20 + 10) + 3 * MTU * 8 / 10e9 * 1e6 + 3 * 64 * 8 / 10e9 * 1e6
BDP_PKTS = 10e9 * BASE_RTT_US * 1e-6 / (MTU * 8)
# Linux's TSO goal at a ~5 Gbit/s pacing rate: min(rate / 1024, 64 KB - 321) / MSS segments
TSO_SEGS = int(min(5e9 / 8 / 1024, 65536 - 1 - 320) // PAYLOAD)


def _run(tmp_path: Path, ccs: list[str], buf_pkts: int, *, neck: str = "10Gbps", quantum: str | None = None,
         ms: int = 200, sample: str = "2us", sack: bool = True) -> dcnsim.Result:
    n = len(ccs)
    flows = ", ".join(f'{{ src = {i}, dst = {n}, size = "10GB", transport = "{c}" }}' for i, c in enumerate(ccs))
    bbr = f'bbr = {{ quantum = "{quantum}" }}' if quantum else ""
    bbr += "\nsack = false" if not sack else ""
    text = f"""
[scenario]
name = "bbr_dumbbell"
seed = 1
max_time = "{ms}ms"
[topology]
kind = "dumbbell"
senders = {n}
receivers = 1
host_link = {{ rate = "10Gbps", delay = "20us" }}
bottleneck = {{ rate = "{neck}", delay = "10us" }}
[switch]
buffer = {{ model = "static", queue = "{buf_pkts * MTU}B" }}
[transport]
kind = "tcp"
cc = "bbr"
{bbr}
[metrics]
throughput_bin = "1ms"
queue_sample = "{sample}"
[[workload]]
kind = "flows"
flows = [ {flows} ]
"""
    path = tmp_path / "bbr.toml"
    path.write_text(text)
    return dcnsim.run(str(path))


def _goodput(r: dcnsim.Result, from_ms: float, to_ms: float):
    piv = r.timeseries.pivot_table(index="bin_start_ps", columns="flow", values="bytes", aggfunc="sum").fillna(0.0)
    piv = piv.reindex(columns=sorted(r.flows["flow_id"]), fill_value=0.0)
    t = piv.index.to_numpy() / 1e9
    sel = (t >= from_ms) & (t < to_ms)
    return piv.to_numpy()[sel].sum(axis=0) * 8 / ((to_ms - from_ms) * 1e-3) / 1e9


def _queue_pkts(r: dcnsim.Result, from_ms: float):
    q = r.queue_series.groupby("time_ps")["total_depth_bytes"].sum()
    return q[q.index >= from_ms * 1e9] / MTU


def test_a_lone_flow_fills_the_link_with_a_bounded_queue(tmp_path):
    # a 5 Gbit/s bottleneck behind 10 Gbit/s NICs, so what BBR sends beyond the link queues
    # there: Drain and the 3/4 phase stop at one BDP plus 3 send quanta in flight, the 5/4
    # phase adds a quarter BDP, so the queue holds 3 quanta plus 0-1/4 BDP
    line = 5.0 * PAYLOAD / MTU
    bdp = BDP_PKTS / 2
    for quantum, quanta in (("tso", 3 * TSO_SEGS), ("segment", 3)):
        r = _run(tmp_path, ["bbr"], 2666, neck="5Gbps", quantum=quantum)
        g = _goodput(r, 50, 200)
        assert g[0] > 0.97 * line, (quantum, g)
        q = _queue_pkts(r, 50)
        assert quanta - 8 < q.mean() < quanta + 0.3 * bdp, (quantum, q.mean(), quanta, bdp)
        assert q.max() < quanta + 0.5 * bdp + 2, (quantum, q.max(), quanta, bdp)
        # the flight (BDP + queue) stays within 1-1.5 BDP beyond the quanta
        assert int(r.flows["drops"].sum()) == 0


def test_two_flows_in_a_deep_buffer_are_window_limited(tmp_path):
    for quantum, quanta in (("tso", 3 * TSO_SEGS), ("segment", 3)):
        r = _run(tmp_path, ["bbr", "bbr"], 2666, quantum=quantum)
        g = _goodput(r, 100, 200)
        assert g.sum() > 0.97 * 10 * PAYLOAD / MTU, (quantum, g)
        assert min(g) / max(g) > 0.85, (quantum, g)
        # each window: 2 x (its bw) x min_rtt + 3 quanta; the two bws sum to the link
        cap = BDP_PKTS + 2 * quanta
        q = _queue_pkts(r, 100).mean()
        assert 0.8 * cap < q < 1.3 * cap, (quantum, q, cap)


def test_against_cubic_bbr_takes_shallow_buffers_and_yields_deep_ones(tmp_path):
    share = {}
    for name, buf in (("shallow", int(BDP_PKTS / 2)), ("deep", int(16 * BDP_PKTS))):
        r = _run(tmp_path, ["bbr", "cubic"], buf, ms=1000, sample="50us")
        g = _goodput(r, 500, 1000)
        assert g.sum() > 0.95 * 10 * PAYLOAD / MTU, (name, g)
        share[name] = g[0] / g.sum()
    assert share["shallow"] > 0.9, share
    assert share["deep"] < 0.4, share


# TCP selective acknowledgements end to end (`transport.sack`, on by default; RFC 2018 blocks,
# RFC 6675 loss recovery with PRR, host/sack.rs and host/tcp.rs), on the dumbbell of
# bench/peers/ns3/bbr_dumbbell.py (10 Gbit/s links, 20 us host links, a 10 us bottleneck with
# a 40-packet tail-drop queue), where ns-3 3.44 ran the same flows with SACK off and on
# (bench/peers/ns3/bbr_dumbbell_ns3.csv):
#
# - every retransmission answers a loss: a sender with SACK resends what was dropped and
#   nothing else (ns-3: 1,738 retransmissions for 1,599 drops, two BBR flows; without SACK
#   35,264 for 9,065, the NewReno recovery of a BBR flow resending what had arrived);
# - loss-based flows (four CUBIC, four NewReno) keep the bottleneck busy either way; with
#   SACK each loss is resent once (without it a timeout's go-back-N may resend more).
#
# The scoreboard's rules (IsLost, SetPipe, NextSeg, lost retransmissions) and the round-trip
# counts against NewReno are tested beside the code.


def _delivered_gbps(r: dcnsim.Result, ms: int) -> float:
    return r.flows["delivered_bytes"].sum() * 8 / (ms * 1e-3) / 1e9


def test_with_sack_bbr_resends_only_what_was_lost(tmp_path):
    with_sack = _run(tmp_path, ["bbr", "bbr"], 40, quantum="segment", ms=40, sample="1ms")
    without = _run(tmp_path, ["bbr", "bbr"], 40, quantum="segment", ms=40, sample="1ms", sack=False)
    drops, retx = with_sack.flows["drops"].sum(), with_sack.flows["retx"].sum()
    assert drops > 100, drops
    # the last window's losses may not be resent yet when the run ends
    assert drops - 40 <= retx <= drops, (drops, retx)
    d0, r0 = without.flows["drops"].sum(), without.flows["retx"].sum()
    assert r0 > 2 * d0, (d0, r0)
    assert _delivered_gbps(with_sack, 40) > 9.0


def test_loss_based_flows_fill_the_bottleneck_with_and_without_sack(tmp_path):
    for cc in ("cubic", "reno"):
        for sack in (True, False):
            r = _run(tmp_path, [cc] * 4, 40, ms=40, sample="1ms", sack=sack)
            drops, retx = r.flows["drops"].sum(), r.flows["retx"].sum()
            assert _delivered_gbps(r, 40) > 9.0, (cc, sack)
            assert drops > 20 and retx >= drops - 40, (cc, sack, drops, retx)
            if sack:
                assert retx <= drops, (cc, drops, retx)
