"""Flow-completion-time tables.

:func:`fct_table` groups flows by size into bins and reports, for each bin, the number
of finished flows, the number of unfinished ones, mean / median / 99th / 99.9th
percentile FCT in microseconds and mean slowdown (FCT over the ideal FCT of the flow
alone on an idle fabric). Sizes use SI units (1 KB = 1000 bytes).

Bins are half-open: with edges ``[100_000, 1_000_000, 10_000_000]`` the bins are
``size < 100KB``, ``100KB <= size < 1MB``, ``1MB <= size < 10MB`` and ``size >= 10MB``,
labelled ``"<100KB"``, ``"100KB-1MB"``, ``"1MB-10MB"`` and ``">10MB"``.
Percentiles use linear interpolation between order statistics (numpy's default).
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence

import numpy as np
import pandas as pd

#: Default size-bin edges in bytes: the bins of the IEEE P802.1Qcz CI study (seed 000).
DEFAULT_FCT_BINS = (100_000, 1_000_000, 10_000_000)

#: Columns of the table returned by :func:`fct_table`, in order.
FCT_TABLE_COLUMNS = (
    "bin",
    "count",
    "unfinished",
    "mean_fct_us",
    "p50_fct_us",
    "p99_fct_us",
    "p999_fct_us",
    "mean_slowdown",
)

_SI_UNITS = (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("KB", 10**3))


def format_size(nbytes: float) -> str:
    """``1500000 -> "1.5MB"``, ``100000 -> "100KB"``, ``512 -> "512B"`` (SI units)."""
    n = float(nbytes)
    for unit, scale in _SI_UNITS:
        if abs(n) >= scale:
            return f"{n / scale:g}{unit}"
    return f"{n:g}B"


def bin_labels(edges: Sequence[int]) -> List[str]:
    """Labels of the ``len(edges) + 1`` bins delimited by ``edges``."""
    edges = list(edges)
    if not edges:
        return ["all sizes"]
    labels = [f"<{format_size(edges[0])}"]
    for lo, hi in zip(edges[:-1], edges[1:]):
        labels.append(f"{format_size(lo)}-{format_size(hi)}")
    labels.append(f">{format_size(edges[-1])}")
    return labels


def _check_edges(bins: Optional[Sequence[Any]]) -> List[int]:
    if bins is None:
        return list(DEFAULT_FCT_BINS)
    edges = [int(b) for b in bins]
    if any(b <= 0 for b in edges) or any(a >= b for a, b in zip(edges[:-1], edges[1:])):
        raise ValueError(f"FCT bin edges must be positive and strictly increasing, got {list(bins)}")
    return edges


def _stats(fct_us: np.ndarray, slowdown: np.ndarray) -> List[float]:
    if fct_us.size == 0:
        return [float("nan")] * 5
    p50, p99, p999 = np.quantile(fct_us, [0.5, 0.99, 0.999])
    sd = slowdown[~np.isnan(slowdown)]
    return [
        float(fct_us.mean()),
        float(p50),
        float(p99),
        float(p999),
        float(sd.mean()) if sd.size else float("nan"),
    ]


def fct_table(flows: Any, bins: Optional[Sequence[int]] = None) -> pd.DataFrame:
    """One row per flow-size bin, plus a final ``"all"`` row.

    ``flows`` is the flows DataFrame of a run (``Result.flows``) or a ``Result``; in the
    latter case the default bins are the run's ``summary["fct_bins"]``. ``bins`` are the
    bin edges in bytes (default :data:`DEFAULT_FCT_BINS`). Statistics are over finished
    flows; ``unfinished`` counts the flows of the bin that had not completed when the run
    ended.
    """
    if hasattr(flows, "flows") and hasattr(flows, "summary"):  # a Result
        if bins is None:
            bins = flows.summary.get("fct_bins")
        flows = flows.flows
    edges = _check_edges(bins)
    labels = bin_labels(edges)

    sizes = np.asarray(flows["size_bytes"], dtype=np.float64)
    fct = flows["fct_ps"]
    if "finished" in flows:
        finished = np.asarray(flows["finished"], dtype=bool)
    else:
        finished = ~np.asarray(pd.isna(fct), dtype=bool)
    fct_us = pd.to_numeric(fct, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan) / 1e6
    if "slowdown" in flows:
        slowdown = np.asarray(flows["slowdown"], dtype=np.float64)
    else:
        slowdown = np.full(len(sizes), np.nan)
    slowdown = np.where(finished, slowdown, np.nan)

    # bin index: 0 for size < edges[0], k for edges[k-1] <= size < edges[k], ...
    idx = np.searchsorted(np.asarray(edges, dtype=np.float64), sizes, side="right")

    rows = []
    for b, label in enumerate(labels):
        in_bin = idx == b if edges else np.ones(len(sizes), dtype=bool)
        done = in_bin & finished
        rows.append(
            [label, int(done.sum()), int((in_bin & ~finished).sum())]
            + _stats(fct_us[done], slowdown[done])
        )
    if edges:
        rows.append(
            ["all", int(finished.sum()), int((~finished).sum())]
            + _stats(fct_us[finished], slowdown[finished])
        )
    else:
        rows[0][0] = "all"
    table = pd.DataFrame(rows, columns=list(FCT_TABLE_COLUMNS))
    table["count"] = table["count"].astype(np.int64)
    table["unfinished"] = table["unfinished"].astype(np.int64)
    return table
