#!/usr/bin/env python3
"""The UEC's htsim (ultraethernet/uet-htsim, `htsim_uec`) beside dcnsim's UET transport on
the 8-to-1 incast of scenarios/uet_incast_small.toml.

Both simulators get the same inputs: htsim's default 3-tier fat tree with 16 hosts (k = 4,
100 Gb/s and 1 us per link), MTU 4,150 B with 64 B of headers, NSCC, a switch queue of one
BDP (43 packets, 178,450 B) and ECN marking from 37,350 B to 145,250 B; the senders and the
receiver are the scenario's flows (hosts 8-15 to host 0, all starting at 0). Two flow sizes
are run, the scenario's 1,000,000 B and 65,536 B (a copy of the scenario with the sizes
replaced), each with trimming and without:

- htsim: its defaults (trimming, NSCC, "mixed" load balancing) with ``-q 43``, and the
  same with ``-disable_trim`` (which would otherwise grow the queue to 5 BDP);
- dcnsim: the scenario's variants "UET + trimming" and "UET, no trimming".

It writes the connection matrices (``uet_htsim_<size>B.cm``), a table (``uet_htsim.txt``:
per case the FCT min/median/max of both, htsim's NACKs and retransmissions, dcnsim's trims,
retransmissions and drops, then every flow's FCT and the modelling differences) and a plot
of the per-flow FCTs, sorted (``uet_htsim.png``)::

    python bench/peers/uet_htsim.py                     # about a second of simulation
    python bench/peers/uet_htsim.py --htsim /path/to/htsim_uec --out-dir /tmp/uet_peer
    python bench/peers/uet_htsim.py --seeds 5           # and the spread over seeds 1..5

dcnsim's receivers coalesce their ACKs as htsim's do by default (``transport.uet.ack_every``,
16,384 B in both) and carry UE's 64-packet SACK bitmap as htsim's (``transport.uet.sack``);
the tables count both simulators' ACKs. ``--ack-every BYTES`` (1: an ACK per packet) and
``--sack ranges`` (three byte ranges) run other readings, and the outputs' names then end in
``_ack<BYTES>`` and ``_ranges``::

    python bench/peers/uet_htsim.py --seeds 5 --ack-every 1 --sack ranges

dcnsim's switches mark ECN at enqueue by default (the scenario's), htsim's at dequeue;
``--mark-at dequeue`` runs htsim's reading (``switch.aqm.at``), its outputs named
``uet_htsim_dequeue``, so that both readings sit beside htsim (as uet_htsim_mix.py shows
them in one table)::

    python bench/peers/uet_htsim.py --seeds 5 --htsim /path/to/htsim_uec --mark-at dequeue

Where a queue is full htsim drops (or trims) the arriving packet or the last one queued, by
a coin flip; dcnsim the arriving one. ``--htsim-victim arriving`` says that the htsim given
was built with ``uet_htsim_trim_arriving.patch`` (no coin flip: the arriving packet, as
dcnsim), its outputs' names ending in ``_arriving``; the flows' last packets are short
(65,536 B is 16 packets of 4,086 B and one of 160 B), and only the coin flip lets a short
one into a queue full of long ones.

Both count resends of packets that were not lost: htsim's receiver prints each duplicate it
takes ("Spurious"), dcnsim's are its resends less its drops and trims.

With ``--seeds N`` it also runs every case with seeds 1..N in both simulators (htsim's
``-seed``: its load balancing's and trimming's random draws; dcnsim's: the sprayed
entropies, the hashes, the ECN draws) and adds a table of each FCT statistic and counter as
the mean over seeds and its range, so that a difference between the two can be read
against each one's own seed-to-seed spread.

htsim is not part of this project; build ``htsim_uec`` from uet-htsim's ``htsim/sim`` with
``cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build --target htsim_uec``.
"""

from __future__ import annotations

