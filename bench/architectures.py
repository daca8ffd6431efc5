"""Switch memory architectures (`switch.architecture`) on Karol et al.'s N x N switch,
beside the numbers of their literature: the table docs/mechanisms.md ("Switch memory
architectures") quotes, written to bench/results/architectures.json.

N input hosts and N output hosts on one switch at 10 Gbit/s; each input sends Poisson
datagrams of one MTU over flows of equal rate at `load` of its link rate (1.1 saturates the
inputs): N flows, one to each output (uniform traffic: each packet's output uniform and
independent); or, N = 8, 7 flows to output 0 and one to each other output (hot spot: half
to output 0); or two, to outputs i and i + 1 (diagonal). The carried load is the
bytes the outputs received between 1 ms and 9 ms (two runs, so that warm-up is left out),
over seeds 1..5. switch/architecture/tests.rs asserts the same cases on seed 5.

    python3 bench/architectures.py          # a few minutes on 2 cores
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import dcnsim

T1_US, T2_US = 1_000, 9_000
SEEDS = [1, 2, 3, 4, 5]
OUT = Path(__file__).parent / "results" / "architectures.json"

BIG = 'input_buffer = "20MB"'
# (label, N, switch table, load, what the literature gives[, traffic]); hot-spot and
# diagonal cases give the inputs room for the whole run, so that no VOQ empties by a drop
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
    ("output-queued, hot spot, 80% load", 8, 'buffer = { model = "shared", pool = "200MB" }', 0.8, "output 0: 1; outputs 1-7: 0.4571", "hot"),
    ("VOQ, 4-SLIP, hot spot, 80% load", 8, f'architecture = {{ kind = "voq", iterations = 4, {BIG} }}', 0.8, "as output queueing (no HOL blocking)", "hot"),
    ("VOQ, 1-SLIP, hot spot, 80% load", 8, f'architecture = {{ kind = "voq", {BIG} }}', 0.8, "outputs 1-7 as output queueing", "hot"),
    ("FIFO inputs, hot spot, 80% load", 8, f'architecture = {{ kind = "input_queued", {BIG} }}', 0.8, "output 0: 1; outputs 1-7: 0.1429 (inputs paced at 1/(8 x 0.5))", "hot"),
    ("VOQ, PIM 1 iteration, diagonal, saturated", 8, f'architecture = {{ kind = "voq", scheduler = "pim", {BIG} }}', 1.1, "0.75 (1 - 1/4)", "diagonal"),
    ("VOQ, 1-SLIP, diagonal, saturated", 8, f'architecture = {{ kind = "voq", {BIG} }}', 1.1, "0.75, 0.875 or 1 (maximal matchings of a 16-cycle)", "diagonal"),
    ("VOQ, 4-SLIP, diagonal, saturated", 8, f'architecture = {{ kind = "voq", iterations = 4, {BIG} }}', 1.1, "as 1-SLIP", "diagonal"),
    ("FIFO inputs, random choice, diagonal, saturated", 8, f'architecture = {{ kind = "input_queued", scheduler = "pim", {BIG} }}', 1.1, "none published here", "diagonal"),
]


def outputs(n: int, traffic: str, i: int) -> list[int]:
    """The outputs input `i` sends to, one flow each."""
    if traffic == "hot":
        return [0] * (n - 1) + list(range(1, n))
    if traffic == "diagonal":
        return [i, (i + 1) % n]
    return list(range(n))


def scenario(n: int, switch: str, load: float, us: int, seed: int, traffic: str = "uniform") -> str:
    names = [f"in{i}" for i in range(n)] + [f"out{o}" for o in range(n)]
    links = "\n".join(f'  {{ a = "{h}", b = "s", rate = "10Gbps", delay = "100ns" }},' for h in names)
    per_input = len(outputs(n, traffic, 0))
    flows = ", ".join(f'{{ src = {i}, dst = {n + o}, size = "1GB" }}' for i in range(n) for o in outputs(n, traffic, i))
    rate = round(load * 10_000_000 / per_input)
    names_toml = "[" + ", ".join(f'"{h}"' for h in names) + "]"
    buffer = "" if "buffer = {" in switch else f'buffer = {{ model = "shared", pool = "{2 * n * 150}KB" }}\n'
    return (
        f'[scenario]\nname = "xbar"\nmax_time = "{us}us"\nseed = {seed}\n'
        f'[topology]\nkind = "custom"\nhosts = {names_toml}\nswitches = ["s"]\nlinks = [\n{links}\n]\n'
        f'[switch]\n{buffer}{switch}\n'
        f'[transport]\nkind = "udp"\nudp = {{ rate = "{rate}Kbps", arrivals = "poisson" }}\n'
        f'[[workload]]\nkind = "flows"\nflows = [ {flows} ]\n'
    )


def delivered(text: str, n: int) -> tuple[list[int], int]:
    """Bytes each output received, and the packets dropped."""
    r = dcnsim.run(text)
    by = r.flows.groupby("dst")["delivered_bytes"].sum()
    return [int(by.get(n + o, 0)) for o in range(n)], int(r.summary["packets_dropped"])


def carried(n: int, switch: str, load: float, seed: int, traffic: str = "uniform") -> tuple[list[float], int]:
    """Per output, the fraction of its link carried in the window; the drops."""
    a, _ = delivered(scenario(n, switch, load, T1_US, seed, traffic), n)
    b, drops = delivered(scenario(n, switch, load, T2_US, seed, traffic), n)
    return [(y - x) * 8 / (10e9 * (T2_US - T1_US) * 1e-6) for x, y in zip(a, b)], drops


CELL_US = 1538 * 8 / 10e3  # one MTU frame at 10 Gbit/s
# (label, switch table, loads): the mean frame latency over the output-queued switch's
DELAY_CASES = [
    ("VOQ, 1-SLIP", 'architecture = { kind = "voq" }', "half a cell (the grid) at light load; grows near full load"),
    ("VOQ, 4-SLIP", 'architecture = { kind = "voq", iterations = 4 }', "half a cell at light load; less than 1-SLIP near full"),
    ("CIOQ, 1-SLIP, speed-up 2", 'architecture = { kind = "cioq" }', "a quarter cell at every load (output queueing's delay)"),
]
DELAY_LOADS = [0.1, 0.5, 0.8, 0.9]


def latency_us(switch: str, load: float, seed: int) -> float:
    """Mean latency of the frames delivered in the run (9 ms), weighted by bytes."""
    r = dcnsim.run(scenario(8, switch, load, T2_US, seed) + "[metrics]\nframe_latency = true\n")
    f = r.flows
    return float((f["mean_frame_latency_ps"] * f["delivered_bytes"]).sum() / f["delivered_bytes"].sum() / 1e6)


def delay_rows() -> list[dict]:
    rows = []
    for load in DELAY_LOADS:
        oq = [latency_us("", load, s) for s in SEEDS]
        for label, switch, theory in DELAY_CASES:
            extra = [(latency_us(switch, load, s) - o) / CELL_US for s, o in zip(SEEDS, oq)]
            rows.append({
                "case": label, "table": switch, "load": load, "theory": theory,
                "output_queued_us_mean": round(statistics.mean(oq), 3),
                "extra_cells_mean": round(statistics.mean(extra), 3),
                "extra_cells_min": round(min(extra), 3),
                "extra_cells_max": round(max(extra), 3),
            })
            r = rows[-1]
            print(f"delay, load {load}: {label:26} +{r['extra_cells_mean']:.3f} cell times ({r['extra_cells_min']:.3f}-{r['extra_cells_max']:.3f}) over output queueing's {r['output_queued_us_mean']:.3f} us")
    return rows


def main() -> None:
    rows = []
    for label, n, switch, load, theory, *rest in CASES:
        traffic = rest[0] if rest else "uniform"
        runs = [carried(n, switch, load, s, traffic) for s in SEEDS]
        got = [statistics.mean(r[0]) for r in runs]
        row = {
            "case": label,
            "n": n,
            "traffic": traffic,
            "table": switch or "(none: output-queued)",
            "load": load,
            "theory": theory,
            "carried_mean": round(statistics.mean(got), 4),
            "carried_min": round(min(got), 4),
            "carried_max": round(max(got), 4),
            "carried_by_seed": [round(g, 4) for g in got],
            "drops": [r[1] for r in runs],
        }
        extra = ""
        if traffic == "hot":
            hot = [r[0][0] for r in runs]
            others = [statistics.mean(r[0][1:]) for r in runs]
            row["output0_mean"], row["output0_min"], row["output0_max"] = round(statistics.mean(hot), 4), round(min(hot), 4), round(max(hot), 4)
            row["others_mean"], row["others_min"], row["others_max"] = round(statistics.mean(others), 4), round(min(others), 4), round(max(others), 4)
            extra = f"  output 0 {row['output0_mean']:.4f}, outputs 1-7 {row['others_mean']:.4f} ({row['others_min']:.4f}-{row['others_max']:.4f})"
        rows.append(row)
        print(f"{label:48} N = {n:2}  {row['carried_mean']:.4f} ({row['carried_min']:.4f}-{row['carried_max']:.4f}){extra}  theory {theory}")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"seeds": SEEDS, "window_us": [T1_US, T2_US], "version": dcnsim.__version__, "rows": rows, "delay": delay_rows()}, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
