"""A configured mechanism that never acted is said, not left to read as "no effect"
(issue 54 part 2): before the run where the scenario shows it (``validate``, ``run``,
``compare``, the API's DcnsimWarning), and after it for every configured mechanism whose
activity stayed at zero (summary ``activity``)."""

from __future__ import annotations

import warnings
from typing import List

import pytest

import dcnsim
from dcnsim.sources import inactive_warnings

DUMBBELL = """\
[scenario]
name = "idle"
max_time = "20ms"

[topology]
kind = "dumbbell"
senders = 4
host_link = {{ rate = "10Gbps", delay = "1us" }}
bottleneck = {{ rate = "10Gbps", delay = "1us" }}

{switch}

[transport]
{transport}

[[workload]]
kind = "incast"
fan_in = 4
receiver = 4
size = "200KB"
"""

CI_UNUSED_CLASS = '[switch]\nqueues = 2\naqm = { kind = "step", threshold = "30KB" }\nci = { queue = 1, congested_queue = 0 }'
CI_USED_CLASS = CI_UNUSED_CLASS + "\nclasses = [1, 1, 1, 1, 1, 1, 1, 1]"
STEP = '[switch]\naqm = { kind = "step", threshold = "30KB" }'

DCTCP_NO_MARKS = 'transport.cc = "dctcp" but no switch marks ECN'
DCQCN_NOTHING = 'transport.cc = "dcqcn" with neither ECN marking (switch.aqm) nor PFC (switch.pfc)'
CI_WATCHES = "switch.ci watches queue 1 but every flow is in queue 0"


def scenario(tmp_path, switch: str = "", transport: str = 'kind = "dctcp"', extra: str = "", name: str = "s.toml"):
    p = tmp_path / name
    p.write_text(DUMBBELL.format(switch=switch, transport=transport) + extra, encoding="utf-8")
    return p


def warned(stderr: str) -> List[str]:
    return [line[len("warning: "):] for line in stderr.splitlines() if line.startswith("warning: ")]


def test_ci_on_a_class_no_flow_uses_is_said_before_and_after_the_run(dcnsim_cli, tmp_path):
    p = scenario(tmp_path, CI_UNUSED_CLASS)
    v = dcnsim_cli("validate", p)
    assert v.returncode == 0, v.stderr
    assert [w for w in warned(v.stderr) if w.startswith(CI_WATCHES)], v.stderr
    r = dcnsim_cli("run", p, "--no-progress")
    assert r.returncode == 0, r.stderr
    lines = warned(r.stderr)
    # the scenario's warning comes before the table, the zero count after it, each once
    assert r.stderr.index(CI_WATCHES) < r.stderr.index("never acted")
    assert sum(CI_WATCHES in w for w in lines) == 1
    assert "switch.ci is configured but never acted: 0 flows isolated" in lines
    # the same queues with the flows in CI's class: neither line, and CI isolates
    q = scenario(tmp_path, CI_USED_CLASS, name="used.toml")
    res = dcnsim.run(str(q))
    assert not inactive_warnings(res.summary)
    assert not [w for w in res.summary.get("warnings") or [] if "switch.ci" in w]
    assert res.summary["ci_isolations"] > 0
    ci = next(a for a in res.summary["activity"] if a["key"] == "switch.ci")
    assert ci["count"] == res.summary["ci_isolations"]


def test_dctcp_without_marking_and_dcqcn_without_ecn_or_pfc(dcnsim_cli, tmp_path):
    p = scenario(tmp_path)
    r = dcnsim_cli("run", p, "--no-progress")
    assert r.returncode == 0, r.stderr
    assert [w for w in warned(r.stderr) if w.startswith(DCTCP_NO_MARKS)], r.stderr
    # with a marker: no such line, and the marker acted
    with warnings.catch_warnings():
        warnings.simplefilter("error", dcnsim.DcnsimWarning)
        res = dcnsim.run(str(scenario(tmp_path, STEP, name="marked.toml")))
    marks = next(a for a in res.summary["activity"] if a["key"] == "switch.aqm")
    assert marks["count"] == res.summary["ecn_marks"] > 0

    p = scenario(tmp_path, transport='kind = "dcqcn"', name="dcqcn.toml")
    with pytest.warns(dcnsim.DcnsimWarning, match=r"dcqcn.*neither ECN marking"):
        dcnsim.run(str(p))
    # PFC alone keeps DCQCN's fabric lossless: not warned about
    q = scenario(tmp_path, '[switch]\npfc = { xoff = "100KB", xon = "50KB" }', 'kind = "dcqcn"', name="pfc.toml")
    v = dcnsim_cli("validate", q)
    assert v.returncode == 0 and not [w for w in warned(v.stderr) if "dcqcn" in w], v.stderr