import argparse
import math
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DEFAULT_HTSIM = "/tmp/uet/htsim/sim/build/datacenter/htsim_uec"
DEFAULT_SCENARIO = REPO / "scenarios" / "uet_incast_small.toml"
HTSIM_REPO = "ultraethernet/uet-htsim"
HTSIM_COMMIT = "40ccb05"
VARIANTS = {True: "UET + trimming", False: "UET, no trimming"}

HTSIM_FINISHED = re.compile(r"^Flow Uec_(\d+)_(\d+) flowId (\d+) .*?finished at (\S+) .*?RTS (\d+)", re.M)
#: a duplicate its receiver took (`UecSink::processData` prints each): a resend of a packet
#: that was not lost
HTSIM_DUPLICATE = re.compile(r"^\S+ flowid \d+ Spurious \d+", re.M)
HTSIM_TOTALS = re.compile(r"New: (\d+) Rtx: (\d+) RTS: (\d+) Bounced: (\d+) ACKs: (\d+) NACKs: (\d+)")


@dataclass
class Case:
    """One (flow size, trimming) case: per-flow FCTs (us, by source host) and counters."""

    size: int
    trim: bool
    htsim_cmd: str = ""
    htsim_fct: Dict[int, float] = field(default_factory=dict)
    htsim_totals: Dict[str, int] = field(default_factory=dict)
    htsim_dups: int = 0
    dcnsim_fct: Dict[int, float] = field(default_factory=dict)
    dcnsim_retx: int = 0
    dcnsim_drops: int = 0
    dcnsim_trims: int = 0
    dcnsim_unfinished: int = 0
    dcnsim_acks: int = 0


# --------------------------------------------------------------------------- inputs


def load_scenario(path: Path) -> dict:
    with open(path, "rb") as f:
        return tomllib.load(f)


def scenario_flows(scen: dict) -> List[dict]:
    """The scenario's explicit flow list (the one ``[[workload]] kind = "flows"``)."""
    lists = [w["flows"] for w in scen.get("workload", []) if w.get("kind") == "flows"]
    if len(lists) != 1:
        raise SystemExit("expected exactly one [[workload]] of kind \"flows\" in the scenario")
    return lists[0]


def with_sizes(scen: dict, size: int) -> dict:
    """A copy of the scenario with every flow's size set to ``size`` bytes."""
    import copy

    out = copy.deepcopy(scen)
    for f in scenario_flows(out):
        f["size"] = f"{size}B"
    return out


def hosts(scen: dict) -> int:
    topo = scen["topology"]
    if topo.get("kind") != "fat_tree3":
        raise SystemExit("htsim's default topology is the 3-tier fat tree: the scenario must use fat_tree3")
    k = int(topo["k"])
    return k**3 // 4


def write_cm(path: Path, scen: dict, size: int) -> None:
    """htsim's connection matrix for the scenario's flows, each of ``size`` bytes, from t = 0."""
    flows = scenario_flows(scen)
    lines = [f"Nodes {hosts(scen)}", f"Connections {len(flows)}"]
    for i, f in enumerate(flows, start=1):
        lines.append(f"{int(f['src'])}->{int(f['dst'])} id {i} start 0 size {size}")
    path.write_text("\n".join(lines) + "\n")


def wire_bound_us(size: int, senders: int, mtu: int = 4150, header: int = 64, gbps: float = 100.0) -> float:
    """Time the receiver's link needs for every sender's packets, headers included (us)."""
    mss = mtu - header
    wire = size + math.ceil(size / mss) * header
    return senders * wire * 8 / (gbps * 1e3)


# --------------------------------------------------------------------------- runs


