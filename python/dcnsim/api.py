"""The Python API: :func:`run` a scenario and get a :class:`Result`.

The engine lives in the compiled module :mod:`dcnsim._core`; this module resolves the
scenario argument to text, drives the simulation (optionally under a progress bar),
and turns the raw column buffers returned by the core into pandas DataFrames.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import pandas as pd

from . import _core
from .io import bytes_writer, json_safe, json_writer, parquet_writer, write_files_atomic
from .sources import (  # noqa: F401 - re-exported: the API's scenario helpers live in sources
    MAX_SCENARIO_BYTES,
    ScenarioLike,
    ScenarioSource,
    check_seed,
    format_rate,
    format_time_ps,
    resolve_scenario,
    scenario_descriptions,
    scenarios_dir,
    shipped_scenarios,
    validate,
)
from .driver import check_threads, simulate, simulate_sim
from .tables import fct_table as _fct_table


#: File names always written by :meth:`Result.save`.
OUTPUT_FILES = ("flows.parquet", "ports.parquet", "summary.json")
#: Written by :meth:`Result.save` only when the run sampled queue depths
#: (``[metrics] queue_sample``).
OPTIONAL_OUTPUT_FILES = ("queues.parquet", "queue_series.parquet", "timeseries.parquet", "capture.pcapng")
#: The scenario the run read, as given (TOML) or as JSON (a dict): written by
#: :meth:`Result.save` when the result knows its source (every run does).
SCENARIO_FILES = ("scenario.toml", "scenario.json")


# --------------------------------------------------------------------------- scenarios


# --------------------------------------------------------------------------- columns


def _decode_columns(cols: Mapping[str, Tuple[str, bytes]]) -> Dict[str, np.ndarray]:
    """The core's raw columns as read-only arrays over its bytes: no copy here, since the
    DataFrame built from them copies once (a copy here too held the flows table three
    times at the peak of a run with millions of flows)."""
    out: Dict[str, np.ndarray] = {}
    for name, (dtype, raw) in cols.items():
        out[name] = np.frombuffer(raw, dtype=np.dtype(dtype))
    lengths = {len(a) for a in out.values()}
    if len(lengths) > 1:
        raise _core.SimulationError(
            f"inconsistent column lengths from the core: { {k: len(v) for k, v in out.items()} }"
        )
    return out


def _nullable_int(values: np.ndarray, valid: np.ndarray) -> pd.arrays.IntegerArray:
    data = np.where(valid, values, 0).astype(np.int64)
    return pd.arrays.IntegerArray(data, ~valid)


def _names(codes: np.ndarray, names: Sequence[str]) -> pd.Series:
    lookup = np.asarray(list(names) + [None], dtype=object)
    codes = codes.astype(np.int64)
    codes = np.where((codes >= 0) & (codes < len(names)), codes, len(names))
    return pd.Series(lookup[codes], dtype="string")


def flows_frame(raw: Mapping[str, Tuple[str, bytes]], tags: Sequence[str], by_id: bool = True) -> pd.DataFrame:
    """Flows DataFrame from the core's raw columns; unfinished flows get nulls. ``by_id``:
    sorted by ``flow_id`` (else in the core's order: a streamed run's order of finality)."""
    cols = _decode_columns(raw)
    n = len(next(iter(cols.values()))) if cols else 0
    finished = cols["finished"].astype(bool) if "finished" in cols else np.ones(n, dtype=bool)
    data: Dict[str, Any] = {}
    for name, values in cols.items():
        if name == "finished":
            data[name] = finished
        elif name == "paused":
            data[name] = values.astype(bool)
        elif name in ("end_ps", "fct_ps"):
            data[name] = _nullable_int(values, finished)
        elif name == "slowdown":
            data[name] = np.where(finished, values.astype(np.float64), np.nan)
        elif name == "tag":
            codes = values.astype(np.int64)
            codes = np.where((codes >= 0) & (codes < len(tags)), codes, -1)
            data[name] = pd.Categorical.from_codes(codes, categories=list(tags))
        else:
            data[name] = values
    df = pd.DataFrame(data, copy=True)
    ids = df["flow_id"].to_numpy() if "flow_id" in df else None
    if by_id and ids is not None and n and not bool(np.all(ids[1:] >= ids[:-1])):  # the core's order already is
        df = df.sort_values("flow_id", kind="stable", ignore_index=True)
    return df


def ports_frame(raw: Mapping[str, Tuple[str, bytes]], nodes: Sequence[str]) -> pd.DataFrame:
    """Ports DataFrame from the core's raw columns, with node_name/peer_name added."""
    cols = _decode_columns(raw)
    data: Dict[str, Any] = {}
    for name, values in cols.items():
        data[name] = values
        if name == "node":
            data["node_name"] = _names(values, nodes).to_numpy(dtype=object)
        elif name == "peer_node":
            data["peer_name"] = _names(values, nodes).to_numpy(dtype=object)
    if "is_host" in data:
        data["is_host"] = np.asarray(data["is_host"]).astype(bool)
    df = pd.DataFrame(data)
    for col in ("node_name", "peer_name"):
        if col in df:
            df[col] = df[col].astype("string")
    keys = [k for k in ("node", "port", "queue") if k in df]
    if keys and len(df):
        df = df.sort_values(keys, kind="stable", ignore_index=True)
    return df


