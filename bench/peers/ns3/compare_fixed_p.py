#!/usr/bin/env python3
"""dcnsim beside ns-3 on the fixed-probability ECN experiment (see README.md here).

Runs dcnsim's side of fixed_p_ecn.py through its Python API with the scenario of
tests/test_rate_laws.py (`_rate`): one long flow host 0 -> ToR -> host 1 on a clos2 fabric
(tors = 1, servers_per_tor = 2, spines = 1), 10 Gbit/s host links with delay R/4, a 100 MB
queue, `switch.aqm = { kind = "fixed", p }`, ECN on, min_rto 200 ms, 1 s goodput bins, for
every (cc, p) row of fixed_p_ecn_ns3.csv, with that row's simulated time and warm-up.

Writes fixed_p_ecn_dcnsim.csv (the ns-3 csv's columns; `mean_cwnd_segments` is goodput x R,
as dcnsim's Python API exposes no cwnd trace: this is the window only while the window is
below the BDP and no queue builds; `marked_fraction` is the flow's ecn_marks over its
delivered packets, over the whole run) and fixed_p_ecn.png.

    python3 compare_fixed_p.py                 # run dcnsim, write csv + figure
    python3 compare_fixed_p.py --plot-only     # redraw from the two csv files
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
MSS = 1460
KIND = {"dctcp": "dctcp", "newreno": "reno", "cubic": "cubic"}  # our cc name -> dcnsim kind
COLUMNS = ["cc", "p", "rtt_s", "seconds", "warmup_s", "goodput_pps", "mean_cwnd_segments",
           "marked_fraction", "ns3_version"]


def scenario(kind: str, p: float, rtt_s: float, seconds: float, seed: int = 1) -> str:
    delay_us = rtt_s / 4 * 1e6  # two links each way
    return f"""
