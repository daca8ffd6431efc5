#!/usr/bin/env python3
"""One run on many cores (issue 38): wall time and speed-up of the core runner split over
N threads, against one thread, on the same scenario.

Two steps, so that the runs can go on a many-core box that has no Python packages and the
plot be drawn where matplotlib is installed:

``run``: for each scenario, runs of ``run_scenario --threads N`` for every N given, in
rounds whose order alternates (1 4 8 16, 16 8 4 1, ...: bench/ab.py's pairs), and prints
per scenario and thread count the median wall time, the speed-up (the median over rounds
of one thread's time over N threads' in the same round), events/s and peak RSS. Event counts
must be the same at every thread count (split runs are byte-identical to one thread's); a
difference is flagged. ``--json FILE`` keeps every run::

    python bench/thread_scaling.py run --core-bin target/release/examples/run_scenario \\
        --threads 1,4,8,16 --pairs 3 --json scaling.json bench/scenarios/fat_tree_k20_websearch.toml ...

``plot``: the speed-up and the wall time against the thread count, one line per scenario
(the ideal speed-up dashed)::

    python bench/thread_scaling.py plot scaling.json -o bench/thread_scaling.png

Only the standard library for ``run`` (it reuses bench/ab.py's pairs and bench/run.py's
measurement).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ab import pairs  # after the path insert: one way to alternate runs for every bench script


def hosts(scenario: str) -> Optional[int]:
    """The host count of a k-ary 3-tier fat tree's scenario (None for other fabrics)."""
    import tomllib

    with open(scenario, "rb") as f:
        topo = tomllib.load(f).get("topology", {})
    return topo["k"] ** 3 // 4 if topo.get("kind") == "fat_tree3" and "k" in topo else None


def row(scenario: str, n_hosts: Optional[int], threads: int, walls: List[float], speedups: List[float], events: int, same_events: bool, flows: str, peak_rss_mb: float) -> Dict[str, Any]:
    """One table row: a scenario at one thread count (``speedups`` sorted, one per run)."""
    return {
        "scenario": scenario,
        "hosts": n_hosts,
        "threads": threads,
        "runs": len(walls),
        "wall_s": walls,
        "median_wall_s": statistics.median(walls),
        "speedup": statistics.median(speedups),
        "speedup_range": [speedups[0], speedups[-1]],
        "events": events,
        "same_events": same_events,
        "events_per_s": events / statistics.median(walls),
        "flows": flows,
        "peak_rss_mb": peak_rss_mb,
    }


def measure(core: str, scenarios: Sequence[str], threads: Sequence[int], n: int, timeout: Optional[float], save: Optional[Path] = None) -> List[Dict[str, Any]]:
    """Every scenario's runs at every thread count; one row per scenario and count. With
    ``save``, the rows so far are written there as JSON after each scenario (a run cut short
    by a machine's time limit keeps the scenarios that finished)."""
    rows: List[Dict[str, Any]] = []
    for s in scenarios:
        bins = {f"t{t}": f"{core} --threads {t}" if t > 1 else core for t in threads}
        runs = pairs(bins, s, n, None, timeout)
        one = runs[f"t{threads[0]}"]
        for t in threads:
            r = runs[f"t{t}"]
            walls = [x["wall_s"] for x in r]
            speedups = sorted(a["wall_s"] / b["wall_s"] for a, b in zip(one, r))
            flows = f"{r[0]['flows_finished']}/{r[0]['flows_total']}"
            same = all(x["events"] == one[0]["events"] for x in r)
            rows.append(row(Path(s).stem, hosts(s), t, walls, speedups, r[0]["events"], same, flows, max(x["peak_rss_mb"] or 0.0 for x in r)))
            print(f"# {rows[-1]['scenario']} threads={t}: median {rows[-1]['median_wall_s']:.2f} s, speed-up {rows[-1]['speedup']:.2f}", flush=True)
        if save:
            save.write_text(json.dumps(rows, indent=1))
    return rows


