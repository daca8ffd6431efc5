"""Fault injection: `dcnsim run`, `compare` and `sweep` killed at random moments (SIGKILL,
SIGTERM, SIGINT, SIGHUP), then run again to the end into the same folder. What must hold:

* no traceback or panic on stderr, whatever the signal;
* after the rerun, no hidden temporary file (`.NAME.PID.*.tmp`) in the output folders and
  no `dcnsim-sweep-PID-*` folder of a dead process in the system temp directory;
* a resumed sweep's sweep.parquet is byte-identical to an uninterrupted one's, and a run
  whose files were damaged after the kill is run again;
* a killed run leaves no visible half-written file (every file present reads).

    python bench/fault_injection.py [--rounds N] [--seed S]

Prints one line per round and a summary; exits 1 on any failure. (Issue 55's study: 79
kills; the checks here are the ones that failed then.)"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCENARIO = """
[scenario]
name = "fault"
max_time = "5ms"
[topology]
kind = "clos2"
tors = 2
servers_per_tor = 4
spines = 2
host_link = { rate = "10Gbps", delay = "1us" }
fabric_link = { rate = "10Gbps", delay = "1us" }
[switch]
aqm = { kind = "step", threshold = "30KB" }
[transport]
kind = "dctcp"
[[workload]]
kind = "poisson"
sizes = "google-rpc"
load = 0.5
[sweep]
seeds = [1, 2, 3]
"switch.aqm.threshold" = ["10KB", "30KB"]
[[variant]]
name = "DCTCP"
[[variant]]
name = "Reno"
transport.kind = "reno"
"""

SIGNALS = [signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP]
TEMP = re.compile(r"^\..+\.\d+\.[0-9a-f]{8}\.tmp$")


def dcnsim(*args: str) -> list:
    return [sys.executable, "-c", "import sys; from dcnsim.cli import console_main; sys.argv[0] = 'dcnsim'; console_main()", *args]


def leftovers(folder: Path) -> list:
    return [str(p) for p in folder.rglob("*") if TEMP.match(p.name)]


def dead_sweep_temps() -> list:
    out = []
    for p in Path(tempfile.gettempdir()).glob("dcnsim-sweep-*-*"):
        m = re.match(r"dcnsim-sweep-(\d+)-", p.name)
        if m:
            try:
                os.kill(int(m.group(1)), 0)
            except ProcessLookupError:
                out.append(str(p))
            except PermissionError:
                pass
    return out


def unreadable(folder: Path) -> list:
    """Visible output files that do not read."""
    import pyarrow.parquet as pq

    bad = []
    for p in folder.rglob("*"):
        if p.name.startswith(".") or not p.is_file():
            continue
        try:
            if p.suffix == ".parquet":
                pq.read_table(p)
            elif p.suffix == ".json":
                json.loads(p.read_text())
        except Exception as e:  # noqa: BLE001 - any failure to read is the finding
            bad.append(f"{p}: {e}")
    return bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="dcnsim-faults-"))
    scenario = work / "fault.toml"
    scenario.write_text(SCENARIO)
    reference = work / "reference"
    subprocess.run(dcnsim("sweep", str(scenario), "-o", str(reference), "-j", "2", "--no-progress"), check=True, capture_output=True)
    ref_table = (reference / "sweep.parquet").read_bytes()
    failures = []
    for k in range(args.rounds):
        cmd = rng.choice(["run", "compare", "sweep"])
        sig = rng.choice(SIGNALS)
        out = work / f"r{k}"
        argv = {"run": ["run", str(scenario), "--variant", "Reno", "-o", str(out)], "compare": ["compare", str(scenario), "-o", str(out), "-j", "2"], "sweep": ["sweep", str(scenario), "-o", str(out), "-j", "2"]}[cmd]
        p = subprocess.Popen(dcnsim(*argv, "--no-progress"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        time.sleep(rng.uniform(0.3, 3.0))
        try:
            os.killpg(p.pid, sig) if sig == signal.SIGKILL else p.send_signal(sig)
        except ProcessLookupError:
            pass
        _, err = p.communicate(timeout=120)
        found = []
        if "Traceback" in err or "panicked" in err:
            found.append(f"traceback after {sig.name}: {err.strip().splitlines()[-1] if err.strip() else ''}")
        if out.exists():
            found += [f"unreadable: {b}" for b in unreadable(out)]
        if cmd == "sweep" and out.exists() and sig == signal.SIGKILL:
            # damage one finished run: the resume must run it again
            runs = sorted((out / "runs").glob("*/flows.parquet")) if (out / "runs").exists() else []
            if runs:
                runs[0].write_bytes(runs[0].read_bytes()[:100])
        rerun = subprocess.run(dcnsim(*argv, "--no-progress"), capture_output=True, text=True, timeout=600)
        if rerun.returncode != 0:
            found.append(f"rerun failed: {rerun.stderr.strip()[-300:]}")
        found += [f"left behind: {x}" for x in leftovers(out)]
        if cmd == "sweep" and rerun.returncode == 0 and (out / "sweep.parquet").read_bytes() != ref_table:
            found.append("resumed sweep.parquet differs from the uninterrupted one")
        print(f"round {k}: {cmd} killed by {sig.name} after p.returncode={p.returncode}: {'ok' if not found else '; '.join(found)}", flush=True)
        failures += found
    found = [f"left behind: {x}" for x in dead_sweep_temps()]
    failures += found
    print(f"{args.rounds} rounds, {len(failures)} failures" + (f": {failures[:5]}" if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