def run_htsim(binary: str, cm: Path, trim: bool, queue_pkts: int, end_us: int, seed: Optional[int], case: Case) -> None:
    args = [binary, "-tm", str(cm), "-end", str(end_us), "-q", str(queue_pkts)]
    if not trim:
        args.append("-disable_trim")
    if seed is not None:
        args += ["-seed", str(seed)]
    with tempfile.TemporaryDirectory(prefix="uet_htsim_") as tmp:
        full = args + ["-o", str(Path(tmp) / "logout.dat")]
        p = subprocess.run(full, cwd=tmp, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"htsim failed ({p.returncode}): {shlex.join(full)}\n{p.stderr[-2000:]}")
    shown = ["htsim_uec"] + args[1:]
    shown[2] = cm.name
    case.htsim_cmd = shlex.join(shown)
    for src, _dst, _fid, t_us, _rts in HTSIM_FINISHED.findall(p.stdout):
        case.htsim_fct[int(src)] = float(t_us)  # every flow starts at 0: the finish time is the FCT
    m = HTSIM_TOTALS.search(p.stdout)
    if not m:
        raise SystemExit(f"no totals line in htsim's output: {shlex.join(full)}")
    case.htsim_totals = dict(zip(("new", "rtx", "rts", "bounced", "acks", "nacks"), map(int, m.groups())))
    case.htsim_dups = len(HTSIM_DUPLICATE.findall(p.stdout))


def with_readings(scen: dict, every: Optional[int], sack: Optional[str] = None, mark_at: Optional[str] = None) -> dict:
    """A copy of the scenario whose UET receivers coalesce ACKs to one per ``every`` bytes
    and report ``sack`` (``transport.uet.sack``), and whose switches mark ECN at
    ``mark_at`` (``switch.aqm.at``), where given."""
    import copy

    if every is None and sack is None and mark_at is None:
        return scen
    out = copy.deepcopy(scen)
    uet = out["transport"].setdefault("uet", {})
    if every is not None:
        uet["ack_every"] = f"{every}B"
    if sack is not None:
        uet["sack"] = sack
    if mark_at is not None:
        out["switch"]["aqm"]["at"] = mark_at
    return out


def run_dcnsim(scen: dict, trim: bool, seed: Optional[int], case: Case) -> None:
    import dcnsim
    from dcnsim.reproduce.studies_uet import replies

    res = dcnsim.run(scen, variant=VARIANTS[trim], seed=seed)
    fl = res.flows
    for src, fct, done in zip(fl["src"], fl["fct_ps"], fl["finished"]):
        if done:
            case.dcnsim_fct[int(src)] = int(fct) / 1e6
    case.dcnsim_unfinished = int((~fl["finished"]).sum())
    case.dcnsim_retx = int(fl["retx"].astype("int64").sum())
    case.dcnsim_drops = int(fl["drops"].astype("int64").sum())
    case.dcnsim_trims = int(res.summary.get("trims") or 0)
    # the replies less the NACKs (one per trimmed header that reached its receiver)
    nacks = case.dcnsim_trims - int(res.summary.get("trimmed_discarded") or 0)
    case.dcnsim_acks = replies(res) - nacks


def dcnsim_dups(c: Case) -> int:
    """dcnsim's resends of packets that were not lost: every drop and every trim costs one
    resend (a resend lost again costs another, and would be counted here as not lost)."""
    return c.dcnsim_retx - c.dcnsim_drops - c.dcnsim_trims


# --------------------------------------------------------------------------- outputs


def spread(values: Sequence[float]) -> str:
    if not values:
        return "-"
    return f"{min(values):.1f} / {statistics.median(values):.1f} / {max(values):.1f}"


def dcnsim_label() -> str:
    import dcnsim

    label = f"dcnsim {dcnsim.__version__}"
    try:
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
        # (this script's own outputs do not count: a second run would see the first's)
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no", "--", ".", f":!{HERE.relative_to(REPO)}"],
                               capture_output=True, text=True, check=True).stdout.strip()
        label += f" (git {head}{' + uncommitted changes' if dirty else ''})"
    except (OSError, subprocess.CalledProcessError):
        pass
    return label


