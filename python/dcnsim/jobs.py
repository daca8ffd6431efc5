"""Worker-process helpers shared by comparisons and sweeps."""

from __future__ import annotations

import concurrent.futures as cf
import os


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