def queues_frame(raw: Mapping[str, Tuple[str, bytes]], nodes: Sequence[str]) -> pd.DataFrame:
    """Sampled queue-depth histograms from the core's raw columns, with node_name added.

    One row per (node, port, queue, depth bin) with at least one sample: ``depth_bytes`` is
    the lower edge of the bin, ``samples`` the number of samples that fell into it. Empty
    (no columns) when the scenario does not set ``[metrics] queue_sample``.
    """
    cols = _decode_columns(raw)
    if not cols:
        return pd.DataFrame()
    data: Dict[str, Any] = {}
    for name, values in cols.items():
        data[name] = values
        if name == "node":
            data["node_name"] = _names(values, nodes).to_numpy(dtype=object)
    df = pd.DataFrame(data)
    if "node_name" in df:
        df["node_name"] = df["node_name"].astype("string")
    keys = [k for k in ("node", "port", "queue", "depth_bytes") if k in df]
    if keys and len(df):
        df = df.sort_values(keys, kind="stable", ignore_index=True)
    return df


def timeseries_frame(raw: Mapping[str, Tuple[str, bytes]], flows: pd.DataFrame, bin_ps: Optional[int]) -> pd.DataFrame:
    """Per-flow goodput per time bin from the core's raw columns, with the flow's tag and
    the rate in Gbit/s added; empty (no columns) unless ``[metrics] throughput_bin`` is set."""
    cols = _decode_columns(raw)
    if not cols or not bin_ps:
        return pd.DataFrame()
    df = pd.DataFrame(cols)
    if "flow_id" in flows and "tag" in flows:
        tags = flows.set_index("flow_id")["tag"].astype("string")
        df.insert(1, "tag", df["flow"].map(tags).astype("string"))
    df["gbps"] = df["bytes"].astype("float64") * 8.0 / float(bin_ps) * 1e3
    return df


# --------------------------------------------------------------------------- Result


