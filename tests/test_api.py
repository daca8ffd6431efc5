"""End-to-end tests of the Python API: dcnsim.run, Result, fct_table, save."""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dcnsim
from dcnsim.api import OUTPUT_FILES, SCENARIO_FILES
from dcnsim.tables import DEFAULT_FCT_BINS, FCT_TABLE_COLUMNS, bin_labels, format_size

from conftest import TINY_MIN_MAKESPAN_PS, tiny

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

FLOW_COLUMNS = [
    "flow_id", "src", "dst", "size_bytes", "start_ps", "end_ps", "fct_ps", "ideal_fct_ps",
    "slowdown", "priority", "tag", "finished", "drops", "ecn_marks", "retx",
]
PORT_COLUMNS = [
    "node", "node_name", "port", "peer_node", "peer_name", "queue",
    "tx_bytes", "tx_packets", "drops", "ecn_marks", "max_depth_bytes", "mean_depth_bytes",
]
SUMMARY_KEYS = [
    "scenario", "variant", "seed", "sim_time_ps", "events", "flows_total", "flows_finished",
    "flows_unfinished", "end_reason", "fct_bins", "hosts", "switches", "version",
    "wall_time_s", "events_per_s", "scenario_sha256", "fct",
]


@pytest.fixture(scope="module")
def tiny_result() -> dcnsim.Result:
    return dcnsim.run(tiny())


def test_package_surface():
    assert isinstance(dcnsim.__version__, str) and dcnsim.__version__
    assert issubclass(dcnsim.ScenarioError, dcnsim.DcnsimError)
    assert issubclass(dcnsim.SimulationError, dcnsim.DcnsimError)
    assert issubclass(dcnsim.DcnsimError, Exception)
    assert callable(dcnsim.run) and callable(dcnsim.fct_table)


def test_run_flows(tiny_result):
    flows = tiny_result.flows
    assert set(FLOW_COLUMNS) <= set(flows.columns), set(FLOW_COLUMNS) - set(flows.columns)
    assert len(flows) == 2
    assert flows["finished"].dtype == bool and flows["finished"].all()
    assert str(flows["end_ps"].dtype) == "Int64" and str(flows["fct_ps"].dtype) == "Int64"
    assert isinstance(flows["tag"].dtype, pd.CategoricalDtype)
    assert flows["tag"].notna().all()
    assert flows["flow_id"].is_monotonic_increasing
    assert sorted(flows["src"]) == [0, 1] and set(flows["dst"]) == {2}
    assert (flows["size_bytes"] == 100_000).all()
    # Consistency of the per-flow record.
    assert (flows["end_ps"] == flows["start_ps"].astype("Int64") + flows["fct_ps"]).all()
    assert (flows["fct_ps"] >= flows["ideal_fct_ps"].astype("Int64")).all()
    np.testing.assert_allclose(
        flows["slowdown"], flows["fct_ps"].astype(float) / flows["ideal_fct_ps"].astype(float), rtol=1e-9
    )
    # A 100 KB flow alone needs at least its serialization time at 10 Gb/s.
    assert (flows["ideal_fct_ps"] >= 100_000 * 8 * 100).all()
    # Two flows share one 10 Gb/s bottleneck: the last cannot finish before 160 us.
    assert int(flows["end_ps"].max()) >= TINY_MIN_MAKESPAN_PS


def test_run_ports(tiny_result):
    ports = tiny_result.ports
    for col in PORT_COLUMNS:
        assert col in ports.columns, col
    assert len(ports) > 0
    assert ports["node_name"].notna().all() and ports["peer_name"].notna().all()
    # The 200 KB of payload crossed the bottleneck, so the fabric carried at least that.
    assert int(ports["tx_bytes"].max()) >= 200_000


def test_summary(tiny_result, tiny_toml):
    s = tiny_result.summary
    for key in SUMMARY_KEYS:
        assert key in s, key
    assert s["scenario"] == "tiny"
    assert s["seed"] == 1
    assert s["flows_total"] == 2 and s["flows_finished"] == 2 and s["flows_unfinished"] == 0
    assert s["scenario_sha256"] == hashlib.sha256(tiny_toml.encode()).hexdigest()
    assert s["version"] == dcnsim.__version__
    assert s["events"] > 0 and s["sim_time_ps"] > 0
    assert [r["bin"] for r in s["fct"]] == bin_labels(s["fct_bins"]) + ["all"]
    json.dumps(s)  # JSON-serialisable as is


