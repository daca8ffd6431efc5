"""`dcnsim report`: one self-contained HTML page per output folder (run, comparison,
sweep), written by compare and sweep by default, checked in a real headless browser."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import dcnsim
from dcnsim import report
from dcnsim import sweeps as sweep

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    base = tmp_path_factory.mktemp("report")
    run = base / "run"
    dcnsim.run("seed001_qcn_small", variant="UDP, QCN").save(run)
    cmp = base / "cmp"
    # the flagship comparison (the README's quick start), over two seeds
    dcnsim.compare("seed003_ci_2queue_small", seeds=2, jobs=2).save(cmp)
    swp = base / "sweep"
    pts = sweep.grid("seed001_simple_small", [sweep.parse_set("switch.buffer.pool=100KB,150KB")], 2, ["DRC_RED_ECN"])
    sweep.run_sweep(pts, swp, jobs=1)
    for d in (run, cmp, swp):
        report.write_report(d)
    return {"run": run, "comparison": cmp, "sweep": swp}


@pytest.mark.parametrize("kind", ["run", "comparison", "sweep"])
def test_report_is_self_contained_and_complete(folders, kind):
    page = (folders[kind] / "report.html").read_text()
    assert f"<h1>dcnsim {kind}:" in page
    for section in ("Provenance", "Results", "Plots", "Scenario"):
        assert f"<h2>{section}</h2>" in page
    assert dcnsim.__version__ in page
    # nothing fetched from elsewhere: no external src/href, images inline
    assert not re.search(r"""(src|href)\s*=\s*['"](https?:|//)""", page)
    assert "<img" in page and "data:image/png;base64," in page
    assert "<script" not in page
    # unfinished flows are called out at the top (the QCN flows run to max_time)
    if kind == "run":
        assert page.index("Attention") < page.index("Provenance")
        assert "[topology]" in page  # the scenario text
    if kind == "sweep":  # runs named by what they ran, not by their hash
        assert "switch.buffer.pool=100KB, variant DRC_RED_ECN, seed 1:" in page
        # the summary with readable names and formatted values, not sweep_summary.csv's columns
        assert "<th>mean FCT (us)</th>" in page and "<th>max switch queue (KB)</th>" in page
        assert "mean_fct_us_ci95" not in page
        assert re.search(r"<td>[\d,]+\.\d( ± [\d,]+\.\d)?</td>", page)
    if kind == "comparison":
        # the table as printed: changes as percentages, counts with thousands separators
        assert re.search(r"<td( class='(better|worse)')?>[+-]\d+\.\d%( \*| \(in noise\))?</td>", page), "no formatted change"
        # coloured as on the terminal: each change cell's class is comparison.csv's verdict
        csv = pd.read_csv(folders[kind] / "comparison.csv", keep_default_na=False)
        verdicts = [v for c in csv.columns if c.endswith(": verdict") for v in csv[c]]
        assert {"better", "worse"} & set(verdicts), verdicts
        assert page.count("class='better'") == verdicts.count("better") and page.count("class='worse'") == verdicts.count("worse")
        assert re.search(r"<td>\d{1,3}(,\d{3})+(\.\d+)?( ± [\d.,]+)?</td>", page), "no thousands separator"


def test_report_refuses_a_folder_without_outputs(tmp_path):
    with pytest.raises(FileNotFoundError, match="no dcnsim outputs"):
        report.write_report(tmp_path)
    with pytest.raises(FileNotFoundError, match="no such directory"):
        report.write_report(tmp_path / "missing")


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium package is not installed (.ci/run installs it)")
@pytest.mark.parametrize("kind", ["comparison", "sweep"])
def test_report_renders_in_headless_chromium(folders, kind, tmp_path):
    """The page loads in a real browser without console errors, and its screenshot is not
    blank."""
    shot = tmp_path / "shot.png"
    cmd = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}", "--window-size=1280,1600",
        "--enable-logging=stderr", "--v=0", (folders[kind] / "report.html").as_uri(),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert shot.is_file(), proc.stderr[-2000:]
    console = [l for l in proc.stderr.splitlines() if "CONSOLE" in l]
    assert not [l for l in console if re.search(r"error|uncaught", l, re.I)], console
    import matplotlib.image as mpimg

    px = mpimg.imread(shot)
    assert px.shape[0] >= 1000 and px.shape[1] >= 1000
    assert px[..., :3].std() > 0.05, "the screenshot is blank"
    # not only white: some dark text
    assert (px[..., :3].mean(axis=2) < 0.3).mean() > 0.005
