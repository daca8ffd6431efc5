"""Seed 002's flow-mix study: the Cubic / DCTCP per-flow throughput ratio for 1..10 Cubic x
1..10 DCTCP flows over the seed's 40 Mbit/s, 8 ms bottleneck, for each AQM variant of
`seed002_dualq` (RED, DualPI2, the seed's 2015 DualQ), as the seed's slide 28 chart (ratio
on a log axis per mix) and as heat maps, plus the Markdown tables docs/reproductions.md
quotes.

    python bench/seed002_grid.py OUTDIR [--seconds 250] [--jobs 2] [--max-flows 10]
    python bench/seed002_grid.py OUTDIR --classic-slopes 1 2 3   # the 2015 DualQ per slope

With `--classic-slopes` only the seed's 2015 DualQ runs, once per Classic slope S_r (with
S_d = S_r + 3, the seed's coupling factor 8; the seed gives no slope), and each mix also
reports the Classic queue's mean delay: the seed's operating point is 32 ms (slide 23).

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


DUALQ2015 = "DualQ 2015"
RATE_BPS = 40e6


def mix_scenario(base: dict, n_cubic: int, n_dctcp: int, seconds: int, keep_queues: bool = False) -> dict:
    s = json.loads(json.dumps(base))
    n = n_cubic + n_dctcp
    s["scenario"]["max_time"] = f"{seconds}s"
    s["scenario"]["name"] = f"seed002_mix_{n_cubic}c_{n_dctcp}d"
    s["topology"]["senders"] = n
    flows = [{"src": i, "dst": n, "size": "100GB", "transport": "cubic", "tag": "cubic"} for i in range(n_cubic)]
    flows += [{"src": n_cubic + j, "dst": n, "size": "100GB", "transport": "dctcp", "tag": "dctcp"} for j in range(n_dctcp)]
    s["workload"] = [{"kind": "flows", "flows": flows}]
    if not keep_queues:
        s["metrics"].pop("queue_sample", None)
    return s


def with_classic_slope(base: dict, slope: int) -> dict:
    """The scenario with the 2015 DualQ variant's S_r = slope and S_d = slope + 3."""
    s = json.loads(json.dumps(base))
    v = next(v for v in s["variant"] if v["name"] == DUALQ2015)
    v["switch"]["aqm"].update(classic_slope=slope, l_slope=slope + 3)
    return s


def classic_delay_ms(queues, c_queue: int = 0) -> float:
    """Mean sampled delay of the deepest Classic queue (the bottleneck's) at 40 Mbit/s."""
    q = queues[queues["queue"] == c_queue]
    means = q.groupby(["node", "port"]).apply(lambda g: (g["depth_bytes"] * g["samples"]).sum() / g["samples"].sum(), include_groups=False)
    return float(means.max()) * 8 / RATE_BPS * 1e3


def run_mix(args: Tuple[dict, str, int, int, int]) -> Tuple[str, int, int, float, float, float, float]:
    base, variant, n_cubic, n_dctcp, seconds = args
    slope_study = variant.startswith("S_r")
    r = dcnsim.run(mix_scenario(base, n_cubic, n_dctcp, seconds, keep_queues=slope_study), variant=DUALQ2015 if slope_study else variant)
    ts = r.timeseries
    late = ts[ts["bin_start_ps"] >= WARMUP_S * 1e12]
    per_flow = late.groupby("tag")["bytes"].sum() * 8 / (seconds - WARMUP_S) / 1e6
    cubic = float(per_flow.get("cubic", 0.0)) / max(n_cubic, 1)
    dctcp = float(per_flow.get("dctcp", 0.0)) / max(n_dctcp, 1)
    delay = classic_delay_ms(r.queues) if slope_study else math.nan
    return variant, n_cubic, n_dctcp, cubic, dctcp, delay, float(r.summary["wall_time_s"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--seconds", type=int, default=250)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--max-flows", type=int, default=10)
    ap.add_argument("--classic-slopes", type=int, nargs="+", metavar="S_R", help="run only the 2015 DualQ, once per Classic slope")
    a = ap.parse_args()
    out = Path(a.outdir)
    out.mkdir(parents=True, exist_ok=True)
    base = tomllib.loads(shipped_scenarios()["seed002_dualq"].read_text())
    n = a.max_flows
    if a.classic_slopes:
        variants = [f"S_r = {sr}" for sr in a.classic_slopes]
        bases = {v: with_classic_slope(base, sr) for v, sr in zip(variants, a.classic_slopes)}
    else:
        variants = [v["name"] for v in base["variant"]]
        bases = {v: base for v in variants}
    jobs = [(bases[v], v, c, d, a.seconds) for v in variants for c in range(1, n + 1) for d in range(1, n + 1)]
    results: Dict[str, Dict[Tuple[int, int], Tuple[float, float]]] = {v: {} for v in variants}
    delays: Dict[str, Dict[Tuple[int, int], float]] = {v: {} for v in variants}
    wall = 0.0
    with cf.ProcessPoolExecutor(a.jobs) as pool:
        for v, c, d, cubic, dctcp, delay, w in pool.map(run_mix, jobs):
            results[v][(c, d)] = (cubic, dctcp)
            delays[v][(c, d)] = delay
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
        if a.classic_slopes:
            lines += [f"### {v}: mean Classic queue delay, ms (rows: DCTCP flows, columns: Cubic flows)", ""]
            lines.append("| DCTCP \\ Cubic | " + " | ".join(str(c) for c in range(1, n + 1)) + " |")
            lines.append("|---" * (n + 1) + "|")
            for d in range(1, n + 1):
                lines.append(f"| {d} | " + " | ".join(f"{delays[v][(c, d)]:.1f}" for c in range(1, n + 1)) + " |")
            lines.append("")
    (out / "grid.md").write_text("\n".join(lines))
    (out / "grid.json").write_text(json.dumps({v: {f"{c},{d}": list(r) + ([delays[v][(c, d)]] if a.classic_slopes else []) for (c, d), r in res.items()} for v, res in results.items()}))
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
