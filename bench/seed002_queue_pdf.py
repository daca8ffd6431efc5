"""Seed 002's slides 8-10: the queue-size pdf of one Reno or one DCTCP flow alone over the
seed's 40 Mbit/s, 8 ms bottleneck, for each variant of `seed002_queue_pdf` (Reno through
the seed's RED, DCTCP through the same RED, DCTCP through a step at 5 packets), over several
seeds, as one chart of the pdfs (in packets, as the seed plots them) and the Markdown table
docs/reproductions.md quotes.

    python bench/seed002_queue_pdf.py OUTDIR [--seeds 5] [--jobs 2] [--small]
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np

import dcnsim
from dcnsim.api import shipped_scenarios

PACKET = 1500


def bottleneck_pdf(r) -> np.ndarray:
    """The bottleneck queue's sampled pdf in packets (index = queue size in packets)."""
    q = r.queues
    # the bottleneck is the left switch's port toward the right switch: the queue that holds
    # the most samples above zero
    q = q[q["samples"] > 0]
    busiest = q[q["depth_bytes"] > 0].groupby(["node", "port"])["samples"].sum().idxmax()
    h = q[(q["node"] == busiest[0]) & (q["port"] == busiest[1])]
    pkts = (h["depth_bytes"].to_numpy() // PACKET).astype(int)
    pdf = np.zeros(pkts.max() + 1)
    np.add.at(pdf, pkts, h["samples"].to_numpy())
    return pdf / pdf.sum()


def stats(pdf: np.ndarray) -> Dict[str, float]:
    x = np.arange(len(pdf)) + 0.5  # bin centre in packets
    cdf = np.cumsum(pdf)
    pct = lambda p: float(np.searchsorted(cdf, p) + 0.5)
    return {"mean": float((x * pdf).sum()), "p5": pct(0.05), "p50": pct(0.5), "p95": pct(0.95)}


def run_one(args: Tuple[str, str, int]) -> Tuple[str, int, np.ndarray, float]:
    scenario, variant, seed = args
    r = dcnsim.run(scenario, variant=variant, seed=seed)
    return variant, seed, bottleneck_pdf(r), float(r.summary["wall_time_s"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--small", action="store_true", help="the _small scenario (30 s)")
    a = ap.parse_args()
    out = Path(a.outdir)
    out.mkdir(parents=True, exist_ok=True)
    name = "seed002_queue_pdf_small" if a.small else "seed002_queue_pdf"
    path = str(shipped_scenarios()[name])
    variants = list(dcnsim.validate(path)["variants"])
    jobs = [(path, v, s) for v in variants for s in range(1, a.seeds + 1)]
    pdfs: Dict[str, List[np.ndarray]] = {v: [] for v in variants}
    wall = 0.0
    with cf.ProcessPoolExecutor(a.jobs) as ex:
        for v, _, pdf, w in ex.map(run_one, jobs):
            pdfs[v].append(pdf)
            wall += w
    lines = [
        f"{name}, seeds 1-{a.seeds}: bottleneck queue in packets of 1500 B (mean over seeds, min..max across seeds); run time {wall:.1f} s in all",
        "",
        "| variant | mean | p5 | median | p95 | p95 - p5 |",
        "|---|---|---|---|---|---|",
    ]
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for v in variants:
        per_seed = [stats(p) for p in pdfs[v]]
        cell = lambda k: f"{np.mean([s[k] for s in per_seed]):.1f} ({min(s[k] for s in per_seed):.1f}..{max(s[k] for s in per_seed):.1f})"
        width = [s["p95"] - s["p5"] for s in per_seed]
        lines.append(f"| {v} | {cell('mean')} | {cell('p5')} | {cell('p50')} | {cell('p95')} | {np.mean(width):.1f} ({min(width):.1f}..{max(width):.1f}) |")
        n = max(len(p) for p in pdfs[v])
        mean_pdf = np.mean([np.pad(p, (0, n - len(p))) for p in pdfs[v]], axis=0)
        ax.plot(np.arange(n), 100 * mean_pdf, label=v, drawstyle="steps-post")
    ax.set_xlim(0, 250)
    ax.set_xlabel("queue size [packets]")
    ax.set_ylabel("pdf [%]")
    ax.set_title("Seed 002 slides 8-10: one flow alone, 40 Mbit/s, 8 ms")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "seed002_queue_pdf.png", dpi=110)
    (out / "seed002_queue_pdf.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