DIFFERENCES = """\
Modelling differences (htsim: sim/uec.cpp, compositequeue.cpp, uec_mp.cpp, datacenter/main_uec.cpp):
- ACKs: both receivers coalesce ACKs to one per 16 KB (about 4 full packets), sending at
  once for CE-marked, AR-flagged, first and duplicate packets (dcnsim's transport.uet.ack_every,
  by htsim's rules), and carry UE's 64-packet SACK bitmap as htsim builds it (dcnsim's
  transport.uet.sack). With --ack-every 1 dcnsim ACKs every packet, so its NSCC gets more
  delay samples per window; with --sack ranges its ACKs carry 3 byte ranges, and a coalesced
  ACK may leave packets that arrived above a hole unreported until the hole fills.
- Victim: when htsim's data queue is full a coin flip trims (or, without trimming, drops)
  either the arriving packet or the last one queued (the arrival then takes its place);
  dcnsim the arriving one (--htsim-victim arriving: htsim built to do the same). Both
  forward a trimmed packet's 64 B header in the priority queue and the receiver NACKs it.
  The flip matters most to short packets: a 65,536 B flow ends in a 224 B packet, which a
  queue of 43 full ones (exactly its 178,450 B) never admits, but which the flip lets in
  by dropping a full one, leaving room for the next short ones too.
- ECN: htsim marks at dequeue (RED-like on the queue left behind); dcnsim marks with a
  linear ramp over the same thresholds (37,350-145,250 B), at enqueue by default (on the
  depth the packet finds) and with --mark-at dequeue on the queue it leaves behind.
- Load balancing: htsim's default is "mixed" (REPS-legacy recycling of ACKed entropies, else
  a bitmap that skips penalised paths); dcnsim sprays obliviously.
- Without trimming both lose the overflowing packets, which then wait for the
  retransmission timer, fixed, from the oldest packet's send time, no back-off (htsim:
  15 us + six full queues at line rate = 100.656 us; dcnsim's default transport.uet.rto is
  the same formula). htsim sends an RTS (a 64 B control packet) when the window is closed
  at a timeout. htsim prints no drop count: its Rtx there are the timer's retransmissions,
  of lost packets and of packets that were not lost ('ht dup'); dcnsim's resends too hold
  both (its drops count the lost).
- FCT: both measure from the flow's start (0 here) to the sender's receipt of the ACK that
  covers the last byte. htsim's counters (New, Rtx, NACKs) are totals over all flows.
"""


def over_seeds(per_seed: List[Case]) -> Dict[str, List[float]]:
    """Each statistic of one case over its seeds: FCT min / median / max of both simulators,
    htsim's NACKs and retransmissions, dcnsim's trims, retransmissions and drops."""
    out: Dict[str, List[float]] = {}
    for c in per_seed:
        for name, fct in (("htsim", c.htsim_fct), ("dcnsim", c.dcnsim_fct)):
            v = list(fct.values())
            for stat, f in (("min", min), ("median", statistics.median), ("max", max)):
                out.setdefault(f"{name} {stat}", []).append(f(v) if v else math.nan)
        for key, val in (("ht NACK", c.htsim_totals["nacks"]), ("ht Rtx", c.htsim_totals["rtx"]), ("ht dup", c.htsim_dups), ("ht ACK", c.htsim_totals["acks"]),
                         ("dc trims", c.dcnsim_trims), ("dc retx", c.dcnsim_retx), ("dc dup", dcnsim_dups(c)), ("dc drops", c.dcnsim_drops), ("dc ACK", c.dcnsim_acks)):
            out.setdefault(key, []).append(float(val))
    return out


def mean_range(xs: Sequence[float], digits: int = 1) -> str:
    m = statistics.fmean(xs)
    return f"{m:.{digits}f} [{min(xs):.{digits}f}-{max(xs):.{digits}f}]"


