"""Compare the ``[[variant]]`` tables of one scenario side by side.

:func:`compare` runs every variant of a scenario (or the ones named) as an independent
job in a local process pool and returns a :class:`Comparison`: the per-variant
:class:`~dcnsim.api.Result` objects, a side-by-side table of FCT per size bin and network
metrics with the relative change of every variant against the first (the *base*), and
:meth:`Comparison.save`, which writes each variant's outputs, the table (CSV and
Markdown) and three plots.

Each variant is a separate simulation with its own seeded state, so the results do not
depend on the number of jobs or on the order in which the jobs finish: ``jobs=1`` (in
this process) and ``jobs=8`` give identical tables.

Which ports are "switch egress ports" (for the queue-depth rows): the ports table's
``is_host`` column when the core provides it; otherwise every node with more than one
port is a switch (a host always has exactly one NIC port).
"""

from __future__ import annotations

import math
import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import pandas as pd

from . import _core
from .api import Result, ScenarioLike, ScenarioSource, check_seed, resolve_scenario, run_source
from .driver import progress_mode
from .sources import MAX_RUNS, DcnsimWarning, identical_warnings, inactive_warnings, refuse_repeated_variants
from .sources import seed_list as _seed_list
from .io import PathLike, Writer, png_writer, text_writer, write_files_atomic
from .driver import check_threads
from .jobs import Bar, run_all
from .plots import (  # noqa: F401  (re-exported: the comparison's plots, where they were)
    _has_samples,
    sampled_depth_histogram,
    _busiest_port_busy,
    _busy_depth,
    _plot_flows,
    _plot_tag,
    fct_plot_flows,
    plot_fct_by_bin,
    plot_slowdown_cdf,
    SIZE_GROUPS,
    _size_edges,
    _slowdown_quantiles,
    plot_slowdown_by_size,
    plot_queue_depth,
    THROUGHPUT_FLOWS,
    goodput_series,
    plot_queue_depth_time,
    _sample_text,
    plot_throughput,
)
from .stats import ci95, excludes_zero, format_change, format_value, number, paired_mark, relative_change
from .tables import fct_table

#: Top-level files written by :meth:`Comparison.save` (besides one folder per variant).
COMPARISON_FILES = ("comparison.csv", "comparison.md", "fct_by_bin.png", "slowdown_cdf.png", "slowdown_by_size.png", "queue_depth.png")

#: Top-level files :meth:`Comparison.save` writes only when the runs recorded what they show.
COMPARISON_OPTIONAL_FILES = ("throughput.png", "queue_depth_time.png")

#: Group label of the network-metric rows of :meth:`Comparison.table`.
NETWORK = "network"
GOODPUT = "goodput"

LOWER, HIGHER = "lower", "higher"

# FCT rows per size bin: (metric label, fct_table column, format, which direction is better).
_FCT_ROWS = (
    ("flows finished", "count", "int", None),
    # only where some variant left flows of the bin unfinished: the means below are over
    # finished flows, so a variant that finishes fewer is judged on its survivors
    ("flows unfinished", "unfinished", "int", LOWER),
    ("mean FCT (us)", "mean_fct_us", "f1", LOWER),
    ("p50 FCT (us)", "p50_fct_us", "f1", LOWER),
    ("p99 FCT (us)", "p99_fct_us", "f1", LOWER),
    ("mean slowdown", "mean_slowdown", "f2", LOWER),
)


# --------------------------------------------------------------------------- helpers


def switch_port_mask(ports: pd.DataFrame) -> np.ndarray:
    """Boolean mask of the rows of a ports table that belong to switch egress ports.

    Uses the ``is_host`` column when present; otherwise a node is a switch iff it has
    more than one port (every host has exactly one NIC port; the scenario validator
    enforces it for custom topologies).
    """
    if len(ports) == 0:
        return np.zeros(0, dtype=bool)
    if "is_host" in ports:
        return ~np.asarray(ports["is_host"], dtype=bool)
    nports = ports.groupby("node")["port"].nunique()
    return np.asarray(ports["node"].map(nports) > 1, dtype=bool)


