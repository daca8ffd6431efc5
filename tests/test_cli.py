"""End-to-end tests of the ``dcnsim`` command (run in a subprocess, as a user would)."""

from __future__ import annotations

import json
import os
import re
import sys
from importlib import metadata, resources
from pathlib import Path
from typing import List

import click
import pandas as pd
import pytest

import dcnsim

from conftest import sigint_as_at_a_terminal, tiny

FLOW_COLUMNS = {
    "flow_id", "src", "dst", "size_bytes", "start_ps", "end_ps", "fct_ps", "ideal_fct_ps",
    "slowdown", "priority", "tag", "finished", "drops", "ecn_marks", "retx",
}
PORT_COLUMNS = {
    "node", "node_name", "port", "peer_node", "peer_name", "queue",
    "tx_bytes", "tx_packets", "drops", "ecn_marks", "max_depth_bytes", "mean_depth_bytes",
}
SUMMARY_KEYS = {
    "scenario", "variant", "seed", "sim_time_ps", "events", "flows_total", "flows_finished",
    "flows_unfinished", "end_reason", "fct_bins", "hosts", "switches", "version",
    "wall_time_s", "events_per_s", "scenario_sha256", "fct",
}


def assert_user_error(proc, *words):
    """One line ``error: ...`` on stderr, exit code 2, no traceback."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: "), lines[0]
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


# ---------------------------------------------------------------------------- run


def test_run_writes_outputs(dcnsim_cli, tiny_file, tmp_path):
    proc = dcnsim_cli("run", tiny_file, "-o", "out/tiny", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out" / "tiny"
    assert sorted(os.listdir(out)) == ["flows.parquet", "ports.parquet", "scenario.toml", "summary.json"]

    flows = pd.read_parquet(out / "flows.parquet")
    assert FLOW_COLUMNS <= set(flows.columns)
    assert len(flows) == 2 and flows["finished"].all()
    ports = pd.read_parquet(out / "ports.parquet")
    assert PORT_COLUMNS <= set(ports.columns) and len(ports) > 0
    summary = json.loads((out / "summary.json").read_text())
    assert SUMMARY_KEYS <= set(summary)
    assert summary["scenario"] == "tiny" and summary["flows_finished"] == 2

    # The FCT table and the one-line summary are printed.
    for label in ("<100KB", "100KB-1MB", "1MB-10MB", ">10MB", "all"):
        assert label in proc.stdout
    assert re.search(r"2/2 flows finished, end: \S+", proc.stdout), proc.stdout
    assert "events/s" in proc.stdout and "wall" in proc.stdout
    assert "warning" not in proc.stderr


def test_run_without_outdir_writes_nothing(dcnsim_cli, tiny_file, tmp_path):
    before = sorted(os.listdir(tmp_path))
    proc = dcnsim_cli("run", tiny_file)
    assert proc.returncode == 0, proc.stderr
    assert "2/2 flows finished" in proc.stdout
    assert sorted(os.listdir(tmp_path)) == before


def test_run_seed_option(dcnsim_cli, tiny_file, tmp_path):
    proc = dcnsim_cli("run", tiny_file, "-o", "o", "--seed", "42")
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["seed"] == 42


def test_run_reports_unfinished_flows(dcnsim_cli, unfinished_file, tmp_path):
    proc = dcnsim_cli("run", unfinished_file, "-o", "cut")
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"warning: 2 of 2 flows unfinished", proc.stderr), proc.stderr
    assert "0/2 flows finished" in proc.stdout
    flows = pd.read_parquet(tmp_path / "cut" / "flows.parquet")
    assert len(flows) == 2
    assert not flows["finished"].any()
    assert flows["end_ps"].isna().all() and flows["fct_ps"].isna().all()
    assert flows["slowdown"].isna().all()
    summary = json.loads((tmp_path / "cut" / "summary.json").read_text())
    assert summary["flows_unfinished"] == 2


def test_run_is_deterministic(dcnsim_cli, tiny_file, tmp_path):
    for d in ("a", "b"):
        proc = dcnsim_cli("run", tiny_file, "-o", d, "--seed", "5")
        assert proc.returncode == 0, proc.stderr
    for name in ("flows.parquet", "ports.parquet"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    sa = json.loads((tmp_path / "a" / "summary.json").read_text())
    sb = json.loads((tmp_path / "b" / "summary.json").read_text())
    for volatile in ("wall_time_s", "events_per_s"):
        sa.pop(volatile), sb.pop(volatile)
    assert sa == sb


def test_run_leaves_no_temp_files(dcnsim_cli, tiny_file, tmp_path):
    out = tmp_path / "o"
    out.mkdir()
    (out / "unrelated.txt").write_text("keep me")
    for _ in range(2):  # second run overwrites in place
        proc = dcnsim_cli("run", tiny_file, "-o", out)
        assert proc.returncode == 0, proc.stderr
    assert sorted(os.listdir(out)) == ["flows.parquet", "ports.parquet", "scenario.toml", "summary.json", "unrelated.txt"]


def test_run_progress_forced(dcnsim_cli, tiny_file):
    proc = dcnsim_cli("run", tiny_file, "--progress")
    assert proc.returncode == 0, proc.stderr
    assert "ev/s" in proc.stdout  # the bar was drawn even though stdout is a pipe


def test_run_progress_auto_off_in_pipe(dcnsim_cli, tiny_file):
    proc = dcnsim_cli("run", tiny_file)
    assert proc.returncode == 0, proc.stderr
    assert "ev/s" not in proc.stdout


def test_run_variant(dcnsim_cli, tmp_path):
    p = tmp_path / "v.toml"
    p.write_text(tiny() + '\n[[variant]]\nname = "slow"\ntopology.bottleneck = { rate = "1Gbps", delay = "1us" }\n')
    proc = dcnsim_cli("run", p, "--variant", "slow", "-o", "v")
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "v" / "summary.json").read_text())["variant"] == "slow"
    assert "slow" in proc.stdout
    # without --variant the base runs, and the output says so
    proc = dcnsim_cli("run", p)
    assert proc.returncode == 0, proc.stderr
    assert "FCT by flow size: tiny / base (seed" in proc.stdout
    assert "ran the base scenario; the file's variants (slow) run with --variant NAME" in " ".join(proc.stdout.split())


# ---------------------------------------------------------------------------- validate


def test_validate_ok(dcnsim_cli, tiny_file):
    proc = dcnsim_cli("validate", tiny_file)
    assert proc.returncode == 0, proc.stderr
    assert re.fullmatch(r"ok: tiny \u2014 \d+ hosts, \d+ switches, variants: none\n", proc.stdout), proc.stdout


def test_validate_lists_variants(dcnsim_cli, tmp_path):
    p = tmp_path / "v.toml"
    p.write_text(tiny() + '\n[[variant]]\nname = "A"\n\n[[variant]]\nname = "B"\n')
    proc = dcnsim_cli("validate", p)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip().endswith("variants: A, B")


POISSON = """
[[workload]]
kind = "poisson"
sizes = "web-search"
load = {load}
"""

ECN = """
[switch]
aqm = {{ kind = "ramp", kmin = "{low}", kmax = "{high}", pmax = 0.01 }}
"""

BAD_SCENARIOS = {
    # name: (scenario text, words the one-line message must contain)
    "unknown_key": (tiny().replace('name = "tiny"', 'name = "tiny"\nbogus_key = 3'), ["bogus_key"]),
    "missing_unit": (
        tiny().replace('bottleneck = { rate = "10Gbps"', "bottleneck = { rate = 100"),
        ["rate", "100"],
    ),
    "load_above_one": (tiny() + POISSON.format(load=1.5), ["load", "1.5"]),
    "ecn_low_above_high": (tiny() + ECN.format(low="300KB", high="10KB"), ["kmin", "kmax"]),
    "toml_syntax": (tiny().replace("[transport]", "[transport"), []),
    # a tiny ratio derives 2e300 spines: refused, not built (it aborted on a 16 GB allocation)
    "clos2_tiny_oversubscription": (
        tiny().replace('kind = "dumbbell"\nsenders = 2', 'kind = "clos2"\ntors = 1\nservers_per_tor = 3\noversubscription = 1e-300').replace(
            'bottleneck = { rate = "10Gbps", delay = "1us" }\n', ""
        ),
        ["topology.oversubscription", "1e-300", "2^32 nodes"],
    ),
    # a zero RTO re-armed its timer at the same instant until memory ran out
    # sizes are redrawn until one falls in the window: this one takes ~4e10 draws a message
    "closed_loop_unreachable_window": (
        tiny() + '\n[[workload]]\nkind = "closed_loop"\nmean_size = "8000B"\nmin_size = "128KB"\nmax_size = "128001B"\n',
        ["workload[1].min_size", "128000 B", "probability 2.8e-11", ">= 1e-6"],
    ),
    # routing panicked on a host whose link leads to another host
    "custom_host_to_host": (
        '[scenario]\nname = "hh"\n[topology]\nkind = "custom"\nhosts = ["h0", "h1"]\nswitches = []\n'
        'links = [{ a = "h0", b = "h1", rate = "10Gbps", delay = "1us" }]\n'
        '[[workload]]\nkind = "flows"\nflows = [ { src = 0, dst = 1, size = "100KB" } ]\n',
        ["topology.links[0]", 'host "h0" to host "h1"', "expected a host to connect to a switch"],
    ),
    "zero_min_rto": (tiny().replace('kind = "reno"', 'kind = "reno"\nmin_rto = "0s"'), ["transport.min_rto", "invalid value 0", "> 0"]),
}


@pytest.mark.parametrize("case", sorted(BAD_SCENARIOS))
@pytest.mark.parametrize("command", ["validate", "run"])
def test_bad_scenario_is_one_line_error(dcnsim_cli, tmp_path, case, command):
    text, words = BAD_SCENARIOS[case]
    p = tmp_path / f"{case}.toml"
    p.write_text(text)
    extra = ["-o", "out"] if command == "run" else []
    assert_user_error(dcnsim_cli(command, p, *extra), *words)
    assert not (tmp_path / "out").exists()


def test_ecn_thresholds_in_order_are_accepted(dcnsim_cli, tmp_path):
    """Control for the low > high case above: the same [switch] table with low < high is fine."""
    p = tmp_path / "ecn.toml"
    p.write_text(tiny() + ECN.format(low="10KB", high="300KB"))
    proc = dcnsim_cli("validate", p)
    assert proc.returncode == 0, proc.stderr


def test_missing_file_is_user_error(dcnsim_cli):
    assert_user_error(dcnsim_cli("run", "does/not/exist.toml", "-o", "out"), "does/not/exist.toml")
    assert_user_error(dcnsim_cli("validate", "nope.toml"), "nope.toml")


def test_unknown_scenario_name_is_user_error(dcnsim_cli):
    assert_user_error(dcnsim_cli("run", "no_such_scenario"), "no_such_scenario")


def test_unknown_variant_is_user_error(dcnsim_cli, tiny_file):
    assert_user_error(dcnsim_cli("run", tiny_file, "--variant", "nope"), "nope")


@pytest.mark.parametrize(
    "args",
    [
        ["run", "{f}", "--bogus"],
        ["run", "{f}", "--seed", "abc"],
        ["run", "{f}", "--seed", "-3"],
        ["run"],
        ["frobnicate"],
    ],
)
def test_bad_usage_is_user_error(dcnsim_cli, tiny_file, args):
    assert_user_error(dcnsim_cli(*[a.format(f=tiny_file) for a in args]))


@pytest.mark.parametrize("command", ["run", "compare", "sweep", "report"])
def test_an_empty_output_path_is_refused(dcnsim_cli, tiny_file, tmp_path, command):
    """-o "" (an unset shell variable, say) wrote into the current directory unasked."""
    args = ["report", ""] if command == "report" else [command, tiny_file, "-o", ""]
    assert_user_error(dcnsim_cli(*args), "empty, expected a directory path")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny.toml"]


# ---------------------------------------------------------------------------- misc


def test_version(dcnsim_cli):
    proc = dcnsim_cli("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"dcnsim {dcnsim.__version__}"


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["scenarios"], ["validate", "seed003_ci_2queue_small"]])
def test_light_commands_do_not_import_pandas(tmp_path, args):
    """`import dcnsim` and the commands that run nothing load neither pandas nor numpy (they
    cost 0.3-0.6 s of start-up): the API that needs them is imported on first use."""
    import subprocess

    code = (
        "import sys\n"
        "from dcnsim.cli import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = sorted(m for m in ('pandas', 'numpy', 'pyarrow', 'matplotlib') if m in sys.modules)\n"
        "print('HEAVY', heavy, file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, *args], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "HEAVY []" in proc.stderr, proc.stderr[-500:]
    proc = subprocess.run([sys.executable, "-c", "import sys, dcnsim; print(sorted(m for m in ('pandas', 'numpy') if m in sys.modules)); dcnsim.run"], capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip() == "[]", proc.stdout + proc.stderr


def test_help(dcnsim_cli):
    proc = dcnsim_cli("--help")
    assert proc.returncode == 0
    for cmd in ("run", "validate", "scenarios"):
        assert cmd in proc.stdout


def _shipped():
    d = resources.files("dcnsim").joinpath("scenarios")
    if not d.is_dir():
        return []
    return sorted(e.name[: -len(".toml")] for e in d.iterdir() if e.name.endswith(".toml"))


def test_scenarios_lists_shipped(dcnsim_cli):
    names = _shipped()
    assert "seed003_ci_2queue_small" in names  # the README's quick-start comparison
    assert "leaf_spine_dctcp" in names
    proc = dcnsim_cli("scenarios")
    assert proc.returncode == 0, proc.stderr
    listed = [line.split()[0] for line in proc.stdout.splitlines() if line.strip()]
    assert listed == names
    for line in proc.stdout.splitlines():
        assert len(line.split(None, 1)) == 2, f"missing description: {line!r}"


@pytest.mark.parametrize("name", _shipped())
def test_shipped_scenarios_validate(dcnsim_cli, name):
    proc = dcnsim_cli("validate", name)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ok: ")


def test_console_script_entry_point():
    eps = metadata.entry_points()
    scripts = eps.select(group="console_scripts") if hasattr(eps, "select") else eps["console_scripts"]
    ours = [ep for ep in scripts if ep.name == "dcnsim"]
    assert ours and ours[0].value == "dcnsim.cli:console_main"


def test_console_main_exit_codes_and_flushed_output(tmp_path):
    """The installed command ends with a fast exit: its exit codes and its output (to a
    pipe, so buffered) are those of main()."""
    import subprocess
    import sys

    code = "import sys; sys.argv[0] = 'dcnsim'; from dcnsim.cli import console_main; console_main()"
    ok = subprocess.run([sys.executable, "-c", code, "run", "dumbbell_dctcp", "--no-progress", "-o", str(tmp_path / "o")], capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr
    assert "flows finished" in ok.stdout and (tmp_path / "o" / "flows.parquet").is_file()
    bad = subprocess.run([sys.executable, "-c", code, "run", "no_such_scenario"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "no_such_scenario" in bad.stderr


def test_check_invariants_flag_runs_clean(tmp_path):
    """`--check-invariants` runs the engine's buffer-bound checks; a sound run stays clean."""
    import subprocess, sys
    r = subprocess.run(
        [sys.executable, "-m", "dcnsim.cli", "run", "roce_incast_pfc", "--check-invariants", "--no-progress"],
        capture_output=True, text=True,
    )
    assert r.returncode == 0, r.stderr
    assert "invariant violation" not in r.stderr


