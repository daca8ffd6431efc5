#!/usr/bin/env python3
"""FCT slowdown per flow-size bin, per congestion control, from a `dcnsim compare -o OUT`
folder (one seed) or `dcnsim compare --seeds N -o OUT` (the mean over seeds, with the
seed-to-seed range): median, 95th and 99th percentile of the slowdown (FCT over the flow's
FCT alone on the idle fabric) of the finished flows in each bin of the scenario's
`metrics.fct_bins`, and the unfinished flows. The HPCC (Li et al., SIGCOMM 2019, Fig. 11)
and Swift (Kumar et al., SIGCOMM 2020) papers plot the same per size. Writes OUT/slowdown.md
and OUT/slowdown.png.

    dcnsim compare cc_k8_websearch -o /tmp/cc_ws --jobs 2
    python bench/cc_slowdown.py /tmp/cc_ws
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd

from dcnsim.sweeps import ci95

UNITS = {"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 1024, "MiB": 1 << 20, "GiB": 1 << 30}


def size_of(s: str) -> float:
    for u in sorted(UNITS, key=len, reverse=True):
        if s.endswith(u):
            return float(s[: -len(u)]) * UNITS[u]
    return float(s)


def runs(vdir: Path) -> list[Path]:
    seeds = sorted(vdir.glob("seed-*"), key=lambda p: int(p.name.split("-")[1]))
    return seeds or [vdir]


def stats(d: Path, edges: list[float]) -> dict:
    f = pd.read_parquet(d / "flows.parquet")
    out = {}
    lo = 0.0
    for hi in edges + [float("inf")]:
        b = f[(f.size_bytes >= lo) & (f.size_bytes < hi)]
        done = b[b.finished.astype(bool)]
        s = done.slowdown.to_numpy()
        out[(lo, hi)] = {"n": len(b), "unfinished": int(len(b) - len(done)),
                         "p50": float(np.median(s)) if len(s) else np.nan,
                         "p95": float(np.percentile(s, 95)) if len(s) else np.nan,
                         "p99": float(np.percentile(s, 99)) if len(s) else np.nan}
        lo = hi
    return out


def label(lo: float, hi: float) -> str:
    def f(x):
        for u, m in (("MB", 1e6), ("KB", 1e3)):
            if x >= m:
                return f"{x / m:g}{u}"
        return f"{x:g}B"
    return f"<{f(hi)}" if lo == 0 else (f">{f(lo)}" if hi == float("inf") else f"{f(lo)}-{f(hi)}")


def main() -> None:
    root = Path(sys.argv[1])
    variants = [p for p in sorted(root.iterdir()) if p.is_dir() and (runs(p)[0] / "flows.parquet").exists()]
    scen = tomllib.loads((runs(variants[0])[0] / "scenario.toml").read_text())
    edges = [size_of(b) for b in scen.get("metrics", {}).get("fct_bins", ["100KB", "1MB", "10MB"])]
    names = {}
    for v in variants:
        sm = json.loads((runs(v)[0] / "summary.json").read_text())
        names[v.name] = sm.get("variant") or v.name
    # the scenario's order, as the comparison table has it
    cmp = root / "comparison.csv"
    if cmp.exists():
        order = cmp.read_text().splitlines()[0].split(",")
        variants.sort(key=lambda v: order.index(names[v.name]) if names[v.name] in order else len(order))
    table = {}
    for v in variants:
        per_seed = [stats(d, edges) for d in runs(v)]
        table[v.name] = per_seed
    bins = list(table[variants[0].name][0])
    lines = [f"# FCT slowdown per size bin: {scen['scenario']['name']} ({len(table[variants[0].name])} seed(s))", "",
             "Median / p95 / p99 slowdown of the finished flows (mean over seeds; the range over seeds in brackets when more than one); unfinished flows per run.", ""]
    head = "| bin | flows/run | " + " | ".join(names[v.name] for v in variants) + " |"
    lines += [head, "|" + " --- |" * (2 + len(variants))]
    for b in bins:
        n = np.mean([s[b]["n"] for s in table[variants[0].name]])
        cells = []
        for v in variants:
            ss = table[v.name]
            parts = []
            for q in ("p50", "p95", "p99"):
                xs = [s[b][q] for s in ss]
                m = np.nanmean(xs)
                parts.append(f"{m:.2f}" if len(xs) == 1 else f"{m:.2f} [{np.nanmin(xs):.2f}-{np.nanmax(xs):.2f}]")
            unf = np.mean([s[b]["unfinished"] for s in ss])
            cells.append(" / ".join(parts) + (f", {unf:g} unfinished" if unf else ""))
        lines.append(f"| {label(*b)} | {n:.0f} | " + " | ".join(cells) + " |")
    (root / "slowdown.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    x = np.arange(len(bins))
    for v in variants:
        for ax, q in zip(axes, ("p50", "p99")):
            ys = [np.nanmean([s[b][q] for s in table[v.name]]) for b in bins]
            ax.plot(x, ys, marker="o", label=names[v.name])
    for ax, q in zip(axes, ("median", "99th percentile")):
        ax.set_xticks(x, [label(*b) for b in bins])
        ax.set_yscale("log")
        ax.set_ylabel(f"{q} FCT slowdown")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"{scen['scenario']['name']}: FCT slowdown by flow size", fontsize=10)
    fig.tight_layout()
    fig.savefig(root / "slowdown.png", dpi=110)
    print(f"wrote {root / 'slowdown.md'} and {root / 'slowdown.png'}")


if __name__ == "__main__":
    main()
