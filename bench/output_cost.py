"""What writing a comparison's outputs costs against its simulation (issue 35 part 4).

    python bench/output_cost.py [SCENARIO ...]           # default: every shipped *_small study with variants
    python bench/output_cost.py --memory [SCENARIO ...]  # default: every shipped study

For each scenario: `dcnsim.compare(..., jobs=1)` (the simulation: the variants' own wall
times summed), then `Comparison.save` and `write_report` into a temporary folder (what
`dcnsim compare -o` adds), timed in this process; prints a Markdown table with the ratio.

With --memory: the peak resident memory of `dcnsim run SCENARIO -o DIR` (its base, the
Python side with its tables and files) against the core alone on the same scenario (the
`run_scenario` example: `cargo build --release --example run_scenario`), each in its own
process measured as bench/run.py measures (GNU time's %M where installed).
"""

from __future__ import annotations

import sys
import tempfile
import time

import dcnsim
from dcnsim.api import shipped_scenarios
from dcnsim.report import write_report


def memory(names: list) -> None:
    """Peak RSS of `dcnsim run -o` against the core alone, per scenario."""
    import shutil
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from run import find_core_runner, run_measured

    core = find_core_runner(None)
    if core is None:
        raise SystemExit("build the core runner first: cargo build --release --example run_scenario")
    scenarios = Path(dcnsim.__file__).parent / "scenarios"
    cli = shutil.which("dcnsim") or "dcnsim"
    print("| scenario | flows | core alone (MB) | dcnsim run -o (MB) | Python adds (MB) | ratio |")
    print("|---|---|---|---|---|---|")
    for n in names or sorted(shipped_scenarios()):
        path = scenarios / f"{n}.toml"
        rc, out, err, _, core_mb, _ = run_measured([str(core), str(path)], None)
        if rc != 0:
            print(f"| {n} | core failed: {(err or out).strip().splitlines()[-1:]} |", flush=True)
            continue
        flows = out.split()[1].split("/")[1]
        with tempfile.TemporaryDirectory() as d:
            rc, out, err, _, py_mb, _ = run_measured([cli, "run", n, "-o", d, "--no-progress"], None)
        if rc != 0 or core_mb is None or py_mb is None:
            print(f"| {n} | dcnsim run failed: {(err or out).strip().splitlines()[-1:]} |", flush=True)
            continue
        print(f"| {n} | {int(flows):,} | {core_mb:,.0f} | {py_mb:,.0f} | {py_mb - core_mb:,.0f} | {py_mb / core_mb:.2f} |", flush=True)


def main() -> None:
    if sys.argv[1:2] == ["--memory"]:
        return memory(sys.argv[2:])
    names = sys.argv[1:] or sorted(n for n in shipped_scenarios() if n.endswith("_small") and len(dcnsim.validate(n)["variants"]) > 1)
    print("| scenario | variants | simulation (s) | table (s) | files, plots, report (s) | outputs / simulation |")
    print("|---|---|---|---|---|---|")
    for n in names:
        cmp = dcnsim.compare(n, jobs=1)
        sim = sum(cmp.wall_times.values())
        t0 = time.perf_counter()
        cmp.table()
        t1 = time.perf_counter()
        with tempfile.TemporaryDirectory() as d:
            cmp.save(d)
            write_report(d)
        t2 = time.perf_counter()
        print(f"| {n} | {len(cmp.variants)} | {sim:.2f} | {t1 - t0:.2f} | {t2 - t1:.2f} | {(t2 - t0) / sim:.2f} |", flush=True)


if __name__ == "__main__":
    main()