LONG_COMPARE = """
[scenario]
name = "long"
max_time = "5s"
[topology]
kind = "dumbbell"
senders = 2
host_link = { rate = "100Gbps", delay = "1us" }
bottleneck = { rate = "100Gbps", delay = "1us" }
[transport]
kind = "udp"
[[workload]]
kind = "flows"
flows = [ { src = 0, dst = 2, size = "100GB" }, { src = 1, dst = 2, size = "100GB" } ]
[[variant]]
name = "a"
[[variant]]
name = "b"
switch.buffer = { queue = "2MB" }
"""


def _children(pid: int) -> List[int]:
    kids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                kids.append(int(d.name))
    return kids


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to find the worker processes")
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_compare_ends_its_workers_with_it_on_a_signal(tmp_path, sig):
    """`dcnsim compare` stopped by SIGTERM, SIGHUP or SIGINT while its workers simulate:
    it exits (128 + signal, 130 for Ctrl-C) with one error line, its worker processes end
    with it, and the output directory holds no file."""
    import signal
    import subprocess
    import time

    (tmp_path / "long.toml").write_text(LONG_COMPARE, encoding="utf-8")
    cmd = [sys.executable, "-c", "import sys; from dcnsim.cli import main; sys.exit(main())", "compare", "long.toml", "-o", "out", "--jobs", "2", "--no-progress"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=sigint_as_at_a_terminal)
    deadline = time.monotonic() + 60
    workers: List[int] = []
    while time.monotonic() < deadline:
        # the pool's workers are python children of the command (the resource tracker is one too)
        workers = _children(proc.pid)
        if len(workers) >= 3:
            break
        time.sleep(0.2)
    assert len(workers) >= 3, f"the workers did not start: {workers}"
    time.sleep(1.0)  # let them get into the simulation
    proc.send_signal(getattr(signal, sig))
    _, err = proc.communicate(timeout=30)
    expected = 130 if sig == "SIGINT" else 128 + getattr(signal, sig)
    assert proc.returncode == expected, (proc.returncode, err)
    assert err.strip().startswith("error:") and "Traceback" not in err, err
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(w) for w in workers):
        time.sleep(0.2)
    assert not [w for w in workers if _alive(w)], "worker processes outlived the command"
    out = tmp_path / "out"
    assert not out.exists() or not any(out.rglob("*")), list(out.rglob("*"))


