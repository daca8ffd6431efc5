"""Trace-driven workloads (issue 54 part 4): ``[[workload]] kind = "trace"`` reads its
flows from a CSV or Parquet file, row by row, and gives the run the same flows written as
a ``kind = "flows"`` list gives; a run's flows.parquet, sorted by start, is a trace; a bad
row is refused naming the file, the row and the column."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dcnsim

FABRIC = """\
[scenario]
name = "trace"
max_time = "{max_time}"
seed = 3

[topology]
kind = "clos2"
tors = 2
servers_per_tor = 4
spines = 2
host_link = {{ rate = "25Gbps", delay = "1us" }}
fabric_link = {{ rate = "25Gbps", delay = "1us" }}

[switch]
queues = 2
aqm = {{ kind = "step", threshold = "40KB" }}
buffer = {{ model = "static", queue = "1MB" }}
pfc = {{ xoff = "300KB", xon = "250KB", priorities = [1] }}

[transport]
kind = "dctcp"

{workload}
"""


def _rows(n: int = 40) -> List[Dict[str, object]]:
    """Flows of several kinds: TCP and RoCE, two tags, some with a priority of their own."""
    rng = np.random.default_rng(7)
    rows = []
    start = 0
    for k in range(n):
        src = int(rng.integers(0, 8))
        dst = int((src + 1 + rng.integers(0, 7)) % 8)
        start += int(rng.integers(0, 3)) * 1_000_000  # ties on purpose
        row: Dict[str, object] = {"src": src, "dst": dst, "size_bytes": int(rng.integers(1, 200)) * 1000, "start_ps": start}
        if k % 3 == 0:
            row.update(transport="roce", cc="dcqcn", priority=1, tag="rdma")
        elif k % 3 == 1:
            row.update(tag="rpc")
        if k % 5 == 0 and k % 3 != 0:
            row.update(cc="cubic")
        rows.append(row)
    return rows


def _flows_table(rows: List[Dict[str, object]]) -> str:
    def entry(r: Dict[str, object]) -> str:
        keys = [f'src = {r["src"]}', f'dst = {r["dst"]}', f'size = "{r["size_bytes"]}B"', f'start = "{r["start_ps"]}ps"']
        keys += [f'{k} = {r[k]}' if k == "priority" else f'{k} = "{r[k]}"' for k in ("priority", "tag", "transport", "cc") if k in r]
        return "  { " + ", ".join(keys) + " },"

    return '[[workload]]\nkind = "flows"\ntag = "plain"\nflows = [\n' + "\n".join(entry(r) for r in rows) + "\n]"


def _trace_table(path: Path) -> str:
    return f'[[workload]]\nkind = "trace"\ntag = "plain"\npath = "{path.as_posix()}"'


def _frame(rows: List[Dict[str, object]]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    for c in ("priority",):
        df[c] = df[c].astype("Int64")
    return df


def _same_run(a: dcnsim.Result, b: dcnsim.Result) -> None:
    pd.testing.assert_frame_equal(a.flows, b.flows)
    pd.testing.assert_frame_equal(a.ports, b.ports)
    for k in ("events", "flows_total", "flows_finished", "packets_created", "packets_dropped", "sim_time_ps"):
        assert a.summary[k] == b.summary[k], k


@pytest.fixture(scope="module")
def listed() -> dcnsim.Result:
    return dcnsim.run(FABRIC.format(max_time="5ms", workload=_flows_table(_rows())))


def test_csv_trace_runs_as_the_same_flows_listed(tmp_path: Path, listed: dcnsim.Result) -> None:
    path = tmp_path / "flows.csv"
    _frame(_rows()).to_csv(path, index=False)
    traced = dcnsim.run(FABRIC.format(max_time="5ms", workload=_trace_table(path)))
    assert listed.summary["flows_finished"] == 40
    assert set(listed.flows["tag"].astype(str)) == {"plain", "rdma", "rpc"}
    _same_run(listed, traced)


def test_parquet_trace_with_host_names_and_units_runs_the_same(tmp_path: Path, listed: dcnsim.Result) -> None:
    df = _frame(_rows())
    df["src"] = "h" + df["src"].astype(str)
    df["dst"] = "h" + df["dst"].astype(str)
    df["size"] = (df.pop("size_bytes") // 1000).astype(str) + "KB"
    df["start"] = (df.pop("start_ps") // 1_000_000).astype(str) + "us"
    path = tmp_path / "flows.parquet"
    df.to_parquet(path, index=False)
    traced = dcnsim.run(FABRIC.format(max_time="5ms", workload=_trace_table(path)))
    _same_run(listed, traced)
    # split over threads, each partition reads the trace itself: same again
    _same_run(listed, dcnsim.run(FABRIC.format(max_time="5ms", workload=_trace_table(path)), threads=2))


def test_a_runs_flows_sorted_by_start_are_a_trace(tmp_path: Path) -> None:
    """The export docs/workloads.md gives: a Poisson run's flows, as a trace, run again
    with the same flow ids, hosts, sizes, starts and classes, and so the same FCTs."""
    poisson = '[[workload]]\nkind = "poisson"\nsizes = "google-rpc"\nload = 0.4\npriority = 1'
    text = FABRIC.format(max_time="2ms", workload=poisson).replace('name = "trace"', 'name = "trace"\narrivals_for = "1ms"')
    first = dcnsim.run(text)
    out = tmp_path / "run"
    first.save(out)
    flows = pd.read_parquet(out / "flows.parquet")
    trace = flows.sort_values(["start_ps", "flow_id"])[["src", "dst", "size_bytes", "start_ps", "priority", "tag"]]
    trace.to_parquet(tmp_path / "trace.parquet", index=False)
    again = dcnsim.run(FABRIC.format(max_time="2ms", workload=_trace_table(tmp_path / "trace.parquet")))
    assert len(first.flows) > 50
    cols = ["flow_id", "src", "dst", "size_bytes", "start_ps", "priority", "finished", "fct_ps", "drops", "ecn_marks"]
    pd.testing.assert_frame_equal(first.flows[cols], again.flows[cols])
    # the trace workload's own tag is a category no row uses
    assert list(first.flows["tag"].astype(str)) == list(again.flows["tag"].astype(str))


def test_trace_rows_are_streamed_and_counted_before_the_run(tmp_path: Path) -> None:
    """A trace reaching past max_time: its flows are counted (flows_total) but only those
    that start are made, and the warning says how many never started."""
    path = tmp_path / "long.csv"
    n = 20_000
    pd.DataFrame({"src": np.arange(n) % 8, "dst": (np.arange(n) + 1) % 8, "size_bytes": 1000, "start_ps": np.arange(n) * 1_000_000}).to_csv(path, index=False)
    r = dcnsim.run(FABRIC.format(max_time="100us", workload=_trace_table(path)))
    assert r.summary["flows_total"] == n
    assert 90 <= r.summary["flows_started"] <= 101
    assert len(r.flows) == r.summary["flows_started"]
    line = dcnsim.sources.unfinished_warning(r.summary)
    assert line is not None and f"{n - r.summary['flows_started']:,} never started" in line


BAD = [
    ("src,dst,size_bytes,start_ps\n0,1,100,0\n0,8,100,1\n", "row 2, column dst: invalid value 8, expected a host index 0..7 (the topology has 8 hosts)"),
    ("src,dst,size_bytes,start_ps\nh0,h9,100,0\n", "row 1, column dst: no node named \"h9\""),
    ("src,dst,size_bytes,start_ps\ntor0,h1,100,0\n", "row 1, column src: invalid value \"tor0\": a switch, expected a host"),
    ("src,dst,size_bytes,start_ps\n0,1,100,10\n0,1,100,5\n", "row 2 (line 3), column start_ps: start 5 ps is before row 1's 10 ps"),
    ("src,dst,size_bytes,start_ps\n0,1,-5,0\n", "row 1 (line 2), column size_bytes: invalid value \"-5\", expected a whole number of bytes > 0"),
    ("src,dst,size_bytes,start_ps,transport,cc\n0,1,100,0,tcp,dcqcn\n", "row 1 (line 2), column cc: invalid value \"dcqcn\", expected a congestion control that runs over tcp"),
    ("src,dst,size_bytes,start_ps,slowdown\n", "unknown column \"slowdown\""),
]


@pytest.mark.parametrize("text,want", BAD)
def test_a_bad_row_is_refused_naming_file_row_and_column(tmp_path: Path, text: str, want: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(dcnsim.ScenarioError) as e:
        dcnsim.validate(FABRIC.format(max_time="1ms", workload=_trace_table(path)))
    msg = str(e.value)
    assert msg.startswith("workload[0].path: ") and str(path) in msg and want in msg, msg


def test_bad_parquet_types_and_keys_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "typed.parquet"
    pq.write_table(pa.table({"src": [0], "dst": [1], "size_bytes": [True], "start_ps": [0]}), path)
    with pytest.raises(dcnsim.ScenarioError, match=r"row 1, column size_bytes: invalid value a value of type boolean"):
        dcnsim.validate(FABRIC.format(max_time="1ms", workload=_trace_table(path)))
    for extra, want in [
        ('start = "1ms"', 'workload[0].start: not used by kind = "trace" (each flow gives its own start)'),
        ("hosts = [0, 4]", 'workload[0].hosts: not used by kind = "trace"'),
        ('size = "1MB"', 'workload[0].size: not used by kind = "trace"; allowed keys: path'),
    ]:
        with pytest.raises(dcnsim.ScenarioError) as e:
            dcnsim.validate(FABRIC.format(max_time="1ms", workload=_trace_table(path) + "\n" + extra))
        assert want in str(e.value)
    with pytest.raises(dcnsim.ScenarioError, match=r"workload\[0\].path: missing"):
        dcnsim.validate(FABRIC.format(max_time="1ms", workload='[[workload]]\nkind = "trace"'))
    with pytest.raises(dcnsim.ScenarioError, match=r"expected a file named \*.csv or \*.parquet"):
        dcnsim.validate(FABRIC.format(max_time="1ms", workload='[[workload]]\nkind = "trace"\npath = "flows.json"'))


def test_cli_run_of_a_bad_trace_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("src,dst,size_bytes,start_ps\n0,0,100,0\n")
    scenario = tmp_path / "s.toml"
    scenario.write_text(FABRIC.format(max_time="1ms", workload=_trace_table(path)))
    out = tmp_path / "out"
    p = subprocess.run(["dcnsim", "run", str(scenario), "-o", str(out)], capture_output=True, text=True)
    assert p.returncode != 0
    assert "row 1 (line 2), column dst: invalid value \"0\", expected a host other than src" in p.stderr
    assert not out.exists()


@pytest.mark.parametrize("compression", ["snappy", "zstd", "lz4", "gzip", "none"])
def test_parquet_of_every_common_compression_reads(tmp_path: Path, compression: str) -> None:
    path = tmp_path / f"{compression}.parquet"
    pq.write_table(pa.table({"src": [0, 2], "dst": [1, 3], "size_bytes": [1000, 2000], "start_ps": [0, 5]}), path, compression=compression)
    r = dcnsim.run(FABRIC.format(max_time="1ms", workload=_trace_table(path)))
    assert list(r.flows["size_bytes"]) == [1000, 2000] and r.summary["flows_finished"] == 2
