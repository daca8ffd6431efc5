"""Scenario sources: turn a path, a shipped scenario's name, TOML text or a dict into the
text the core reads, validate it, and list the shipped scenarios. Standard library and the
compiled core only, so that ``dcnsim --version``, ``validate`` and ``scenarios`` start
without importing pandas (issue 13: the command line answers in well under 0.1 s).
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
import os
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _core

ScenarioLike = Union[str, "os.PathLike[str]", Mapping[str, Any]]


def scenarios_dir() -> Any:
    """The directory (an importlib.resources Traversable) holding the shipped scenarios."""
    return resources.files("dcnsim").joinpath("scenarios")


def shipped_scenarios() -> Dict[str, Any]:
    """Shipped scenarios, ``{stem: Traversable}``, sorted by name."""
    d = scenarios_dir()
    try:
        entries = list(d.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return {}
    found = {e.name[: -len(".toml")]: e for e in entries if e.name.endswith(".toml") and e.is_file()}
    return dict(sorted(found.items()))


@dataclass(frozen=True)
class ScenarioSource:
    """A scenario resolved to the text handed to the core."""

    text: str
    format: str  # "toml" or "json"
    origin: str  # path, "shipped:NAME", "<string>" or "<dict>"

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except (OSError, ValueError):  # e.g. name too long, embedded NUL
        return False


def resolve_scenario(scenario: ScenarioLike) -> ScenarioSource:
    """Turn a path, a shipped-scenario name, a TOML string or a dict into scenario text.

    A string is TOML text if it spans several lines; otherwise an existing file, then a
    shipped scenario name, then single-line TOML (it contains ``=`` or starts with ``[``).
    Raises FileNotFoundError for a path that does not exist and ScenarioError for a name
    that is neither a file nor a shipped scenario.
    """
    if isinstance(scenario, Mapping):
        return ScenarioSource(json.dumps(_plain(scenario, ""), allow_nan=False), "json", "<dict>")
    if isinstance(scenario, os.PathLike):
        return _read_path(Path(scenario))
    if not isinstance(scenario, str):
        raise TypeError(
            "scenario must be a path, a shipped scenario name, a TOML string or a dict, "
            f"not {type(scenario).__name__}"
        )
    if "\n" in scenario:
        return ScenarioSource(scenario, "toml", "<string>")
    if not scenario.strip():
        raise _core.ScenarioError("scenario: empty; expected a path, a shipped scenario name or TOML text")
    path = Path(scenario)
    if _exists(path):
        return _read_path(path)
    has_sep = os.sep in scenario or "/" in scenario
    stem = scenario[: -len(".toml")] if scenario.endswith(".toml") else scenario
    shipped = shipped_scenarios()
    if not has_sep and stem in shipped:
        text = shipped[stem].read_text(encoding="utf-8")
        return ScenarioSource(text, "toml", f"shipped:{stem}")
    if scenario.endswith((".toml", ".json")) or (has_sep and "=" not in scenario):
        raise FileNotFoundError(f"scenario file not found: {scenario}")
    if "=" in scenario or scenario.lstrip().startswith("["):
        return ScenarioSource(scenario, "toml", "<string>")
    import difflib

    near = difflib.get_close_matches(stem, list(shipped), n=3, cutoff=0.75)
    # the nearest names where there are some; the whole list (dozens) only from `dcnsim scenarios`
    hint = f"; did you mean {' or '.join(repr(n) for n in near)}?" if near else f"; {len(shipped)} are shipped: `dcnsim scenarios` lists them"
    raise _core.ScenarioError(f"scenario {scenario!r} is neither a file nor a shipped scenario{hint}")


# A scenario file is a few kilobytes; a custom topology of thousands of links some
# hundreds. Anything larger (or endless, like /dev/zero) is refused before it is read.
MAX_SCENARIO_BYTES = 16 * 1024 * 1024


def _plain(v: Any, key: str) -> Any:
    """A scenario dict's value as plain JSON (numpy scalars, as a sweep over numpy arrays
    gives them, become Python numbers); a value a scenario cannot hold, or a NaN or
    infinity, is a ScenarioError naming its key."""
    if isinstance(v, (bool, str)):
        return v
    if hasattr(v, "dtype") and getattr(v, "shape", None) == ():
        v = v.item()  # numpy scalar
        if isinstance(v, bool):
            return v
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, numbers.Real):
        if not math.isfinite(v):
            raise _core.ScenarioError(f"{key}: invalid value {v!r}, expected a finite number")
        return float(v)
    if isinstance(v, Mapping):
        return {str(k): _plain(x, f"{key}.{k}" if key else str(k)) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x, f"{key}[{i}]") for i, x in enumerate(v)]
    raise _core.ScenarioError(
        f"{key or 'scenario'}: invalid value {v!r} ({type(v).__name__}), expected a number, "
        "string, boolean, list or table"
    )


def _read_path(path: Path) -> ScenarioSource:
    if path.is_dir():
        raise IsADirectoryError(f"scenario path is a directory: {path}")
    if not path.exists():
        raise FileNotFoundError(f"scenario file not found: {path}")
    if not path.is_file():
        raise _core.ScenarioError(f"{path}: not a regular file; expected a scenario file (TOML or JSON)")
    with open(path, "rb") as f:
        raw = f.read(MAX_SCENARIO_BYTES + 1)
    if len(raw) > MAX_SCENARIO_BYTES:
        raise _core.ScenarioError(f"{path}: larger than {MAX_SCENARIO_BYTES // (1024 * 1024)} MiB; expected a scenario file (a few KB)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _core.ScenarioError(
            f"{path}: not UTF-8 text (byte 0x{raw[e.start]:02x} at offset {e.start}); expected a UTF-8 TOML or JSON file"
        ) from None
    fmt = "json" if path.suffix.lower() == ".json" else "toml"
    return ScenarioSource(text, fmt, str(path))


def validate(scenario: ScenarioLike, *, variant: Optional[str] = None) -> Dict[str, Any]:
    """Parse and validate a scenario without running it (see ``_core.validate``)."""
    src = resolve_scenario(scenario)
    return _core.validate(src.text, src.format, variant)


def format_time_ps(ps: float) -> str:
    """Human-readable simulated time: ``1234567 -> "1.235 us"``."""
    ps = float(ps)
    for unit, scale in (("s", 1e12), ("ms", 1e9), ("us", 1e6), ("ns", 1e3)):
        if ps >= scale:
            return f"{ps / scale:.3f} {unit}"
    return f"{ps:.0f} ps"


def format_rate(x: float) -> str:
    """``3456789 -> "3.46M"``."""
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= scale:
            return f"{x / scale:.2f}{unit}"
    return f"{x:.0f}"


class DcnsimWarning(UserWarning):
    """A result that is valid but may not mean what it seems: two compared variants that
    resolve to the same scenario, a swept key that does not apply to a variant. Raised
    through :mod:`warnings` and written into the outputs' warnings as well."""


