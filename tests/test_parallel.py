"""One run split over threads (issue 38, part 2; docs/parallel.md): ``threads`` on
``dcnsim.run``, ``compare``, ``sweep`` and ``--threads`` on the commands give the same
tables as one thread, byte for byte (closed loops, persistent flows and captures too); a
run that cannot be split yet stays on one thread and says why; a bad thread count is
refused naming the key.
"""

from __future__ import annotations

import pandas as pd
import pytest
from click.testing import CliRunner

import dcnsim
from dcnsim import _core
from dcnsim.api import resolve_scenario
from dcnsim.cli import cli
from dcnsim.comparison import compare
from dcnsim.sweeps import sweep
from test_capture import with_capture

# what differs between two runs of the same thing
WALL = ("wall_time_s", "events_per_s")

# a PFC fabric (deadlock detection across partitions), SFC with its ToR proxy, QCN, DCQCN
# on a k = 8 fat-tree, the DualQ AQM
SPLIT = [
    ("roce_incast_pfc", None),
    ("seed004_sfc_benefits_small", None),
    ("seed001_qcn_small", None),
    ("cc_k8_rpc_small", None),
    ("seed002_dualq_small", None),
]


def _partitions(name: str, variant, threads: int) -> int:
    src = resolve_scenario(name)
    return _core.Simulation(src.text, src.format, variant=variant, threads=threads).partitions


def _same(a, b) -> None:
    pd.testing.assert_frame_equal(a.flows, b.flows, check_exact=True)
    pd.testing.assert_frame_equal(a.ports, b.ports, check_exact=True)
    pd.testing.assert_frame_equal(a.queues, b.queues, check_exact=True)
    assert {k: v for k, v in a.summary.items() if k not in WALL} == {k: v for k, v in b.summary.items() if k not in WALL}


@pytest.mark.parametrize("name,variant", SPLIT)
def test_a_split_run_gives_the_tables_of_one_thread(name, variant):
    assert _partitions(name, variant, 2) == 2, "the run is split"
    one = dcnsim.run(name, variant=variant)
    two = dcnsim.run(name, variant=variant, threads=2)
    _same(one, two)
    assert "warnings" not in two.summary or not any("thread" in w for w in two.summary["warnings"])


def test_more_threads_than_the_fabric_has_units_still_agree():
    # roce_incast_pfc has few ToRs: 16 threads give as many partitions as there are units
    parts = _partitions("roce_incast_pfc", None, 16)
    assert 2 <= parts < 16
    _same(dcnsim.run("roce_incast_pfc"), dcnsim.run("roce_incast_pfc", threads=16))


@pytest.mark.parametrize("name", ["seed003_ci_2queue_small", "seed001_mixed_small"])
def test_runs_whose_flows_continue_others_split_too(name):
    # seed 003's persistent incast flows, seed 001's closed loops: each partition numbers
    # its flows, and the results are renumbered as one thread numbers them
    assert _partitions(name, None, 2) == 2
    one = dcnsim.run(name)
    two = dcnsim.run(name, threads=2)
    _same(one, two)
    pd.testing.assert_frame_equal(one.timeseries, two.timeseries, check_exact=True)
    assert "warnings" not in two.summary or not any("thread" in w for w in two.summary["warnings"])


def test_a_captured_run_splits_and_writes_one_threads_file():
    text = with_capture("seed001_mixed_small", 'ports = ["A", "client1"]\nframes = "all"\nmax_frames = 20000', "3ms")
    one = dcnsim.run(text)
    two = dcnsim.run(text, threads=2)
    assert two.summary.get("capture_frames", 0) > 1000 and one.capture == two.capture
    _same(one, two)


def test_a_run_that_cannot_be_split_stays_on_one_thread_and_says_why():
    # a persistent datagram incast starts each sender's next transfer where the last one
    # ends, at its receiver, for a sender that may be in another partition
    text = """
[scenario]
name = "udp_persistent"
max_time = "200us"
[topology]
kind = "clos2"
tors = 2
servers_per_tor = 4
spines = 2
host_link = { rate = "10Gbps", delay = "1us" }
fabric_link = { rate = "10Gbps", delay = "1us" }
[transport]
kind = "udp"
[[workload]]
kind = "incast"
fan_in = 4
size = "20KB"
period = "persistent"
stop = "100us"
"""
    with pytest.warns(dcnsim.DcnsimWarning, match="stays on one thread: a datagram flow's next transfer starts where it finishes"):
        two = dcnsim.run(text, threads=2)
    one = dcnsim.run(text)
    pd.testing.assert_frame_equal(one.flows, two.flows, check_exact=True)
    assert [w for w in two.summary["warnings"] if "thread" in w] == [
        "threads = 2: the run stays on one thread: a datagram flow's next transfer starts where it finishes, at its destination, for a source that may be in another partition at that very time"
    ]


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True, 5000])
def test_a_bad_thread_count_is_refused_naming_it(bad):
    with pytest.raises(_core.ScenarioError, match=r"threads: invalid value .*expected an integer from 1 to 1024"):
        dcnsim.run("roce_incast_pfc", threads=bad)
    with pytest.raises(_core.ScenarioError, match=r"threads: invalid value"):
        compare("roce_incast_pfc", threads=bad, jobs=1)


def test_the_commands_take_threads(tmp_path):
    runner = CliRunner()
    one = runner.invoke(cli, ["run", "seed004_sfc_benefits_small", "-o", str(tmp_path / "one")])
    two = runner.invoke(cli, ["run", "seed004_sfc_benefits_small", "-o", str(tmp_path / "two"), "--threads", "2"])
    assert one.exit_code == 0 and two.exit_code == 0, one.output + two.output
    # one thread writes flows as they become final, a split run at its end in that order:
    # the same files, byte for byte
    for f in ("flows.parquet", "ports.parquet"):
        assert (tmp_path / "one" / f).read_bytes() == (tmp_path / "two" / f).read_bytes(), f
    bad = runner.invoke(cli, ["run", "roce_incast_pfc", "--threads", "0"])
    assert bad.exit_code == 2 and "--threads" in bad.output
    cmp = runner.invoke(cli, ["compare", "roce_incast_pfc", "-j", "1", "--threads", "2", "-o", str(tmp_path / "cmp")])
    assert cmp.exit_code == 0, cmp.output
    base = compare("roce_incast_pfc", jobs=1)
    assert pd.read_csv(tmp_path / "cmp" / "comparison.csv").equals(pd.read_csv(_save(base, tmp_path / "base") / "comparison.csv"))
    sw = runner.invoke(cli, ["sweep", "roce_incast_pfc", "-o", str(tmp_path / "sw"), "--set", "switch.pfc.xoff=400KB,600KB", "-j", "1", "--threads", "2"])
    assert sw.exit_code == 0, sw.output
    table = pd.read_parquet(tmp_path / "sw" / "sweep.parquet")
    again = sweep("roce_incast_pfc", ["switch.pfc.xoff=400KB,600KB"], jobs=1)
    pd.testing.assert_frame_equal(table, again, check_exact=True)


def _save(cmp, outdir):
    cmp.save(outdir)
    return outdir
