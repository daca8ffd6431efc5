"""Parameter sweeps: run a grid of scenario keys x variants x seeds and collect one tidy table.

The grid comes from the scenario's ``[sweep]`` table (key paths to lists of values, and
``seeds``, a count or a list) and from the command line (``--set KEY=V1,V2``, ``--seeds``),
crossed with the file's ``[[variant]]`` tables. Every point is an independent run: its
scenario is the file with the point's values written at their key paths in each variant
that has the key's table (a swept key never creates a table; where a variant lacks it the
variant runs unchanged, and the output says so), so a run's identity is the hash of the
merged scenario it simulates and its seed. Each run saves its own outputs
under ``OUTDIR/runs/<id>/`` (atomically, as ``dcnsim run -o`` does); a rerun skips the points
whose outputs are there, so an interrupted sweep resumes where it stopped. At the end
``sweep.parquet`` holds one row per run and FCT size bin (a column per swept key, named by
its key path, then variant, seed, the FCT table's statistics in the same units and the
run's drops, pauses and deepest switch queue), and ``sweep_summary.csv`` the mean and 95%
confidence interval across seeds per cell.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import math
import numbers
import os
import shutil
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _core
from .sources import MAX_RUNS, DcnsimWarning, ScenarioLike, identical_warnings, check_seed, refuse_repeated_variants, resolve_scenario
from .io import bytes_writer, csv_writer, png_writer
from .jobs import Bar, run_all
from .plots import axis_unit, figure, margins
from .sources import seed_list as _seed_list
from .stats import ci95, excludes_zero

# ray.init tries when the cluster answers but fails to start this client's server
_RAY_INIT_ATTEMPTS = 3

def parse_value(text: str) -> Any:
    """A command-line value: an integer, a float, true/false, or else the string itself
    (sizes, rates and durations stay strings, as in a scenario file)."""
    t = text.strip()
    if t.lower() in ("true", "false"):
        return t.lower() == "true"
    for conv in (int, float):
        try:
            return conv(t)
        except ValueError:
            pass
    return t


def parse_set(spec: str) -> Tuple[str, List[Any]]:
    """``"switch.pfc.xoff=500KB,750KB"`` -> ``("switch.pfc.xoff", ["500KB", "750KB"])``."""
    key, sep, values = spec.partition("=")
    key = key.strip()
    if not sep or not key or not values.strip():
        raise _core.ScenarioError(f"--set {spec!r}: expected KEY=VALUE[,VALUE...], e.g. switch.pfc.xoff=500KB,750KB")
    parsed = [parse_value(v) for v in values.split(",")]
    _check_finite(parsed, f"--set {key}")
    return key, parsed


def _check_axis(key: str, values: Sequence[Any], where: str) -> None:
    """Refuse what would make a sweep's table say more than its runs: the seed as a swept
    key (every point runs its own seeds, so the column would name a seed the runs did not
    use) and a value given twice (its runs would count twice, a confidence interval from one
    run)."""
    if key == "scenario.seed":
        raise _core.ScenarioError(f"{where}: the seed cannot be swept as a key (each point runs the sweep's seeds); give the seeds with --seeds N or [sweep] seeds = [..]")
    _check_finite(values, where)
    seen = set()
    for v in values:
        # 10 and 10.0 are one value; true is not 1
        k = ("bool", v) if isinstance(v, bool) else ("number", v) if isinstance(v, (int, float)) else ("other", json.dumps(v, sort_keys=True))
        if k in seen:
            raise _core.ScenarioError(f"{where}: value {v!r} given twice, expected each value once")
        seen.add(k)


def _check_finite(values: Sequence[Any], where: str) -> None:
    """Refuse nan and inf: a point's scenario travels as JSON, which has neither."""
    for v in values:
        if isinstance(v, float) and not math.isfinite(v):
            raise _core.ScenarioError(f"{where}: invalid value {v!r}, expected a finite number")


@dataclass(frozen=True)
class Point:
    """One run of the grid."""

    values: Tuple[Tuple[str, Any], ...]  # (key path, value) in grid order
    variant: Optional[str]
    seed: int
    scenario: str  # JSON text of the scenario with the values written in
    run_id: str  # from what this run simulates (its merged variant and seed): equal runs share it
    #: what the output must say about this point: swept keys that do not apply to its
    #: variant, variants it is identical to
    warnings: Tuple[str, ...] = ()
    #: the swept scenario as given (text, "toml" or "json"), for the sweep's folder
    base: Tuple[str, str] = ("", "toml")


def _has_table(doc: Dict[str, Any], path: str) -> bool:
    """Whether ``doc`` has the table at dotted ``path`` ("" is the document itself)."""
    d: Any = doc
    for p in path.split(".") if path else []:
        d = d.get(p) if isinstance(d, dict) else None
    return isinstance(d, dict)


