#!/usr/bin/env python3
"""Censored mean FCTs of a `dcnsim compare --seeds N -o OUT` folder of the seed 000/003 CI
studies: unfinished flows count at a lower bound of their FCT (end of run minus start), so a
variant that leaves more elephants unfinished is not judged on its survivors; and the mean
over the flows that finish in both variants. Per size bin, background flows only, mean and
95% CI over seeds, and whether the CI of the paired differences excludes 0.
Usage: python bench/censored_fct.py OUT"""

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from dcnsim.sweeps import ci95

root = Path(sys.argv[1])
base, other = "without-ci", "ci"


def load(v, s):
    d = root / v / f"seed-{s}"
    f = pd.read_parquet(d / "flows.parquet")
    sm = json.loads((d / "summary.json").read_text())
    return f, sm


seeds = sorted(int(p.name.split("-")[1]) for p in (root / base).glob("seed-*"))
for lo, hi, name in ((10e6, 1e18, ">10MB"), (1e6, 10e6, "1-10MB"), (0, 1e18, "all")):
    per = {base: [], other: []}
    both = {base: [], other: []}
    unf = {base: [], other: []}
    for s in seeds:
        fl = {}
        for v in (base, other):
            f, sm = load(v, s)
            f = f[(f.size_bytes >= lo) & (f.size_bytes < hi) & (f.tag == "background")]
            done = f.finished.astype(bool)
            cens = np.where(done, f.fct_ps, sm["sim_time_ps"] - f.start_ps)
            per[v].append(cens.mean() / 1e6)
            unf[v].append(int((~done).sum()))
            fl[v] = f
        key = ["src", "dst", "size_bytes", "start_ps"]
        m = fl[base].merge(fl[other], on=key, suffixes=("_b", "_c"))
        m = m[m.finished_b.astype(bool) & m.finished_c.astype(bool)]
        both[base].append(m.fct_ps_b.mean() / 1e6)
        both[other].append(m.fct_ps_c.mean() / 1e6)

    def fmt(d):
        mb, hb = ci95(d[base])
        mc, hc = ci95(d[other])
        dd, hd = ci95([c - b for b, c in zip(d[base], d[other])])
        return f"{mb:.1f} ± {hb:.1f} -> {mc:.1f} ± {hc:.1f} us ({(mc - mb) / mb:+.1%}{' *' if abs(dd) > hd else ' in noise'})"

    print(
        f"{name}: censored {fmt(per)}; finished in both {fmt(both)}; unfinished per run {np.mean(unf[base]):.1f} -> {np.mean(unf[other]):.1f}"
    )
