#!/usr/bin/env python3
"""Issue 56's measurements on a lent many-core machine, in one call of about five minutes
(a session's device time is 15 minutes, start-up included; every run is saved to
``OUT/runs.jsonl`` as soon as it ends, so a call cut short still brings back what it did).

Builds of the core runner (``run_scenario``) named on the command line as NAME=PATH, built
on another machine and carried; the first is the build under test:

1. One core each, alternating builds: the k = 8 fabric, five rounds, pinned to core 2,
   while the k = 16 fabric, two rounds, runs pinned to core 6 (issue 56 part 1: one
   core's speed against the builds before) and seed 004's growth study at 640 hosts
   (``seed004_growth_640``, many flows in flight with their timers), three rounds of the
   builds but "base", pinned to core 10.
2. Every core, quiet: the k = 74 fat tree (101,306 hosts, 1 ms of 50% web search) on 16
   threads with the build under test (part 3's "100,000 hosts in under a minute").
3. Every core, quiet, alternating builds: seed 004's full-size SFC study on 16 threads
   (the memory of a split run's flow rows), then the k = 40 fabric on 16 threads, two
   rounds (the per-window costs on 16 cores).

4. ``--phases pages`` (not in the default set): what 2 MiB pages do on every core. The
   k = 74 fat tree cut to 500 us on 16 threads, the build under test as it is and with
   ``MIMALLOC_ALLOW_THP=0`` (mimalloc then turns large pages off for the whole process, the
   per-port tables' advice included), alternating, two rounds; wall, user and system time
   of each. ``machine.txt`` records the kernel's large-page mode and whether it hands free
   memory back to a hypervisor (``page_reporting`` on its command line): on the 2-core VM
   a large page's first touch from memory handed back ran at 0.34-0.52 GB/s against 2.0-
   2.6 GB/s for 4 KiB pages (docs/performance.md, "Large pages on a VM that hands memory
   back").

5. ``--phases look-ahead`` (not in the default set): where each look-ahead starts to pay
   on this machine (``engine/look_ahead.rs``: none below ``SMALL_FROM``, 256 KB of port
   state, the small one below ``LARGE_FROM``, 2 MB, the large one from there; the 2-core
   VM's crossovers, 2026-12-01). One core, the builds alternating, one fabric at a time so
   that each run has the last-level cache to itself: the k = 8 bench, a k = 12 fat tree
   (k = 8's load for 1 ms), the k = 16 bench, then k = 20, 24 and 28 cut to 1 ms. Give
   builds that differ only in those constants, e.g. ``off=`` (both ``usize::MAX``),
   ``small=`` (``SMALL_FROM = 0``, ``LARGE_FROM = usize::MAX``) and ``large=`` (both 0).

``--collect DIR`` prints the tables from a folder of runs.

    python3 bench/issue56_device.py --out "$OUT" new=target/device/new pre=target/device/pre base=target/device/base
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import sys
import threading
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from run import run_measured  # after the path insert: one measurement for every bench script
SCEN = ROOT / "bench" / "scenarios"
LINE = re.compile(r"flows (\d+)/(\d+) end=\"(\w+)\" sim_time=([\d.]+)ms events=(\d+) build=([\d.]+)s wall=([\d.]+)s")
RSS = re.compile(r"peak_rss_mb=(\d+)")
LOCK = threading.Lock()


def once(out: Path, phase: str, name: str, binary: str, scenario: Path, args: Sequence[str], cpu: Optional[int] = None, env: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    """One whole-process run (``env``: variables set for it); its row is appended to
    ``out/runs.jsonl`` at once, with the process's user and system time."""
    rc, stdout, stderr, wall, _, (user, system) = run_measured([binary, str(scenario), *args], None, cpu=cpu, env=env)
    row: Dict[str, Any] = {"phase": phase, "build": name, "scenario": scenario.stem, "args": list(args), "env": env or {}, "cpu": cpu, "rc": rc, "process_s": round(wall, 3), "user_s": round(user, 2), "sys_s": round(system, 2)}
    m = LINE.search(stdout + stderr)
    if m:
        row.update(flows=f"{m[1]}/{m[2]}", end=m[3], events=int(m[5]), build_s=float(m[6]), wall_s=float(m[7]))
    r = RSS.search(stdout + stderr)
    if r:
        row["peak_rss_mb"] = int(r[1])
    if rc != 0 or not m:
        row["error"] = (stderr.strip().splitlines() or ["no output"])[-1]
    with LOCK:
        with open(out / "runs.jsonl", "a") as f:
            f.write(json.dumps(row) + "\n")
    print(json.dumps(row), flush=True)
    return row


