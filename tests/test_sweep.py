"""`dcnsim sweep`: a grid of scenario keys x variants x seeds, one tidy table, resumable,
identical results whatever the number of workers."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import dcnsim
from dcnsim import sweep

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


def test_a_bad_point_is_refused_before_any_run(tiny):
    with pytest.raises(dcnsim.ScenarioError, match=r"sweep point switch.aqm.threshold='30kb'.*switch.aqm.threshold"):
        sweep.grid(str(tiny), [sweep.parse_set("switch.aqm.threshold=30KB,30kb")])
    with pytest.raises(dcnsim.ScenarioError, match=r"--set 'switch.aqm.threshold'"):
        sweep.parse_set("switch.aqm.threshold")


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
