"""Driving a simulation: advancing the core in chunks (Ctrl-C stays responsive, a progress
bar can refresh), and loading the modules a finished run needs while it runs.

Standard library and the compiled core only: the command line imports this before pandas,
so that ``dcnsim run`` can import the table libraries on another core while the core
simulates (it releases the GIL inside ``run_until``).
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
import time
from typing import Any, Callable, Optional, Tuple, Union

from . import _core
from .sources import ScenarioSource, format_rate, format_time_ps


class _Driver:
    """Advance a Simulation in chunks of simulated time sized to ~``target_s`` of wall time.

    Running in chunks keeps Ctrl-C responsive (the core releases the GIL only inside one
    ``run_until`` call) and lets a progress bar refresh.
    """

    MIN_CHUNK_PS = 1_000  # 1 ns
    FIRST_CHUNK_PS = 1_000_000  # 1 us

    def __init__(self, sim: Any, target_s: float, on_step: Optional[Callable[[], None]] = None) -> None:
        self.sim = sim
        self.target_s = target_s
        self.chunk_ps = self.FIRST_CHUNK_PS
        # called after each chunk (a streamed run writes its final rows)
        self.on_step = on_step
        self.memory_limit = _core.memory_limit()

    def step(self) -> None:
        sim = self.sim
        start = sim.now_ps
        target = min(start + self.chunk_ps, sim.max_time_ps)
        t0 = time.perf_counter()
        sim.run_until(target)
        elapsed = time.perf_counter() - t0
        check_resident_memory(sim, self.memory_limit)
        if self.on_step is not None:
            self.on_step()
        # Adapt: aim the next call at target_s of wall time, changing by at most 4x.
        factor = 4.0 if elapsed <= 0 else min(4.0, max(0.25, self.target_s / elapsed))
        self.chunk_ps = max(self.MIN_CHUNK_PS, int(self.chunk_ps * factor))
        if not sim.done and sim.now_ps <= start and target >= sim.max_time_ps:
            # At the hard stop and the core did not flag the end: do not spin forever.
            raise _StuckAtEnd()

    def finished(self) -> bool:
        return bool(self.sim.done)


def resident_bytes() -> Optional[int]:
    """This process's resident memory now (Linux: /proc/self/statm), or None elsewhere."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def check_resident_memory(sim: Any, limit: int) -> None:
    """Stop a run whose process has grown past the memory limit (what the estimate cannot
    bound: a host whose UDP sources outrun its link queues without end), with one line,
    rather than let it take the machine. Checked between chunks of about 0.25 s."""
    rss = resident_bytes()
    if rss is not None and rss > limit:
        raise _core.SimulationError(
            f"the run stopped at sim time {format_time_ps(sim.now_ps)}: the process holds {rss / 1e9:.2f} GB, more than the memory limit of {limit / 1e9:.2f} GB; "
            "expected a smaller or shorter scenario (a host queue without bound? transport.udp.nic_buffer bounds a UDP source's), or raise the limit "
            "(DCNSIM_MEMORY_LIMIT or --memory-limit)"
        )


class _StuckAtEnd(Exception):
    pass


def _drive(sim: Any, progress: Union[bool, str], on_step: Optional[Callable[[], None]] = None) -> None:
    show, force = progress_mode(progress)
    driver = _Driver(sim, target_s=0.1 if show else 0.25, on_step=on_step)
    try:
        if show:
            _drive_with_progress(driver, force)
        else:
            while not driver.finished():
                driver.step()
    except _StuckAtEnd:
        pass


def progress_mode(progress: Union[bool, str, None]) -> Tuple[bool, bool]:
    if progress in (False, None, "never"):
        return False, False
    if progress in ("always", "force"):
        return True, True
    if progress in (True, "auto"):
        isatty = getattr(sys.stdout, "isatty", None)
        return bool(isatty and isatty()), False
    raise ValueError(f"progress must be True, False, 'auto' or 'always', got {progress!r}")


def _drive_with_progress(driver: _Driver, force: bool) -> None:
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    sim = driver.sim
    console = Console(force_terminal=True) if force else Console()
    columns = (
        TextColumn("[bold]{task.description:<9}"),
        BarColumn(),
        TextColumn("{task.percentage:>5.1f}%"),
        TextColumn("sim {task.fields[sim_time]}"),
        TextColumn("flows {task.fields[flows]}"),
        TextColumn("{task.fields[rate]} ev/s"),
        TimeElapsedColumn(),
    )
    arrivals_end = int(sim.arrivals_end_ps)
    with Progress(*columns, console=console, refresh_per_second=10) as bar:
        task = bar.add_task(
            "arrivals" if arrivals_end > 0 else "draining",
            total=max(arrivals_end, 1),
            sim_time="0 ps",
            flows="0/0",
            rate="-",
        )
        last_t, last_events = time.perf_counter(), int(sim.events)
        while not driver.finished():
            driver.step()
            now_t, events = time.perf_counter(), int(sim.events)
            rate = (events - last_events) / (now_t - last_t) if now_t > last_t else 0.0
            last_t, last_events = now_t, events
            fields = dict(
                sim_time=format_time_ps(sim.now_ps),
                flows=f"{sim.flows_finished}/{sim.flows_total}",
                rate=format_rate(rate),
            )
            if sim.now_ps < arrivals_end:
                bar.update(task, description="arrivals", total=arrivals_end, completed=sim.now_ps, **fields)
            else:
                total = max(int(sim.flows_total), 1)
                bar.update(task, description="draining", total=total, completed=int(sim.flows_finished), **fields)
        bar.update(task, completed=bar.tasks[0].total)



def simulate(
    src: ScenarioSource,
    *,
    seed: Optional[int] = None,
    variant: Optional[str] = None,
    progress: Union[bool, str] = False,
    check_invariants: bool = False,
    threads: int = 1,
) -> Tuple[Any, float]:
    """Build and run the core simulation of ``src`` to its end: (the finished
    ``_core.Simulation``, the ``time.perf_counter()`` at its start, for the wall time)."""
    t0 = time.perf_counter()
    sim = _core.Simulation(
        src.text, src.format, seed=None if seed is None else int(seed), variant=variant, check_invariants=check_invariants, threads=check_threads(threads)
    )
    _drive(sim, progress)
    return sim, t0


def check_threads(threads: Any) -> int:
    """``threads`` as the core takes it, or a ScenarioError naming it."""
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1 or threads > 1024:
        raise _core.ScenarioError(f"threads: invalid value {threads!r}, expected an integer from 1 to 1024")
    return threads


def simulate_sim(sim: Any, progress: Union[bool, str] = False, on_step: Optional[Callable[[], None]] = None) -> None:
    """Run the core simulation ``sim`` to its end, calling ``on_step()`` between chunks."""
    _drive(sim, progress, on_step)


def import_in_background(*names: str) -> Callable[[], None]:
    """Import ``names`` in a daemon thread; the returned function waits for it (and raises
    what an import raised). While the core simulates without the GIL, the imports (pandas
    and friends, about 0.4 s) run on another core instead of before the run."""
    errors: list = []

    def work() -> None:
        try:
            for n in names:
                importlib.import_module(n)
        except BaseException as e:  # re-raised in the waiting thread
            errors.append(e)

    # Between two chunks the simulating thread needs the GIL for a moment: let the importing
    # thread hand it over after 0.2 ms rather than the default 5 ms.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(min(interval, 0.0002))
    th = threading.Thread(target=work, name="dcnsim-imports", daemon=True)
    th.start()

    def wait() -> None:
        th.join()
        sys.setswitchinterval(interval)
        if errors:
            raise errors[0]

    return wait
