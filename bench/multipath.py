"""Per-flow ECMP against packet spraying, with a failed or degraded core link, on the
shipped `multipath_permutation` scenario (k = 8 fat tree, 128 hosts at 100 Gbit/s, UDP
Poisson at 90% on a random permutation, 2 ms): the table docs/mechanisms.md ("Packet
spraying", "Link failures") quotes, over seeds 1..5, written to bench/results/multipath.json.

    python3 bench/multipath.py            # about a minute on 2 cores
    python3 bench/multipath.py --small    # the k = 4 scenario the tests run
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import dcnsim

SEEDS = [1, 2, 3, 4, 5]
VARIANTS = ["ECMP", "spray", "ECMP, core link down", "spray, core link down", "spray, core link at 25G"]


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
    out.write_text(json.dumps({"scenario": name, "seeds": SEEDS, "version": dcnsim.__version__, "rows": rows}, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
