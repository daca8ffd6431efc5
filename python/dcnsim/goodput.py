"""What long-flow studies are about: goodput per workload tag, its shares, and fairness
(Jain's index) over the whole run and per phase where flows come and go, from a run's
goodput time series (``[metrics] throughput_bin``: bytes delivered per flow and bin).

Jain's index of rates x_1..x_n is (sum x)^2 / (n sum x^2) (R. Jain, D. Chiu, W. Hawe, "A
Quantitative Measure of Fairness and Discrimination for Resource Allocation in Shared
Computer Systems", DEC-TR-301, 1984): 1 when all are equal, 1/n when one flow has it all.
A phase is an interval between two consecutive flow starts or ends; its index is taken
over the flows active through the whole phase, in its second half (after the congestion
control has reacted to the change that began it), as seed 004's fairness slides read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Sequence

import numpy as np
import pandas as pd

#: Above this many flows a per-flow fairness index says little (short flows come and go
#: within a bin): only the per-tag goodput is given.
MAX_FAIRNESS_FLOWS = 64
#: Above this many phases they are not listed one by one.
MAX_PHASES = 12


def jain(x: Sequence[float]) -> float:
    """Jain's fairness index of ``x`` (NaN for no values or all zero)."""
    a = np.asarray(x, dtype=np.float64)
    s2 = float((a * a).sum())
    return float(a.sum() ** 2 / (len(a) * s2)) if len(a) and s2 > 0 else float("nan")


def has_series(result) -> bool:
    """Whether the run recorded a goodput time series with data."""
    return bool(int(result.summary.get("throughput_bin_ps") or 0)) and len(result.timeseries) > 0


def run_length_ps(result) -> int:
    return int(result.summary.get("sim_time_ps") or 0)


def tag_goodput_bps(result) -> Dict[str, float]:
    """Goodput of each tag's flows together over the run, bit/s (tags sorted)."""
    ts = result.timeseries
    length = run_length_ps(result)
    if not len(ts) or length <= 0:
        return {}
    by = ts.groupby(ts["tag"].astype(str))["bytes"].sum()
    return {str(t): float(b) * 8 / (length * 1e-12) for t, b in sorted(by.items())}


def flows_per_tag(result) -> Dict[str, int]:
    fl = result.flows
    if "tag" not in fl:
        return {"": len(fl)}
    return {str(t): int(n) for t, n in fl["tag"].astype(str).value_counts().sort_index().items()}


@dataclass(frozen=True)
class Phase:
    """A stretch of the run with the same active flows."""

    start_ps: int
    end_ps: int
    flows: int
    jain: float
    goodput_bps: float  # of the active flows together, over the measured half


def phases(result, max_flows: int = MAX_FAIRNESS_FLOWS) -> List[Phase]:
    """The run's phases with at least two active flows and a full goodput bin in their
    second half (none when the run has more than ``max_flows`` flows)."""
    fl = result.flows
    bin_ps = int(result.summary.get("throughput_bin_ps") or 0)
    ts = result.timeseries
    length = run_length_ps(result)
    if not bin_ps or not len(ts) or len(fl) > max_flows or length <= 0:
        return []
    start = np.asarray(fl["start_ps"], dtype=np.int64)
    end = np.asarray(pd.to_numeric(fl["end_ps"], errors="coerce").fillna(length), dtype=np.float64).astype(np.int64)
    ids = np.asarray(fl["flow_id"], dtype=np.int64)
    edges = sorted({0, length, *start.tolist(), *end.tolist()})
    edges = [e for e in edges if 0 <= e <= length]
    per_flow = {int(f): g for f, g in ts.groupby("flow", sort=True)}
    out: List[Phase] = []
    for t0, t1 in zip(edges[:-1], edges[1:]):
        active = ids[(start <= t0) & (end >= t1)]
        lo = t0 + (t1 - t0) // 2
        first = -(-lo // bin_ps) * bin_ps  # the first bin starting in the second half
        full = (t1 - first) // bin_ps  # whole bins inside [first, t1)
        if len(active) < 2 or full < 1:
            continue
        hi = first + full * bin_ps
        rates = []
        for f in active.tolist():
            g = per_flow.get(int(f))
            b = 0 if g is None else int(g["bytes"][(g["bin_start_ps"] >= first) & (g["bin_start_ps"] < hi)].sum())
            rates.append(b * 8 / ((hi - first) * 1e-12))
        out.append(Phase(int(t0), int(t1), len(active), jain(rates), float(sum(rates))))
    return out
