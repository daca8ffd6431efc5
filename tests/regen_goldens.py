"""Regenerate the golden results compared by tests/test_golden.py.

Usage (from the repository root, with dcnsim installed)::

    python tests/regen_goldens.py            # all goldens
    python tests/regen_goldens.py NAME ...   # only these

This is the only way the files in tests/goldens/ change: they are never edited by hand.
Regenerate them after an intended change in the simulator's behaviour, and review the
diff (``git diff tests/goldens``) before committing.

Each golden is the run of one scenario in tests/scenarios/ with a fixed seed, reduced to
its FCT-per-size-bin table (dcnsim.fct_table) and a few exact counters; ``golden_record``
below is shared with the test so that both compute exactly the same thing.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any, Dict, List

import dcnsim

HERE = Path(__file__).resolve().parent
SCENARIOS = HERE / "scenarios"
GOLDENS = HERE / "goldens"

#: name -> seed. The scenario is tests/scenarios/NAME.toml, the golden tests/goldens/NAME.json.
RUNS: Dict[str, int] = {
    "leaf_spine_small": 7,
}

#: FCT-table columns compared exactly (counts) and within a relative tolerance (times).
EXACT_FCT_COLUMNS = ("bin", "count", "unfinished")
APPROX_FCT_COLUMNS = ("mean_fct_us", "p50_fct_us", "p99_fct_us", "p999_fct_us", "mean_slowdown")


def _num(x: Any) -> Any:
    """JSON-safe scalar: ints stay ints, NaN becomes None."""
    if isinstance(x, str):
        return x
    if hasattr(x, "item"):
        x = x.item()
    if isinstance(x, float) and math.isnan(x):
        return None
    return x


def golden_record(name: str, seed: int) -> Dict[str, Any]:
    """Run scenario ``name`` with ``seed`` and reduce it to the golden record."""
    res = dcnsim.run(SCENARIOS / f"{name}.toml", seed=seed)
    s, flows, ports = res.summary, res.flows, res.ports
    table: List[Dict[str, Any]] = [
        {k: _num(v) for k, v in row.items()} for row in res.fct_table().to_dict(orient="records")
    ]
    by_tag = flows.groupby("tag", observed=True).size()
    counters = {
        "end_reason": s["end_reason"],
        "flows_total": int(s["flows_total"]),
        "flows_finished": int(s["flows_finished"]),
        "flows_unfinished": int(s["flows_unfinished"]),
        "flows_by_tag": {str(k): int(v) for k, v in sorted(by_tag.items())},
        "packets_created": int(s["packets_created"]),
        "packets_dropped": int(s["packets_dropped"]),
        "ecn_marks": int(s["ecn_marks"]),
        "flow_drops": int(flows["drops"].sum()),
        "flow_ecn_marks": int(flows["ecn_marks"].sum()),
        "flow_retx": int(flows["retx"].sum()),
        "port_drops_buffer_full": int(ports["drops_buffer_full"].sum()),
        "port_drops_aqm": int(ports["drops_aqm"].sum()),
        "port_tx_bytes": int(ports["tx_bytes"].sum()),
        "port_tx_packets": int(ports["tx_packets"].sum()),
        "delivered_bytes": int(flows["delivered_bytes"].sum()),
    }
    return {
        "scenario": f"tests/scenarios/{name}.toml",
        "seed": seed,
        "generated_with_version": s.get("version"),
        "sim_time_ps": int(s["sim_time_ps"]),
        "fct_table": table,
        "counters": counters,
    }


def write_golden(name: str) -> Path:
    record = golden_record(name, RUNS[name])
    GOLDENS.mkdir(parents=True, exist_ok=True)
    path = GOLDENS / f"{name}.json"
    path.write_text(json.dumps(record, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    return path


def main(argv: List[str]) -> int:
    names = argv or list(RUNS)
    unknown = [n for n in names if n not in RUNS]
    if unknown:
        print(f"error: unknown golden(s) {unknown}; known: {list(RUNS)}", file=sys.stderr)
        return 2
    for n in names:
        path = write_golden(n)
        print(f"wrote {path.relative_to(HERE.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
