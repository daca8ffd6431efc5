#!/usr/bin/env python3
"""Alternating A/B runs of two or more builds of the core runner, for speed claims.

Wall-clock time on a shared machine drifts by tens of percent over minutes, so one run
of each build says little. This runs the builds in pairs, alternating which goes first
(A B, B A, A B, ...), and reports per scenario the ratio of each build's wall time to
the first build's within every pair, the median of those ratios, events per second and
the largest peak RSS. Event counts must agree between builds of an engine refactor
(issue 15: results stay bit-identical); a difference is flagged in the table.

Usage::

    python bench/ab.py --bin old=/tmp/old/run_scenario --bin new=target/release/examples/run_scenario \\
        --pairs 5 bench/scenarios/fat_tree_k8_websearch.toml
    python bench/ab.py ... --parallel k8.toml k16.toml k20.toml   # one core per scenario
    python bench/ab.py --bin "t1=target/release/examples/run_scenario" \
        --bin "t2=target/release/examples/run_scenario --threads 2" k16.toml   # threads

``--parallel`` runs each scenario's sequence of pairs at the same time as the others,
each pinned to its own core (on a machine with cores to spare: a quiet 16-core box).
Within one scenario the runs stay sequential, so the builds never compete with each
other. Needs only the Python standard library (it reuses bench/run.py's measurement).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import threading
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import run_core  # after the path insert: one measurement for every bench script


def one_run(binary: str, scenario: str, cpu: Optional[int], timeout: Optional[float]) -> Dict[str, Any]:
    exe, *args = shlex.split(binary)
    row = run_core(Path(exe), Path(scenario), timeout, cpu, args)
    if "error" in row:
        raise SystemExit(f"{binary} {scenario}: exit {row['rc']}: {row['error']}")
    return row


def pairs(bins: Dict[str, str], scenario: str, n: int, cpu: Optional[int], timeout: Optional[float]) -> Dict[str, List[Dict[str, Any]]]:
    names = list(bins)
    runs: Dict[str, List[Dict[str, Any]]] = {b: [] for b in names}
    for i in range(n):
        for b in names if i % 2 == 0 else names[::-1]:
            runs[b].append(one_run(bins[b], scenario, cpu, timeout))
    return runs


def summarize(scenario: str, runs: Dict[str, List[Dict[str, Any]]]) -> List[Dict[str, Any]]:
    names = list(runs)
    ref = runs[names[0]]
    rows = []
    for b in names:
        r = runs[b]
        ratios = [x["wall_s"] / y["wall_s"] for x, y in zip(r, ref)]
        walls = [x["wall_s"] for x in r]
        events = r[0]["events"]
        rows.append(
            {
                "scenario": Path(scenario).stem,
                "build": b,
                "pairs": len(r),
                "median_wall_s": statistics.median(walls),
                "ratios": ratios,
                "median_ratio": statistics.median(ratios),
                "events": events,
                "same_events": all(x["events"] == ref[0]["events"] for x in r),
                "events_per_s": events / statistics.median(walls),
                "flows": f"{r[0]['flows_finished']}/{r[0]['flows_total']}",
                "peak_rss_mb": max(x["peak_rss_mb"] or 0.0 for x in r),
                # system time apart: a slow first touch of memory (a VM's hypervisor backing
                # it again) shows there, not in the engine's user time
                "median_user_s": statistics.median(x["user_s"] for x in r),
                "median_sys_s": statistics.median(x["sys_s"] for x in r),
            }
        )
    return rows


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenarios", nargs="+", metavar="SCENARIO.toml")
    ap.add_argument("--bin", action="append", required=True, metavar="NAME=PATH", help="a build of run_scenario; the first is the reference (give two or more)")
    ap.add_argument("--pairs", type=int, default=5, metavar="N", help="runs of each build per scenario (default 5)")
    ap.add_argument("--parallel", action="store_true", help="run the scenarios at once, each pinned to its own core")
    ap.add_argument("--timeout", type=float, default=None, metavar="S", help="give up on a run after S seconds")
    ap.add_argument("--json", metavar="FILE", help="also save every run as JSON")
    a = ap.parse_args(argv)
    bins: Dict[str, str] = {}
    for spec in a.bin:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path.strip() or not os.access(shlex.split(path)[0], os.X_OK):
            ap.error(f"--bin {spec!r}: expected NAME=PATH of an executable run_scenario build (PATH may be followed by its options)")
        if name in bins:
            ap.error(f"--bin {spec!r}: the name {name!r} is given twice")
        bins[name] = path
    if len(bins) < 2:
        ap.error("--bin: give at least two builds to compare")
    if a.pairs < 1:
        ap.error(f"--pairs {a.pairs}: expected at least 1")
    for s in a.scenarios:
        if not Path(s).is_file():
            ap.error(f"scenario {s!r}: no such file")

    results: Dict[str, Dict[str, List[Dict[str, Any]]]] = {}
    if a.parallel:
        cpus = sorted(os.sched_getaffinity(0))
        if len(cpus) < len(a.scenarios):
            ap.error(f"--parallel: {len(a.scenarios)} scenarios but only {len(cpus)} cores")
        errors: List[BaseException] = []

        def stream(s: str, cpu: int) -> None:
            try:
                results[s] = pairs(bins, s, a.pairs, cpu, a.timeout)
            except BaseException as e:  # reported after the other streams finish
                errors.append(e)

        # Leave cpu 0 to the system and this script when there is room.
        use = cpus[1:] if len(cpus) > len(a.scenarios) else cpus
        threads = [threading.Thread(target=stream, args=(s, c)) for s, c in zip(a.scenarios, use)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise SystemExit(str(errors[0]))
    else:
        for s in a.scenarios:
            results[s] = pairs(bins, s, a.pairs, None, a.timeout)

    rows = [row for s in a.scenarios for row in summarize(s, results[s])]
    print("| scenario | build | pairs | median wall (s) | ratio to first, per pair | median ratio | events | events/s | flows | median user / system (s) | peak RSS (MB) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        ev = f"{r['events']:,}" + ("" if r["same_events"] else " (DIFFERS)")
        per = ", ".join(f"{x:.3f}" for x in r["ratios"])
        print(
            f"| {r['scenario']} | {r['build']} | {r['pairs']} | {r['median_wall_s']:.2f} | {per} | {r['median_ratio']:.3f} | {ev} | "
            f"{r['events_per_s'] / 1e6:.2f} M | {r['flows']} | {r['median_user_s']:.2f} / {r['median_sys_s']:.2f} | {r['peak_rss_mb']:.1f} |"
        )
    if a.json:
        Path(a.json).write_text(json.dumps({"cpus": os.cpu_count(), "rows": rows, "runs": results}, indent=1))
    return 0 if all(r["same_events"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
