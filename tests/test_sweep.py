"""`dcnsim sweep`: a grid of scenario keys x variants x seeds, one tidy table, resumable,
identical results whatever the number of workers."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import dcnsim
from conftest import sigint_as_at_a_terminal
from conftest import tiny as tiny_text
from dcnsim import sweeps as sweep

TINY = """
[scenario]
name = "tiny_sweep"
max_time = "2ms"

[topology]
kind = "dumbbell"
senders = 2
host_link = { rate = "10Gbps", delay = "1us" }
bottleneck = { rate = "10Gbps", delay = "1us" }

[switch]
aqm = { kind = "step", threshold = "30KB" }

[transport]
kind = "dctcp"

[[workload]]
kind = "flows"
flows = [{ src = 0, dst = 2, size = "200KB" }, { src = 1, dst = 2, size = "200KB" }]

[sweep]
seeds = [1, 2]
"switch.aqm.threshold" = ["10KB", "60KB"]

[[variant]]
name = "DCTCP"

[[variant]]
name = "Reno"
transport.kind = "reno"
"""


@pytest.fixture()
def tiny(tmp_path: Path) -> Path:
    p = tmp_path / "tiny.toml"
    p.write_text(TINY)
    return p


def test_ci95_is_students_t():
    # 1, 2, 3: mean 2, s = 1, t(0.975, 2) = 4.303 -> 4.303 / sqrt(3)
    mean, half = sweep.ci95([1.0, 2.0, 3.0])
    assert mean == 2.0 and half == pytest.approx(4.303 / math.sqrt(3))
    assert math.isnan(sweep.ci95([5.0])[1])


def test_grid_crosses_keys_variants_and_seeds(tiny):
    pts = sweep.grid(str(tiny))
    assert len(pts) == 2 * 2 * 2
    assert {p.values for p in pts} == {(("switch.aqm.threshold", "10KB"),), (("switch.aqm.threshold", "60KB"),)}
    # the command line adds a key and replaces the seeds
    pts = sweep.grid(str(tiny), [sweep.parse_set("topology.senders=2,3")], 3, ["Reno"])
    assert len(pts) == 2 * 2 * 3 and {p.variant for p in pts} == {"Reno"}
    assert len({p.run_id for p in pts}) == len(pts)


def test_one_parse_checks_every_variant_as_validate_and_merged_do(tiny):
    # what grid asks of each point: the same answers validate and merged give one variant
    # at a time, from one parse
    text = tiny.read_text()
    names = dcnsim._core.validate(text)["variants"]
    assert len(names) == 2
    got = dcnsim._core.check_variants(text, "toml", [None, *names])
    assert len(got) == 3
    for v, (info, merged, resolved) in zip([None, *names], got):
        assert info == dcnsim._core.validate(text, "toml", v)
        assert merged == dcnsim._core.merged(text, "toml", v)
        assert json.loads(resolved)["scenario"]["name"] == merged["scenario"]["name"]
    assert got[1][1] != got[2][1] and got[1][2] != got[2][2]  # two variants, two documents
    with pytest.raises(dcnsim.ScenarioError, match='no variant named "Nope"'):
        dcnsim._core.check_variants(text, "toml", [names[0], "Nope"])


def test_a_bad_point_is_refused_before_any_run(tiny):
    with pytest.raises(dcnsim.ScenarioError, match=r"sweep point switch.aqm.threshold='30kb'.*switch.aqm.threshold"):
        sweep.grid(str(tiny), [sweep.parse_set("switch.aqm.threshold=30KB,30kb")])
    with pytest.raises(dcnsim.ScenarioError, match=r"--set 'switch.aqm.threshold'"):
        sweep.parse_set("switch.aqm.threshold")


def test_what_would_make_the_table_say_more_than_the_runs_is_refused_before_any_run(tiny):
    """A swept seed (each point runs the sweep's seeds, so its column named seeds the runs
    did not use), a value or a variant given twice (its runs counted twice: a confidence
    interval from one run) and a key given twice on the command line (the first's values
    silently dropped) are refused, naming what and where."""
    with pytest.raises(dcnsim.ScenarioError, match=r"--set scenario.seed: the seed cannot be swept.*--seeds"):
        sweep.grid(str(tiny), [sweep.parse_set("scenario.seed=1,2")])
    with pytest.raises(dcnsim.ScenarioError, match=r"sweep.scenario.seed: the seed cannot be swept"):
        sweep.grid(_with_sweep_table(tiny, '"scenario.seed" = [1, 2]'))
    for values, twice in (("10,10", "10"), ("10,10.0", "10.0"), ("10KB,20KB,10KB", "'10KB'")):
        with pytest.raises(dcnsim.ScenarioError, match=rf"--set transport.init_cwnd: value {twice} given twice"):
            sweep.grid(str(tiny), [sweep.parse_set(f"transport.init_cwnd={values}")])
    with pytest.raises(dcnsim.ScenarioError, match=r"--set topology.senders: given twice"):
        sweep.grid(str(tiny), [sweep.parse_set("topology.senders=2,3"), sweep.parse_set("topology.senders=4")])
    with pytest.raises(dcnsim.ScenarioError, match=r"variant 'Reno' given more than once"):
        sweep.grid(str(tiny), variants=["Reno", "DCTCP", "Reno"])


def _with_sweep_table(tiny: Path, line: str) -> str:
    p = tiny.with_name("tiny_seed.toml")
    p.write_text(TINY.replace("[sweep]\n", f"[sweep]\n{line}\n"))
    return str(p)


def test_values_that_mean_the_same_are_warned_about(tiny):
    """"200KB" and "0.2MB" differ as text and are one buffer: each point of the pair says
    it is the other's run, as `compare` says of two variants that resolve to the same
    scenario; values that differ are not warned about."""
    pts = sweep.grid(str(tiny), [sweep.parse_set("switch.aqm.threshold=20KB,0.02MB,40KB")], 1, ["DCTCP"])
    warned = sweep.warnings_of(pts)
    assert warned == ["at switch.aqm.threshold='0.02MB': the run of variant 'DCTCP' is the one at switch.aqm.threshold='20KB' (the values mean the same): the two points differ in nothing"]


def test_values_json_cannot_hold_are_refused_with_their_key(tiny, tmp_path):
    """nan and inf (from --set or a [sweep] table: TOML has them) ended in a traceback from
    the JSON encoder; they are refused naming the key."""
    for text in ("nan", "inf", "-inf"):
        with pytest.raises(dcnsim.ScenarioError, match=rf"--set switch.buffer.alpha: invalid value -?(nan|inf), expected a finite number"):
            sweep.parse_set(f"switch.buffer.alpha=0.5,{text}")
    p = tmp_path / "nan.toml"
    p.write_text(TINY.replace('seeds = [1, 2]', 'seeds = [1, 2]\n"transport.g" = [0.5, nan]'))
    with pytest.raises(dcnsim.ScenarioError, match=r"sweep.transport.g: invalid value nan, expected a finite number"):
        sweep.grid(str(p))
    from click.testing import CliRunner

    from dcnsim.cli import cli

    res = CliRunner().invoke(cli, ["sweep", str(tiny), "-o", str(tmp_path / "out"), "--set", "switch.buffer.alpha=nan"])
    assert res.exit_code == 2 and (res.exception is None or isinstance(res.exception, SystemExit)), repr(res.exception)
    assert res.output.strip().splitlines()[-1] == "error: --set switch.buffer.alpha: invalid value nan, expected a finite number", res.output
    assert not (tmp_path / "out").exists()


def test_absurd_run_counts_are_refused_before_anything_is_made(tiny, tmp_path):
    """--seeds 100000000 built a list of 10^8 runs and died of MemoryError; a grid of more
    than MAX_RUNS runs is refused with its count, before a point is made."""
    import time

    from dcnsim.sources import MAX_RUNS

    t0 = time.monotonic()
    with pytest.raises(dcnsim.ScenarioError, match=rf"seeds: invalid value 100000000, expected a count of at most {MAX_RUNS} seeds"):
        sweep.grid(str(tiny), seeds=100_000_000)
    with pytest.raises(dcnsim.ScenarioError, match=rf"seeds: invalid value 100000000, expected a count of at most {MAX_RUNS} seeds"):
        dcnsim.compare(str(tiny), seeds=100_000_000)
    # 25,001 values x 2 variants x 2 seeds (the [sweep] table's)
    many = [sweep.parse_set("switch.aqm.threshold=" + ",".join(f"{k}B" for k in range(1000, 26001)))]
    with pytest.raises(dcnsim.ScenarioError, match=rf"sweep: 100004 runs \(25001 grid points x 2 variant\(s\) x 2 seed\(s\)\), expected at most {MAX_RUNS};"):
        sweep.grid(str(tiny), many)
    assert time.monotonic() - t0 < 10
    assert len(sweep.grid(str(tiny), seeds=3)) == 2 * 2 * 3


def _die(point: "sweep.Point", threads: int = 1) -> None:
    """A worker that dies as one killed by the kernel's OOM killer does."""
    import os

    os._exit(9)