def _applies(doc: Dict[str, Any], keys: Sequence[str], chosen: Sequence[Optional[str]], name: str) -> Dict[str, List[Optional[str]]]:
    """For each swept key, the chosen variants (None: the base) whose merged scenario has
    the key's table. A swept key never creates a table: written where a variant lacks it,
    it would switch that mechanism on there (``switch.sfc.trigger`` swept over a PFC-only
    variant turned SFC on in it). A key that applies nowhere is refused."""
    text = json.dumps(doc)
    merged = {v: _core.merged(text, "json", v) for v in chosen}
    out: Dict[str, List[Optional[str]]] = {}
    for k in keys:
        parent = k.rpartition(".")[0]
        out[k] = [v for v in chosen if _has_table(merged[v], parent)]
        if not out[k]:
            where = "the scenario" if chosen == [None] else "variant " + ", ".join(repr(v) for v in chosen)
            raise _core.ScenarioError(
                f"sweep key {k!r}: {where} of {name!r} has no table {parent!r}; a swept key never creates a table "
                "(that would switch a mechanism on): write the table into the scenario or a variant"
            )
    return out


def _set_path(doc: Dict[str, Any], key: str, value: Any) -> None:
    parts = key.split(".")
    d = doc
    for p in parts[:-1]:
        nxt = d.get(p)
        if nxt is None:
            nxt = d[p] = {}
        if not isinstance(nxt, dict):
            raise _core.ScenarioError(f"sweep key {key!r}: {p!r} is not a table in the scenario")
        d = nxt
    d[parts[-1]] = value


def _load(scenario: ScenarioLike) -> Tuple[Dict[str, Any], str, Tuple[str, str]]:
    """The scenario as a dict, its name for messages, and its text and format."""
    src = resolve_scenario(scenario)
    if src.format == "json":
        doc = json.loads(src.text)
    else:
        import tomllib

        try:
            doc = tomllib.loads(src.text)
        except tomllib.TOMLDecodeError as e:
            raise _core.ScenarioError(f"malformed TOML: {e}") from None
    _core.validate(src.text, src.format, None)  # the base itself must be valid
    return doc, str(doc.get("scenario", {}).get("name", "?")), (src.text, src.format)


def grid(
    scenario: ScenarioLike,
    sets: Sequence[Tuple[str, List[Any]]] = (),
    seeds: Union[None, int, Sequence[int]] = None,
    variants: Optional[Sequence[str]] = None,
) -> List[Point]:
    """The runs of a sweep: the ``[sweep]`` table's keys with the command line's added or
    replacing them, crossed with the variants and the seeds. Every point is validated
    before any runs, errors naming the key and the point."""
    doc, name, base = _load(scenario)
    table = doc.pop("sweep", {}) or {}
    if not isinstance(table, dict):
        raise _core.ScenarioError("sweep: expected a table of key paths and value lists")
    axes: Dict[str, List[Any]] = {}
    file_seeds = table.pop("seeds", None)
    for k, v in table.items():
        if not isinstance(v, list) or not v:
            raise _core.ScenarioError(f"sweep.{k}: invalid value {v!r}, expected a non-empty list of values")
        _check_axis(k, v, f"sweep.{k}")
        axes[k] = list(v)
    given = set()
    for k, v in sets:
        if k in given:
            # the second would silently replace the first's values
            raise _core.ScenarioError(f"--set {k}: given twice, expected each key once (its values comma-separated: --set {k}=A,B)")
        given.add(k)
        _check_axis(k, v, f"--set {k}")
        axes[k] = list(v)
    refuse_repeated_variants(variants or [])
    seed_spec = seeds if seeds is not None else file_seeds
    if seed_spec is None:
        seed_list = [int(doc.get("scenario", {}).get("seed", 1))]
        check_seed(seed_list[0])
    else:
        seed_list = _seed_list(seed_spec, "sweep.seeds" if seeds is None else "seeds")
    available = [v.get("name") for v in doc.get("variant", []) if isinstance(v, dict)]
    if variants:
        for v in variants:
            if v not in available:
                _core.merged(json.dumps(doc), "json", v)  # raises the core's "no variant named" error
        chosen: List[Optional[str]] = list(variants)
    else:
        chosen = list(available) or [None]
    keys = list(axes)
    # counted before any point is made: the points are built (and held) all at once
    n_values = math.prod(len(axes[k]) for k in keys)
    runs = n_values * len(chosen) * len(seed_list)
    if runs > MAX_RUNS:
        raise _core.ScenarioError(
            f"sweep: {runs} runs ({n_values} grid points x {len(chosen)} variant(s) x {len(seed_list)} seed(s)), expected at most {MAX_RUNS}; "
            "sweep fewer values or seeds, or split the sweep"
        )
    applies = _applies(doc, keys, chosen, name)
    not_applied = {v: [k for k in keys if v not in applies[k]] for v in chosen}
    points: List[Point] = []
    seen: Dict[Optional[str], Dict[str, str]] = {}
    for combo in itertools.product(*(axes[k] for k in keys)):
        values = tuple(zip(keys, combo))
        where = ", ".join(f"{k}={x!r}" for k, x in values) or "the base"
        d = json.loads(json.dumps(doc))
        for v in chosen:
            # Written into the variant's own table, so the swept value wins over a value the
            # variant sets itself and lands in a table the variant replaces or re-creates.
            target = d if v is None else next(x for x in d["variant"] if isinstance(x, dict) and x.get("name") == v)
            for k, x in values:
                if v in applies[k]:
                    _set_path(target, k, x)
        text = json.dumps(d, sort_keys=True, allow_nan=False)
        try:
            # one parse of the point for every variant's check and merged document
            checked = _core.check_variants(text, "json", chosen)
        except _core.ScenarioError as e:
            raise _core.ScenarioError(f"sweep point {where}: {e}") from None
        pairs = checked[-1][0]["identical_variants"]
        for v, (_, merged_doc, resolved) in zip(chosen, checked):
            notes = [f"{k} does not apply to variant {v!r} (it has no {k.rpartition('.')[0]!r} table): that variant runs unchanged at every value" for k in not_applied[v]]
            notes += [f"at {where}: {w}" for w in identical_warnings([pr for pr in pairs if v in pr], chosen)]
            # values that read the same in the engine's units ("200KB" and "0.2MB"), where the
            # swept keys apply: two points that measure nothing between them
            same = seen.setdefault(v, {}).setdefault(resolved, where)
            if same != where and not not_applied[v]:
                of = "" if v is None else f" of variant {v!r}"
                notes.append(f"at {where}: the run{of} is the one at {same} (the values mean the same): the two points differ in nothing")
            merged = json.dumps(merged_doc, sort_keys=True)
            for s in seed_list:
                h = hashlib.sha256(f"{merged}\0{s}".encode()).hexdigest()[:16]
                points.append(Point(values, v, int(s), text, h, tuple(notes), base))
    return points


