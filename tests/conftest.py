"""Shared fixtures for the Python end-to-end tests.

These tests exercise the installed package (``pip install '.[test]'``) with the real
compiled core: no fakes. Scenarios are small and written inline so each run takes
milliseconds.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Callable, List

import pytest

# A dumbbell: hosts 0 and 1 send 100 KB each to host 2 over one 10 Gb/s bottleneck, over
# Reno (DCTCP would need a switch that marks ECN: without one it is warned about).
TINY = """\
[scenario]
name = "tiny"
description = "2 senders, one bottleneck"
seed = 1
max_time = "{max_time}"

[topology]
kind = "dumbbell"
senders = 2
host_link = {{ rate = "10Gbps", delay = "1us" }}
bottleneck = {{ rate = "10Gbps", delay = "1us" }}

[transport]
kind = "reno"

[[workload]]
kind = "flows"
flows = [
  {{ src = 0, dst = 2, size = "100KB", start = "0us" }},
  {{ src = 1, dst = 2, size = "100KB", start = "0us" }},
]
"""

#: 2 flows x 100 KB over one 10 Gb/s bottleneck: the last byte cannot arrive before this.
TINY_MIN_MAKESPAN_PS = 2 * 100_000 * 8 * 100  # 100 ps per bit at 10 Gb/s


def tiny(max_time: str = "10ms") -> str:
    """The tiny dumbbell scenario as TOML text."""
    return TINY.format(max_time=max_time)


@pytest.fixture
def tiny_toml() -> str:
    return tiny()


@pytest.fixture
def tiny_file(tmp_path: Path) -> Path:
    p = tmp_path / "tiny.toml"
    p.write_text(tiny(), encoding="utf-8")
    return p


@pytest.fixture
def unfinished_file(tmp_path: Path) -> Path:
    """The tiny scenario cut off at 1 us: neither 100 KB flow can finish."""
    p = tmp_path / "cut.toml"
    p.write_text(tiny(max_time="1us"), encoding="utf-8")
    return p


@pytest.fixture
def dcnsim_cli(tmp_path: Path) -> Callable[..., "subprocess.CompletedProcess[str]"]:
    """Run the ``dcnsim`` command (its console-script entry point, dcnsim.cli:main) in a
    fresh interpreter with cwd = tmp_path; returns the CompletedProcess (text mode)."""

    def run(*args: str, timeout: float = 300) -> "subprocess.CompletedProcess[str]":
        cmd: List[str] = [
            sys.executable,
            "-c",
            "import sys; from dcnsim.cli import main; sys.exit(main())",
            *[str(a) for a in args],
        ]
        env = dict(os.environ, COLUMNS="200", PYTHONIOENCODING="utf-8")
        return subprocess.run(
            cmd, cwd=tmp_path, env=env, capture_output=True, text=True, encoding="utf-8", timeout=timeout
        )

    return run


def sigint_as_at_a_terminal() -> None:
    """preexec_fn for a child that the test will stop with SIGINT: a test suite run as a
    background job (``cmd &`` in a script) has SIGINT ignored, and Python then installs no
    KeyboardInterrupt handler; restore the disposition a terminal's Ctrl-C finds."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
