"""The ``dcnsim`` command.

    dcnsim run SCENARIO [-o OUTDIR] [--seed N] [--variant NAME] [--threads N] [--progress/--no-progress]
    dcnsim compare SCENARIO [-o OUTDIR] [--jobs N] [--threads N] [--seed N] [--variant NAME ...] [--progress/--no-progress]
    dcnsim sweep SCENARIO -o OUTDIR [--set KEY=V1,V2 ...] [--seeds N] [--jobs N] [--threads N] [--variant NAME ...] [--baseline KEY=VALUE] [--cluster ray://HOST:PORT]
    dcnsim report OUTDIR
    dcnsim validate SCENARIO [--variant NAME]
    dcnsim scenarios
    dcnsim --version

SCENARIO is a path to a scenario file or the name of a shipped scenario (see
``dcnsim scenarios``). User errors print one line ``error: ...`` on stderr and exit 2.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import sys
from pathlib import Path
from typing import Any, Iterator, List, Optional, Sequence

import click

from . import _core, sources
from .sources import format_rate, format_time_ps

EXIT_USER_ERROR = 2
EXIT_SIM_ERROR = 1
EXIT_INTERRUPTED = 130

# Errors caused by what the user typed or pointed us at: one line, exit 2.
_USER_ERRORS = (_core.ScenarioError, FileNotFoundError, IsADirectoryError, PermissionError, UnicodeDecodeError, NotADirectoryError)


def _one_line(message: str) -> str:
    # every word too long to quote whole cut as the core cuts its own (an echoed value of
    # megabytes made a line of five million characters)
    parts = [p.strip() for p in str(message).splitlines() if p.strip()]
    return _core.cut_long_words(" ".join(parts)) if parts else "unknown error"


def _error(message: str) -> None:
    click.echo(f"error: {_one_line(message)}", err=True)


def _os_error_message(e: OSError) -> str:
    if e.filename is not None and e.strerror:
        return f"{e.strerror}: {e.filename}"
    return str(e)


class _SeedType(click.ParamType):
    """A seed: an integer in [0, 2^64); the error says so (click's IntRange calls a
    non-number "not a valid integer range")."""

    name = "integer"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**64:
            return value
        try:
            n = int(str(value).strip(), 10)
        except ValueError:
            n = -1
        if not 0 <= n < 2**64:
            self.fail(f"invalid value {value!r}, expected an integer in [0, 2^64)", param, ctx)
        return n


_SEED = _SeedType()


class _OutDir(click.Path):
    """A directory to write into. An empty string is refused: as a path it is the current
    directory, and `-o ""` (an unset shell variable) wrote the outputs there unasked."""

    def __init__(self) -> None:
        super().__init__(file_okay=False, path_type=Path)

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, str) and not value.strip():
            self.fail("empty, expected a directory path (. for the current directory)", param, ctx)
        return super().convert(value, param, ctx)


_OUTDIR = _OutDir()


class _Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: unwind like Ctrl-C, so that worker processes are ended
    and no output is left half-written, then exit with 128 + the signal number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_terminated(signum: int, _frame: Any) -> None:
    raise _Terminated(signum)


class _Group(click.Group):
    """A click group whose user errors are one ``error:`` line on stderr, exit code 2."""

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The command list with each command's first sentence whole: click cuts it to the
        terminal's width with "...", which left half a sentence."""
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(limit=10_000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:  # type: ignore[override]
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
            if sig is not None:
                signal.signal(sig, _raise_terminated)
        try:
            rv = super().main(*args, standalone_mode=False, **kwargs)
        except click.exceptions.Abort:
            click.echo("error: interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except _Terminated as e:
            click.echo(f"error: terminated ({signal.Signals(e.signum).name})", err=True)
            sys.exit(128 + e.signum)
        except click.ClickException as e:
            if type(e).__name__ == "NoArgsIsHelpError":  # `dcnsim` alone (click >= 8.2)
                ctx = getattr(e, "ctx", None)
                click.echo(ctx.get_help() if ctx is not None else str(e))
                sys.exit(0)
            _error(e.format_message())
            sys.exit(EXIT_USER_ERROR)
        except _USER_ERRORS as e:
            msg = _os_error_message(e) if isinstance(e, OSError) else str(e)
            _error(msg)
            sys.exit(EXIT_USER_ERROR)
        except _core.SimulationError as e:
            _error(f"simulation failed: {e}")
            sys.exit(EXIT_SIM_ERROR)
        except _core.DcnsimError as e:
            _error(str(e))
            sys.exit(EXIT_SIM_ERROR)
        except OSError as e:  # e.g. cannot write the output directory
            _error(_os_error_message(e))
            sys.exit(EXIT_SIM_ERROR)
        sys.exit(rv if isinstance(rv, int) else 0)


def _console() -> Any:
    from rich.console import Console

    console = Console()
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(width=120)
    return console


def _fmt(x: Any, digits: int = 1) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:,.{digits}f}"


def _never_cut(t: Any, wrap: Sequence[int] = ()) -> Any:
    """Never cut a cell on a narrow terminal (rich would end a bin name or a number with
    "…"): every column is at least as wide as its widest cell (the columns in ``wrap``, of
    words such as metric names, as their longest word) and its header's longest word, and
    where the bordered table would not fit the console it is drawn without rules."""
    from rich.text import Text

    def longest_word(text: str) -> int:
        return max((len(w) for w in text.split()), default=0)

    for i, col in enumerate(t.columns):
        cells = [Text.from_markup(c).plain if isinstance(c, str) else str(c) for c in col._cells]
        widest = max((longest_word(c) if i in wrap else len(c) for c in cells), default=0)
        col.min_width = max(widest, longest_word(str(col.header)))
    # rich cuts cells, then drops whole columns, when the minimum widths do not fit: the
    # rules and padding go first; a table wider still is printed uncropped
    width, n, least = _console().width, len(t.columns), sum(c.min_width or 0 for c in t.columns)
    if least + 3 * n + 1 > width:
        gap = 2 if least + 2 * n <= width else 1
        t.box, t.pad_edge, t.show_edge, t.padding = None, False, False, (0, 0, 0, gap)
    return t


def _print_table(console: Any, t: Any) -> None:
    """Print a table built by :func:`_never_cut`: never cropped at the console's edge (a
    terminal wraps a line too long rather than lose its last columns)."""
    console.print(t, crop=False)


def _fct_rich_table(table: Any, title: str) -> Any:
    from rich.table import Table

    t = Table(title=title, title_justify="left")
    t.add_column("size bin")
    t.add_column("flows", justify="right")
    t.add_column("not finished", justify="right")
    t.add_column("mean FCT (us)", justify="right")
    t.add_column("p50 (us)", justify="right")
    t.add_column("p99 (us)", justify="right")
    t.add_column("p99.9 (us)", justify="right")
    t.add_column("mean slowdown", justify="right")
    last = len(table) - 1
    for i, row in enumerate(table.itertuples(index=False)):
        t.add_row(
            str(row.bin),
            str(row.count),
            str(row.unfinished),
            _fmt(row.mean_fct_us),
            _fmt(row.p50_fct_us),
            _fmt(row.p99_fct_us),
            _fmt(row.p999_fct_us),
            _fmt(row.mean_slowdown, 2),
            end_section=(i == last - 1),
            style="bold" if i == last else None,
        )
    _never_cut(t)
    return t


def _fmt_wall(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def summary_line(summary: dict) -> str:
    """``"180/200 flows finished, end: max_time, sim time 10.000 ms, wall 1.23 s, 4.56M events/s"``."""
    eps = summary.get("events_per_s")
    return (
        f"{summary.get('flows_finished', '?')}/{summary.get('flows_total', '?')} flows finished, "
        f"end: {summary.get('end_reason', '?')}, "
        f"sim time {format_time_ps(summary.get('sim_time_ps', 0))}, "
        f"wall {_fmt_wall(summary.get('wall_time_s', 0.0))}, "
        f"{format_rate(eps) if eps else '-'} events/s"
    )


def _set_memory_limit(ctx: Any, param: Any, value: Optional[str]) -> None:
    # the core reads the limit from the environment, which compare's workers inherit; a bad
    # value is refused here, so that the error names the flag rather than that variable
    if value is not None:
        q = _core.quantity(value)
        if q is None or q[1] != "B" or q[0] <= 0:
            raise _core.ScenarioError(f'--memory-limit: invalid value "{value}", expected a size such as "64GB"')
        os.environ["DCNSIM_MEMORY_LIMIT"] = value


def _memory_limit_option(f: Any) -> Any:
    return click.option(
        "--memory-limit",
        metavar="SIZE",
        default=None,
        expose_value=False,
        is_eager=True,
        callback=_set_memory_limit,
        help="Refuse scenarios estimated to need more memory than this, e.g. 64GB "
        "[default: $DCNSIM_MEMORY_LIMIT, else half of this machine's memory].",
    )(f)


_threads_option = click.option(
    "--threads",
    type=click.IntRange(1, 1024),
    default=1,
    show_default=True,
    help="Split each run over N threads (docs/parallel.md); the results are the same at any N.",
)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(_core.__version__, "-V", "--version", prog_name="dcnsim", message="%(prog)s %(version)s")
def cli() -> None:
    """dcnsim: packet-level simulator of data-center network fabrics."""


@cli.command("run")
@_memory_limit_option
@click.argument("scenario")
@click.option(
    "-o",
    "--outdir",
    type=_OUTDIR,
    default=None,
    help="Write flows.parquet, ports.parquet and summary.json here (created if needed).",
)
@click.option("--seed", type=_SEED, default=None, help="Override scenario.seed.")
@click.option("--variant", default=None, help="Run this [[variant]] of the scenario.")
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Show a progress bar [default: when stdout is a terminal].",
)
@click.option(
    "--check-invariants",
    is_flag=True,
    default=False,
    help="Check buffer bounds at every enqueue (slower); violations make the run fail.",
)
@_threads_option
def run_cmd(
    scenario: str, outdir: Optional[Path], seed: Optional[int], variant: Optional[str], progress: Optional[bool], check_invariants: bool, threads: int
) -> None:
    """Run SCENARIO (a file or a shipped scenario name) and print its FCT table."""
    from .driver import import_in_background, simulate
    from .sources import check_seed, resolve_scenario

    mode: Any = "always" if progress is True else (False if progress is False else True)
    check_seed(seed)
    src = resolve_scenario(scenario)
    # what can be known from the scenario is said before the run, not after it
    told = sources.scenario_warnings(_core.advice(src.text, src.format, variant))
    for w in told:
        click.echo(f"warning: {w}", err=True)
    # pandas and the table code load on the other core while the core simulates
    loaded = import_in_background("dcnsim.api", "rich.console", "rich.table")
    result: Any
    if outdir is None:
        sim, t0 = simulate(src, seed=seed, variant=variant, progress=mode, check_invariants=check_invariants, threads=threads)
        loaded()
        from . import api

        result = api.result_of(sim, src, t0)
    else:
        # flows.parquet is written as the run goes (its memory stays that of the flows in flight)
        loaded()
        from . import api

        result = api.run_saved(src, outdir, seed=seed, variant=variant, progress=mode, check_invariants=check_invariants, threads=threads)
    from rich.markup import escape

    s = result.summary
    console = _console()
    if outdir is not None:
        console.print(f"wrote {escape(', '.join(str(p) for p in result.paths.values()))}", highlight=False)
    name = str(s.get("scenario", scenario))
    others = [] if s.get("variant") else _core.validate(src.text, src.format)["variants"]
    if s.get("variant"):
        name += f" / {s['variant']}"
    elif others:
        name += " / base"
    title = f"FCT by flow size: {name} (seed {s.get('seed', '?')})"
    _print_table(console, _fct_rich_table(result.fct_table(), escape(title)))
    console.print(summary_line(s), highlight=False)
    if others:
        console.print(
            f"ran the base scenario; the file's variants ({escape(', '.join(others))}) run with --variant NAME, side by side with dcnsim compare",
            highlight=False,
        )
    violations = s.get("invariant_violations") or []
    if violations:
        click.echo(f"error: {len(violations)} invariant violation(s), first: {violations[0]}", err=True)
        sys.exit(1)
    for w in [w for w in s.get("warnings") or [] if w not in told] + sources.inactive_warnings(s):
        click.echo(f"warning: {w}", err=True)
    where = " (in flows.parquet: finished=false, end_ps/fct_ps null)" if outdir is not None else ""
    line = sources.unfinished_warning(s, where)
    if line:
        click.echo(f"warning: {line}", err=True)


@cli.command("compare")
@_memory_limit_option
@click.argument("scenario")
@click.option(
    "-o",
    "--outdir",
    type=_OUTDIR,
    default=None,
    help="Write comparison.md/.csv, the plots and one folder of results per variant here.",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(1, None),
    default=None,
    help="Worker processes [default: the number of CPUs]; results do not depend on it.",
)
@click.option("--seed", type=_SEED, default=None, help="Override scenario.seed in every variant.")
@click.option("--seeds", type=click.IntRange(1, None), default=None, help="Run every variant with seeds 1..N and report means with 95% confidence intervals.")
@click.option(
    "--variant",
    "variants",
    multiple=True,
    help="Compare only these variants, in this order (repeat the option); the first is the base. [default: all, in file order]",
)
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Show a progress bar over the variants [default: when stdout is a terminal].",
)
@_threads_option
def compare_cmd(
    scenario: str,
    outdir: Optional[Path],
    jobs: Optional[int],
    seed: Optional[int],
    seeds: Optional[int],
    variants: Sequence[str],
    progress: Optional[bool],
    threads: int,
) -> None:
    """Run the [[variant]]s of SCENARIO side by side and print a comparison table."""
    from rich.markup import escape

    from .comparison import compare

    mode: Any = "always" if progress is True else (False if progress is False else True)
    told: List[str] = []
    # what compare() warns of before its runs start, printed as it is raised
    with _echo_warnings(told):
        cmp = compare(scenario, variants=list(variants) or None, seed=seed, jobs=jobs, progress=mode, seeds=seeds, threads=threads)
    console = _console()
    if outdir is not None:
        paths = cmp.save(outdir)
        from .report import write_report

        write_report(outdir)
        top = ["report.html"] + [k for k in paths if "/" not in k]
        folders = list(dict.fromkeys(k.split("/", 1)[0] + "/" for k in paths if "/" in k))
        console.print(
            f"wrote {escape(str(outdir))}: {escape(', '.join(top))}; variant folders {escape(', '.join(folders))} "
            f"({len(paths) + 1} files)",
            highlight=False,
        )
    seed_values = sorted({str(x) for x in cmp.seeds.values()})
    for name, result in cmp.results.items():
        line = summary_line(result.summary) if cmp.n_seeds == 1 else cmp.runs_text(name)
        console.print(f"[bold]{escape(name)}[/bold]: {escape(line)}", highlight=False)
    seeds_text = f"{cmp.n_seeds} seeds, mean ± 95% CI; * = the change's CI excludes 0" if cmp.n_seeds > 1 else f"seed {', '.join(seed_values)}"
    title = f"{cmp.scenario}: {len(cmp.variants)} variants ({seeds_text}), vs {cmp.base}"
    _print_table(console, _compare_rich_table(cmp, escape(title)))
    for w in cmp.warnings:
        if w not in told:
            click.echo(f"warning: {w}", err=True)
    for name, result in cmp.results.items():
        s = result.summary
        for w in s.get("warnings") or []:
            if f"{name}: {w}" not in told:
                click.echo(f"warning: {name}: {w}", err=True)
        line = sources.unfinished_warning(s)
        if line:
            click.echo(f"warning: {name}: {line}", err=True)