def warnings_of(points: Sequence[Point]) -> List[str]:
    """The sweep's warnings, each once, in grid order."""
    return list(dict.fromkeys(w for p in points for w in p.warnings))


def _row_data(result: Any) -> Dict[str, Any]:
    """What sweep.parquet keeps of one run: its FCT table (and each tag's, where the flows
    have several) and run-level numbers."""
    s = result.summary
    ports = result.ports
    switch = ports[~ports["is_host"].astype(bool)] if "is_host" in ports else ports
    return {
        "fct": json.loads(result.fct_table().to_json(orient="records")),
        "fct_by_tag": {t: json.loads(f.to_json(orient="records")) for t, f in getattr(result, "fct_by_tag", {}).items()},
        "run": {
            "drops": int(s.get("data_packets_dropped", 0)),
            "flows_unfinished": int(s.get("flows_unfinished", 0)),
            "pause_frames": int(s.get("pfc_frames", 0)),
            "xoff_time_ps": int(s.get("xoff_time_ps", 0)),
            "max_queue_bytes": int(switch["max_depth_bytes"].max()) if len(switch) else 0,
            "end_reason": str(s.get("end_reason", "")),
        },
    }


def _run_point(point: Point, threads: int = 1) -> Tuple[str, str, Any, Dict[str, bytes]]:
    """Run one point (in a worker process or on a cluster node): (run id, status, row data,
    the run's output files as bytes). The driver writes the files, so workers need no
    shared file system."""
    import tempfile

    from .api import run_saved
    from .io import json_writer, write_files_atomic
    from .sources import ScenarioSource

    _remove_dead_temp_dirs_once()
    with tempfile.TemporaryDirectory(prefix=temp_dir_prefix()) as tmp:
        # flows.parquet is written as the run goes (memory: the flows in flight)
        try:
            res = run_saved(ScenarioSource(point.scenario, "json", "<sweep>"), tmp, seed=point.seed, variant=point.variant, threads=threads)
        except _core.DcnsimError as e:
            return point.run_id, "error", str(e), {}
        data = _row_data(res)
        # the wall time stays beside the run; the table holds only what the seed determines
        meta = {"values": dict(point.values), "variant": point.variant, "seed": point.seed, "wall_time_s": res.summary.get("wall_time_s"), **data}
        write_files_atomic(tmp, {"point.json": json_writer(meta)})
        files = {f.name: f.read_bytes() for f in sorted(Path(tmp).iterdir()) if f.is_file()}
    files[MANIFEST] = json.dumps({name: {"bytes": len(b), "sha256": hashlib.sha256(b).hexdigest()} for name, b in files.items()}, indent=1, sort_keys=True).encode()
    return point.run_id, "ok", data, files


#: The file a complete sweep run's folder ends with: the size and SHA-256 of each of its
#: other files, checked before a resumed sweep reuses the run.
MANIFEST = "manifest.json"