@dataclass
class Result:
    """The outcome of one simulation run.

    Attributes:
        flows: one row per flow (see the README for the columns). ``end_ps`` and
            ``fct_ps`` are nullable (``<NA>`` for unfinished flows), ``slowdown`` is NaN
            for them and ``finished`` says which flows completed.
        ports: one row per (node, port, queue) with counters.
        summary: run metadata and headline metrics (JSON-serialisable).
        queues: sampled queue-depth histograms of the switch egress queues, one row per
            (node, port, queue, depth bin) with ``depth_bytes`` (lower bin edge) and
            ``samples``; empty (no columns) unless the scenario sets
            ``[metrics] queue_sample``.
        queue_series: the switch egress queues over time, one row per sample and queue
            class: ``time_ps``, ``queue``, ``max_depth_bytes`` (the deepest queue),
            ``total_depth_bytes`` (all of them together) and ``busy_queues`` (how many held
            anything); empty (no columns) unless the scenario sets ``[metrics] queue_sample``.
        timeseries: per-flow goodput, one row per (flow, time bin) in which the flow had
            bytes delivered in order: ``flow``, ``tag``, ``bin_start_ps``, ``bytes`` and
            ``gbps``; empty (no columns) unless the scenario sets
            ``[metrics] throughput_bin``.
        capture: the pcapng file of ``[metrics] capture`` (saved as capture.pcapng; open
            it in Wireshark with :data:`dcnsim.WIRESHARK_PLUGIN` for the fields of CNMs,
            CIMs, SFC messages and DRC frames); None unless the scenario captures.
    """

    flows: pd.DataFrame
    ports: pd.DataFrame
    summary: Dict[str, Any] = field(default_factory=dict)
    queues: pd.DataFrame = field(default_factory=pd.DataFrame)
    timeseries: pd.DataFrame = field(default_factory=pd.DataFrame)
    queue_series: pd.DataFrame = field(default_factory=pd.DataFrame)
    capture: Optional[bytes] = None
    #: The scenario text the run read (kept so a saved run says what it ran).
    source: Optional[ScenarioSource] = None

    def fct_table(self, bins: Optional[Sequence[int]] = None) -> pd.DataFrame:
        """FCT per size bin; default bins are ``summary["fct_bins"]``."""
        if bins is None:
            bins = self.summary.get("fct_bins")
        return _fct_table(self.flows, bins)

    @property
    def unfinished(self) -> int:
        """Number of flows that had not completed when the run ended."""
        return int((~self.flows["finished"]).sum()) if "finished" in self.flows else 0

    def save(self, outdir: Union[str, "os.PathLike[str]"]) -> Dict[str, Path]:
        """Write flows.parquet, ports.parquet, summary.json, the scenario it ran
        (scenario.toml or .json) and queues.parquet, queue_series.parquet,
        timeseries.parquet and capture.pcapng when the run recorded them into ``outdir``.

        The directory is created if needed. Files are written to temporary files first
        and renamed into place only once all of them are complete. Then the files of
        this set that this run did not write (queues.parquet of an earlier run that
        sampled queues, the scenario in the other format) are removed from ``outdir``, so
        that what is there is this run's; no other file is touched.
        """
        return write_files_atomic(outdir, self._writers(parquet_writer(self.flows)), stale=OPTIONAL_OUTPUT_FILES + SCENARIO_FILES)

    def _writers(self, flows: Any) -> Dict[str, Any]:
        """The writers of the output files, ``flows`` that of flows.parquet."""
        writers = {
            "flows.parquet": flows,
            "ports.parquet": parquet_writer(self.ports),
            "summary.json": json_writer(self.summary),
        }
        if len(self.queues.columns) and len(self.queues):
            writers["queues.parquet"] = parquet_writer(self.queues)
        if len(self.queue_series.columns) and len(self.queue_series):
            writers["queue_series.parquet"] = parquet_writer(self.queue_series)
        if len(self.timeseries.columns):
            writers["timeseries.parquet"] = parquet_writer(self.timeseries)
        if self.capture is not None:
            writers["capture.pcapng"] = bytes_writer(self.capture)
        if self.source is not None:
            text = self.source.text

            def scenario(path: str) -> None:
                with open(path, "w", encoding="utf-8", newline="") as f:
                    f.write(text)

            writers[f"scenario.{self.source.format}"] = scenario
        # dcnsim report would show an earlier run's scenario.toml beside this one's .json
        return writers

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"<dcnsim.Result {s.get('scenario', '?')!s}"
            f"{'/' + str(s['variant']) if s.get('variant') else ''} seed={s.get('seed')}: "
            f"{s.get('flows_finished', '?')}/{s.get('flows_total', '?')} flows finished, "
            f"end={s.get('end_reason', '?')}>"
        )


def run(
    scenario: ScenarioLike,
    *,
    seed: Optional[int] = None,
    variant: Optional[str] = None,
    progress: Union[bool, str] = False,
    check_invariants: bool = False,
    threads: int = 1,
) -> Result:
    """Run a scenario to completion and return its :class:`Result`.

    Args:
        scenario: path to a ``.toml`` (or ``.json``) file, the name of a shipped scenario
            (``"leaf_spine_dctcp"``, with or without ``.toml``), a TOML string, or a dict
            with the same schema.
        seed: overrides ``scenario.seed``.
        variant: name of one ``[[variant]]`` of the scenario.
        progress: ``True`` shows a progress bar when stdout is a terminal, ``"always"``
            shows it regardless, ``False`` (default) never.
        check_invariants: check buffer bounds (queue limits, PFC headroom) at every
            enqueue; violations are listed in ``summary["invariant_violations"]`` (slower).
        threads: split the run over this many threads (docs/parallel.md); the results are
            the same at any count. A run that cannot be split yet stays on one thread and
            says why in ``summary["warnings"]``.

    What the builder found suspicious but valid (``summary["warnings"]``: a mechanism the
    flows cannot bring into play, ...) and every configured mechanism that never acted
    (``summary["activity"]``) are also raised as :class:`dcnsim.DcnsimWarning`.

    Raises:
        ScenarioError: invalid scenario, unknown variant, bad seed.
        FileNotFoundError: ``scenario`` names a file that does not exist.
        SimulationError: the engine failed.
    """
    import warnings

    from .sources import DcnsimWarning, inactive_warnings

    check_seed(seed)
    result = run_source(resolve_scenario(scenario), seed=seed, variant=variant, progress=progress, check_invariants=check_invariants, threads=threads)
    for w in list(result.summary.get("warnings") or []) + inactive_warnings(result.summary):
        warnings.warn(str(w), DcnsimWarning, stacklevel=2)
    return result