def test_bad_input_messages_say_what_is_wrong(dcnsim_cli, tiny_file, tmp_path):
    """Each message names what is actually wrong (and exit 2 writes nothing)."""
    base = tiny_file.read_text(encoding="utf-8")
    cases = {
        "max_time = \"-5us\"": ["negative"],
        "max_time = \"1.5e3ns\"": ["exponent notation"],
        "max_time = \"1e30s\"": ["exponent notation"],
    }
    for line, words in cases.items():
        p = tmp_path / "bad.toml"
        p.write_text(re.sub(r'max_time = "[^"]*"', line, base, count=1), encoding="utf-8")
        proc = dcnsim_cli("run", p, "-o", "out")
        assert_user_error(proc, *words)
        assert not (tmp_path / "out").exists()
    rate = tmp_path / "rate.toml"
    rate.write_text(re.sub(r'rate = "(\d+)Gbps"', r'rate = "\1gbps"', base, count=1), encoding="utf-8")
    assert_user_error(dcnsim_cli("validate", rate), "case-sensitive", '"Gbps"')
    binary = tmp_path / "latin1.toml"
    binary.write_bytes(base.encode("utf-8") + "# caf\xe9\n".encode("latin-1"))
    assert_user_error(dcnsim_cli("run", binary), "latin1.toml", "not UTF-8")
    assert_user_error(dcnsim_cli("run", "/dev/zero"), "not a regular file")
    assert_user_error(dcnsim_cli("run", ""), "empty")
    assert_user_error(dcnsim_cli("run", tiny_file, "--seed", "abc"), "--seed", "'abc'", "integer")
    assert_user_error(dcnsim_cli("run", tiny_file, "--variant", "x"), "no [[variant]] tables")


