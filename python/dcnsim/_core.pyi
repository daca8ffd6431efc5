"""Type stubs for the compiled bindings ``dcnsim._core`` (crates/dcnsim-py).

The bindings are deliberately thin: the Python package (``dcnsim.api``) turns the raw
column buffers returned by :meth:`Simulation.results` into pandas DataFrames.
"""

from typing import Any, Dict, List, Literal, Optional, Tuple

__version__: str

class DcnsimError(Exception):
    """Base class of every error raised by dcnsim."""

class ScenarioError(DcnsimError):
    """Invalid user input (scenario text, variant name, seed, ...).

    ``str(e)`` is a single line naming the offending key, its value and what was expected.
    TOML/JSON syntax errors are reported as ScenarioError too.
    """

class SimulationError(DcnsimError):
    """The engine failed while running a (valid) scenario."""

_Format = Literal["toml", "json"]
# (numpy dtype string, little-endian raw bytes), e.g. ("<u8", b"...").
_Column = Tuple[str, bytes]

def validate(
    text: str, format: _Format = "toml", variant: Optional[str] = None
) -> Dict[str, Any]:
    """Parse and validate a scenario without running it.

    Returns ``{"name": str, "description": str, "variants": [str], "hosts": int,
    "switches": int, "identical_variants": [[str, str]], "document_warnings": [str],
    "warnings": [str], "variant_warnings": [[str, [str]]]}``: pairs of variants, earlier
    first, that resolve to the same scenario; what would make a run read as "no effect"
    (a transport table no flow uses; a mechanism the flows cannot bring into play) for the
    document, the validated scenario and each variant. Raises :class:`ScenarioError` on
    invalid input.
    """

def cut_long_words(text: str) -> str:
    """``text`` with each word (a run without white space) longer than 120 characters cut
    to its first 80 and last 20 around the count of those left out, as every scenario
    error is."""

def memory_limit() -> int:
    """The memory limit in bytes (``DCNSIM_MEMORY_LIMIT``, else half the machine's memory):
    a scenario's estimate is held to it before the run, the process's resident memory
    while it runs. Raises :class:`ScenarioError` on a bad ``DCNSIM_MEMORY_LIMIT``."""

def memory_estimate(
    text: str, format: _Format = "toml", variant: Optional[str] = None, threads: int = 1
) -> Tuple[int, str, str]:
    """The memory a run on ``threads`` threads is estimated to need, before it starts:
    (bytes, the key that drives most of it, what it counts). The estimate bounds the
    process's peak resident memory (the interpreter and libraries included)."""

def advice(
    text: str, format: _Format = "toml", variant: Optional[str] = None
) -> Dict[str, Any]:
    """``validate``'s ``document_warnings`` and ``warnings`` for the base or ``variant``,
    and the file's ``variants``, without building the fabric (what a run is warned of
    before it starts)."""

def merged(
    text: str, format: _Format = "toml", variant: Optional[str] = None
) -> Dict[str, Any]:
    """The base scenario, or ``variant`` merged into it (its ``remove`` applied), as a dict,
    not validated. Raises :class:`ScenarioError` for unparsable text or an unknown variant.
    """

def quantity(text: str) -> Optional[Tuple[float, str]]:
    """A size, rate or duration as scenario files write them ("500KB", "10Gbps", "2us"):
    ``(value, unit)`` with the value in bytes ("B"), bit/s ("bps") or picoseconds ("ps");
    None for anything else."""

def pfc_headroom(rate_bps: int, round_trip_ps: int, mtu: int) -> int:
    """The PFC headroom in bytes the engine derives for a link of ``rate_bps`` whose round
    trip (propagation both ways and the switch latency at each end) is ``round_trip_ps``:
    the round trip at line rate, three frames of ``mtu`` bytes and a PAUSE frame."""

class Simulation:
    def __init__(
        self,
        text: str,
        format: _Format = "toml",
        seed: Optional[int] = None,
        variant: Optional[str] = None,
        check_invariants: bool = False,
        threads: int = 1,
    ) -> None:
        """Build a simulation from scenario text (TOML, or JSON with the same schema).

        ``seed`` overrides ``scenario.seed``; ``variant`` selects one ``[[variant]]``;
        ``check_invariants`` checks buffer bounds at every enqueue (listed in the summary's
        ``invariant_violations``); ``threads`` splits the run over that many threads
        (docs/parallel.md: the results are the same at any count; a run that cannot be
        split stays on one and says why in the summary's ``warnings``).
        """
    @property
    def partitions(self) -> int:
        """Partitions the run is split into (1: one thread)."""
    @property
    def now_ps(self) -> int:
        """Current simulated time in picoseconds."""
    @property
    def max_time_ps(self) -> int:
        """Hard stop of the run in picoseconds."""
    @property
    def arrivals_end_ps(self) -> int:
        """Simulated time at which new flow arrivals stop (progress hint)."""
    @property
    def events(self) -> int:
        """Events processed so far."""
    @property
    def tags(self) -> List[str]:
        """The flows table's tag names (its ``tag`` column's codes index them)."""
    def stream_flows(self) -> None:
        """Hand out finished flows' rows as they become final (:meth:`take_flows`) instead
        of keeping them to the end; call before running."""
    def take_flows(self) -> Optional[Dict[str, _Column]]:
        """The flows table's rows that became final since the last call (a flow finished
        with no packet of it left in the network), each look's rows in id order, or None;
        :meth:`results` then holds only the others. A run split over threads hands out the
        same rows in the same order."""
    @property
    def flows_total(self) -> int:
        """Flows created so far (persistent workloads keep creating flows)."""
    @property
    def flows_finished(self) -> int:
        """Flows completed so far."""
    @property
    def done(self) -> bool:
        """True once the run has ended (all flows finished, max_time reached, or deadlock)."""
    def run_until(self, t_ps: int) -> None:
        """Advance the simulation to ``min(t_ps, end)``. Releases the GIL."""
    def results(self) -> Dict[str, Any]:
        """Finalize the run at ``now_ps`` and return its raw results.

        ``{"flows": {column: (dtype, bytes)}, "ports": {column: (dtype, bytes)},
        "queues": {column: (dtype, bytes)}, "tags": [str], "nodes": [str], "summary": {...}}``;
        "queues" (sampled queue-depth histograms) has no columns unless the scenario sets
        ``metrics.queue_sample``.
        """
