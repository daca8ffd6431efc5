#!/usr/bin/env python3
"""RCCC (Ultra Ethernet's receiver credit congestion control) in the UEC's htsim
(ultraethernet/uet-htsim, ``htsim_uec -receiver_cc_only``) beside dcnsim's
(``transport.cc = "rccc"``), where a sender's NIC is shared by several flows and where it
is not.

An RCCC sender divides the pull target its packets carry by the flows its NIC holds ready
to send (htsim's ``computePullTarget``: ``pull_target /= _nic.activeSources()``), so that
the flows of one sender ask together for about one window of credit. The cases put one to
eight flows on each sending NIC, 1,000,000 B per flow, all starting at 0, with trimming:

- ``incast 8 to 1``: hosts 8-15 to host 0 (one flow per sender: the division never acts);
- ``shuffle 4 x 4``: hosts 8-11 each to hosts 0-3 (four flows per sender and per receiver);
- ``outcast 1 to 8``: host 8 to hosts 0-7 (eight flows on one sender).

Both simulators get the fabric and switch of scenarios/uet_incast_small.toml (htsim's
default k = 4 fat tree, 16 hosts, 100 Gb/s, 1 us links, MTU 4,150 B with 64 B of headers, a
queue of 43 packets, 178,450 B); dcnsim runs its variant "UET + trimming" with RCCC alone,
htsim its defaults with ``-receiver_cc_only -q 43``. Seeds 1..N in both (htsim ``-seed``).
Writes ``rccc_htsim.txt`` (per case: each simulator's FCT min / median / max, mean over
seeds and range, and the counters) and ``rccc_htsim.png`` (seed 1's FCTs, sorted)::

    python bench/peers/rccc_htsim.py --seeds 5      # about two minutes on one core
    python bench/peers/rccc_htsim.py --htsim /path/to/htsim_uec --out-dir /tmp/rccc_peer

Build htsim as bench/peers/uet_htsim.py says.
"""

from __future__ import annotations

import argparse
import copy
import math
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import uet_htsim as peer  # noqa: E402  (the same fabric, binary and labels)

SIZE = 1_000_000
VARIANT = "UET + trimming"
HTSIM_FINISHED = re.compile(r"^Flow Uec_(\d+)_(\d+) flowId (\d+) .*?finished at (\S+)", re.M)
CASES: Dict[str, List[Tuple[int, int]]] = {
    "incast 8 to 1": [(s, 0) for s in range(8, 16)],
    "shuffle 4 x 4": [(s, d) for s in range(8, 12) for d in range(4)],
    "outcast 1 to 8": [(8, d) for d in range(8)],
}

Fcts = Dict[Tuple[int, int], float]


def bound_us(pairs: Sequence[Tuple[int, int]]) -> float:
    """The busiest host link's time for its flows' packets, headers included (us)."""
    per_link: Dict[Tuple[str, int], int] = {}
    for s, d in pairs:
        per_link[("tx", s)] = per_link.get(("tx", s), 0) + 1
        per_link[("rx", d)] = per_link.get(("rx", d), 0) + 1
    return peer.wire_bound_us(SIZE, max(per_link.values()))


def run_htsim(binary: str, pairs: Sequence[Tuple[int, int]], seed: int) -> Tuple[Fcts, Dict[str, int], str]:
    with tempfile.TemporaryDirectory(prefix="rccc_htsim_") as tmp:
        cm = Path(tmp) / "flows.cm"
        lines = ["Nodes 16", f"Connections {len(pairs)}"] + [f"{s}->{d} id {i} start 0 size {SIZE}" for i, (s, d) in enumerate(pairs, 1)]
        cm.write_text("\n".join(lines) + "\n")
        args = [binary, "-tm", str(cm), "-end", "5000", "-q", "43", "-receiver_cc_only", "-seed", str(seed)]
        p = subprocess.run(args + ["-o", str(Path(tmp) / "logout.dat")], cwd=tmp, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"htsim failed ({p.returncode}): {shlex.join(args)}\n{p.stderr[-2000:]}")
    fct = {(int(s), int(d)): float(t) for s, d, _, t in HTSIM_FINISHED.findall(p.stdout)}
    m = peer.HTSIM_TOTALS.search(p.stdout)
    if not m:
        raise SystemExit(f"no totals line in htsim's output: {shlex.join(args)}")
    totals = dict(zip(("new", "rtx", "rts", "bounced", "acks", "nacks"), map(int, m.groups())))
    shown = ["htsim_uec", "-tm", "CASE.cm"] + args[3:]
    return fct, totals, shlex.join(shown)


def run_dcnsim(base: dict, pairs: Sequence[Tuple[int, int]], seed: int) -> Tuple[Fcts, Dict[str, int]]:
    import dcnsim

    sc = copy.deepcopy(base)
    sc["transport"]["cc"] = "rccc"
    sc["variant"] = [v for v in sc.get("variant", []) if v["name"] == VARIANT]  # (its DCTCP variant would refuse cc)
    peer.scenario_flows(sc)[:] = [{"src": s, "dst": d, "size": f"{SIZE}B"} for s, d in pairs]
    res = dcnsim.run(sc, variant=VARIANT, seed=seed)
    fl = res.flows
    fct = {(int(s), int(d)): int(t) / 1e6 for s, d, t, done in zip(fl["src"], fl["dst"], fl["fct_ps"], fl["finished"]) if done}
    counts = {"trims": int(res.summary.get("trims") or 0), "retx": int(fl["retx"].astype("int64").sum()),
              "drops": int(fl["drops"].astype("int64").sum()), "unfinished": int((~fl["finished"]).sum())}
    return fct, counts