def slugify(name: str) -> str:
    """A folder name for a variant: ``"PFC+DCQCN" -> "pfc-dcqcn"``."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.").lower()
    return slug or "variant"


def _slugs(names: Sequence[str]) -> Dict[str, str]:
    taken = {f.lower() for f in COMPARISON_FILES + COMPARISON_OPTIONAL_FILES}
    out: Dict[str, str] = {}
    for name in names:
        base = slugify(name)
        slug, k = base, 2
        while slug in taken:
            slug = f"{base}-{k}"
            k += 1
        taken.add(slug)
        out[name] = slug
    return out


# --------------------------------------------------------------------------- Comparison


@dataclass
class Row:
    """One row of the comparison table."""

    group: str  # a size-bin label, "all" or "network"
    metric: str
    values: Dict[str, Any]  # variant -> value
    fmt: str = "f1"  # int, f1, f2, f3, str
    better: Optional[str] = None  # "lower", "higher" or None (neither)
    #: With several seeds: variant -> half-width of the 95% CI of the mean over seeds, and
    #: variant -> (mean, 95% CI half-width) of the per-seed difference to the base (paired
    #: by seed: the same seed draws the same workload in every variant).
    ci: Dict[str, float] = field(default_factory=dict)
    paired: Dict[str, Tuple[float, float]] = field(default_factory=dict)

    def excludes_zero(self, variant: str) -> Optional[bool]:
        """With several seeds: whether the 95% CI of the difference to the base excludes 0."""

        d = self.paired.get(variant)
        return None if d is None else excludes_zero(*d)

    def change(self, base: str, variant: str) -> Optional[float]:
        """The relative change of the values. A base that is displayed as zero (a row with
        N decimals whose base rounds to 0) is a zero base: "0.0" against "0.0" is no change,
        not a -25% between two invisible remainders, and against a visible value it is
        undefined."""
        if self.fmt == "str":
            return None
        b, v = self.values.get(base), self.values.get(variant)
        if self.fmt in ("f1", "f2", "f3") and number(b) is not None and number(v) is not None:
            digits = int(self.fmt[1])
            if round(float(b), digits) == 0:
                return 0.0 if round(float(v), digits) == 0 else None
        return relative_change(b, v)

    def change_text(self, base: str, variant: str) -> str:
        if self.fmt == "str":
            return ""
        b, v = self.values.get(base), self.values.get(variant)
        return paired_mark(format_change(self.change(base, variant), b, v), self.excludes_zero(variant))

    def value_text(self, variant: str) -> str:
        """The value, with its 95% CI half-width when there are several seeds."""
        text = format_value(self.values.get(variant), self.fmt)
        half = self.ci.get(variant)
        if half is not None and not math.isnan(half) and self.fmt != "str":
            text += f" ± {format_value(half, self.fmt if self.fmt != 'int' else 'f1')}"
        return text

    def verdict(self, base: str, variant: str) -> Optional[str]:
        """"better", "worse" or None (no change, no preferred direction, undefined, or
        with several seeds a difference within the noise)."""
        c = self.change(base, variant)
        if c is None or self.better is None or abs(c) < 5e-4 or self.excludes_zero(variant) is False:
            return None
        return "better" if (c < 0) == (self.better == LOWER) else "worse"


@dataclass
class Comparison:
    """The results of running several variants of one scenario.

    Attributes:
        results: ``{variant name: Result}`` in the order the variants were given (file
            order by default); the first one is the base of the relative changes.
        scenario: the scenario's name.
        origin: where the scenario came from (a path, ``shipped:NAME``, ``<string>``).
        seed: the seed override given to :func:`compare`, or None (scenario seeds).
        jobs: the number of worker processes used (1: in this process).
    """

    results: Dict[str, Result]
    scenario: str = "?"
    origin: str = "?"
    seed: Optional[int] = None
    jobs: int = 1
    scenario_sha256: str = ""
    #: With several seeds: {variant: [Result per seed]} (``results`` holds the first seed's).
    replicas: Dict[str, List[Result]] = field(default_factory=dict)
    #: What a reader must know before trusting the table (e.g. two variants that resolve to
    #: the same scenario); also raised as :class:`dcnsim.DcnsimWarning`.
    warnings: List[str] = field(default_factory=list)
    _rows_cache: Dict[Any, List[Row]] = field(default_factory=dict, repr=False, compare=False)

    @property
    def variants(self) -> List[str]:
        return list(self.results)

    @property
    def base(self) -> str:
        """The first variant: relative changes are against it."""
        return self.variants[0]

    @property
    def seeds(self) -> Dict[str, Any]:
        """The seed each variant ran with."""
        return {n: r.summary.get("seed") for n, r in self.results.items()}

    @property
    def wall_times(self) -> Dict[str, float]:
        """Wall-clock seconds of each variant's simulation."""
        return {n: float(r.summary.get("wall_time_s", float("nan"))) for n, r in self.results.items()}

    def runs(self, variant: str) -> List[Result]:
        """Every run of ``variant``: one per seed (its only one without seeds)."""
        return self.replicas.get(variant) or [self.results[variant]]

    def runs_text(self, variant: str) -> str:
        """What a variant's runs did, over every seed it ran: ``"5 seeds: 1,180/1,200 flows
        finished, end: completed x4, max_time x1, 61,234,567 events, wall time 6.2 s in all"``;
        one run's flows, events, end and wall time without seeds."""
        from collections import Counter

        s = [r.summary for r in self.runs(variant)]

        def total(key: str) -> Any:
            vals = [x.get(key) for x in s]
            return sum(vals) if all(isinstance(v, (int, float)) for v in vals) else "?"

        fin, tot, ev, wall = total("flows_finished"), total("flows_total"), total("events"), total("wall_time_s")
        ends = Counter(str(x.get("end_reason", "?")) for x in s)
        end = ", ".join(k if len(s) == 1 else f"{k} x{c}" for k, c in ends.items())
        text = (
            f"{fin:,}/{tot:,} flows finished" if isinstance(fin, int) and isinstance(tot, int) else f"{fin}/{tot} flows finished"
        ) + f", end: {end}, " + (f"{ev:,} events" if isinstance(ev, int) else "? events") + f", wall time {_fmt_seconds(float(wall) if wall != '?' else float('nan'))}"
        return f"{len(s)} seeds: {text} in all" if len(s) > 1 else text

    def fct_bins(self) -> List[int]:
        """Size-bin edges used for every variant: the base variant's ``fct_bins``."""
        bins = self.results[self.base].summary.get("fct_bins")
        return list(bins) if bins else []

    # ------------------------------------------------------------------ rows

    def rows(self, bins: Optional[Sequence[int]] = None) -> List[Row]:
        """The table's rows with their raw values (see :meth:`table`)."""
        key = tuple(bins) if bins is not None else None
        if key not in self._rows_cache:
            if self.n_seeds > 1:
                self._rows_cache[key] = self._seed_rows(bins)
            else:
                self._rows_cache[key] = self._fct_rows(bins) + self._goodput_rows() + self._network_rows()
        return self._rows_cache[key]

    @property
    def n_seeds(self) -> int:
        """Seeds per variant (1 without replicas)."""
        return min((len(v) for v in self.replicas.values()), default=1) if self.replicas else 1

    def _seed_rows(self, bins: Optional[Sequence[int]]) -> List[Row]:
        """Rows over seeds: the mean per variant with its 95% CI, and the paired difference
        to the base with its CI; rows are matched by (group, metric)."""

        n = self.n_seeds
        per_seed = [
            Comparison(results={v: self.replicas[v][i] for v in self.variants}, scenario=self.scenario).rows(bins)
            for i in range(n)
        ]
        order: Dict[Tuple[str, str], Row] = {}
        for rows in per_seed:
            for r in rows:
                order.setdefault((r.group, r.metric), r)
        out: List[Row] = []
        for key, proto in order.items():
            seen = [next((r for r in rows if (r.group, r.metric) == key), None) for rows in per_seed]
            if proto.fmt == "str":
                values = {}
                for v in self.variants:
                    counts: Dict[str, int] = {}
                    for r in seen:
                        if r is not None:
                            x = str(r.values.get(v))
                            counts[x] = counts.get(x, 0) + 1
                    values[v] = ", ".join(f"{x}" if len(counts) == 1 else f"{x} ({c})" for x, c in counts.items())
                out.append(Row(proto.group, proto.metric, values, "str", None))
                continue
            if proto.metric == "flows unfinished":
                # a seed without the row left none of the bin unfinished
                seen = [r if r is not None else Row(proto.group, proto.metric, {v: 0 for v in self.variants}, proto.fmt, proto.better) for r in seen]
            values, ci = {}, {}
            for v in self.variants:
                xs = [number(r.values.get(v)) for r in seen if r is not None]
                mean, half = ci95([x for x in xs if x is not None])
                values[v], ci[v] = (None if math.isnan(mean) else mean), half
            paired = {}
            for v in self.variants[1:]:
                diffs = []
                for r in seen:
                    if r is None:
                        continue
                    b, x = number(r.values.get(self.base)), number(r.values.get(v))
                    if b is not None and x is not None:
                        diffs.append(x - b)
                paired[v] = ci95(diffs)
            out.append(Row(proto.group, proto.metric, values, proto.fmt, proto.better, ci, paired))
        return out

    def tags(self) -> List[str]:
        """The workload tags of the variants' flows, sorted ("" for untagged flows): with
        more than one, the table has rows per tag as well."""
        seen: set = set()
        for r in self.results.values():
            if "tag" in r.flows:
                seen.update(pd.unique(r.flows["tag"].astype(str)))
        return sorted(seen)

    def _fct_rows(self, bins: Optional[Sequence[int]]) -> List[Row]:
        """FCT rows of every flow (groups named by size bin, and "all"), then, where the
        workload has several tags, the same rows of each tag's flows ("incast: all")."""
        edges = list(bins) if bins is not None else self.fct_bins()
        sets: List[Tuple[str, Optional[str]]] = [("", None)]
        tags = self.tags()
        if len(tags) > 1:
            sets += [(f"{t or 'untagged'}: ", t) for t in tags]
        rows: List[Row] = []
        for prefix, tag in sets:
            tables = {n: fct_table(_plot_flows(r, tag), edges or None) for n, r in self.results.items()}
            labels = list(next(iter(tables.values()))["bin"])
            totals = [sum(int(t.iloc[i]["count"]) + int(t.iloc[i]["unfinished"]) for t in tables.values()) for i in range(len(labels))]
            # a tag whose flows all fall in one size bin: its "all" rows say it once
            one_bin = tag is not None and sum(1 for lab, x in zip(labels, totals) if lab != "all" and x) == 1
            for i, label in enumerate(labels):
                # Skip size bins without a single flow (finished or not) in any variant.
                if (label != "all" or tag is not None) and totals[i] == 0:
                    continue
                if one_bin and label != "all":
                    continue
                # a bin whose flows no variant finished (long flows still running at the
                # end) has no FCT to compare: only its counts (the goodput rows measure it)
                finished = sum(int(t.iloc[i]["count"]) for t in tables.values())
                for metric, col, fmt, better in _FCT_ROWS:
                    values = {n: _py(t.iloc[i][col]) for n, t in tables.items()}
                    if col == "unfinished" and not any(values.values()):
                        continue
                    if not finished and col not in ("count", "unfinished"):
                        continue
                    rows.append(Row(prefix + label, metric, values, fmt, better))
        return rows

    def _goodput_rows(self) -> List[Row]:
        """Where every variant recorded a goodput series (long-flow studies): goodput per
        tag over the run, each tag's share and per-flow ratio to the first tag, and Jain's
        index per phase (module :mod:`dcnsim.goodput`)."""
        from . import goodput as gp

        res = self.results
        if not res or not all(gp.has_series(r) for r in res.values()):
            return []
        per_tag = {n: gp.tag_goodput_bps(r) for n, r in res.items()}
        counts = {n: gp.flows_per_tag(r) for n, r in res.items()}
        tags = sorted({t for g in per_tag.values() for t in g})
        top = max((x for g in per_tag.values() for x in g.values()), default=0.0)
        unit, scale = ("Gbit/s", 1e-9) if top >= 1e9 else ("Mbit/s", 1e-6)
        rows: List[Row] = []
        for t in tags:
            name = t or "untagged"
            rows.append(Row(GOODPUT, f"goodput, {name} ({unit})", {n: per_tag[n].get(t, 0.0) * scale for n in res}, "f3", HIGHER))
        if len(tags) > 1:
            for t in tags:
                share = {n: (100.0 * per_tag[n].get(t, 0.0) / total if (total := sum(per_tag[n].values())) > 0 else None) for n in res}
                rows.append(Row(GOODPUT, f"share of goodput, {t or 'untagged'} (%)", share, "f1", None))
            a = tags[0]
            for b in tags[1:]:
                ratio: Dict[str, Any] = {}
                for n in res:
                    ra = per_tag[n].get(a, 0.0) / max(counts[n].get(a, 0), 1)
                    rb = per_tag[n].get(b, 0.0) / max(counts[n].get(b, 0), 1)
                    ratio[n] = ra / rb if rb > 0 else None
                rows.append(Row(GOODPUT, f"per-flow goodput ratio, {a or 'untagged'} / {b or 'untagged'}", ratio, "f3", None))
        ph = {n: gp.phases(r) for n, r in res.items()}
        base = ph[self.base]
        if len(base) == 1:
            rows.append(Row(GOODPUT, f"Jain's index ({base[0].flows} flows, second half of the run)", {n: (p[0].jain if p else None) for n, p in ph.items()}, "f3", HIGHER))
        elif 1 < len(base) <= gp.MAX_PHASES:
            for k, b in enumerate(base):
                label = f"Jain's index, phase {k + 1}: {b.flows} flows, {b.start_ps / 1e9:,.3f}-{b.end_ps / 1e9:,.3f} ms"
                rows.append(Row(GOODPUT, label, {n: (p[k].jain if k < len(p) else None) for n, p in ph.items()}, "f3", HIGHER))
        elif base:
            rows.append(Row(GOODPUT, f"Jain's index, lowest of {len(base)} phases", {n: (min(x.jain for x in p) if p else None) for n, p in ph.items()}, "f3", HIGHER))
        return rows

    def _network_rows(self) -> List[Row]:
        res = self.results
        names = list(res)

        def summ(key: str, default: Any = None) -> Dict[str, Any]:
            return {n: _py(res[n].summary.get(key, default)) for n in names}

        loss = {n: (None if v is None else 100.0 * float(v)) for n, v in summ("loss_rate").items()}
        dropped = summ("data_packets_dropped")
        for n in names:  # older cores: fall back to the ports' drop counters
            if dropped[n] is None and "drops" in res[n].ports:
                dropped[n] = int(res[n].ports["drops"].sum())
        rows = self._mechanism_rows()
        rows += [
            Row(NETWORK, "data packets dropped", dropped, "int", LOWER),
            Row(NETWORK, "loss rate (%)", loss, "f3", LOWER),
            Row(NETWORK, "flows with loss", summ("flows_with_loss"), "int", LOWER),
            Row(NETWORK, "retransmission timeouts", summ("timeouts"), "int", LOWER),
            Row(NETWORK, "ECN marks", summ("ecn_marks"), "int", None),
        ]
        rows += self._queue_rows()
        rows += [
            Row(NETWORK, "unfinished flows", summ("flows_unfinished"), "int", LOWER),
            Row(NETWORK, "end reason", summ("end_reason"), "str", None),
        ]
        return rows

    def _mechanism_rows(self) -> List[Row]:
        """One row per metric the variants' mechanisms declare (summary "metrics"), in the
        order of first appearance; a variant without that mechanism counts 0."""
        names = list(self.results)
        seen: Dict[str, Mapping[str, Any]] = {}
        for r in self.results.values():
            for m in r.summary.get("metrics") or []:
                seen.setdefault(m["key"], m)
        rows: List[Row] = []
        for key, m in seen.items():
            scale = float(m.get("scale", 1.0))
            values: Dict[str, Any] = {}
            for n in names:
                v = _py(self.results[n].summary.get(key, 0))
                values[n] = v if scale == 1.0 or v is None else v * scale
            better = m.get("better")
            rows.append(Row(NETWORK, m["label"], values, m.get("format", "int"), better if better in (LOWER, HIGHER) else None))
        return rows

    def _switch_ports(self) -> Dict[str, pd.DataFrame]:
        return {n: r.ports[switch_port_mask(r.ports)] for n, r in self.results.items()}

    def queue_classes(self) -> List[int]:
        """Queue classes with any traffic or occupancy at a switch port in any variant
        (class 0 if none had any)."""
        active: set = set()
        for sw in self._switch_ports().values():
            if not len(sw) or "queue" not in sw:
                continue
            busy = np.zeros(len(sw), dtype=bool)
            for col in ("tx_bytes", "max_depth_bytes", "drops"):
                if col in sw:
                    busy |= np.asarray(sw[col]) > 0
            active.update(int(q) for q in np.unique(np.asarray(sw["queue"])[busy]))
        return sorted(active) or [0]

    def _queue_rows(self) -> List[Row]:
        sw = self._switch_ports()
        names = list(self.results)
        sampled = all(_has_samples(r) for r in self.results.values())
        rows: List[Row] = []
        for q in self.queue_classes():
            mean: Dict[str, Any] = {}
            mean_top: Dict[str, Any] = {}
            ports: Dict[str, int] = {}
            peak: Dict[str, Any] = {}
            busy: Dict[str, Any] = {}
            p99: Dict[str, Any] = {}
            delay: Dict[str, Any] = {}
            delay99: Dict[str, Any] = {}
            for n in names:
                sel = sw[n][sw[n]["queue"] == q] if "queue" in sw[n] else sw[n].iloc[0:0]
                mean[n] = float(sel["mean_depth_bytes"].mean()) / 1e3 if len(sel) else None
                mean_top[n] = float(sel["mean_depth_bytes"].max()) / 1e3 if len(sel) else None
                ports[n] = len(sel)
                peak[n] = float(sel["max_depth_bytes"].max()) / 1e3 if len(sel) else None
                if sampled:
                    _, p99[n] = _busy_depth(self.results[n].queues, q, 0.99)
                    busy[n] = _busiest_port_busy(self.results[n].queues, q)
                # the queue that delays its packets most (a bottleneck's): its mean and p99
                # sojourn, per packet that crossed it
                if len(sel) and "sojourn_mean_ps" in sel and (sel["tx_packets"] > 0).any():
                    worst = sel.loc[sel["sojourn_mean_ps"].astype("float64").idxmax()]
                    delay[n], delay99[n] = float(worst["sojourn_mean_ps"]) / 1e6, float(worst["sojourn_p99_ps"]) / 1e6
                else:
                    delay[n] = delay99[n] = None
            # an average over every port is diluted by the idle ones (a dumbbell's bottleneck is
            # one of its switch ports): the busiest port first, the average named for what it is over
            over = f"the {ports[names[0]]:,} switch ports" if len(set(ports.values())) == 1 else "each variant's switch ports"
            rows.append(Row(NETWORK, f"mean queue depth, queue {q}: busiest port (KB)", mean_top, "f1", LOWER))
            rows.append(Row(NETWORK, f"mean queue depth, queue {q}: average over {over} (KB)", mean, "f1", LOWER))
            rows.append(Row(NETWORK, f"max queue depth, queue {q}: any port (KB)", peak, "f1", LOWER))
            if any(x for x in delay.values()):  # sojourns are recorded with switch.aqm only
                rows.append(Row(NETWORK, f"queue delay at the slowest port, queue {q}: mean (us)", delay, "f1", LOWER))
                rows.append(Row(NETWORK, f"queue delay at the slowest port, queue {q}: p99 (us)", delay99, "f1", LOWER))
            if sampled:
                # most samples of most queues are idle: a quantile over all of them says 0;
                # the seeds' depth distributions are those of a queue holding something
                rows.append(Row(NETWORK, f"queue {q} busy, busiest port (% of its samples)", busy, "f1", None))
                rows.append(Row(NETWORK, f"p99 queue depth when busy, queue {q}: busy samples of all ports (KB)", p99, "f1", LOWER))
        return rows

    # ------------------------------------------------------------------ table

    def change_columns(self) -> Dict[str, str]:
        """``{variant: column name}`` of the relative-change columns (all but the base)."""
        return {n: f"{n} vs {self.base}" for n in self.variants[1:]}

    def table(self, bins: Optional[Sequence[int]] = None) -> pd.DataFrame:
        """The side-by-side table.

        One row per (group, metric): first, for each flow-size bin with flows and for
        ``"all"``, the finished-flow count and mean / p50 / p99 FCT (us) and mean slowdown
        over every flow; where the flows carry several workload tags, the same rows over
        each tag's flows follow, their groups prefixed with the tag (``"incast: all"``);
        a bin whose flows no variant finished has its counts only. Where every variant
        recorded a goodput series (``[metrics] throughput_bin``), ``"goodput"`` rows: per
        tag the goodput over the run, with several tags each one's share and its per-flow
        ratio to the first tag, and Jain's index per phase (:mod:`dcnsim.goodput`).
        Then the ``"network"`` rows: PAUSE frames, XOFF time (ms, summed over ports),
        ports and flows paused, data packets dropped, loss rate (%), flows with loss,
        ECN marks, per queue class over the switch egress ports (KB) the busiest port's
        exact time-averaged depth, the average of it over the ports (the label says over how
        many) and the largest depth any port saw, the mean and p99 sojourn of the switch
        queue of the class with the largest mean (us), when every variant sampled queue
        depths the busiest port's share of samples in which it was busy and the p99 depth of
        the busy samples of all ports, unfinished flows and the end reason.

        Columns: ``group``, ``metric``, one column of raw values per variant, then for
        every variant after the first ``"<variant> vs <base>"``: the relative change
        ``(variant - base) / |base|`` as a number (``-0.382`` for -38.2%; NaN where it is
        undefined: a zero base with a non-zero value, or a row that is not a number).
        :meth:`formatted_table` has the same table as text (``"-38.2%"``, ``"n/a"``).
        Last, per change column, ``"<variant> vs <base>: verdict"``: ``"better"`` or
        ``"worse"`` where the row has a better direction and the change is one (and, with
        seeds, its paired interval excludes 0), else empty: what the terminal colours.
        Size bins are the base variant's ``fct_bins`` unless ``bins`` is given.
        """
        changes = self.change_columns()
        multi = self.n_seeds > 1
        records = []
        for row in self.rows(bins):
            rec: Dict[str, Any] = {"group": row.group, "metric": row.metric}
            for n in self.variants:
                rec[n] = row.values.get(n)
                if multi:
                    rec[f"{n} ci95"] = row.ci.get(n, float("nan"))
            for n, col in changes.items():
                c = row.change(self.base, n)
                rec[col] = float("nan") if c is None else float(c)
                if multi:
                    sig = row.excludes_zero(n)
                    rec[f"{col}: CI excludes 0"] = None if sig is None else bool(sig)
                rec[f"{col}: verdict"] = row.verdict(self.base, n) or ""
            records.append(rec)
        extra_v = [f"{n} ci95" for n in self.variants] if multi else []
        extra_c = [f"{c}: CI excludes 0" for c in changes.values()] if multi else []
        verdicts = [f"{c}: verdict" for c in changes.values()]
        columns = ["group", "metric", *self.variants, *extra_v, *changes.values(), *extra_c, *verdicts]
        table = pd.DataFrame.from_records(records, columns=columns)
        for col in changes.values():
            table[col] = table[col].astype("float64")
        return table

    def formatted_table(self, bins: Optional[Sequence[int]] = None) -> pd.DataFrame:
        """:meth:`table` with every value and change formatted for display (strings)."""
        table = self.table(bins)
        # the intervals go into the cells' text; the verdicts into their colours
        table = table[["group", "metric", *self.variants, *self.change_columns().values()]]
        table = table.astype(object)
        changes = self.change_columns()
        for i, row in enumerate(self.rows(bins)):
            for n in self.variants:
                table.at[i, n] = row.value_text(n)
            for n, col in changes.items():
                table.at[i, col] = row.change_text(self.base, n)
        return table

    def to_markdown(self, bins: Optional[Sequence[int]] = None) -> str:
        """The formatted table as a GitHub-flavoured Markdown table."""
        table = self.formatted_table(bins)
        header = [str(c) for c in table.columns]
        align = ["---", "---"] + ["--:"] * (len(header) - 2)
        lines = [_md_row(header), _md_row(align)]
        for rec in table.itertuples(index=False):
            lines.append(_md_row(["" if v is None else str(v) for v in rec]))
        return "\n".join(lines) + "\n"

    def markdown_report(self) -> str:
        """The content of comparison.md: a header (scenario, seed, variants with their
        wall time and outcome), the table, and the plots."""
        slugs = _slugs(self.variants)
        seeds = sorted({str(s) for s in self.seeds.values()})
        seed_text = seeds[0] if len(seeds) == 1 else ", ".join(f"{n}: {s}" for n, s in self.seeds.items())
        if self.seed is not None:
            seed_text += " (set on the command line / API)"
        if self.n_seeds > 1:
            all_seeds = sorted({str(r.summary.get("seed")) for rs in self.replicas.values() for r in rs}, key=lambda x: (len(x), x))
            seed_text = (
                f"{self.n_seeds} seeds ({', '.join(all_seeds)}): each cell is the mean over seeds ± the half-width of its "
                "95% confidence interval (Student's t); a change marked * has a 95% interval of the per-seed difference "
                "to the base (paired by seed) that excludes zero, \"(in noise)\" one that does not"
            )
        lines = [
            f"# Comparison: {self.scenario}",
            "",
            f"- scenario: `{self.scenario}` from `{self.origin}`"
            + (f" (sha256 `{self.scenario_sha256[:12]}`)" if self.scenario_sha256 else ""),
            f"- seed: {seed_text}",
            f"- base (first variant): {self.base}; `X vs {self.base}` = (X - {self.base}) / {self.base}",
            "- variants:",
        ]
        for n in self.results:
            lines.append(f"  - **{_md_escape(n)}** (`{slugs[n]}/`): {self.runs_text(n)}")
        lines += [f"- **warning**: {_md_escape(w)}" for w in self.warnings]
        lines += [
            "",
            "FCT rows named by a size bin (and `all`) are over every flow"
            + ("; rows prefixed with a workload tag (`incast: all`) over that tag's flows" if len(self.tags()) > 1 else "")
            + ". Queue depths are over switch egress ports; XOFF time is summed over all ports.",
            "",
            self.to_markdown().rstrip("\n"),
            "",
            f"![Mean FCT by flow size, {fct_plot_flows(self)}](fct_by_bin.png)",
            "",
            "![Slowdown CDF](slowdown_cdf.png)",
            "",
            "![Slowdown against flow size](slowdown_by_size.png)",
            "",
            "![Queue depth](queue_depth.png)",
            "",
            *(["![Queue depth over time](queue_depth_time.png)", ""] if all(len(r.queue_series) for r in self.results.values()) else []),
            *(["![Goodput](throughput.png)", ""] if any(len(r.timeseries.columns) for r in self.results.values()) else []),
        ]
        return "\n".join(lines)

    # ------------------------------------------------------------------ plots

    def figures(self) -> Dict[str, Any]:
        """``{file name: matplotlib Figure}`` of the plots (not attached to pyplot): FCT by
        bin, slowdown CDF, queue depth, per-flow throughput when recorded, and the queue
        depth over time when every variant sampled it."""
        figs = {
            "fct_by_bin.png": plot_fct_by_bin(self),
            "slowdown_cdf.png": plot_slowdown_cdf(self),
            "slowdown_by_size.png": plot_slowdown_by_size(self),
            "queue_depth.png": plot_queue_depth(self),
        }
        if any(len(r.timeseries.columns) for r in self.results.values()):
            figs["throughput.png"] = plot_throughput(self)
        if all(len(r.queue_series.columns) and len(r.queue_series) for r in self.results.values()):
            figs["queue_depth_time.png"] = plot_queue_depth_time(self)
        return figs

    # ------------------------------------------------------------------ save

    def save(self, outdir: PathLike) -> Dict[str, Path]:
        """Write everything into ``outdir`` (created if needed).

        ``outdir/<variant-slug>/`` gets each variant's flows.parquet, ports.parquet,
        summary.json (queues.parquet, queue_series.parquet and timeseries.parquet when
        recorded); ``outdir`` gets comparison.csv, comparison.md, fct_by_bin.png,
        slowdown_cdf.png, queue_depth.png (and queue_depth_time.png when every variant
        sampled queue depths, throughput.png with goodput series; without them, a throughput.png
        an earlier save left there is removed). Every file
        is written atomically. Returns ``{relative path: final path}``.
        """
        import shutil

        from .api import OPTIONAL_OUTPUT_FILES, OUTPUT_FILES, SCENARIO_FILES

        out = Path(outdir)
        written: Dict[str, Path] = {}
        # the table goes last: a save cut short leaves no earlier table beside newer runs,
        # and `dcnsim report` says the folder is incomplete
        for f in ("comparison.csv", "comparison.md"):
            (out / f).unlink(missing_ok=True)
        slugs = _slugs(self.variants)
        # an earlier comparison's variants that this one lacks: their folders would read as
        # this comparison's runs (only folders that hold a dcnsim run are removed)
        if out.is_dir():
            for old in out.iterdir():
                if old.is_dir() and old.name not in slugs.values() and ((old / "summary.json").is_file() or any(old.glob("seed-*/summary.json"))):
                    shutil.rmtree(old)
        for name, slug in slugs.items():
            # an earlier comparison saved here with other seeds leaves nothing that reads as
            # this one's: the runs of seeds not run now, or of one seed where there are several
            keep = {f"seed-{r.summary.get('seed')}" for r in self.replicas[name]} if self.n_seeds > 1 else set()
            if (out / slug).is_dir():
                for old in (out / slug).glob("seed-*"):
                    if old.is_dir() and old.name not in keep:
                        shutil.rmtree(old)
                if self.n_seeds > 1:
                    for f in (*OUTPUT_FILES, *OPTIONAL_OUTPUT_FILES, *SCENARIO_FILES):
                        (out / slug / f).unlink(missing_ok=True)
            if self.n_seeds > 1:  # every seed's run: <variant>/seed-<s>/
                for r in self.replicas[name]:
                    sub = f"{slug}/seed-{r.summary.get('seed')}"
                    for fname, path in r.save(out / sub).items():
                        written[f"{sub}/{fname}"] = path
                continue
            for fname, path in self.results[name].save(out / slug).items():
                written[f"{slug}/{fname}"] = path
        writers: Dict[str, Writer] = {
            "comparison.csv": text_writer(self.table().to_csv(index=False, lineterminator="\n")),
            "comparison.md": text_writer(self.markdown_report()),
        }
        for fname, fig in self.figures().items():
            writers[fname] = png_writer(fig)
        written.update(write_files_atomic(out, writers, stale=COMPARISON_OPTIONAL_FILES))
        return written

    def __repr__(self) -> str:
        return f"<dcnsim.Comparison {self.scenario}: {', '.join(self.variants)}>"


