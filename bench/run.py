#!/usr/bin/env python3
"""Run the dcnsim benchmark scenarios and report speed and memory.

Each scenario in bench/scenarios/ runs in a fresh Python subprocess through the public
API (``dcnsim.run(path)``), so the peak resident memory reported is that run's alone.
The table shows, per scenario: hosts, flows finished/total, why the run ended, events
processed, events per wall second, simulated seconds per wall second, wall time and peak
RSS. With the core-only runner built (``cargo build --release --example run_scenario``)
the same scenarios are also run without Python, as a cross-check.

Usage::

    python bench/run.py                 # every scenario
    python bench/run.py --quick         # k=8 fat-tree and the seed 000 Clos only
    python bench/run.py --only k16      # scenarios whose name contains "k16"
    python bench/run.py --json out.json # also save the numbers
    python bench/run.py --repeat 3      # best of 3 runs per scenario (noisy machines)

Benchmarks are not timed tests: nothing here passes or fails on speed.
Needs Python 3.9+ and the dcnsim package; nothing else.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SCENARIOS = HERE / "scenarios"
QUICK = ("fat_tree_k8_websearch", "seed000_clos_1152")
# GNU time (not the shell keyword), for the peak RSS of a child without this script's pages.
GNU_TIME = next((p for p in (os.environ.get("GNU_TIME", ""), "/usr/bin/time") if p and os.access(p, os.X_OK)), None)


# --------------------------------------------------------------------------- child side


def child(path: str) -> int:
    """Run one scenario in this process and print its numbers as one JSON line."""
    import dcnsim  # imported here so that the parent stays small

    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    res = dcnsim.run(path)
    total = time.perf_counter() - t0
    s = res.summary
    wall = float(s["wall_time_s"])
    sim_s = int(s["sim_time_ps"]) / 1e12
    out = {
        "hosts": int(s["hosts"]),
        "switches": int(s["switches"]),
        "flows_finished": int(s["flows_finished"]),
        "flows_total": int(s["flows_total"]),
        "end_reason": str(s["end_reason"]),
        "events": int(s["events"]),
        "sim_time_s": sim_s,
        "wall_s": wall,
        "api_wall_s": total,
        "events_per_s": int(s["events"]) / wall if wall > 0 else None,
        "sim_s_per_wall_s": sim_s / wall if wall > 0 else None,
        "self_maxrss_mb": _rss_mb(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss),
        "baseline_rss_mb": _rss_mb(rss_before),
        "packets_dropped": int(s.get("packets_dropped", 0)),
        "ecn_marks": int(s.get("ecn_marks", 0)),
        "dcnsim_version": dcnsim.__version__,
    }
    print("BENCH-RESULT " + json.dumps(out), flush=True)
    return 0


# --------------------------------------------------------------------------- parent side


def _rss_mb(maxrss: int) -> float:
    """ru_maxrss is in KiB on Linux and in bytes on macOS."""
    scale = 1 if sys.platform == "darwin" else 1024
    return maxrss * scale / 2**20


def run_measured(cmd: Sequence[str], timeout: Optional[float], cwd: Optional[str] = None, cpu: Optional[int] = None, env: Optional[Dict[str, str]] = None) -> Tuple[int, str, str, float, Optional[float], Tuple[float, float]]:
    """Run ``cmd`` (in ``cwd``, by default the repository root; pinned to core ``cpu`` if
    given; ``env``: variables set for it); return (rc, stdout, stderr, wall seconds, peak RSS
    of that child in MB, (user, system) CPU seconds of that child and what it waited for).

    The child is reaped with os.wait4, which returns the resource usage of that one
    process (RUSAGE_CHILDREN would be the maximum over every child so far). Linux keeps a
    process's peak RSS across exec, and a child forked from Python starts with Python's
    pages: wait4 alone reports at least this script's own size (about 16 MB), more than
    the whole k = 8 engine. So where GNU time is installed the command runs under it, a
    small parent, and its %M is the peak; otherwise the wait4 figure stands, an upper bound.
    """
    with tempfile.TemporaryFile("w+") as fout, tempfile.TemporaryFile("w+") as ferr, tempfile.NamedTemporaryFile("r") as ftime:
        argv = list(cmd)
        if cpu is not None:
            if not shutil.which("taskset"):
                raise SystemExit("pinning a run to a core needs taskset (util-linux), which is not installed")
            argv = ["taskset", "-c", str(cpu)] + argv
        if GNU_TIME:
            argv = [GNU_TIME, "-q", "-o", ftime.name, "-f", "%M"] + argv
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=fout, stderr=ferr, text=True, cwd=cwd or str(ROOT), env={**os.environ, **env} if env else None)
        timer = threading.Timer(timeout, proc.kill) if timeout else None
        if timer:
            timer.start()
        peak: Optional[float]
        times = (float("nan"), float("nan"))
        try:
            if hasattr(os, "wait4"):
                _, status, usage = os.wait4(proc.pid, 0)
                proc.returncode = os.waitstatus_to_exitcode(status)
                peak = _rss_mb(usage.ru_maxrss)
                times = (usage.ru_utime, usage.ru_stime)
            else:  # pragma: no cover - no wait4 on this platform
                proc.wait()
                peak = None
        finally:
            if timer:
                timer.cancel()
        wall = time.perf_counter() - t0
        kb = ftime.read().strip().splitlines()
        if GNU_TIME and kb and kb[-1].isdigit():
            peak = int(kb[-1]) / 1024
        fout.seek(0)
        ferr.seek(0)
        out, err = fout.read(), ferr.read()
    rc = proc.returncode
    if timeout and rc < 0 and wall >= timeout:
        err += f"\ntimed out after {timeout:g} s"
    return rc, out, err, wall, peak, times


def run_python(path: Path, timeout: Optional[float]) -> Dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(path)]
    rc, out, err, wall, peak, _ = run_measured(cmd, timeout)
    row: Dict[str, Any] = {"scenario": path.stem, "runner": "python", "rc": rc, "process_wall_s": wall}
    line = next((ln for ln in out.splitlines() if ln.startswith("BENCH-RESULT ")), None)
    if rc != 0 or line is None:
        row["error"] = (err.strip().splitlines() or ["no output"])[-1]
        return row
    row.update(json.loads(line[len("BENCH-RESULT ") :]))
    # wait4's figure and the child's own RUSAGE_SELF maximum describe the same process.
    row["peak_rss_mb"] = row["self_maxrss_mb"] if peak is None else peak
    return row


CORE_LINE = re.compile(
    r"flows (?P<fin>\d+)/(?P<tot>\d+) end=\"?(?P<end>[^\s\"]+)\"? sim_time=(?P<sim>[\d.]+)ms events=(?P<ev>\d+) "
    r"build=(?P<build>[\d.]+)s wall=(?P<wall>[\d.]+)s"
)


def find_core_runner(explicit: Optional[str]) -> Optional[Path]:
    cands = []
    if explicit:
        cands.append(Path(explicit))
    if os.environ.get("CARGO_TARGET_DIR"):
        cands.append(Path(os.environ["CARGO_TARGET_DIR"]) / "release" / "examples" / "run_scenario")
    cands.append(ROOT / "target" / "release" / "examples" / "run_scenario")
    return next((c for c in cands if c.is_file() and os.access(c, os.X_OK)), None)


def run_core(binary: Path, path: Path, timeout: Optional[float], cpu: Optional[int] = None, args: Sequence[str] = ()) -> Dict[str, Any]:
    """One run of the core runner ``binary`` on scenario ``path`` (``args`` after it, e.g.
    ``--threads 2``)."""
    rc, out, err, wall, peak, (user, system) = run_measured([str(binary), str(path), *args], timeout, cpu=cpu)
    row: Dict[str, Any] = {"scenario": path.stem, "runner": "core", "rc": rc, "process_wall_s": wall, "peak_rss_mb": peak, "user_s": user, "sys_s": system}
    m = CORE_LINE.search(out)
    if rc != 0 or not m:
        row["error"] = (err.strip().splitlines() or out.strip().splitlines() or ["no output"])[-1]
        return row
    ev, w, sim_s = int(m["ev"]), float(m["wall"]), float(m["sim"]) / 1e3
    row.update(
        flows_finished=int(m["fin"]),
        flows_total=int(m["tot"]),
        end_reason=m["end"],
        events=ev,
        sim_time_s=sim_s,
        wall_s=w,
        build_s=float(m["build"]),
        events_per_s=ev / w if w > 0 else None,
        sim_s_per_wall_s=sim_s / w if w > 0 else None,
    )
    return row


def best_of(run_once: Callable[[], Dict[str, Any]], n: int) -> Dict[str, Any]:
    """Run n times; keep the fastest run (the least disturbed by other load on the machine),
    with every run's wall time and the largest peak RSS seen."""
    runs = [run_once() for _ in range(max(1, n))]
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return runs[-1]
    best = dict(min(ok, key=lambda r: r["wall_s"]))
    if n > 1:
        best["all_wall_s"] = [r["wall_s"] for r in ok]
        rss = [r["peak_rss_mb"] for r in ok if r.get("peak_rss_mb") is not None]
        if rss:
            best["peak_rss_mb"] = max(rss)
    return best


