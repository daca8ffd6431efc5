"""The cost of each switch memory architecture on the k = 8 bench beside output-queued
switches: bench/scenarios/fat_tree_k8_websearch.toml (128 hosts, 100G, web search at 50%
for 2 ms, DCTCP with a 15-packet step marker, which the architectures apply to the VOQ or
input FIFO a packet joins), and the same fabric with CUBIC, no marker and PFC on the
switches' ingress accounting (XOFF 100 KB, lossless). Each (fabric, kind) runs
`rounds` times, the kinds alternating within a round (whole processes of the core runner,
`target/release/examples/run_scenario`); the table gives the median wall time, events and
events per second, and the median of each kind's wall time over the output-queued run of
the same round. Written to bench/results/architectures_speed.json.

    cargo build --release -p dcnsim-core --example run_scenario
    python3 bench/architectures_speed.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / "target" / "release" / "examples" / "run_scenario"
BASE = ROOT / "bench" / "scenarios" / "fat_tree_k8_websearch.toml"
OUT = Path(__file__).parent / "results" / "architectures_speed.json"
KINDS = [("output-queued", ""), ("input_queued", 'architecture = { kind = "input_queued" }'), ("voq", 'architecture = { kind = "voq" }'),
         ("cioq", 'architecture = { kind = "cioq" }'), ("voq, shared inputs", 'architecture = { kind = "voq", input_memory = "shared" }')]
FABRICS = [("DCTCP, marking", None), ("CUBIC, PFC", 'pfc = { xoff = "100KB", xon = "50KB" }')]


def scenario(pfc: str | None, table: str) -> str:
    text = BASE.read_text()
    if pfc is not None:
        text = text.replace('aqm = { kind = "step", threshold = "22500B" }', pfc)
        text = text.replace('kind = "dctcp"', 'kind = "cubic"')
        assert "aqm" not in text.split("[transport]")[0].split("[switch]")[1] and 'kind = "cubic"' in text
    return text.replace("[transport]", f"{table}\n[transport]")


def run(path: Path) -> tuple[float, int]:
    t = time.perf_counter()
    out = subprocess.run([str(BIN), str(path)], check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - t
    m = re.search(r"events[\"=: ]+(\d+)", out)
    if not m:
        raise SystemExit(f"no event count in the runner's output:\n{out[:500]}")
    return wall, int(m.group(1))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for fabric, pfc in FABRICS:
            paths = []
            for kind, table in KINDS:
                p = Path(d) / f"{len(rows)}_{kind}.toml"
                p.write_text(scenario(pfc, table))
                paths.append((kind, p))
            walls: dict[str, list[float]] = {k: [] for k, _ in KINDS}
            events: dict[str, int] = {}
            for _ in range(args.rounds):
                for kind, p in paths:
                    w, e = run(p)
                    walls[kind].append(w)
                    events[kind] = e
            oq = walls["output-queued"]
            for kind, _ in KINDS:
                med = statistics.median(walls[kind])
                ratio = statistics.median(w / o for w, o in zip(walls[kind], oq))
                rows.append({"fabric": fabric, "kind": kind, "wall_s_median": round(med, 3), "events": events[kind],
                             "events_per_s": round(events[kind] / med), "wall_ratio_to_oq": round(ratio, 3)})
                print(f"{fabric:14} {kind:14} {med:7.2f} s  {events[kind]:>11,} events  {events[kind] / med / 1e6:6.2f} M/s  x{ratio:.2f} of output-queued")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"rounds": args.rounds, "scenario": str(BASE.relative_to(ROOT)), "rows": rows}, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
