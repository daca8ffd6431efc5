"""Seed 001's studies (Wadekar, McAlpine, Gupta, Intel, IEEE 802.3, 2004) over several seeds:
the database-entry application over TCP on the simple topology and the multi-stage system
with mixed link speeds (throughput, on the simple topology also client 1's entries to
server 2, which 802.3x blocks; response time, drops per variant), and the L2
generators on the backplane switch and the multi-stage L2 fabric (throughput and mean frame
latency against the per-port buffer for 802.3x, RED and DRC), as the Markdown tables
docs/reproductions.md quoted up to commit d7f3986. The docs now render these numbers from
`dcnsim reproduce seed001_simple seed001_mixed seed001_backplane seed001_multistage`
(python/dcnsim/reproduce/studies_seed001.py, the same measures).

    python bench/seed001.py [--seeds 5] [--jobs 2] [--small] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
from typing import Dict, List, Tuple

import numpy as np

import dcnsim

TCP = ["seed001_simple", "seed001_mixed"]
L2 = ["seed001_backplane", "seed001_multistage"]
# the simple topology's traffic that 802.3x blocks at client 1 (the seed's "HOL blocking")
VICTIM = "client1_server2"


def measure(name: str, variant: str, seed: int) -> Tuple[str, str, int, Dict[str, float]]:
    r = dcnsim.run(name, variant=variant, seed=seed)
    f, s = r.flows, r.summary
    secs = s["sim_time_ps"] / 1e12
    m: Dict[str, float] = {"drops": float(s["data_packets_dropped"]), "wall": float(s["wall_time_s"])}
    if "mean_frame_latency_ps" in f:
        m["gbps"] = float(f["delivered_bytes"].sum() * 8 / secs / 1e9)
        w = f["delivered_bytes"].to_numpy(dtype=float)
        lat = f["mean_frame_latency_ps"].to_numpy()
        ok = ~np.isnan(lat)
        m["latency_us"] = float((lat[ok] * w[ok]).sum() / max(w[ok].sum(), 1.0) / 1e6)
    else:
        fin = f[f["finished"].astype(bool)]
        m["gbps"] = float(fin["size_bytes"].sum() * 8 / secs / 1e9)
        m["resp_mean_us"] = float(fin["fct_ps"].mean() / 1e6)
        m["resp_p99_us"] = float(np.percentile(fin["fct_ps"], 99) / 1e6)
        m["resp_max_ms"] = float(fin["fct_ps"].max() / 1e9)
        m["ce_marked_flows"] = float((f["ecn_marks"] > 0).sum())
        victim = fin[fin["tag"] == VICTIM]
        if len(victim):
            m["victim_gbps"] = float(victim["size_bytes"].sum() * 8 / secs / 1e9)
    m["drc_frames"] = float(s.get("drc_frames", 0))
    return name, variant, seed, m


def cell(xs: List[float], fmt: str) -> str:
    return f"{fmt.format(np.mean(xs))} ({fmt.format(min(xs))}..{fmt.format(max(xs))})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--only", nargs="*", default=None)
    a = ap.parse_args()
    names = [n + ("_small" if a.small else "") for n in TCP + L2 if a.only is None or n in a.only]
    jobs = [(n, v, s) for n in names for v in dcnsim.validate(n)["variants"] for s in range(1, a.seeds + 1)]
    res: Dict[Tuple[str, str], List[Dict[str, float]]] = {}
    with cf.ProcessPoolExecutor(a.jobs) as ex:
        for n, v, _, m in ex.map(measure, *zip(*jobs)):
            res.setdefault((n, v), []).append(m)
    for n in names:
        variants = list(dcnsim.validate(n)["variants"])
        tcp = "mean_frame_latency" not in str(res[(n, variants[0])][0])
        wall = sum(m["wall"] for v in variants for m in res[(n, v)])
        print(f"\n#### {n}, seeds 1-{a.seeds}: mean (min..max across seeds); run time {wall:.0f} s\n")
        if "latency_us" in res[(n, variants[0])][0]:
            cols = [("gbps", "throughput (Gbit/s)", "{:.1f}"), ("latency_us", "mean frame latency (us)", "{:.1f}"), ("drops", "drops", "{:.0f}"), ("drc_frames", "DRC frames", "{:.0f}")]
        else:
            cols = [
                ("gbps", "throughput (Gbit/s)", "{:.2f}"),
                *([("victim_gbps", "client 1 -> server 2 (Gbit/s)", "{:.2f}")] if "victim_gbps" in res[(n, variants[0])][0] else []),
                ("resp_mean_us", "mean response (us)", "{:.1f}"),
                ("resp_p99_us", "p99 response (us)", "{:.0f}"),
                ("resp_max_ms", "max response (ms)", "{:.1f}"),
                ("drops", "drops", "{:.0f}"),
                ("ce_marked_flows", "flows with CE", "{:.0f}"),
            ]
        print("| variant | " + " | ".join(c[1] for c in cols) + " |")
        print("|---|" + "---|" * len(cols))
        for v in variants:
            ms = res[(n, v)]
            print(f"| {v} | " + " | ".join(cell([m[k] for m in ms], f) for k, _, f in cols) + " |")


if __name__ == "__main__":
    main()