def seed_table(spread_cases: List[List[Case]], seeds: int) -> List[str]:
    """The mean over seeds 1..N and the range, per case."""
    out = ["", f"Over seeds 1-{seeds} (htsim -seed S, dcnsim seed S): mean [range over seeds] of each run's FCT min / median / max (us) and counters"]
    for per_seed in spread_cases:
        c0 = per_seed[0]
        v = over_seeds(per_seed)
        out.append(f"{c0.size:>9} B, trim {'yes' if c0.trim else 'no'}:")
        for name in ("htsim", "dcnsim"):
            out.append(f"  {name:>6} FCT  " + " / ".join(mean_range(v[f"{name} {stat}"]) for stat in ("min", "median", "max")))
        out.append("  htsim NACKs " + mean_range(v["ht NACK"], 0) + ", resends " + mean_range(v["ht Rtx"], 0) + " (not lost " + mean_range(v["ht dup"], 0) + ")"
                   + ", ACKs " + mean_range(v["ht ACK"], 0) + "; dcnsim trims " + mean_range(v["dc trims"], 0) + ", resends " + mean_range(v["dc retx"], 0)
                   + " (not lost " + mean_range(v["dc dup"], 0) + "), drops " + mean_range(v["dc drops"], 0) + ", ACKs " + mean_range(v["dc ACK"], 0))
    return out


def write_table(path: Path, cases: List[Case], args: argparse.Namespace, scen: dict, spread_cases: Optional[List[List[Case]]] = None) -> None:
    senders = len(scenario_flows(scen))
    out: List[str] = []
    out.append(f"UET incast, {senders} to 1: htsim ({HTSIM_REPO} @ {HTSIM_COMMIT}, htsim_uec) vs dcnsim")
    flags = f" --seeds {args.seeds}" if args.seeds else ""
    flags += f" --ack-every {args.ack_every}" if args.ack_every else ""
    flags += f" --sack {args.sack}" if args.sack else ""
    flags += f" --mark-at {args.mark_at}" if args.mark_at else ""
    flags += f" --htsim-victim {args.htsim_victim}" if args.htsim_victim != "coin" else ""
    out.append(f"Made by: python bench/peers/uet_htsim.py{flags} (htsim {args.htsim}); {dcnsim_label()}")
    every = args.ack_every if args.ack_every is not None else 16_384
    out.append("dcnsim's ACKs: " + ("one per packet (transport.uet.ack_every = 1B; htsim's receiver coalesces to one per 16,384 B)" if every == 1
                                     else f"coalesced to one per {every:,} B by htsim's rules (transport.uet.ack_every{'' if args.ack_every else ', its default'})")
               + ("; their SACK three byte ranges (transport.uet.sack = \"ranges\"; htsim's is a 64-packet bitmap)" if args.sack == "ranges"
                  else "; their SACK UE's 64-packet bitmap, as htsim's (transport.uet.sack's default)"))
    out.append("ECN: htsim marks at dequeue (CompositeQueue::completeService); dcnsim "
               + ("at dequeue too (switch.aqm.at = \"dequeue\")" if args.mark_at == "dequeue"
                  else "at enqueue, on the depth the packet finds (switch.aqm.at's default; --mark-at dequeue runs htsim's reading)"))
    out.append("Full queue: dcnsim drops or trims the arriving packet; htsim "
               + ("the arriving one too (built with uet_htsim_trim_arriving.patch)" if args.htsim_victim == "arriving"
                  else "the arriving one or the last queued, by a coin flip (its own code; --htsim-victim arriving runs a build without it)"))
    out.append(f"dcnsim: {Path(args.scenario).name}, variants {VARIANTS[True]!r} and {VARIANTS[False]!r}, seed "
               f"{args.dcnsim_seed if args.dcnsim_seed is not None else scen.get('scenario', {}).get('seed', 'default')}"
               "; the 65,536 B runs use a copy with the flow sizes replaced")
    out.append("htsim command lines (each run in a scratch folder, with -o LOG added):")
    for c in cases:
        out.append(f"  {c.htsim_cmd}")
    out.append(f"htsim seed: {args.htsim_seed if args.htsim_seed is not None else 'its default (13)'}; "
               "both: k=4 fat tree (16 hosts), 100G, 1 us links, MTU 4150 B, queue 43 packets = 178,450 B")
    out.append("FCTs in us (min / median / max over the flows); 'bound': the receiver link's time for all packets, headers included")
    out.append("'dup': resends of packets not lost (htsim: duplicates its receiver took; dcnsim: resends less drops and trims)")
    out.append("")
    head = (f"{'size B':>9} {'trim':>4} {'bound':>6}  {'htsim FCT':>23}  {'dcnsim FCT':>23}  "
            f"{'ht NACK':>7} {'ht Rtx':>6} {'ht dup':>6} {'ht RTS':>6} {'ht ACK':>6}  {'dc trims':>8} {'dc retx':>7} {'dc dup':>6} {'dc drops':>8} {'dc ACK':>6}")
    out.append(head)
    out.append("-" * len(head))
    for c in cases:
        t = c.htsim_totals
        out.append(
            f"{c.size:>9} {'yes' if c.trim else 'no':>4} {wire_bound_us(c.size, senders):>6.1f}  "
            f"{spread(list(c.htsim_fct.values())):>23}  {spread(list(c.dcnsim_fct.values())):>23}  "
            f"{t['nacks']:>7} {t['rtx']:>6} {c.htsim_dups:>6} {t['rts']:>6} {t['acks']:>6}  {c.dcnsim_trims:>8} {c.dcnsim_retx:>7} {dcnsim_dups(c):>6} {c.dcnsim_drops:>8} {c.dcnsim_acks:>6}"
        )
    unfinished = [(c, senders - len(c.htsim_fct), c.dcnsim_unfinished) for c in cases]
    for c, h, d in unfinished:
        if h or d:
            out.append(f"UNFINISHED ({c.size} B, trim={c.trim}): htsim {h}, dcnsim {d}")
    out.append("")
    out.append("Per-flow FCTs (us) by source host:")
    srcs = sorted({int(f["src"]) for f in scenario_flows(scen)})
    out.append(f"{'size B':>9} {'trim':>4} {'sim':>6}  " + " ".join(f"{'h' + str(s):>7}" for s in srcs))
    for c in cases:
        for name, fct in (("htsim", c.htsim_fct), ("dcnsim", c.dcnsim_fct)):
            row = " ".join(f"{fct[s]:>7.1f}" if s in fct else f"{'-':>7}" for s in srcs)
            out.append(f"{c.size:>9} {'yes' if c.trim else 'no':>4} {name:>6}  {row}")
    if spread_cases:
        out += seed_table(spread_cases, args.seeds)
    out.append("")
    out.append(DIFFERENCES)
    path.write_text("\n".join(out))