def test_a_dead_worker_is_one_error_line(tiny, tmp_path, monkeypatch):
    """A worker process that dies breaks the pool: the sweep says which run and why it may
    have happened, as compare does, instead of a BrokenProcessPool traceback."""
    from click.testing import CliRunner

    from dcnsim.cli import cli

    monkeypatch.setattr(sweep, "_run_point", _die)
    res = CliRunner().invoke(cli, ["sweep", str(tiny), "-o", str(tmp_path / "out"), "-j", "2", "--no-progress"])
    assert isinstance(res.exception, SystemExit) and res.exit_code == 1, (repr(res.exception), res.output)
    last = res.output.strip().splitlines()[-1]
    assert last.startswith("error: simulation failed: sweep run ") and "the worker process died" in last and "try fewer --jobs" in last, res.output


def test_a_failed_run_says_the_runs_done_are_kept_and_resume(tiny, tmp_path, monkeypatch):
    """A run that fails (here: made to, at 60 KB) stops the sweep; the error says what was
    kept and that the same command resumes, and resuming runs only what is missing."""
    real = sweep._run_point

    def fail_at_60kb(point, threads=1):
        if dict(point.values)["switch.aqm.threshold"] == "60KB":
            return point.run_id, "error", "stopped: memory", {}
        return real(point, threads)

    pts = sweep.grid(str(tiny), seeds=1, variants=["DCTCP"])
    monkeypatch.setattr(sweep, "_run_point", fail_at_60kb)
    with pytest.raises(dcnsim.SimulationError, match=r"stopped: memory; the 1 runs done are kept in .*runs, and the same command resumes from them"):
        sweep.run_sweep(pts, tmp_path / "out", jobs=1)
    monkeypatch.setattr(sweep, "_run_point", real)
    assert sweep.run_sweep(pts, tmp_path / "out", jobs=1)["ran"] == 1