def test_nan_in_a_dict_scenario_names_its_key():
    from conftest import tiny as tiny_text

    import tomllib

    d = tomllib.loads(tiny_text())
    d["switch"] = {"aqm": {"kind": "ramp", "kmin": "10KB", "kmax": "20KB", "pmax": float("nan")}}
    with pytest.raises(dcnsim.ScenarioError, match=r"switch\.aqm\.pmax: invalid value nan"):
        dcnsim.run(d)


def test_a_dict_scenario_takes_numpy_numbers_and_names_the_key_of_what_it_cannot_hold():
    """A sweep built over numpy arrays gives numpy scalars: they are numbers. A value no
    scenario holds (None, bytes, a set) is an error naming its key, not a bare TypeError."""
    from conftest import tiny as tiny_text

    import numpy as np
    import tomllib

    d = tomllib.loads(tiny_text())
    d["scenario"] = dict(d.get("scenario", {}), seed=np.int64(7))
    d["switch"] = {"aqm": {"kind": "ramp", "kmin": "10KB", "kmax": "20KB", "pmax": np.float64(0.5)}}
    plain = dict(d, scenario=dict(d["scenario"], seed=7), switch={"aqm": dict(d["switch"]["aqm"], pmax=0.5)})
    a, b = dcnsim.run(d), dcnsim.run(plain)
    pd.testing.assert_frame_equal(a.flows, b.flows)
    assert a.summary["seed"] == 7, a.summary
    for bad, shown in [(None, "None"), (b"x", "b'x'"), ({1, 2}, "{1, 2}")]:
        d["switch"]["aqm"]["pmax"] = bad
        with pytest.raises(dcnsim.ScenarioError, match=rf"switch\.aqm\.pmax: invalid value {re.escape(shown)} \(\w+\), expected a number"):
            dcnsim.run(d)
    d["switch"]["aqm"]["pmax"] = np.float32("nan")
    with pytest.raises(dcnsim.ScenarioError, match=r"switch\.aqm\.pmax: invalid value nan, expected a finite number"):
        dcnsim.run(d)


