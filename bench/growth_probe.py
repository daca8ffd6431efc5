#!/usr/bin/env python3
"""What one run of seed 004's growth study (``seed004_sfc_scale``, issue 58 study 3) costs
beyond the sizes it ships: the study's own case builder (``GrowthCase``) with more pods,
one variant and seed, through the same path a ``dcnsim reproduce`` run takes (the study's
scenario, ``run_source``, the study's metrics), on N threads. Wall time, events, peak RSS
and the run's end are written to ``OUT/growth_probe.jsonl`` as each run ends; a variant
the engine refuses (SFC's guaranteed bytes past a 512-port core switch's memory, say)
gives its error line instead. For planning a device call, not for the docs: the study's
results come only from ``dcnsim reproduce``.

    PYTHONPATH=python python3 bench/growth_probe.py --out "$OUT" --factor 26 --threads 16 \\
        --variant PFC+DCQCN --variant "SFC proxy+DCQCN"

``--pool-per-port 800KB`` runs the reading of a grown core's memory that the study has not
taken yet (``GrowthCase.pool_per_port``): each switch's shared pool its ports times it
(800 KB: the seed's 16 MB on its 20-port switches); PFC's static queues are unchanged.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path
from typing import Any, Dict, Optional, Sequence


def probe(factor: int, variant: str, seed: int, threads: int, pool_per_port: Optional[str] = None) -> Dict[str, Any]:
    from dcnsim.reproduce.core import Case, _run, case_scenario
    from dcnsim.reproduce.studies import STUDIES
    from dcnsim.reproduce.studies_seed004 import GrowthCase

    study = STUDIES["seed004_sfc_scale"]
    sc = case_scenario(study, Case(f"pods x{factor}", GrowthCase(factor, pool_per_port)), "full")
    topo = sc["topology"]
    row: Dict[str, Any] = {"pool_per_port": pool_per_port, "factor": factor, "hosts": topo["pods"] * topo["tors_per_pod"] * topo["hosts_per_tor"], "variant": variant, "seed": seed, "threads": threads}
    t0 = time.perf_counter()
    try:
        r = _run(sc, variant, seed, threads)
        t1 = time.perf_counter()
        m = study.metrics(r, sc)
        row.update(run_s=round(t1 - t0, 1), metrics_s=round(time.perf_counter() - t1, 1), events=int(r.summary.get("events", 0)),
                   end=str(r.summary.get("end_reason")), flows=int(r.summary.get("flows_total", 0)),
                   metrics={k: v for k, v in m.items() if isinstance(v, (int, float)) and not k.startswith("bg.")})
    except Exception as e:  # a refused scenario: its message is the finding
        row.update(error=str(e).splitlines()[0][:400], after_s=round(time.perf_counter() - t0, 1))
    row["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    return row


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--factor", type=int, default=26, help="pods times the seed's 5 (26: 130 pods, 8,320 hosts)")
    ap.add_argument("--variant", action="append", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--pool-per-port", help="switch.buffer.pool_per_port in place of the base's pool (e.g. 800KB)")
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    for v in a.variant:
        row = probe(a.factor, v, a.seed, a.threads, a.pool_per_port)
        with open(a.out / "growth_probe.jsonl", "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