def table(rows: Sequence[Dict[str, Any]]) -> str:
    out = [
        "| scenario | hosts | threads | runs | median wall (s) | speed-up (range) | events | events/s | peak RSS (MB) | flows |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lo, hi = r["speedup_range"]
        # a fabric run only on many threads (too slow on one for the machine's time) has none
        sp = "-" if math.isnan(r["speedup"]) else f"{r['speedup']:.2f}x ({lo:.2f}-{hi:.2f})"
        ev = f"{r['events'] / 1e6:.1f} M" + ("" if r["same_events"] else " (DIFFERENT from 1 thread)")
        out.append(
            f"| {r['scenario']} | {r['hosts'] or '-'} | {r['threads']} | {r['runs']} | {r['median_wall_s']:.2f} | {sp} "
            f"| {ev} | {r['events_per_s'] / 1e6:.2f} M | {r['peak_rss_mb']:.1f} | {r['flows']} |"
        )
    return "\n".join(out)


def plot(rows: Sequence[Dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    names = list(dict.fromkeys(r["scenario"] for r in rows))
    top = max(r["threads"] for r in rows)
    for name in names:
        rs = sorted((r for r in rows if r["scenario"] == name), key=lambda r: r["threads"])
        label = f"{name} ({rs[0]['hosts']} hosts)" if rs[0]["hosts"] else name
        t = [r["threads"] for r in rs]
        ax1.errorbar(t, [r["speedup"] for r in rs], yerr=[[r["speedup"] - r["speedup_range"][0] for r in rs], [r["speedup_range"][1] - r["speedup"] for r in rs]], marker="o", capsize=3, label=label)
        ax2.plot(t, [r["median_wall_s"] for r in rs], marker="o", label=label)
    ax1.plot([1, top], [1, top], "k--", lw=0.8, label="ideal")
    ax1.set(xlabel="threads", ylabel="speed-up over one thread (median, range)", title="speed-up")
    ax2.set(xlabel="threads", ylabel="wall time (s, median)", yscale="log", title="wall time")
    ticks = sorted({r["threads"] for r in rows})
    for ax in (ax1, ax2):
        ax.set_xscale("log", base=2)
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.minorticks_off()
        ax.grid(alpha=0.3)
    ax1.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    rn = sub.add_parser("run", help="time the scenarios at each thread count")
    rn.add_argument("scenarios", nargs="+")
    rn.add_argument("--core-bin", required=True, help="dcnsim's run_scenario binary")
    rn.add_argument("--threads", default="1,2", help="thread counts, comma-separated, 1 among them (default 1,2)")
    rn.add_argument("--pairs", type=int, default=3, help="rounds of runs (default 3)")
    rn.add_argument("--timeout", type=float, help="give up on a run after S seconds")
    rn.add_argument("--json", help="also save the rows as JSON (for plot)")
    pl = sub.add_parser("plot", help="draw speed-up and wall time from run's JSON")
    pl.add_argument("json")
    pl.add_argument("-o", "--out", required=True, help="PNG to write")
    a = ap.parse_args(argv)
    if a.cmd == "plot":
        rows = json.loads(Path(a.json).read_text())
        print(table(rows))
        plot(rows, Path(a.out))
        return 0
    if not os.access(a.core_bin, os.X_OK):
        ap.error(f"--core-bin {a.core_bin!r}: not an executable")
    try:
        threads = sorted({int(x) for x in a.threads.split(",")})
    except ValueError:
        ap.error(f"--threads {a.threads!r}: expected thread counts separated by commas, e.g. 1,4,8,16")
    if threads[0] != 1:
        ap.error(f"--threads {a.threads!r}: 1 must be among the counts (the speed-up is over one thread)")
    if a.pairs < 1:
        ap.error(f"--pairs {a.pairs}: expected 1 or more")
    rows = measure(os.path.abspath(a.core_bin), a.scenarios, threads, a.pairs, a.timeout, Path(a.json) if a.json else None)
    print(table(rows))
    return 0 if all(r["same_events"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
