"""Per-flow ECMP against packet spraying, with a failed or degraded core link, on the
shipped `multipath_permutation` scenario (k = 8 fat tree, 128 hosts at 100 Gbit/s, UDP
Poisson at 90% on a random permutation, 2 ms); and DCTCP on a permutation of a 4 x 4
leaf-spine under each load balancing (per-flow ECMP, flowlets, per-packet adaptive
routing, spraying); and the shipped `multipath_websearch` (DCTCP, web-search at 60% on a
k = 8 fat tree, healthy and with a core link down): the tables docs/mechanisms.md ("Packet
spraying", "Switch load balancing") quotes, over seeds 1..5, written to
bench/results/multipath.json.

    python3 bench/multipath.py            # about three minutes on 2 cores
    python3 bench/multipath.py --small    # the k = 4 scenario the tests run
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import dcnsim

SEEDS = [1, 2, 3, 4, 5]
VARIANTS = ["ECMP", "spray", "ECMP, core link down", "spray, core link down", "spray, core link at 25G", "adaptive", "adaptive, core link at 25G"]


LEAF_SPINE = """[scenario]
name = "dctcp_permutation"
max_time = "200ms"
seed = {seed}
[topology]
kind = "clos2"
servers_per_tor = 4
tors = 4
spines = 4
host_link = {{ rate = "10Gbps", delay = "1us" }}
[switch]
buffer = {{ queue = "150KB" }}
aqm = {{ kind = "step", threshold = "30KB" }}
{switch}
[transport]
kind = "dctcp"
{transport}
[[workload]]
kind = "flows"
flows = [ {flows} ]
"""
# (label, switch lines, transport lines)
BALANCING = [
    ("per-flow ECMP", "", ""),
    ("flowlets, gap 500 us (the default)", 'load_balance = { kind = "flowlet" }', ""),
    ("flowlets, gap 50 us", 'load_balance = { kind = "flowlet", gap = "50us" }', ""),
    ("flowlets, gap 10 us", 'load_balance = { kind = "flowlet", gap = "10us" }', ""),
    ("adaptive (least queued per packet)", 'load_balance = { kind = "adaptive" }', ""),
    ("spraying at the hosts", "", 'path = "spray"'),
]


def dctcp_rows() -> list[dict]:
    """16 DCTCP flows of 20 MB, host i to host i + 4 (the next ToR), all starting at 0: the
    last and the mean FCT against the ideal (a flow alone), the retransmissions."""
    import warnings

    flows = ", ".join(f'{{ src = {i}, dst = {(i + 4) % 16}, size = "20MB" }}' for i in range(16))
    rows = []
    for label, switch, transport in BALANCING:
        last, mean, retx, flowlets = [], [], [], []
        for seed in SEEDS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the spraying warning, and a marker idle under adaptive routing
                r = dcnsim.run(LEAF_SPINE.format(seed=seed, switch=switch, transport=transport, flows=flows))
            f = r.flows
            assert r.summary["flows_unfinished"] == 0
            ideal = float(f["ideal_fct_ps"].max() / 1e9)
            last.append(float(f["fct_ps"].max() / 1e9))
            mean.append(float(f["fct_ps"].mean() / 1e9))
            retx.append(int(f["retx"].sum()))
            flowlets.append(int(r.summary.get("flowlets", 0)))
        row = {
            "balancing": label,
            "ideal_fct_ms": round(ideal, 2),
            "last_fct_ms": [round(x, 2) for x in last],
            "mean_fct_ms_mean": round(statistics.mean(mean), 2),
            "mean_fct_ms_min": round(min(mean), 2),
            "mean_fct_ms_max": round(max(mean), 2),
            "retx": retx,
            "flowlets": flowlets,
        }
        rows.append(row)
        print(f"DCTCP, {label:36} last FCT {row['last_fct_ms']} ms, mean {row['mean_fct_ms_mean']} ms, retx {retx}, flowlets {flowlets}")
    return rows


WEBSEARCH = ["ECMP", "flowlets", "adaptive", "spray", "ECMP, core link down", "flowlets, core link down", "adaptive, core link down"]


def websearch_rows(name: str) -> list[dict]:
    """Per variant of `name`, over the seeds: the FCT slowdown (FCT over a flow alone's) of
    the flows under 100 KB (median, p99) and of those of 1 MB and more (mean), the
    retransmissions and drops per run."""
    import warnings

    rows = []
    for v in WEBSEARCH:
        per = []
        for seed in SEEDS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # spraying with TCP warns, as it should
                r = dcnsim.run(name, variant=v, seed=seed)
            f = r.flows
            assert r.summary["flows_unfinished"] == 0, (v, seed)
            small, big = f[f["size_bytes"] < 100_000]["slowdown"], f[f["size_bytes"] >= 1_000_000]["slowdown"]
            per.append((float(small.median()), float(small.quantile(0.99)), float(big.mean()), int(f["retx"].sum()), int(r.summary["packets_dropped"]), len(f)))
        col = lambda k: [p[k] for p in per]
        row = {
            "variant": v,
            "flows": col(5),
            "small_p50_slowdown": round(statistics.mean(col(0)), 3),
            "small_p99_slowdown": round(statistics.mean(col(1)), 2),
            "small_p99_min": round(min(col(1)), 2),
            "small_p99_max": round(max(col(1)), 2),
            "large_mean_slowdown": round(statistics.mean(col(2)), 3),
            "large_mean_min": round(min(col(2)), 3),
            "large_mean_max": round(max(col(2)), 3),
            "retx": col(3),
            "drops": col(4),
        }
        rows.append(row)
        print(f"{name}, {v:26} small p50 {row['small_p50_slowdown']}, p99 {row['small_p99_slowdown']} ({row['small_p99_min']}-{row['small_p99_max']}), "
              f"large mean {row['large_mean_slowdown']} ({row['large_mean_min']}-{row['large_mean_max']}), retx {col(3)}, drops {col(4)}")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="the k = 4 scenario")
    a = ap.parse_args()
    name = "multipath_permutation_small" if a.small else "multipath_permutation"
    out = Path(__file__).parent / "results" / f"{name.replace('multipath_permutation', 'multipath')}.json"
    rows = []
    for v in VARIANTS:
        delivered, drops, down = [], [], []
        for seed in SEEDS:
            r = dcnsim.run(name, variant=v, seed=seed)
            f = r.flows
            offered = len(f) * 90e9 * r.summary["sim_time_ps"] * 1e-12 / 8
            delivered.append(f["delivered_bytes"].sum() / offered)
            drops.append(int(r.summary["packets_dropped"]))
            down.append(int(r.ports["drops_link_down"].sum()) if "drops_link_down" in r.ports else 0)
        row = {
            "variant": v,
            "delivered_of_offered_mean": round(statistics.mean(delivered), 4),
            "delivered_of_offered_min": round(min(delivered), 4),
            "delivered_of_offered_max": round(max(delivered), 4),
            "drops": drops,
            "drops_link_down": down,
        }
        rows.append(row)
        print(f"{v:26} delivered {row['delivered_of_offered_mean']:.4f} of offered ({row['delivered_of_offered_min']:.4f}-{row['delivered_of_offered_max']:.4f}), "
              f"drops {statistics.mean(drops):.0f}, at the dead link {statistics.mean(down):.0f}")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"scenario": name, "seeds": SEEDS, "version": dcnsim.__version__, "rows": rows, "dctcp": dctcp_rows(),
                                "websearch": websearch_rows("multipath_websearch_small" if a.small else "multipath_websearch")}, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