def test_fct_table_of_run(tiny_result):
    table = tiny_result.fct_table()
    assert list(table.columns) == list(FCT_TABLE_COLUMNS)
    assert list(table["bin"]) == bin_labels(tiny_result.summary["fct_bins"]) + ["all"]
    all_row = table.iloc[-1]
    assert all_row["count"] == 2 and all_row["unfinished"] == 0
    assert table["count"].iloc[:-1].sum() == 2
    # Both flows are 100 KB, i.e. in the 100KB-1MB bin with the default edges.
    assert dcnsim.fct_table(tiny_result.flows).set_index("bin").loc["100KB-1MB", "count"] == 2
    assert all_row["mean_slowdown"] >= 1.0
    assert all_row["p50_fct_us"] <= all_row["p99_fct_us"] <= all_row["p999_fct_us"]


def test_seed_override():
    assert dcnsim.run(tiny(), seed=7).summary["seed"] == 7


@pytest.mark.parametrize("bad", [-1, 2**64, "3", 1.5, True])
def test_bad_seed_is_scenario_error(bad):
    with pytest.raises(dcnsim.ScenarioError):
        dcnsim.run(tiny(), seed=bad)


def test_unfinished_flows_are_null(tmp_path):
    res = dcnsim.run(tiny(max_time="1us"))
    flows = res.flows
    assert len(flows) == 2
    assert not flows["finished"].any()
    assert flows["end_ps"].isna().all() and flows["fct_ps"].isna().all()
    assert flows["slowdown"].isna().all()
    assert res.summary["flows_unfinished"] == 2 and res.summary["flows_finished"] == 0
    assert res.summary["end_reason"]
    table = res.fct_table()
    assert table.iloc[-1]["unfinished"] == 2 and table.iloc[-1]["count"] == 0
    assert math.isnan(table.iloc[-1]["mean_fct_us"])
    # Nulls survive the round trip through Parquet; summary.json stays strict JSON.
    res.save(tmp_path)
    back = pd.read_parquet(tmp_path / "flows.parquet")
    assert back["end_ps"].isna().all() and back["fct_ps"].isna().all()
    assert not back["finished"].any()
    summary = json.loads((tmp_path / "summary.json").read_text(), parse_constant=pytest.fail)
    assert summary["flows_unfinished"] == 2


def test_save_writes_the_tables_and_the_scenario(tiny_result, tmp_path):
    out = tmp_path / "a" / "b"
    paths = tiny_result.save(out)
    fmt = tiny_result.source.format
    assert sorted(os.listdir(out)) == sorted(OUTPUT_FILES + (f"scenario.{fmt}",))
    assert {p.name for p in paths.values()} == set(OUTPUT_FILES + (f"scenario.{fmt}",))
    assert (out / f"scenario.{fmt}").read_text() == tiny_result.source.text
    assert f"scenario.{fmt}" in SCENARIO_FILES
    flows = pd.read_parquet(out / "flows.parquet")
    assert list(flows.columns) == list(tiny_result.flows.columns)
    pd.testing.assert_frame_equal(flows, tiny_result.flows)
    ports = pq.read_table(out / "ports.parquet").to_pandas()
    assert list(ports.columns) == list(tiny_result.ports.columns)
    summary = json.loads((out / "summary.json").read_text())
    for key in SUMMARY_KEYS:
        assert key in summary


def test_save_leaves_no_stale_outputs_of_an_earlier_save(tiny_result, tmp_path):
    """Saving into a directory that holds an earlier run's outputs: the optional files this
    run does not write (the scenario in the other format, queues.parquet of a run that
    sampled queues) are removed, so report cannot pair the old scenario with the new
    results; files that are not dcnsim's stay."""
    out = tmp_path / "d"
    sampled = dcnsim.run(tiny().replace("[transport]", '[metrics]\nqueue_sample = "1us"\n\n[transport]'))
    sampled.save(out)
    assert (out / "queues.parquet").is_file() and (out / "scenario.toml").is_file()
    (out / "notes.txt").write_text("mine")
    (out / "plots").mkdir()
    as_dict = dcnsim.run(tomllib.loads(tiny()))
    assert as_dict.source.format == "json" and not len(as_dict.queues)
    as_dict.save(out)
    assert sorted(os.listdir(out)) == sorted(OUTPUT_FILES + ("scenario.json", "notes.txt", "plots"))
    assert json.loads((out / "summary.json").read_text())["scenario_sha256"] == as_dict.summary["scenario_sha256"]