def rounds(out: Path, phase: str, builds: Dict[str, str], scenario: Path, args: Sequence[str], n: int, cpu: Optional[int] = None) -> None:
    """``n`` rounds of every build in turn, the order reversed every other round."""
    names = list(builds)
    for k in range(n):
        for name in names if k % 2 == 0 else names[::-1]:
            once(out, phase, name, builds[name], scenario, args, cpu)


def measure(out: Path, builds: Dict[str, str], threads: int, phases: Sequence[str] = ("one-core", "k74", "seed004", "k40")) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "machine.txt", "w") as f:
        f.write(f"{platform.platform()}\ncpus {os.cpu_count()}\n")
        # how memory is backed: the large-page mode, and whether the kernel hands free
        # memory back to a hypervisor (page reporting), which makes a fresh large page slow
        for fact in ("/sys/kernel/mm/transparent_hugepage/enabled", "/sys/kernel/mm/transparent_hugepage/defrag", "/proc/cmdline"):
            try:
                f.write(f"{fact}: {Path(fact).read_text().strip()}\n")
            except OSError:
                f.write(f"{fact}: unreadable\n")
        try:
            f.write(Path("/proc/cpuinfo").read_text().split("\n\n")[0])
        except OSError:
            pass
    first = list(builds)[0]
    one: List[str] = []  # one thread by default (the build of 495d9e5 knows no --threads)
    # 1: one core each, the two fabrics side by side on cores of their own
    if "one-core" in phases:
        t = threading.Thread(target=rounds, args=(out, "one-core", builds, SCEN / "fat_tree_k8_websearch.toml", one, 5, 2))
        t.start()
        # a fabric of many flows in flight and their timers (the event queue's second
        # wheel), which 495d9e5's scenario reader predates
        later = {k: v for k, v in builds.items() if k != "base"}
        u = threading.Thread(target=rounds, args=(out, "one-core", later, SCEN / "seed004_growth_640.toml", one, 3, 10))
        u.start()
        rounds(out, "one-core", builds, SCEN / "fat_tree_k16_websearch.toml", one, 2, 6)
        t.join()
        u.join()
    many = ["--threads", str(threads)]
    # 2: the 100,000-host fabric on every core
    if "k74" in phases:
        once(out, "k74", first, builds[first], SCEN / "fat_tree_k74_websearch.toml", many)
    # 3: the split run's flow rows, and the per-window costs, builds alternating
    split = {k: v for k, v in builds.items() if k != "base"}
    if "seed004" in phases:
        rounds(out, "seed004", split, ROOT / "scenarios" / "seed004_sfc_benefits.toml", ["SFC proxy+DCQCN", *many], 1)
    if "k40" in phases:
        rounds(out, "k40", split, SCEN / "fat_tree_k40_websearch.toml", many, 2)
    # 4: 2 MiB pages on every core: the build under test as it is and with none
    if "pages" in phases:
        cut = out / "scenarios"
        cut.mkdir(exist_ok=True)
        k74 = cut / "fat_tree_k74_500us.toml"
        k74.write_text(re.sub(r'(?m)^(arrivals_for|max_time) = "[^"]*"', r'\1 = "500us"', (SCEN / "fat_tree_k74_websearch.toml").read_text()))
        variants = [(first, None), (f"{first}-4k", {"MIMALLOC_ALLOW_THP": "0"})]
        for k in range(2):
            for name, env in variants if k % 2 == 0 else variants[::-1]:
                once(out, "pages", name, builds[first], k74, many, env=env)
    # 5: the look-ahead's crossover, one fabric at a time on one core
    if "look-ahead" in phases:
        cut = out / "scenarios"
        cut.mkdir(exist_ok=True)
        k12 = cut / "fat_tree_k12_1ms.toml"
        k12.write_text(re.sub(r'(?m)^arrivals_for = "[^"]*"', 'arrivals_for = "1ms"', re.sub(r"(?m)^k = 8$", "k = 12", (SCEN / "fat_tree_k8_websearch.toml").read_text())))
        fabrics = [SCEN / "fat_tree_k8_websearch.toml", k12, SCEN / "fat_tree_k16_websearch.toml"]
        k24 = re.sub(r'(?m)^(arrivals_for|max_time) = "[^"]*"', r'\1 = "1ms"', (SCEN / "fat_tree_k24_websearch.toml").read_text())
        for k in (20, 24, 28):
            f = cut / f"fat_tree_k{k}_1ms.toml"
            f.write_text(re.sub(r"(?m)^k = 24$", f"k = {k}", k24))
            fabrics.append(f)
        for f in fabrics:
            rounds(out, "look-ahead", split, f, one, 3, min(2, (os.cpu_count() or 1) - 1))


