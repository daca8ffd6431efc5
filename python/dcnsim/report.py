"""``dcnsim report OUTDIR``: one self-contained HTML page for a run, a comparison or a sweep.

The page needs no network and no script: styles are inline, plots are PNGs embedded as
data URIs, tables are HTML. It carries the scenario text, the provenance (dcnsim version,
git commit when known, seeds, scenario hashes, wall time), the tables and the plots, and
calls out unfinished flows and deadlocks at the top.
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

from . import _core
from .sources import unfinished_warning

REPORT = "report.html"
_MAX_ROWS = 400


def _git_commit() -> str:
    """The commit dcnsim was built from, when known (DCNSIM_GIT_COMMIT, or the source
    checkout the package runs from)."""
    env = os.environ.get("DCNSIM_GIT_COMMIT")
    if env:
        return env
    here = Path(__file__).resolve().parent
    try:
        top = subprocess.run(["git", "-C", str(here), "rev-parse", "--show-toplevel"], capture_output=True, text=True, timeout=5)
        root = Path(top.stdout.strip()) if top.returncode == 0 else None
        # only dcnsim's own checkout (an installed package may sit inside another repository)
        if root is not None and (root / "crates" / "dcnsim-core").is_dir():
            out = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5)
            if out.returncode == 0 and out.stdout.strip():
                return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return "unknown (installed package)"


def _kind(outdir: Path) -> str:
    if (outdir / "sweep.parquet").is_file():
        return "sweep"
    if (outdir / "comparison.csv").is_file():
        return "comparison"
    if (outdir / "summary.json").is_file():
        return "run"
    if not outdir.exists():
        raise FileNotFoundError(f"{outdir}: no such directory; expected the -o folder of dcnsim run, compare or sweep")
    runs = sorted(outdir.glob("*/summary.json")) + sorted(outdir.glob("*/seed-*/summary.json"))
    if runs:
        raise FileNotFoundError(
            f"{outdir}: runs in {len(runs)} subfolders (e.g. {runs[0].parent.relative_to(outdir)}) but no comparison.csv: "
            "a comparison cut short while saving (or sweep.parquet missing, for a sweep); expected a complete folder: rerun the command that made it"
        )
    raise FileNotFoundError(f"{outdir}: no dcnsim outputs (summary.json, comparison.csv or sweep.parquet); expected the -o folder of dcnsim run, compare or sweep")


def _summaries(outdir: Path, kind: str) -> List[Tuple[str, Dict[str, Any]]]:
    """(label, summary.json) of every run in the folder."""
    if kind == "run":
        paths = [("run", outdir / "summary.json")]
    elif kind == "comparison":
        # one folder per variant, or with several seeds per variant and seed; only the
        # variants comparison.csv compares (a folder used before may hold others')
        ours = _compared_slugs(outdir)
        paths = [(str(p.parent.relative_to(outdir)), p) for p in sorted(outdir.glob("**/summary.json"))
                 if ours is None or p.relative_to(outdir).parts[0] in ours]
    else:
        # runs/ keeps every run of every sweep saved here (a later sweep reuses them): only
        # the runs sweep.parquet holds are this sweep's
        ours = _swept_run_ids(outdir)
        paths = [(_point_label(p.parent), p) for p in sorted((outdir / "runs").glob("*/summary.json"))
                 if ours is None or p.parent.name in ours]
    out = []
    for label, p in paths:
        try:
            out.append((label, json.loads(p.read_text(encoding="utf-8"))))
        except (OSError, ValueError):
            continue
    return out


def _compared_slugs(outdir: Path) -> Optional[Set[str]]:
    """The variant folders of the comparison saved in ``outdir``: comparison.csv's columns
    are group, metric, one per variant, then others, among them one verdict per variant
    after the first (`Comparison.table`). None where it cannot be read."""
    import pandas as pd

    from .comparison import _slugs

    try:
        cols = list(pd.read_csv(outdir / "comparison.csv", nrows=0).columns)
    except (OSError, ValueError):
        return None
    n = 1 + sum(c.endswith(": verdict") for c in cols[2:])
    return set(_slugs(cols[2:2 + n]).values()) if len(cols) >= 2 + n else None


def _swept_run_ids(outdir: Path) -> Optional[Set[str]]:
    import pandas as pd

    try:
        return set(pd.read_parquet(outdir / "sweep.parquet", columns=["run_id"])["run_id"].astype(str))
    except (OSError, ValueError, KeyError):
        return None


def _point_label(run: Path) -> str:
    """A sweep run named by what it ran (its swept values, variant and seed, from
    point.json), its id where that is missing."""
    try:
        m = json.loads((run / "point.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return run.name
    parts = [f"{k}={v}" for k, v in (m.get("values") or {}).items()]
    parts += [f"variant {m['variant']}"] if m.get("variant") else []
    parts += [f"seed {m['seed']}"] if m.get("seed") is not None else []
    return ", ".join(parts) or run.name


def _scenario_text(outdir: Path, kind: str) -> Optional[str]:
    for name in ("scenario.toml", "scenario.json"):
        p = outdir / name
        if p.is_file():
            return p.read_text(encoding="utf-8")
    pattern = {"comparison": "**/scenario.*", "sweep": "runs/*/scenario.*"}.get(kind)
    for p in sorted(outdir.glob(pattern))[:1] if pattern else []:
        return p.read_text(encoding="utf-8")
    return None


def _markdown_table(path: Path) -> Any:
    """The first pipe table of a Markdown file as a DataFrame of strings (cells as written,
    escaped pipes restored), or None without one."""
    import pandas as pd

    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    rows: List[List[str]] = []
    for ln in lines:
        if ln.startswith("|"):
            cells = [c.strip().replace("\\|", "|").replace("\\\\", "\\") for c in re.split(r"(?<!\\)\|", ln.strip())[1:-1]]
            rows.append(cells)
        elif rows:
            break
    if len(rows) < 2:
        return None
    return pd.DataFrame(rows[2:], columns=rows[0])


def _table(df: Any, caption: str = "", labels: bool = False, classes: Any = None) -> str:
    """An HTML table of ``df``; ``labels``: a table already formatted as printed (its
    cells shown as they are, its second column text, left-aligned); ``classes``: a frame
    of CSS classes ("better", "worse") by row position and column name."""
    rows = len(df)
    shown = df.head(_MAX_ROWS)
    note = f"<p class='note'>first {_MAX_ROWS} of {rows} rows; the full table is in the folder</p>" if rows > _MAX_ROWS else ""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in shown.columns)
    body = []
    for i, (_, r) in enumerate(shown.iterrows()):
        cells = []
        for col, v in zip(shown.columns, r.tolist()):
            cls_of = ""
            if classes is not None and col in classes.columns and i < len(classes):
                c = classes.iloc[i][col]
                cls_of = f" class='{c}'" if isinstance(c, str) and c in ("better", "worse") else ""
            if isinstance(v, str) and not labels:
                try:
                    v = float(v)
                except ValueError:
                    pass
            if isinstance(v, float):
                text = "" if v != v else (f"{v:.4g}" if abs(v) < 1e6 else f"{v:.6g}")
            else:
                text = str(v)
            cells.append(f"<td{cls_of}>{html.escape(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    cls = " class='labels'" if labels else ""
    return f"<table{cls}>{cap}<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{note}"


def _img(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f"<figure><img alt='{html.escape(path.stem)}' src='data:image/png;base64,{data}'><figcaption>{html.escape(path.name)}</figcaption></figure>"


def _run_plot(outdir: Path) -> Optional[bytes]:
    """A run's slowdown CDF, for a run folder that has no plots of its own."""
    import io

    import numpy as np
    import pandas as pd

    from .plots import figure

    # (dcnsim run -o writes rows in the order they became final)
    flows = pd.read_parquet(outdir / "flows.parquet").sort_values("flow_id", ignore_index=True)
    s = flows["slowdown"].dropna().to_numpy() if "slowdown" in flows else np.array([])
    if not len(flows):
        return None
    fig = figure(6.4, 3.6)
    ax = fig.add_subplot()
    if len(s):
        xs = np.sort(s)
        ax.plot(xs, np.arange(1, len(xs) + 1) / len(xs))
        ax.set_xscale("log")
        ax.set_xlabel("FCT slowdown")
        ax.set_ylabel("CDF of finished flows")
    else:
        # no flow finished: how far each got
        ax.bar(np.arange(len(flows)), flows["delivered_bytes"].to_numpy() / 1e6)
        ax.set_xlabel("flow")
        ax.set_ylabel("delivered (MB), none finished")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, metadata={"Software": None})
    return buf.getvalue()