def run_source(
    src: ScenarioSource,
    *,
    seed: Optional[int] = None,
    variant: Optional[str] = None,
    progress: Union[bool, str] = False,
    check_invariants: bool = False,
    threads: int = 1,
) -> Result:
    """Run an already resolved scenario (see :func:`run`)."""
    sim, t0 = simulate(src, seed=seed, variant=variant, progress=progress, check_invariants=check_invariants, threads=threads)
    return result_of(sim, src, t0)


def result_of(sim: Any, src: ScenarioSource, t0: float) -> Result:
    """The :class:`Result` of a finished core simulation started at ``t0``
    (``time.perf_counter()``)."""
    raw = sim.results()
    flows = flows_frame(raw.pop("flows"), raw.get("tags", []))  # its bytes freed as soon as it is built
    result = _result(sim, raw, flows, src, t0, lambda: flows)
    summary = result.summary
    summary["fct"] = json_safe(result.fct_table().to_dict(orient="records"))
    return result


def _result(sim: Any, raw: Dict[str, Any], flows: pd.DataFrame, src: ScenarioSource, t0: float, tags_of: Any) -> Result:
    """A :class:`Result` of the core's tables ``raw`` beside ``flows``; ``tags_of()``: a
    table of every flow's ``flow_id`` and ``tag`` (read only for the goodput series)."""
    wall = time.perf_counter() - t0
    ports = ports_frame(raw["ports"], raw.get("nodes", []))
    queues = queues_frame(raw.get("queues") or {}, raw.get("nodes", []))
    summary: Dict[str, Any] = dict(raw.get("summary", {}))
    ts = raw.get("timeseries") or {}
    timeseries = timeseries_frame(ts, tags_of() if ts else flows, summary.get("throughput_bin_ps"))
    events = int(summary.get("events", sim.events))
    summary["wall_time_s"] = wall
    summary["events_per_s"] = events / wall if wall > 0 else None
    summary["scenario_sha256"] = src.sha256
    queue_series = pd.DataFrame(_decode_columns(raw.get("queue_series") or {}))
    return Result(flows=flows, ports=ports, summary=summary, queues=queues, timeseries=timeseries, queue_series=queue_series, capture=raw.get("capture"), source=src)


# --------------------------------------------------------------------------- streamed


@dataclass
class SavedRun:
    """A run written to a folder as it went (:func:`run_saved`): what ``dcnsim run -o`` and
    sweeps hold of it in memory. The flows table is only in ``paths["flows.parquet"]``."""

    summary: Dict[str, Any]
    ports: pd.DataFrame
    fct: pd.DataFrame
    paths: Dict[str, Path]
    #: Where the flows have several tags: each tag's FCT table, for the tags with flows.
    fct_by_tag: Dict[str, pd.DataFrame] = field(default_factory=dict)

    def fct_table(self) -> pd.DataFrame:
        """FCT per size bin (bins ``summary["fct_bins"]``), as :meth:`Result.fct_table`."""
        return self.fct

    @property
    def unfinished(self) -> int:
        """Number of flows that had not completed when the run ended."""
        return int(self.summary.get("flows_unfinished", 0))


class _FlowsWriter:
    """flows.parquet written as the run's rows become final (``Simulation.take_flows``),
    in row groups of at least ``ROWS`` rows, so that memory does not grow with the flows
    that have finished. Rows are in the order the core found them final (every 100 us of
    simulated time, each time by id: the same order whatever the driver's steps); the
    flows still held at the end come last, by id."""

    ROWS = 1 << 16

    def __init__(self, sim: Any, path: str) -> None:
        sim.stream_flows()
        self.sim, self.path, self.tags = sim, path, list(sim.tags)
        self.pending: list = []
        self.rows = 0
        self.writer: Any = None

    def drain(self) -> None:
        raw = self.sim.take_flows()
        if raw is not None:
            self.add(flows_frame(raw, self.tags, by_id=False))

    def add(self, df: pd.DataFrame, last: bool = False) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.pending.append(df)
        self.rows += len(df)
        if self.rows < self.ROWS and not last:
            return
        part = pd.concat(self.pending, ignore_index=True) if len(self.pending) > 1 else self.pending[0]
        # row groups of exactly ROWS rows but the last: the file does not depend on how
        # often the rows were taken, and reading it back holds one group at a time
        cut = len(part) if last else len(part) - len(part) % self.ROWS
        self.pending = [part.iloc[cut:].reset_index(drop=True)] if cut < len(part) else []
        self.rows = len(part) - cut
        part = part.iloc[:cut]
        if self.writer is None:
            table = pa.Table.from_pandas(part, preserve_index=False)
            self.writer = pq.ParquetWriter(self.path, table.schema, compression="zstd")
        else:
            table = pa.Table.from_pandas(part, schema=self.writer.schema, preserve_index=False)
        if table.num_rows:
            self.writer.write_table(table, row_group_size=self.ROWS)
        if last:
            self.writer.close()

    def batches(self, columns: Sequence[str]) -> Any:
        import pyarrow.parquet as pq

        f = pq.ParquetFile(self.path, pre_buffer=False)
        for b in f.iter_batches(columns=list(columns), batch_size=self.ROWS, use_threads=False):
            yield b.to_pandas()