# --------------------------------------------------------------------------- output


def _fmt_rate(x: Optional[float]) -> str:
    if x is None:
        return "-"
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= scale:
            return f"{x / scale:.2f}{unit}"
    return f"{x:.0f}"


def _fmt_float(x: Optional[float], spec: str) -> str:
    return "-" if x is None else format(x, spec)


def table(rows: List[Dict[str, Any]]) -> str:
    head = ["scenario", "hosts", "flows fin/total", "end", "events", "events/s", "sim s/wall s", "wall (s)", "peak RSS (MB)"]
    body = []
    for r in rows:
        if "error" in r:
            body.append([r["scenario"], "-", "-", f"ERROR rc={r['rc']}", "-", "-", "-", f"{r['process_wall_s']:.2f}", r["error"][:60]])
            continue
        body.append(
            [
                r["scenario"],
                str(r.get("hosts", "-")),
                f"{r['flows_finished']}/{r['flows_total']}",
                r["end_reason"],
                str(r["events"]),
                _fmt_rate(r["events_per_s"]),
                _fmt_float(r["sim_s_per_wall_s"], ".2e"),
                f"{r['wall_s']:.3f}",
                _fmt_float(r.get("peak_rss_mb"), ".0f"),
            ]
        )
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(head)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(b, widths)) for b in body]
    return "\n".join(lines)