def test_the_swept_value_wins_over_a_variant_that_sets_the_key(tmp_path):
    """A variant that sets a swept key itself (as seed003_sensitivity's CI variant sets
    switch.ci.high) must still run at every swept value."""
    p = tmp_path / "v.toml"
    p.write_text(TINY.replace('transport.kind = "reno"', 'transport.kind = "reno"\ntransport.ecn = true\nswitch.aqm = { kind = "step", threshold = "5KB" }'))
    pts = [q for q in sweep.grid(str(p), seeds=[1]) if q.variant == "Reno"]
    depth = {}
    for q in pts:
        r = dcnsim.run(json.loads(q.scenario), variant="Reno", seed=q.seed)
        depth[dict(q.values)["switch.aqm.threshold"]] = int(r.ports["max_depth_bytes"].max())
    assert depth["60KB"] > depth["10KB"] > 5_000, depth


def test_run_ignores_the_sweep_table(tiny):
    r = dcnsim.run(str(tiny), variant="DCTCP")
    assert r.summary["flows_finished"] == 2


def test_sweep_table_resume_and_workers(tiny, tmp_path):
    pts = sweep.grid(str(tiny))
    # an interrupted sweep: half the runs done
    first = sweep.run_sweep(pts[:3], tmp_path / "a", jobs=1)
    assert first["ran"] == 3
    full = sweep.run_sweep(pts, tmp_path / "a", jobs=2)
    assert (full["ran"], full["skipped"]) == (5, 3)
    again = sweep.run_sweep(pts, tmp_path / "b", jobs=1)
    a = (tmp_path / "a" / "sweep.parquet").read_bytes()
    b = (tmp_path / "b" / "sweep.parquet").read_bytes()
    assert a == b, "same table whatever the workers and the resumption"
    t = pd.read_parquet(tmp_path / "a" / "sweep.parquet")
    assert {"switch.aqm.threshold", "variant", "seed", "bin", "mean_fct_us", "p99_fct_us", "drops", "max_queue_bytes"} <= set(t.columns)
    assert len(t) == len(pts) * len(dcnsim.run(str(tiny), variant="DCTCP").fct_table())
    # every run's own outputs are there
    assert all((tmp_path / "a" / "runs" / p.run_id / "flows.parquet").is_file() for p in pts)
    # a deeper threshold lets the queue grow deeper (DCTCP, every seed)
    dq = t[(t["variant"] == "DCTCP") & (t["bin"] == "all")].groupby("switch.aqm.threshold")["max_queue_bytes"].min()
    assert dq["60KB"] > dq["10KB"]
    s = pd.read_csv(tmp_path / "a" / "sweep_summary.csv")
    assert (s["seeds"] == 2).all() and "mean_fct_us_ci95" in s
    # the change against the first variant (DCTCP) with the paired verdict, by hand for one cell
    cell = s[(s["variant"] == "Reno") & (s["bin"] == "all") & (s["switch.aqm.threshold"] == "10KB")].iloc[0]
    rows = t[(t["bin"] == "all") & (t["switch.aqm.threshold"] == "10KB")].set_index(["variant", "seed"])["mean_fct_us"]
    diffs = [rows[("Reno", k)] - rows[("DCTCP", k)] for k in (1, 2)]
    d, h = sweep.ci95(diffs)
    assert cell["mean_fct_us_change"] == pytest.approx(d / ((rows[("DCTCP", 1)] + rows[("DCTCP", 2)]) / 2))
    assert bool(cell["mean_fct_us_change_ci_excludes_0"]) == (abs(d) > h)
    assert s[s["variant"] == "DCTCP"]["mean_fct_us_change"].isna().all()


