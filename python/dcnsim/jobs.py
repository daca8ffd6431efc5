"""The job pool and progress bar of comparisons and sweeps: jobs run in this process or in
spawned worker processes that end with their parent, results come back as each job ends,
and a failure stops the rest."""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Hashable, Optional, Sequence, Tuple


def watch_parent(parent: int) -> None:
    """Worker initializer: end this worker as soon as the process that started it is gone
    (killed by a signal it could not handle), instead of running on as an orphan."""
    import threading
    import time

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.2)
        os._exit(1)

    threading.Thread(target=watch, name="dcnsim-parent-watch", daemon=True).start()


def abandon(pool: cf.ProcessPoolExecutor) -> None:
    """Stop a pool now (Ctrl-C, or a variant failed): cancel the queued jobs and end the
    worker processes, which may be in the middle of a long simulation."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        try:
            if proc.is_alive():
                proc.terminate()
        except (OSError, ValueError, AttributeError):
            pass
    for proc in procs:
        try:
            proc.join(timeout=5)
        except (OSError, ValueError, AttributeError, AssertionError):
            pass


def run_all(
    fn: Callable[..., Any],
    jobs: Sequence[Tuple[Hashable, Tuple[Any, ...]]],
    workers: int,
    finished: Callable[[Hashable, Any], None],
    died: Callable[[Hashable, BaseException], BaseException],
) -> None:
    """Call ``fn(*args)`` for each ``(key, args)`` of ``jobs``: in this process, in order,
    when ``workers`` <= 1, else in a pool of that many spawned processes; ``finished(key,
    outcome)`` as each ends (it may raise to stop the others). A worker that dies (the
    kernel's OOM killer, a signal) breaks the pool: ``died(key, error)`` gives the exception
    to raise instead."""
    if workers <= 1:
        for key, args in jobs:
            finished(key, fn(*args))
        return
    ctx = multiprocessing.get_context("spawn")
    pool = cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=watch_parent, initargs=(os.getpid(),))
    try:
        futures = {pool.submit(fn, *args): key for key, args in jobs}
        for fut in cf.as_completed(futures):
            key = futures[fut]
            try:
                outcome = fut.result()
            except BrokenProcessPool as e:
                raise died(key, e) from None
            finished(key, outcome)
    except BaseException:
        abandon(pool)
        raise
    pool.shutdown(wait=True, cancel_futures=True)


class Bar:
    """A rich progress bar over ``total`` jobs named ``what`` (shown when ``show``; on a
    terminal or not, ``force``), with the last job's line and the time left, or nothing."""

    def __init__(self, total: int, what: str, show: bool, force: bool) -> None:
        self.total, self.what, self.show, self.force = total, what, show, force
        self.bar: Any = None
        self.task: Any = None

    def __enter__(self) -> "Bar":
        if self.show and self.total:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            console = Console(force_terminal=True) if self.force else Console()
            columns = [TextColumn(f"[bold]{self.what}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[last]}"), TimeElapsedColumn(), TimeRemainingColumn()]
            self.bar = Progress(*columns, console=console)
            self.bar.__enter__()
            self.task = self.bar.add_task(self.what, total=self.total, last="")
        return self

    def advance(self, last: Optional[str] = None) -> None:
        if self.bar is not None:
            from rich.markup import escape

            self.bar.update(self.task, advance=1, last=escape(last or ""))

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)
