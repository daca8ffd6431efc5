#!/usr/bin/env python3
"""UET's retransmission timer in the UEC's htsim (ultraethernet/uet-htsim, `htsim_uec`) and in
dcnsim on one mixed workload: trim_vs_pfc's (data mining at 50% with persistent 20:1
incasts of 1 MB, 1,500 B frames, 1 MB queues) on the 2-tier fat tree htsim builds.

Why: with ACKs coalesced to one per 16 KB (htsim's `UecSink::_bytes_unacked_threshold`,
dcnsim's `transport.uet.ack_every` default), a sender whose window shrank after its last
packet went out without an ACK request can hold under 16 KB unacknowledged at a receiver
that will not answer, and wait for its timer. dcnsim shows such waits in
trim_vs_pfc (docs/reproductions.md); this script asks whether htsim, whose rules dcnsim's
follow, waits as often on the same flows.

Both simulators get the same inputs:

- fabric: htsim's 2-tier fat tree of 128 hosts (`-tiers 2 -nodes 128`: 16 ToRs of 8 hosts,
  8 spines), 100 Gb/s, 200 ns per link (`-hop_latency 0.2`), MTU 1,500 B with 64 B headers,
  trim_vs_pfc's two memories per port: queues of 667 packets (`-q 667`, 1,000,500 B) with
  ECN from 7 to 200 packets (`-ecn 7 200`, 10,500 B to 300,000 B, marking probability 0 to
  1), and of 134 packets (201,000 B) with ECN from 7 to 134; dcnsim: clos2 of the same
  shape, the same queues and ECN ramps; trimming (`switch.trim`) or not (htsim's
  `-disable_trim`: `switch.trim = { cut = false }`, whose ACKs, NACKs, pulls and RTS still
  cross every switch in the priority queue, as htsim's composite queue serves them);
- flows: made once by dcnsim from scenarios/trim_vs_pfc_small.toml grown to this fabric
  (background on hosts 0-83 in 4 clusters of 21, two 20:1 persistent incasts on hosts
  84-125, 2 ms of arrivals, variant "trimming, UET", seed 1), then given to both as a list
  with each flow's start time, cut to whole microseconds as htsim_uec reads it (the
  incasts' later rounds start when dcnsim's run started them; neither simulator closes
  the loop);
- transport: UET with NSCC, each simulator's defaults (htsim: "mixed" load balancing;
  dcnsim: oblivious spraying), the timer 15 us plus six full queues at line rate (495 us
  and 111 us);
- ECN: htsim marks a packet as it leaves its queue, on the depth left behind
  (`CompositeQueue::completeService`); dcnsim runs each case twice, marking at dequeue as
  htsim does (`switch.aqm.at = "dequeue"`, the row "dcnsim") and at enqueue, on the depth
  the packet finds (the default, which trim_vs_pfc runs: the row "dcnsim, ECN at enqueue").
  Under a receiver-driven control (``--cc rccc``, ``--cc nscc_rccc``) htsim builds its
  fabric without ECN on the ToR downlinks (`main_uec.cpp`: `set_ecn_parameters(true,
  !receiver_driven, ..)`); the row "dcnsim" then marks only on ports toward a switch
  (`switch.aqm.ports = "fabric"`), and a third row, "dcnsim, ECN on every port", at
  dequeue on every port, as the tables before 2026-11-30 did.
  Marked packets are ACKed at once, so where the marks fall decides which packets leave a
  receiver holding an ACK back.
- in flight: htsim's sender takes the receiver's count of bytes taken, which every ACK
  carries (UE's ACK_CC rcvd_bytes), off its bytes in flight, and so does dcnsim's by
  default (`transport.uet.in_flight = "received"`, since 2026-11-30). Under NSCC (``--cc
  nscc``, ``--cc nscc_rccc``) the row "dcnsim, in flight as acknowledged" counts only what
  its ACKs acknowledge (`transport.uet.in_flight = "acknowledged"`, the default before),
  marking as the row "dcnsim".

With ``--htsim-arriving`` a second htsim build runs too (row "htsim, arriving trimmed"):
htsim with ``uet_htsim_trim_arriving.patch`` on top, whose full data queue always trims the
arriving packet (dcnsim's reading) where upstream htsim flips a coin between it and the last
packet queued (`CompositeQueue::receivePacket`).

htsim counts its timer's expiries only with a two-line patch (``uet_htsim_rto_events.patch``:
`UecSrc::_stats.rto_events`, declared but never counted upstream, counted in
`rtxTimerExpired` and printed as "RTO events: N"). Each expiry of htsim's timer declares one
packet lost; dcnsim's `timeouts` counts one per packet its timer declares lost, so the two
counts are alike. It writes ``uet_htsim_mix.txt`` (per case and seed: FCT of the background
flows by size and of the incast flows, resends, NACKs / trims, timer expiries) and keeps the
connection matrix (``uet_htsim_mix.cm``)::

    python bench/peers/uet_htsim_mix.py --htsim /path/to/patched/htsim_uec --seeds 3 \
        [--htsim-arriving /path/to/htsim_uec_with_trim_arriving_patch]

Build the patched binary from uet-htsim's ``htsim/sim``: ``patch -p1 <
bench/peers/uet_htsim_rto_events.patch`` (from ``htsim/``), then ``cmake -S sim -B sim/build
-DCMAKE_BUILD_TYPE=Release && cmake --build sim/build --target htsim_uec``.
"""