def _py(x: Any) -> Any:
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and math.isnan(x):
        return None
    return x


def _fmt_seconds(s: float) -> str:
    if s != s:  # NaN
        return "?"
    return f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.2f} s"


def _md_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _md_row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(_md_escape(c) for c in cells) + " |"


# --------------------------------------------------------------------------- running


def _run_job(text: str, fmt: str, origin: str, seed: Optional[int], variant: str, threads: int = 1) -> Tuple[str, Any, str]:
    """Run one variant (in a worker process or in this one).

    Errors raised by the core are returned as ``("error", kind, message)``: the core's
    exception classes cannot be pickled back from a worker.
    """
    try:
        res = run_source(ScenarioSource(text, fmt, origin), seed=seed, variant=variant, progress=False, threads=threads)
    except _core.ScenarioError as e:
        return ("error", "scenario", str(e))
    except _core.SimulationError as e:
        return ("error", "simulation", str(e))
    except _core.DcnsimError as e:
        return ("error", "dcnsim", str(e))
    return ("ok", res, "")


def _unwrap(variant: str, outcome: Tuple[str, Any, str]) -> Result:
    status, value, message = outcome
    if status == "ok":
        return value
    cls = {"scenario": _core.ScenarioError, "simulation": _core.SimulationError}.get(value, _core.DcnsimError)
    raise cls(f"variant {variant!r}: {message}")


