#!/usr/bin/env python3
"""Issue 38's evidence on a many-core machine, in one call of about eight minutes on 16 cores
(a lent device gives a session 15 minutes, start-up included, so everything goes in one
command and every result is saved as soon as it exists).

The runs are arranged so that the slow single-threaded htsim runs overlap the scaling runs
that do not need every core, and every run on all cores goes on a quiet machine:

0. quiet, on every core, twice each: the largest fabric (k = 40, 16,000 hosts, 1 ms of 50%
   web search: "the largest fabric in under a minute"), then k = 32, 24 and 20;
1. htsim at k = 20 pinned to the last core, htsim at k = 16 and k = 8 then dcnsim on one
   thread at k = 8, 16 and 20 pinned to the core before it (the side-by-side rows, each
   simulator on one core under the same neighbours); meanwhile, on the other cores,
   ``thread_scaling.measure`` at 1, 4 and 8 threads, alternating rounds, on k = 20, 24, 32;
2. quiet again: one one-thread run of k = 20 (how much phase 1's neighbours slowed the
   one-thread references of the speed-ups), dcnsim on every core at k = 8, 16 and 20, and
   htsim and one-thread dcnsim at k = 8 alone (the same calibration for the side-by-side
   rows).

The speed-up on every core is phase 0's time against phase 1's one-thread median (phase 2's
calibration says by how much that flatters it).

``--collect FILE`` turns a run's folder into thread_scaling's rows (JSON for its plot) and
prints the table.

Everything goes under ``--out`` (runs.jsonl, one line per run as it ends; scaling.json from
``thread_scaling.measure``; machine.txt). ``--dir`` holds run_scenario, htsim_dctcp, GNU time
and the exported .tm/.topo files (see bench/README.md, "The scaling table")::

    python3 bench/many_cores.py --dir target/device --out "$OUT"

``--small`` runs the same phases on the k = 8 fabric alone with at most 2 threads (a check of
this script on a small machine, not a measurement).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from thread_scaling import hosts, measure, row, table  # after the path insert
from vs_htsim import core_once, htsim_once

SCEN = Path(__file__).resolve().parent / "scenarios"


def name(k: int) -> str:
    """The bench fat tree of radix k (its scenario's stem, and its exported htsim files')."""
    return f"fat_tree_k{k}_websearch"


def fat(k: int) -> str:
    return str(SCEN / f"{name(k)}.toml")


class Log:
    """runs.jsonl, appended as each run ends (threads share it)."""

    def __init__(self, out: Path) -> None:
        self.path = out / "runs.jsonl"
        self.t0 = time.monotonic()
        self.lock = threading.Lock()

    def add(self, phase: str, what: str, row: Dict[str, Any]) -> None:
        rec = {"phase": phase, "what": what, "at_s": round(time.monotonic() - self.t0, 1), **row}
        with self.lock:
            with self.path.open("a") as f:
                f.write(json.dumps(rec) + "\n")
            print(json.dumps(rec), flush=True)


def collect(out: Path) -> List[Dict[str, Any]]:
    """thread_scaling's rows (for its table and plot) from a run's scaling.json and the
    runs of phase 0 and of ``--only`` (the speed-up there: against phase 1's one-thread median,
    or else the one-thread runs of ``--only``; without either, none)."""
    rows = json.loads((out / "scaling.json").read_text()) if (out / "scaling.json").exists() else []
    runs = [json.loads(x) for x in (out / "runs.jsonl").read_text().splitlines()]
    allcore: Dict[str, List[Dict[str, Any]]] = {}
    for r in runs:
        if r["phase"] in ("0-quiet", "alone") and "error" not in r:
            allcore.setdefault(r["what"], []).append(r)

    def one_thread(k: int) -> Optional[Tuple[float, int]]:
        """The one-thread reference: its median wall time and events (phase 1's, else those
        of ``--only``'s runs)."""
        one = [x for x in rows if x["scenario"] == name(k) and x["threads"] == 1]
        if one:
            return one[0]["median_wall_s"], one[0]["events"]
        alone = allcore.get(f"k{k} threads=1", [])
        return (statistics.median(x["engine_s"] for x in alone), alone[0]["events"]) if alone else None

    for what, rs in list(allcore.items()):
        k, t = int(what.split()[0][1:]), int(what.split("=")[1])
        ref = one_thread(k)
        walls = [x["engine_s"] for x in rs]
        speedups = sorted(ref[0] / w for w in walls) if ref else [float("nan")]
        same = all(x["events"] == (ref[1] if ref else rs[0]["events"]) for x in rs)
        rows.append(row(name(k), hosts(fat(k)), t, walls, speedups, rs[0]["events"], same, rs[0]["flows"], max(x["rss_mb"] or 0.0 for x in rs)))
    return sorted(rows, key=lambda r: (r["hosts"] or 0, r["threads"]))


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", help="run_scenario, htsim_dctcp, time and the exported .tm/.topo files")
    ap.add_argument("--out", required=True, help="where the runs go (with --collect: the run's folder to read)")
    ap.add_argument("--small", action="store_true", help="k = 8 only, at most 2 threads: a check of the script")
    ap.add_argument("--only", metavar="K:T,...", help="instead of the phases: these runs alone, in order (fat tree k on t threads), e.g. 48:16,40:1")
    ap.add_argument("--collect", metavar="JSON", help="write thread_scaling's rows (for `thread_scaling.py plot`) from the runs in --out to JSON and print the table")
    a = ap.parse_args(argv)
    if a.collect:
        rows = collect(Path(a.out))
        Path(a.collect).write_text(json.dumps(rows, indent=1))
        print(table(rows))
        return 0
    if not a.dir:
        ap.error("--dir: required to run (the folder of run_scenario, htsim_dctcp, time and the .tm/.topo files)")
    d, out = Path(a.dir).resolve(), Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    core, htsim = str(d / "run_scenario"), str(d / "htsim_dctcp")
    if (d / "time").is_file():
        import run as _run  # bench/run.py's measurement runs under GNU time where it has one

        _run.GNU_TIME = str(d / "time")
    cpus = sorted(os.sched_getaffinity(0))
    n = len(cpus)
    if a.small:
        big, scaling, side, mid = 8, [8], [8], [1, 2]
        n_all = min(n, 2)
    else:
        big, scaling, side, mid = 40, [20, 24, 32], [8, 16, 20], [1, 4, 8]
        n_all = n
    if n < 4 and not (a.small or a.only):
        ap.error(f"{n} cores: phase 1 needs two pinned cores beside the scaling runs")
    try:
        cpu_info = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    except OSError:
        cpu_info = "(no lscpu)"
    (out / "machine.txt").write_text(f"{platform.platform()}\ncores {n}\n{cpu_info}")
    log = Log(out)
    if a.only:
        try:
            runs = [tuple(int(x) for x in kt.split(":")) for kt in a.only.split(",")]
        except ValueError:
            runs = []
        if not runs or not all(len(r) == 2 and r[1] >= 1 and Path(fat(r[0])).is_file() for r in runs):
            ap.error(f"--only {a.only!r}: expected K:T pairs separated by commas, with bench/scenarios/fat_tree_kK_websearch.toml existing and T at least 1")
        for k, t in runs:
            log.add("alone", f"k{k} threads={t}", core_once(core, fat(k), t, None))
        return 0

    # 0: every core, quiet: the largest fabric, then the scaling fabrics (largest first)
    for k in [big] + list(reversed(scaling)):
        for _ in range(2):
            log.add("0-quiet", f"k{k} threads={n_all}", core_once(core, fat(k), n_all, None))

    # 1: htsim and one-thread dcnsim pinned to the last two cores; scaling on the rest
    last, second = (cpus[-1], cpus[-2]) if n >= 4 else (cpus[-1], cpus[-1])
    rest = cpus[:-2] if n >= 4 else cpus[:1]

    def htsim_big() -> None:
        log.add("1-pinned", f"htsim k{side[-1]} cpu={last}", htsim_once(htsim, d, name(side[-1]), 100, last))

    def side_rows() -> None:
        for k in reversed(side[:-1]):
            log.add("1-pinned", f"htsim k{k} cpu={second}", htsim_once(htsim, d, name(k), 100, second))
        for k in side:
            log.add("1-pinned", f"dcnsim k{k} threads=1 cpu={second}", core_once(core, fat(k), 1, second))

    bg = [threading.Thread(target=htsim_big), threading.Thread(target=side_rows)]
    for b in bg:
        b.start()
    os.sched_setaffinity(0, rest)  # this thread's children inherit it
    rows = measure(core, [fat(k) for k in scaling], mid, 2, None, out / "scaling.json")
    for b in bg:
        b.join()
    os.sched_setaffinity(0, cpus)

    # 2: quiet again: the side-by-side rows on every core, and the calibrations
    log.add("2-quiet", f"k{scaling[0]} threads=1 (calibration)", core_once(core, fat(scaling[0]), 1, None))
    for k in side:
        log.add("2-quiet", f"dcnsim k{k} threads={n_all}", core_once(core, fat(k), n_all, None))
    log.add("2-quiet", f"htsim k{side[0]} (calibration)", htsim_once(htsim, d, name(side[0]), 100, None))
    log.add("2-quiet", f"dcnsim k{side[0]} threads=1 (calibration)", core_once(core, fat(side[0]), 1, None))
    return 0 if all(r["same_events"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