def test_valid_but_suspicious_scenarios_warn(dcnsim_cli, tiny_file, tmp_path):
    """An empty workload and a buffer smaller than a packet run, but say so."""
    base = tiny_file.read_text(encoding="utf-8")
    p = tmp_path / "tinybuf.toml"
    p.write_text(base + '\n[switch]\nbuffer = { queue = "1B" }\n' if "[switch]" not in base else base, encoding="utf-8")
    proc = dcnsim_cli("run", p)
    assert proc.returncode == 0, proc.stderr
    assert "warning: switch.buffer.queue = 1 B is smaller than one full-size packet" in proc.stderr, proc.stderr
    empty = tmp_path / "empty.toml"
    empty.write_text(re.sub(r"flows = \[[^\]]*\]", "flows = []", base), encoding="utf-8")
    proc = dcnsim_cli("run", empty)
    assert "warning: workload: no flows" in proc.stderr, (proc.returncode, proc.stderr)


ABSURD = {
    "fat_tree_k1000": 'kind = "fat_tree3"\nk = 1000\nhost_link = { rate = "100Gbps", delay = "1us" }\n[[workload]]\nkind = "permutation"\nsize = "1MB"',
    "dumbbell_1e8": 'kind = "dumbbell"\nsenders = 100000000\nhost_link = { rate = "100Gbps", delay = "1us" }\nbottleneck = { rate = "100Gbps", delay = "1us" }\n[[workload]]\nkind = "permutation"\nsize = "1MB"',
    "incast_1e9_groups": 'kind = "clos2"\ntors = 4\nservers_per_tor = 8\nspines = 2\nhost_link = { rate = "100Gbps", delay = "1us" }\n[[workload]]\nkind = "incast"\nfan_in = 8\nsize = "1KB"\ngroups = 1000000000',
    "incast_every_1ps": 'kind = "clos2"\ntors = 4\nservers_per_tor = 8\nspines = 2\nhost_link = { rate = "100Gbps", delay = "1us" }\n[[workload]]\nkind = "incast"\nfan_in = 8\nsize = "1KB"\nperiod = "1ps"',
}