_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px;color:#222;background:#fff}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}
td:first-child,th:first-child,table.labels td:nth-child(2),table.labels th:nth-child(2){text-align:left}th{background:#f0f0f0}caption{text-align:left;font-weight:bold}pre{background:#f7f7f7;padding:1em;overflow:auto;font-size:.8em}
.alert{background:#fde8e8;border:1px solid #e0a0a0;padding:.6em 1em;margin:.5em 0}.ok{background:#e8f5e8;border:1px solid #9c9;padding:.6em 1em}
img{max-width:100%}figure{margin:1em 0}.note{color:#666;font-size:.8em}
td.better{color:#176317;background:#e8f5e8}td.worse{color:#9b1c1c;background:#fde8e8}
td{white-space:nowrap}table.labels td:nth-child(2){white-space:normal}
"""


def build(outdir: Any) -> str:
    """The report page of an output folder, as HTML text."""
    import pandas as pd

    out = Path(outdir)
    kind = _kind(out)
    runs = _summaries(out, kind)
    parts: List[str] = []
    title = {"run": "run", "comparison": "comparison", "sweep": "sweep"}[kind]
    name = next((str(s.get("scenario", "")) for _, s in runs if s.get("scenario")), out.name)
    parts.append(f"<h1>dcnsim {title}: {html.escape(name)}</h1>")
    # what went wrong first
    alerts = []
    for label, s in runs:
        line = unfinished_warning(s)
        if line:
            alerts.append(f"{label}: {line}")
        if s.get("end_reason") == "deadlock":
            alerts.append(f"{label}: the run ended in a PFC deadlock")
    if alerts:
        shown = alerts[:50]
        more = f"<li>... and {len(alerts) - 50} more</li>" if len(alerts) > 50 else ""
        parts.append("<div class='alert'><b>Attention</b><ul>" + "".join(f"<li>{html.escape(a)}</li>" for a in shown) + more + "</ul></div>")
    else:
        parts.append("<div class='ok'>Every flow finished; no deadlock.</div>")
    # provenance
    seeds = sorted({str(s.get("seed")) for _, s in runs if s.get("seed") is not None})
    hashes = sorted({str(s.get("scenario_sha256"))[:16] for _, s in runs if s.get("scenario_sha256")})
    wall = sum(float(s.get("wall_time_s") or 0) for _, s in runs)
    prov = pd.DataFrame(
        [
            ("dcnsim version", _core.__version__),
            ("git commit", _git_commit()),
            ("runs", str(len(runs))),
            ("seeds", ", ".join(seeds[:40]) + (" ..." if len(seeds) > 40 else "")),
            ("scenario sha256 (first 16)", ", ".join(hashes[:10]) + (" ..." if len(hashes) > 10 else "")),
            ("wall time, all runs (s)", f"{wall:.2f}"),
        ],
        columns=["", "value"],
    )
    parts.append("<h2>Provenance</h2>" + _table(prov))
    # tables
    parts.append("<h2>Results</h2>")
    if kind == "run":
        s = runs[0][1]
        if s.get("fct"):
            parts.append(_table(pd.DataFrame(s["fct"]), "FCT by flow size"))
        keys = [k for k in ("flows_finished", "flows_total", "end_reason", "sim_time_ps", "events", "data_packets_dropped", "pfc_frames", "ecn_marks", "wall_time_s") if k in s]
        parts.append(_table(pd.DataFrame([(k, s[k]) for k in keys], columns=["summary key", "value"]), "Summary"))
    elif kind == "comparison":
        shown = _markdown_table(out / "comparison.md")
        if shown is not None:  # the formatted values (thousands, percentages), as printed
            # coloured as on the terminal, by comparison.csv's verdict columns (same rows)
            raw = pd.read_csv(out / "comparison.csv", keep_default_na=False)
            verdicts = {c[: -len(": verdict")]: raw[c] for c in raw.columns if c.endswith(": verdict")}
            classes = pd.DataFrame(verdicts) if verdicts and len(raw) == len(shown) else None
            parts.append(_table(shown, "Side by side (comparison.md; raw values in comparison.csv); green: better, red: worse", labels=True, classes=classes))
        else:
            parts.append(_table(pd.read_csv(out / "comparison.csv"), "Side by side (comparison.csv)"))
    else:
        parts.append(_table(sweep_table(pd.read_csv(out / "sweep_summary.csv")), "Mean ± 95% CI over seeds; change: against the first variant at the same point; vs KEY=VALUE: against the baseline point; * where the paired (same seed) 95% CI excludes 0; size bins where no flow (of the row's tag) finished in any run left out (every row in sweep_summary.csv)", labels=True))
    # plots
    pngs = sorted(out.glob("*.png"))
    parts.append("<h2>Plots</h2>")
    if pngs:
        parts.extend(_img(p) for p in pngs)
    elif kind == "run":
        png = _run_plot(out)
        if png:
            data = base64.b64encode(png).decode("ascii")
            parts.append(f"<figure><img alt='slowdown CDF' src='data:image/png;base64,{data}'><figcaption>FCT slowdown CDF</figcaption></figure>")
    # the scenario
    text = _scenario_text(out, kind)
    parts.append("<h2>Scenario</h2>" + (f"<pre>{html.escape(text)}</pre>" if text else "<p class='note'>no scenario file in the folder</p>"))
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>dcnsim {title}: {html.escape(name)}</title><style>{_CSS}</style></head><body>"
        + "\n".join(parts)
        + "</body></html>\n"
    )


def sweep_table(summary: Any) -> Any:
    """sweep_summary.csv for people: the swept keys, variant and bin, then each statistic as
    "mean ± CI" in its unit, with its change against the first variant beside it. A size
    bin where no flow finished at any point, variant (and tag) is left out."""
    import pandas as pd

    if "mean_fct_us" in summary.columns and "bin" in summary.columns:
        # a (tag,) bin kept where any row of it has a finished flow: a variant that finished
        # nothing there still shows as "-" beside one that did
        of = [c for c in ("tag", "bin") if c in summary.columns]
        has = summary.groupby(of, dropna=False)["mean_fct_us"].transform(lambda x: x.notna().any())
        summary = summary[(summary["bin"].astype(str) == "all") | has.astype(bool)]

    from .stats import format_change, format_value, paired_mark
    from .sweeps import METRICS

    stats = {c for c, *_ in METRICS}
    suffixes = ("_ci95", "_change", "_change_ci95", "_change_ci_excludes_0", "_vs_baseline", "_vs_baseline_ci95", "_vs_baseline_ci_excludes_0")
    known = stats | {f"{c}{s}" for c in stats for s in suffixes} | {"seeds", "baseline"}
    labels = [c for c in summary.columns if c not in known]
    if "variant" in summary.columns and not summary["variant"].fillna("").astype(str).str.len().any():
        labels.remove("variant")  # a scenario without [[variant]] tables
    rows = []
    for _, r in summary.iterrows():
        row = {("size bin" if c == "bin" else c): r[c] for c in labels}
        row["seeds"] = format_value(r.get("seeds"), "int")
        for col, name, fmt, scale in METRICS:
            if col not in summary.columns:
                continue
            value = r[col] * scale if pd.notna(r[col]) else None
            text = format_value(value, fmt)
            half = r.get(f"{col}_ci95")
            if value is not None and pd.notna(half) and half > 0:
                text += f" ± {format_value(half * scale, fmt)}"
            row[name] = text
            for suffix, label in (("_change", "change"), ("_vs_baseline", f"vs {r.get('baseline')}")):
                if f"{col}{suffix}" in summary.columns:
                    change = r[f"{col}{suffix}"]
                    several = pd.notna(r.get("seeds")) and int(r.get("seeds")) > 1
                    excludes = bool(r.get(f"{col}{suffix}_ci_excludes_0")) if several else None
                    row[f"{name}, {label}"] = paired_mark(format_change(None if pd.isna(change) else float(change)), excludes)
        rows.append(row)
    return pd.DataFrame(rows)


def write_report(outdir: Any) -> Path:
    """Write ``report.html`` into the output folder (atomically) and return its path."""
    from .io import text_writer, write_files_atomic

    text = build(outdir)
    return write_files_atomic(Path(outdir), {REPORT: text_writer(text)})[REPORT]
