"""Seed 004's SFC benefits study over several seeds: the numbers docs/reproductions.md
quotes, as a Markdown table (mean over seeds, 95% confidence interval, min..max).

    dcnsim compare seed004_sfc_benefits --seed N -o OUT/sN      # for each seed
    python bench/seed004_sfc.py OUT/s1 OUT/s2 ...

Background FCT per seed bin (< 10 KB, 10 KB - 1 MB, > 1 MB; mean and p99) of the flows
tagged "background", the 256 KB incast messages' FCT, and the switch queues: the largest
depth any egress queue reached, the time-averaged depth over switch egress queues, and
from the 10 us samples the share of samples at or above the SFC trigger (100 KB) and the
99.9th percentile of all sampled depths.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Dict, List

import numpy as np
import pandas as pd

from dcnsim.comparison import slugify

VARIANTS = ["PFC+DCQCN", "SFC proxy+DCQCN", "SFC native+DCQCN"]
BINS = [(0, 10_000, "< 10 KB"), (10_000, 1_000_000, "10 KB - 1 MB"), (1_000_000, None, "> 1 MB")]


def metrics(run: Path) -> Dict[str, float]:
    fl = pd.read_parquet(run / "flows.parquet")
    ports = pd.read_parquet(run / "ports.parquet")
    summary = json.loads((run / "summary.json").read_text())
    out: Dict[str, float] = {}
    bg = fl[fl["tag"].astype(str) == "background"]
    for lo, hi, label in BINS:
        sel = bg[(bg["size_bytes"] >= lo) & ((bg["size_bytes"] < hi) if hi else True)]
        fct = sel["fct_ps"].astype(float) / 1e6
        out[f"background {label}: mean FCT (us)"] = float(fct.mean())
        out[f"background {label}: p99 FCT (us)"] = float(np.percentile(fct, 99))
    inc = fl[fl["tag"].astype(str) == "incast"]["fct_ps"].astype(float) / 1e6
    out["incast 256 KB: mean FCT (us)"] = float(inc.mean())
    out["incast 256 KB: p99 FCT (us)"] = float(np.percentile(inc, 99))
    sw = ports[~ports["is_host"]]
    out["max switch queue (KB)"] = float(sw["max_depth_bytes"].max()) / 1e3
    out["mean switch queue (KB)"] = float(sw["mean_depth_bytes"].mean()) / 1e3
    q = pd.read_parquet(run / "queues.parquet")
    depth, n = q["depth_bytes"].to_numpy(dtype=float), q["samples"].to_numpy(dtype=float)
    # every switch egress queue is sampled at every tick; the histogram omits nothing
    out["samples >= 100 KB (%)"] = float(n[depth >= 100_000].sum() / n.sum() * 100)
    order = np.argsort(depth)
    cum = np.cumsum(n[order]) / n.sum()
    out["p99.9 sampled depth (KB)"] = float(depth[order][np.searchsorted(cum, 0.999)]) / 1e3
    out["PAUSE frames"] = float(summary.get("pfc_frames", 0))
    out["SFC messages sent"] = float(summary.get("sfc_sent", 0))
    out["dropped packets"] = float(summary.get("packets_dropped", 0))
    out["unfinished flows"] = float(summary.get("flows_unfinished", 0))
    return out


#: Student's t 0.975 quantiles for 1..9 degrees of freedom (2..10 seeds).
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262]


def cell(xs: List[float]) -> str:
    a = np.asarray(xs, dtype=float)
    m = a.mean()
    if len(a) < 2:
        return f"{m:,.1f}"
    half = T975[min(len(a), 10) - 2] * a.std(ddof=1) / np.sqrt(len(a))
    return f"{m:,.1f} ± {half:,.1f} ({a.min():,.1f}..{a.max():,.1f})"


def main(dirs: List[str]) -> None:
    per: Dict[str, List[Dict[str, float]]] = {v: [metrics(Path(d) / slugify(v)) for d in dirs] for v in VARIANTS}
    keys = list(per[VARIANTS[0]][0])
    print(f"{len(dirs)} seed(s): mean ± 95% CI half-width (min..max over seeds)\n")
    print("| metric | " + " | ".join(VARIANTS) + " | " + " | ".join(f"{v} vs PFC" for v in VARIANTS[1:]) + " |")
    print("|---" * (1 + 2 * len(VARIANTS) - 1) + "|")
    for k in keys:
        vals = {v: [m[k] for m in per[v]] for v in VARIANTS}
        base = np.mean(vals[VARIANTS[0]])
        rel = []
        for v in VARIANTS[1:]:
            # per-seed relative change, then its mean and range
            ch = [(x / b - 1) * 100 if b else float("nan") for x, b in zip(vals[v], vals[VARIANTS[0]])]
            rel.append(f"{np.mean(ch):+.0f}% ({min(ch):+.0f}..{max(ch):+.0f})" if base else "n/a")
        print(f"| {k} | " + " | ".join(cell(vals[v]) for v in VARIANTS) + " | " + " | ".join(rel) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
