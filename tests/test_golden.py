"""Golden test: a scaled-down leaf-spine web-search + incast run against stored results.

The golden (tests/goldens/leaf_spine_small.json) holds the FCT-per-size-bin table and a
few counters of tests/scenarios/leaf_spine_small.toml with a fixed seed. The run is
deterministic, so any difference means the engine's behaviour changed. Counts, drops,
marks and other counters must match exactly; FCT means, percentiles and slowdowns within
FCT_REL_TOL (2%), which absorbs floating-point differences in the table computation
across numpy versions but not a change of behaviour (a single extra RTO moves a bin's
mean by far more).

If the change was intended, regenerate with ``python tests/regen_goldens.py`` and review
the diff; never edit the golden by hand.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("regen_goldens", HERE / "regen_goldens.py")
regen = importlib.util.module_from_spec(_spec)
assert _spec.loader is not None
_spec.loader.exec_module(regen)

FCT_REL_TOL = 0.02

REGEN_HINT = (
    "The engine's behaviour changed. If this change is intended, regenerate the golden with "
    "`python tests/regen_goldens.py` and review `git diff tests/goldens` before committing; "
    "otherwise this is a regression."
)


@pytest.fixture(scope="module", params=sorted(regen.RUNS))
def golden_pair(request):
    name = request.param
    path = regen.GOLDENS / f"{name}.json"
    assert path.exists(), f"missing golden {path}; create it with `python tests/regen_goldens.py {name}`"
    expected = json.loads(path.read_text(encoding="utf-8"))
    actual = regen.golden_record(name, regen.RUNS[name])
    return name, expected, actual


def test_golden_is_current_scenario(golden_pair):
    name, expected, actual = golden_pair
    assert expected["scenario"] == actual["scenario"]
    assert expected["seed"] == actual["seed"], (
        f"{name}: the golden was made with seed {expected['seed']}, RUNS says {actual['seed']}. " + REGEN_HINT
    )


def test_golden_counters(golden_pair):
    name, expected, actual = golden_pair
    diffs = {
        k: (v, actual["counters"].get(k))
        for k, v in expected["counters"].items()
        if actual["counters"].get(k) != v
    }
    missing = set(actual["counters"]) - set(expected["counters"])
    assert not diffs and not missing, f"{name}: counters differ (golden, now): {diffs}; new: {missing}. " + REGEN_HINT


def test_golden_fct_table(golden_pair):
    name, expected, actual = golden_pair
    exp_rows, act_rows = expected["fct_table"], actual["fct_table"]
    assert [r["bin"] for r in act_rows] == [r["bin"] for r in exp_rows], f"{name}: bins differ. " + REGEN_HINT
    problems = []
    for e, a in zip(exp_rows, act_rows):
        for col in regen.EXACT_FCT_COLUMNS:
            if e[col] != a[col]:
                problems.append(f"{e['bin']}.{col}: golden {e[col]}, now {a[col]}")
        for col in regen.APPROX_FCT_COLUMNS:
            ev, av = e[col], a[col]
            if ev is None or av is None:  # empty bin: both must be empty
                if (ev is None) != (av is None):
                    problems.append(f"{e['bin']}.{col}: golden {ev}, now {av}")
                continue
            if not math.isclose(av, ev, rel_tol=FCT_REL_TOL):
                problems.append(f"{e['bin']}.{col}: golden {ev:.3f}, now {av:.3f} ({av / ev - 1:+.2%})")
    assert not problems, f"{name}: FCT table differs beyond {FCT_REL_TOL:.0%}:\n  " + "\n  ".join(problems) + "\n" + REGEN_HINT


def test_golden_run_end_time(golden_pair):
    name, expected, actual = golden_pair
    e, a = expected["sim_time_ps"], actual["sim_time_ps"]
    assert math.isclose(a, e, rel_tol=FCT_REL_TOL), (
        f"{name}: the run ended at {a} ps, golden {e} ps ({a / e - 1:+.2%}). " + REGEN_HINT
    )


def test_golden_exercises_the_fabric(golden_pair):
    """The golden scenario must keep exercising what it is meant to: finished web-search and
    incast flows in several size bins, ECN marks and buffer drops (so that their exact
    counts are meaningful)."""
    name, expected, _ = golden_pair
    c = expected["counters"]
    assert c["flows_finished"] == c["flows_total"] > 100
    assert set(c["flows_by_tag"]) == {"background", "incast"}
    assert c["ecn_marks"] > 0 and c["packets_dropped"] > 0 and c["flow_retx"] > 0
    assert sum(1 for r in expected["fct_table"] if r["bin"] != "all" and r["count"] > 0) >= 3