def plot(path: Path, cases: List[Case], senders: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted({c.size for c in cases}, reverse=True)
    trims = [True, False]
    fig, axes = plt.subplots(len(sizes), len(trims), figsize=(10, 3.6 * len(sizes)), squeeze=False)
    for c in cases:
        ax = axes[sizes.index(c.size)][trims.index(c.trim)]
        for name, fct, marker in (("htsim", c.htsim_fct, "o"), ("dcnsim", c.dcnsim_fct, "s")):
            ys = sorted(fct.values())
            ax.plot(range(1, len(ys) + 1), ys, marker=marker, label=name)
        ax.axhline(wire_bound_us(c.size, senders), color="grey", ls=":", lw=1, label="receiver-link bound")
        ax.set_title(f"{c.size:,} B per flow, {'trimming' if c.trim else 'no trimming'}")
        ax.set_xlabel("flow (sorted by FCT)")
        ax.set_ylabel("FCT (us)")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    fig.suptitle(f"{senders}-to-1 UET incast, k=4 fat tree, 100G: htsim ({HTSIM_COMMIT}) vs dcnsim")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--htsim", default=DEFAULT_HTSIM, help=f"htsim_uec binary (default {DEFAULT_HTSIM})")
    ap.add_argument("--scenario", default=str(DEFAULT_SCENARIO), help="dcnsim scenario (default scenarios/uet_incast_small.toml)")
    ap.add_argument("--sizes", default="1000000,65536", help="flow sizes in bytes, comma-separated (default 1000000,65536)")
    ap.add_argument("--queue-pkts", type=int, default=43, help="htsim -q: switch queue in packets (default 43 = 1 BDP, as the scenario)")
    ap.add_argument("--end-us", type=int, default=2000, help="htsim -end in us (default 2000)")
    ap.add_argument("--htsim-seed", type=int, default=None, help="htsim -seed (default: htsim's own, 13)")
    ap.add_argument("--dcnsim-seed", type=int, default=None, help="dcnsim seed (default: the scenario's)")
    ap.add_argument("--seeds", type=int, default=0, help="also run seeds 1..N in both and tabulate the spread (default: none)")
    ap.add_argument("--out-dir", default=str(HERE), help="where the .txt, .png and .cm files go (default bench/peers)")
    ap.add_argument("--no-plot", action="store_true", help="skip the PNG")
    ap.add_argument("--ack-every", type=int, default=None, help="dcnsim's transport.uet.ack_every in bytes, 1 for an ACK per packet (default: the scenario's, htsim's 16384)")
    ap.add_argument("--sack", choices=("ranges", "bitmap"), default=None, help="dcnsim's transport.uet.sack (default: the scenario's, htsim's bitmap)")
    ap.add_argument("--mark-at", choices=("enqueue", "dequeue"), default=None, help="dcnsim's switch.aqm.at (default: the scenario's, enqueue; htsim marks at dequeue)")
    ap.add_argument("--htsim-victim", choices=("coin", "arriving"), default="coin",
                    help="what the htsim binary drops or trims at a full queue: its own coin flip (default) or, built with uet_htsim_trim_arriving.patch, the arriving packet")
    args = ap.parse_args(argv)

    if not Path(args.htsim).is_file():
        raise SystemExit(f"htsim binary not found: {args.htsim} (see the module docstring to build it)")
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if args.ack_every is not None and args.ack_every < 1:
        raise SystemExit(f"--ack-every: invalid value {args.ack_every}, expected bytes >= 1")
    scen = with_readings(load_scenario(Path(args.scenario)), args.ack_every, args.sack, args.mark_at)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]

    cases: List[Case] = []
    for size in sizes:
        cm = out_dir / f"uet_htsim_{size}B.cm"
        write_cm(cm, scen, size)
        scen_size = with_sizes(scen, size)
        for trim in (True, False):
            case = Case(size=size, trim=trim)
            run_htsim(args.htsim, cm, trim, args.queue_pkts, args.end_us, args.htsim_seed, case)
            run_dcnsim(scen_size, trim, args.dcnsim_seed, case)
            cases.append(case)
            print(f"{size:>9} B trim={'yes' if trim else 'no ':3}  htsim {spread(list(case.htsim_fct.values()))}  "
                  f"dcnsim {spread(list(case.dcnsim_fct.values()))}", file=sys.stderr)

    spread_cases: List[List[Case]] = []
    for c in cases if args.seeds > 0 else []:
        cm, scen_size = out_dir / f"uet_htsim_{c.size}B.cm", with_sizes(scen, c.size)
        per_seed = []
        for seed in range(1, args.seeds + 1):
            sc = Case(size=c.size, trim=c.trim)
            run_htsim(args.htsim, cm, c.trim, args.queue_pkts, args.end_us, seed, sc)
            run_dcnsim(scen_size, c.trim, seed, sc)
            per_seed.append(sc)
        spread_cases.append(per_seed)

    stem = "uet_htsim" + (f"_ack{args.ack_every}" if args.ack_every is not None else "") + (f"_{args.sack}" if args.sack else "") + (f"_{args.mark_at}" if args.mark_at else "")
    stem += "_arriving" if args.htsim_victim == "arriving" else ""
    txt = out_dir / f"{stem}.txt"
    write_table(txt, cases, args, scen, spread_cases)
    print(txt.read_text())
    if not args.no_plot:
        plot(out_dir / f"{stem}.png", cases, len(scenario_flows(scen)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
