"""Switch memory architectures (`switch.architecture`) on Karol et al.'s N x N switch,
beside the numbers of their literature: the table docs/mechanisms.md ("Switch memory
architectures") quotes, written to bench/results/architectures.json.

N input hosts and N output hosts on one switch at 10 Gbit/s; each input sends Poisson
datagrams of one MTU over N flows of equal rate (each packet's output uniform and
independent) at `load` of its link rate; 1.1 saturates the inputs. The carried load is the
bytes the outputs received between 1 ms and 9 ms (two runs, so that warm-up is left out),
over seeds 1..5. switch/architecture/tests.rs asserts the same cases on seed 5.

    python3 bench/architectures.py          # about a minute on 2 cores
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import dcnsim

T1_US, T2_US = 1_000, 9_000
SEEDS = [1, 2, 3, 4, 5]
OUT = Path(__file__).parent / "results" / "architectures.json"

# (label, N, switch table, load, what the literature gives)
CASES = [
    ("FIFO inputs, random choice, saturated", 2, 'architecture = { kind = "input_queued", scheduler = "pim" }', 1.1, "0.75 (Karol et al. 1987, sec. III)"),
    ("FIFO inputs, random choice, saturated", 8, 'architecture = { kind = "input_queued", scheduler = "pim" }', 1.1, "0.6184 (Karol et al. 1987, Table I)"),
    ("FIFO inputs, round robin, saturated", 8, 'architecture = { kind = "input_queued" }', 1.1, "none published here"),
    ("VOQ, PIM 1 iteration, saturated", 8, 'architecture = { kind = "voq", scheduler = "pim" }', 1.1, f"{1 - (7 / 8) ** 8:.4f} (1 - (1 - 1/N)^N)"),
    ("VOQ, PIM 4 iterations, saturated", 8, 'architecture = { kind = "voq", scheduler = "pim", iterations = 4 }', 1.1, "about 1 (Anderson et al. 1993)"),
    ("VOQ, 1-SLIP, saturated", 8, 'architecture = { kind = "voq" }', 1.1, "1 with every VOQ backlogged (McKeown 1999)"),
    ("output-queued, 80% load", 8, "", 0.8, "0.8"),
    ("VOQ, 1-SLIP, 80% load", 8, 'architecture = { kind = "voq" }', 0.8, "0.8 (McKeown 1999, sec. IV)"),
    ("CIOQ, 1-SLIP, speed-up 2, 80% load", 8, 'architecture = { kind = "cioq" }', 0.8, "0.8 (Chuang et al. 1999)"),
    ("FIFO inputs, random choice, 80% load", 8, 'architecture = { kind = "input_queued", scheduler = "pim" }', 0.8, "saturates at 0.6184"),
    ("VOQ, PIM 1 iteration, 80% load", 8, 'architecture = { kind = "voq", scheduler = "pim" }', 0.8, "saturates at 0.6564"),
]


def scenario(n: int, switch: str, load: float, us: int, seed: int) -> str:
    names = [f"in{i}" for i in range(n)] + [f"out{o}" for o in range(n)]
    links = "\n".join(f'  {{ a = "{h}", b = "s", rate = "10Gbps", delay = "100ns" }},' for h in names)
    flows = ", ".join(f'{{ src = {i}, dst = {n + o}, size = "1GB" }}' for i in range(n) for o in range(n))
    rate = round(load * 10_000 / n)
    names_toml = "[" + ", ".join(f'"{h}"' for h in names) + "]"
    return (
        f'[scenario]\nname = "xbar"\nmax_time = "{us}us"\nseed = {seed}\n'
        f'[topology]\nkind = "custom"\nhosts = {names_toml}\nswitches = ["s"]\nlinks = [\n{links}\n]\n'
        f'[switch]\nbuffer = {{ model = "shared", pool = "{2 * n * 150}KB" }}\n{switch}\n'
        f'[transport]\nkind = "udp"\nudp = {{ rate = "{rate}Mbps", arrivals = "poisson" }}\n'
        f'[[workload]]\nkind = "flows"\nflows = [ {flows} ]\n'
    )


def delivered(text: str) -> tuple[int, int]:
    r = dcnsim.run(text)
    return int(r.flows["delivered_bytes"].sum()), int(r.summary["packets_dropped"])


def carried(n: int, switch: str, load: float, seed: int) -> tuple[float, int]:
    a, _ = delivered(scenario(n, switch, load, T1_US, seed))
    b, drops = delivered(scenario(n, switch, load, T2_US, seed))
    return (b - a) * 8 / (n * 10e9 * (T2_US - T1_US) * 1e-6), drops


def main() -> None:
    rows = []
    for label, n, switch, load, theory in CASES:
        runs = [carried(n, switch, load, s) for s in SEEDS]
        got = [r[0] for r in runs]
        row = {
            "case": label,
            "n": n,
            "table": switch or "(none: output-queued)",
            "load": load,
            "theory": theory,
            "carried_mean": round(statistics.mean(got), 4),
            "carried_min": round(min(got), 4),
            "carried_max": round(max(got), 4),
            "drops": [r[1] for r in runs],
        }
        rows.append(row)
        print(f"{label:42} N = {n:2}  {row['carried_mean']:.4f} ({row['carried_min']:.4f}-{row['carried_max']:.4f})  theory {theory}")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"seeds": SEEDS, "window_us": [T1_US, T2_US], "version": dcnsim.__version__, "rows": rows}, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