[scenario]
name = "law"
seed = {seed}
max_time = "{seconds:g}s"
[topology]
kind = "clos2"
tors = 1
servers_per_tor = 2
spines = 1
host_link = {{ rate = "10Gbps", delay = "{delay_us:g}us" }}
[switch]
buffer = {{ queue = "100MB" }}
aqm = {{ kind = "fixed", p = {p} }}
[transport]
kind = "{kind}"
ecn = true
min_rto = "200ms"
[[workload]]
kind = "flows"
flows = [ {{ src = 0, dst = 1, size = "1000GB" }} ]
[metrics]
throughput_bin = "1s"
"""


def run_dcnsim(cc: str, p: float, rtt_s: float, seconds: float, warmup: float) -> dict:
    import dcnsim

    assert warmup == int(warmup), "warm-up must be a whole number of 1 s bins"
    t0 = time.time()
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"{cc}_{p}.toml"
        path.write_text(scenario(KIND[cc], p, rtt_s, seconds))
        r = dcnsim.run(str(path))
    assert r.summary["end_reason"] == "max_time", r.summary.get("end_reason")
    ts = r.timeseries
    late = ts[ts["bin_start_ps"] >= warmup * 1e12]
    goodput = float(late["bytes"].sum()) / MSS / (seconds - warmup)
    f = r.flows.iloc[0]
    delivered_pkts = float(f["delivered_bytes"]) / MSS
    marked = float(f["ecn_marks"]) / delivered_pkts if delivered_pkts else float("nan")
    return {
        "cc": cc, "p": p, "rtt_s": rtt_s, "seconds": seconds, "warmup_s": warmup,
        "goodput_pps": goodput, "mean_cwnd_segments": goodput * rtt_s,
        "marked_fraction": marked, "ns3_version": "",
        "wall_s": time.time() - t0,
    }


def read_csv(path: Path) -> list[dict]:
    with path.open() as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        for k in ("p", "rtt_s", "seconds", "warmup_s", "goodput_pps", "mean_cwnd_segments",
                  "marked_fraction"):
            r[k] = float(r[k])
    return rows


def laws(cc: str, p, r: float):
    """(label, values, linestyle) of the laws drawn for cc."""
    import numpy as np

    p = np.asarray(p)
    if cc == "dctcp":
        return [("DCTCP 2/(Rp)", 2 / (r * p), "-"),
                ("DCTCP $\\sqrt{2}$/(Rp)", math.sqrt(2) / (r * p), "--"),
                ("DCTCP (1+$\\sqrt{3}$)/(Rp)", (1 + math.sqrt(3)) / (r * p), ":")]
    if cc == "newreno":
        return [("Mathis 1.22/(R$\\sqrt{p}$)", 1.22 / (r * np.sqrt(p)), "-")]
    return []


def plot(ns3: list[dict], dc: list[dict], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    colours = {"dctcp": "tab:blue", "newreno": "tab:red", "cubic": "tab:green"}
    fig, ax = plt.subplots(figsize=(7.5, 5.5))
    r = ns3[0]["rtt_s"] if ns3 else 1e-3
    ps = sorted({row["p"] for row in ns3 + dc})
    grid = np.logspace(math.log10(min(ps) / 1.3), math.log10(max(ps) * 1.3), 50)
    for cc, col in colours.items():
        for label, y, ls in laws(cc, grid, r):
            ax.plot(grid, y, ls, color=col, lw=1, alpha=0.6, label=label)
        a = sorted((row for row in ns3 if row["cc"] == cc), key=lambda x: x["p"])
        b = sorted((row for row in dc if row["cc"] == cc), key=lambda x: x["p"])
        if a:
            ax.plot([x["p"] for x in a], [x["goodput_pps"] for x in a], "o", color=col,
                    ms=7, label=f"{cc} ns-3")
        if b:
            ax.plot([x["p"] for x in b], [x["goodput_pps"] for x in b], "o", mfc="none",
                    color=col, ms=11, mew=1.5, label=f"{cc} dcnsim")
    ax.axhline(10e9 / (1500 * 8), color="grey", lw=0.8, ls="-.", label="10 Gbit/s / 1500 B")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("marking probability p")
    ax.set_ylabel("goodput (1460 B packets / s)")
    ax.set_title(f"One flow, fixed-p ECN marker, R = {r * 1e3:g} ms")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")


def write_csv(rows: list[dict], path: Path) -> None:
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=COLUMNS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
    print(f"wrote {path}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ns3-csv", default=str(HERE / "fixed_p_ecn_ns3.csv"))
    ap.add_argument("--out-dir", default=str(HERE))
    ap.add_argument("--plot-only", action="store_true", help="redraw from existing csv files")
    ap.add_argument("-j", "--jobs", type=int, default=min(2, os.cpu_count() or 1))
    a = ap.parse_args()

    out = Path(a.out_dir)
    ns3 = read_csv(Path(a.ns3_csv))
    dc_csv = out / "fixed_p_ecn_dcnsim.csv"
    if a.plot_only:
        dc = read_csv(dc_csv) if dc_csv.exists() else []
    else:
        t0 = time.time()
        cases = [(r["cc"], r["p"], r["rtt_s"], r["seconds"], r["warmup_s"]) for r in ns3]
        with ProcessPoolExecutor(max_workers=a.jobs) as ex:
            dc = list(ex.map(run_dcnsim, *zip(*cases)))
        print(f"dcnsim: {len(dc)} runs, {time.time() - t0:.0f} s wall")
        write_csv(dc, dc_csv)

    by = {(r["cc"], r["p"]): r for r in dc}
    print(f"{'cc':8s} {'p':>6s} {'ns-3 pkt/s':>11s} {'dcnsim pkt/s':>12s} {'dcnsim/ns-3':>11s} "
          f"{'ns-3/law':>8s} {'dcnsim/law':>10s}  law")
    for r in ns3:
        p, R = r["p"], r["rtt_s"]
        law, name = ((2 / (R * p), "2/(Rp)") if r["cc"] == "dctcp"
                     else (1.22 / (R * math.sqrt(p)), "1.22/(R sqrt p)"))
        d = by.get((r["cc"], p))
        dg = d["goodput_pps"] if d else float("nan")
        print(f"{r['cc']:8s} {p:6g} {r['goodput_pps']:11.0f} {dg:12.0f} {dg / r['goodput_pps']:11.3f} "
              f"{r['goodput_pps'] / law:8.3f} {dg / law:10.3f}  {name}")
    plot(ns3, dc, out / "fixed_p_ecn.png")


if __name__ == "__main__":
    main()
