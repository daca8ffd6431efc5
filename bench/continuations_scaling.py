#!/usr/bin/env python3
"""Issue 56 part 2's evidence: the full-size runs whose flows continue others (the seed 000
and 003 persistent incasts, the flagship CI study) and seed 004's SFC study, split over 1,
2, 4, 8 and 16 threads with the core runner, one run each, one-thread first. Standard
library only (a lent device has no package registry); every run is saved as it ends.

    python3 bench/continuations_scaling.py --bin target/release/examples/run_scenario --out "$OUT" --threads 1,4,8,16

Each line of ``runs.jsonl``: scenario, variant, threads, partitions, events, wall and build
time, events/s and peak RSS as ``run_scenario`` prints them. A split run's events must equal
one thread's (its tables are byte-identical: the split-run tests); the table printed at
the end gives each run's speed-up over the one-thread run of the same case.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Tuple

ROOT = Path(__file__).resolve().parent.parent

# (scenario file, variant): the flagship CI study and seed 000's, with continuations; seed
# 004's SFC study (no continuations) beside them
CASES: List[Tuple[str, str]] = [
    ("scenarios/seed003_ci_2queue.toml", "CI"),
    ("scenarios/seed000_ci_3queue.toml", "CI"),
    ("scenarios/seed004_sfc_benefits.toml", "SFC proxy+DCQCN"),
]

LINE = re.compile(r"events=(\d+) build=([\d.]+)s wall=([\d.]+)s events/s=([\d.]+)M threads=(\d+)")


def once(binary: str, scenario: str, variant: str, threads: int, timeout: float) -> Dict[str, object]:
    t0 = time.time()
    p = subprocess.run([binary, str(ROOT / scenario), variant, "--threads", str(threads)], capture_output=True, text=True, timeout=timeout)
    out = p.stdout + p.stderr
    m = LINE.search(out)
    if p.returncode != 0 or not m:
        return {"scenario": scenario, "variant": variant, "threads": threads, "error": out[-2000:]}
    rss = re.search(r"peak_rss_mb=(\d+)", out)
    return {
        "scenario": scenario,
        "variant": variant,
        "threads": threads,
        "partitions": int(m.group(5)),
        "events": int(m.group(1)),
        "build_s": float(m.group(2)),
        "wall_s": float(m.group(3)),
        "events_per_s_m": float(m.group(4)),
        "peak_rss_mb": int(rss.group(1)) if rss else None,
        "process_s": round(time.time() - t0, 3),
        "warnings": [line for line in out.splitlines() if line.startswith("warnings:")],
    }


def table(rows: List[Dict[str, object]]) -> str:
    one = {(r["scenario"], r["variant"]): r for r in rows if r.get("threads") == 1 and "wall_s" in r}
    out = ["| scenario | variant | threads | partitions | events | wall (s) | speed-up | peak RSS (MB) |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        if "wall_s" not in r:
            out.append(f"| {Path(str(r['scenario'])).stem} | {r['variant']} | {r['threads']} | failed | | | | |")
            continue
        base = one.get((r["scenario"], r["variant"]))
        same = base is None or base["events"] == r["events"]
        up = f"{float(base['wall_s']) / float(r['wall_s']):.2f}x" if base else "-"
        out.append(
            f"| {Path(str(r['scenario'])).stem} | {r['variant']} | {r['threads']} | {r['partitions']} | {r['events']:,}{'' if same else ' (differs!)'} | {float(r['wall_s']):.2f} | {up} | {r['peak_rss_mb']} |"
        )
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=str(ROOT / "target/release/examples/run_scenario"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--threads", default="1,4,8,16")
    ap.add_argument("--cases", default="all", help="comma-separated indices into CASES, or 'all'")
    ap.add_argument("--timeout", type=float, default=400.0, help="seconds a run may take")
    ap.add_argument("--collect", action="store_true", help="print the table of --out's runs.jsonl and stop")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    runs = out / "runs.jsonl"
    if a.collect:
        print(table([json.loads(line) for line in runs.read_text().splitlines() if line.strip()]))
        return 0
    (out / "machine.txt").write_text(f"{platform.platform()}\n{platform.processor()}\ncpus {os.cpu_count()}\n" + (Path("/proc/cpuinfo").read_text().split("\n\n")[0] if Path("/proc/cpuinfo").exists() else ""))
    cases = CASES if a.cases == "all" else [CASES[int(i)] for i in a.cases.split(",")]
    rows = []
    for scenario, variant in cases:
        for t in [int(x) for x in a.threads.split(",")]:
            try:
                r = once(a.bin, scenario, variant, t, a.timeout)
            except subprocess.TimeoutExpired:
                r = {"scenario": scenario, "variant": variant, "threads": t, "error": f"over {a.timeout} s"}
            rows.append(r)
            with runs.open("a") as f:
                f.write(json.dumps(r) + "\n")
            print(json.dumps(r), flush=True)
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