@pytest.mark.parametrize("case", list(ABSURD))
def test_absurd_sizes_are_refused_at_once_by_validate_and_run(dcnsim_cli, tmp_path, case):
    """Refused before anything is allocated: one error line naming the key and the memory
    estimate, exit 2, nothing written, by validate and run alike, at once (the core's
    check takes microseconds; the bound here is the interpreter's start-up)."""
    import time

    p = tmp_path / f"{case}.toml"
    p.write_text(f'[scenario]\nname = "{case}"\n[topology]\n{ABSURD[case]}\n', encoding="utf-8")
    for cmd in (["validate", p], ["run", p, "-o", "out"]):
        t0 = time.monotonic()
        proc = dcnsim_cli(*cmd)
        assert_user_error(proc, "of memory", "more than the limit")
        assert time.monotonic() - t0 < 10, "refusal took too long"  # interpreter start-up included
        assert not (tmp_path / "out").exists()
    # under an address-space cap of 4 GB the refusal is the same: nothing was allocated
    import resource
    import subprocess

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    cmd = [sys.executable, "-c", "import sys; from dcnsim.cli import main; sys.exit(main())", "run", str(p)]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=60, preexec_fn=cap)
    assert_user_error(proc, "of memory", "more than the limit")
    # the limit can be raised (here: lowered) from the command line
    small = tmp_path / "small.toml"
    small.write_text(f'[scenario]\nname = "small"\n[topology]\n{ABSURD["incast_1e9_groups"].replace("groups = 1000000000", "groups = 1")}\n', encoding="utf-8")
    assert dcnsim_cli("validate", small).returncode == 0
    assert_user_error(dcnsim_cli("validate", small, "--memory-limit", "1KB"), "DCNSIM_MEMORY_LIMIT: invalid value 1.0 KB: any run needs more", "--memory-limit")
    # a bad value given with the flag is named by the flag, not the environment variable
    proc = dcnsim_cli("validate", small, "--memory-limit", "10")
    assert_user_error(proc, '--memory-limit: invalid value "10", expected a size such as "64GB"')


def test_typos_get_a_suggestion(dcnsim_cli, tmp_path):
    """A scenario name, a variant name, a key or a value one slip away from a real one is
    named with its fix; run and compare word an unknown variant alike."""
    line = assert_user_error(dcnsim_cli("run", "seed001_simpel_small"), "did you mean 'seed001_simple_small'")
    assert "dumbbell_dctcp" not in line, "the nearest names, not the whole list"
    line = assert_user_error(dcnsim_cli("run", "nothing_like_any_name"), "neither a file nor a shipped scenario", "`dcnsim scenarios` lists them")
    assert len(line) < 200, line
    for cmd in ("run", "compare"):
        assert_user_error(dcnsim_cli(cmd, "seed001_simple_small", "--variant", "802.3"), 'variant: no variant named "802.3" (did you mean "802.3x"?), expected one of "NoFC_RED"')
    p = tmp_path / "typo.toml"
    p.write_text(tiny().replace("[transport]", "[transport]\nkindd = 1"))
    assert_user_error(dcnsim_cli("validate", p), 'transport.kindd: unknown key "kindd" (did you mean "kind"?)')