from __future__ import annotations

import argparse
import math
import re
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
from uet_htsim import HTSIM_COMMIT, HTSIM_DUPLICATE, HTSIM_REPO, HTSIM_TOTALS, dcnsim_label, load_scenario  # noqa: E402

DEFAULT_HTSIM = "/tmp/uet_rto/htsim/sim/build/datacenter/htsim_uec"
#: each congestion control's htsim flags and dcnsim `transport.cc`
CCS = {"nscc": ([], "nscc"), "rccc": (["-receiver_cc_only"], "rccc"), "nscc_rccc": (["-sender_cc", "-receiver_cc"], "nscc_rccc")}
#: the congestion controls htsim runs as receiver-driven, building its fabric without ECN on
#: the ToR downlinks (main_uec.cpp: `set_ecn_parameters(true, !receiver_driven, ..)`)
RECEIVER_DRIVEN = ("rccc", "nscc_rccc")


#: the congestion controls with NSCC's window, which `transport.uet.in_flight` acts on
WINDOWED = ("nscc", "nscc_rccc")


def dcnsim_marking(cc: str) -> tuple:
    """dcnsim's rows: where its switches judge a packet for ECN (`switch.aqm.at`), which
    ports do (`switch.aqm.ports`) and how the sender counts its bytes in flight
    (`transport.uet.in_flight`). The row "dcnsim" is htsim's marking; under NSCC a row
    counting in flight by what the ACKs acknowledge instead of the receiver's reported
    bytes (UE's ACK_CC rcvd_bytes, htsim's count and dcnsim's default); under a receiver-driven
    control a row marking on every port too, and one at dcnsim's default (at enqueue, every
    port)."""
    ports = "fabric" if cc in RECEIVER_DRIVEN else "all"
    rows = [("dcnsim", "dequeue", ports, "received")]
    if cc in WINDOWED:
        rows.append(("dcnsim, in flight as acknowledged", "dequeue", ports, "acknowledged"))
    if cc in RECEIVER_DRIVEN:
        rows.append(("dcnsim, ECN on every port", "dequeue", "all", "received"))
    rows.append(("dcnsim, ECN at enqueue", "enqueue", "all", "received"))
    return tuple(rows)
SOURCE = REPO / "python" / "dcnsim" / "scenarios" / "trim_vs_pfc_small.toml"
HOSTS, PER_TOR, SPINES = 128, 8, 8
MTU = 1500
#: the memory per port (packets) and the ECN ramp (packets) of each case: trim_vs_pfc's 1 MB
#: and 200 KB per port, its ramp from 10 KB to 300 KB (htsim wants the ramp's top within the
#: queue: at 200 KB it stops at the queue)
CASES = ((667, (7, 200)), (134, (7, 134)))
HTSIM_FINISHED = re.compile(r"^Flow \S+ flowId (\d+) .*?finished at (\S+)", re.M)
HTSIM_RTO = re.compile(r"^RTO events: (\d+)", re.M)
HTSIM_PULLS = re.compile(r" Pulls: (\d+)")
#: FCT groups: the background flows by the seeds' bins, and the incast messages
GROUPS = (("background <100KB", "background", 0, 100_000), ("background 100KB-1MB", "background", 100_000, 1_000_000),
          ("background >=1MB", "background", 1_000_000, 1 << 62), ("incast 1MB", "incast", 0, 1 << 62))