#: Temporary folders of sweep workers: the process id after the prefix, so that a later
#: sweep can tell one whose process is gone (killed mid-run) and remove it.
_TEMP_PREFIX = "dcnsim-sweep-"


def temp_dir_prefix() -> str:
    """The prefix of this process's temporary folders (in the system temp directory)."""
    return f"{_TEMP_PREFIX}{os.getpid()}-"


def remove_dead_temp_dirs() -> int:
    """Remove the sweep temporary folders of processes that no longer exist (a worker or
    a driver killed by a signal leaves its folder; a resumed sweep or the next one clears
    them). Returns how many."""
    import re
    import tempfile

    from .io import remove_orphans

    return remove_orphans(tempfile.gettempdir(), re.compile(rf"^{re.escape(_TEMP_PREFIX)}(\d+)-"), folders=True)


@functools.lru_cache(maxsize=None)
def _remove_dead_temp_dirs_once() -> None:
    """:func:`remove_dead_temp_dirs`, once per worker process (a cluster node's too): not a
    scan of the system temp directory per run."""
    remove_dead_temp_dirs()


def _store(out: Path, run_id: str, files: Dict[str, bytes]) -> None:
    """Write a finished run's files, the manifest (the marker of a complete run) last."""
    from .io import write_files_atomic

    d = out / "runs" / run_id
    write_files_atomic(d, {k: bytes_writer(v) for k, v in files.items() if k != MANIFEST})
    write_files_atomic(d, {MANIFEST: bytes_writer(files[MANIFEST])})


def _done(outdir: Path, point: Point) -> Tuple[Optional[Dict[str, Any]], str]:
    """A complete run's row data, or None and why it must run (again): "" where it never
    finished (no manifest), else what its files fail (missing, size, content)."""
    d = outdir / "runs" / point.run_id
    try:
        manifest = json.loads((d / MANIFEST).read_text())
        listed = {str(k): (int(v["bytes"]), str(v["sha256"])) for k, v in manifest.items()}
    except FileNotFoundError:
        # a run of a sweep from before manifests, or one cut short: run it
        return None, ("no manifest.json" if (d / "point.json").is_file() else "")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None, "manifest.json unreadable"
    if "point.json" not in listed:
        return None, "manifest.json lists no point.json"
    for name, (size, digest) in sorted(listed.items()):
        f = d / name
        try:
            data = f.read_bytes()
        except OSError:
            return None, f"{name} missing"
        if len(data) != size:
            return None, f"{name}: {len(data):,} bytes, the manifest says {size:,}"
        if hashlib.sha256(data).hexdigest() != digest:
            return None, f"{name}: its content is not what the run wrote"
    try:
        m = json.loads((d / "point.json").read_text())
        return {"fct": m["fct"], "fct_by_tag": m.get("fct_by_tag", {}), "run": m["run"]}, ""
    except (OSError, ValueError, KeyError):
        return None, "point.json unreadable"


def run_sweep(
    points: Sequence[Point],
    outdir: Union[str, "os.PathLike[str]"],
    *,
    jobs: Optional[int] = None,
    progress: Union[bool, str] = False,
    cluster: Optional[str] = None,
    threads: int = 1,
    baseline: Optional[str] = None,
) -> Dict[str, Any]:
    """Run the points not yet done under ``outdir`` and write sweep.parquet,
    sweep_summary.csv and sweep.png. Locally: a process pool of ``jobs`` workers (default
    one per core). ``cluster``: a Ray address (``"ray://HOST:PORT"`` or ``"auto"``) to run
    the same jobs on a Ray cluster instead (``pip install 'dcnsim[ray]'``), the dcnsim
    package, compiled core included, shipped to the workers; the tables are the same.
    ``threads``: split each run over this many threads (as :func:`dcnsim.run`); the
    tables do not depend on it. ``baseline``: "KEY=VALUE", the point every other is
    compared with (by default the first value of the first swept key): sweep_summary.csv's
    ``<metric>_vs_baseline`` columns.
    Runs that simulate the same thing (a variant a swept key does not apply to, two
    identical variants) share a run id and run once. Returns {"ran": n, "skipped": n,
    "distinct": n, "table": DataFrame, "summary": DataFrame, "warnings": [str]}; the
    warnings (also raised as :class:`dcnsim.DcnsimWarning`) and the run counts go to
    sweep.json."""
    from .driver import check_threads

    threads = check_threads(threads)
    keys = [k for k, _ in points[0].values] if points else []
    base_point = baseline_of(keys, points, baseline)  # refused before anything runs
    if cluster is not None:
        _ray()  # nor is anything made without Ray
    remove_dead_temp_dirs()  # what killed workers of earlier sweeps left on this machine
    out = Path(outdir)
    made = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    try:
        return _run_into(points, out, jobs, progress, cluster, threads, keys, base_point)
    except BaseException:
        # a sweep that stopped before any run was stored (a cluster that does not answer,
        # a first run that fails) leaves no empty folder behind
        if made and not any(p.is_file() for p in out.rglob("*")):
            shutil.rmtree(out, ignore_errors=True)
        raise


