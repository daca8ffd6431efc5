"""Runs written as they go (issue 38, part 1): ``dcnsim run -o`` and sweeps write
flows.parquet while the run goes, its rows as they become final, and compute the FCT table
from the file. What they write must be what ``dcnsim.run()`` holds in memory.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import dcnsim
from dcnsim import _core, api, tables
from dcnsim.api import resolve_scenario
from dcnsim.tables import FctAccumulator, fct_table

# each exercises a per-flow column or a late-packet path: PFC victims and pauses (roce
# incast), drops and retransmissions (lossy), QCN's reaction points, seed 001's closed-loop
# L2 generators (frame latency), SFC's paused time
STREAMED = [
    ("roce_incast_pfc", None),
    ("seed003_lossy_small", None),
    ("seed001_qcn_small", None),
    ("seed001_simple_small", None),
    ("seed004_sfc_fairness_intra", "SFC native+DCQCN"),
    ("seed004_sfc_fairness_intra", "SFC proxy+DCQCN"),
]

# what differs between two runs of the same thing
WALL = ("wall_time_s", "events_per_s", "fct")


def _fct_close(a: pd.DataFrame, b: pd.DataFrame) -> None:
    """Counts and percentiles equal; means to the last digits (an exact sum here, numpy's
    pairwise one there)."""
    assert list(a.columns) == list(b.columns)
    for col in a.columns:
        if col in ("mean_fct_us", "mean_slowdown"):
            np.testing.assert_allclose(a[col].to_numpy(float), b[col].to_numpy(float), rtol=1e-12, equal_nan=True)
        else:
            pd.testing.assert_series_equal(a[col], b[col], check_exact=True)


@pytest.mark.parametrize("name,variant", STREAMED)
def test_streamed_save_writes_what_the_run_holds(tmp_path, monkeypatch, name, variant):
    # small row groups: the file is written in several while the run goes
    monkeypatch.setattr(api._FlowsWriter, "ROWS", 64)
    whole = dcnsim.run(name, variant=variant)
    saved = api.run_saved(resolve_scenario(name), tmp_path, variant=variant)
    flows = pd.read_parquet(tmp_path / "flows.parquet")
    # rows in the order they became final; by id, the run's table
    by_id = flows.sort_values("flow_id", ignore_index=True)
    pd.testing.assert_frame_equal(by_id, whole.flows, check_exact=True)
    assert {k: v for k, v in saved.summary.items() if k not in WALL} == {k: v for k, v in whole.summary.items() if k not in WALL}
    _fct_close(saved.fct_table(), whole.fct_table())
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "ports.parquet"), whole.ports)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(saved.paths)
    if len(flows) > 200:
        assert pq.ParquetFile(tmp_path / "flows.parquet").metadata.num_row_groups > 1


def test_the_file_does_not_depend_on_how_often_rows_are_taken(tmp_path, monkeypatch):
    from dcnsim import driver

    monkeypatch.setattr(api._FlowsWriter, "ROWS", 500)
    src = resolve_scenario("seed003_lossy_small")
    files = []
    for first_chunk in (1_000, 3_000_000):
        monkeypatch.setattr(driver._Driver, "FIRST_CHUNK_PS", first_chunk)
        api.run_saved(src, tmp_path / str(first_chunk))
        files.append((tmp_path / str(first_chunk) / "flows.parquet").read_bytes())
    assert files[0] == files[1]


def test_rows_are_handed_out_as_they_become_final_and_forgotten():
    src = resolve_scenario("seed003_lossy_small")
    sim = _core.Simulation(src.text, src.format)
    sim.stream_flows()
    sim.run_until(sim.max_time_ps // 20)
    raw = sim.take_flows()
    assert raw is not None
    got = api.flows_frame(raw, sim.tags)
    assert len(got) > 0 and got["finished"].all(), "finished flows' rows come out before the end"
    assert sim.take_flows() is None, "each row once"
    while not sim.done:
        sim.run_until(sim.max_time_ps)
    later = api.flows_frame(sim.take_flows() or {"flow_id": ("<u8", b"")}, sim.tags)
    rest = api.flows_frame(sim.results()["flows"], sim.tags)
    ids = [*got["flow_id"], *later["flow_id"], *rest["flow_id"]]
    assert sorted(ids) == list(range(sim.flows_total)), "each row once: the run keeps only those not handed out"


def _random_flows(rng: np.random.Generator, n: int, ties: bool) -> pd.DataFrame:
    size = rng.choice([500, 5_000, 150_000, 3_000_000, 20_000_000], n) if ties else rng.integers(1, 30_000_000, n)
    fct = rng.choice([1_000_000, 2_000_000, 2_000_001], n) if ties else rng.lognormal(20, 2, n).astype(np.int64)
    finished = rng.random(n) > 0.1
    ideal = np.maximum(fct // 3, 1)
    slowdown = np.where(finished & (rng.random(n) > 0.05), fct / ideal, np.nan)
    df = pd.DataFrame(
        {
            "size_bytes": size.astype(np.uint64),
            "fct_ps": pd.array(np.where(finished, fct, 0), dtype="Int64").copy(),
            "finished": finished,
            "slowdown": np.where(finished, slowdown, np.nan),
        }
    )
    df.loc[~finished, "fct_ps"] = pd.NA
    return df


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_fct_accumulator_equals_fct_table(monkeypatch, seed, ties):
    rng = np.random.default_rng(seed)
    df = _random_flows(rng, int(rng.integers(1, 5_000)), ties)
    # a tiny selection limit makes it narrow value ranges over several passes
    monkeypatch.setattr(tables, "_SELECT_AT_MOST", int(rng.choice([1, 7, 1 << 20])))
    cuts = [0, *np.sort(rng.integers(0, len(df), 5)), len(df)]
    parts = [df.iloc[a:b] for a, b in zip(cuts[:-1], cuts[1:]) if b > a]
    for bins in (None, [1_000, 1_000_000], []):
        acc = FctAccumulator(bins)
        for p in parts:
            acc.add(p)
        _fct_close(acc.table(lambda: iter(parts[::-1])), fct_table(df, bins))


def test_cli_run_with_outdir_prints_the_same_table(tmp_path, dcnsim_cli):
    def table(*extra):
        r = dcnsim_cli("run", "seed003_lossy_small", "--no-progress", *extra)
        assert r.returncode == 0, r.stderr
        return [line for line in r.stdout.splitlines() if "│" in line]

    written = table("-o", str(tmp_path / "out"))
    assert (tmp_path / "out" / "flows.parquet").is_file()
    assert table() == written
    assert not [p for p in (tmp_path / "out").iterdir() if p.name.startswith(".")], "no temporary file is left"


def test_a_failed_streamed_run_leaves_nothing(tmp_path):
    with pytest.raises(dcnsim.ScenarioError):
        api.run_saved(api.ScenarioSource("[scenario]\nname = 'x'\n", "toml", "<t>"), tmp_path / "out")
    assert not (tmp_path / "out").exists()
