"""QCN (IEEE 802.1Qau): ten long flows at 10 Gbit/s into one port (`seed001_qcn`), over
several seeds: the bottleneck queue's time mean and spread against the set point Q_eq, the
goodput, Jain's fairness index of the per-flow rates, CNMs and drops, as the Markdown table
docs/reproductions.md quoted up to commit c0e815a. The docs now render these numbers from
`dcnsim reproduce seed001_qcn` (python/dcnsim/reproduce/studies_seed001.py, the same measures).

    python bench/seed001_qcn.py [--seeds 5] [--small]
"""

from __future__ import annotations

import argparse
from typing import Dict

import numpy as np

import dcnsim

WARMUP_PS = 10e9


def measure(r) -> Dict[str, float]:
    q = r.queues
    deep = q[q["depth_bytes"] > 0].groupby(["node", "port"])["samples"].sum()
    node, port = deep.idxmax()
    h = q[(q["node"] == node) & (q["port"] == port)].sort_values("depth_bytes")
    centre = h["depth_bytes"].to_numpy() + 500.0
    w = h["samples"].to_numpy() / h["samples"].sum()
    cdf = w.cumsum()
    ts = r.timeseries
    late = ts[ts["bin_start_ps"] >= WARMUP_PS]
    seconds = (late["bin_start_ps"].max() - WARMUP_PS) / 1e12 + 1e-3
    rates = late.groupby("flow")["bytes"].sum().reindex(range(len(r.flows)), fill_value=0).to_numpy() * 8 / seconds
    return {
        "queue_kb": float((centre * w).sum()) / 1e3,
        "p5_kb": float(centre[(cdf >= 0.05).argmax()]) / 1e3,
        "p95_kb": float(centre[(cdf >= 0.95).argmax()]) / 1e3,
        "gbps": float(rates.sum()) / 1e9,
        "jain": float(rates.sum() ** 2 / (len(rates) * (rates**2).sum())),
        "cnms": float(r.summary.get("qcn_cnms", 0)),
        "drops": float(r.summary["data_packets_dropped"]),
        "wall": float(r.summary["wall_time_s"]),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--small", action="store_true")
    a = ap.parse_args()
    name = "seed001_qcn_small" if a.small else "seed001_qcn"
    variants = list(dcnsim.validate(name)["variants"])
    print(f"{name}, seeds 1-{a.seeds}: mean over seeds (min..max across seeds)\n")
    keys = [("queue_kb", "mean queue (KB)"), ("p5_kb", "p5 (KB)"), ("p95_kb", "p95 (KB)"), ("gbps", "goodput (Gbit/s)"), ("jain", "Jain index"), ("cnms", "CNMs"), ("drops", "drops")]
    print("| variant | " + " | ".join(k[1] for k in keys) + " |")
    print("|---|" + "---|" * len(keys))
    wall = 0.0
    for v in variants:
        ms = [measure(dcnsim.run(name, variant=v, seed=s)) for s in range(1, a.seeds + 1)]
        wall += sum(m["wall"] for m in ms)
        cells = []
        for k, _ in keys:
            xs = [m[k] for m in ms]
            fmt = "{:.0f}" if k in ("cnms", "drops") else ("{:.3f}" if k == "jain" else "{:.1f}")
            cells.append(f"{fmt.format(np.mean(xs))} ({fmt.format(min(xs))}..{fmt.format(max(xs))})")
        print(f"| {v} | " + " | ".join(cells) + " |")
    print(f"\nrun time {wall:.1f} s in all")


if __name__ == "__main__":
    main()
