"""Seed 002's flow-mix study: the Cubic / DCTCP per-flow throughput ratio for 1..10 Cubic x
1..10 DCTCP flows over the seed's 40 Mbit/s, 8 ms bottleneck, for each AQM variant of
`seed002_dualq` (RED, DualPI2, the seed's 2015 DualQ), as the seed's slide 28 chart (ratio
on a log axis per mix) and as heat maps, plus the Markdown tables docs/reproductions.md
quotes.

    python bench/seed002_grid.py OUTDIR [--seconds 250] [--jobs 2] [--max-flows 10]

Each run is the shipped scenario with its flows replaced by the mix (hosts 0..n_c-1 Cubic,
then n_d DCTCP, all to one receiver); per-flow goodput is averaged over the run after a 10 s
warm-up.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import math
import tomllib
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np

import dcnsim
from dcnsim.api import shipped_scenarios

WARMUP_S = 10


def mix_scenario(base: dict, n_cubic: int, n_dctcp: int, seconds: int) -> dict:
    s = json.loads(json.dumps(base))
    n = n_cubic + n_dctcp
    s["scenario"]["max_time"] = f"{seconds}s"
    s["scenario"]["name"] = f"seed002_mix_{n_cubic}c_{n_dctcp}d"
    s["topology"]["senders"] = n
    flows = [{"src": i, "dst": n, "size": "100GB", "transport": "cubic", "tag": "cubic"} for i in range(n_cubic)]
    flows += [{"src": n_cubic + j, "dst": n, "size": "100GB", "transport": "dctcp", "tag": "dctcp"} for j in range(n_dctcp)]
    s["workload"] = [{"kind": "flows", "flows": flows}]
    s["metrics"].pop("queue_sample", None)
    return s


def run_mix(args: Tuple[dict, str, int, int, int]) -> Tuple[str, int, int, float, float, float]:
    base, variant, n_cubic, n_dctcp, seconds = args
    r = dcnsim.run(mix_scenario(base, n_cubic, n_dctcp, seconds), variant=variant)
    ts = r.timeseries
    late = ts[ts["bin_start_ps"] >= WARMUP_S * 1e12]
    per_flow = late.groupby("tag")["bytes"].sum() * 8 / (seconds - WARMUP_S) / 1e6
    cubic = float(per_flow.get("cubic", 0.0)) / max(n_cubic, 1)
    dctcp = float(per_flow.get("dctcp", 0.0)) / max(n_dctcp, 1)
    return variant, n_cubic, n_dctcp, cubic, dctcp, float(r.summary["wall_time_s"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--seconds", type=int, default=250)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--max-flows", type=int, default=10)
    a = ap.parse_args()
    out = Path(a.outdir)
    out.mkdir(parents=True, exist_ok=True)
    base = tomllib.loads(shipped_scenarios()["seed002_dualq"].read_text())
    variants = [v["name"] for v in base["variant"]]
    n = a.max_flows
    jobs = [(base, v, c, d, a.seconds) for v in variants for c in range(1, n + 1) for d in range(1, n + 1)]
    results: Dict[str, Dict[Tuple[int, int], Tuple[float, float]]] = {v: {} for v in variants}
    wall = 0.0
    with cf.ProcessPoolExecutor(a.jobs) as pool:
        for v, c, d, cubic, dctcp, w in pool.map(run_mix, jobs):
            results[v][(c, d)] = (cubic, dctcp)
            wall += w
    lines: List[str] = [f"{len(jobs)} runs of {a.seconds} s, {wall:.0f} s of run time in all", ""]
    for v in variants:
        lines += [f"### {v}: Cubic / DCTCP per-flow throughput ratio (rows: DCTCP flows, columns: Cubic flows)", ""]
        lines.append("| DCTCP \\ Cubic | " + " | ".join(str(c) for c in range(1, n + 1)) + " |")
        lines.append("|---" * (n + 1) + "|")
        for d in range(1, n + 1):
            cells = []
            for c in range(1, n + 1):
                cu, dc = results[v][(c, d)]
                cells.append(f"{cu / dc:.2f}" if dc > 0 else "inf")
            lines.append(f"| {d} | " + " | ".join(cells) + " |")
        ratios = np.array([cu / dc for cu, dc in results[v].values() if dc > 0 and cu > 0])
        lines += ["", f"geometric mean {math.exp(np.log(ratios).mean()):.3f}, range {ratios.min():.3f}..{ratios.max():.3f}", ""]
    (out / "grid.md").write_text("\n".join(lines))
    (out / "grid.json").write_text(json.dumps({v: {f"{c},{d}": r for (c, d), r in res.items()} for v, res in results.items()}))
    plot(results, variants, n, out)
    print("\n".join(lines))


def plot(results, variants, n, out: Path) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import LogNorm
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.0 * len(variants), 4.4))
    FigureCanvasAgg(fig)
    for i, v in enumerate(variants):
        ax = fig.add_subplot(1, len(variants), i + 1)
        m = np.array([[results[v][(c, d)][0] / max(results[v][(c, d)][1], 1e-9) for c in range(1, n + 1)] for d in range(1, n + 1)])
        im = ax.imshow(np.clip(m, 1e-2, 1e2), origin="lower", norm=LogNorm(1e-2, 1e2), cmap="coolwarm", extent=(0.5, n + 0.5, 0.5, n + 0.5))
        ax.set_xlabel("Cubic flows")
        ax.set_ylabel("DCTCP flows")
        ax.set_title(v)
        fig.colorbar(im, ax=ax, fraction=0.046, label="Cubic / DCTCP per-flow rate")
    fig.suptitle("Seed 002 flow mixes, 40 Mbit/s, 8 ms: Cubic / DCTCP throughput ratio")
    fig.tight_layout()
    fig.savefig(out / "ratio_heatmap.png", dpi=100)
    fig2 = Figure(figsize=(7.0, 4.2))
    FigureCanvasAgg(fig2)
    ax = fig2.add_subplot(1, 1, 1)
    for i, v in enumerate(variants):
        xs = [(d - 1) * n + (c - 1) for d in range(1, n + 1) for c in range(1, n + 1)]
        ys = [results[v][(c, d)][0] / max(results[v][(c, d)][1], 1e-9) for d in range(1, n + 1) for c in range(1, n + 1)]
        ax.plot(xs, ys, ".", color=f"C{i}", label=v)
    ax.set_yscale("log")
    ax.axhline(1.0, color="0.4", linewidth=0.8)
    ax.set_xlabel("mix (DCTCP flows major, Cubic flows minor: 1..10 each)")
    ax.set_ylabel("Cubic / DCTCP per-flow rate")
    ax.legend()
    ax.set_title("Seed 002 slide 28: throughput ratio per mix")
    fig2.tight_layout()
    fig2.savefig(out / "ratio_chart.png", dpi=100)


if __name__ == "__main__":
    main()