def inactive_warnings(summary: Mapping[str, Any]) -> List[str]:
    """One line per configured mechanism that never acted in a run: each declares its
    scenario key, what it counts and how often it acted (summary ``activity``), so that a
    "no effect" result cannot hide that nothing happened."""
    return [
        f"{a.get('key')} is configured but never acted: 0 {a.get('what')}"
        for a in summary.get("activity") or []
        if isinstance(a, Mapping) and not a.get("count")
    ]


def unfinished_warning(summary: Mapping[str, Any], where: str = "") -> Optional[str]:
    """The line a run with unfinished flows is warned with, or None: how many of the flows
    started and did not finish (they have rows in flows.parquet, ``where`` says so) and
    how many never started because the run ended before their start (a trace or a flow
    list reaching past ``max_time``; they have no rows)."""
    unfinished = int(summary.get("flows_unfinished", 0) or 0)
    if not unfinished:
        return None
    total = summary.get("flows_total")
    end = summary.get("end_reason", "?")
    started = summary.get("flows_started")
    never = total - started if isinstance(total, int) and isinstance(started, int) else 0
    total = f"{total:,}" if isinstance(total, int) else "?"
    if not never:
        return f"{unfinished:,} of {total} flows unfinished when the run ended (end: {end}){where}"
    cut = unfinished - never
    return (
        f"{unfinished:,} of {total} flows unfinished when the run ended (end: {end}): "
        f"{cut:,} started and did not finish{where}, {never:,} never started (they start after the run ended)"
    )


