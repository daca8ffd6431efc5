"""Studies that regenerate: what a study is, how its runs are made and reduced to the values
the docs quote, the results file that records them with their provenance, and the engine
fingerprint that tells when a model change has moved a study.

A :class:`Study` names a shipped scenario (its ``_small`` twin for ``--scale small``), the
cases it runs (the scenario as shipped, or edited: another placement, another congestion
control), the variants, and a per-run ``metrics`` function that reduces one run to a flat
dict of numbers. :func:`reproduce` runs every (case, variant, seed) job in a process pool
and writes ``docs/results/STUDY.SCALE.json``: every run's values, the seeds, the scale, the
commit, the date and the study's engine fingerprint. The docs' tables are rendered from
those files (:mod:`dcnsim.reproduce.render`), never typed in.

The fingerprint of a study is a hash of the outputs (flows, ports, summary) of every case
and variant of its small scenario at seed 1: cheap enough for CI, and moved by any model
change that moves the study (a change that moved only the full-size fabric would escape it;
none of the model changes the audit of issue 53 listed would have).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import os
import subprocess
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

import numpy as np

#: Where results files live, relative to the repository root.
RESULTS_DIR = Path("docs") / "results"
#: Results file format; bump on an incompatible change of the layout below or of the
#: fingerprints' hash (2: the output hash leaves out :data:`DESCRIPTIVE_KEYS`; 3: and the
#: scenario text's hash).
FORMAT = 3
SCALES = ("small", "full")

Metrics = Callable[[Any, Dict[str, Any]], Dict[str, Any]]


@dataclass(frozen=True)
class Case:
    """One set-up of a study: the shipped scenario (``edit`` None) or the scenario dict
    passed through ``edit`` (a module-level function, so that worker processes can pickle
    it), e.g. another placement of the servers or another congestion control."""

    label: str
    edit: Optional[Callable[[Dict[str, Any]], Dict[str, Any]]] = None
    #: the variants of this case (None: the study's)
    variants: Optional[Tuple[str, ...]] = None


@dataclass(frozen=True)
class Study:
    """One reproduction: a source's experiment, or a study of our own, run on today's
    engine by ``dcnsim reproduce NAME``."""

    name: str
    #: what it reproduces, one line (``dcnsim reproduce --list``)
    title: str
    #: the shipped scenario of ``--scale full``; ``--scale small`` runs ``{scenario}_small``
    scenario: str
    metrics: Metrics
    cases: Tuple[Case, ...] = (Case("shipped"),)
    #: the variants to run (None: every variant of the scenario)
    variants: Optional[Tuple[str, ...]] = None
    scales: Tuple[str, ...] = SCALES
    #: seeds 1..N by default
    seeds: int = 5
    #: CPU-seconds of the whole study per scale, estimated before its first run (``--list``
    #: shows the measured time of the results file instead, once there is one)
    cost_s: Mapping[str, float] = field(default_factory=dict)
    #: the scenario whose seed-1 outputs fingerprint the study (default: the small one)
    fingerprint_scenario: Optional[str] = None

    def scenario_for(self, scale: str) -> str:
        if scale not in self.scales:
            raise ValueError(f"study {self.name!r} has no scale {scale!r} (it has {', '.join(self.scales)})")
        return self.scenario if scale == "full" else f"{self.scenario}_small"

    def case(self, label: str) -> Case:
        for c in self.cases:
            if c.label == label:
                return c
        raise KeyError(label)


# --------------------------------------------------------------------------- scenarios


def scenario_dict(name: str) -> Dict[str, Any]:
    """A shipped scenario as a dict."""
    from ..sources import resolve_scenario

    return tomllib.loads(resolve_scenario(name).text)


def case_scenario(study: Study, case: Case, scale: str) -> Dict[str, Any]:
    """The scenario dict a case runs at a scale."""
    sc = scenario_dict(study.scenario_for(scale))
    return case.edit(sc) if case.edit else sc


def variants_of(study: Study, case: Case, scale: str) -> List[str]:
    """The variants a case runs (every variant of its scenario unless the case or the study
    names some)."""
    wanted = case.variants or study.variants
    if wanted is not None:
        return list(wanted)
    names = [v["name"] for v in case_scenario(study, case, scale).get("variant", [])]
    return names or [""]  # a scenario without variants runs once, as itself


def inputs_hashes(study: Study, scale: str) -> Dict[str, str]:
    """``{"case|variant": hash}`` of what each set-up runs at a scale: its case's scenario
    with that variant's table only (editing another variant leaves it alone). Files the
    scenario names (traces, size distributions) are not in it."""
    out: Dict[str, str] = {}
    for case in study.cases:
        sc = case_scenario(study, case, scale)
        rest = {k: v for k, v in sc.items() if k != "variant"}
        for variant in variants_of(study, case, scale):
            chosen = [v for v in sc.get("variant", []) if v.get("name") == variant]
            text = json.dumps({**rest, "variant": chosen}, sort_keys=True, default=str)
            out[f"{case.label}|{variant}"] = hashlib.sha256(text.encode()).hexdigest()[:16]
    return out


# --------------------------------------------------------------------------- one run


def _run(scenario: Dict[str, Any], variant: str, seed: int, threads: int) -> Any:
    from ..api import run_source
    from ..sources import resolve_scenario

    return run_source(resolve_scenario(scenario), seed=seed, variant=variant or None, threads=threads)


def run_job(study_name: str, case_label: str, scale: str, variant: str, seed: int, threads: int) -> Dict[str, Any]:
    """One (case, variant, seed) run of a study, reduced to its metrics (in a worker)."""
    from .studies import STUDIES

    study = STUDIES[study_name]
    case = study.case(case_label)
    sc = case_scenario(study, case, scale)
    t0 = time.perf_counter()
    r = _run(sc, variant, seed, threads)
    values = study.metrics(r, sc)
    values["_wall_s"] = round(time.perf_counter() - t0, 3)
    values["_threads"] = threads
    values["_events"] = int(r.summary.get("events", 0))
    values["_end_reason"] = str(r.summary.get("end_reason"))
    return values


#: summary keys that describe a run rather than measure it (the wall clock, the engine's
#: version, the comparison rows and plot notes the mechanisms declare, how often they acted,
#: which is in their counters already, and warnings made from the scenario, and the hash of
#: the scenario's whole text, which a comment or another variant's table moves: a results
#: file records each set-up's own inputs instead, :func:`inputs_hashes`): an output hash
#: leaves them out, so that a change of what the outputs say about themselves does not read
#: as a model change
DESCRIPTIVE_KEYS = frozenset({"wall_time_s", "events_per_s", "version", "metrics", "queue_notes", "activity", "warnings", "scenario_sha256"})


def output_hash(r: Any, leave_out: frozenset = DESCRIPTIVE_KEYS, added: frozenset = frozenset()) -> str:
    """A machine-independent hash of what a run produced: the flows and ports tables
    column by column (values, not file bytes) and the summary without ``leave_out``;
    ``added``: outputs (columns or summary keys) to leave out as well, to hash a run as an
    engine without them would have made it (:func:`added_outputs_job`)."""
    h = hashlib.sha256()
    for table in (r.flows, r.ports):
        for col in table.columns:
            if col in added:
                continue
            h.update(col.encode())
            s = table[col]
            if s.dtype.kind in "biuf":
                h.update(np.ascontiguousarray(s.to_numpy()).tobytes())
            else:  # strings, categories, nullable integers: their text, missing values empty
                h.update("\x1f".join("" if v is None or v != v or str(v) == "<NA>" else str(v) for v in s.tolist()).encode())
    summ = {k: v for k, v in r.summary.items() if k not in leave_out and k not in added}
    h.update(json.dumps(summ, sort_keys=True, default=str).encode())
    return h.hexdigest()[:16]


def _fingerprint_run(study_name: str, case_label: str, variant: str) -> Tuple[Any, Dict[str, Any]]:
    """One case and variant of a study's fingerprint scenario run at seed 1, and what the
    study's metrics make of it."""
    from .studies import STUDIES

    study = STUDIES[study_name]
    case = study.case(case_label)
    sc = scenario_dict(study.fingerprint_scenario or f"{study.scenario}_small")
    if case.edit:
        sc = case.edit(sc)
    r = _run(sc, variant, 1, 1)
    return r, clean(study.metrics(r, sc))


