"""The registry: every study ``dcnsim reproduce`` runs and every block of the docs rendered
from their results.

A study is registered once, with its cases and its per-run metrics; a block is a function
of a :class:`~dcnsim.reproduce.render.Context` returning Markdown. Each source document's
studies and blocks live in a module of their own, ``studies_*.py``, imported below, with
the source's numbers that its claims are judged against and where the source states them.
"""

from __future__ import annotations

import functools
from typing import Callable, Dict, Tuple

from .core import Study
from .render import Context

# --------------------------------------------------------------------------- studies

STUDIES: Dict[str, Study] = {}


def register(st: Study) -> Study:
    assert st.name not in STUDIES, st.name
    STUDIES[st.name] = st
    return st



# --------------------------------------------------------------------------- blocks

BLOCKS: Dict[str, Callable[[Context], str]] = {}


def block(name: str) -> Callable[[Callable[[Context], str]], Callable[[Context], str]]:
    def deco(fn: Callable[[Context], str]) -> Callable[[Context], str]:
        assert name not in BLOCKS, name
        BLOCKS[name] = fn
        return fn

    return deco


def scaled(prefix: str, scales: Tuple[str, ...] = ("full", "small")) -> Callable[[Callable[[Context, str], str]], Callable[[Context, str], str]]:
    """Register ``fn(ctx, scale)`` as the blocks ``{prefix}_{scale}``, one per scale."""

    def deco(fn: Callable[[Context, str], str]) -> Callable[[Context, str], str]:
        for sc in scales:
            block(f"{prefix}_{sc}")(functools.partial(fn, scale=sc))
        return fn

    return deco


def _load_study_modules() -> None:
    """Import every ``studies_*.py`` of this package: each registers its studies and blocks
    (one module per source document), so that adding one touches no shared file."""
    import importlib
    import pkgutil
    from pathlib import Path

    for m in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if m.name.startswith("studies_"):
            importlib.import_module(f"{__package__}.{m.name}")


_load_study_modules()