def stats(fct: Fcts) -> List[float]:
    v = list(fct.values())
    return [min(v), statistics.median(v), max(v)] if v else [math.nan] * 3


def mean_range(xs: Sequence[float], digits: int = 1) -> str:
    return f"{statistics.fmean(xs):,.{digits}f} [{min(xs):,.{digits}f}-{max(xs):,.{digits}f}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--htsim", default=peer.DEFAULT_HTSIM, help="the htsim_uec binary")
    ap.add_argument("--seeds", type=int, default=5, help="seeds 1..N in both simulators")
    ap.add_argument("--scenario", default=str(peer.DEFAULT_SCENARIO), help="the fabric and switch (its flows are replaced)")
    ap.add_argument("--out-dir", default=str(HERE), help="where rccc_htsim.txt and .png go")
    args = ap.parse_args()
    base = peer.load_scenario(Path(args.scenario))
    out_dir = Path(args.out_dir)
    results = {}
    commands = {}
    for name, pairs in CASES.items():
        runs = []
        for seed in range(1, args.seeds + 1):
            hf, ht, cmd = run_htsim(args.htsim, pairs, seed)
            df, dc = run_dcnsim(base, pairs, seed)
            runs.append((hf, ht, df, dc))
            print(f"{name} seed {seed}: htsim {stats(hf)} dcnsim {stats(df)}", flush=True)
        results[name] = runs
        commands[name] = cmd

    out = [f"RCCC where senders share their NIC: htsim ({peer.HTSIM_REPO} @ {peer.HTSIM_COMMIT}, htsim_uec -receiver_cc_only) vs dcnsim (transport.cc = \"rccc\")",
           f"Made by: python bench/peers/rccc_htsim.py --seeds {args.seeds} (htsim {args.htsim}); {peer.dcnsim_label()}",
           f"Both: {Path(args.scenario).name}'s fabric (k = 4 fat tree, 16 hosts, 100G, 1 us links, MTU 4150 B, queue 43 packets = 178,450 B), "
           f"trimming on, every flow {SIZE:,} B from t = 0; dcnsim variant {VARIANT!r} with cc = \"rccc\"; seeds 1-{args.seeds} in both",
           "htsim command lines (CASE.cm: the case's flows; each run in a scratch folder, with -o LOG added):"]
    out += [f"  {name}: {cmd}" for name, cmd in commands.items()]
    out += ["FCTs in us: mean over seeds [range over seeds] of each run's min / median / max over its flows; "
            "'bound': the busiest host link's time for its flows' packets, headers included", ""]
    for name, runs in results.items():
        pairs = CASES[name]
        flows_per_sender = max(sum(1 for s, _ in pairs if s == x) for x, _ in pairs)
        out.append(f"{name} ({len(pairs)} flows, up to {flows_per_sender} per sender), bound {bound_us(pairs):.1f} us:")
        for sim, idx in (("htsim", 0), ("dcnsim", 2)):
            per = [stats(r[idx]) for r in runs]
            out.append(f"  {sim:>6} FCT  " + " / ".join(mean_range([p[i] for p in per]) for i in range(3)))
        out.append("  htsim NACKs " + mean_range([r[1]["nacks"] for r in runs], 0) + ", resends " + mean_range([r[1]["rtx"] for r in runs], 0)
                   + ", RTS " + mean_range([r[1]["rts"] for r in runs], 0)
                   + "; dcnsim trims " + mean_range([r[3]["trims"] for r in runs], 0) + ", resends " + mean_range([r[3]["retx"] for r in runs], 0)
                   + ", drops " + mean_range([r[3]["drops"] for r in runs], 0))
        unfinished = [(len(pairs) - len(r[0]), r[3]["unfinished"]) for r in runs]
        if any(h or d for h, d in unfinished):
            out.append(f"  UNFINISHED per seed (htsim, dcnsim): {unfinished}")
        out.append("")
    out.append("Modelling differences as in bench/peers/uet_htsim.txt; for RCCC also: htsim turns ECN off on the ToRs' downlinks "
               "with receiver CC (main_uec.cpp; RCCC alone reads no mark), pre-grants idle connections credit (slow pulls) and "
               "resends a timed-out packet after an RTS; dcnsim does neither (docs/mechanisms.md, RCCC).")
    (out_dir / "rccc_htsim.txt").write_text("\n".join(out) + "\n")
    print("\n".join(out))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(CASES), figsize=(4.2 * len(CASES), 3.6), squeeze=False)
    for ax, (name, runs) in zip(axes[0], results.items()):
        for sim, idx, style in (("htsim", 0, "o-"), ("dcnsim", 2, "s--")):
            v = sorted(runs[0][idx].values())
            ax.plot(range(1, len(v) + 1), v, style, label=sim, markersize=4)
        ax.axhline(bound_us(CASES[name]), color="grey", lw=0.8, ls=":", label="bound")
        ax.set_ylim(min(ax.get_ylim()[0], bound_us(CASES[name]) - 5), None)
        ax.set_title(f"{name} (seed 1)")
        ax.set_xlabel("flow, by FCT")
        ax.set_ylabel("FCT (us)")
        ax.legend(fontsize=8)
    fig.suptitle("RCCC, 1 MB flows, trimming: htsim -receiver_cc_only vs dcnsim cc = \"rccc\"")
    fig.tight_layout()
    fig.savefig(out_dir / "rccc_htsim.png", dpi=110)


if __name__ == "__main__":
    main()
