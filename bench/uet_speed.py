#!/usr/bin/env python3
"""Issue 59's speed table: the k = 8 bench fat tree (bench/scenarios/fat_tree_k8_websearch.toml:
128 hosts at 100 Gb/s, web search at 50% for 2 ms, run until every flow finishes) with
DCTCP as shipped, DCTCP sprayed, and the same flows over the UET transport with NSCC
(sprayed), with trimming, and with REPS; events, events/s and peak memory of the core
runner, each variant run ``--rounds`` times in turn (alternating, so that the machine's
drift falls on all alike), medians reported.

The UET variants keep the bench's queues, MTU and its step-marking threshold (15 packets);
trimming adds a second queue for the headers. The variants run different models, so their
event counts differ: events/s is the comparable rate, wall time what a user waits.

Usage::

    cargo build --release -p dcnsim-core --example run_scenario
    python bench/uet_speed.py [--rounds 5] [--json bench/results/uet_speed.json]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import ROOT, run_core  # after the path insert: one measurement for every bench script

BENCH = ROOT / "bench" / "scenarios" / "fat_tree_k8_websearch.toml"

# name -> (text replacements on the bench scenario)
VARIANTS = {
    "DCTCP (bench)": [],
    "DCTCP, sprayed": [('kind = "dctcp"', 'kind = "dctcp"\npath = "spray"')],
    "UET + NSCC, sprayed": [('kind = "dctcp"', 'kind = "uet"')],
    "UET + NSCC + trimming": [('kind = "dctcp"', 'kind = "uet"'), ("[switch]", "[switch]\nqueues = 2\ntrim = {}")],
    "UET + NSCC + trimming, REPS": [('kind = "dctcp"', 'kind = "uet"\npath = "reps"'), ("[switch]", "[switch]\nqueues = 2\ntrim = {}")],
}


def variant_text(base: str, edits) -> str:
    text = base
    for old, new in edits:
        assert old in text, f"{old!r} not in the bench scenario"
        text = text.replace(old, new, 1)
    return text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--bin", default=str(ROOT / "target" / "release" / "examples" / "run_scenario"))
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    base = BENCH.read_text()
    rows = {name: [] for name in VARIANTS}
    with tempfile.TemporaryDirectory() as d:
        paths = {}
        for i, (name, edits) in enumerate(VARIANTS.items()):
            p = Path(d) / f"v{i}.toml"
            p.write_text(variant_text(base, edits))
            paths[name] = p
        for r in range(a.rounds):
            order = list(VARIANTS) if r % 2 == 0 else list(reversed(VARIANTS))
            for name in order:
                row = run_core(Path(a.bin), paths[name], timeout=600)
                if "error" in row:
                    raise SystemExit(f"{name}: {row['error']}")
                rows[name].append(row)
    out = []
    print(f"k = 8 bench fat tree, {a.rounds} rounds, medians (range of wall time)")
    print(f"{'variant':32} {'flows':>11} {'events':>12} {'wall s':>16} {'Mevents/s':>10} {'peak MB':>8}")
    for name, rs in rows.items():
        med = lambda k: statistics.median(x[k] for x in rs)
        walls = [x["wall_s"] for x in rs]
        peaks = [x["peak_rss_mb"] for x in rs if x.get("peak_rss_mb")]
        rec = {
            "variant": name,
            "flows_finished": rs[0]["flows_finished"],
            "flows_total": rs[0]["flows_total"],
            "events": rs[0]["events"],
            "wall_s_median": med("wall_s"),
            "wall_s_range": [min(walls), max(walls)],
            "events_per_s_median": med("events_per_s"),
            "peak_rss_mb_median": statistics.median(peaks) if peaks else None,
        }
        out.append(rec)
        print(
            f"{name:32} {rec['flows_finished']:>5}/{rec['flows_total']:<5} {rec['events']:>12,} "
            f"{rec['wall_s_median']:>6.2f} ({min(walls):.2f}-{max(walls):.2f}) {rec['events_per_s_median'] / 1e6:>10.2f} "
            f"{(rec['peak_rss_mb_median'] or float('nan')):>8.1f}"
        )
    if a.json:
        Path(a.json).write_text(json.dumps({"rounds": a.rounds, "rows": out}, indent=1) + "\n")


if __name__ == "__main__":
    main()