def _run_into(points: Sequence[Point], out: Path, jobs: Optional[int], progress: Union[bool, str], cluster: Optional[str],
              threads: int, keys: List[str], base_point: Optional[Tuple[str, Any]]) -> Dict[str, Any]:
    from .driver import progress_mode

    data: Dict[str, Dict[str, Any]] = {}
    todo = []
    first: Dict[str, Point] = {}  # equal runs run once, under the first point that asks for them
    for p in points:
        first.setdefault(p.run_id, p)
    unique = list(first.values())
    damaged = []
    for p in unique:
        d, why = _done(out, p)
        if d is None:
            todo.append(p)
            if why:
                damaged.append((p, why))
        else:
            data[p.run_id] = d
    skipped = len(unique) - len(todo)
    warns = warnings_of(points)
    if damaged:
        p, why = damaged[0]
        warns = warns + [f"{len(damaged)} run(s) already there are run again, their files damaged or incomplete; first: runs/{p.run_id} ({why})"]
    for w in warns:
        warnings.warn(w, DcnsimWarning, stacklevel=2)
    show, force = progress_mode(progress)
    by_id = {p.run_id: p for p in todo}

    def finished(outcome: Tuple[str, str, Any, Dict[str, bytes]]) -> None:
        rid, status, d, files = outcome
        if status != "ok":
            kept = f"; the {len(data)} runs done are kept in {out / 'runs'}, and the same command resumes from them" if data else ""
            raise _core.SimulationError(f"sweep run {rid} ({_describe(by_id[rid])}): {d}{kept}")
        _store(out, rid, files)
        data[rid] = d
        bar.advance()

    bar = Bar(len(todo), "runs", show, force)
    with bar:
        if cluster is not None:
            _run_on_ray(todo, cluster, finished, threads)
        else:
            _run_local(todo, jobs, finished, threads)
    table = tidy(points, data)
    summary = summarize(table, keys, base_point)
    from .io import json_writer, parquet_writer, text_writer, write_files_atomic

    # runs cut off at max_time: their FCT statistics are over the finished flows only
    cut = [p for p in unique if data[p.run_id]["run"].get("flows_unfinished", 0) > 0]
    if cut:
        flows = sum(data[p.run_id]["run"]["flows_unfinished"] for p in cut)
        w = f"{len(cut)} of {len(unique)} runs ended with unfinished flows ({flows:,} in all; their FCT statistics are over the finished flows), first: {_describe(cut[0])}"
        warnings.warn(w, DcnsimWarning, stacklevel=2)
        warns = warns + [w]
    meta = {"runs": len(points), "distinct_runs": len(unique), "warnings": warns}
    files = {"sweep.parquet": parquet_writer(table), "sweep_summary.csv": csv_writer(summary), "sweep.json": json_writer(meta)}
    if points and points[0].base[0]:  # the scenario as given, for the report and for rerunning
        files[f"scenario.{points[0].base[1]}"] = text_writer(points[0].base[0])
    write_files_atomic(out, files)
    if points and points[0].values:
        plot = plot_sweep(summary, points[0].values[0][0])
        if plot is not None:

            write_files_atomic(out, {"sweep.png": png_writer(plot)})
    return {"ran": len(todo), "skipped": skipped, "distinct": len(unique), "table": table, "summary": summary, "warnings": warns}


def _run_local(todo: Sequence[Point], jobs: Optional[int], finished: Any, threads: int = 1) -> None:
    workers = max(1, min(int(jobs or os.cpu_count() or 1), len(todo) or 1))

    def died(p: Any, e: BaseException) -> BaseException:
        # as compare says it: a worker killed (the kernel's OOM killer, a signal) breaks the pool
        return _core.SimulationError(f"sweep run {p.run_id} ({_describe(p)}): the worker process died ({e}); out of memory? try fewer --jobs")

    run_all(_run_point, [(p, (p, threads)) for p in todo], workers, lambda _, outcome: finished(outcome), died)


def _ray() -> Any:
    """The ray module, or the error that says how to install it."""
    try:
        import ray
    except ImportError:
        raise _core.ScenarioError("--cluster needs Ray: pip install 'dcnsim[ray]'") from None
    return ray


