"""The shipped example scenarios do what their descriptions say.

The seed reproductions have their own file (test_reproductions.py, with the seeds' numbers);
this one holds the examples' plain-language claims to the runs. Each claim is checked on
the shipped file itself (they are small enough), with the numbers stated in its comments.
"""

from __future__ import annotations

import dcnsim
from dcnsim.api import shipped_scenarios


def _network(cmp: dcnsim.Comparison, metric: str) -> dict:
    t = cmp.table()
    row = t[(t["group"] == "network") & (t["metric"] == metric)]
    assert len(row) == 1, metric
    return {n: row.iloc[0][n] for n in cmp.variants}


def test_incast_reno_vs_dctcp_description_holds():
    """"Reno overflows and loses ~12%, DCTCP keeps the queue within the buffer (no loss);
    with a 10-segment initial window DCTCP overflows too, and recovers by SACK." Also (the
    file's comments): every flow finishes; with SACK, DCTCP with IW 10 ends the incast
    within 5% of loss-free DCTCP (p99 FCT), without SACK 15% or more later (its slowest
    flows wait for timeouts); Reno's p99 is no better than DCTCP's, its mean is lower."""
    cmp = dcnsim.compare("incast_reno_vs_dctcp", jobs=1)
    assert cmp.variants == ["Reno", "DCTCP", "DCTCP, IW 10", "DCTCP, IW 10, no SACK"]
    loss = _network(cmp, "loss rate (%)")
    peak = _network(cmp, "max queue depth, queue 0: any port (KB)")
    assert 8.0 <= loss["Reno"] <= 16.0, loss
    assert peak["Reno"] > 195.0, peak  # the 200 KB buffer overflows
    assert loss["DCTCP"] == 0.0 and peak["DCTCP"] < 195.0, (loss, peak)
    assert loss["DCTCP, IW 10"] > 1.0 and loss["DCTCP, IW 10, no SACK"] > 1.0, loss
    for name, r in cmp.results.items():
        assert r.summary["flows_unfinished"] == 0, name
    t = cmp.table()
    p99 = t[(t["group"] == "all") & (t["metric"] == "p99 FCT (us)")].iloc[0]
    mean = t[(t["group"] == "all") & (t["metric"] == "mean FCT (us)")].iloc[0]
    assert abs(p99["DCTCP, IW 10"] / p99["DCTCP"] - 1) <= 0.05, p99
    assert p99["DCTCP, IW 10, no SACK"] > 1.15 * p99["DCTCP, IW 10"], p99
    assert p99["Reno"] >= p99["DCTCP"] and mean["Reno"] < mean["DCTCP"], (p99, mean)


def test_leaf_spine_dctcp_description_holds():
    """The flagship example's comments: background mice (< 100 KB) at a median slowdown of
    about 2.5, incast flows about 8 (at least twice the mice's); switch queues a few KB on
    average (under K / 4) while incast bursts exceed K."""
    r = dcnsim.run("leaf_spine_dctcp")
    f = r.flows
    mice = f[(f["tag"] == "background") & (f["size_bytes"] < 100_000)]["slowdown"].median()
    incast = f[f["tag"] == "incast"]["slowdown"].median()
    assert 1.5 <= mice <= 4.0, mice
    assert 5.0 <= incast <= 12.0 and incast >= 2 * mice, (incast, mice)
    sw = r.ports[r.ports["is_host"] == 0]
    k = 97_500
    assert sw["mean_depth_bytes"].mean() < k / 4, sw["mean_depth_bytes"].mean()
    assert sw["max_depth_bytes"].max() > k, sw["max_depth_bytes"].max()
    assert r.summary["flows_unfinished"] == 0