def advice_warnings(src: ScenarioSource, chosen: Sequence[str]) -> List[str]:
    """What the compared variants' runs are warned of before they start (``_core.advice``):
    the document's lines, then each variant's, prefixed with its name."""
    advice = [(v, _core.advice(src.text, src.format, v)) for v in chosen]
    out = [str(w) for w in advice[0][1].get("document_warnings") or []] if advice else []
    for v, a in advice:
        out += [f"{v}: {w}" for w in a.get("warnings") or []]
    return out


def never_acted_warnings(replicas: Mapping[str, Sequence[Any]]) -> List[str]:
    """Each variant's configured mechanisms that never acted in any of its runs, prefixed
    with the variant's name (and the number of seeds where there are several)."""
    out = []
    for v, runs in replicas.items():
        per_run = [inactive_warnings(r.summary) for r in runs]
        for w in per_run[0]:
            if all(w in p for p in per_run[1:]):
                out.append(f"{v}: {w}" + (f" (in all {len(runs)} seeds)" if len(runs) > 1 else ""))
    return out


def _pick_variants(src: ScenarioSource, variants: Optional[Sequence[str]]) -> Tuple[str, List[str]]:
    info = _core.validate(src.text, src.format, None)
    name = str(info.get("name", "?"))
    available = list(info.get("variants") or [])
    if not available:
        raise _core.ScenarioError(
            f"scenario {name!r} has no [[variant]] tables: nothing to compare "
            "(add [[variant]] tables, or use `dcnsim run` for a single run)"
        )
    if variants is None:
        return name, available
    if isinstance(variants, str):
        variants = [variants]
    chosen: List[str] = []
    for v in variants:
        if v not in available:
            _core.merged(src.text, src.format, v)  # raises the core's "no variant named" error
        refuse_repeated_variants([*chosen, v])
        chosen.append(v)
    if not chosen:
        raise _core.ScenarioError("no variants selected")
    return name, chosen


