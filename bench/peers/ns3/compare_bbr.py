#!/usr/bin/env python3
"""dcnsim's side of bench/peers/ns3/bbr_dumbbell.py: the same dumbbell and cases, each with
selective acknowledgements (`transport.sack`, the default) and without, and the cases with
BBR v1 (`transport.cc = "bbr"`) under both readings of its send quantum ("tso", Linux's
default here, and "segment", ns-3's), printed beside ns-3's numbers from
bbr_dumbbell_ns3.csv and written to bbr_dumbbell_dcnsim.csv, and drawn side by side in
bbr_dumbbell.png (the first flow's share of the goodput, the mean bottleneck queue and the
retransmissions, per case).

    python bench/peers/ns3/compare_bbr.py
"""

from __future__ import annotations

import csv
import sys
import tempfile
from pathlib import Path

import dcnsim

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bbr_dumbbell import CASES  # noqa: E402

WARMUP_MS, END_MS = 100, 200


# ns-3's names of the algorithms that dcnsim names otherwise
DCNSIM_CC = {"newreno": "reno"}


def scenario(ccs: list[str], buf_pkts: int, quantum: str, sack: bool, end_ms: int = END_MS) -> str:
    n = len(ccs)
    flows = ", ".join(f'{{ src = {i}, dst = {n}, size = "10GB", transport = "{DCNSIM_CC.get(c, c)}" }}' for i, c in enumerate(ccs))
    return f"""
[scenario]
name = "bbr_dumbbell"
seed = 1
max_time = "{end_ms}ms"
[topology]
kind = "dumbbell"
senders = {n}
receivers = 1
host_link = {{ rate = "10Gbps", delay = "20us" }}
bottleneck = {{ rate = "10Gbps", delay = "10us" }}
[switch]
buffer = {{ model = "static", queue = "{buf_pkts * 1500}B" }}
[transport]
kind = "tcp"
cc = "bbr"
bbr = {{ quantum = "{quantum}" }}
sack = {"true" if sack else "false"}
[metrics]
throughput_bin = "1ms"
queue_sample = "2us"
[[workload]]
kind = "flows"
flows = [ {flows} ]
"""


def _run(ccs: list[str], buf_pkts: int, quantum: str, sack: bool, end_ms: int):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "bbr.toml"
        p.write_text(scenario(ccs, buf_pkts, quantum, sack, end_ms))
        return dcnsim.run(str(p))


def run(ccs: list[str], buf_pkts: int, quantum: str, sack: bool) -> dict:
    r = _run(ccs, buf_pkts, quantum, sack, END_MS)
    # ns-3 counts drops and retransmissions from WARMUP_MS on; the flows table holds whole-run
    # totals, so the same run stopped at WARMUP_MS (identical up to then: same seed, same
    # events) gives what to subtract. Counting slow start's overshoot too made dcnsim's
    # drops look 2-3x ns-3's (session 45's table).
    w = _run(ccs, buf_pkts, quantum, sack, WARMUP_MS)
    ts = r.timeseries
    piv = ts.pivot_table(index="bin_start_ps", columns="flow", values="bytes", aggfunc="sum").fillna(0.0)
    piv = piv.reindex(columns=sorted(r.flows["flow_id"]), fill_value=0.0)
    t_ms = piv.index.to_numpy() / 1e9
    sel = (t_ms >= WARMUP_MS) & (t_ms < END_MS)
    gbps = piv.to_numpy()[sel].sum(axis=0) * 8 / ((END_MS - WARMUP_MS) * 1e-3) / 1e9
    q = r.queue_series.groupby("time_ps")["total_depth_bytes"].sum()
    q = q[q.index >= WARMUP_MS * 1e9] / 1500

    def window(col: str) -> int:
        return int(r.flows[col].sum() - w.flows[col].sum())

    return {"goodput_gbps": " ".join(f"{x:.3f}" for x in gbps), "q_mean": float(q.mean()),
            "q_p99": float(q.quantile(0.99)), "drops": window("drops"), "retx": window("retx"),
            "drops_0_to_end": int(r.flows["drops"].sum()), "retx_0_to_end": int(r.flows["retx"].sum())}


