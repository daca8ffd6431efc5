"""What writing a comparison's outputs costs against its simulation (issue 35 part 4).

    python bench/output_cost.py [SCENARIO ...]   # default: every shipped *_small study with variants

For each scenario: `dcnsim.compare(..., jobs=1)` (the simulation: the variants' own wall
times summed), then `Comparison.save` and `write_report` into a temporary folder (what
`dcnsim compare -o` adds), timed in this process; prints a Markdown table with the ratio.
"""

from __future__ import annotations

import sys
import tempfile
import time

import dcnsim
from dcnsim.api import shipped_scenarios
from dcnsim.report import write_report


def main() -> None:
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
