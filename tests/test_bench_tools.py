"""The benchmark tools' own behaviour: the flow and topology files they hand to htsim, and
the peak-RSS measurement of a child process (bench/README.md)."""

import importlib.util
import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _load(name, folder=BENCH):
    """bench's script `name` (in `folder`) as a module, its folder on the path while it loads."""
    sys.path.insert(0, str(folder))
    try:
        spec = importlib.util.spec_from_file_location(f"bench_{name}", folder / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod  # a script's dataclasses look their module up
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path.remove(str(folder))


def test_htsim_topology_file_for_a_k_ary_fat_tree():
    vs = _load("vs_htsim")
    text = vs.topology_file(4, 100, 1000)
    lines = [x for x in text.splitlines() if x and not x.startswith("#")]
    # FatTreeTopology::load: header, then per tier speed, radices and latency; k/2 up and
    # down below the core, k down at the core, k^2/4 hosts per pod
    assert lines[:3] == ["Nodes 16", "Tiers 3", "Podsize 4"]
    tiers = " | ".join(lines[3:])
    assert tiers == (
        "Tier 0 | Downlink_speed_Gbps 100 | Radix_Up 2 | Radix_Down 2 | Downlink_Latency_ns 1000 | "
        "Tier 1 | Downlink_speed_Gbps 100 | Radix_Up 2 | Radix_Down 2 | Downlink_Latency_ns 1000 | "
        "Tier 2 | Downlink_speed_Gbps 100 | Radix_Down 4 | Downlink_Latency_ns 1000"
    )
    assert "Nodes 2000" in vs.topology_file(20, 100, 1000)


def test_htsim_export_carries_every_flow(tmp_path):
    vs = _load("vs_htsim")
    scen = tmp_path / "ft4.toml"
    scen.write_text(
        """
[scenario]
name = "ft4"
seed = 3
arrivals_for = "50us"
max_time = "5ms"
[topology]
kind = "fat_tree3"
k = 4
host_link = { rate = "100Gbps", delay = "1us" }
fabric_link = { rate = "100Gbps", delay = "1us" }
[transport]
kind = "dctcp"
[[workload]]
kind = "poisson"
sizes = "web-search"
load = 0.5
"""
    )
    vs.export([str(scen)], tmp_path / "out")
    tm = (tmp_path / "out" / "ft4.tm").read_text().splitlines()
    fct = (tmp_path / "out" / "ft4.fct.csv").read_text().splitlines()[1:]
    assert tm[0] == "Nodes 16" and tm[1] == f"Connections {len(fct)}" and len(fct) > 3
    conns = [re.fullmatch(r"(\d+)->(\d+) start (\d+) size (\d+)", x) for x in tm[2:]]
    assert all(conns) and len(conns) == len(fct)
    got = sorted((int(m[1]), int(m[2]), int(m[3]), int(m[4])) for m in conns)
    want = sorted((int(s), int(d), int(st), int(sz)) for s, d, sz, st, _ in (r.split(",") for r in fct))
    assert got == want
    assert all(s != d and 0 <= s < 16 and 0 <= d < 16 for s, d, _, _ in got)
    assert "Podsize 4" in (tmp_path / "out" / "ft4.topo").read_text()


def test_htsim_export_refuses_other_topologies(tmp_path):
    vs = _load("vs_htsim")
    scen = tmp_path / "d.toml"
    scen.write_text('[scenario]\nname = "d"\n[topology]\nkind = "dumbbell"\n')
    with pytest.raises(SystemExit, match="fat_tree3"):
        vs.export([str(scen)], tmp_path / "out")


@pytest.mark.skipif(not (os.access("/usr/bin/time", os.X_OK) and shutil.which("true")), reason="needs GNU time")
def test_peak_rss_is_the_childs_own():
    run = _load("run")
    rc, _, _, _, peak, _ = run.run_measured([shutil.which("true")], None)
    # wait4 alone would report at least this (pytest) process's own size, tens of MB
    assert rc == 0 and peak is not None and peak < 8


def test_run_measured_gives_the_childs_cpu_times_and_its_environment():
    run = _load("run")
    # a child that spins about 0.3 s of user time and says what it was given
    code = "import os, time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\nprint(os.environ['DCNSIM_PROBE'])"
    rc, out, _, wall, _, (user, system) = run.run_measured([sys.executable, "-c", code], None, env={"DCNSIM_PROBE": "given"})
    assert rc == 0 and out.strip() == "given"
    assert 0.25 <= user + system <= wall + 0.05, (user, system, wall)


def _fake_core(tmp_path, calls, wall="0.01"):
    """A stand-in for run_scenario that logs its arguments to ``calls`` and prints the
    summary line bench/run.py reads, with engine wall time ``wall`` over the thread count
    (``--threads T`` after the scenario; 1 without)."""
    core = tmp_path / "core"
    core.write_text(
        f'#!/bin/sh\necho "core $*" >> {calls}\nt=1; [ "$2" = --threads ] && t=$3\n'
        f'w=$(python3 -c "print({wall} / $t)")\n'
        'echo "flows 1/1 end=completed sim_time=0.010ms events=100 build=0.001s wall=${w}s"\n'
    )
    core.chmod(0o755)
    return core


def test_htsim_side_by_side_runs_dcnsim_at_each_thread_count(tmp_path, capsys):
    vs = _load("vs_htsim")
    d = tmp_path / "vs"
    d.mkdir()
    (d / "ft.tm").write_text("Nodes 16\nConnections 0\n")
    (d / "ft.topo").write_text(vs.topology_file(4, 100, 1000))
    (d / "ft.fct.csv").write_text("src,dst,size_bytes,start_ps,fct_ps\n0,1,1000,0,2000000\n")
    scen = tmp_path / "ft.toml"
    scen.write_text("")
    calls = tmp_path / "calls"
    # stand-ins that log how they were called: htsim's end lines, the core runner's summary
    htsim = tmp_path / "htsim"
    htsim.write_text(
        f"#!/bin/sh\necho htsim >> {calls}\n"
        "echo 'FCT 0 1 1000 start_us 0 end_us 3 fct_us 3.0'\necho 'Events 500 flows_done 1/1'\n"
    )
    core = _fake_core(tmp_path, calls)
    htsim.chmod(0o755)
    rc = vs.main(["run", str(scen), "--htsim", str(htsim), "--core-bin", str(core), "--dir", str(d), "--threads", "1,2", "--rounds", "2"])
    assert rc == 0
    log = calls.read_text().split("\n")[:-1]
    # two rounds, the second in the reverse order
    assert [x.split(" --threads")[0].split(" ")[0] + (" t2" if "--threads 2" in x else "") for x in log] == [
        "htsim", "core", "core t2", "core t2", "core", "htsim"
    ]
    rows = [x for x in capsys.readouterr().out.splitlines() if x.startswith("| ft |")]
    assert [r.split(" | ")[1] for r in rows] == ["1", "2"]
    assert all("1/1" in r for r in rows)
    # dcnsim's FCTs from the exported file (2 us), htsim's from its output (3 us)
    assert all("| 2.0 / 2.0 |" in r and "| 3.0 / 3.0 |" in r for r in rows)
    # bad thread counts are refused with the value named
    with pytest.raises(SystemExit):
        vs.main(["run", str(scen), "--htsim", str(htsim), "--core-bin", str(core), "--dir", str(d), "--threads", "one"])
    assert "--threads 'one'" in capsys.readouterr().err


def test_thread_scaling_speedup_table_and_plot(tmp_path, capsys):
    ts = _load("thread_scaling")
    scen = tmp_path / "ft.toml"
    scen.write_text('[topology]\nkind = "fat_tree3"\nk = 8\n')
    calls = tmp_path / "calls"
    core = _fake_core(tmp_path, calls, wall="0.4")
    out = tmp_path / "s.json"
    assert ts.main(["run", str(scen), "--core-bin", str(core), "--threads", "1,4", "--pairs", "2", "--json", str(out)]) == 0
    # rounds alternate: 1 4, 4 1
    assert [("4" if "--threads 4" in x else "1") for x in calls.read_text().split("\n")[:-1]] == ["1", "4", "4", "1"]
    rows = json.loads(out.read_text())
    assert [(r["threads"], r["hosts"], r["runs"]) for r in rows] == [(1, 128, 2), (4, 128, 2)]
    assert rows[0]["speedup"] == 1.0
    assert rows[1]["speedup"] == pytest.approx(4.0) and rows[1]["median_wall_s"] == pytest.approx(0.1)
    png = tmp_path / "s.png"
    assert ts.main(["plot", str(out), "-o", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| ft | 128 | 4 | 2 |" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        ts.main(["run", str(scen), "--core-bin", str(core), "--threads", "2,4"])
    assert "1 must be among the counts" in capsys.readouterr().err


def test_many_cores_collects_speedups_against_one_thread(tmp_path, capsys):
    """A device run's folder gives thread_scaling's rows: all-core runs get their speed-up
    over phase 1's one-thread median, or else over the one-thread runs of ``--only``; a
    fabric run on many threads only has none (a dash in the table)."""
    mc = _load("many_cores")
    k20 = "fat_tree_k20_websearch"
    (tmp_path / "scaling.json").write_text(
        json.dumps([{"scenario": k20, "hosts": 2000, "threads": 1, "runs": 2, "wall_s": [20.0, 22.0], "median_wall_s": 21.0, "speedup": 1.0, "speedup_range": [1.0, 1.0], "events": 100, "same_events": True, "events_per_s": 4.8, "flows": "9/9", "peak_rss_mb": 30.0}])
    )

    def run(phase, k, t, s, events=100):
        return json.dumps({"phase": phase, "what": f"k{k} threads={t}", "at_s": 0, "wall_s": s + 0.5, "engine_s": s, "events": events, "flows": "9/9", "rss_mb": 10.0 * t})

    lines = [run("0-quiet", 20, 16, 3.0), run("0-quiet", 20, 16, 3.5), run("1-pinned", 20, 1, 99.0), run("alone", 40, 1, 100.0), run("alone", 40, 16, 10.0), run("alone", 48, 16, 20.0), run("alone", 40, 8, 20.0, events=101)]
    (tmp_path / "runs.jsonl").write_text("\n".join(lines) + "\n")
    rows = {(r["scenario"], r["threads"]): r for r in mc.collect(tmp_path)}
    assert set(rows) == {(k20, 1), (k20, 16), ("fat_tree_k40_websearch", 1), ("fat_tree_k40_websearch", 8), ("fat_tree_k40_websearch", 16), ("fat_tree_k48_websearch", 16)}
    r = rows[(k20, 16)]
    assert r["runs"] == 2 and r["median_wall_s"] == pytest.approx(3.25)
    assert r["speedup"] == pytest.approx((21 / 3 + 21 / 3.5) / 2) and r["speedup_range"] == pytest.approx([6.0, 7.0])
    assert rows[("fat_tree_k40_websearch", 16)]["speedup"] == pytest.approx(10.0)
    assert rows[("fat_tree_k40_websearch", 16)]["hosts"] == 16000 and rows[("fat_tree_k40_websearch", 16)]["peak_rss_mb"] == 160.0
    # a different event count from one thread's is flagged
    assert rows[("fat_tree_k40_websearch", 16)]["same_events"] and not rows[("fat_tree_k40_websearch", 8)]["same_events"]
    assert rows[("fat_tree_k48_websearch", 16)]["speedup"] != rows[("fat_tree_k48_websearch", 16)]["speedup"]  # NaN: no one-thread run
    out = tmp_path / "rows.json"
    assert mc.main(["--out", str(tmp_path), "--collect", str(out)]) == 0
    table = capsys.readouterr().out
    assert "| fat_tree_k48_websearch | 27648 | 16 | 1 | 20.00 | - |" in table
    assert "6.50x (6.00-7.00)" in table and "DIFFERENT from 1 thread" in table
    assert len(json.loads(out.read_text())) == 6


def test_uet_peer_counts_htsim_duplicates_and_dcnsim_resends_of_packets_not_lost(tmp_path):
    """bench/peers/uet_htsim.py: htsim's receiver prints each duplicate it takes; the table's
    'not lost' resends are those lines, and dcnsim's resends less its drops and trims."""
    peer = _load("uet_htsim", BENCH / "peers")
    fake = tmp_path / "htsim_uec"
    fake.write_text(
        "#!/bin/sh\n"
        "echo 'RTOX flow 1 t 104.972 seq 13 sent 4.316 rtxq 0'\n"
        "echo '112.632 flowid 1 Spurious 11'\n"
        "echo '113.296 flowid 2 Spurious 10'\n"
        "echo 'Flow Uec_8_0 flowId 1 uecSrc 8 finished at 124.0 total messages 1 total packets 17 RTS 0'\n"
        "echo 'New: 136 Rtx: 29 RTS: 0 Bounced: 0 ACKs: 116 NACKs: 0 Pulls: 0'\n"
    )
    fake.chmod(0o755)
    case = peer.Case(size=65536, trim=False)
    peer.run_htsim(str(fake), tmp_path / "x.cm", False, 43, 2000, 3, case)
    assert case.htsim_dups == 2
    assert case.htsim_totals["rtx"] == 29
    assert case.htsim_fct == {8: 124.0}
    assert "-disable_trim" in case.htsim_cmd and "-seed 3" in case.htsim_cmd
    case.dcnsim_retx, case.dcnsim_drops, case.dcnsim_trims = 39, 27, 0
    assert peer.dcnsim_dups(case) == 12
    case.dcnsim_retx, case.dcnsim_drops, case.dcnsim_trims = 28, 0, 28
    assert peer.dcnsim_dups(case) == 0


def test_uet_mix_peer_matches_dcnsim_flows_by_ends_size_and_start():
    """bench/peers/uet_htsim_mix.py: the flow list is in start order, while the scenario groups
    its flows by tag; where a background flow and an incast message start in the same
    microsecond, each FCT must still land on its own flow (on 2026-11-30 a 1 MB message's
    FCT was filed under a small background flow, and htsim's ran right beside it)."""
    peer = _load("uet_htsim_mix", BENCH / "peers")
    Flow = peer.Flow
    flows = [Flow(105, 109, 1_000_000, 0, "incast"), Flow(0, 1, 1_000, 5_000_000, "background"),
             Flow(86, 109, 1_000_000, 5_000_000, "incast")]
    queue, ecn = peer.CASES[0]
    run = peer.run_dcnsim(peer.scenario(flows, True, queue, ecn), 1, flows)
    assert sorted(run.fct) == [0, 1, 2]
    # 1 KB over four 200 ns hops at 100 Gb/s takes a few microseconds; 1 MB at least 80 us
    assert run.fct[1] < 10
    assert run.fct[0] > 80 and run.fct[2] > 80
    with pytest.raises(SystemExit, match="lacks"):
        peer.run_dcnsim(peer.scenario(flows, True, queue, ecn), 1, flows[:2])
