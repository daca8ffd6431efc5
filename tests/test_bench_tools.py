"""The benchmark tools' own behaviour: the flow and topology files they hand to htsim, and
the peak-RSS measurement of a child process (bench/README.md)."""

import importlib.util
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _load(name):
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path.remove(str(BENCH))


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
    rc, _, _, _, peak = run.run_measured([shutil.which("true")], None)
    # wait4 alone would report at least this (pytest) process's own size, tens of MB
    assert rc == 0 and peak is not None and peak < 8
