"""The shipped example scenarios do what their descriptions say.

The seed reproductions have their own file (test_reproductions.py, with the seeds' numbers);
this one holds the examples' plain-language claims to the runs. Each claim is checked on
the shipped file itself (they are small enough), with the numbers stated in its comments.
"""

from __future__ import annotations

import dcnsim


def _network(cmp: dcnsim.Comparison, metric: str) -> dict:
    t = cmp.table()
    row = t[(t["group"] == "network") & (t["metric"] == metric)]
    assert len(row) == 1, metric
    return {n: row.iloc[0][n] for n in cmp.variants}


def test_incast_reno_vs_dctcp_description_holds():
    """"Reno overflows and loses ~11%, DCTCP keeps the queue within the buffer (no loss);
    with a 10-segment initial window DCTCP overflows too." Also (the file's comments): every
    flow finishes; Reno and DCTCP complete the incast within 10% of each other (p99 FCT),
    DCTCP with IW 10 later (its losses cost timeouts)."""
    cmp = dcnsim.compare("incast_reno_vs_dctcp", jobs=1)
    assert cmp.variants == ["Reno", "DCTCP", "DCTCP, IW 10"]
    loss = _network(cmp, "loss rate (%)")
    peak = _network(cmp, "max queue depth, queue 0 (KB)")
    assert 8.0 <= loss["Reno"] <= 14.0, loss
    assert peak["Reno"] > 195.0, peak  # the 200 KB buffer overflows
    assert loss["DCTCP"] == 0.0 and peak["DCTCP"] < 195.0, (loss, peak)
    assert loss["DCTCP, IW 10"] > 1.0, loss
    for name, r in cmp.results.items():
        assert r.summary["flows_unfinished"] == 0, name
    t = cmp.table()
    p99 = t[(t["group"] == "all") & (t["metric"] == "p99 FCT (us)")].iloc[0]
    assert abs(p99["DCTCP"] / p99["Reno"] - 1) <= 0.1, p99
    assert p99["DCTCP, IW 10"] > 1.2 * p99["DCTCP"], p99
