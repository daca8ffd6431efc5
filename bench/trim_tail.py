#!/usr/bin/env python3
"""Where trimming's incast tail comes from in `trim_vs_pfc` at 200 KB per port (issue 59).

The study's full runs give trimming a longer incast p99 than PFC with the same mean. This
reruns the UET variants at full size for a few seeds and splits the incast's messages by
their place in their sender's chain (the persistent incast starts a sender's next 1 MB
message when its previous one finishes, so the first round starts together and the later
messages do not): FCT per round, resends per message, how the slowest 5% of the later
messages differ from the rest, and how evenly each receiver's 20 senders were served
(Jain's index of the messages each finished). Writes a markdown table to stdout and, with
--out, to a file.

Usage: python bench/trim_tail.py [--seeds 5] [-j 2] [--out bench/results/trim_tail.md]
(about 1.5 CPU-minutes per run, four variants per seed)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tomllib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

VARIANTS = ("trimming, UET", "PFC per egress queue, UET", "lossy, UET", "lossy, UET, control first")


def one(job: Tuple[str, int]) -> Dict[str, float]:
    import dcnsim
    from dcnsim.reproduce.studies_uet import memory_200kb

    variant, seed = job
    sc = memory_200kb(tomllib.loads((ROOT / "scenarios" / "trim_vs_pfc.toml").read_text()))
    f = dcnsim.run(sc, variant=variant, seed=seed).flows
    i = f[f.tag == "incast"].sort_values(["start_ps", "flow_id"]).copy()
    i["k"] = i.groupby(["dst", "src"]).cumcount()
    i["fct_us"] = i.fct_ps / 1e6
    first, later = i[i.k == 0], i[i.k > 0]
    slow = later.fct_us >= later.fct_us.quantile(0.95)
    per = i.groupby(["dst", "src"]).size()
    jain = per.groupby("dst").agg(lambda x: x.sum() ** 2 / (len(x) * (x ** 2).sum()))
    return {
        "messages": len(i), "unfinished": int((~i.finished).sum()), "mean": i.fct_us.mean(), "p99": i.fct_us.quantile(0.99),
        "first_mean": first.fct_us.mean(), "first_max": first.fct_us.max(), "first_resends": first.retx.mean(),
        "later_mean": later.fct_us.mean(), "later_p99": later.fct_us.quantile(0.99), "later_max": later.fct_us.max(),
        "later_resends": later.retx.mean(), "slow_resends": later[slow].retx.mean(), "rest_resends": later[~slow].retx.mean(),
        "corr": float(np.corrcoef(later.fct_us, later.retx)[0, 1]) if later.retx.std() > 0 else float("nan"), "jain": jain.mean(),
    }


def cell(xs: List[float], fmt: str = "{:,.0f}") -> str:
    xs = [x for x in xs if x == x]
    if not xs:
        return "n/a"
    return f"{fmt.format(statistics.mean(xs))} [{fmt.format(min(xs))}-{fmt.format(max(xs))}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("-j", "--jobs", type=int, default=1)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    jobs = [(v, s) for s in range(1, args.seeds + 1) for v in VARIANTS]
    with ProcessPoolExecutor(args.jobs) as ex:
        got = dict(zip(jobs, ex.map(one, jobs)))
    rows = [("incast messages", "messages", "{:,.0f}"), ("unfinished", "unfinished", "{:,.0f}"), ("FCT mean (us)", "mean", "{:,.0f}"),
            ("FCT p99 (us)", "p99", "{:,.0f}"), ("first round: FCT mean (us)", "first_mean", "{:,.0f}"),
            ("first round: slowest (us)", "first_max", "{:,.0f}"), ("first round: resends per message", "first_resends", "{:.1f}"),
            ("later messages: FCT mean (us)", "later_mean", "{:,.0f}"), ("later messages: p99 (us)", "later_p99", "{:,.0f}"),
            ("later messages: slowest (us)", "later_max", "{:,.0f}"), ("later messages: resends per message", "later_resends", "{:.1f}"),
            ("later, slowest 5%: resends per message", "slow_resends", "{:.1f}"), ("later, the other 95%: resends per message", "rest_resends", "{:.1f}"),
            ("later: correlation of FCT and resends", "corr", "{:.2f}"), ("Jain's index of messages per sender (per receiver, mean)", "jain", "{:.3f}")]
    out = [f"`python bench/trim_tail.py --seeds {args.seeds}`: `trim_vs_pfc` at 200 KB per port, full size, seeds 1-{args.seeds}; "
           "mean over seeds [range over seeds]. A sender's first message starts with the other 19 (the first round); its later "
           "messages each start when its previous one finishes.", "",
           "| | " + " | ".join(VARIANTS) + " |", "| --- |" + " --- |" * len(VARIANTS)]
    for label, key, fmt in rows:
        out.append(f"| {label} | " + " | ".join(cell([got[(v, s)][key] for s in range(1, args.seeds + 1)], fmt) for v in VARIANTS) + " |")
    text = "\n".join(out) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