def scenario_warnings(info: Mapping[str, Any], label: Optional[str] = None) -> List[str]:
    """What ``validate`` found would make a run read as "no effect", for the scenario it
    validated: the document's lines, then the scenario's own (prefixed with ``label``)."""
    own = [f"{label}: {w}" if label else str(w) for w in info.get("warnings") or []]
    return [str(w) for w in info.get("document_warnings") or []] + own


def refuse_repeated_variants(variants: Sequence[str]) -> None:
    """A variant named twice would run, and count, twice: refused (compare and sweep)."""
    seen = set()
    for v in variants:
        if v in seen:
            raise _core.ScenarioError(f"variant {v!r} given more than once, expected each variant once")
        seen.add(v)


def identical_warnings(pairs: Sequence[Sequence[str]], chosen: Sequence[Optional[str]]) -> List[str]:
    """One line per pair of the compared variants that resolve to the same scenario."""
    return [
        f"variants {a!r} and {b!r} resolve to the same scenario: their comparison measures nothing"
        for a, b in pairs
        if a in chosen and b in chosen
    ]


def check_seed(seed: Any) -> None:
    """Raise ScenarioError unless ``seed`` is None or an integer in [0, 2^64)."""
    if seed is not None and (
        isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= int(seed) < 2**64
    ):
        raise _core.ScenarioError(f"seed = {seed!r}: expected an integer in [0, 2^64)")


#: Most runs one sweep or comparison may ask for. The list of runs (a sweep's points each
#: hold their scenario text) is built before the first one starts, so a slip such as
#: ``--seeds 100000000`` filled memory instead of being refused. The bound is generous:
#: 100,000 runs of a one-second simulation keep 16 cores busy for almost two hours.
MAX_RUNS = 100_000


def seed_list(spec: Any, key: str) -> List[int]:
    """The seeds a count N (1..N) or a list of distinct seeds names; ``key`` names the
    setting in errors (``seeds``, ``sweep.seeds``)."""
    if isinstance(spec, (list, tuple, range)):
        if len(spec) > MAX_RUNS:
            raise _core.ScenarioError(f"{key}: {len(spec)} seeds, expected at most {MAX_RUNS} (every seed is a run)")
        spec = list(spec)
    elif isinstance(spec, bool) or not isinstance(spec, numbers.Integral):
        raise _core.ScenarioError(f"{key}: invalid value {spec!r}, expected a count >= 1 or a list of distinct seeds")
    if isinstance(spec, numbers.Integral):
        if spec < 1:
            raise _core.ScenarioError(f"{key}: invalid value {spec}, expected a count >= 1 or a list of distinct seeds")
        if spec > MAX_RUNS:
            raise _core.ScenarioError(f"{key}: invalid value {spec}, expected a count of at most {MAX_RUNS} seeds (every seed is a run)")
        return list(range(1, int(spec) + 1))
    for s in spec:
        check_seed(s)
    if not spec or len(set(spec)) != len(spec):
        raise _core.ScenarioError(f"{key}: invalid value {list(spec)!r}, expected a count >= 1 or a list of distinct seeds")
    return [int(s) for s in spec]


def scenario_descriptions() -> List[Tuple[str, str]]:
    """``[(name, description)]`` of the shipped scenarios (from each ``[scenario]`` table)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.9/3.10 only
        import tomli as tomllib

    out = []
    for name, entry in shipped_scenarios().items():
        try:
            doc = tomllib.loads(entry.read_text(encoding="utf-8"))
            desc = str(doc.get("scenario", {}).get("description", ""))
        except Exception as e:  # a broken shipped file should not hide the others
            desc = f"(unreadable: {str(e).splitlines()[0] if str(e) else type(e).__name__})"
        out.append((name, desc))
    return out
