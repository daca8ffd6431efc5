"""dcnsim: a fast, deterministic packet-level simulator of data-center network fabrics.

Quick use::

    import dcnsim
    res = dcnsim.run("leaf_spine_dctcp", seed=1)
    print(res.fct_table())
    res.save("out/leaf_spine")

The simulator itself is the compiled Rust core, :mod:`dcnsim._core`; this package
resolves scenarios, drives runs and turns results into pandas DataFrames.
"""

from __future__ import annotations

try:
    from . import _core
except ImportError as e:  # pragma: no cover - only when the extension is not built
    raise ImportError(
        "dcnsim's compiled core (dcnsim._core) is not available; build and install the "
        "package with `pip install .` (needs a Rust toolchain)"
    ) from e

from ._core import DcnsimError, ScenarioError, SimulationError
from .api import Result, run, validate
from .compare import Comparison, compare
from .tables import DEFAULT_FCT_BINS, fct_table

__version__: str = _core.__version__

__all__ = [
    "Comparison",
    "DEFAULT_FCT_BINS",
    "DcnsimError",
    "Result",
    "ScenarioError",
    "SimulationError",
    "__version__",
    "compare",
    "fct_table",
    "run",
    "validate",
]
