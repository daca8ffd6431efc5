"""Issue 37's studies, scaled down: the seed 003 CI study and the seed 004 SFC study with HPCC,
Swift and TIMELY in place of DCQCN, and the k = 8 FCT-slowdown comparison of five congestion
controls (each `_small` scenario; the full-size runs and their numbers are in
docs/reproductions.md, "Other congestion controls").

What the small runs show and these tests hold:
- CI (seed000_ci_with_cc_small): with DCQCN and TIMELY the incast's PFC congestion trees
  block the mice and CI frees them (their mean FCT falls by more than half); HPCC and Swift
  keep the queues short enough that PFC never pauses, so CI has nothing to isolate and the
  mice's FCT is the same with and without it.
- SFC (seed004_sfc_with_cc_small): with DCQCN and HPCC the 48:1 incast triggers PFC and native
  SFC cuts the small flows' mean FCT by more than half; Swift's initial windows (48 x 10
  packets) stay under XOFF, so PFC never pauses and native SFC changes little.
- The slowdown comparison runs every algorithm to completion with no loss on the lossless
  fabric, HPCC's median small-flow slowdown close to 1."""

from __future__ import annotations

import dcnsim

CCS = ("DCQCN", "HPCC", "Swift", "TIMELY")


def _mean_fct(r: dcnsim.Result, below: float, tag: str | None = None) -> float:
    f = r.flows
    f = f[(f.size_bytes < below) & f.finished.astype(bool)]
    if tag:
        f = f[f.tag == tag]
    return float(f.fct_ps.mean()) / 1e6


def _pause_frames(r: dcnsim.Result) -> int:
    # (a variant with no PFC has no PFC columns)
    return int(r.ports["pfc_tx_frames"].sum()) if "pfc_tx_frames" in r.ports else 0


def test_ci_with_each_congestion_control():
    mice = {}
    pauses = {}
    for cc in CCS:
        for ci in ("without CI", "CI"):
            r = dcnsim.run("seed000_ci_with_cc_small", variant=f"{cc} {ci}")
            assert r.summary["flows_unfinished"] == 0, (cc, ci)
            assert r.summary["data_packets_dropped"] == 0, (cc, ci)
            mice[cc, ci] = _mean_fct(r, 100e3, "background")
            pauses[cc, ci] = _pause_frames(r)
    for cc in ("DCQCN", "TIMELY"):
        assert pauses[cc, "without CI"] > 100, (cc, pauses)
        assert mice[cc, "CI"] < 0.5 * mice[cc, "without CI"], (cc, mice)
    for cc in ("HPCC", "Swift"):
        assert pauses[cc, "without CI"] == 0 and pauses[cc, "CI"] == 0, (cc, pauses)
        assert abs(mice[cc, "CI"] / mice[cc, "without CI"] - 1) < 0.1, (cc, mice)


def test_sfc_with_each_congestion_control():
    small = {}
    pauses = {}
    for cc in ("DCQCN", "HPCC", "Swift"):
        for fc in ("PFC", "SFC native"):
            r = dcnsim.run("seed004_sfc_with_cc_small", variant=f"{fc}+{cc}")
            assert r.summary["flows_unfinished"] == 0, (cc, fc)
            small[cc, fc] = _mean_fct(r, 10e3)
            pauses[cc, fc] = _pause_frames(r)
    for cc in ("DCQCN", "HPCC"):
        assert pauses[cc, "PFC"] > 100, (cc, pauses)
        assert small[cc, "SFC native"] < 0.5 * small[cc, "PFC"], (cc, small)
    assert pauses["Swift", "PFC"] == 0, pauses
    assert abs(small["Swift", "SFC native"] / small["Swift", "PFC"] - 1) < 0.15, small


def test_slowdown_comparison_runs_every_algorithm_losslessly():
    for name in ("cc_k8_websearch_small", "cc_k8_rpc_small"):
        for cc in ("DCTCP", "DCQCN", "HPCC", "Swift", "TIMELY"):
            r = dcnsim.run(name, variant=cc)
            s = r.summary
            assert s["flows_unfinished"] == 0 and s["data_packets_dropped"] == 0, (name, cc)
            if cc == "HPCC":
                f = r.flows
                assert f[f.size_bytes < 10e3].slowdown.median() < 1.3, name