def test_cli_sweep(tiny, tmp_path):
    out = tmp_path / "cli"
    cmd = [sys.executable, "-c", "import sys; from dcnsim.cli import main; sys.exit(main())", "sweep", str(tiny), "-o", str(out), "--variant", "DCTCP", "--seeds", "2", "--no-progress", "-j", "1"]
    env = dict(__import__("os").environ, COLUMNS="250")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "4 runs (4 run now, 0 already there)" in proc.stdout
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert "4 runs (0 run now, 4 already there)" in proc.stdout
    bad = subprocess.run(cmd[:3] + ["sweep", str(tiny), "-o", str(out), "--set", "switch.aqm.bogus=1"], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "switch.aqm.bogus" in bad.stderr


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def ray_head(tmp_path_factory):
    """A Ray head on this machine's loopback, started and stopped by the test."""
    pytest.importorskip("ray", reason="the ray extra: pip install '.[ray]'")
    import shutil

    ray_bin = shutil.which("ray") or str(Path(sys.executable).parent / "ray")
    gcs, client = _free_port(), _free_port()
    start = [ray_bin, "start", "--head", "--node-ip-address=127.0.0.1", f"--port={gcs}", f"--ray-client-server-port={client}", "--num-cpus=2", "--include-dashboard=false", "--disable-usage-stats"]
    proc = subprocess.run(start, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    yield f"ray://127.0.0.1:{client}"
    subprocess.run([ray_bin, "stop", "--force"], capture_output=True, timeout=120)


def test_ray_cluster_gives_the_local_tables(tiny, tmp_path, ray_head):
    """A 2 x 3 grid with 3 seeds through the local pool and through a local Ray cluster:
    identical sweep.parquet bytes."""
    pts = sweep.grid(str(tiny), [sweep.parse_set("switch.aqm.threshold=10KB,30KB"), sweep.parse_set("topology.host_link.rate=10Gbps,25Gbps,40Gbps")], 3, ["DCTCP"])
    assert len(pts) == 2 * 3 * 3
    local = sweep.run_sweep(pts, tmp_path / "local", jobs=2)
    on_ray = sweep.run_sweep(pts, tmp_path / "ray", cluster=ray_head)
    assert (local["ran"], on_ray["ran"]) == (18, 18)
    assert (tmp_path / "local" / "sweep.parquet").read_bytes() == (tmp_path / "ray" / "sweep.parquet").read_bytes()
    p = pts[0].run_id
    assert (tmp_path / "local" / "runs" / p / "flows.parquet").read_bytes() == (tmp_path / "ray" / "runs" / p / "flows.parquet").read_bytes()


def test_a_cluster_that_does_not_answer_leaves_no_folder(tiny, tmp_path):
    pytest.importorskip("ray")
    out = tmp_path / "never"
    with pytest.raises(dcnsim.ScenarioError, match=r"--cluster .banana.: cannot reach the Ray cluster"):
        sweep.run_sweep(sweep.grid(str(tiny), seeds=1, variants=["DCTCP"]), out, cluster="banana")
    assert not out.exists()


def test_ray_client_server_failures_are_retried_then_reported(tiny, monkeypatch):
    """A cluster that answers but fails to start this client's server (Ray's
    ConnectionAbortedError "Initialization failure from server", seen when gRPC's fork
    handlers abort it on a loaded machine) is tried again, then reported in one line."""
    ray = pytest.importorskip("ray", reason="the ray extra: pip install '.[ray]'")
    calls = []

    def failing_init(**kwargs):
        calls.append(kwargs["address"])
        raise ConnectionAbortedError("Initialization failure from server:\nchild died")

    monkeypatch.setattr(ray, "init", failing_init)
    monkeypatch.setattr(ray, "shutdown", lambda: None)
    monkeypatch.setattr(sweep.time, "sleep", lambda s: None)
    pts = sweep.grid(str(tiny), [], 1, ["DCTCP"])
    with pytest.raises(dcnsim.ScenarioError, match="could not start a client server .* 3 attempts"):
        sweep._run_on_ray(pts, "ray://127.0.0.1:1", lambda outcome: None)
    assert calls == ["ray://127.0.0.1:1"] * sweep._RAY_INIT_ATTEMPTS


def test_interrupted_sweep_resumes_with_only_the_missing_runs(tiny, tmp_path):
    """Ctrl-C in the middle of a sweep: the finished runs stay, nothing half-written is
    left, and a rerun executes only the runs that are missing."""
    import os
    import signal
    import time

    slow = tmp_path / "slow.toml"
    # long enough runs (about 0.3 s each) that the interrupt lands in the middle
    slow.write_text(tiny.read_text().replace('max_time = "2ms"', 'max_time = "200ms"').replace('"200KB"', '"50MB"'))
    out = tmp_path / "out"
    cmd = [sys.executable, "-c", "import sys; from dcnsim.cli import main; sys.exit(main())", "sweep", str(slow), "-o", str(out), "--seeds", "3", "--no-progress", "-j", "1"]
    env = dict(os.environ, COLUMNS="250")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, preexec_fn=sigint_as_at_a_terminal)
    deadline = time.monotonic() + 240
    # a run is complete once its manifest.json is written (last); a folder cut short after
    # point.json but before the manifest is run again (counting point.json files here made
    # the test flaky: an interrupt between the two writes)
    while time.monotonic() < deadline and len(list(out.glob("runs/*/manifest.json"))) < 2:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    done = len(list(out.glob("runs/*/manifest.json")))
    total = 2 * 2 * 3
    assert 2 <= done < total, "interrupted in the middle"
    assert not (out / "sweep.parquet").exists()
    leftovers = [p for p in out.rglob("*") if p.is_file() and (p.name.startswith(".") or "tmp" in p.name)]
    assert leftovers == [], leftovers
    # every run folder is complete or absent: the marker is written last
    for d in out.glob("runs/*"):
        if (d / "manifest.json").is_file():
            assert {"flows.parquet", "ports.parquet", "summary.json", "scenario.json"} <= {f.name for f in d.iterdir()}
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    assert again.returncode == 0, again.stderr
    assert f"{total} runs ({total - done} run now, {done} already there)" in again.stdout


def test_ci95_covers_the_mm1_waiting_time():
    """The 95% interval of a mean over seeds covers the true value in about 95% of
    repetitions. Metric with a known law: the mean waiting time of an M/M/1 queue, a
    switch egress queue fed by Poisson arrivals of exponentially sized UDP packets (mean
    500 B, load 0.5, 10 Gb/s: service 400 ns). Pollaczek-Khinchine, with the exact moments of
    the rounded, clamped sizes: Wq = lambda E[S^2] / (2 (1 - rho)) = 400.0 ns. The host link
    runs at 10 Tb/s so the NIC passes the Poisson process on (Burke) without reshaping it.

    200 repetitions of 4 seeds (t with 3 degrees of freedom): covered ~ Binomial(200, 0.95),
    mean 190, sd 3.1; accepted 181..197 (about +-3 sd). A normal quantile in place of
    Student's t would cover about 86%, an interval 3x too wide 100%."""
    import numpy as np

    scen = {
        "scenario": {"name": "mm1", "max_time": "20ms"},
        "topology": {
            "kind": "dumbbell", "senders": 1, "receivers": 1, "mtu": "9000B",
            "host_link": {"rate": "10Tbps", "delay": "1us"}, "bottleneck": {"rate": "10Gbps", "delay": "1us"},
        },
        "switch": {"buffer": {"model": "static", "queue": "100MB"}, "aqm": {"kind": "fixed", "p": 0.0}},
        "transport": {"kind": "udp", "udp": {"rate": "5Gbps", "arrivals": "poisson", "sizes": "exponential", "packet_size": "500B"}},
        "workload": [{"kind": "flows", "flows": [{"src": 0, "dst": 1, "size": "5MB"}]}],
    }
    # exact moments of round(Exp(500 B)) clamped to [1 B, 9000 B]
    k = np.arange(0, 9001)
    p = np.exp(-np.maximum(k - 0.5, 0) / 500.0) - np.exp(-(k + 0.5) / 500.0)
    p[-1] = np.exp(-(9000 - 0.5) / 500.0)
    b = np.clip(k, 1, 9000).astype(float)
    lam = 1 / 800e-9  # packets/s: 500 B at 5 Gb/s
    s1, s2 = (p * b).sum() * 0.8e-9, (p * b * b).sum() * 0.64e-18
    rho = lam * s1
    wq_ps = lam * s2 / (2 * (1 - rho)) * 1e12
    assert wq_ps == pytest.approx(400_000, rel=1e-4)

    def waiting(seed: int) -> float:
        ports = dcnsim.run(scen, seed=seed).ports
        return float(ports.loc[ports["tx_packets"] > 0, "sojourn_mean_ps"].max())

    reps, n = 200, 4
    w = [waiting(s) for s in range(1, reps * n + 1)]
    covered = 0
    for i in range(reps):
        mean, half = sweep.ci95(w[i * n:(i + 1) * n])
        covered += abs(mean - wq_ps) <= half
    print(f"M/M/1: mean wait {np.mean(w) / 1e3:.1f} ns (theory {wq_ps / 1e3:.1f}), {covered} of {reps} intervals cover it")
    assert abs(np.mean(w) / wq_ps - 1) < 0.01, "the simulated M/M/1 queue has the theoretical mean wait"
    assert 181 <= covered <= 197, f"{covered} of {reps} intervals cover Wq"


def test_shipped_sensitivity_sweep(tmp_path):
    """seed003_sensitivity_small: the XOFF x CI High grid of seed 003's memory-sensitivity
    slides, 2 x 2 x 2 variants x 5 seeds, every point valid. Run here for the CI variant and
    one seed: a higher XOFF gives fewer PAUSE frames ("fewer pause and CNP frames are
    triggered under 1500KB"; 5 seeds give 468 -> 267 at CI High 300 KB), and CI High
    reaches the CI variant (its runs differ)."""
    pts = sweep.grid("seed003_sensitivity_small")
    assert len(pts) == 2 * 2 * 2 * 5
    ci = [p for p in sweep.grid("seed003_sensitivity_small", seeds=[1], variants=["CI"])]
    res = sweep.run_sweep(ci, tmp_path / "s", jobs=2)
    t = res["table"]
    # the rows of all flows (the scenario's flows have several tags: rows per tag follow)
    t = t[(t["bin"] == "all") & (t["tag"] == "all")].set_index(["switch.pfc.xoff", "switch.ci.high"])
    for high in ("300KB", "600KB"):
        assert t.loc[("1500KB", high), "pause_frames"] < t.loc[("750KB", high), "pause_frames"]
    assert t.loc[("750KB", "300KB"), "mean_fct_us"] != t.loc[("750KB", "600KB"), "mean_fct_us"]


PFC_SFC = """
[scenario]
name = "pfc_sfc_sweep"
max_time = "2ms"

[topology]
kind = "dumbbell"
senders = 4
host_link = { rate = "10Gbps", delay = "1us" }
bottleneck = { rate = "10Gbps", delay = "1us" }

[switch]
buffer = { model = "shared", pool = "2MB" }
pfc = { xoff = "30KB", xon = "20KB" }

[transport]
kind = "dcqcn"

[[workload]]
kind = "incast"
fan_in = 4
receiver = 4
size = "100KB"

[[variant]]
name = "PFC"

[[variant]]
name = "PFC+SFC"
switch.sfc = { trigger = "50KB", target = "20KB" }

[[variant]]
name = "lossy"
remove = ["switch.pfc"]
"""


def test_a_swept_key_never_switches_a_mechanism_on(tmp_path):
    """Sweeping switch.sfc.trigger over a PFC and a PFC+SFC variant created switch.sfc in
    the PFC variant too (both came out identical, "+0.0% (in noise)"). The key is written
    only where its table exists; the other variants run unchanged, once, and the sweep
    says so."""
    p = tmp_path / "pfc_sfc.toml"
    p.write_text(PFC_SFC)
    pts = sweep.grid(str(p), [sweep.parse_set("switch.sfc.trigger=40KB,60KB")])
    by = {(p.variant, p.values[0][1]): p for p in pts}
    for t in ("40KB", "60KB"):
        assert "sfc" not in dcnsim._core.merged(by[("PFC", t)].scenario, "json", "PFC")["switch"]
        assert dcnsim._core.merged(by[("PFC+SFC", t)].scenario, "json", "PFC+SFC")["switch"]["sfc"]["trigger"] == t
    # the unchanged variants simulate the same thing at every value: one run each
    assert by[("PFC", "40KB")].run_id == by[("PFC", "60KB")].run_id
    assert by[("PFC+SFC", "40KB")].run_id != by[("PFC+SFC", "60KB")].run_id
    assert len({p.run_id for p in pts}) == 4
    want = "switch.sfc.trigger does not apply to variant 'PFC' (it has no 'switch.sfc' table)"
    assert any(w.startswith(want) for w in sweep.warnings_of(pts))
    with pytest.warns(dcnsim.DcnsimWarning, match=r"does not apply to variant 'PFC'"):
        out = sweep.run_sweep(pts, tmp_path / "out", jobs=1)
    assert (out["ran"], out["distinct"]) == (4, 4)
    assert json.loads((tmp_path / "out" / "sweep.json").read_text())["warnings"] == out["warnings"]
    t = out["table"]
    allrows = t[t["bin"] == "all"].set_index(["switch.sfc.trigger", "variant"])["mean_fct_us"]
    assert allrows[("40KB", "PFC")] == allrows[("60KB", "PFC")]
    assert allrows[("40KB", "PFC+SFC")] != allrows[("40KB", "PFC")]
    # a key whose table no variant has is refused, naming the key
    with pytest.raises(dcnsim.ScenarioError, match=r"sweep key 'switch.qcn.q_eq': .* has no table 'switch.qcn'; a swept key never creates a table"):
        sweep.grid(str(p), [sweep.parse_set("switch.qcn.q_eq=10KB")])
    # ... and so is one whose variants with the table were not chosen
    with pytest.raises(dcnsim.ScenarioError, match=r"sweep key 'switch.sfc.trigger': variant 'PFC' of 'pfc_sfc_sweep' has no table"):
        sweep.grid(str(p), [sweep.parse_set("switch.sfc.trigger=40KB")], variants=["PFC"])


def test_identical_variants_are_warned_about(tmp_path):
    """Two variants that resolve to the same scenario are named in compare's warnings (the
    Comparison, comparison.md, the terminal, Python's warnings) and in a sweep's."""
    p = tmp_path / "same.toml"
    p.write_text(PFC_SFC + '\n[[variant]]\nname = "PFC again"\nswitch.pfc = { xoff = "30KB" }\n')
    with pytest.warns(dcnsim.DcnsimWarning, match=r"variants 'PFC' and 'PFC again' resolve to the same scenario"):
        cmp = dcnsim.compare(str(p), variants=["PFC", "PFC again", "lossy"], jobs=1)
    same = [w for w in cmp.warnings if "resolve to the same scenario" in w]
    assert len(same) == 1 and "PFC again" in cmp.markdown_report()
    # variants not compared together are not warned about (lossy's DCQCN without ECN or
    # PFC is, before the run)
    cmp = dcnsim.compare(str(p), variants=["PFC", "lossy"], jobs=1)
    assert not [w for w in cmp.warnings if "resolve to the same scenario" in w]
    assert [w for w in cmp.warnings if "never acted" not in w] == [
        'lossy: transport.cc = "dcqcn" with neither ECN marking (switch.aqm) nor PFC (switch.pfc): no CNP is ever sent and the fabric drops'
    ], cmp.warnings
    from click.testing import CliRunner

    from dcnsim.cli import cli

    res = CliRunner().invoke(cli, ["compare", str(p), "--variant", "PFC", "--variant", "PFC again", "-j", "1", "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "warning: variants 'PFC' and 'PFC again' resolve to the same scenario" in res.output
    pts = sweep.grid(str(p), [sweep.parse_set("switch.pfc.xon=10KB,20KB")], variants=["PFC", "PFC again"])
    # the swept value goes into both variants, so they stay identical at every point
    ws = sweep.warnings_of(pts)
    assert ws == [f"at switch.pfc.xon={x!r}: variants 'PFC' and 'PFC again' resolve to the same scenario: their comparison measures nothing" for x in ("10KB", "20KB")]


def test_a_variant_switches_a_base_mechanism_off(tmp_path):
    """`remove = ["switch.pfc"]` runs the variant without PFC (`switch.pfc = {}` merges into
    the base's and changes nothing, as the reference says)."""
    p = tmp_path / "remove.toml"
    p.write_text(PFC_SFC + '\n[[variant]]\nname = "empty table"\nswitch.pfc = {}\n')
    runs = {v: dcnsim.run(str(p), variant=v).summary for v in ("PFC", "lossy", "empty table")}
    assert runs["PFC"]["pfc_frames"] > 0
    # no PFC: no PFC counters at all
    assert "pfc_frames" not in runs["lossy"] and "xoff_time_ps" not in runs["lossy"]
    assert runs["empty table"]["pfc_frames"] == runs["PFC"]["pfc_frames"]


def test_python_sweep_returns_the_tidy_table(tiny, tmp_path):
    """dcnsim.sweep(...) is the command's sweep.parquet as a DataFrame; keys as a dict or as
    --set strings give the same table."""
    t = dcnsim.sweep(str(tiny), {"switch.aqm.threshold": ["10KB", "60KB"]}, seeds=1, variants=["DCTCP"], jobs=1)
    assert list(t.columns[:4]) == ["switch.aqm.threshold", "variant", "seed", "run_id"]
    assert set(t["switch.aqm.threshold"]) == {"10KB", "60KB"} and set(t["variant"]) == {"DCTCP"}
    same = dcnsim.sweep(str(tiny), ["switch.aqm.threshold=10KB,60KB"], seeds=1, variants=["DCTCP"], jobs=1, outdir=tmp_path / "kept")
    pd.testing.assert_frame_equal(t, same)
    assert (tmp_path / "kept" / "sweep.parquet").is_file()
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "kept" / "sweep.parquet"), same)


def test_a_report_counts_only_the_runs_of_the_sweep_saved_last(tiny, tmp_path):
    """runs/ keeps the runs of every sweep saved in the folder (a later sweep reuses them);
    the report of the folder is of the last sweep's runs only."""
    from dcnsim import report

    out = tmp_path / "s"
    dcnsim.sweep(str(tiny), {"switch.aqm.threshold": ["10KB", "60KB"]}, seeds=1, variants=["DCTCP"], jobs=1, outdir=out)
    dcnsim.sweep(str(tiny), {"switch.aqm.threshold": ["60KB"]}, seeds=1, variants=["DCTCP"], jobs=1, outdir=out)
    assert len(list((out / "runs").iterdir())) == 2
    report.write_report(out)
    page = (out / "report.html").read_text()
    assert re.search(r"<td>runs</td><td>1</td>", page), re.findall(r"<td>runs</td><td>\d+</td>", page)
    assert "switch.aqm.threshold=10KB" not in page and "switch.aqm.threshold=60KB" in page


def test_sweep_plot_puts_sizes_on_a_numeric_axis(tiny, tmp_path):
    """Sizes, rates and durations are placed by value in a readable unit (the plot placed
    them evenly as labels: 10 KB and 60 KB one step apart, as 1 and 2 would be)."""
    pts = sweep.grid(str(tiny), [sweep.parse_set("switch.aqm.threshold=10KB,20KB,60KB")], 1, ["DCTCP"])
    out = sweep.run_sweep(pts, tmp_path / "out", jobs=1)
    fig = sweep.plot_sweep(out["summary"], "switch.aqm.threshold")
    bottom = [ax for ax in fig.axes if ax.get_xlabel()]
    assert bottom and all(ax.get_xlabel() == "switch.aqm.threshold (KB)" for ax in bottom)
    for ax in fig.axes:
        xs = [list(line.get_xdata()) for line in ax.lines if len(line.get_xdata()) == 3]
        assert xs and [float(x) for x in xs[0]] == [10.0, 20.0, 60.0]
    assert "mean FCT (us) against switch.aqm.threshold" in fig.get_suptitle()


def test_sweep_plot_has_a_panel_per_bin_and_the_paired_change(tmp_path):
    """sweep.png: a panel per size bin with flows and one of all flows, each over a panel
    of the change against the baseline point whose error bar is the paired 95% CI
    (relative half-width ``_vs_baseline_ci95``, checked by hand from the per-seed runs)."""
    from dcnsim.sweeps import ci95

    p = tmp_path / "s.toml"
    p.write_text(tiny_text(), encoding="utf-8")
    pts = sweep.grid(str(p), [sweep.parse_set("topology.bottleneck.rate=2Gbps,10Gbps")], 3)
    out = sweep.run_sweep(pts, tmp_path / "a", jobs=1)
    t, s = out["table"], out["summary"]
    bins = [b for b in dict.fromkeys(s["bin"]) if s.loc[s["bin"] == b, "mean_fct_us"].notna().any()]
    fig = sweep.plot_sweep(s, "topology.bottleneck.rate")
    tops, lows = fig.axes[0::2], fig.axes[1::2]  # made bin by bin, each panel over its change
    assert len(fig.axes) == 2 * len(bins) and [ax.get_title() for ax in tops] == [f"{b} flows" for b in bins]
    assert "all" in bins
    t = t[t["bin"] == "all"]
    fast, base = (t[t["topology.bottleneck.rate"] == v].set_index("seed")["mean_fct_us"] for v in ("10Gbps", "2Gbps"))
    d, h = ci95(list(fast - base))
    row = s[(s["bin"] == "all") & (s["topology.bottleneck.rate"] == "10Gbps")]
    assert row["mean_fct_us_vs_baseline_ci95"].item() == pytest.approx(abs(h / base.mean()))
    low = lows[bins.index("all")]
    assert low.get_ylabel() == "change vs baseline (%)" and "below: change against topology.bottleneck.rate=2Gbps" in fig.get_suptitle()
    ys = [list(line.get_ydata()) for line in low.lines if len(line.get_ydata()) == 2]
    assert ys and ys[0][0] == 0.0 and ys[0][1] == pytest.approx(100 * d / base.mean())


def test_sweep_folder_holds_the_scenario_and_says_what_was_cut_off(tmp_path):
    """The sweep's folder keeps the scenario as given (the report shows it as TOML); runs
    that end with unfinished flows are said on the terminal and in sweep.json; a scenario
    without variants shows no empty variant column."""
    from click.testing import CliRunner

    from dcnsim.cli import cli

    p = tmp_path / "cut.toml"
    p.write_text(tiny_text(max_time="30us"), encoding="utf-8")
    res = CliRunner().invoke(cli, ["sweep", str(p), "-o", str(tmp_path / "out"), "--set", "topology.bottleneck.rate=10Gbps,40Gbps", "-j", "1", "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "2 of 2 runs ended with unfinished flows" in res.output
    meta = json.loads((tmp_path / "out" / "sweep.json").read_text())
    assert any("unfinished flows" in w for w in meta["warnings"])
    assert (tmp_path / "out" / "scenario.toml").read_text() == p.read_text()
    page = (tmp_path / "out" / "report.html").read_text()
    assert "[topology]" in page and "<th>variant</th>" not in page
    header = next(line for line in res.output.splitlines() if "seeds" in line and "mean FCT" in line)
    assert "variant" not in header


def test_points_are_compared_with_a_named_baseline_point_paired_by_seed(tmp_path):
    """Each point's change against the baseline point (by default the first value of the
    first swept key; --baseline KEY=VALUE names another), from the per-seed differences
    (checked by hand), '*' only where their 95% CI excludes 0; a baseline that is not a
    swept value is refused before anything runs."""
    from click.testing import CliRunner

    from dcnsim.cli import cli
    from dcnsim.sweeps import ci95

    p = tmp_path / "s.toml"
    p.write_text(tiny_text(), encoding="utf-8")
    pts = sweep.grid(str(p), [sweep.parse_set("topology.bottleneck.rate=2Gbps,5Gbps,10Gbps")], 3)
    out = sweep.run_sweep(pts, tmp_path / "a", jobs=1, baseline="topology.bottleneck.rate=10Gbps")
    t, s = out["table"], out["summary"]
    s = s[s["bin"] == "all"].set_index("topology.bottleneck.rate")
    assert s.loc["10Gbps", "baseline"] == "topology.bottleneck.rate=10Gbps" and s["mean_fct_us_vs_baseline"].isna()["10Gbps"]
    t = t[t["bin"] == "all"]
    slow, base = (t[t["topology.bottleneck.rate"] == v].set_index("seed")["mean_fct_us"] for v in ("2Gbps", "10Gbps"))
    d, h = ci95(list(slow - base))
    assert s.loc["2Gbps", "mean_fct_us_vs_baseline"] == pytest.approx(d / base.mean())
    assert s.loc["2Gbps", "mean_fct_us_vs_baseline"] > 1.0  # a 5x slower bottleneck
    assert bool(s.loc["2Gbps", "mean_fct_us_vs_baseline_ci_excludes_0"]) == (abs(d) > h)
    # the default: the first value of the first swept key (a console wide enough for the
    # table's header, whatever the environment's COLUMNS: pytest-xdist's workers set 80)
    res = CliRunner(env={"COLUMNS": "200"}).invoke(cli, ["sweep", str(p), "-o", str(tmp_path / "a"), "--set", "topology.bottleneck.rate=2Gbps,5Gbps,10Gbps", "--seeds", "3", "-j", "1", "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "vs topology.bottleneck.rate=2Gbps" in res.output and "0 run now" in res.output
    bad = CliRunner().invoke(cli, ["sweep", str(p), "-o", str(tmp_path / "b"), "--set", "topology.bottleneck.rate=2Gbps,5Gbps", "--baseline", "topology.bottleneck.rate=7Gbps", "--no-progress"])
    assert bad.exit_code == 2 and "not swept over '7Gbps'" in bad.output, bad.output
    assert not (tmp_path / "b" / "runs").exists()


TAGGED = TINY.replace(
    'flows = [{ src = 0, dst = 2, size = "200KB" }, { src = 1, dst = 2, size = "200KB" }]',
    'flows = [{ src = 0, dst = 2, size = "200KB", tag = "bulk" }, { src = 1, dst = 2, size = "20KB", start = "50us", tag = "rpc" },'
    ' { src = 0, dst = 2, size = "30KB", start = "60us", tag = "rpc" }]',
)


def test_flows_of_several_tags_get_rows_per_tag(tmp_path):
    """Per-tag rows, as compare has: each tag's FCT table from its own flows (checked
    against the run's flows.parquet), summarised and paired like the rows of all flows,
    and shown on the terminal; sweep.png stays on all flows."""
    from click.testing import CliRunner

    from dcnsim.cli import cli
    from dcnsim.tables import fct_table

    p = tmp_path / "t.toml"
    p.write_text(TAGGED, encoding="utf-8")
    out = sweep.run_sweep(sweep.grid(str(p), [], None), tmp_path / "a", jobs=1)
    t, s = out["table"], out["summary"]
    assert set(t["tag"]) == {"all", "bulk", "rpc"}
    run = t.iloc[0]
    flows = pd.read_parquet(tmp_path / "a" / "runs" / run["run_id"] / "flows.parquet")
    want = fct_table(flows[flows["tag"].astype(str) == "rpc"], json.loads((tmp_path / "a" / "runs" / run["run_id"] / "summary.json").read_text())["fct_bins"])
    got = t[(t["run_id"] == run["run_id"]) & (t["tag"] == "rpc")]
    assert list(got["count"]) == list(want["count"]) and got[got["bin"] == "all"]["count"].item() == 2
    assert got["p99_fct_us"].tolist() == pytest.approx(want["p99_fct_us"].tolist(), nan_ok=True)
    # the summary pairs per tag: Reno's rpc rows against DCTCP's rpc rows
    rpc = s[(s["tag"] == "rpc") & (s["bin"] == "all") & (s["variant"] == "Reno")]
    assert len(rpc) == 2 and rpc["mean_fct_us_change"].notna().all()
    res = CliRunner().invoke(cli, ["sweep", str(p), "-o", str(tmp_path / "a"), "-j", "1", "--no-progress"], terminal_width=200)
    assert res.exit_code == 0, res.output
    assert "per tag" in res.output and "rpc" in res.output and "bulk" in res.output
    # without several tags, no tag column
    q = tmp_path / "u.toml"
    q.write_text(TINY, encoding="utf-8")
    assert "tag" not in sweep.run_sweep(sweep.grid(str(q), [], None), tmp_path / "b", jobs=1)["table"].columns