def metrics_hash(values: Dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(values, sort_keys=True, default=str).encode()).hexdigest()[:16]


def fingerprint_job(study_name: str, case_label: str, variant: str) -> Tuple[str, str]:
    """The fingerprints of one case and variant of a study's fingerprint scenario at seed 1:
    the hash of the engine's outputs, and the hash of what the study's metrics make of them
    (so that a change of the metrics code, which leaves the engine alone, is caught too)."""
    r, values = _fingerprint_run(study_name, case_label, variant)
    return output_hash(r), metrics_hash(values)


def added_outputs_job(study_name: str, case_label: str, variant: str, added: Tuple[str, ...]) -> Tuple[str, str, str, str]:
    """:func:`fingerprint_job`'s two fingerprints, each followed by the same without the
    outputs ``added``: what an engine that lacked them gave, where adding them changed
    nothing else. The metrics lose the values they take from those outputs: the summary
    counters every study keeps (``s.KEY``, :func:`metrics.summary_metrics`)."""
    r, values = _fingerprint_run(study_name, case_label, variant)
    without = {k: v for k, v in values.items() if not (k.startswith("s.") and k[2:] in added)}
    return output_hash(r), output_hash(r, added=frozenset(added)), metrics_hash(values), metrics_hash(without)


def fingerprint_jobs(study: Study) -> List[Tuple[str, str]]:
    """The (case, variant) pairs whose seed-1 outputs fingerprint a study."""
    out = []
    for case in study.cases:
        sc = scenario_dict(study.fingerprint_scenario or f"{study.scenario}_small")
        if case.edit:
            sc = case.edit(sc)
        names = case.variants or study.variants or [v["name"] for v in sc.get("variant", [])] or [""]
        out += [(case.label, v) for v in names]
    return out