def test_persistent_incast_is_counted_over_the_run(dcnsim_cli, tmp_path):
    """A persistent incast starts a flow per sender as each ends, for the whole run: 1 B
    messages for 1000 s are ~1e9 flows. It used to count as one round, pass the memory
    check and run out of memory; the same incast for 10 ms fits."""
    p = tmp_path / "persistent.toml"
    text = (
        '[scenario]\nname = "p"\nmax_time = "1000s"\n[topology]\nkind = "dumbbell"\nsenders = 4\nreceivers = 4\n'
        'host_link = { rate = "10Gbps", delay = "1us" }\nbottleneck = { rate = "10Gbps", delay = "1us" }\n'
        '[[workload]]\nkind = "incast"\nfan_in = 7\nsize = "1B"\nperiod = "persistent"\nconnection = "new"\n'
    )
    p.write_text(text, encoding="utf-8")
    for cmd in (["validate", p], ["run", p, "-o", tmp_path / "out"]):
        assert_user_error(dcnsim_cli(*cmd, "--memory-limit", "200MB"), "workload[0].period", "of memory", "more than the limit")
    assert not (tmp_path / "out").exists()
    p.write_text(text.replace('"1000s"', '"10ms"'), encoding="utf-8")
    proc = dcnsim_cli("validate", p, "--memory-limit", "200MB")
    assert proc.returncode == 0, proc.stderr


# A corpus of malformed, absurd and edge-case scenarios: each is an edit of the tiny
# scenario (None: the text as given). Every command that reads a file must answer with
# exit 0 or 2, never a traceback or a panic, and exit 2 must write nothing.
BAD_CORPUS = {
    "empty_file": (None, ""),
    "not_toml": (None, "this is not toml ["),
    "json_garbage": (None, "{\"scenario\": 3}"),
    "binary": (None, "\x00\x01\x02"),
    "no_name": ('name = "tiny"', 'name = ""'),
    "negative_time": ('max_time = "10ms"', 'max_time = "-5us"'),
    "exponent": ('max_time = "10ms"', 'max_time = "1e3us"'),
    "bare_number": ('max_time = "10ms"', "max_time = 10"),
    "huge_time": ('max_time = "10ms"', 'max_time = "99999999999999999s"'),
    "zero_rate": ('host_link = { rate = "10Gbps"', 'host_link = { rate = "0Gbps"'),
    "lowercase_unit": ('host_link = { rate = "10Gbps"', 'host_link = { rate = "10gbps"'),
    "huge_size": ('size = "100KB", start = "0us" },\n  { src = 1', 'size = "99999999999999999999GB", start = "0us" },\n  { src = 1'),
    "src_out_of_range": ("src = 0, dst = 2", "src = 99, dst = 2"),
    "self_flow": ("src = 0, dst = 2", "src = 2, dst = 2"),
    "unknown_key": ("[transport]", "[transport]\nbogus = 1"),
    "unknown_transport": ('kind = "reno"', 'kind = "quic"'),
    "zero_senders": ("senders = 2", "senders = 0"),
    "absurd_senders": ("senders = 2", "senders = 4000000000"),
    "nan_load": ("[transport]", "[switch]\naqm = { kind = \"ramp\", kmin = \"10KB\", kmax = \"20KB\", pmax = nan }\n[transport]"),
    "bad_variant": (None, "VARIANT:bogus_key = 1"),
    "variant_empties_name": (None, "VARIANT:scenario.name = \"\""),
    "duplicate_variant": (None, "VARIANT2"),
    "tiny_buffer": ("[transport]", "[switch]\nbuffer = { queue = \"1B\" }\n[transport]"),
    "xoff_beyond_queue": ("[transport]", "[switch]\nbuffer = { queue = \"100KB\" }\npfc = { xoff = \"1MB\" }\n[transport]"),
    "dynamic_xoff_static_buffer": ("[transport]", "[switch]\npfc = { alpha = 0.5 }\n[transport]"),
    "flow_too_long_for_the_clock": ('size = "100KB", start = "0us" },\n  { src = 1', 'size = "1000000GB", start = "0us" },\n  { src = 1'),
}


def _corpus_text(case: str) -> str:
    old, new = BAD_CORPUS[case]
    base = tiny()
    if old is not None:
        assert old in base, case
        return base.replace(old, new, 1)
    if new.startswith("VARIANT:"):
        return base + f'\n[[variant]]\nname = "ok"\n\n[[variant]]\nname = "bad"\n{new[len("VARIANT:"):]}\n'
    if new == "VARIANT2":
        return base + '\n[[variant]]\nname = "a"\n\n[[variant]]\nname = "a"\n'
    return new


