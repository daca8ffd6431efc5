"""The docs' numbers, rendered from results files.

A rendered block sits in a Markdown file between ``<!-- results: NAME -->`` and
``<!-- end results -->``; NAME is a renderer of :data:`dcnsim.reproduce.studies.BLOCKS`,
which reads results files through a :class:`Context` and returns the block's text. Every
block ends with the provenance of each results file it read: the command, the commit, the
date and the seeds, and, where a model change moved the study since, a visible "stale"
line. ``render`` rewrites the blocks; ``check`` fails when a block differs from what the
results render or when a study's recorded fingerprint is not today's engine's.

The statistics: mean and 95% confidence interval over seeds (Student's t); a change between
two variants is the relative change of their means, and it is significant (``*``) when the
95% CI of the paired same-seed differences excludes 0. A source's claim is judged by
:func:`judge`.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..stats import ci95
from .core import load_results, results_path, thread_counts

BLOCK = re.compile(r"(<!-- results: ([A-Za-z0-9_.:-]+) -->\n)(.*?)(<!-- end results -->)", re.S)
#: the files whose blocks are rendered, relative to the repository root
DOC_FILES = ("README.md", "docs/*.md")
#: "Reproduces" needs the measured change within this factor of the source's number.
SIZE_FACTOR = 2.0


class MissingResults(Exception):
    """A block needs a results file that does not exist yet."""


@dataclass
class Results:
    """One results file, read."""

    data: Dict[str, Any]

    @property
    def study(self) -> str:
        return self.data["study"]

    @property
    def seeds(self) -> List[int]:
        return list(self.data["seeds"])

    def variants(self, case: str) -> List[str]:
        return list(self.data["runs"][case].keys())

    def cases(self) -> List[str]:
        return list(self.data["runs"].keys())

    def values(self, case: str, variant: str, key: str) -> List[float]:
        """One metric of every seed's run, in seed order (NaN where a run lacks it)."""
        runs = self.data["runs"][case][variant]
        out = []
        for s in self.seeds:
            v = runs[str(s)].get(key)
            out.append(math.nan if v is None else float(v))
        return out

    def run(self, case: str, variant: str, seed: int) -> Dict[str, Any]:
        return self.data["runs"][case][variant][str(seed)]


@dataclass
class Context:
    """What a renderer reads results through; it remembers which files a block used."""

    root: Path
    #: draw the figures blocks name (``--render``); a check only compares their data
    write_figures: bool = False
    used: List[Results] = field(default_factory=list)
    _read: Dict[Tuple[str, str], Results] = field(default_factory=dict)

    def figure(self, name: str, data: Any, draw: Callable[[Any], Any], alt: str) -> str:
        """A figure made from results: the block holds its Markdown and a hash of the data
        it plots (so that a check sees when the data moved; PNG bytes differ between
        matplotlib versions), and ``--render`` draws it to docs/img/NAME.png."""
        digest = hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]
        if self.write_figures:
            fig = draw(data)
            path = self.root / "docs" / "img" / f"{name}.png"
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.tmp.png")
            fig.savefig(tmp, dpi=100)
            os.replace(tmp, path)
        return f"![{alt}](img/{name}.png)\n\n<!-- figure data {digest} -->"

    def results(self, study: str, scale: str) -> Results:
        key = (study, scale)
        if key not in self._read:
            p = results_path(self.root, study, scale)
            if not p.exists():
                raise MissingResults(f"{p.relative_to(self.root)} (run `dcnsim reproduce {study} --scale {scale}`)")
            self._read[key] = Results(load_results(p))
            self.used.append(self._read[key])
        return self._read[key]


def provenance(used: Sequence[Results]) -> str:
    lines = []
    for r in used:
        d = r.data
        seeds = d["seeds"]
        seed_text = f"seeds {seeds[0]}-{seeds[-1]}" if len(seeds) > 1 and seeds == list(range(seeds[0], seeds[-1] + 1)) else f"seeds {', '.join(map(str, seeds))}"
        kept = ""
        if d.get("kept"):
            by: Dict[str, List[str]] = {}
            one_case = len(d["runs"]) == 1
            for pair, made in d["kept"].items():
                case, variant = pair.split("|", 1)
                name = variant if one_case else f"{case}: {variant}" if variant else case
                by.setdefault(f"{made['commit']} ({made['date']})", []).append(f'"{name}"')
            n = sum(len(c) for c in d["runs"].values())
            kept = "; " + "; ".join(f"the runs of {len(v)} of its {n} set-ups" + (f" ({', '.join(v)})" if len(v) <= 8 else "") + f" kept from commit {k}, whose outputs today's engine leaves unchanged" for k, v in sorted(by.items()))
        threads = thread_counts(d)
        if len(threads) > 1:
            kept += f"; its runs split over {' and '.join(map(str, threads))} threads (each run's wall time is on its own count; the outputs are one thread's)"
        line = f"<sub>`{d['command']}` at commit {d['commit']} ({d['date']}, {seed_text}){kept}; results: `docs/results/{d['study']}.{d['scale']}.json`</sub>"
        if d.get("stale_since"):
            line = (
                f"**Stale: made by {d['commit']}, stale since {d['stale_since']}**: the engine's outputs for this "
                f"study have moved since these numbers were made; rerun `{d['command']}`.  \n" + line
            )
        lines.append(line)
    return "\n\n".join(lines)