def _run_on_ray(todo: Sequence[Point], address: str, finished: Any, threads: int = 1) -> None:
    ray = _ray()
    import dcnsim

    package = str(Path(dcnsim.__file__).parent)
    for attempt in range(_RAY_INIT_ATTEMPTS):
        try:
            ray.init(address=address, runtime_env={"py_modules": [package]}, log_to_driver=False, ignore_reinit_error=True)
            break
        except ConnectionAbortedError as e:
            # the cluster answered but the server it starts for this client died (seen:
            # gRPC's fork handlers aborting it on a loaded machine); a new one usually starts
            ray.shutdown()
            if attempt + 1 == _RAY_INIT_ATTEMPTS:
                raise _core.ScenarioError(f"--cluster {address!r}: the Ray cluster could not start a client server ({_first_line(e)}), {attempt + 1} attempts") from None
            time.sleep(1.0 + attempt)
        except (ConnectionError, ValueError, RuntimeError) as e:
            raise _core.ScenarioError(f"--cluster {address!r}: cannot reach the Ray cluster ({_first_line(e)})") from None
    try:
        # a run split over threads asks the cluster for that many CPUs
        remote = ray.remote(num_cpus=threads)(_run_point)
        pending = [remote.remote(p, threads) for p in todo]
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            finished(ray.get(ready[0]))
    except BaseException:
        for ref in locals().get("pending", []):
            ray.cancel(ref, force=True)
        raise
    finally:
        ray.shutdown()


def _first_line(e: BaseException) -> str:
    lines = [x for x in str(e).splitlines() if x.strip()]
    return lines[0] if lines else type(e).__name__


def _describe(p: Point) -> str:
    vals = ", ".join(f"{k}={v!r}" for k, v in p.values)
    return ", ".join(x for x in (vals, f"variant {p.variant!r}" if p.variant else "", f"seed {p.seed}") if x)


def tidy(points: Sequence[Point], data: Dict[str, Dict[str, Any]]) -> Any:
    """One row per run and FCT bin, in grid order; where the flows have several tags, a
    ``tag`` column: "all" on the rows of every flow, then the same rows of each tag's."""
    import pandas as pd

    tagged = any(data[p.run_id].get("fct_by_tag") for p in points)
    rows = []
    for p in points:
        d = data[p.run_id]
        for tag, fct in [("all", d["fct"])] + list((d.get("fct_by_tag") or {}).items()):
            for b in fct:
                row: Dict[str, Any] = {k: v for k, v in p.values}
                row.update({"variant": p.variant or "", "seed": p.seed, "run_id": p.run_id})
                if tagged:
                    row["tag"] = tag
                row.update(b)
                row.update(d["run"])
                rows.append(row)
    df = pd.DataFrame(rows)
    for k, _ in points[0].values if points else []:
        # a column of one type: numbers stay numbers, anything mixed becomes text
        if df[k].map(type).nunique() > 1:
            df[k] = df[k].astype(str)
    return df


#: The statistics sweep_summary.csv holds per cell, each with how people read it: its
#: name, display format and the scale to that name's unit (sweep.png, the report).
METRICS = (
    ("mean_fct_us", "mean FCT (us)", "f1", 1.0),
    ("p99_fct_us", "p99 FCT (us)", "f1", 1.0),
    ("mean_slowdown", "mean slowdown", "f2", 1.0),
    ("drops", "drops", "int", 1.0),
    ("pause_frames", "PAUSE frames", "int", 1.0),
    ("max_queue_bytes", "max switch queue (KB)", "f1", 1e-3),
    ("flows_unfinished", "flows unfinished", "int", 1.0),
)


def _same(a: Any, b: Any) -> bool:
    """A swept value as the table holds it against one as written (``10``, ``10.0``, "10")."""
    if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
        return float(a) == float(b)
    return str(a) == str(b)


def _paired(rows: Sequence[Any], base: Dict[Tuple[Any, ...], Any], where: Sequence[str], metric: str) -> Tuple[float, float, bool]:
    """The relative change of ``metric``'s mean against the base rows paired with ``rows``
    (same ``where`` values), the half-width of the 95% CI of the paired differences
    relative to the base mean, and whether that CI excludes 0."""
    import pandas as pd

    pairs = [(r, base.get(tuple(r[c] for c in where))) for r in rows]
    diffs = [float(r[metric]) - float(b[metric]) for r, b in pairs if b is not None and pd.notna(r[metric]) and pd.notna(b[metric])]
    bmean = ci95([float(b[metric]) for _, b in pairs if b is not None and pd.notna(b[metric])])[0]
    d, h = ci95(diffs)
    ok = diffs and bmean not in (0, 0.0) and not math.isnan(bmean)
    change, half = (d / bmean, abs(h / bmean)) if ok else (float("nan"), float("nan"))
    return change, half, excludes_zero(d, h) is True


def baseline_of(keys: Sequence[str], points: Sequence["Point"], baseline: Optional[str] = None) -> Optional[Tuple[str, Any]]:
    """The point the others are compared with, as (swept key, value): ``baseline``
    ("KEY=VALUE") or, by default, the first value of the first swept key; None without a
    swept key. A key not swept or a value not among its values is refused, naming it."""
    if not keys:
        if baseline:
            raise _core.ScenarioError(f"--baseline {baseline}: nothing is swept")
        return None
    values = {k: list(dict.fromkeys(v for p in points for kk, v in p.values if kk == k)) for k in keys}
    if not baseline:
        return keys[0], values[keys[0]][0]
    key, sep, text = baseline.partition("=")
    if not sep or key not in values:
        raise _core.ScenarioError(f"--baseline: invalid value {baseline!r}, expected KEY=VALUE with KEY one of the swept keys ({', '.join(keys)})")
    v = parse_value(text)
    match = next((x for x in values[key] if _same(x, v)), None)
    if match is None:
        raise _core.ScenarioError(f"--baseline: {key} is not swept over {text!r}; its values: {', '.join(map(str, values[key]))}")
    return key, match


