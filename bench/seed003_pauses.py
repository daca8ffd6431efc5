#!/usr/bin/env python3
"""Pauses and loss of a `dcnsim compare --seeds N -o OUT` folder of the seed 000/003 CI
studies, counted three ways so that a change in PAUSE frames can be told from a change in
how often or how long transmitters stop (issue 14, claims 1 and 2):

- PFC frames sent, per traffic class (the seed's "PAUSE frames": XOFF refreshes and XONs
  included);
- distinct pause periods, per class, at switch ports and at NICs (a period starts when a
  transmitter's class goes from running to paused; refreshes that extend it are not new);
- XOFF time per class;
- loss: data packets dropped / data packets sent, all packets dropped / packets created,
  flows with loss.

Per variant: mean +- 95% CI over the seeds; for each variant after the base, the change
and whether the CI of the paired same-seed differences excludes 0.
Usage: python bench/seed003_pauses.py OUT [BASE [OTHER ...]]   (default: without-ci, then
the other variant folders in name order)"""

import json
import sys
from pathlib import Path

import pandas as pd
from dcnsim.sweeps import ci95, excludes_zero


def per_run(d: Path) -> dict:
    sm = json.loads((d / "summary.json").read_text())
    p = pd.read_parquet(d / "ports.parquet")
    row = {}
    for q, g in p.groupby("queue"):
        row[f"PFC frames, class {q}"] = int(g.pfc_tx_frames.sum())
        row[f"pause periods at switches, class {q}"] = int(
            g[~g.is_host].pause_periods.sum()
        )
        row[f"pause periods at NICs, class {q}"] = int(g[g.is_host].pause_periods.sum())
        row[f"XOFF time (ms), class {q}"] = g.xoff_time_ps.sum() / 1e9
    row["PFC frames, all"] = int(p.pfc_tx_frames.sum())
    row["pause periods, all"] = int(p.pause_periods.sum())
    sent = sm.get("data_packets_sent", 0)
    row["data packet loss (%)"] = (
        100 * sm.get("data_packets_dropped", 0) / sent if sent else 0.0
    )
    made = sm.get("packets_created", 0)
    row["all packet loss (%)"] = (
        100 * sm.get("packets_dropped", 0) / made if made else 0.0
    )
    row["flows with loss"] = sm.get("flows_with_loss", 0)
    return row


def main(argv: list[str]) -> None:
    root = Path(argv[1])
    found = sorted(
        p.name for p in root.iterdir() if p.is_dir() and any(p.glob("seed-*"))
    )
    base = argv[2] if len(argv) > 2 else "without-ci"
    others = argv[3:] or [v for v in found if v != base]
    variants = [base, *others]
    seeds = sorted(int(p.name.split("-")[1]) for p in (root / base).glob("seed-*"))
    runs = {v: [per_run(root / v / f"seed-{s}") for s in seeds] for v in variants}
    metrics = list(runs[base][0])
    print(
        f"{root}: {len(seeds)} seeds; mean ± 95% CI; change against {base} (* = paired CI excludes 0)\n"
    )
    print("| metric | " + " | ".join(variants) + " |")
    print("| --- |" + " --- |" * len(variants))
    for m in metrics:
        b = [r[m] for r in runs[base]]
        mb, hb = ci95(b)
        cells = [f"{mb:.4g} ± {hb:.2g}"]
        for v in others:
            o = [r[m] for r in runs[v]]
            mo, ho = ci95(o)
            diff = [y - x for x, y in zip(b, o)]
            md, hd = ci95(diff)
            change = f"{(mo - mb) / mb:+.1%}" if mb else "n/a"
            cells.append(
                f"{mo:.4g} ± {ho:.2g} ({change}{' *' if excludes_zero(md, hd) else ''})"
            )
        print(f"| {m} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv)