@contextlib.contextmanager
def _echo_warnings(told: List[str]) -> Iterator[None]:
    """The API's DcnsimWarnings printed as one `warning:` line each the moment they are
    raised (before the runs they warn of), and appended to ``told``; other warnings as
    Python shows them."""
    import warnings

    from .sources import DcnsimWarning

    with warnings.catch_warnings():
        warnings.simplefilter("always", DcnsimWarning)
        shown = warnings.showwarning

        def show(message: Any, category: Any, *args: Any, **kwargs: Any) -> None:
            if issubclass(category, DcnsimWarning):
                told.append(str(message))
                click.echo(f"warning: {message}", err=True)
            else:
                shown(message, category, *args, **kwargs)

        warnings.showwarning = show
        yield


@contextlib.contextmanager
def _quiet_warnings() -> Iterator[None]:
    """The API's DcnsimWarnings not printed by Python: the command prints them itself, as
    one `warning:` line each."""
    import warnings

    from .sources import DcnsimWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DcnsimWarning)
        yield


@cli.command("sweep")
@_memory_limit_option
@click.argument("scenario")
@click.option("-o", "--outdir", type=_OUTDIR, required=True, help="Write sweep.parquet, sweep_summary.csv, sweep.png and each run's outputs (runs/<id>/) here; a rerun skips the runs already there.")
@click.option("--set", "sets", multiple=True, metavar="KEY=V1,V2", help="Sweep a scenario key over these values (repeat for more keys); replaces the [sweep] table's entry for the key.")
@click.option("--seeds", type=click.IntRange(1, None), default=None, help="Run seeds 1..N of every point [default: [sweep] seeds, else scenario.seed].")
@click.option("-j", "--jobs", type=click.IntRange(1, None), default=None, help="Worker processes [default: the number of CPUs]; results do not depend on it.")
@click.option("--variant", "variants", multiple=True, help="Sweep only these variants (repeat the option). [default: all]")
@click.option("--progress/--no-progress", default=None, help="Show a progress bar over the runs [default: when stdout is a terminal].")
@click.option("--cluster", default=None, metavar="ray://HOST:PORT|auto", help="Run the jobs on a Ray cluster instead of local processes (pip install 'dcnsim[ray]'); the results are the same.")
@click.option("--baseline", default=None, metavar="KEY=VALUE", help="Compare every point with the one where this swept key has this value, paired by seed [default: the first value of the first swept key].")
@_threads_option
def sweep_cmd(scenario: str, outdir: Path, sets: Sequence[str], seeds: Optional[int], jobs: Optional[int], variants: Sequence[str], progress: Optional[bool], cluster: Optional[str], baseline: Optional[str], threads: int) -> None:
    """Run a grid of SCENARIO's keys x variants x seeds and collect one table."""
    from rich.markup import escape

    from . import sweeps as sweep

    points = sweep.grid(scenario, [sweep.parse_set(x) for x in sets], seeds, list(variants) or None)
    mode: Any = "always" if progress is True else (False if progress is False else True)
    with _quiet_warnings():  # printed below, once, with the table
        out = sweep.run_sweep(points, outdir, jobs=jobs, progress=mode, cluster=cluster, threads=threads, baseline=baseline)
    from .report import write_report

    write_report(outdir)
    console = _console()
    keys = [k for k, _ in points[0].values]
    distinct = "" if out["distinct"] == len(points) else f", {out['distinct']} distinct"
    console.print(
        f"wrote {escape(str(outdir))}: {len(points)} runs{distinct} ({out['ran']} run now, {out['skipped']} already there), "
        f"sweep.parquet ({len(out['table'])} rows), sweep_summary.csv, sweep.json, report.html",
        highlight=False,
    )
    s = out["summary"]
    s = s[s["bin"] == "all"]
    from rich.table import Table

    per_tag = ", all and per tag" if "tag" in s.columns else ""
    t = Table(title=escape(f"mean FCT of flows of all sizes{per_tag} (us), mean +- 95% CI over seeds; swept: {', '.join(keys) or 'nothing'}"))
    changes = "mean_fct_us_change" in s
    versus = "mean_fct_us_vs_baseline" in s
    # a scenario without [[variant]] tables has no variant to name
    named = bool(len(s)) and any(str(v) for v in s["variant"])
    vs_name = f"vs {s['baseline'].iloc[0]}" if versus and len(s) else ""
    # flows of several tags: a row per tag beside the row of all flows
    tagged = "tag" in s.columns
    for c in keys + (["variant"] if named else []) + (["flows"] if tagged else []) + ["seeds", "mean FCT (us)"] + (["vs first variant"] if changes else []) + ([vs_name] if versus else []) + ["drops"]:
        t.add_column(escape(c))

    from .stats import format_change, paired_mark

    def paired(x: float, sig: Any, seeds: int) -> str:
        return "" if x != x else paired_mark(format_change(x), (sig is True) if seeds > 1 else None)

    for _, r in s.iterrows():
        ci = r["mean_fct_us_ci95"]
        fct = f"{r['mean_fct_us']:.2f}" + ("" if ci != ci else f" +- {ci:.2f}")
        change = [paired(r["mean_fct_us_change"], r["mean_fct_us_change_ci_excludes_0"], r["seeds"])] if changes else []
        if versus:
            change.append(paired(r["mean_fct_us_vs_baseline"], r["mean_fct_us_vs_baseline_ci_excludes_0"], r["seeds"]))
        t.add_row(*[escape(str(r[k])) for k in keys], *([escape(str(r["variant"]))] if named else []), *([escape(str(r["tag"]))] if tagged else []), str(r["seeds"]), fct, *change, f"{r['drops']:.0f}")
    console.print(t)
    for w in out["warnings"]:
        click.echo(f"warning: {w}", err=True)