def summarize(table: Any, keys: Sequence[str], baseline: Optional[Tuple[str, Any]] = None) -> Any:
    """Mean and 95% CI half-width across seeds of each FCT statistic and run-level number,
    per swept values, variant and bin; for each variant after the first, the change
    against the first variant at the same point (paired by seed); with a ``baseline``
    (key, value), each cell's change against the cell where that key has that value and
    everything else is the same (``<metric>_vs_baseline``, paired by seed as well)."""
    metrics = [m for m, *_ in METRICS]
    tag = ["tag"] if "tag" in table.columns else []
    group = list(keys) + ["variant"] + tag + ["bin"]
    variants = list(dict.fromkeys(table["variant"].tolist())) if len(table) else []
    base = variants[0] if len(variants) > 1 else None
    # per (point, bin, seed): the base variant's values, for the paired differences
    where = list(keys) + tag + ["bin", "seed"]
    base_rows = {}
    if base is not None:
        for _, r in table[table["variant"] == base].iterrows():
            base_rows[tuple(r[c] for c in where)] = r
    # per (the other keys, variant, bin, seed): the baseline point's values
    other = [k for k in keys if baseline is None or k != baseline[0]] + ["variant"] + tag + ["bin", "seed"]
    point_rows = {}
    if baseline is not None:
        for _, r in table[[_same(x, baseline[1]) for x in table[baseline[0]]]].iterrows():
            point_rows[tuple(r[c] for c in other)] = r
    out = []
    for cell, g in table.groupby(group, sort=False, dropna=False):
        row = dict(zip(group, cell if isinstance(cell, tuple) else (cell,)))
        row["seeds"] = g["seed"].nunique()
        for m in metrics:
            mean, half = ci95(g[m].tolist())
            row[m] = mean
            row[f"{m}_ci95"] = half
        rows = [r for _, r in g.iterrows()]
        if base is not None and row["variant"] != base:
            # the change against the first variant, and whether the 95% CI of the paired
            # (same point, bin and seed) differences excludes 0
            for m in metrics:
                row[f"{m}_change"], row[f"{m}_change_ci95"], row[f"{m}_change_ci_excludes_0"] = _paired(rows, base_rows, where, m)
        if baseline is not None:
            row["baseline"] = f"{baseline[0]}={baseline[1]}"
            at_base = _same(row[baseline[0]], baseline[1])
            for m in metrics:
                paired = (float("nan"), float("nan"), False) if at_base else _paired(rows, point_rows, other, m)
                row[f"{m}_vs_baseline"], row[f"{m}_vs_baseline_ci95"], row[f"{m}_vs_baseline_ci_excludes_0"] = paired
        out.append(row)
    import pandas as pd

    return pd.DataFrame(out)