def render_block(root: Path, name: str, write_figures: bool = False) -> str:
    """The text of one block (its renderer's output and the provenance of what it read);
    with ``write_figures`` the figures it names are drawn too."""
    from .studies import BLOCKS

    if name not in BLOCKS:
        raise KeyError(f"unknown results block {name!r} (known: {', '.join(sorted(BLOCKS))})")
    ctx = Context(root, write_figures)
    body = BLOCKS[name](ctx).rstrip("\n")
    return f"{body}\n\n{provenance(ctx.used)}\n"


def doc_files(root: Path) -> List[Path]:
    out: List[Path] = []
    for pattern in DOC_FILES:
        out += sorted(root.glob(pattern))
    return out


def blocks_in(text: str) -> List[Tuple[str, str]]:
    return [(m.group(2), m.group(3)) for m in BLOCK.finditer(text)]


def render(root: Path, log: Any = print) -> List[str]:
    """Rewrite every block of the docs from the results; return the problems (missing
    results) instead of failing on the first."""
    problems = []
    for path in doc_files(root):
        text = path.read_text(encoding="utf-8")
        if not BLOCK.search(text):
            continue

        def sub(m: re.Match) -> str:
            try:
                return m.group(1) + render_block(root, m.group(2), write_figures=True) + m.group(4)
            except (MissingResults, KeyError) as e:
                problems.append(f"{path.relative_to(root)}: block {m.group(2)}: missing {e}")
                return m.group(0)

        new = BLOCK.sub(sub, text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            log(f"rendered {path.relative_to(root)}")
    return problems


def check_docs(root: Path) -> List[str]:
    """Every block that differs from what its results render, or cannot be rendered."""
    problems = []
    for path in doc_files(root):
        for name, body in blocks_in(path.read_text(encoding="utf-8")):
            rel = path.relative_to(root)
            try:
                want = render_block(root, name)
            except (MissingResults, KeyError) as e:
                problems.append(f"{rel}: block {name}: {e}")
                continue
            if body != want:
                problems.append(f"{rel}: block {name} differs from what its results render (run `dcnsim reproduce --render`)")
    return problems


# --------------------------------------------------------------------------- statistics


def mean_ci(xs: Sequence[float]) -> Tuple[float, float]:
    return ci95(xs)


@dataclass(frozen=True)
class Change:
    """Variant ``b`` against ``a`` over the same seeds."""

    base: Tuple[float, float]
    other: Tuple[float, float]
    rel: float  # relative change of the means (NaN where the base mean is 0)
    significant: Optional[bool]  # the paired differences' 95% CI excludes 0 (None: < 2 seeds)


def change(a: Sequence[float], b: Sequence[float]) -> Change:
    ma, mb = mean_ci(a), mean_ci(b)
    diffs = [y - x for x, y in zip(a, b) if not (math.isnan(x) or math.isnan(y))]
    md, hd = ci95(diffs)
    sig = None if math.isnan(hd) else (abs(md) > hd)
    if len(diffs) >= 2 and hd == 0:
        sig = md != 0
    rel = (mb[0] - ma[0]) / abs(ma[0]) if ma[0] and not math.isnan(ma[0]) else math.nan
    return Change(ma, mb, rel, sig)


def judge(c: Change, source: Optional[float]) -> str:
    """The verdict on a source's claimed relative change ``source`` (-0.63 for "63%
    lower"). "reproduces": the change is significant, in the source's direction, and within
    a factor of :data:`SIZE_FACTOR` of the source's size; "direction only": significant and
    in the source's direction, another size; "not reproduced": not significant, or the other
    way. A claim of direction alone is judged by :func:`judge_direction`."""
    if source is None:
        raise ValueError("judge needs the source's number; judge_direction for a direction alone")
    if not c.significant or math.isnan(c.rel) or c.rel * source <= 0:
        return "not reproduced"
    ratio = abs(c.rel) / abs(source)
    return "reproduces" if 1 / SIZE_FACTOR <= ratio <= SIZE_FACTOR else "direction only"


def judge_direction(c: Change, sign: int) -> str:
    """The verdict on a claim of direction alone (``sign`` -1: lower, +1: higher)."""
    if not c.significant or math.isnan(c.rel) or c.rel * sign <= 0:
        return "not reproduced"
    return "reproduces (direction; no number to compare)"


def fmt_num(x: float, digits: int) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if digits == 0:
        return f"{x:,.0f}"
    return f"{x:,.{digits}f}"


def fmt_mean(m: Tuple[float, float], digits: int) -> str:
    mean, half = m
    if math.isnan(half):
        return fmt_num(mean, digits)
    return f"{fmt_num(mean, digits)} ± {fmt_num(half, digits)}"


def fmt_change(c: Change) -> str:
    if math.isnan(c.rel):
        return "n/a"
    pct = 100 * c.rel
    text = f"{pct:+.0f}%" if abs(pct) >= 1000 else f"{pct:+.1f}%"
    if c.significant is None:
        return text
    return text + (" \\*" if c.significant else " (in noise)")


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    out += ["| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(out)