def test_docs_list_every_output_column():
    """The user guide's tables and the README name every column the outputs can have (a
    run with PFC, CI and queue sampling has them all), and every end reason; so the docs
    cannot drift from the code unnoticed."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    guide = (root / "docs" / "user-guide.md").read_text(encoding="utf-8")
    readme = (root / "README.md").read_text(encoding="utf-8")
    r = dcnsim.run("seed003_ci_2queue_small", variant="CI")
    assert len(r.queues), "the scenario samples queue depths"
    columns = {*r.flows.columns, *r.ports.columns, *r.queues.columns} - {"node_name", "peer_name"}
    named = set(re.findall(r"`([a-z_0-9]+)`", guide))
    assert not columns - named, f"columns missing from docs/user-guide.md: {sorted(columns - named)}"
    named = set(re.findall(r"`([a-z_0-9]+)`", readme))
    missing = {*r.flows.columns, *r.ports.columns} - named
    assert not missing, f"columns missing from README.md: {sorted(missing)}"
    for reason in ("completed", "max_time", "idle", "deadlock"):
        assert f"`{reason}`" in guide and f"`{reason}`" in readme, reason


def test_docs_examples_are_current():
    """Every example output quoted in the docs is what the code produces now
    (regenerate with ``python tests/regen_docs.py``)."""
    import regen_docs

    for (path, name), gen in regen_docs.EXAMPLES.items():
        assert regen_docs.current(path, name) == gen(), f"{path}: {name} is stale; run python tests/regen_docs.py"


def test_dumbbell_dctcp_description_holds():
    """"4 DCTCP flows on a 10G dumbbell, K = 65 packets", the DCTCP paper's setting: the
    bottleneck stays busy (the 200 MB finish within 1% of their wire time at 10 Gbps) with
    no loss (slow start's overshoot, 411 KB, stays in the 1 MB buffer), and the bottleneck
    queue averages about K over the run (the sawtooth of sec. 3.3 sits just below K + N)."""
    r = dcnsim.run("dumbbell_dctcp")
    assert r.summary["end_reason"] == "completed" and r.summary["packets_dropped"] == 0
    wire_ps = 200e6 * 1500 / 1460 * 8 / 10e9 * 1e12
    end = float(r.flows["end_ps"].max())
    assert end <= 1.01 * wire_ps + 15e9, (end, wire_ps)  # the last flow starts at 15 ms
    k = 65 * 1500
    bottleneck = r.ports.iloc[0]  # switch "left", port 0
    assert int(bottleneck["tx_bytes"]) > 200e6
    assert 0.8 * k <= float(bottleneck["mean_depth_bytes"]) <= k + 4 * 1500, bottleneck["mean_depth_bytes"]
    assert int(r.ports["max_depth_bytes"].max()) < 1_000_000


def test_descriptions_speak_the_users_language():
    """`dcnsim scenarios` names each source by its standard and authors, not the project's
    seed numbers, and "CI" there means congestion isolation only (not the test runs)."""
    for name in shipped_scenarios():
        desc = dcnsim.validate(name)["description"]
        assert desc, name
        assert "Seed 00" not in desc and "seed 00" not in desc, (name, desc)
        assert "for CI" not in desc, (name, desc)


def test_multipath_permutation_description_holds():
    """multipath_permutation_small's comments: sprayed, nearly all of the 90% offered arrives
    and nothing is dropped; per-flow ECMP delivers clearly less (hash collisions); a core
    link down costs the flows routed onto it before the routes follow (drops_link_down) and
    the link's share after; the same link at 25 Gb/s, which spraying does not see, costs
    more than spraying on a healthy fabric; switches routing by their queues ("adaptive")
    carry it as spraying does and drop less at the slow link."""
    offered = 16 * 90e9 * 2e-3 / 8  # bytes: 16 senders at 90 Gb/s for 2 ms
    got = {}
    for v in ["ECMP", "spray", "ECMP, core link down", "spray, core link down", "spray, core link at 25G", "adaptive", "adaptive, core link at 25G"]:
        r = dcnsim.run("multipath_permutation_small", variant=v)
        got[v] = (r.flows["delivered_bytes"].sum() / offered, r.summary["packets_dropped"], r)
    assert got["spray"][0] > 0.98 and got["spray"][1] == 0, got["spray"][:2]
    assert got["ECMP"][0] < 0.8 * got["spray"][0], got["ECMP"][:2]
    down = got["spray, core link down"]
    assert down[2].ports["drops_link_down"].sum() > 0
    assert [c["state"] for c in down[2].summary["link_changes"]] == ["down"]
    assert down[0] < got["spray"][0] and got["spray, core link at 25G"][0] < got["spray"][0]
    assert "drops_link_down" not in got["spray"][2].ports.columns
    assert got["spray, core link at 25G"][2].summary["link_changes"][0]["rate_bps"] == 25_000_000_000
    # switches routing by their queues carry it as spraying does, and send the slow link less
    assert got["adaptive"][0] > 0.98 and got["adaptive"][1] == 0, got["adaptive"][:2]
    assert got["adaptive"][2].summary["load_balance_moved"] > 0
    assert got["adaptive, core link at 25G"][1] < got["spray, core link at 25G"][1]


def test_multipath_websearch_description_holds():
    """multipath_websearch_small's comments: every variant completes every flow; flowlets
    with a 500 us gap route as ECMP does (DCTCP rarely pauses that long: next to no
    reordering), adaptive routing moves packets and reorders some, and spraying reorders
    every flow, which RFC 6675's DupThresh (the default) reads as loss: the most
    retransmissions; RACK-TLP's reordering window (RFC 8985) takes nearly all of them away."""
    import warnings

    retx = {}
    for v in ["ECMP", "flowlets", "adaptive", "spray", "adaptive, RACK-TLP", "spray, RACK-TLP", "ECMP, core link down", "flowlets, core link down",
              "adaptive, core link down", "spray, RACK-TLP, core link down"]:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = dcnsim.run("multipath_websearch_small", variant=v)
        assert r.summary["flows_unfinished"] == 0, v
        retx[v] = int(r.flows["retx"].sum())
        assert any("spray" in str(x.message) for x in w) == v.startswith("spray"), v
        if v.startswith("adaptive"):
            assert r.summary["load_balance_moved"] > 0
        if v.endswith("down"):
            assert r.summary["link_changes"][0]["state"] == "down"
    assert retx["ECMP"] == retx["ECMP, core link down"] == 0, retx
    assert retx["flowlets"] < 0.05 * retx["adaptive"], retx
    assert retx["spray"] > retx["adaptive"] > 0, retx
    assert retx["spray, RACK-TLP"] < 0.05 * retx["spray"] and retx["adaptive, RACK-TLP"] < 0.05 * retx["adaptive"], retx
    assert retx["spray, RACK-TLP, core link down"] < 0.05 * retx["spray"], retx
