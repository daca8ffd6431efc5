"""Atomic, deterministic output files.

Every output file is first written to a hidden temporary file in the destination
directory and then moved into place with :func:`os.replace`, so a reader never sees a
half-written file. :func:`write_files_atomic` writes a *set* of files: all temporary
files are completed before the first rename, and if anything fails while writing, every
temporary file is removed and none of the destination files is touched.

Parquet files are written deterministically: no timestamps, no index, the row order
given by the caller, so one scenario + one seed gives byte-identical files (with the same
pyarrow version).
"""

from __future__ import annotations

import json
import math
import os
import re
import secrets
from pathlib import Path
from typing import Any, Callable, Dict, Mapping, Sequence, Union

import numpy as np
import pandas as pd

PathLike = Union[str, "os.PathLike[str]"]
Writer = Callable[[str], None]

_TMP_SUFFIX = ".tmp"


def _fsync_path(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # e.g. Windows: directories cannot be opened
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


#: A temporary file of :func:`temp_path`: the writer's process id, then random hex.
_TEMP_NAME = re.compile(r"^\..+\.(\d+)\.[0-9a-f]{8}\.tmp$")


def pid_alive(pid: int) -> bool:
    """Whether a process of this id exists (one of another user's counts: it may be
    writing)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def remove_orphans(directory: PathLike, pattern: "re.Pattern[str]", folders: bool = False) -> int:
    """Remove the entries of ``directory`` whose name ``pattern`` matches with the process
    id of their owner as its first group, where that process is gone (killed by SIGKILL or
    a power cut before it could clean up): files, or with ``folders`` folders and what they
    hold. Returns how many."""
    import shutil

    n = 0
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return 0
    for e in entries:
        m = pattern.match(e.name)
        if not m or int(m.group(1)) == os.getpid() or pid_alive(int(m.group(1))):
            continue
        if folders and e.is_dir(follow_symlinks=False):
            shutil.rmtree(e.path, ignore_errors=True)
        elif not folders and e.is_file(follow_symlinks=False):
            try:
                os.unlink(e.path)
            except OSError:
                continue
        else:
            continue
        n += 1
    return n


def remove_stale_temps(directory: PathLike) -> int:
    """Remove the temporary files in ``directory`` whose writer is gone (a run killed while
    it wrote leaves its hidden ``.name.PID.XXXX.tmp``): each write into a directory clears
    what an earlier one could not. Returns how many."""
    return remove_orphans(directory, _TEMP_NAME)


def named_os_error(e: OSError, path: PathLike) -> OSError:
    """``e`` naming the file it happened on (a full disk said "[Errno 28] No space left
    on device" and not which file), or ``e`` itself where it names one."""
    if getattr(e, "filename", None):
        return e
    named = OSError(e.errno, e.strerror or str(e), str(path))
    named.__cause__ = e
    return named


def temp_path(directory: Path, name: str) -> str:
    # Like tempfile.mkstemp, but with the usual permissions (0666 & ~umask) rather than 0600,
    # so the renamed file looks like any other file the user writes.
    for _ in range(100):
        tmp = str(directory / f".{name}.{os.getpid()}.{secrets.token_hex(4)}{_TMP_SUFFIX}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        os.close(fd)
        return tmp
    raise FileExistsError(f"could not create a temporary file in {directory}")


def write_files_atomic(outdir: PathLike, writers: Mapping[str, Writer], stale: Sequence[str] = ()) -> Dict[str, Path]:
    """Write several files into ``outdir`` atomically.

    ``writers`` maps a file name to a function that writes the complete file to the path
    it is given. ``outdir`` is created if needed. Once they are in place, the files named
    in ``stale`` that this call did not write are removed: outputs an earlier save into
    the same directory left, which would pass for this one's; nothing else is touched.
    Returns the final paths.
    """
    directory = Path(outdir)
    directory.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(directory)
    temps: Dict[str, str] = {}
    try:
        for name, write in writers.items():
            tmp = temp_path(directory, name)
            temps[name] = tmp
            try:
                write(tmp)
                _fsync_path(tmp)
            except OSError as e:
                raise named_os_error(e, directory / name) from e
        final: Dict[str, Path] = {}
        for name, tmp in list(temps.items()):
            target = directory / name
            os.replace(tmp, target)
            del temps[name]
            final[name] = target
        for name in stale:
            if name not in writers and (directory / name).is_file():
                (directory / name).unlink()
        _fsync_dir(str(directory))
        return final
    finally:
        for tmp in temps.values():
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass


def write_file_atomic(path: PathLike, write: Writer) -> Path:
    """Write one file atomically (see :func:`write_files_atomic`)."""
    p = Path(path)
    return write_files_atomic(p.parent, {p.name: write})[p.name]


def parquet_writer(df: pd.DataFrame) -> Writer:
    """A writer that stores ``df`` as Parquet, deterministically (no index, no timestamps)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    def write(path: str) -> None:
        table = pa.Table.from_pandas(df, preserve_index=False)
        pq.write_table(table, path, compression="zstd")

    return write


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return _clean_float(float(obj))
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"object of type {type(obj).__name__} is not JSON serializable")


def _clean_float(x: float) -> Any:
    return None if (math.isnan(x) or math.isinf(x)) else x


def json_safe(obj: Any) -> Any:
    """Recursively replace NaN/inf by None and numpy scalars by Python ones."""
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if isinstance(obj, float):
        return _clean_float(obj)
    if isinstance(obj, (np.generic, np.ndarray)):
        return json_safe(_json_default(obj))
    if obj is pd.NA:
        return None
    return obj


def json_writer(data: Any) -> Writer:
    """A writer that stores ``data`` as pretty-printed, strictly valid JSON."""
    return text_writer(json.dumps(json_safe(data), indent=2, allow_nan=False, default=_json_default) + "\n")


def text_writer(text: str) -> Writer:
    """A writer of ``text`` (UTF-8, ``\\n`` line ends)."""
    def write(path: str) -> None:
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)

    return write


def bytes_writer(data: bytes) -> Writer:
    """A writer of ``data`` as it is."""
    def write(path: str) -> None:
        with open(path, "wb") as f:
            f.write(data)

    return write


def png_writer(fig: Any) -> Writer:
    """A writer of a matplotlib figure as PNG, byte-identical for the same figure."""
    def write(path: str) -> None:
        # No "Software" entry and no timestamp: the same figure gives the same bytes.
        fig.savefig(path, format="png", dpi=110, metadata={"Software": None})

    return write


def csv_writer(df: Any) -> Writer:
    """A writer of a DataFrame as CSV, without its index."""
    return text_writer(df.to_csv(index=False))