def test_save_is_atomic_on_failure(tiny_result, tmp_path, monkeypatch):
    import dcnsim.api as api

    (tmp_path / "summary.json").write_text("old")

    def broken_json_writer(data):
        def write(path):
            with open(path, "w") as f:
                f.write('{"half": ')
            raise RuntimeError("disk full")

        return write

    monkeypatch.setattr(api, "json_writer", broken_json_writer)
    with pytest.raises(RuntimeError, match="disk full"):
        tiny_result.save(tmp_path)
    # Nothing was renamed into place, the old file is untouched, no temp files remain.
    assert sorted(os.listdir(tmp_path)) == ["summary.json"]
    assert (tmp_path / "summary.json").read_text() == "old"


def test_deterministic_outputs(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    dcnsim.run(tiny(), seed=3).save(a)
    dcnsim.run(tiny(), seed=3).save(b)
    for name in ("flows.parquet", "ports.parquet"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_scenario_inputs_agree(tmp_path, tiny_toml):
    """A TOML string, a path (str and Path), a .json file and a dict run the same scenario."""
    ref = dcnsim.run(tiny_toml).flows
    p = tmp_path / "tiny.toml"
    p.write_text(tiny_toml)
    doc = tomllib.loads(tiny_toml)
    j = tmp_path / "tiny.json"
    j.write_text(json.dumps(doc))
    odd = tmp_path / "load=0.5 [a].toml"  # sweep-style file name: still a path, not TOML text
    odd.write_text(tiny_toml)
    for scenario in (p, str(p), doc, j, str(odd)):
        pd.testing.assert_frame_equal(dcnsim.run(scenario).flows, ref)


def test_missing_file_and_unknown_name(tmp_path):
    with pytest.raises(FileNotFoundError):
        dcnsim.run(tmp_path / "nope.toml")
    with pytest.raises(FileNotFoundError):
        dcnsim.run(str(tmp_path / "nope.toml"))
    with pytest.raises(dcnsim.ScenarioError):
        dcnsim.run("no_such_shipped_scenario")


@pytest.mark.parametrize(
    "old,new,key",
    [
        ('name = "tiny"', 'name = "tiny"\nno_such_key = 1', "no_such_key"),
        ('bottleneck = { rate = "10Gbps"', "bottleneck = { rate = 100", "rate"),
        ('max_time = "10ms"', "max_time = 10", "max_time"),
        ("[transport]", "[transport", ""),  # TOML syntax error
    ],
)
def test_scenario_errors_are_one_line(old, new, key):
    text = tiny()
    assert old in text
    with pytest.raises(dcnsim.ScenarioError) as exc:
        dcnsim.run(text.replace(old, new, 1))
    msg = str(exc.value)
    assert msg and "\n" not in msg.strip()
    assert key in msg


def test_unknown_variant_is_scenario_error():
    with pytest.raises(dcnsim.ScenarioError):
        dcnsim.run(tiny(), variant="no-such-variant")


def test_variants(tmp_path):
    text = tiny() + '\n[[variant]]\nname = "slow"\ntopology.bottleneck = { rate = "1Gbps", delay = "1us" }\n'
    info = dcnsim.validate(text)
    assert info["variants"] == ["slow"]
    base = dcnsim.run(text)
    slow = dcnsim.run(text, variant="slow")
    assert slow.summary["variant"] == "slow"
    assert int(slow.flows["end_ps"].max()) >= 10 * TINY_MIN_MAKESPAN_PS > int(base.flows["end_ps"].max())


def test_progress_bar_forced(capsys):
    res = dcnsim.run(tiny(), progress="always")
    out = capsys.readouterr().out
    assert res.summary["flows_finished"] == 2
    assert "flows" in out


def test_progress_auto_off_when_not_a_terminal(capsys):
    dcnsim.run(tiny(), progress=True)
    assert capsys.readouterr().out == ""


def test_shipped_flagship_scenario_validates():
    info = dcnsim.validate("leaf_spine_dctcp")
    assert info["hosts"] > 0 and info["switches"] > 0
    assert dcnsim.validate("leaf_spine_dctcp.toml")["name"] == info["name"]
    ci = dcnsim.validate("seed003_ci_2queue_small")  # the README's quick-start comparison
    assert ci["variants"] == ["without CI", "CI"], ci


def test_benchmark_scenarios_validate():
    bench = Path(__file__).resolve().parent.parent / "bench" / "scenarios"
    files = sorted(bench.glob("*.toml"))
    assert len(files) >= 4
    for f in files:
        assert dcnsim.validate(str(f))["hosts"] > 0, f


# ---------------------------------------------------------------- fct_table on synthetic data


def _flows(sizes, fct_ps, finished, ideal_ps=None):
    n = len(sizes)
    finished = np.asarray(finished, dtype=bool)
    ideal = np.asarray(ideal_ps if ideal_ps is not None else [1] * n, dtype=np.uint64)
    fct = pd.array([int(f) if ok else None for f, ok in zip(fct_ps, finished)], dtype="Int64")
    return pd.DataFrame(
        {
            "size_bytes": np.asarray(sizes, dtype=np.uint64),
            "fct_ps": fct,
            "ideal_fct_ps": ideal,
            "slowdown": np.where(finished, np.asarray(fct_ps, dtype=float) / ideal, np.nan),
            "finished": finished,
        }
    )


def test_fct_table_bins_and_values():
    flows = _flows(
        sizes=[1_000, 99_999, 100_000, 999_999, 1_000_000, 10_000_000, 50_000_000, 2_000],
        fct_ps=[1e6, 3e6, 10e6, 20e6, 100e6, 1e9, 5e9, 0],
        finished=[1, 1, 1, 1, 1, 1, 1, 0],
    )
    t = dcnsim.fct_table(flows)
    assert list(t["bin"]) == ["<100KB", "100KB-1MB", "1MB-10MB", ">10MB", "all"]
    assert list(t["count"]) == [2, 2, 1, 2, 7]
    assert list(t["unfinished"]) == [1, 0, 0, 0, 1]
    first = t.iloc[0]
    assert first["mean_fct_us"] == pytest.approx(2.0)
    assert first["p50_fct_us"] == pytest.approx(2.0)
    assert first["p99_fct_us"] == pytest.approx(1 + 2 * 0.99)
    assert first["mean_slowdown"] == pytest.approx(2e6)


def test_fct_table_custom_bins_and_labels():
    flows = _flows(sizes=[500, 1_500, 2_500_000], fct_ps=[1, 2, 3], finished=[1, 1, 1])
    t = dcnsim.fct_table(flows, bins=[1_000, 1_000_000])
    assert list(t["bin"]) == ["<1KB", "1KB-1MB", ">1MB", "all"]
    assert list(t["count"]) == [1, 1, 1, 3]
    assert format_size(1_500_000) == "1.5MB" and format_size(512) == "512B"
    assert bin_labels(DEFAULT_FCT_BINS) == ["<100KB", "100KB-1MB", "1MB-10MB", ">10MB"]
    with pytest.raises(ValueError):
        dcnsim.fct_table(flows, bins=[1_000, 1_000])


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 10**8), st.integers(1, 10**12), st.booleans()),
        min_size=0,
        max_size=60,
    )
)
def test_fct_table_counts_partition_flows(rows):
    flows = _flows([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])
    t = dcnsim.fct_table(flows)
    bins, all_row = t.iloc[:-1], t.iloc[-1]
    assert bins["count"].sum() == all_row["count"] == sum(r[2] for r in rows)
    assert bins["unfinished"].sum() == all_row["unfinished"] == sum(not r[2] for r in rows)
    for _, row in t.iterrows():
        if row["count"]:
            assert row["p50_fct_us"] <= row["p99_fct_us"] * (1 + 1e-12)
            assert row["p99_fct_us"] <= row["p999_fct_us"] * (1 + 1e-12)
        else:
            assert math.isnan(row["mean_fct_us"])


def test_pfc_headroom_is_the_engines_derivation():
    """The bindings' headroom (what studies size buffers by) is the engine's: 100 Gbit/s
    over a 400 ns round trip is 5,000 B on the wire, then three 1,500 B frames and a PAUSE
    (the engine's own unit test, switch/pfc/mod.rs, has 9,564 B), and it grows with the
    round trip at line rate."""
    from dcnsim._core import pfc_headroom

    assert pfc_headroom(100_000_000_000, 400_000, 1500) == 5_000 + 3 * 1500 + 64
    assert pfc_headroom(400_000_000_000, 1_000_000, 1500) - pfc_headroom(400_000_000_000, 0, 1500) == 50_000
