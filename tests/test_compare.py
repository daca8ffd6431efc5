"""dcnsim.compare / `dcnsim compare`: variants side by side, in a process pool."""

from __future__ import annotations

import json
import os
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dcnsim
from dcnsim.comparison import (
    COMPARISON_FILES,
    _slugs,
    Comparison,
    format_change,
    relative_change,
    slugify,
    switch_port_mask,
)

from conftest import tiny

# 8 hosts on a 2-ToR Clos, a periodic 6:1 incast into a 100 KB static buffer plus Poisson
# background, queue depth sampled: Reno (base, drops), DCTCP, DCTCP with a lower K.
SCENARIO = """\
[scenario]
name = "cmp_small"
description = "6:1 incast plus background: Reno vs DCTCP vs DCTCP K=10KB"
seed = 3
arrivals_for = "2ms"
max_time = "200ms"

[topology]
kind = "clos2"
tors = 2
servers_per_tor = 4
spines = 2
host_link = { rate = "10Gbps", delay = "1us" }
fabric_link = { rate = "10Gbps", delay = "1us" }

[switch]
buffer = { model = "static", queue = "100KB" }
aqm = { kind = "step", threshold = "30KB" }

[transport]
kind = "reno"
min_rto = "1ms"

[metrics]
queue_sample = "5us"
queue_bin = "5KB"

[[workload]]
kind = "incast"
fan_in = 6
size = "64KB"
period = "500us"

[[workload]]
kind = "poisson"
sizes = "google-rpc"
load = 0.3
tag = "background"

[[variant]]
name = "Reno"

[[variant]]
name = "DCTCP"
transport.kind = "dctcp"

[[variant]]
name = "DCTCP K=10KB"
transport.kind = "dctcp"
switch.aqm = { kind = "step", threshold = "10KB" }
"""

VARIANTS = ["Reno", "DCTCP", "DCTCP K=10KB"]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# No variant of cmp_small configures PFC or CI, so no mechanism rows (summary "metrics").
NETWORK_METRICS = [
    "data packets dropped",
    "loss rate (%)",
    "flows with loss",
    "retransmission timeouts",
    "ECN marks",
    "mean queue depth, queue 0: busiest port (KB)",
    "mean queue depth, queue 0: average over the 16 switch ports (KB)",
    "max queue depth, queue 0: any port (KB)",
    "queue 0 busy, busiest port (% of its samples)",
    "p99 queue depth when busy, queue 0: busy samples of all ports (KB)",
    "unfinished flows",
    "end reason",
]
FCT_METRICS = ["flows finished", "mean FCT (us)", "p50 FCT (us)", "p99 FCT (us)", "mean slowdown"]


