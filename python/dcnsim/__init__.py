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

import os as _os

try:
    from . import _core
except ImportError as e:  # pragma: no cover - only when the extension is not built
    raise ImportError(
        "dcnsim's compiled core (dcnsim._core) is not available; build and install the "
        "package with `pip install .` (needs a Rust toolchain)"
    ) from e

from ._core import DcnsimError, ScenarioError, SimulationError
from .sources import DcnsimWarning, validate

__version__: str = _core.__version__

#: Wireshark dissectors for the captured frames Wireshark has none for (CNM, CIM, SFC, DRC):
#: ``wireshark -X lua_script:<this path> capture.pcapng`` (docs/capture.md).
WIRESHARK_PLUGIN: str = _os.path.join(_os.path.dirname(__file__), "wireshark", "dcnsim.lua")

# The API that needs pandas is imported on first use, so that `import dcnsim` (and the
# command line's --version, --help, validate and scenarios) stays fast.
_LAZY = {
    "Result": ("api", "Result"),
    "run": ("api", "run"),
    "Comparison": ("comparison", "Comparison"),
    "compare": ("comparison", "compare"),
    "sweep": ("sweeps", "sweep"),
    "DEFAULT_FCT_BINS": ("tables", "DEFAULT_FCT_BINS"),
    "fct_table": ("tables", "fct_table"),
}


def __getattr__(name: str):  # PEP 562
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(f".{module}", __name__), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'dcnsim' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_LAZY))


__all__ = [
    "Comparison",
    "DEFAULT_FCT_BINS",
    "DcnsimError",
    "DcnsimWarning",
    "Result",
    "ScenarioError",
    "SimulationError",
    "WIRESHARK_PLUGIN",
    "__version__",
    "compare",
    "fct_table",
    "run",
    "sweep",
    "validate",
]
