"""Long-flow studies: goodput per tag, shares and ratios, and Jain's index per phase
(dcnsim.goodput), in the comparison table where FCTs say nothing (flows still running)."""

from __future__ import annotations

import math

import pytest

import dcnsim
from dcnsim import goodput

STAGGERED = """
[scenario]
name = "staggered"
max_time = "12ms"

[topology]
kind = "dumbbell"
senders = 3
host_link = { rate = "10Gbps", delay = "1us" }
bottleneck = { rate = "10Gbps", delay = "1us" }

[switch]
aqm = { kind = "step", threshold = "30KB" }

[transport]
kind = "dctcp"

[[workload]]
kind = "flows"
flows = [
  { src = 0, dst = 3, size = "1GB", tag = "early" },
  { src = 1, dst = 3, size = "1GB", start = "4ms", tag = "late" },
  { src = 2, dst = 3, size = "1GB", start = "8ms", tag = "late" },
]

[metrics]
throughput_bin = "100us"

[[variant]]
name = "step 30KB"

[[variant]]
name = "step 60KB"
switch.aqm = { kind = "step", threshold = "60KB" }
"""


def test_jain_index_by_hand():
    assert goodput.jain([5.0, 5.0]) == 1.0
    assert goodput.jain([1.0, 0.0]) == 0.5
    assert goodput.jain([3.0, 1.0]) == pytest.approx(16 / 20)
    assert math.isnan(goodput.jain([]))


@pytest.fixture(scope="module")
def staggered(tmp_path_factory):
    p = tmp_path_factory.mktemp("gp") / "staggered.toml"
    p.write_text(STAGGERED)
    return dcnsim.compare(str(p), jobs=1)


def test_phases_follow_the_flows_that_come(staggered):
    """Flows start at 0, 4 and 8 ms and never finish: two phases with two and three flows,
    each shared fairly by DCTCP (step marking), the link full."""
    r = staggered.results["step 30KB"]
    ph = goodput.phases(r)
    assert [(p.start_ps, p.end_ps, p.flows) for p in ph] == [(4_000_000_000, 8_000_000_000, 2), (8_000_000_000, 12_000_000_000, 3)]
    for p in ph:
        assert p.jain > 0.95, p
        # payload of 1500 B packets at 10 Gbit/s: 1460 / 1500 of the line; a packet more
        # or less at each edge of the measured half: 0.2%
        assert 0.85 * 10e9 < p.goodput_bps <= 10e9 * 1460 / 1500 * 1.002, p


def test_goodput_rows_in_the_table(staggered):
    t = staggered.table()
    g = t[t["group"] == "goodput"].set_index("metric")
    r = staggered.results["step 30KB"]
    ts = r.timeseries
    length_s = r.summary["sim_time_ps"] * 1e-12
    early = ts[ts["tag"] == "early"]["bytes"].sum() * 8 / length_s / 1e9
    late = ts[ts["tag"] == "late"]["bytes"].sum() * 8 / length_s / 1e9
    assert g.loc["goodput, early (Gbit/s)", "step 30KB"] == pytest.approx(early)
    assert g.loc["goodput, late (Gbit/s)", "step 30KB"] == pytest.approx(late)
    assert g.loc["share of goodput, early (%)", "step 30KB"] == pytest.approx(100 * early / (early + late))
    # per flow: one early flow against two late ones
    assert g.loc["per-flow goodput ratio, early / late", "step 30KB"] == pytest.approx(early / (late / 2))
    phases = [m for m in g.index if m.startswith("Jain's index, phase")]
    assert phases == ["Jain's index, phase 1: 2 flows, 4.000-8.000 ms", "Jain's index, phase 2: 3 flows, 8.000-12.000 ms"]
    # long flows that never finish: no FCT rows of dashes, only their counts
    fct = t[t["group"] != "goodput"]
    fct = fct[fct["group"] != "network"]
    assert set(fct["metric"]) == {"flows finished", "flows unfinished"}


def test_seed002_reports_the_seeds_ratio():
    """The shipped DualQ study's table: Cubic / DCTCP per-flow goodput, the seed's slide 28
    quantity, for each AQM, and both flows together near the 40 Mbit/s bottleneck."""
    cmp = dcnsim.compare("seed002_dualq_small", variants=["RED", "DualQ 2015"], jobs=1)
    t = cmp.table()
    g = t[t["group"] == "goodput"].set_index("metric")
    for v in ("RED", "DualQ 2015"):
        total = g.loc["goodput, cubic (Mbit/s)", v] + g.loc["goodput, dctcp (Mbit/s)", v]
        assert 0.85 * 40 < total < 40, (v, total)
        ratio = g.loc["per-flow goodput ratio, cubic / dctcp", v]
        assert ratio == pytest.approx(g.loc["goodput, cubic (Mbit/s)", v] / g.loc["goodput, dctcp (Mbit/s)", v])
    # the bottleneck's queue delay (sojourns are recorded with switch.aqm): the ports
    # table's slowest queue, in us
    n = t[t["group"] == "network"].set_index("metric")
    for v in ("RED", "DualQ 2015"):
        ports = cmp.results[v].ports
        sw = ports[~ports["is_host"].astype(bool) & (ports["queue"] == 0)]
        assert n.loc["queue delay at the slowest port, queue 0: mean (us)", v] == pytest.approx(sw["sojourn_mean_ps"].max() / 1e6)
    # RED starves Cubic (the seed: "DCTCP does not work on traditional RED-ECN"), the
    # seed's DualQ does not
    assert g.loc["per-flow goodput ratio, cubic / dctcp", "RED"] < 0.3 < g.loc["per-flow goodput ratio, cubic / dctcp", "DualQ 2015"]