@pytest.fixture(scope="module")
def scenario_file(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("cmp") / "cmp_small.toml"
    p.write_text(SCENARIO, encoding="utf-8")
    return p


@pytest.fixture(scope="module")
def cmp2(scenario_file) -> Comparison:
    """The comparison run with two worker processes."""
    return dcnsim.compare(scenario_file, jobs=2)


@pytest.fixture(scope="module")
def cmp1(scenario_file) -> Comparison:
    """The same comparison run in this process."""
    return dcnsim.compare(scenario_file, jobs=1)


# ---------------------------------------------------------------------------- API


def test_results_in_file_order(cmp2):
    assert list(cmp2.results) == VARIANTS
    assert cmp2.base == "Reno" and cmp2.scenario == "cmp_small" and cmp2.jobs == 2
    for name, res in cmp2.results.items():
        assert isinstance(res, dcnsim.Result)
        assert res.summary["variant"] == name and res.summary["seed"] == 3
        assert res.summary["flows_unfinished"] == 0 and len(res.flows) > 1000
    # The variants really differ: Reno drops in the shallow buffer, DCTCP marks.
    r, d = cmp2.results["Reno"].summary, cmp2.results["DCTCP"].summary
    assert r["data_packets_dropped"] > d["data_packets_dropped"]
    assert d["ecn_marks"] > 0 == r["ecn_marks"]


def test_table_layout(cmp2):
    t = cmp2.table()
    assert list(t.columns) == ["group", "metric", *VARIANTS, "DCTCP vs Reno", "DCTCP K=10KB vs Reno", "DCTCP vs Reno: verdict", "DCTCP K=10KB vs Reno: verdict"]
    # FCT rows: size bins with flows (this workload has none above 1 MB), then "all", over
    # every flow; then the same per workload tag (background and incast here), then network
    groups = list(dict.fromkeys(t["group"]))
    # (the incast's flows are all in one bin: its "all" rows alone)
    assert groups == ["<100KB", "100KB-1MB", "all", "background: <100KB", "background: 100KB-1MB", "background: all", "incast: all", "network"]
    for g in groups[:-1]:
        assert list(t.loc[t["group"] == g, "metric"]) == FCT_METRICS
    assert list(t.loc[t["group"] == "network", "metric"]) == NETWORK_METRICS
    assert len(t) == 7 * len(FCT_METRICS) + len(NETWORK_METRICS)
    # No unique (group, metric) pair twice.
    assert not t.duplicated(["group", "metric"]).any()
    # the tags' flows are every flow
    for v in VARIANTS:
        per_tag = sum(_cell(t, f"{tag}: all", "flows finished", v) for tag in ("background", "incast"))
        assert per_tag == _cell(t, "all", "flows finished", v) == cmp2.results[v].summary["flows_finished"]


def _cell(t: pd.DataFrame, group: str, metric: str, col: str):
    sel = t[(t["group"] == group) & (t["metric"] == metric)]
    assert len(sel) == 1, (group, metric)
    return sel.iloc[0][col]


def test_values_and_relative_change_by_hand(cmp2):
    t = cmp2.table()
    reno, dctcp = cmp2.results["Reno"], cmp2.results["DCTCP"]
    # mean FCT of all flows, from each variant's own flows table
    b = reno.flows["fct_ps"].astype("float64").mean() / 1e6
    v = dctcp.flows["fct_ps"].astype("float64").mean() / 1e6
    assert _cell(t, "all", "mean FCT (us)", "Reno") == pytest.approx(b, rel=1e-12)
    assert _cell(t, "all", "mean FCT (us)", "DCTCP") == pytest.approx(v, rel=1e-12)
    assert _cell(t, "all", "mean FCT (us)", "DCTCP vs Reno") == pytest.approx((v - b) / b, rel=1e-12)
    ft = cmp2.formatted_table()
    assert _cell(ft, "all", "mean FCT (us)", "DCTCP vs Reno") == f"{(v - b) / b * 100:+.1f}%"
    # p99 of the small flows agrees with the Result's own FCT table
    small = reno.fct_table().set_index("bin")
    assert _cell(t, "<100KB", "p99 FCT (us)", "Reno") == pytest.approx(small.loc["<100KB", "p99_fct_us"])
    # network metrics straight from the summaries and the ports table
    assert _cell(t, "network", "data packets dropped", "Reno") == reno.summary["data_packets_dropped"]
    assert _cell(t, "network", "loss rate (%)", "DCTCP") == pytest.approx(100 * dctcp.summary["loss_rate"])
    assert _cell(t, "network", "ECN marks", "DCTCP") == dctcp.summary["ecn_marks"]
    assert _cell(t, "network", "end reason", "DCTCP") == "completed"
    assert np.isnan(_cell(t, "network", "end reason", "DCTCP vs Reno"))
    assert _cell(ft, "network", "end reason", "DCTCP vs Reno") == ""
    sw = reno.ports[~reno.ports["node_name"].str.match(r"h\d+$")]  # clos2 hosts are h0..h7
    assert _cell(t, "network", "max queue depth, queue 0: any port (KB)", "Reno") == pytest.approx(sw["max_depth_bytes"].max() / 1e3)
    assert _cell(t, "network", "mean queue depth, queue 0: busiest port (KB)", "Reno") == pytest.approx(sw["mean_depth_bytes"].max() / 1e3)
    assert _cell(t, "network", f"mean queue depth, queue 0: average over the {len(sw)} switch ports (KB)", "Reno") == pytest.approx(sw["mean_depth_bytes"].mean() / 1e3)
    # drops: the change is computed from the raw counts
    d_b, d_v = reno.summary["data_packets_dropped"], dctcp.summary["data_packets_dropped"]
    assert _cell(t, "network", "data packets dropped", "DCTCP vs Reno") == pytest.approx((d_v - d_b) / d_b)
    assert _cell(ft, "network", "data packets dropped", "DCTCP vs Reno") == format_change((d_v - d_b) / d_b)
    # Reno never marks: a zero base gives NaN ("n/a" formatted), not a division by zero.
    assert np.isnan(_cell(t, "network", "ECN marks", "DCTCP vs Reno"))
    assert _cell(ft, "network", "ECN marks", "DCTCP vs Reno") == "n/a"
    # every change column is numeric
    assert all(t[c].dtype == np.float64 for c in cmp2.change_columns().values())


def test_jobs_do_not_change_results(cmp1, cmp2):
    assert cmp1.jobs == 1
    pd.testing.assert_frame_equal(cmp1.table(), cmp2.table())
    for name in VARIANTS:
        a, b = cmp1.results[name], cmp2.results[name]
        pd.testing.assert_frame_equal(a.flows, b.flows)
        pd.testing.assert_frame_equal(a.ports, b.ports)
        pd.testing.assert_frame_equal(a.queues, b.queues)


def test_same_as_running_the_variant_alone(cmp2, scenario_file):
    alone = dcnsim.run(scenario_file, variant="DCTCP K=10KB")
    got = cmp2.results["DCTCP K=10KB"]
    pd.testing.assert_frame_equal(alone.flows, got.flows)
    pd.testing.assert_frame_equal(alone.ports, got.ports)
    assert alone.summary["events"] == got.summary["events"]


def test_variant_selection_order_and_seed(scenario_file):
    c = dcnsim.compare(scenario_file, variants=["DCTCP", "Reno"], seed=11, jobs=1)
    assert list(c.results) == ["DCTCP", "Reno"] and c.base == "DCTCP"
    assert list(c.table().columns)[-2:] == ["Reno vs DCTCP", "Reno vs DCTCP: verdict"]
    assert c.seeds == {"DCTCP": 11, "Reno": 11}


def test_save_leaves_no_stale_plot_of_an_earlier_comparison(cmp2, tmp_path):
    out = tmp_path / "cmp"
    out.mkdir()
    (out / "throughput.png").write_bytes(b"an earlier comparison's plot")
    (out / "notes.txt").write_text("the user's")
    written = cmp2.save(out)
    assert "throughput.png" not in written and not (out / "throughput.png").exists()
    assert (out / "notes.txt").read_text() == "the user's"


def test_save_writes_everything(cmp2, tmp_path):
    out = tmp_path / "cmp"
    written = cmp2.save(out)
    slugs = {"Reno": "reno", "DCTCP": "dctcp", "DCTCP K=10KB": "dctcp-k-10kb"}
    # the variants sampled queue depths: the depth over time too
    assert sorted(os.listdir(out)) == sorted([*COMPARISON_FILES, "queue_depth_time.png", *slugs.values()])
    for name, slug in slugs.items():
        files = sorted(os.listdir(out / slug))
        assert files == ["flows.parquet", "ports.parquet", "queue_series.parquet", "queues.parquet", "scenario.toml", "summary.json"]
        summary = json.loads((out / slug / "summary.json").read_text())
        assert summary["variant"] == name
        q = pd.read_parquet(out / slug / "queues.parquet")
        assert {"node", "port", "queue", "depth_bytes", "samples"} <= set(q.columns)
        # one row per sample and class; its deepest queue's histogram holds the same samples
        qs = pd.read_parquet(out / slug / "queue_series.parquet")
        assert list(qs.columns) == ["time_ps", "queue", "max_depth_bytes", "total_depth_bytes", "busy_queues"]
        assert len(qs) == summary["queue_samples"] * qs["queue"].nunique()
        assert qs["max_depth_bytes"].max() // 5000 * 5000 == q["depth_bytes"].max()
    assert set(written) >= {"comparison.csv", "reno/flows.parquet"}
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]

    csv = pd.read_csv(out / "comparison.csv", keep_default_na=False)
    assert list(csv.columns) == list(cmp2.table().columns)
    assert float(_cell(csv, "all", "mean FCT (us)", "DCTCP vs Reno")) == _cell(cmp2.table(), "all", "mean FCT (us)", "DCTCP vs Reno")

    md = (out / "comparison.md").read_text()
    assert "cmp_small" in md and "seed: 3" in md
    for name in VARIANTS:
        assert f"**{name}**" in md
    assert md.count("wall time") == len(VARIANTS)
    assert "| group | metric | Reno | DCTCP | DCTCP K=10KB | DCTCP vs Reno | DCTCP K=10KB vs Reno |" in md
    assert "| all | mean FCT (us) |" in md

    for png in ("fct_by_bin.png", "slowdown_cdf.png", "queue_depth.png"):
        data = (out / png).read_bytes()
        assert data.startswith(PNG_SIGNATURE), png
        assert len(data) > 10_000, (png, len(data))