@pytest.mark.parametrize("case", list(BAD_CORPUS))
def test_bad_scenarios_are_answered_cleanly(tmp_path, case):
    from click.testing import CliRunner

    from dcnsim.cli import cli

    p = tmp_path / "s.toml"
    p.write_bytes(_corpus_text(case).encode("utf-8", errors="surrogateescape"))
    runner = CliRunner()
    codes = {}
    for cmd in (["validate", str(p)], ["run", str(p), "-o", str(tmp_path / "out")], ["compare", str(p), "-o", str(tmp_path / "cmp"), "-j", "1", "--no-progress"]):
        res = runner.invoke(cli, cmd, catch_exceptions=True)
        code = res.exit_code
        assert res.exception is None or isinstance(res.exception, SystemExit), (case, cmd, repr(res.exception))
        assert code in (0, 2), (case, cmd, code, res.output)
        assert "Traceback" not in res.output and "panicked" not in res.output, (case, cmd, res.output)
        codes[cmd[0]] = code
        if code == 2:
            assert res.output.strip().splitlines()[-1].startswith("error: "), (case, cmd, res.output)
            out = tmp_path / ("cmp" if cmd[0] == "compare" else "out")
            assert not out.exists(), (case, cmd)
    assert codes["validate"] == codes["run"], (case, codes)  # validate and run agree


def test_a_missing_cdf_file_says_where_it_looked(dcnsim_cli, tmp_path):
    """A relative CDF path is read from the working directory: the error names the full
    path it tried."""
    p = tmp_path / "cdf.toml"
    p.write_text(tiny().replace("[transport]", '[[workload]]\nkind = "poisson"\nsizes = "my_sizes.cdf"\nload = 0.3\n\n[transport]'))
    assert_user_error(dcnsim_cli("validate", p), 'workload[', f'"my_sizes.cdf"', f"looked for {tmp_path.resolve() / 'my_sizes.cdf'}")


def test_help_is_whole_and_agrees_with_the_readme():
    """`dcnsim --help` gives each command's first sentence whole (click cut them with
    "..."), and every option a command's --help lists is in the README's command summary
    line for it, and the other way round."""
    from click.testing import CliRunner

    from dcnsim.cli import cli

    top = CliRunner().invoke(cli, ["--help"], terminal_width=80)
    assert top.exit_code == 0 and "..." not in top.output.split("Commands:", 1)[1], top.output
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    summary = readme.split("## Command line", 1)[1].split("```", 2)[1]
    lines = {ln.split()[1]: ln for ln in summary.splitlines() if ln.startswith("dcnsim ") and not ln.startswith("dcnsim --")}
    for name, cmd in cli.commands.items():
        assert name in lines, f"README's command summary has no line for {name}"
        words = set(re.findall(r"(?<![\w-])--?[a-z][a-z-]*", lines[name]))
        options = [p for p in cmd.params if isinstance(p, click.Option) and "--help" not in p.opts]
        for p in options:  # each option is in the line, by its long or short name
            assert words & set(p.opts + p.secondary_opts), (name, p.opts, lines[name])
        known = {o for p in options for o in p.opts + p.secondary_opts}
        assert words <= known, (name, sorted(words - known))


def test_narrow_terminals_never_cut_a_bin_name_or_a_number(tmp_path, tiny_file):
    """On 80 and 60 columns the tables drop their rules rather than end a bin name or a
    number with "…", and compare's metric names wrap at words."""
    import subprocess

    code = "import sys; from dcnsim.cli import main; sys.exit(main())"
    for cols in ("80", "60"):
        env = dict(os.environ, COLUMNS=cols, PYTHONIOENCODING="utf-8")
        run = subprocess.run([sys.executable, "-c", code, "run", str(tiny_file), "--no-progress"], env=env, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        assert "…" not in run.stdout, run.stdout
        for label in ("<100KB", "100KB-1MB", "1MB-10MB", ">10MB"):
            assert label in run.stdout, (cols, run.stdout)
        res = dcnsim.run(tiny_file).fct_table().set_index("bin")
        assert f"{res.loc['all', 'mean_fct_us']:,.1f}" in run.stdout
    p = tmp_path / "v.toml"
    p.write_text(tiny_file.read_text() + '\n[[variant]]\nname = "first variant"\n\n[[variant]]\nname = "second variant"\ntopology.bottleneck = { rate = "1Gbps", delay = "1us" }\n')
    env = dict(os.environ, COLUMNS="80", PYTHONIOENCODING="utf-8")
    cmp = subprocess.run([sys.executable, "-c", code, "compare", str(p), "--no-progress", "-j", "1"], env=env, capture_output=True, text=True, timeout=120)
    assert cmp.returncode == 0, cmp.stderr
    assert "…" not in cmp.stdout, cmp.stdout
    assert "100KB-1MB" in cmp.stdout and "slowdown" in cmp.stdout