@dataclass
class Flow:
    src: int
    dst: int
    size: int
    start_ps: int
    tag: str


@dataclass
class Run:
    """One simulator's run of one case: FCT (us) by flow index, and counters."""

    fct: Dict[int, float] = field(default_factory=dict)
    counts: Dict[str, int] = field(default_factory=dict)


def workload(seed: int) -> List[Flow]:
    """trim_vs_pfc_small's workload on this fabric, as dcnsim's run of it started the flows."""
    import dcnsim

    sc = load_scenario(SOURCE)
    sc["scenario"]["arrivals_for"] = "2ms"
    topo = sc["topology"]
    topo.pop("placement", None)  # htsim's hosts are numbered ToR by ToR
    topo.update(tors=HOSTS // PER_TOR, servers_per_tor=PER_TOR, spines=SPINES)
    bg, inc = sc["workload"]
    bg["hosts"] = [0, 84]
    inc["hosts"], inc["groups"] = [84, 126], 2
    r = dcnsim.run(sc, variant="trimming, UET", seed=seed)
    fl = r.flows.sort_values("start_ps")
    out = []
    for src, dst, size, start, tag in zip(fl["src"], fl["dst"], fl["size_bytes"], fl["start_ps"], fl["tag"]):
        # htsim_uec starts a flow at a whole number of microseconds (`timeFromUs((uint32_t)
        # crt->start)` in main_uec.cpp): both get that
        out.append(Flow(int(src), int(dst), int(size), int(start) // 1_000_000 * 1_000_000, str(tag)))
    return out


def write_cm(path: Path, flows: Sequence[Flow]) -> None:
    lines = [f"Nodes {HOSTS}", f"Connections {len(flows)}"]
    lines += [f"{f.src}->{f.dst} id {i} start {f.start_ps // 1_000_000} size {f.size}" for i, f in enumerate(flows, start=1)]
    path.write_text("\n".join(lines) + "\n")


def scenario(flows: Sequence[Flow], trim: bool, queue: int, ecn: tuple, cc: str = "nscc", mark_at: str = "dequeue", ports: str = "all",
             in_flight: str = "received") -> str:
    """dcnsim's scenario for the flow list: the fabric and switches as htsim's (ECN judged
    at `mark_at`, on `ports`: htsim's reading is "dequeue", on every port, or for a
    receiver-driven control only on ports toward a switch, "fabric"); the sender counts
    its bytes in flight as `in_flight` says (`transport.uet.in_flight`)."""
    by_tag: Dict[str, List[str]] = {}
    for f in flows:
        by_tag.setdefault(f.tag, []).append(f'{{ src = {f.src}, dst = {f.dst}, size = "{f.size}B", start = "{f.start_ps // 1_000_000}us" }}')
    sep = ",\n  "
    work = "".join(f'[[workload]]\nkind = "flows"\ntag = "{t}"\nflows = [\n  {sep.join(fs)},\n]\n' for t, fs in by_tag.items())
    return f"""[scenario]
name = "uet_htsim_mix"
max_time = "50ms"
[topology]
kind = "clos2"
tors = {HOSTS // PER_TOR}
servers_per_tor = {PER_TOR}
spines = {SPINES}
mtu = "{MTU}B"
host_link = {{ rate = "100Gbps", delay = "200ns" }}
fabric_link = {{ rate = "100Gbps", delay = "200ns" }}
[switch]
queues = 2
buffer = {{ model = "static", queue = "{queue * MTU}B" }}
aqm = {{ kind = "ramp", kmin = "{ecn[0] * MTU}B", kmax = "{ecn[1] * MTU}B", pmax = 1.0, at = "{mark_at}", ports = "{ports}" }}
{"trim = {}" if trim else "trim = { cut = false }"}
[transport]
kind = "uet"
cc = "{CCS[cc][1]}"
header = "64B"
ack_size = "64B"
uet = {{ in_flight = "{in_flight}" }}
{work}"""


def run_htsim(binary: str, cm: Path, trim: bool, queue: int, ecn: tuple, seed: int, end_us: int, cc: str = "nscc") -> Run:
    args = [binary, "-tm", str(cm), "-tiers", "2", "-nodes", str(HOSTS), "-hop_latency", "0.2", "-mtu", str(MTU),
            "-q", str(queue), "-ecn", str(ecn[0]), str(ecn[1]), "-end", str(end_us), "-seed", str(seed)]
    if not trim:
        args.append("-disable_trim")
    args += CCS[cc][0]
    with tempfile.TemporaryDirectory(prefix="uet_htsim_mix_") as tmp:
        p = subprocess.run(args + ["-o", str(Path(tmp) / "log.dat")], cwd=tmp, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"htsim failed ({p.returncode}): {' '.join(args)}\n{p.stderr[-2000:]}")
    rto = HTSIM_RTO.search(p.stdout)
    tot = HTSIM_TOTALS.search(p.stdout)
    if not rto or not tot:
        raise SystemExit(f"no 'RTO events' or totals line in htsim's output: is {binary} built with uet_htsim_rto_events.patch?")
    run = Run()
    for fid, t_us in HTSIM_FINISHED.findall(p.stdout):
        run.fct[int(fid) - 1] = float(t_us)  # finish time; the start is taken off by the caller
    new, rtx, rts, _bounced, acks, nacks = map(int, tot.groups())
    pulls = int(HTSIM_PULLS.search(p.stdout).group(1))
    run.counts = {"resends": rtx, "not lost": len(HTSIM_DUPLICATE.findall(p.stdout)), "NACKs": nacks, "timer expiries": int(rto.group(1)), "RTS": rts,
                  "replies": acks + nacks + pulls}
    return run


def run_dcnsim(text: str, seed: int, flows: Sequence[Flow]) -> Run:
    import dcnsim
    from dcnsim.reproduce.studies_uet import replies

    r = dcnsim.run(text, seed=seed)
    run = Run()
    # each of dcnsim's flows is matched to the list's by its ends, size and start: flow ids
    # follow the scenario's workloads (one per tag), and two flows of two tags may start in
    # the same whole microsecond, so neither order can be relied on
    where: Dict[tuple, List[int]] = {}
    for i, f in enumerate(flows):
        where.setdefault((f.src, f.dst, f.size, f.start_ps), []).append(i)
    fl = r.flows.sort_values("flow_id")
    for src, dst, size, start, fct, done in zip(fl["src"], fl["dst"], fl["size_bytes"], fl["start_ps"], fl["fct_ps"], fl["finished"]):
        same = where.get((int(src), int(dst), int(size), int(start)))
        if not same:
            raise SystemExit(f"dcnsim ran a flow {src}->{dst} of {size} B at {start} ps that the flow list lacks")
        i = same.pop(0)
        if done:
            run.fct[i] = int(fct) / 1e6
    if any(where.values()):
        raise SystemExit(f"dcnsim did not run {sum(map(len, where.values()))} flows of the list")
    s = r.summary
    nacks = int(s.get("trims") or 0) - int(s.get("trimmed_discarded") or 0)
    resends, drops, trims = int(fl["retx"].astype("int64").sum()), int(s["data_packets_dropped"]), int(s.get("trims") or 0)
    # every drop and every trim costs one resend; the rest resent packets that were not lost
    run.counts = {"resends": resends, "not lost": resends - drops - trims, "NACKs": nacks, "timer expiries": int(s["timeouts"]),
                  "drops": drops, "replies": replies(r)}
    return run


def group_fcts(flows: Sequence[Flow], run: Run) -> Dict[str, tuple]:
    """Per group (`GROUPS`): its flows' count and the finished ones' FCTs (us), sorted."""
    out = {}
    for name, tag, lo, hi in GROUPS:
        idx = [i for i, f in enumerate(flows) if f.tag == tag and lo <= f.size < hi]
        out[name] = (len(idx), sorted(run.fct[i] for i in idx if i in run.fct))
    return out


def group_stats(flows: Sequence[Flow], run: Run) -> Dict[str, str]:
    out = {}
    for name, (n, fct) in group_fcts(flows, run).items():
        if not fct:
            out[name] = f"{n} flows, none finished"
            continue
        p99 = fct[min(len(fct) - 1, int(round(0.99 * (len(fct) - 1))))]
        unfinished = n - len(fct)
        out[name] = f"mean {statistics.fmean(fct):8.1f}  p99 {p99:8.1f}" + (f"  ({unfinished} unfinished)" if unfinished else "")
    return out


def mean_range(xs: Sequence[float], digits: int = 1) -> str:
    return f"{statistics.fmean(xs):.{digits}f} [{min(xs):.{digits}f}-{max(xs):.{digits}f}]"


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--htsim", default=DEFAULT_HTSIM, help=f"htsim_uec built with uet_htsim_rto_events.patch (default {DEFAULT_HTSIM})")
    ap.add_argument("--htsim-arriving", default=None, help="also run this htsim_uec, built with uet_htsim_trim_arriving.patch too (its full queue trims the arriving packet)")
    ap.add_argument("--seeds", type=int, default=3, help="run seeds 1..N in both (default 3)")
    ap.add_argument("--end-us", type=int, default=50_000, help="htsim -end in us (default 50000)")
    ap.add_argument("--cc", choices=sorted(CCS), default="nscc", help="the congestion control (default nscc); the table's name ends in _CC for another")
    ap.add_argument("--out-dir", default=str(HERE), help="where uet_htsim_mix.txt and .cm go (default bench/peers)")
    args = ap.parse_args(argv)
    for b in (args.htsim, args.htsim_arriving):
        if b is not None and not Path(b).is_file():
            raise SystemExit(f"htsim binary not found: {b} (see the module docstring to build it)")
    if args.seeds < 1:
        raise SystemExit(f"--seeds: invalid value {args.seeds}, expected 1 or more")
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)

    flows = workload(seed=1)
    cm = out_dir / "uet_htsim_mix.cm"
    write_cm(cm, flows)
    lines = [
        f"UET timer expiries on trim_vs_pfc's mix: htsim ({HTSIM_REPO} @ {HTSIM_COMMIT}, htsim_uec + uet_htsim_rto_events.patch) vs dcnsim",
        f"Made by: python bench/peers/uet_htsim_mix.py --seeds {args.seeds}{'' if args.cc == 'nscc' else ' --cc ' + args.cc}"
        f"{' --htsim-arriving BINARY' if args.htsim_arriving else ''}; {dcnsim_label()}",
        f"Congestion control: {args.cc} (htsim {' '.join(CCS[args.cc][0]) or 'its default'}; dcnsim transport.cc = \"{CCS[args.cc][1]}\")",
        f"Flows: {len(flows)} ({sum(f.tag == 'incast' for f in flows)} incast messages of 1 MB, {sum(f.tag == 'background' for f in flows)} background), "
        f"{sum(f.size for f in flows) / 1e6:.1f} MB, starts 0-{max(f.start_ps for f in flows) / 1e6:.0f} us (uet_htsim_mix.cm)",
        f"Both: 2-tier fat tree, {HOSTS} hosts, 100G, 200 ns links, MTU {MTU} B (64 B headers);"
        " ACKs coalesced to one per 16 KB with UE's SACK bitmap; timer 15 us + 6 full queues at 100G",
        "Cases: " + "; ".join(f"queues {q * MTU:,} B, ECN {e[0] * MTU:,}-{e[1] * MTU:,} B, timer {15 + 6 * q * MTU * 8 / 1e5:.1f} us" for q, e in CASES),
        "FCT in us: mean and p99 per group; counts are totals over all flows (htsim prints no drops: without trimming its resends are the timer's);"
        " 'not lost': resends of packets that were not lost (htsim: the duplicates its receivers took; dcnsim: resends less drops and trims);"
        " replies: the receivers' ACKs, NACKs and RCCC pulls",
        "ECN: htsim marks at dequeue; dcnsim's rows mark at dequeue (\"dcnsim\", switch.aqm.at = \"dequeue\") and at enqueue (its default)"
        + ("; htsim, receiver-driven here, marks no ToR downlink: so does the row \"dcnsim\" (switch.aqm.ports = \"fabric\"),"
           " the others mark on every port (switch.aqm.ports = \"all\", the default)" if args.cc in RECEIVER_DRIVEN else ""),
    ]
    if args.cc in WINDOWED:
        lines.append("In flight: both senders take the receiver's count of bytes taken (UE's ACK_CC rcvd_bytes; dcnsim transport.uet.in_flight = \"received\","
                     " its default); the row \"dcnsim, in flight as acknowledged\" counts only what its ACKs acknowledge")
    if args.htsim_arriving:
        lines.append("htsim, arriving trimmed: htsim + uet_htsim_trim_arriving.patch (a full queue trims the arriving packet, no coin flip)")
    detail: List[str] = []
    over: Dict[tuple, Dict[str, List[float]]] = {}
    for (queue, ecn), trim in [(c, t) for c in CASES for t in (True, False)]:
        label = f"{queue * MTU:,} B queues, {'trimming' if trim else 'no trimming (lossy)'}"
        for seed in range(1, args.seeds + 1):
            runs = []
            for name, binary in (("htsim", args.htsim), ("htsim, arriving trimmed", args.htsim_arriving)):
                if binary is not None:
                    ht = run_htsim(binary, cm, trim, queue, ecn, seed, args.end_us, args.cc)
                    ht.fct = {i: t - flows[i].start_ps / 1e6 for i, t in ht.fct.items()}
                    runs.append((name, ht))
            for name, at, ports, in_flight in dcnsim_marking(args.cc):
                runs.append((name, run_dcnsim(scenario(flows, trim, queue, ecn, args.cc, at, ports, in_flight), seed, flows)))
            detail.append("")
            detail.append(f"{label}, seed {seed}:")
            for name, run in runs:
                detail.append(f"  {name}: " + ", ".join(f"{k} {v}" for k, v in run.counts.items()))
                for k, v in group_stats(flows, run).items():
                    detail.append(f"          {k:<22} {v}")
                acc = over.setdefault((label, name), {})
                for k in ("timer expiries", "resends", "not lost", "NACKs", "replies"):
                    acc.setdefault(k, []).append(run.counts[k])
                acc.setdefault("unfinished", []).append(len(flows) - len(run.fct))
                fcts = over.setdefault((label, name, "fct"), {})
                for g, (_, done) in group_fcts(flows, run).items():
                    fcts.setdefault(f"{g} mean", []).append(statistics.fmean(done) if done else math.nan)
                    fcts.setdefault(f"{g} max", []).append(max(done) if done else math.nan)
            print(f"{label} seed={seed}: " + "  ".join(f"{name} {run.counts}" for name, run in runs), file=sys.stderr)
    lines += ["", f"Over seeds 1-{args.seeds}: mean [range]; FCT (us) mean and slowest per group"]
    for label in dict.fromkeys(k[0] for k in over):
        lines.append(f"{label}:")
        for name in [n for n in ("htsim", "htsim, arriving trimmed", *(row[0] for row in dcnsim_marking(args.cc))) if (label, n) in over]:
            lines.append(f"  {name}: " + ", ".join(f"{k} {mean_range(v, 0)}" for k, v in over[(label, name)].items()))
            fcts = over[(label, name, "fct")]
            for g, *_ in GROUPS:
                lines.append(f"          {g:<22} mean {mean_range(fcts[f'{g} mean'])}, slowest {mean_range(fcts[f'{g} max'])}")
    lines += ["", "Per seed (background FCT by the seeds' bins, incast messages):"] + detail
    txt = out_dir / ("uet_htsim_mix.txt" if args.cc == "nscc" else f"uet_htsim_mix_{args.cc}.txt")
    txt.write_text("\n".join(lines) + "\n")
    print(txt.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