def test_save_is_deterministic(cmp1, cmp2, tmp_path):
    cmp1.save(tmp_path / "a")
    cmp2.save(tmp_path / "b")
    for name in ("comparison.csv", "fct_by_bin.png", "slowdown_cdf.png", "queue_depth.png", "reno/flows.parquet"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_without_queue_sampling(tmp_path):
    """No [metrics] queue_sample: no queues table, no sampled rows, the plot falls back."""
    text = SCENARIO.replace('queue_sample = "5us"\nqueue_bin = "5KB"\n', "").replace(
        'arrivals_for = "2ms"', 'arrivals_for = "500us"'
    )
    c = dcnsim.compare(text, variants=["Reno", "DCTCP"], jobs=1)
    assert all(len(r.queues) == 0 for r in c.results.values())
    metrics = list(c.table()["metric"])
    assert "mean queue depth, queue 0: busiest port (KB)" in metrics
    assert not any("busy" in m for m in metrics)
    c.save(tmp_path)
    assert "queues.parquet" not in os.listdir(tmp_path / "reno")
    assert (tmp_path / "queue_depth.png").read_bytes().startswith(PNG_SIGNATURE)


def test_no_variants_is_an_error():
    with pytest.raises(dcnsim.ScenarioError, match=r"no \[\[variant\]\]"):
        dcnsim.compare(tiny(), jobs=1)


def test_bad_arguments(scenario_file):
    with pytest.raises(dcnsim.ScenarioError, match='no variant named "nope", expected one of "Reno", "DCTCP"'):
        dcnsim.compare(scenario_file, variants=["Reno", "nope"])
    with pytest.raises(dcnsim.ScenarioError, match="more than once"):
        dcnsim.compare(scenario_file, variants=["Reno", "Reno"])
    with pytest.raises(ValueError, match="jobs"):
        dcnsim.compare(scenario_file, jobs=0)
    with pytest.raises(dcnsim.ScenarioError, match="seed"):
        dcnsim.compare(scenario_file, seed=-1)
    bad = SCENARIO + '\n[[variant]]\nname = "broken"\ntransport.kind = "warp"\n'
    with pytest.raises(dcnsim.ScenarioError, match="broken"):
        dcnsim.compare(bad, jobs=1)


# ---------------------------------------------------------------------------- helpers


def test_relative_change_and_format():
    assert relative_change(100, 61.8) == pytest.approx(-0.382)
    assert format_change(relative_change(100, 61.8)) == "-38.2%"
    assert format_change(relative_change(10, 12)) == "+20.0%"
    assert format_change(relative_change(0, 0)) == "+0.0%"
    assert relative_change(0, 5) is None and format_change(None, 0, 5) == "n/a"
    assert format_change(None, "completed", "deadlock") == ""
    assert relative_change(None, 3) is None and relative_change(float("nan"), 3) is None
    assert format_change(relative_change(1, 1367)) == "+136600%"


def test_slugify():
    assert slugify("PFC+DCQCN") == "pfc-dcqcn"
    assert slugify("DCTCP K=10KB") == "dctcp-k-10kb"
    assert slugify("///") == "variant"


def test_switch_ports_without_is_host_column(cmp2):
    """With the core's is_host column or without it (nodes with one port are hosts)."""
    ports = cmp2.results["Reno"].ports
    expected = ~ports["node_name"].str.match(r"h\d+$").to_numpy(dtype=bool)
    assert expected.any() and (~expected).any()
    assert (switch_port_mask(ports.drop(columns=["is_host"], errors="ignore")) == expected).all()
    assert (switch_port_mask(ports) == expected).all()


def test_result_queues(cmp2):
    q = cmp2.results["Reno"].queues
    assert list(q.columns[:5]) == ["node", "node_name", "port", "queue", "depth_bytes"]
    assert (q["samples"] > 0).all()
    keys = q[["node", "port", "queue", "depth_bytes"]]
    assert keys.equals(keys.sort_values(list(keys.columns), ignore_index=True))
    # Only switch queues are sampled, every queue the same number of times.
    names = set(q["node_name"])
    assert names and not any(n.startswith("h") for n in names)
    per_queue = q.groupby(["node", "port", "queue"])["samples"].sum()
    assert per_queue.nunique() == 1
    assert int(per_queue.iloc[0]) == cmp2.results["Reno"].summary["queue_samples"]


# ---------------------------------------------------------------------------- CLI


def test_cli_compare(dcnsim_cli, scenario_file, tmp_path):
    proc = dcnsim_cli("compare", scenario_file, "-o", "out", "--jobs", "2", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out"
    for f in COMPARISON_FILES:
        assert (out / f).is_file(), f
    for slug in ("reno", "dctcp", "dctcp-k-10kb"):
        assert (out / slug / "flows.parquet").is_file()
    for text in ("cmp_small", "DCTCP vs Reno", "mean FCT (us)", "end reason", "network"):
        assert text in proc.stdout, text
    for name in VARIANTS:
        assert f"{name}: " in proc.stdout and "flows finished" in proc.stdout
    # Reno sends no ECN-capable packet, so the step marker never marks it: said, and nothing else
    assert proc.stderr.splitlines() == ["warning: Reno: switch.aqm is configured but never acted: 0 packets marked CE"], proc.stderr
    assert "Reno: switch.aqm is configured but never acted" in (out / "comparison.md").read_text()
    # The CSV written by the CLI is the API's table.
    csv = pd.read_csv(out / "comparison.csv", keep_default_na=False)
    api = dcnsim.compare(scenario_file, jobs=1).table()
    assert list(csv["metric"]) == list(api["metric"])
    np.testing.assert_array_equal(pd.to_numeric(csv["DCTCP vs Reno"], errors="coerce").to_numpy(), api["DCTCP vs Reno"].to_numpy())


def test_cli_compare_selected_variants(dcnsim_cli, scenario_file):
    proc = dcnsim_cli("compare", scenario_file, "--variant", "DCTCP K=10KB", "--variant", "DCTCP", "-j", "1")
    assert proc.returncode == 0, proc.stderr
    assert "DCTCP vs DCTCP K=10KB" in proc.stdout and "Reno" not in proc.stdout


def test_variants_of_different_seeds_and_a_lone_variant_are_warned_about(tmp_path):
    """A variant that sets its own seed runs another workload than the base: the
    comparison says so unless --seed or --seeds sets one for all; one variant alone is
    compared with nothing, and that is said too."""
    p = tmp_path / "seeds.toml"
    p.write_text(SCENARIO + '\n[[variant]]\nname = "Reno, seed 4"\ntransport.kind = "reno"\nscenario.seed = 4\n', encoding="utf-8")
    with pytest.warns(dcnsim.DcnsimWarning, match=r"different seeds \(Reno: 3, Reno, seed 4: 4\)"):
        c = dcnsim.compare(p, variants=["Reno", "Reno, seed 4"], jobs=1)
    assert any("different seeds" in w for w in c.warnings)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        one = dcnsim.compare(p, variants=["Reno", "Reno, seed 4"], seed=5, jobs=1)
    assert not any("different seeds" in str(w.message) for w in caught) and not any("different seeds" in w for w in one.warnings)
    with pytest.warns(dcnsim.DcnsimWarning, match=r"one variant \('Reno'\): the table compares it with nothing"):
        dcnsim.compare(p, variants=["Reno"], jobs=1)


def test_cli_compare_seeds_1_runs_seed_1(dcnsim_cli, scenario_file):
    """--seeds N runs seeds 1..N, also for N = 1 (it once ran the scenario's own seed, 3
    here, under a flag that says seed 1)."""
    proc = dcnsim_cli("compare", scenario_file, "--variant", "Reno", "--variant", "DCTCP", "--seeds", "1", "-j", "1")
    assert proc.returncode == 0, proc.stderr
    assert "(seed 1)" in proc.stdout and "seed 3" not in proc.stdout, proc.stdout


@pytest.mark.parametrize(
    "args, words",
    [
        (["--variant", "nope"], ['no variant named "nope"']),
        (["--seed", "2", "--seeds", "2"], ["--seed, --seeds", "not both"]),
        (["--jobs", "0"], ["--jobs"]),
    ],
)
def test_cli_compare_user_errors(dcnsim_cli, scenario_file, args, words):
    proc = dcnsim_cli("compare", scenario_file, *args)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    for w in words:
        assert w in lines[0]


def test_cli_compare_without_variants(dcnsim_cli, tiny_file, tmp_path):
    proc = dcnsim_cli("compare", tiny_file, "-o", "out")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "no [[variant]]" in lines[0]
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()


def test_mechanism_rows_come_from_the_configured_mechanisms():
    """The network rows list each configured mechanism's metrics (summary "metrics"), with
    the summary's value (scaled to the row's unit) and 0 for a variant without it."""
    cmp = dcnsim.compare("seed003_ci_2queue_small", jobs=1)
    t = cmp.table()
    rows = list(t.loc[t["group"] == "network", "metric"])
    for label in ("PAUSE frames sent by PFC", "XOFF time, any PAUSE (ms)", "ports paused, any PAUSE", "flows paused in a switch queue", "CI isolations", "CIPs sent"):
        assert label in rows, label
    base, ci = cmp.results["without CI"], cmp.results["CI"]
    assert _cell(t, "network", "PAUSE frames sent by PFC", "CI") == ci.summary["pfc_frames"]
    assert _cell(t, "network", "XOFF time, any PAUSE (ms)", "without CI") == pytest.approx(base.summary["xoff_time_ps"] / 1e9)
    assert _cell(t, "network", "CI isolations", "CI") == ci.summary["ci_isolations"] > 0
    # the hash baseline configures CI without isolating
    assert _cell(t, "network", "CI isolations", "without CI") == 0


def test_busy_queue_depth_and_changes_of_invisible_values(cmp2):
    """The sampled-depth rows describe the samples in which the queue held something (a
    quantile over all samples is 0.0 for nearly every queue), checked by hand from the
    queues table; and a change between two values displayed as 0.0 is no change."""
    from dcnsim.comparison import Row

    t = cmp2.table()
    for name in VARIANTS:
        q = cmp2.results[name].queues
        q0 = q[q["queue"] == 0].groupby("depth_bytes")["samples"].sum()
        busy = q0[q0.index > 0]
        # the busiest port's share, by hand: per port, busy samples over all its samples
        qq = q[q["queue"] == 0]
        per_port = qq.assign(b=qq["samples"].where(qq["depth_bytes"] > 0, 0)).groupby(["node", "port"])[["b", "samples"]].sum()
        top = float((per_port["b"] / per_port["samples"]).max() * 100)
        assert _cell(t, "network", "queue 0 busy, busiest port (% of its samples)", name) == pytest.approx(top)
        assert top >= busy.sum() / q0.sum() * 100  # at least the pooled share idle ports dilute
        cum = busy.cumsum() / busy.sum()
        p99 = float(cum.index[np.searchsorted(cum.to_numpy(), 0.99)]) / 1e3
        assert _cell(t, "network", "p99 queue depth when busy, queue 0: busy samples of all ports (KB)", name) == pytest.approx(p99)
        assert p99 > 0
    row = Row("network", "x", {"a": 0.004, "b": 0.003}, "f1")
    assert row.change("a", "b") == 0.0 and row.change_text("a", "b") == "+0.0%"
    row = Row("network", "x", {"a": 0.0, "b": 0.3}, "f1")
    assert row.change("a", "b") is None and row.change_text("a", "b") == "n/a"


def test_several_seeds_give_means_intervals_and_paired_verdicts(scenario_file, tmp_path):
    """compare(seeds=3): every cell is the mean over the seeds with its 95% CI (checked
    against the per-seed runs), the change says whether the paired difference's interval
    excludes zero, and every seed's run is saved."""
    from dcnsim.sweeps import ci95

    c = dcnsim.compare(scenario_file, variants=["DCTCP", "Reno"], seeds=3, jobs=2)
    assert c.n_seeds == 3 and [r.summary["seed"] for r in c.replicas["Reno"]] == [1, 2, 3]
    row = next(r for r in c.rows() if r.group == "all" and r.metric == "mean FCT (us)")
    per_seed = [r.fct_table().set_index("bin").loc["all", "mean_fct_us"] for r in c.replicas["Reno"]]
    mean, half = ci95(per_seed)
    assert row.values["Reno"] == pytest.approx(mean) and row.ci["Reno"] == pytest.approx(half)
    diffs = [x.fct_table().set_index("bin").loc["all", "mean_fct_us"] - b.fct_table().set_index("bin").loc["all", "mean_fct_us"] for x, b in zip(c.replicas["Reno"], c.replicas["DCTCP"])]
    d_mean, d_half = ci95(diffs)
    assert row.excludes_zero("Reno") == (abs(d_mean) > d_half)
    assert row.change_text("DCTCP", "Reno").endswith(" *" if abs(d_mean) > d_half else "(in noise)")
    t = c.table()
    assert {"Reno ci95", "Reno vs DCTCP: CI excludes 0"} <= set(t.columns)
    assert "±" in c.formatted_table().loc[0, "Reno"] or c.formatted_table().loc[0, "Reno"] in ("", "-")
    c.save(tmp_path / "out")
    assert (tmp_path / "out" / "reno" / "seed-3" / "flows.parquet").is_file()
    md = (tmp_path / "out" / "comparison.md").read_text()
    assert "95% confidence interval" in md
    # the header counts every seed's runs, and says so
    flows = sum(r.summary["flows_finished"] for r in c.replicas["Reno"])
    assert f"**Reno** (`reno/`): 3 seeds: {flows:,}/" in md and "in all" in md, md
    # fct_by_bin.png's counts are the mean per seed, as the table's flows row, and each
    # label sits above its error bar
    from dcnsim.comparison import plot_fct_by_bin

    fig = plot_fct_by_bin(c)
    labels = [t for ax in fig.axes for t in ax.texts if "n=" in t.get_text()]
    assert labels and all(t.get_text().endswith("/seed") for t in labels)
    flows_row = next(r for r in c.rows() if r.group == "background: all" and r.metric == "flows finished")
    texts = " ".join(t.get_text() for t in labels)
    assert f"n={flows_row.values['Reno']:,.1f}/seed" in texts, (texts, flows_row.values)
    for ax in fig.axes:
        caps = [ln for ln in ax.lines]  # error bar segments: their tops
        for t in ax.texts:
            x, y = t.xy
            tops = [max(ln.get_ydata()) for ln in caps if len(ln.get_xdata()) and abs(float(np.mean(ln.get_xdata())) - x) < 0.01]
            assert all(y >= top - 1e-9 for top in tops), (t.get_text(), y, tops)
    with pytest.raises(dcnsim.ScenarioError, match=r"seed=1 and seeds=2 \(--seed, --seeds\): expected one of them, not both"):
        dcnsim.compare(scenario_file, seed=1, seeds=2)


def test_unfinished_flows_get_a_row_in_their_bin():
    """A variant that leaves flows of a bin unfinished: the bin's means are over finished
    flows only, so the table says how many were left out, beside them."""
    text = """
[scenario]
name = "unfinished"
max_time = "10ms"
[topology]
kind = "dumbbell"
senders = 2
host_link = { rate = "100Gbps", delay = "1us" }
bottleneck = { rate = "100Gbps", delay = "1us" }
[transport]
kind = "dctcp"
[[workload]]
kind = "flows"
flows = [{ src = 0, dst = 2, size = "5MB" }, { src = 1, dst = 2, size = "10KB" }]
[[variant]]
name = "fast"
[[variant]]
name = "slow"
topology.host_link = { rate = "1Gbps", delay = "1us" }
"""
    cmp = dcnsim.compare(text, jobs=1)
    t = cmp.table().set_index(["group", "metric"])
    assert t.loc[("1MB-10MB", "flows unfinished"), "fast"] == 0
    assert t.loc[("1MB-10MB", "flows unfinished"), "slow"] == 1
    assert ("<100KB", "flows unfinished") not in t.index, "no row where every flow finished"


def test_throughput_plot_cannot_be_read_as_a_rate_above_the_link():
    """Goodput is in-order delivery: a retransmission that fills a hole releases the bytes
    held behind it in one bin, far above the link rate. The plot's axis stops at 1.25 x the
    host link rate, marks the bins beyond it, draws the link rate and says what it shows."""
    from dcnsim.comparison import plot_throughput

    text = """
[scenario]
name = "tp"
max_time = "50ms"
[topology]
kind = "dumbbell"
senders = 4
host_link = { rate = "10Gbps", delay = "1us" }
bottleneck = { rate = "10Gbps", delay = "1us" }
[switch]
buffer = { queue = "30KB" }
[transport]
kind = "reno"
[metrics]
throughput_bin = "10us"
[[workload]]
kind = "incast"
fan_in = 4
receiver = 4
size = "1MB"
[[variant]]
name = "a"
[[variant]]
name = "b"
switch.buffer = { queue = "60KB" }
"""
    c = dcnsim.compare(text, jobs=1)
    peak = max(float(r.timeseries["gbps"].max()) for r in c.results.values())
    assert peak > 12.5, "the losses of a 30 KB buffer leave holes whose filling bursts past the link"
    fig = plot_throughput(c)
    for ax in fig.axes:
        assert ax.get_ylim()[1] == pytest.approx(12.5)
        assert any(ln.get_linestyle() == "--" and list(ln.get_ydata()) == [10.0, 10.0] for ln in ax.lines)
    assert sum(len(ln.get_xdata()) for ax in fig.axes for ln in ax.lines if ln.get_marker() == "^") > 0
    title = fig._suptitle.get_text()
    assert "bytes delivered in order per 10 us" in title and "filled hole" in title


def test_slowdown_by_size_groups_equal_shares_of_flows(scenario_file):
    """slowdown_by_size.png: the p50 and p99 slowdown per size group, the groups holding
    equal shares of the base's flows, each point the mean over seeds of that group's
    quantile (checked by hand against one group)."""
    from dcnsim.comparison import SIZE_GROUPS, _size_edges, plot_slowdown_by_size

    c = dcnsim.compare(scenario_file, variants=["Reno", "DCTCP"], seeds=2, jobs=2)
    edges = _size_edges(c)
    sizes = np.concatenate([r.flows["size_bytes"].to_numpy() for r in c.replicas["Reno"]])
    counts = np.histogram(sizes, bins=edges)[0]
    assert counts.sum() == len(sizes) and len(counts) <= SIZE_GROUPS
    assert counts.max() <= 3 * len(sizes) / len(counts), counts  # near-equal shares (sizes repeat)
    fig = plot_slowdown_by_size(c)
    p99 = fig.axes[1]
    line = next(c.lines[0] for c in p99.containers if c.get_label() == "DCTCP")
    lo, hi = edges[-2], edges[-1]
    by_seed = []
    for r in c.replicas["DCTCP"]:
        f = r.flows
        s = f["slowdown"][(f["size_bytes"] >= lo) & (f["size_bytes"] < hi) & f["finished"]].to_numpy(dtype=float)
        by_seed.append(np.quantile(s, 0.99))
    assert line.get_ydata()[-1] == pytest.approx(np.mean(by_seed))
    assert "mean over 2 seeds" in fig._suptitle.get_text()


def test_a_comparison_saved_over_another_with_other_seeds_leaves_only_its_runs(scenario_file, tmp_path):
    """Saving a one-seed comparison where a three-seed one was saved (and back) leaves only
    the runs of the comparison saved last, so that the report counts those."""
    out = tmp_path / "o"
    dcnsim.compare(scenario_file, variants=["Reno", "DCTCP"], seeds=3, jobs=2).save(out)
    assert sorted(p.name for p in (out / "reno").iterdir()) == ["seed-1", "seed-2", "seed-3"]
    dcnsim.compare(scenario_file, variants=["Reno", "DCTCP"], jobs=2).save(out)
    assert not list((out / "reno").glob("seed-*")) and (out / "reno" / "summary.json").is_file()
    dcnsim.compare(scenario_file, variants=["Reno", "DCTCP"], seeds=2, jobs=2).save(out)
    assert sorted(p.name for p in (out / "reno").iterdir()) == ["seed-1", "seed-2"]
    from dcnsim import report

    report.write_report(out)
    page = (out / "report.html").read_text()
    assert re.search(r"<td>runs</td><td>4</td>", page), re.findall(r"<td>runs</td><td>\d+</td>", page)


def test_a_comparison_saved_over_one_of_other_variants_leaves_only_its_own(scenario_file, cmp2, tmp_path):
    """Saved where a comparison of other variants was, a comparison leaves no folder of
    theirs for the report to count; a folder that holds no dcnsim run is the user's and
    stays. A report reads only the variants comparison.csv compares, also where a folder
    an older save left is still there."""
    from dcnsim import report

    out = tmp_path / "o"
    cmp2.save(out)
    (out / "notes").mkdir()
    (out / "notes" / "mine.txt").write_text("keep")
    two = dcnsim.compare(scenario_file, variants=[VARIANTS[0], VARIANTS[1]], jobs=1)
    two.save(out)
    assert {p.name for p in out.iterdir() if p.is_dir()} == {slug for slug in _slugs(two.variants).values()} | {"notes"}
    # an older save's folder beside it, as dcnsim before this change left them
    import shutil

    shutil.copytree(out / _slugs(two.variants)[VARIANTS[1]], out / "left-over")
    report.write_report(out)
    page = (out / "report.html").read_text()
    assert re.search(r"<td>runs</td><td>2</td>", page), re.findall(r"<td>runs</td><td>\d+</td>", page)
    # three variants, two seeds each: the table's other columns do not read as variants
    dcnsim.compare(scenario_file, seeds=2, jobs=2).save(out)
    shutil.copytree(out / _slugs(VARIANTS)[VARIANTS[1]], out / "left-over")
    report.write_report(out)
    page = (out / "report.html").read_text()
    assert re.search(r"<td>runs</td><td>6</td>", page), re.findall(r"<td>runs</td><td>\d+</td>", page)
    assert report._compared_slugs(out) == set(_slugs(VARIANTS).values())


def test_slowdown_tail_is_drawn_as_a_ccdf(cmp2):
    """slowdown_cdf.png has the CDF and, beside it on log axes, the CCDF: each variant's
    line falls from 1 to 1/n at its largest slowdown."""
    from dcnsim.comparison import plot_slowdown_cdf

    fig = plot_slowdown_cdf(cmp2)
    cdf, tail = fig.axes
    assert tail.get_yscale() == "log" and tail.get_xscale() == "log"
    for line in tail.lines:
        r = cmp2.results[line.get_label()]
        sd = r.flows["slowdown"].dropna().to_numpy(dtype=float)
        sd = np.sort(sd[sd > 0])
        y = line.get_ydata()
        assert y[0] == pytest.approx(1.0) and y[-1] == pytest.approx(1 / len(sd))
        assert line.get_xdata()[-1] == pytest.approx(sd[-1])


def test_queue_depth_over_time_shows_the_span_where_queues_held_bytes(cmp2):
    """A run that idles long after its last queued byte (here: empty samples appended up
    to 100x the busy span) is drawn over the busy span, and the title says so."""
    import copy
    import dataclasses

    from dcnsim.comparison import plot_queue_depth_time

    c = copy.copy(cmp2)
    results = {}
    for n, r in cmp2.results.items():
        qs = r.queue_series
        last = int(qs["time_ps"].max())
        idle = qs[qs["time_ps"] == last].assign(max_depth_bytes=0, total_depth_bytes=0, busy_queues=0)
        tail = pd.concat([idle.assign(time_ps=last + k * last) for k in range(1, 100)])
        results[n] = dataclasses.replace(r, queue_series=pd.concat([qs, tail], ignore_index=True))
    c.results = results
    busy = pd.concat([r.queue_series.loc[r.queue_series["max_depth_bytes"] > 0, "time_ps"] for r in results.values()])
    end = max(float(r.queue_series["time_ps"].max()) for r in results.values())
    fig = plot_queue_depth_time(c)
    lo, hi = fig.axes[0].get_xlim()
    per = {"ps": 1, "ns": 1e3, "us": 1e6, "ms": 1e9, "s": 1e12}[fig.axes[-1].get_xlabel()[len("time (") : -1]]
    span = busy.max() - busy.min()
    assert lo * per == pytest.approx(max(0.0, busy.min() - 0.05 * span)) and hi * per == pytest.approx(busy.max() + 0.05 * span)
    assert hi * per < end / 50
    assert "shown while a queue held bytes" in fig.get_suptitle()
