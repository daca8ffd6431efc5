"""Seed 000's next step, alternative switch memory architectures (`dcnsim reproduce
seed003_architectures`): the 2-queue CI study's small fabric on a VOQ switch, one seed, as
the regression guard of docs/reproductions.md's "Switch memory architectures" table."""

from __future__ import annotations

import tomllib

import pytest

import dcnsim
from dcnsim.api import shipped_scenarios
from dcnsim.reproduce.studies_ci import ARCHITECTURES


def _case(label: str):
    case = next(c for c in ARCHITECTURES if c.label == label)
    return case.edit(tomllib.loads(shipped_scenarios()["seed003_ci_2queue_small"].read_text()))


@pytest.mark.parametrize("label", ["VOQ", "CIOQ"])
def test_ci_keeps_the_non_congested_class_unpaused_on_input_buffered_switches(label):
    """On VOQ and CIOQ switches, PFC counting at the inputs: with CI no class-1 PAUSE is
    sent and the mice's mean FCT falls several-fold; without it class 1 is paused, and
    nothing is dropped either way."""
    s = _case(label)
    assert s["switch"]["architecture"]["kind"] == label.lower()
    base, ci = (dcnsim.run(s, variant=v, seed=1, check_invariants=True) for v in ("without CI", "CI"))
    for r in (base, ci):
        assert r.summary["invariant_violations"] == [] and r.summary["data_packets_dropped"] == 0
        assert r.summary["crossbar_transfers"] > 0
    q1 = {n: int(r.ports.query("queue == 1")["pfc_tx_frames"].sum()) for n, r in (("base", base), ("ci", ci))}
    assert q1["base"] > 0 and q1["ci"] == 0, q1
    mice = {n: r.flows.query("tag == 'background' and size_bytes < 100_000 and finished == 1")["fct_ps"].mean() for n, r in (("base", base), ("ci", ci))}
    assert mice["ci"] * 3 < mice["base"], mice
    assert ci.summary["ci_isolations"] > 0 and ci.summary["cips_sent"] > 0


def test_the_two_output_queued_buffer_models_meet_no_lossless_packet_differently():
    """Under 802.1Qbb ingress accounting every packet of the lossless class is admitted by
    its ingress counter, so 1 MB static queues and a dynamic-threshold pool give the same
    run."""
    static, dt = (dcnsim.run(_case(label), variant="CI", seed=1) for label in ("output, static", "output, dynamic threshold"))
    assert dt.summary["events"] == static.summary["events"]
    assert dt.flows["fct_ps"].tolist() == static.flows["fct_ps"].tolist()
