"""Nothing damaged is reused, nothing is left behind, error lines a person can read
(issue 55 parts 1, 3 and 4): a resumed sweep checks each run's files against the
manifest written last and runs again what fails; temporary files and folders of killed
processes are removed by the next write or sweep; a comparison cut short while saving is
said; a full disk names the file; long values are cut in error lines."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import pytest

import dcnsim
from conftest import tiny as tiny_text
from dcnsim import sweeps as sweep
from dcnsim.io import remove_stale_temps, write_files_atomic


def _dead_pid() -> int:
    """The id of a process that has ended (not reused this soon: Linux counts upwards)."""
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


@pytest.fixture()
def finished(tmp_path: Path):
    """A finished 4-run sweep: (scenario path, its folder, its table)."""
    p = tmp_path / "s.toml"
    p.write_text(tiny_text(), encoding="utf-8")
    out = tmp_path / "out"
    pts = sweep.grid(str(p), [sweep.parse_set("topology.bottleneck.rate=5Gbps,10Gbps")], 2)
    table = sweep.run_sweep(pts, out, jobs=1)["table"]
    return pts, out, table


DAMAGE = {
    "truncated flows.parquet": ("flows.parquet", lambda b: b[: len(b) // 2]),
    "random ports.parquet": ("ports.parquet", lambda b: os.urandom(len(b))),
    "emptied summary.json": ("summary.json", lambda b: b""),
    "deleted flows.parquet": ("flows.parquet", None),
    "valid but edited point.json": ("point.json", lambda b: json.dumps({**json.loads(b), "fct": []}).encode()),
    "deleted manifest.json": ("manifest.json", None),
}


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_a_resumed_sweep_runs_again_a_run_whose_files_are_damaged(finished, case):
    pts, out, table = finished
    name, damage = DAMAGE[case]
    run = out / "runs" / pts[1].run_id
    before = (run / name).read_bytes()
    if damage is None:
        (run / name).unlink()
    else:
        (run / name).write_bytes(damage(before))
    with pytest.warns(dcnsim.DcnsimWarning, match=r"1 run\(s\) already there are run again") as w:
        res = sweep.run_sweep(pts, out, jobs=1)
    assert res["ran"] == 1 and res["skipped"] == len({p.run_id for p in pts}) - 1
    said = [str(x.message) for x in w if "run again" in str(x.message)]
    assert len(said) == 1 and f"runs/{pts[1].run_id}" in said[0]
    if name.endswith(".parquet"):
        assert (run / name).read_bytes() == before  # redone, byte for byte
    else:
        assert json.loads((run / name).read_text())  # redone (its wall time is the new run's)
    pd.testing.assert_frame_equal(res["table"], table)
    # and now it is whole: nothing runs
    assert sweep.run_sweep(pts, out, jobs=1)["ran"] == 0


def test_temporary_folders_of_killed_sweep_processes_are_removed(tmp_path):
    dead = Path(tempfile.gettempdir()) / f"dcnsim-sweep-{_dead_pid()}-abcd1234"
    dead.mkdir()
    (dead / "flows.parquet").write_bytes(b"x" * 1000)
    mine = Path(tempfile.mkdtemp(prefix=sweep.temp_dir_prefix()))
    try:
        p = tmp_path / "s.toml"
        p.write_text(tiny_text(), encoding="utf-8")
        sweep.run_sweep(sweep.grid(str(p), [], 1), tmp_path / "out", jobs=1)
        assert not dead.exists()
        assert mine.exists()  # a live process's folder stays
    finally:
        for d in (dead, mine):
            if d.exists():
                import shutil

                shutil.rmtree(d)


def test_a_later_write_removes_the_temporary_files_of_a_killed_writer(tmp_path, dcnsim_cli, tiny_file):
    out = tmp_path / "run"
    out.mkdir()
    stale = out / f".flows.parquet.{_dead_pid()}.0123abcd.tmp"
    stale.write_bytes(b"half a parquet file")
    live = out / f".flows.parquet.{os.getpid()}.0123abcd.tmp"
    live.write_bytes(b"being written")
    r = dcnsim_cli("run", tiny_file, "-o", out)
    assert r.returncode == 0, r.stderr
    assert not stale.exists() and live.exists()
    assert remove_stale_temps(out) == 0


def test_a_full_disk_names_the_file(tmp_path):
    def full(path: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError) as e:
        write_files_atomic(tmp_path, {"flows.parquet": full})
    assert e.value.filename == str(tmp_path / "flows.parquet") and "No space left" in str(e.value)
    assert not [f for f in os.listdir(tmp_path)]  # nothing half-written


def test_a_comparison_cut_short_while_saving_is_said(tmp_path):
    from dcnsim.report import write_report

    r = dcnsim.run(tiny_text())
    r.save(tmp_path / "dctcp")
    r.save(tmp_path / "reno")
    with pytest.raises(FileNotFoundError, match=r"runs in 2 subfolders .* but no comparison.csv: a comparison cut short"):
        write_report(tmp_path)


def test_sweep_on_a_cluster_without_ray_makes_nothing(tmp_path, monkeypatch):
    def no_ray():
        raise dcnsim.ScenarioError("--cluster needs Ray: pip install 'dcnsim[ray]'")

    monkeypatch.setattr(sweep, "_ray", no_ray)
    p = tmp_path / "s.toml"
    p.write_text(tiny_text(), encoding="utf-8")
    with pytest.raises(dcnsim.ScenarioError, match="needs Ray"):
        sweep.run_sweep(sweep.grid(str(p), [], 1), tmp_path / "out", cluster="auto")
    assert not (tmp_path / "out").exists()


def test_error_lines_cut_long_values(tmp_path, dcnsim_cli):
    """A value of a megabyte is quoted by its ends, on a line a terminal shows."""
    p = tmp_path / "s.toml"
    p.write_text(tiny_text().replace('size = "', 'size = "' + "9" * 1_000_000, 1), encoding="utf-8")
    r = dcnsim_cli("validate", p)
    assert r.returncode == 2
    line = r.stderr.strip()
    assert line.startswith("error: workload[0].flows[0].size: invalid value") and len(line) < 400 and "characters]" in line, line[:500]
    p.write_text(tiny_text(), encoding="utf-8")
    r = dcnsim_cli("sweep", p, "-o", tmp_path / "o", "--set", "topology.bottleneck.rate=" + "x" * 100_000)
    assert r.returncode == 2 and len(r.stderr) < 600 and "characters]" in r.stderr, r.stderr[:600]


K32 = Path(__file__).resolve().parents[1] / "bench" / "scenarios" / "fat_tree_k32_websearch.toml"


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the peak from /proc (Linux)")
@pytest.mark.parametrize("threads", [1, 4])
def test_the_estimate_bounds_what_the_process_holds(tmp_path, threads):
    """A k = 32 fat-tree (8,192 hosts, 49,152 ports) for 20 us, as `dcnsim run` holds it
    (interpreter and libraries included), on 1 and on 4 threads: its peak resident memory
    is below the estimate the run was admitted on, and the estimate within 2.5x of it (a
    split run copies every port's and host's state per partition: the estimate counts the
    threads)."""
    text = K32.read_text().replace('max_time = "10s"', 'max_time = "20us"').replace('arrivals_for = "1ms"', 'arrivals_for = "20us"')
    p = tmp_path / "k32.toml"
    p.write_text(text, encoding="utf-8")
    # VmHWM: this process's own peak (ru_maxrss keeps the forking parent's across exec)
    code = (
        "import sys, warnings, dcnsim\n"
        "warnings.simplefilter('ignore')\n"
        f"r = dcnsim.run(sys.argv[1], threads={threads})\n"
        "assert not any('stays on one thread' in w for w in r.summary.get('warnings', [])), r.summary['warnings']\n"
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0]\n"
        "print(int(hwm.split()[1]) * 1024)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(p)], capture_output=True, text=True, check=True)
    peak = int(out.stdout.split()[-1])
    estimate, _, what = dcnsim._core.memory_estimate(text, threads=threads)
    assert peak <= estimate <= 2.5 * peak, f"{threads} threads: peak {peak / 1e6:.0f} MB, estimate {estimate / 1e6:.0f} MB ({what})"
    if threads > 1:
        assert estimate > dcnsim._core.memory_estimate(text, threads=1)[0] and f"{threads} threads" in what


def test_a_run_past_the_memory_limit_stops_with_one_line(tmp_path, dcnsim_cli):
    """Eight line-rate UDP message loops from one 10G host without a transmit ring: the NIC
    queue would grow without bound (7 x 10 Gbit/s), and with messages of one frame the
    loops would make messages without end at one instant. Such a loop is refused before
    the run, with one line naming the ring, writing nothing; what the estimate cannot bound
    is stopped by the driver's guard with one line once the process passes the limit."""
    text = (
        '[scenario]\nname = "udp_overload"\nmax_time = "10s"\n'
        '[topology]\nkind = "dumbbell"\nsenders = 1\nreceivers = 1\n'
        'host_link = { rate = "10Gbps", delay = "1us" }\nbottleneck = { rate = "100Gbps", delay = "1us" }\n'
        '[transport]\nkind = "udp"\n'
        '[[workload]]\nkind = "closed_loop"\npairs = [[0, 1]]\nin_flight = 8\nmean_size = "1GB"\n'
    )
    p = tmp_path / "udp.toml"
    p.write_text(text, encoding="utf-8")
    proc = dcnsim_cli("run", p, "-o", tmp_path / "out", "--memory-limit", "600MB", timeout=600)
    assert proc.returncode != 0, proc.stderr
    lines = [x for x in proc.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "transport.udp.nic_buffer: missing" in lines[0] and "closed loop of workload[0]" in lines[0], proc.stderr
    assert not (tmp_path / "out").exists()
    # the guard: one line, naming the limit and the ring
    from dcnsim.driver import check_resident_memory

    class _At:
        now_ps = 5_000_000

    with pytest.raises(dcnsim._core.SimulationError, match=r"^the run stopped at sim time .*more than the memory limit of 0\.00 GB.*transport\.udp\.nic_buffer"):
        check_resident_memory(_At(), 1)
    # a transmit ring holds the sources back: the same run stays small and ends
    p.write_text(text.replace('max_time = "10s"', 'max_time = "20ms"').replace('kind = "udp"', 'kind = "udp"\nudp = { nic_buffer = "1MB" }'), encoding="utf-8")
    ok = dcnsim_cli("run", p, "--memory-limit", "600MB", timeout=600)
    assert ok.returncode == 0, ok.stderr


def test_listed_udp_sources_that_outrun_their_link_are_refused_before_the_run(tmp_path, dcnsim_cli):
    """The same overload as a flow list: the estimate counts the NIC queue (7 x 10 Gbit/s
    for 10 s: 58 million packet records, about 5.6 GB) and blames the missing transmit ring."""
    flows = ", ".join(f'{{ src = 0, dst = {1 + k % 3}, size = "100GB" }}' for k in range(8))
    p = tmp_path / "udp.toml"
    p.write_text(
        '[scenario]\nname = "udp_listed"\nmax_time = "10s"\n[topology]\nkind = "dumbbell"\nsenders = 1\nreceivers = 3\n'
        'host_link = { rate = "10Gbps", delay = "1us" }\nbottleneck = { rate = "100Gbps", delay = "1us" }\n[transport]\nkind = "udp"\n'
        f'[[workload]]\nkind = "flows"\nflows = [{flows}]\n',
        encoding="utf-8",
    )
    proc = dcnsim_cli("validate", p, "--memory-limit", "4GB")
    assert proc.returncode == 2 and "transport.udp.nic_buffer: the scenario needs about" in proc.stderr and "expected to set transport.udp.nic_buffer" in proc.stderr, proc.stderr