def test_a_transport_table_no_flow_uses(dcnsim_cli, tmp_path):
    line = "transport.hpcc is set but no flow of the base or of any variant uses hpcc: its values act on nothing"
    p = scenario(tmp_path, STEP, 'kind = "dctcp"\nhpcc = { eta = 0.9 }', extra='\n[[variant]]\nname = "a"\n\n[[variant]]\nname = "b"\nswitch.aqm = { kind = "step", threshold = "60KB" }\n')
    v = dcnsim_cli("validate", p)
    assert warned(v.stderr) == [line], v.stderr
    c = dcnsim_cli("compare", p, "-j", "1", "--no-progress")
    assert c.returncode == 0, c.stderr
    assert warned(c.stderr) == [line], c.stderr  # once, before the run
    # a variant that runs HPCC uses the table: nothing to say about it
    q = scenario(tmp_path, STEP, 'kind = "dctcp"\nhpcc = { eta = 0.9 }', extra='\n[[variant]]\nname = "h"\ntransport.cc = "hpcc"\nswitch.int = {}\n', name="h.toml")
    assert not [w for w in warned(dcnsim_cli("validate", q).stderr) if "transport.hpcc" in w]


def test_pfc_that_never_paused_is_said_per_variant_and_over_seeds(tmp_path):
    """PFC configured with a buffer deep enough never to pause: said in the comparison's
    warnings and its markdown, over every seed; the variant that paused is not named."""
    p = scenario(
        tmp_path,
        '[switch]\naqm = { kind = "step", threshold = "30KB" }\npfc = { xoff = "900KB", xon = "800KB" }',
        extra='\n[[variant]]\nname = "deep"\n\n[[variant]]\nname = "shallow"\nswitch.pfc = { xoff = "20KB", xon = "10KB" }\n',
    )
    with pytest.warns(dcnsim.DcnsimWarning, match="never acted"):
        cmp = dcnsim.compare(str(p), seeds=2, jobs=1)
    idle = [w for w in cmp.warnings if "never acted" in w]
    assert idle == ["deep: switch.pfc is configured but never acted: 0 PAUSE frames sent (in all 2 seeds)"], cmp.warnings
    assert cmp.results["shallow"].summary["pfc_frames"] > 0
    assert idle[0] in cmp.markdown_report()


def test_the_counts_add_over_threads():
    """A split run reports the same activity as one thread (the partitions' counts add)."""
    text = DUMBBELL.format(switch='[switch]\naqm = { kind = "step", threshold = "30KB" }\npfc = { xoff = "20KB", xon = "10KB" }', transport='kind = "dctcp"')
    one = dcnsim.run(text).summary["activity"]
    split = dcnsim.run(text, threads=2).summary
    assert not [w for w in split.get("warnings") or [] if "one thread" in w], split.get("warnings")
    assert split["activity"] == one and all(a["count"] > 0 for a in one), one


def test_load_balancing_on_a_fabric_of_single_paths_is_said_to_have_never_acted():
    """A dumbbell gives every packet one next hop: switch.load_balance never chooses, and
    the run says so; on a leaf-spine it routes and says nothing."""
    text = DUMBBELL.format(switch='[switch]\naqm = { kind = "step", threshold = "30KB" }\nload_balance = { kind = "adaptive" }', transport='kind = "dctcp"')
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        dcnsim.run(text)
    said = [str(x.message) for x in w]
    assert "switch.load_balance is configured but never acted: 0 packets routed among equal-cost next hops" in said, said
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = dcnsim.run("multipath_permutation_small", variant="adaptive")
    assert not [x for x in w if "load_balance" in str(x.message)]
    assert r.summary["load_balance_moved"] > 0