@cli.command("reproduce")
@click.argument("studies", nargs=-1)
@click.option("--scale", type=click.Choice(["small", "full"]), default="small", show_default=True, help="The shipped scenario (full) or its *_small twin.")
@click.option("--seeds", type=click.IntRange(1, None), default=None, help="Run seeds 1..N [default: the study's, 5].")
@click.option("-j", "--jobs", type=click.IntRange(1, None), default=None, help="Worker processes [default: the number of CPUs]; results do not depend on it.")
@_threads_option
@click.option("--all", "all_", is_flag=True, help="Every study that has this scale.")
@click.option("--list", "list_", is_flag=True, help="List the studies, their scales and costs, and their results files.")
@click.option("--render", "render_", is_flag=True, help="Rewrite the docs' results blocks from the results files.")
@click.option("--check", "check_", is_flag=True, help="Fail when a docs block differs from what its results render, or a study's recorded engine fingerprint is not today's (with study names: only theirs). Runs no study and writes nothing.")
@click.option("--mark-stale", "mark_stale_", is_flag=True, help="Mark the named studies' results stale since this commit (their tables then say so) instead of rerunning them.")
@click.option("--moved", is_flag=True, help="Update the named studies' results files: run only the set-ups (case, variant) whose outputs today's engine or metrics moved, whose scenario changed, or that are new, and keep the recorded runs of the rest (same seeds; runs of another --threads are kept, each with its own thread count, which the tables of wall time show).")
@click.option("--rerun", multiple=True, metavar="SETUP", help="With --moved: also run again this set-up (a variant, or \"case|variant\"; repeat the option for more) although its fingerprints are today's, for a model change the fingerprint runs (the small scenario at seed 1) do not reach.")
@click.option("--added-outputs", "added", default=None, metavar="NAMES", help="Keep the named studies' results (or --all's) through an engine change that only added outputs (comma-separated columns or summary keys): each set-up's seed-1 outputs without them must be what its results file recorded, else it is said and needs a rerun.")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=None, help="The repository checkout [default: the one holding the current folder].")
@click.option("--progress/--no-progress", default=None, help="Show a progress bar over the runs [default: when stdout is a terminal].")
def reproduce_cmd(studies: Sequence[str], scale: str, seeds: Optional[int], jobs: Optional[int], threads: int, all_: bool, list_: bool, render_: bool, check_: bool, mark_stale_: bool, moved: bool, rerun: Sequence[str], added: Optional[str], root: Optional[Path], progress: Optional[bool]) -> None:
    """Run a study of the source documents (or our own) on today's engine and write its
    results file under docs/results/; render the docs from the results; check them."""
    from . import reproduce as rp

    known = rp.STUDIES
    for n in studies:
        if n not in known:
            raise click.UsageError(f"unknown study {n!r}; expected one of: {', '.join(known)} (dcnsim reproduce --list)")
    base = rp.repo_root(root)
    if list_:
        for n, st in known.items():
            lines = [n, f"    {st.title}"]
            for sc in st.scales:
                p = rp.results_path(base, n, sc)
                if p.exists():
                    d = rp.core.load_results(p)
                    stale = f", stale since {d['stale_since']}" if d.get("stale_since") else ""
                    lines.append(f"    {sc}: {_fmt_cost(d.get('cpu_s'))} of CPU for {len(d['seeds'])} seeds; made by {d['commit']} on {d['date']}{stale}")
                else:
                    lines.append(f"    {sc}: about {_fmt_cost(st.cost_s.get(sc))} of CPU (estimated); no results yet")
            click.echo("\n".join(lines))
        return
    if moved and not (studies or all_):
        raise click.UsageError("--moved needs the studies to update (or --all)")
    if mark_stale_:
        if not studies:
            raise click.UsageError("--mark-stale needs the studies to mark")
        for n in studies:
            if not rp.mark_stale(base, n):
                raise click.UsageError(f"study {n!r} has no results file to mark stale")
        return
    show = progress if progress is not None else sys.stdout.isatty()
    workers = jobs or os.cpu_count() or 1
    if added is not None:
        outputs = [a.strip() for a in added.split(",") if a.strip()]
        if not outputs:
            raise click.BadParameter(f"{added!r}: expected the names of the outputs added, comma-separated (e.g. timeouts)", param_hint="--added-outputs")
        if not (studies or all_) or moved:
            raise click.UsageError("--added-outputs needs the studies to keep (or --all), and no --moved")
        keep = list(studies) or [n for n, st in known.items() if any(rp.results_path(base, n, sc).exists() for sc in st.scales)]
        try:
            problems = rp.adopt_added_outputs(base, keep, outputs, jobs=workers, progress=show, log=click.echo)
        except ValueError as e:
            raise click.UsageError(str(e)) from None
        for p in problems:
            click.echo(f"not kept: {p}", err=True)
        if problems:
            raise SystemExit(1)
        return
    names = list(studies)
    if all_:
        names = [n for n, st in known.items() if scale in st.scales]
    if check_:
        # a check never runs what it checks: `reproduce NAME --check` once reran NAME and
        # rewrote its results file before saying whether it had been current
        if moved or rerun or render_ or seeds is not None:
            raise click.UsageError("--check runs nothing: drop --moved, --rerun, --render and --seeds (run the study first, then check)")
        problems = rp.check(base, jobs=workers, progress=show, names=list(studies) or None)  # --all: every study, of any scale
        for p in problems:
            click.echo(f"stale: {p}", err=True)
        if problems:
            raise SystemExit(1)
        which = f"{', '.join(studies)}'s fingerprints are" if studies else "every study's fingerprint is"
        click.echo(f"reproductions current: every results block renders from its results, {which} today's engine's")
        return
    if names:
        for n in names:
            if scale not in known[n].scales:
                raise click.UsageError(f"study {n!r} has no --scale {scale} (it has {', '.join(known[n].scales)})")
        try:
            rp.reproduce(names, scale, base, seeds=seeds, jobs=workers, threads=threads, progress=show, log=click.echo, moved=moved,
                         rerun=list(rerun))
        except ValueError as e:
            raise click.UsageError(str(e)) from None
    if render_:
        problems = rp.render(base, log=click.echo)
        for p in problems:
            click.echo(f"warning: {p}", err=True)
    if not (names or render_):
        raise click.UsageError("name a study (or --all), or give --list, --render or --check")


