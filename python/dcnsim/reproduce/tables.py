"""The table shapes the reproduction docs use, built from results files."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional, Sequence, Tuple

from .render import Change, Results, change, fmt_change, fmt_mean, judge, judge_direction, md_table


@dataclass(frozen=True)
class Row:
    """One metric of a table: its label, the results key, decimals, and how a claim on it
    is judged (``source``: the source's relative change; ``sign``: the direction a claim
    without a number states)."""

    label: str
    key: str
    digits: int = 1
    source: Optional[float] = None
    sign: Optional[int] = None
    claim: str = ""


def cell(res: Results, case: str, base: str, other: str, row: Row) -> Tuple[str, Change]:
    a = res.values(case, base, row.key)
    b = res.values(case, other, row.key)
    c = change(a, b)
    return f"{fmt_mean(c.base, row.digits)} -> {fmt_mean(c.other, row.digits)}, {fmt_change(c)}", c


def verdict(row: Row, c: Change) -> str:
    if row.source is not None:
        return judge(c, row.source)
    if row.sign is not None:
        return judge_direction(c, row.sign)
    return ""


def claims_table(columns: Sequence[Tuple[str, Results, str]], base: str, other: str, rows: Sequence[Row]) -> str:
    """Claims against a source: one row per claim, for each (column title, results, case)
    the measured change and the verdict."""
    header = ["claim", "source"]
    for title, _, _ in columns:
        header += [title, "verdict"]
    out = []
    for row in rows:
        src = f"{100 * row.source:+.0f}%" if row.source is not None else ("lower" if row.sign == -1 else "higher" if row.sign == 1 else "")
        cells = [row.claim or row.label, src]
        for _, res, case in columns:
            text, c = cell(res, case, base, other, row)
            cells += [text, f"**{verdict(row, c)}**" if verdict(row, c) else ""]
        out.append(cells)
    return md_table(header, out)


def detail_table(res: Results, case: str, base: str, others: Sequence[str], rows: Sequence[Row]) -> str:
    """Every row's mean ± 95% CI per variant, and each other variant's change against the
    base (``*``: the paired differences' CI excludes 0)."""
    header = ["metric", base] + [h for o in others for h in (o, f"{o} vs {base}")]
    out = []
    for row in rows:
        a = res.values(case, base, row.key)
        if all(math.isnan(x) for x in a):
            continue
        cells = [row.label, fmt_mean(change(a, a).base, row.digits)]
        for o in others:
            c = change(a, res.values(case, o, row.key))
            cells += [fmt_mean(c.other, row.digits), fmt_change(c)]
        out.append(cells)
    return md_table(header, out)


def pairs_table(res: Results, case: str, pairs: Sequence[Tuple[str, str, str]], rows: Sequence[Row], case_of: Optional[Callable[[str], str]] = None) -> str:
    """One line per (label, base, other) pair, one column per row: ``base -> other, change``."""
    header = ["", *[r.label for r in rows]]
    out = []
    for label, base, other in pairs:
        out.append([label] + [cell(res, case, base, other, r)[0] for r in rows])
    return md_table(header, out)


def cases_table(res: Results, pairs: Sequence[Tuple[str, Tuple[str, str], Tuple[str, str]]], rows: Sequence[Row]) -> str:
    """Like :func:`pairs_table` where the two sides are (case, variant) of different cases."""
    header = ["", *[r.label for r in rows]]
    out = []
    for label, (ca, va), (cb, vb) in pairs:
        cells = [label]
        for r in rows:
            c = change(res.values(ca, va, r.key), res.values(cb, vb, r.key))
            cells.append(f"{fmt_mean(c.base, r.digits)} -> {fmt_mean(c.other, r.digits)}, {fmt_change(c)}")
        out.append(cells)
    return md_table(header, out)


def mean_of(res: Results, case: str, variant: str, key: str) -> float:
    xs = [x for x in res.values(case, variant, key) if not math.isnan(x)]
    return sum(xs) / len(xs) if xs else math.nan