def plot_sweep(summary: Any, key: str, metric: str = "mean_fct_us") -> Any:
    """``metric`` against swept ``key``, a panel per flow-size bin with flows (the bins,
    then all flows), a line per variant with 95% CI error bars over seeds; where the
    summary has a baseline point, a second row of panels gives each point's change against
    it with the 95% CI of the paired (same seed) differences, so that a change the seeds
    cannot tell from noise is seen to reach 0. Sizes, rates and durations sit on a numeric
    axis in a readable unit (KB, Gbit/s, us), other values evenly in grid order, labelled.
    Cells of the other swept keys are averaged into one line each; per-tag rows are left
    out (the rows of all flows are drawn)."""
    import pandas as pd

    s = summary.copy()
    if "tag" in s.columns:
        s = s[s["tag"] == "all"]
    bins = [b for b in dict.fromkeys(s["bin"].tolist()) if s.loc[s["bin"] == b, metric].notna().any()]
    if s.empty or not bins:
        return None
    ylabel, yscale = next(((label, scale) for m, label, _, scale in METRICS if m == metric), (metric, 1.0))
    xlabel = key
    values = s[key].tolist()
    parsed = [_core.quantity(str(v)) if isinstance(v, str) else None for v in values]
    units = {q[1] for q in parsed if q is not None}
    if values and all(q is not None for q in parsed) and len(units) == 1:
        name, scale = axis_unit(max(q[0] for q in parsed), units.pop())
        s[key] = [q[0] / scale for q in parsed]
        xlabel = f"{key} ({name})"
    numeric = pd.api.types.is_numeric_dtype(s[key])
    order = list(dict.fromkeys(s[key].tolist()))
    versus = f"{metric}_vs_baseline" in s.columns and f"{metric}_vs_baseline_ci95" in s.columns
    rows = 2 if versus else 1
    fig = figure(max(7.2, 3.2 * len(bins)), 3.2 * rows + 0.8)

    def line(ax: Any, g: Any, y: str, err: str, factor: float, label: str) -> None:
        g = g.groupby(key, sort=False)[[y, err]].mean().reset_index()
        g = g.sort_values(key) if numeric else g.set_index(key).loc[[v for v in order if v in set(g[key])]].reset_index()
        x = g[key] if numeric else [order.index(v) for v in g[key]]
        ax.errorbar(x, g[y] * factor, yerr=g[err].fillna(0) * factor, marker="o", capsize=3, label=label)

    for col, b in enumerate(bins):
        at = s[s["bin"] == b]
        top = fig.add_subplot(rows, len(bins), col + 1)
        for variant, g in at.groupby("variant", sort=False):
            line(top, g, metric, f"{metric}_ci95", yscale, str(variant) or "base")
        top.set_title(f"{b} flows", fontsize="medium")
        top.set_ylabel(ylabel)
        top.ticklabel_format(axis="y", useOffset=False)
        panels = [top]
        if versus:
            low = fig.add_subplot(rows, len(bins), len(bins) + col + 1, sharex=top)
            g = at.copy()
            base = g[f"{metric}_vs_baseline"].isna() & g["baseline"].notna()
            # the baseline point itself: no change, by definition
            g.loc[base, f"{metric}_vs_baseline"] = 0.0
            g.loc[base, f"{metric}_vs_baseline_ci95"] = 0.0
            for variant, v in g.groupby("variant", sort=False):
                line(low, v, f"{metric}_vs_baseline", f"{metric}_vs_baseline_ci95", 100.0, str(variant) or "base")
            low.axhline(0.0, color="0.5", linewidth=0.8)
            low.set_ylabel("change vs baseline (%)")
            panels.append(low)
        for ax in panels:
            if not numeric:
                ax.set_xticks(range(len(order)))
                ax.set_xticklabels([str(v) for v in order])
            ax.grid(alpha=0.3)
        panels[-1].set_xlabel(xlabel)
    fig.axes[0].legend(fontsize="small")
    title = f"{ylabel} against {key}: mean, 95% CI over seeds"
    if versus:
        base = s["baseline"].dropna()
        title += f"\nbelow: change against {base.iloc[0] if len(base) else 'the baseline'}, 95% CI of the paired (same seed) differences"
    fig.suptitle(title, fontsize="medium")
    margins(fig, left=0.8, top=0.9 if versus else 0.6, bottom=0.6, wspace=0.7)
    return fig


def sweep(
    scenario: ScenarioLike,
    set: Union[None, Dict[str, Sequence[Any]], Sequence[str]] = None,
    *,
    seeds: Union[None, int, Sequence[int]] = None,
    variants: Optional[Sequence[str]] = None,
    outdir: Union[None, str, "os.PathLike[str]"] = None,
    jobs: Optional[int] = None,
    cluster: Optional[str] = None,
    progress: Union[bool, str] = False,
    threads: int = 1,
) -> Any:
    """Run a sweep and return its tidy table (what ``dcnsim sweep`` writes as
    sweep.parquet: one row per run and FCT size bin, a column per swept key, then
    ``variant``, ``seed``, ``run_id``, the FCT statistics and the run's drops, pauses and
    deepest queue); :func:`summarize` gives the means and confidence intervals over seeds.

    ``set``: ``{"switch.pfc.xoff": ["500KB", "750KB"]}`` or ``["switch.pfc.xoff=500KB,750KB"]``,
    added to (or replacing keys of) the scenario's ``[sweep]`` table. ``outdir``: keep each
    run's outputs there (a rerun skips the runs already there); by default they go to a
    temporary folder removed afterwards. ``threads``: split each run over this many
    threads (the table does not depend on it). Warnings (a swept key that does not apply to a
    variant, identical variants) are raised as :class:`dcnsim.DcnsimWarning`."""
    import tempfile

    if set is None:
        sets: List[Tuple[str, List[Any]]] = []
    elif isinstance(set, dict):
        sets = [(str(k), list(v) if isinstance(v, (list, tuple)) else [v]) for k, v in set.items()]
    else:
        sets = [parse_set(x) for x in set]
    points = grid(scenario, sets, seeds, list(variants) if variants else None)
    if outdir is not None:
        return run_sweep(points, outdir, jobs=jobs, progress=progress, cluster=cluster, threads=threads)["table"]
    remove_dead_temp_dirs()
    with tempfile.TemporaryDirectory(prefix=temp_dir_prefix()) as tmp:
        return run_sweep(points, tmp, jobs=jobs, progress=progress, cluster=cluster, threads=threads)["table"]