def machine() -> Dict[str, Any]:
    info: Dict[str, Any] = {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    try:
        with open("/proc/cpuinfo") as f:
            model = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), None)
        info["cpu"] = model
    except OSError:
        pass
    try:
        info["git"] = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=str(ROOT), capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return info


# --------------------------------------------------------------------------- main


def select(paths: List[Path], only: Sequence[str], quick: bool) -> List[Path]:
    if quick:
        paths = [p for p in paths if p.stem in QUICK]
    if only:
        paths = [p for p in paths if any(o == p.stem or o in p.stem for o in only)]
    return paths


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", action="append", default=[], metavar="NAME", help="run scenarios whose name contains NAME (repeatable)")
    ap.add_argument("--quick", action="store_true", help="run only " + " and ".join(QUICK))
    ap.add_argument("--json", metavar="FILE", help="save the results as JSON")
    ap.add_argument("--timeout", type=float, default=None, metavar="S", help="give up on a scenario after S seconds")
    ap.add_argument("--repeat", type=int, default=1, metavar="N", help="run each scenario N times and report the fastest (default 1)")
    ap.add_argument("--no-core", action="store_true", help="skip the core-only runner even if it is built")
    ap.add_argument("--core-bin", metavar="PATH", help="path of the run_scenario example binary")
    ap.add_argument("--scenarios", metavar="DIR", default=str(SCENARIOS), help="directory of benchmark scenarios")
    ap.add_argument("--child", metavar="FILE", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.child:
        return child(args.child)

    paths = select(sorted(Path(args.scenarios).glob("*.toml")), args.only, args.quick)
    if not paths:
        print("no benchmark scenario matches", file=sys.stderr)
        return 2
    m = machine()
    print(f"machine: {m.get('cpu') or platform.processor()}, {m['cpus']} CPUs, {m['platform']}, Python {m['python']}")

    rows: List[Dict[str, Any]] = []
    for p in paths:
        print(f"running {p.stem} ...", file=sys.stderr, flush=True)
        rows.append(best_of(lambda: run_python(p, args.timeout), args.repeat))
    rep = f", best of {args.repeat}" if args.repeat > 1 else ""
    print(f"\ndcnsim.run (Python API, one subprocess per scenario{rep})")
    print(table(rows))

    core_rows: List[Dict[str, Any]] = []
    core = None if args.no_core else find_core_runner(args.core_bin)
    if core is not None:
        for p in paths:
            print(f"running {p.stem} (core only) ...", file=sys.stderr, flush=True)
            row = best_of(lambda: run_core(core, p, args.timeout), args.repeat)
            py = next((r for r in rows if r["scenario"] == p.stem and "hosts" in r), None)
            if py is not None:
                row["hosts"] = py["hosts"]
            core_rows.append(row)
        print(f"\ncore only ({core}{rep})")
        print(table(core_rows))

    if args.json:
        doc = {"machine": m, "python_api": rows, "core_only": core_rows}
        Path(args.json).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        print(f"\nsaved {args.json}")
    return 0 if all("error" not in r for r in rows + core_rows) else 1


if __name__ == "__main__":
    sys.exit(main())
