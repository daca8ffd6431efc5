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

from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

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


# --------------------------------------------------------------------------- streamed

#: Order statistics are picked from at most this many values held at once; a narrower
#: value range is searched first where more fall in one (``FctAccumulator``).
_SELECT_AT_MOST = 1 << 16
#: Sub-ranges of one narrowing pass.
_NARROW = 4096
#: Keys of the first pass's log-scale histogram: 16 per octave of the FCT in ps.
_KEYS = 64 * 16 + 32


def _log_keys(fct_ps: np.ndarray) -> np.ndarray:
    """A key per FCT, nondecreasing in it: 0 for 0, else 16 per octave (frexp is exact)."""
    m, e = np.frexp(fct_ps.astype(np.float64))
    return np.where(fct_ps > 0, e.astype(np.int64) * 16 + (m * 32).astype(np.int64), 0)


def _key_range(k: int) -> Tuple[int, int]:
    """The FCTs in ps (inclusive) whose key is ``k``."""
    if k == 0:
        return 0, 0
    e, j = divmod(k, 16)  # the key is e' * 16 + floor(m * 32), m in [1/2, 1): e = e' + 1
    e, j = e - 1, j + 16
    return (j * 2**e + 31) // 32, ((j + 1) * 2**e + 31) // 32 - 1


def _order_stat_positions(n: int, q: float) -> Tuple[int, int, float]:
    """numpy's linear method: the order statistics (0-based) its ``quantile`` reads for
    ``q`` of ``n`` values, and the weight of the second."""
    v = (np.float64(n) - 1) * np.float64(q)
    lo = int(np.floor(v))
    if v >= n - 1:
        return n - 1, n - 1, float(v - (n - 1))
    return lo, lo + 1, float(v - np.float64(lo))


def _lerp(a: float, b: float, t: float) -> float:
    """numpy's ``_lerp``, the same rounding."""
    d = np.float64(b) - np.float64(a)
    if t >= 0.5:
        return float(np.float64(b) - d * (1 - np.float64(t)))
    return float(np.float64(a) + d * np.float64(t))