def _fmt_cost(s: Optional[float]) -> str:
    if s is None:
        return "?"
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.0f} min"


@cli.command("report")
@click.argument("outdir", type=_OUTDIR)
def report_cmd(outdir: Path) -> None:
    """Write OUTDIR/report.html: one self-contained page (scenario, provenance, tables,
    plots) for the outputs of dcnsim run -o, compare -o or sweep -o."""
    from rich.markup import escape

    from .report import write_report

    path = write_report(outdir)
    _console().print(f"wrote {escape(str(path))}", highlight=False)


def _compare_rich_table(cmp: Any, title: str) -> Any:
    from rich.markup import escape
    from rich.table import Table

    t = Table(title=title, title_justify="left")
    t.add_column("group")
    t.add_column("metric")
    for name in cmp.variants:
        t.add_column(escape(name), justify="right")
    changes = cmp.change_columns()
    for col in changes.values():
        t.add_column(escape(col), justify="right")
    rows = cmp.rows()
    for i, row in enumerate(rows):
        cells = [escape(row.group), escape(row.metric)]
        cells += [escape(row.value_text(n)) for n in cmp.variants]
        for n in changes:
            text = escape(row.change_text(cmp.base, n))
            verdict = row.verdict(cmp.base, n)
            style = {"better": "green", "worse": "red"}.get(verdict or "")
            cells.append(f"[{style}]{text}[/{style}]" if style and text else text)
        last_of_group = i + 1 == len(rows) or rows[i + 1].group != row.group
        t.add_row(*cells, end_section=last_of_group)
    return _never_cut(t, wrap=(1,))