# --------------------------------------------------------------------------- provenance


def git_commit(root: Path) -> str:
    """The commit the engine and the studies were built from: ``DCNSIM_COMMIT`` where set
    (a copy of the tree without .git), else the checkout's HEAD, with "-dirty" where the
    code (crates/, python/) has changes or new files git does not ignore that HEAD lacks;
    "unknown" outside a checkout."""
    env = os.environ.get("DCNSIM_COMMIT")
    if env:
        return env

    def git(*args: str) -> Optional[str]:
        try:
            out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.strip() if out.returncode == 0 else None

    head = git("rev-parse", "--short=7", "HEAD")
    if not head:
        return "unknown"
    return head + ("-dirty" if git("status", "--porcelain", "--", "crates", "python") else "")


def repo_root(start: Optional[Path] = None) -> Path:
    """The repository root: the nearest folder above ``start`` (default: the current
    folder) that holds ``docs/`` and ``scenarios/`` or ``python/dcnsim``."""
    p = (start or Path.cwd()).resolve()
    for d in (p, *p.parents):
        if (d / "docs").is_dir() and ((d / "python" / "dcnsim").is_dir() or (d / ".git").exists()):
            return d
    raise FileNotFoundError(f"no dcnsim checkout (a folder with docs/ and python/dcnsim/) at or above {p}")


def results_path(root: Path, study: str, scale: str) -> Path:
    return root / RESULTS_DIR / f"{study}.{scale}.json"


def load_results(path: Path) -> Dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("format") != FORMAT:
        raise ValueError(f"{path}: results format {data.get('format')!r}, expected {FORMAT}")
    return data


def write_results(path: Path, data: Dict[str, Any]) -> None:
    """Write atomically: a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True, default=_json_default) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _json_default(x: Any) -> Any:
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    if isinstance(x, np.bool_):
        return bool(x)
    raise TypeError(f"not JSON: {type(x).__name__}")


def run_threads(run: Dict[str, Any], data: Dict[str, Any]) -> int:
    """The threads a recorded run was split over: its own record, else its file's (runs
    made before 2026-11-30 record none; a file then held runs of one thread count)."""
    return int(run.get("_threads") or data.get("threads", 1))


def thread_counts(data: Dict[str, Any]) -> List[int]:
    """The thread counts a results file's runs were split over, ascending (several where
    `--moved` kept runs of another count)."""
    return sorted({run_threads(r, data) for c in data["runs"].values() for v in c.values() for r in v.values()})


def run_cpu_s(run: Dict[str, Any], data: Dict[str, Any]) -> float:
    """A recorded run's CPU cost: its wall time on each of its threads."""
    return float(run.get("_wall_s", 0.0)) * run_threads(run, data)


def clean(values: Dict[str, Any]) -> Dict[str, Any]:
    """Values as JSON keeps them: floats rounded to 6 significant digits (a results file
    that changes in the 12th digit on another libm would be noise), NaN as None."""
    out: Dict[str, Any] = {}
    for k, v in values.items():
        if isinstance(v, (np.integer, int)) and not isinstance(v, bool):
            out[k] = int(v)
        elif isinstance(v, (np.floating, float)):
            f = float(v)
            out[k] = None if math.isnan(f) or math.isinf(f) else float(f"{f:.6g}")
        else:
            out[k] = v
    return out


def today() -> str:
    return _dt.date.today().isoformat()
