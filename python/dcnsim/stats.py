"""The statistics dcnsim's comparisons and sweeps report: the mean and 95% confidence
interval over seeds (Student's t), whether an interval excludes zero, relative changes, and
the display form of table cells."""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence, Tuple

import numpy as np


#: Two-sided 95% quantiles of Student's t by degrees of freedom (1..30); above, 1.96.
_T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def ci95(values: Sequence[float]) -> Tuple[float, float]:
    """Mean and half-width of the 95% confidence interval of the mean (Student's t; NaN
    half-width with fewer than two values). NaNs are left out."""
    xs = [float(x) for x in values if x is not None and not math.isnan(float(x))]
    if not xs:
        return math.nan, math.nan
    n = len(xs)
    mean = sum(xs) / n
    if n < 2:
        return mean, math.nan
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    t = _T95[n - 2] if n - 1 <= len(_T95) else 1.96
    return mean, t * sd / math.sqrt(n)


def excludes_zero(mean: float, half: float) -> Optional[bool]:
    """Whether the interval mean +- half excludes 0; None when it is undefined (NaN, as
    :func:`ci95` gives for fewer than two values)."""
    if math.isnan(mean) or math.isnan(half):
        return None
    return abs(mean) > half


def relative_change(base: Any, value: Any) -> Optional[float]:
    """``(value - base) / base`` as a fraction; None when undefined (a missing value, a
    non-number, or a zero base with a non-zero value); 0.0 when both are zero."""
    b, v = number(base), number(value)
    if b is None or v is None:
        return None
    if b == 0:
        return 0.0 if v == 0 else None
    return (v - b) / abs(b)


def format_change(change: Optional[float], base: Any = None, value: Any = None) -> str:
    """``-0.382 -> "-38.2%"`` (no decimals from 1000% on: ``"+1366%"``); ``"n/a"`` where the change is undefined but both values
    are numbers (zero base); ``""`` for non-numeric rows."""
    if change is None:
        return "n/a" if number(base) is not None and number(value) is not None else ""
    pct = change * 100
    return f"{pct:+.0f}%" if abs(pct) >= 1000 else f"{pct:+.1f}%"


def paired_mark(text: str, excludes: Optional[bool]) -> str:
    """A change's text with the verdict of the 95% CI of its paired (same seed)
    differences: " *" where it excludes 0, " (in noise)" where it does not; the text alone
    where there is no interval (one seed) or no change."""
    if not text or excludes is None:
        return text
    return text + (" *" if excludes else " (in noise)")


def number(x: Any) -> Optional[float]:
    """``x`` as a float; None for a missing value, NaN, a string or a boolean."""
    if x is None or isinstance(x, (str, bool, np.bool_)):
        return None
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def format_value(value: Any, fmt: str) -> str:
    """Display form of one table cell (``fmt``: int, f1, f2, f3 or str)."""
    if fmt == "str":
        return "" if value is None else str(value)
    x = number(value)
    if x is None:
        return "-"
    if fmt == "int":
        return f"{int(round(x)):,}"
    return f"{x:,.{int(fmt[1:])}f}"