@cli.command("validate")
@_memory_limit_option
@click.argument("scenario")
@click.option("--variant", default=None, help="Also validate this [[variant]].")
def validate_cmd(scenario: str, variant: Optional[str]) -> None:
    """Parse and check SCENARIO without running it."""
    info = sources.validate(scenario, variant=variant)
    variants: Sequence[str] = info.get("variants") or []
    click.echo(
        f"ok: {info.get('name', '?')} \u2014 {info.get('hosts', '?')} hosts, "
        f"{info.get('switches', '?')} switches, variants: {', '.join(variants) if variants else 'none'}"
    )
    label = f"variant {variant!r}" if variant else ("base" if variants else None)
    lines = sources.scenario_warnings(info, label)
    for name, ws in info.get("variant_warnings") or []:
        if name != variant:
            lines += [f"variant {name!r}: {w}" for w in ws]
    for w in lines:
        click.echo(f"warning: {w}", err=True)


@cli.command("scenarios")
def scenarios_cmd() -> None:
    """List the shipped scenarios."""
    rows: List = sources.scenario_descriptions()
    if not rows:
        click.echo("no shipped scenarios found")
        return
    width = max(len(name) for name, _ in rows)
    for name, desc in rows:
        click.echo(f"{name:<{width}}  {desc}".rstrip())


def main(argv: Optional[Sequence[str]] = None) -> Any:
    """The command line, callable in-process (it ends with ``SystemExit``)."""
    return cli.main(args=list(argv) if argv is not None else None, prog_name="dcnsim")


def console_main() -> None:
    """The ``dcnsim`` command: :func:`main`, then a fast process exit. Tearing down an
    interpreter that has loaded pandas, pyarrow and matplotlib takes about 0.1 s, which
    the command line does not need: every output file is already written atomically and
    synced, and stdout and stderr are flushed here. A Ray client connection (sweep
    --cluster) gets the normal exit, so that it disconnects cleanly."""
    # a worker pool stopped by a signal leaves its semaphores to multiprocessing's resource
    # tracker, which would warn about them after our "error:" line; it frees them anyway
    # (the tracker process takes its warning options from these)
    sys.warnoptions.append("ignore:resource_tracker:UserWarning")
    try:
        main()
        code: Any = 0
    except SystemExit as e:
        code = e.code
    if isinstance(code, str):
        print(code, file=sys.stderr)
        code = 1
    elif code is None:
        code = 0
    if "ray" in sys.modules:
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more to say
            pass
    os._exit(int(code))


if __name__ == "__main__":  # pragma: no cover
    main()
