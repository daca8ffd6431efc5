#!/usr/bin/env python3
"""Peak memory of the Python paths against the arrival window (issue 38, part 1).

    python bench/flow_memory_py.py 10ms 50ms            # seed004_sfc_benefits (its base)
    python bench/flow_memory_py.py --scenario NAME 1ms 5ms

For each window, in a child process of its own (all windows at once, one core each):
``saved``: what ``dcnsim run -o`` does (``api.run_saved``: flows.parquet written while the
run goes, the FCT table from the file), and ``whole``: ``dcnsim.run()`` then
``Result.save`` (the whole flows table in pandas). Prints one line per run with the flows,
the peak RSS (ru_maxrss of the child) and the wall time. Needs numpy, pandas and pyarrow
only (not the command line's click and rich), so it runs where dcnsim's package folder is
on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor


def child(scenario: str, window: str, how: str) -> None:
    from dcnsim import api
    from dcnsim.sources import ScenarioSource, resolve_scenario

    src = resolve_scenario(scenario)
    text = re.sub(r'(?m)^arrivals_for = .*$', f'arrivals_for = "{window}"', src.text)
    src = ScenarioSource(text, src.format, f"{scenario}@{window}")
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as out:
        if how == "saved":
            s = api.run_saved(src, out).summary
        else:
            r = api.run_source(src)
            r.save(out)
            s = r.summary
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(json.dumps({"how": how, "window": window, "flows": s["flows_total"], "events": s["events"], "peak_rss_mb": peak, "wall_s": round(wall, 1)}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("windows", nargs="+")
    ap.add_argument("--scenario", default="seed004_sfc_benefits")
    ap.add_argument("--how", default="saved,whole")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        return child(*a.child)
    jobs = [(w, h) for h in a.how.split(",") for w in a.windows]

    def one(job):
        w, h = job
        p = subprocess.run([sys.executable, __file__, "x", "--child", a.scenario, w, h], capture_output=True, text=True)
        return p.stdout.strip() or f"{h} {w}: failed: {p.stderr.strip()[-500:]}"

    with ThreadPoolExecutor(len(jobs)) as pool:
        for line in pool.map(one, jobs):
            print(line, flush=True)


if __name__ == "__main__":
    main()