def collect(d: Path) -> None:
    rows = [json.loads(l) for l in open(d / "runs.jsonl")]
    print("| phase | scenario | build | runs | events | engine wall (s), median (range) | build (s) | user / system (s), median | peak RSS (MB) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    keys: List[tuple] = []
    for r in rows:
        k = (r["phase"], r["scenario"], r["build"])
        if k not in keys:
            keys.append(k)
    for k in keys:
        rs = [r for r in rows if (r["phase"], r["scenario"], r["build"]) == k and "error" not in r]
        if not rs:
            print(f"| {k[0]} | {k[1]} | {k[2]} | failed | | | | | |")
            continue
        w = [r["wall_s"] for r in rs]
        ev = sorted({r["events"] for r in rs})
        span = f"{statistics.median(w):.2f} ({min(w):.2f}-{max(w):.2f})" if len(w) > 1 else f"{w[0]:.2f}"
        # (runs before 2026-12-01 kept no CPU times)
        cpu = f"{statistics.median(r['user_s'] for r in rs):.1f} / {statistics.median(r['sys_s'] for r in rs):.1f}" if all("user_s" in r for r in rs) else ""
        print(f"| {k[0]} | {k[1]} | {k[2]} | {len(rs)} | {', '.join(f'{e:,}' for e in ev)} | {span} | {statistics.median(r['build_s'] for r in rs):.2f} | {cpu} | {max(r.get('peak_rss_mb', 0) for r in rs):,} |")
    # per-round ratios of every build to the first, for the alternating phases
    for phase in ("one-core", "seed004", "k40", "pages"):
        for scen in sorted({r["scenario"] for r in rows if r["phase"] == phase}):
            rs = [r for r in rows if r["phase"] == phase and r["scenario"] == scen and "error" not in r]
            builds = list(dict.fromkeys(r["build"] for r in rs))
            if len(builds) < 2:
                continue
            by = {b: [r["wall_s"] for r in rs if r["build"] == b] for b in builds}
            for b in builds[1:]:
                ratios = [y / x for x, y in zip(by[builds[0]], by[b])]
                print(f"{phase} {scen}: {b} / {builds[0]} per round {', '.join(f'{x:.3f}' for x in ratios)}; median {statistics.median(ratios):.3f}")


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("builds", nargs="*", help="NAME=PATH of run_scenario builds; the first is the one under test")
    ap.add_argument("--out", type=Path, help="folder for runs.jsonl and machine.txt")
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--collect", type=Path, help="print the tables of a folder of runs")
    ap.add_argument("--phases", default="one-core,k74,seed004,k40", help="comma-separated phases to run [default: one-core,k74,seed004,k40; also pages, look-ahead]")
    a = ap.parse_args(argv)
    if a.collect:
        collect(a.collect)
        return 0
    if not a.out or len(a.builds) < 2:
        ap.error("give --out and at least two NAME=PATH builds")
    builds = dict(b.split("=", 1) for b in a.builds)
    measure(a.out, builds, a.threads, [p.strip() for p in a.phases.split(",")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
