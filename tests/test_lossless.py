"""End-to-end tests of the lossless fabric: PFC (802.1Qbb), RoCEv2 with DCQCN, and the
outputs they add (flows ``paused``; ports ``drops_headroom``, ``drops_ttl``,
``pfc_tx_frames``, ``pfc_rx_frames``, ``xoff_time_ps``, ``pause_periods``; summary
``pfc_frames``, ``ports_paused``, ``flows_paused``, ``deadlock``).

They run the shipped scenarios ``roce_incast_pfc`` (base = PFC + DCQCN, variant
``lossy``) through the ``dcnsim`` command and ``seed004_sfc_benefits_small`` (its PFC+DCQCN variant)
through :func:`dcnsim.run`, each once per module (a few seconds in all). That every
shipped scenario validates is checked by ``test_cli.py::test_shipped_scenarios_validate``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict

import numpy as np
import pandas as pd
import pytest

import dcnsim

from conftest import tiny
from test_cli import assert_user_error

INCAST = "roce_incast_pfc"
SEED004 = "seed004_sfc_benefits_small"

PFC_PORT_COLUMNS = [
    "drops_headroom", "drops_ttl", "pfc_tx_frames", "pfc_rx_frames", "xoff_time_ps", "pause_periods",
]
PFC_SUMMARY_KEYS = {"pfc_frames", "ports_paused", "flows_paused", "deadlock"}


def _cli(cwd: Path, *args: str) -> "subprocess.CompletedProcess[str]":
    cmd = [sys.executable, "-c", "import sys; from dcnsim.cli import main; sys.exit(main())", *args]
    env = dict(os.environ, COLUMNS="200", PYTHONIOENCODING="utf-8")
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, encoding="utf-8", timeout=300)


def _ports_paused(ports: pd.DataFrame) -> int:
    """Ports (node, port) with at least one paused period on any queue."""
    return int(ports[ports["pause_periods"] > 0][["node", "port"]].drop_duplicates().shape[0])


# ------------------------------------------------------------------ roce_incast_pfc (CLI)


@pytest.fixture(scope="module")
def incast(tmp_path_factory) -> Dict[str, Dict[str, Any]]:
    """``dcnsim run roce_incast_pfc`` for the base scenario and the ``lossy`` variant."""
    cwd = tmp_path_factory.mktemp("incast")
    out: Dict[str, Dict[str, Any]] = {}
    for label, extra in (("base", []), ("lossy", ["--variant", "lossy"])):
        proc = _cli(cwd, "run", INCAST, "-o", label, "--no-progress", *extra)
        assert proc.returncode == 0, proc.stderr
        d = cwd / label
        out[label] = {
            "stdout": proc.stdout,
            "stderr": proc.stderr,
            # dcnsim run -o writes rows as they become final: by id, the run's table
            "flows": pd.read_parquet(d / "flows.parquet").sort_values("flow_id", ignore_index=True),
            "ports": pd.read_parquet(d / "ports.parquet"),
            "summary": json.loads((d / "summary.json").read_text()),
        }
    return out


def _frames_sent_arrive_at_the_peer(ports):
    """Link by link, the PFC frames one end counted as sent (pfc_tx_frames, counted when
    the frame is made) are the frames the other end counted as received (pfc_rx_frames,
    counted on arrival): two counters kept at different events. The run has completed, so
    at most the last frame of a link may still be on the wire."""
    key = ["node", "peer_node", "queue"]
    tx = ports.set_index(key)["pfc_tx_frames"]
    rx = ports.set_index(["peer_node", "node", "queue"])["pfc_rx_frames"]
    rx.index.names = key
    tx, rx = tx.align(rx, join="outer", fill_value=0)
    gap = tx - rx
    assert int(tx.sum()) > 0
    assert ((gap >= 0) & (gap <= 1)).all(), gap[(gap < 0) | (gap > 1)]


def test_incast_pfc_pauses_and_every_flow_finishes(incast):
    r = incast["base"]
    s, flows, ports = r["summary"], r["flows"], r["ports"]
    assert s["end_reason"] == "completed"
    assert s["flows_finished"] == s["flows_total"] == len(flows) and flows["finished"].all()
    assert "warning" not in r["stderr"]
    # PFC acted, and the pauses spread beyond the incast receiver's port.
    assert s["pfc_frames"] > 0
    assert s["pfc_frames"] == int(ports["pfc_tx_frames"].sum())
    _frames_sent_arrive_at_the_peer(ports)
    assert s["ports_paused"] >= 2
    assert s["ports_paused"] == _ports_paused(ports)
    assert s["deadlock"] == []
    # A port was paused for some time exactly when it had paused periods.
    assert ((ports["xoff_time_ps"] > 0) == (ports["pause_periods"] > 0)).all()
    # Victims: flows that crossed a paused queue.
    assert 0 < s["flows_paused"] == int(flows["paused"].astype(bool).sum())
    # Lossless packets are admitted by ingress accounting only: no egress (buffer/AQM) drops.
    assert int(ports["drops_buffer_full"].sum()) == 0
    assert int(ports["drops_aqm"].sum()) == 0
    assert int(ports["drops_ttl"].sum()) == 0


def test_incast_pfc_is_lossless(incast):
    s, flows, ports = incast["base"]["summary"], incast["base"]["flows"], incast["base"]["ports"]
    assert int(ports["drops_headroom"].sum()) == 0
    assert int(ports["drops"].sum()) == 0 and int(flows["drops"].sum()) == 0
    assert int(flows["retx"].sum()) == 0


def test_incast_lossy_variant_drops_and_recovers_by_go_back_n(incast):
    r = incast["lossy"]
    s, flows, ports = r["summary"], r["flows"], r["ports"]
    assert s["variant"] == "lossy"
    # The same shallow queues now drop ...
    drops = int(ports["drops"].sum())
    assert drops > 0
    assert int(ports["drops_buffer_full"].sum()) == drops
    assert int(ports["drops_headroom"].sum()) == 0
    assert int(flows["drops"].sum()) == drops
    # ... and go-back-N (NACK, RTO) still completes every flow.
    assert int(flows["retx"].sum()) > 0
    assert s["end_reason"] == "completed"
    assert s["flows_finished"] == s["flows_total"] and flows["finished"].all()
    # No PFC at all.
    assert s["pfc_frames"] == 0 and s["ports_paused"] == 0 and s["flows_paused"] == 0
    for col in ("pfc_tx_frames", "pfc_rx_frames", "xoff_time_ps", "pause_periods"):
        assert int(ports[col].sum()) == 0, col
    assert not flows["paused"].astype(bool).any()


def test_incast_fct_tables_of_both_variants(incast):
    tables = {}
    for label, r in incast.items():
        flows, s = r["flows"], r["summary"]
        t = dcnsim.fct_table(flows)
        tables[label] = t
        assert list(t["bin"]) == ["<100KB", "100KB-1MB", "1MB-10MB", ">10MB", "all"]
        all_row = t[t["bin"] == "all"].iloc[0]
        assert all_row["count"] == s["flows_total"] and all_row["unfinished"] == 0
        assert all_row["p50_fct_us"] > 0 and all_row["mean_slowdown"] >= 1.0
        # The table the command printed and stored is the same one.
        assert [row["count"] for row in s["fct"]] == list(t["count"])
        for label_ in t["bin"]:
            assert label_ in r["stdout"]
        # The 16 incast messages of 1 MB land in the 1MB-10MB bin.
        assert t[t["bin"] == "1MB-10MB"].iloc[0]["count"] >= 16
    # Both variants run the identical flow set: only the fabric differs.
    keys = ["flow_id", "src", "dst", "size_bytes", "start_ps"]
    pd.testing.assert_frame_equal(incast["base"]["flows"][keys], incast["lossy"]["flows"][keys])
    assert list(tables["base"]["count"]) == list(tables["lossy"]["count"])


def test_incast_variants_are_listed(tmp_path):
    proc = _cli(tmp_path, "validate", INCAST)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip().endswith("variants: PFC+DCQCN, lossy"), proc.stdout


# ------------------------------------------------------ seed004 fat-tree, CI size (API)


@pytest.fixture(scope="module")
def seed004() -> "dcnsim.Result":
    return dcnsim.run(SEED004, variant="PFC+DCQCN")


def test_seed004_small_completes_lossless(seed004):
    s, flows, ports = seed004.summary, seed004.flows, seed004.ports
    assert s["end_reason"] == "completed"
    assert s["flows_finished"] == s["flows_total"] == len(flows) > 0
    assert s["hosts"] == 64 and s["switches"] == 12
    assert s["packets_dropped"] == 0
    assert int(ports["drops"].sum()) == 0 and int(flows["drops"].sum()) == 0
    assert int(flows["retx"].sum()) == 0
    # Summary keys of the lossless fabric, with their types.
    assert PFC_SUMMARY_KEYS <= set(s)
    assert isinstance(s["pfc_frames"], int) and s["pfc_frames"] > 0
    assert isinstance(s["ports_paused"], int) and s["ports_paused"] == _ports_paused(ports) > 0
    assert isinstance(s["flows_paused"], int)
    assert s["deadlock"] == []


def test_seed004_paused_flags_victims(seed004):
    flows = seed004.flows
    assert "paused" in flows.columns
    values = set(np.unique(flows["paused"].to_numpy()).tolist())
    assert values <= {0, 1, False, True}
    victims = int(flows["paused"].astype(bool).sum())
    assert 0 < victims < len(flows)
    assert victims == seed004.summary["flows_paused"]


def test_seed004_paused_column_is_bool(seed004):
    assert seed004.flows["paused"].dtype == np.dtype(bool)


def test_seed004_pfc_columns_round_trip_through_save(seed004, tmp_path):
    ports = seed004.ports
    for col in PFC_PORT_COLUMNS:
        assert col in ports.columns, col
        assert pd.api.types.is_integer_dtype(ports[col]), (col, ports[col].dtype)
        assert (ports[col] >= 0).all(), col
    assert int(ports["pfc_tx_frames"].sum()) == seed004.summary["pfc_frames"]
    _frames_sent_arrive_at_the_peer(ports)
    assert int(ports["xoff_time_ps"].sum()) > 0 and int(ports["pause_periods"].sum()) > 0

    seed004.save(tmp_path / "out")
    back = pd.read_parquet(tmp_path / "out" / "ports.parquet")
    pd.testing.assert_frame_equal(back[PFC_PORT_COLUMNS], ports[PFC_PORT_COLUMNS])
    flows_back = pd.read_parquet(tmp_path / "out" / "flows.parquet")
    assert flows_back["paused"].dtype == seed004.flows["paused"].dtype
    assert (flows_back["paused"].to_numpy() == seed004.flows["paused"].to_numpy()).all()
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    for key in PFC_SUMMARY_KEYS:
        assert summary[key] == seed004.summary[key], key


# ------------------------------------------------------------------- scenario errors

PFC_ERRORS = {
    # name: (switch table, words the one-line message must contain)
    "xon_above_xoff": ('pfc = { xoff = "10KB", xon = "20KB" }', ["switch.pfc.xon", "20000"]),
    "xoff_and_alpha": ('pfc = { xoff = "10KB", alpha = 1.0 }', ["switch.pfc.alpha"]),
    "alpha_needs_shared_buffer": ("pfc = { alpha = 0.5 }", ["switch.pfc.alpha", "shared"]),
    "priority_out_of_range": ('pfc = { xoff = "100KB", priorities = [3] }', ["switch.pfc.priorities[0]", "3"]),
    "quanta_zero": ('pfc = { xoff = "100KB", quanta = 0 }', ["switch.pfc.quanta", "0"]),
}


def _with_switch(table: str) -> str:
    return tiny().replace("[transport]", f"[switch]\n{table}\n\n[transport]")


@pytest.mark.parametrize("case", sorted(PFC_ERRORS))
def test_pfc_scenario_error_is_one_line(dcnsim_cli, tmp_path, case):
    table, words = PFC_ERRORS[case]
    p = tmp_path / f"{case}.toml"
    p.write_text(_with_switch(table))
    assert_user_error(dcnsim_cli("validate", p), *words)
    with pytest.raises(dcnsim.ScenarioError, match=words[0].replace("[", r"\[").replace("]", r"\]")):
        dcnsim.validate(str(p))


def test_pfc_xon_error_on_run_writes_nothing(dcnsim_cli, tmp_path):
    p = tmp_path / "xon.toml"
    p.write_text(_with_switch('pfc = { xoff = "10KB", xon = "20KB" }'))
    line = assert_user_error(dcnsim_cli("run", p, "-o", "out"), "switch.pfc.xon")
    assert "xoff" in line
    assert not (tmp_path / "out").exists()