def compare(
    scenario: ScenarioLike,
    *,
    variants: Optional[Sequence[str]] = None,
    seed: Optional[int] = None,
    jobs: Optional[int] = None,
    progress: Union[bool, str] = False,
    seeds: Union[None, int, Sequence[int]] = None,
    threads: int = 1,
) -> Comparison:
    """Run several ``[[variant]]`` tables of one scenario and compare them.

    Args:
        scenario: as for :func:`dcnsim.run` (a path, a shipped scenario name, TOML text
            or a dict).
        variants: names of the variants to run, in this order (the first is the base of
            the relative changes); default: all of them, in file order.
        seed: overrides ``scenario.seed`` for every variant.
        seeds: run every variant with each of these seeds (a count N means 1..N): the table
            then gives per cell the mean over seeds with its 95% confidence interval, and
            each change says whether the interval of the per-seed difference to the base
            (paired by seed) excludes zero. Not together with ``seed``.
        jobs: worker processes (default ``os.cpu_count()``; never more than the number
            of variants). ``jobs=1`` runs the variants one after the other in this
            process. The results do not depend on it.
        progress: ``True`` shows a progress bar over the variants when stdout is a
            terminal, ``"always"`` regardless, ``False`` (default) never.
        threads: split each run over this many threads (as :func:`dcnsim.run`); with
            ``jobs`` workers that is up to ``jobs * threads`` threads. The results do not
            depend on it.

    Worker processes are started with the ``spawn`` method: a script that calls
    ``compare`` with ``jobs > 1`` must do so under ``if __name__ == "__main__":``.

    Raises:
        ScenarioError: invalid scenario, a scenario without variants, an unknown or
            duplicated variant name, a bad seed or a variant that fails validation.
        SimulationError: a variant's simulation failed (the message names the variant).
    """
    check_seed(seed)
    threads = check_threads(threads)
    if seeds is not None and seed is not None:
        raise _core.ScenarioError(f"seed={seed!r} and seeds={seeds!r} (--seed, --seeds): expected one of them, not both")
    seed_list: List[Optional[int]] = [None if seed is None else int(seed)] if seeds is None else list(_seed_list(seeds, "seeds"))
    if jobs is None:
        jobs = os.cpu_count() or 1
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or int(jobs) < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    src = resolve_scenario(scenario)
    name, chosen = _pick_variants(src, variants)
    if len(chosen) * len(seed_list) > MAX_RUNS:
        raise _core.ScenarioError(f"seeds: {len(chosen)} variants x {len(seed_list)} seeds = {len(chosen) * len(seed_list)} runs, expected at most {MAX_RUNS}")
    # fail fast, before starting any process, on an invalid variant (one parse for all)
    checked = _core.check_variants(src.text, src.format, chosen)
    info = checked[-1][0]
    warns = identical_warnings(info["identical_variants"], chosen) + advice_warnings(src, chosen)
    own = {v: merged.get("scenario", {}).get("seed", 1) for v, (_, merged, _) in zip(chosen, checked)}
    if seeds is None and seed is None and len(set(own.values())) > 1:
        # each variant then draws another workload: a change mixes the mechanism with luck
        listed = ", ".join(f"{v}: {s}" for v, s in own.items())
        warns.append(f"the variants run different seeds ({listed}), so different workloads: give --seed N (or --seeds N) to run them on the same one")
    if len(chosen) == 1 and chosen[0] is not None:
        warns.append(f"one variant ({chosen[0]!r}): the table compares it with nothing (a comparison needs two or more variants)")
    for w in warns:
        warnings.warn(w, DcnsimWarning, stacklevel=2)
    seed_arg = None if seed is None else int(seed)
    jobs_list = [(v, s) for v in chosen for s in seed_list]
    workers = min(int(jobs), len(jobs_list))

    show, force = progress_mode(progress)
    outcomes: Dict[Tuple[str, Optional[int]], Tuple[str, Any, str]] = {}

    def finished(key: Any, outcome: Tuple[str, Any, str]) -> None:
        v = key[0]
        outcomes[key] = outcome
        if outcome[0] == "ok":
            s = outcome[1].summary
            bar.advance(f"{v}: {s.get('flows_finished', '?')}/{s.get('flows_total', '?')} flows, {_fmt_seconds(float(s.get('wall_time_s', float('nan'))))}")
        else:
            bar.advance(f"{v}: failed")
            _unwrap(v, outcome)  # report the first failure, stop the others

    def died(key: Any, e: BaseException) -> BaseException:
        return _core.SimulationError(f"variant {key[0]!r}: the worker process died ({e}); out of memory? try fewer --jobs")

    with Bar(len(jobs_list), "variants", show, force) as bar:
        run_all(_run_job, [((v, s), (src.text, src.format, src.origin, s, v, threads)) for v, s in jobs_list], workers, finished, died)
    replicas = {v: [_unwrap(v, outcomes[(v, s)]) for s in seed_list] for v in chosen}
    idle = never_acted_warnings(replicas)
    for w in idle:
        warnings.warn(w, DcnsimWarning, stacklevel=2)
    warns += idle
    return Comparison(
        results={v: r[0] for v, r in replicas.items()},
        scenario=name,
        origin=src.origin,
        seed=seed_arg,
        jobs=workers,
        scenario_sha256=src.sha256,
        replicas=replicas if len(seed_list) > 1 else {},
        warnings=warns,
    )