class FctAccumulator:
    """:func:`fct_table` of a flows table read in parts, holding neither it nor its FCTs.

    ``add`` takes the parts as they come (``dcnsim run -o`` writes flows.parquet as rows
    become final); ``table`` then finds each percentile's order statistics exactly, reading
    the parts again (``batches``) as often as it must narrow a value range down to
    ``_SELECT_AT_MOST`` values: from the counts per 1/16 octave gathered by ``add``, then
    4096 sub-ranges a pass. Counts and percentiles equal :func:`fct_table`'s; the means are
    exact sums divided once, where numpy sums pairwise (they may differ in the last digit).
    """

    def __init__(self, bins: Optional[Sequence[int]] = None) -> None:
        self.edges = _check_edges(bins)
        self.labels = bin_labels(self.edges)
        # groups: one per bin, then "all" (where there are edges)
        ng = len(self.labels) + (1 if self.edges else 0)
        self.count = [0] * ng
        self.unfinished = [0] * ng
        self.sum_ps = [0] * ng
        self.sd_sum = [0.0] * ng
        self.sd_n = [0] * ng
        self.hist = np.zeros((ng, _KEYS), dtype=np.int64)

    def _parts(self, flows: Any) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        sizes = np.asarray(flows["size_bytes"], dtype=np.float64)
        finished = np.asarray(flows["finished"], dtype=bool)
        fct = pd.array(flows["fct_ps"], dtype="Int64").to_numpy(dtype=np.int64, na_value=0)
        idx = np.searchsorted(np.asarray(self.edges, dtype=np.float64), sizes, side="right")
        return idx, finished, fct

    def _groups(self, idx: np.ndarray) -> List[np.ndarray]:
        if not self.edges:
            return [np.ones(len(idx), dtype=bool)]
        return [idx == b for b in range(len(self.labels))] + [np.ones(len(idx), dtype=bool)]

    def add(self, flows: Any) -> None:
        """Count a part of the flows table (a DataFrame or an Arrow table)."""
        idx, finished, fct = self._parts(flows)
        sd = np.asarray(flows["slowdown"], dtype=np.float64)
        keys = _log_keys(fct)
        for g, in_g in enumerate(self._groups(idx)):
            done = in_g & finished
            self.count[g] += int(done.sum())
            self.unfinished[g] += int((in_g & ~finished).sum())
            self.sum_ps[g] += int(fct[done].sum(dtype=np.int64))
            s = sd[done]
            s = s[~np.isnan(s)]
            self.sd_sum[g] += float(s.sum())
            self.sd_n[g] += int(s.size)
            self.hist[g] += np.bincount(keys[done], minlength=_KEYS)

    def _select(self, wanted: Dict[Tuple[int, int], None], batches: Callable[[], Iterable[Any]]) -> Dict[Tuple[int, int], int]:
        """The FCTs in ps of rank ``r`` among group ``g``'s finished flows, for each (g, r)."""
        # item: [group, rank within the range, lo, hi (inclusive), values in the range]
        items = {}
        for g, r in wanted:
            cum = np.cumsum(self.hist[g])
            k = int(np.searchsorted(cum, r, side="right"))
            lo, hi = _key_range(k)
            items[(g, r)] = [g, r - (int(cum[k - 1]) if k else 0), lo, hi, int(self.hist[g][k])]
        found: Dict[Tuple[int, int], int] = {}
        while items:
            for key in [k for k, it in items.items() if it[2] == it[3]]:
                found[key] = items.pop(key)[2]  # one value, however many flows have it
            picks = {key: [] for key, it in items.items() if it[4] <= _SELECT_AT_MOST}
            counts = {key: np.zeros(_NARROW, dtype=np.int64) for key in items if key not in picks}
            for part in batches():
                idx, finished, fct = self._parts(part)
                groups = self._groups(idx)
                for key, (g, _, lo, hi, _) in items.items():
                    x = fct[groups[g] & finished & (fct >= lo) & (fct <= hi)]
                    if key in picks:
                        picks[key].append(x)
                    else:
                        w = -(-(hi - lo + 1) // _NARROW)
                        counts[key] += np.bincount((x - lo) // w, minlength=_NARROW)
            for key, xs in picks.items():
                g, r = items.pop(key)[:2]
                found[key] = int(np.sort(np.concatenate(xs) if xs else np.empty(0, np.int64))[r])
            for key, c in counts.items():
                g, r, lo, hi, _ = items[key]
                w = -(-(hi - lo + 1) // _NARROW)
                cum = np.cumsum(c)
                s = int(np.searchsorted(cum, r, side="right"))
                items[key] = [g, r - (int(cum[s - 1]) if s else 0), lo + s * w, min(hi, lo + (s + 1) * w - 1), int(c[s])]
        return found

    def table(self, batches: Callable[[], Iterable[Any]]) -> pd.DataFrame:
        """The FCT table; ``batches()`` yields the parts again, in any order."""
        qs = (0.5, 0.99, 0.999)
        wanted: Dict[Tuple[int, int], None] = {}
        for g, n in enumerate(self.count):
            if n:
                for q in qs:
                    lo, hi, _ = _order_stat_positions(n, q)
                    wanted[(g, lo)] = None
                    wanted[(g, hi)] = None
        stat = self._select(wanted, batches) if wanted else {}
        rows = []
        labels = self.labels + (["all"] if self.edges else [])
        for g, label in enumerate(labels):
            n = self.count[g]
            if n:
                pct = []
                for q in qs:
                    lo, hi, t = _order_stat_positions(n, q)
                    pct.append(_lerp(stat[(g, lo)] / 1e6, stat[(g, hi)] / 1e6, t))
                mean_sd = self.sd_sum[g] / self.sd_n[g] if self.sd_n[g] else float("nan")
                vals = [self.sum_ps[g] / n / 1e6] + pct + [mean_sd]
            else:
                vals = [float("nan")] * 5
            rows.append([label, n, self.unfinished[g]] + vals)
        if not self.edges:
            rows[0][0] = "all"
        table = pd.DataFrame(rows, columns=list(FCT_TABLE_COLUMNS))
        table["count"] = table["count"].astype(np.int64)
        table["unfinished"] = table["unfinished"].astype(np.int64)
        return table