def run_saved(
    src: ScenarioSource,
    outdir: Union[str, "os.PathLike[str]"],
    *,
    seed: Optional[int] = None,
    variant: Optional[str] = None,
    progress: Union[bool, str] = False,
    check_invariants: bool = False,
    threads: int = 1,
) -> SavedRun:
    """Run an already resolved scenario and write its outputs into ``outdir`` as
    :meth:`Result.save` does, with flows.parquet written while the run goes (its rows as
    they become final, so in that order, not by ``flow_id``: sort by it for the order of
    :attr:`Result.flows`): what the process holds does not grow with the flows that have
    finished. Files appear only once all are complete."""
    from .io import named_os_error, remove_stale_temps, temp_path
    from .tables import FctAccumulator

    import pyarrow as pa

    t0 = time.perf_counter()
    # a scenario the core refuses leaves nothing behind, not even the folder
    sim = _core.Simulation(src.text, src.format, seed=None if seed is None else int(seed), variant=variant, check_invariants=check_invariants, threads=check_threads(threads))
    directory = Path(outdir)
    made = not directory.exists()
    directory.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(directory)
    tmp = temp_path(directory, "flows.parquet")
    # Arrow's default pool (mimalloc) keeps what each part's conversion frees: reading a
    # 555 k-flow file back 64 k rows at a time left 50-90 MB more resident, growing with the
    # file; the system allocator gives it back (+20 MB, flat)
    pool = pa.default_memory_pool()
    pa.set_memory_pool(pa.system_memory_pool())
    try:
        try:
            stream = _FlowsWriter(sim, tmp)
            simulate_sim(sim, progress, on_step=stream.drain)
            stream.drain()
        except OSError as e:  # a full disk, while flows.parquet streams out
            raise named_os_error(e, directory / "flows.parquet") from e
        raw = sim.results()
        tags = [str(t) for t in raw.get("tags", [])]
        stream.add(flows_frame(raw.pop("flows"), tags), last=True)
        result = _result(sim, raw, pd.DataFrame(), src, t0, lambda: pd.concat(stream.batches(["flow_id", "tag"]), ignore_index=True))
        summary = result.summary
        acc = FctAccumulator(summary.get("fct_bins"))
        columns = ("size_bytes", "finished", "fct_ps", "slowdown")
        for part in stream.batches(columns):
            acc.add(part)
        fct = acc.table(lambda: stream.batches(columns))
        summary["fct"] = json_safe(fct.to_dict(orient="records"))
        by_tag = {}
        for tag in tags if len(tags) > 1 else []:

            def of_tag(tag: str = tag) -> Iterable[pd.DataFrame]:
                return (p[np.asarray(p["tag"].astype(str) == tag)] for p in stream.batches(columns + ("tag",)))

            acc = FctAccumulator(summary.get("fct_bins"))
            for part in of_tag():
                acc.add(part)
            if sum(acc.count) or sum(acc.unfinished):
                by_tag[tag] = acc.table(of_tag)

        def flows(path: str) -> None:
            os.replace(tmp, path)

        paths = write_files_atomic(outdir, result._writers(flows), stale=OPTIONAL_OUTPUT_FILES + SCENARIO_FILES)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if made and not any(directory.iterdir()):
            directory.rmdir()  # a run that could not finish leaves no folder it made
        raise
    finally:
        pa.set_memory_pool(pool)
    return SavedRun(summary=summary, ports=result.ports, fct=fct, paths=paths, fct_by_tag=by_tag)