def main() -> None:
    ns3 = {}
    f = HERE / "bbr_dumbbell_ns3.csv"
    if f.exists():
        for row in csv.DictReader(f.open()):
            ns3[(row["case"], row["sack"])] = row
    rows = []
    for name, (ccs, buf) in CASES.items():
        # the send quantum is BBR's alone
        for quantum in ("tso", "segment") if "bbr" in ccs else ("segment",):
            for sack in (0, 1):
                r = {"case": name, "ccs": ccs, "buffer_pkts": buf, "quantum": quantum, "sack": sack, **run(ccs.split(","), buf, quantum, bool(sack))}
                rows.append(r)
                print(f"{name:18s} dcnsim {quantum:7s} sack={sack}: goodput {r['goodput_gbps']:>27s} Gb/s, queue mean {r['q_mean']:6.1f} p99 {r['q_p99']:5.0f} pkts, drops {r['drops']}, retx {r['retx']}")
        for sack in ("0", "1"):
            n = ns3.get((name, sack))
            if n:
                print(f"{name:18s} ns-3           sack={sack}: goodput {n['goodput_gbps']:>27s} Gb/s, queue mean {float(n['q_mean']):6.1f} p99 {float(n['q_p99']):5.0f} pkts, drops {n['drops']}, retx {n['retx']}")
    out = HERE / "bbr_dumbbell_dcnsim.csv"
    with out.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
    print(f"wrote {out}")
    plot(rows, ns3)


def plot(rows: list[dict], ns3: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    names = list(CASES)

    def ours(quantum: str, sack: int):
        # a case without BBR ran once, under "segment"
        return lambda c: next((r for r in rows if r["case"] == c and r["sack"] == sack and r["quantum"] in (quantum, "segment")
                               and (r["quantum"] == quantum or "bbr" not in r["ccs"])), None)

    setups = [("dcnsim tso, SACK", ours("tso", 1)),
              ("dcnsim segment, no SACK", ours("segment", 0)),
              ("dcnsim segment, SACK", ours("segment", 1)),
              ("ns-3 no SACK", lambda c: ns3.get((c, "0"))),
              ("ns-3 SACK", lambda c: ns3.get((c, "1")))]
    fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(16, 4.2))
    x = np.arange(len(names))
    w = 0.8 / len(setups)
    for k, (label, get) in enumerate(setups):
        share, queue, retx = [], [], []
        for c in names:
            r = get(c)
            g = [float(v) for v in r["goodput_gbps"].split()] if r else [np.nan]
            share.append(g[0] / sum(g) if r else np.nan)
            queue.append(float(r["q_mean"]) if r else np.nan)
            retx.append(float(r["retx"]) if r else np.nan)
        off = (k - (len(setups) - 1) / 2) * w
        a1.bar(x + off, share, w, label=label)
        a2.bar(x + off, queue, w, label=label)
        a3.bar(x + off, retx, w, label=label)
    for a, t in ((a1, "first flow's share of goodput"), (a2, "mean bottleneck queue, packets"), (a3, "retransmissions, 100-200 ms")):
        a.set_xticks(x, names, rotation=20, fontsize=8)
        a.set_title(t, fontsize=10)
    a2.set_yscale("symlog", linthresh=10)
    a3.set_yscale("symlog", linthresh=10)
    a1.legend(fontsize=7)
    fig.suptitle("BBR v1, CUBIC and NewReno on a 10 Gbit/s, 104 us dumbbell, 100-200 ms: dcnsim vs ns-3 3.44, SACK on and off", fontsize=10)
    fig.tight_layout()
    fig.savefig(HERE / "bbr_dumbbell.png", dpi=110)
    print(f"wrote {HERE / 'bbr_dumbbell.png'}")


if __name__ == "__main__":
    main()
