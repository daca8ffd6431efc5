"""`dcnsim reproduce`: studies run into results files, docs blocks rendered from them, and
the check that catches a stale table or a study whose engine fingerprint moved (issue 53).

The pipeline is exercised end to end on a throw-away checkout (a temporary folder with
docs/ and python/dcnsim/) with a study registered by the test: the lossy seed 003 study
cut to 3 ms, run in this process (jobs=1) so that the test's study is known to the runner.
The real docs are checked by `dcnsim reproduce --check` in .ci/run.
"""

from __future__ import annotations

import copy
import json
import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from dcnsim.reproduce import BLOCKS, STUDIES, Case, Study, adopt_added_outputs, check, mark_stale, render, reproduce
from dcnsim.reproduce.core import FORMAT, added_outputs_job, fingerprint_jobs, load_results, results_path, write_results
from dcnsim.reproduce.metrics import ci_metrics, fct_metrics, offered_load
from dcnsim.reproduce.render import change, judge, judge_direction
from dcnsim.reproduce.tables import Row, detail_table

NAME = "test_lossy_short"


def short(sc):
    """The lossy study's small scenario cut to 3 ms (1 ms of arrivals)."""
    sc = copy.deepcopy(sc)
    sc["scenario"]["max_time"] = "3ms"
    sc["scenario"]["arrivals_for"] = "1ms"
    return sc


def short_by_tor(sc):
    sc = short(sc)
    sc["topology"]["placement"] = "by_tor"
    return sc


@pytest.fixture()
def study():
    st = Study(name=NAME, title="test", scenario="seed003_lossy", metrics=ci_metrics,
               cases=(Case("short", short), Case("by_tor", short_by_tor, ("CI",))), scales=("small",), seeds=2)
    STUDIES[NAME] = st

    def table(ctx):
        res = ctx.results(NAME, "small")
        return detail_table(res, "short", "without CI", ["CI"], [Row("mice mean FCT (us)", "bg.<100KB.mean_us", 2),
                                                                 Row("data packet loss (%)", "loss_pct", 3)])

    BLOCKS[f"{NAME}:table"] = table
    yield st
    del STUDIES[NAME]
    del BLOCKS[f"{NAME}:table"]


@pytest.fixture()
def checkout(tmp_path: Path) -> Path:
    (tmp_path / "python" / "dcnsim").mkdir(parents=True)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text(
        f"# Page\n\nBefore.\n\n<!-- results: {NAME}:table -->\n<!-- end results -->\n\nAfter.\n", encoding="utf-8")
    return tmp_path


def test_reproduce_writes_every_run_with_provenance_and_renders(study, checkout, monkeypatch):
    monkeypatch.setenv("DCNSIM_COMMIT", "abc1234")
    [path] = reproduce([NAME], "small", checkout, seeds=2, jobs=1, log=lambda _: None)
    assert path == results_path(checkout, NAME, "small")
    data = load_results(path)
    assert data["seeds"] == [1, 2] and data["scale"] == "small" and data["commit"] == "abc1234"
    assert data["command"] == f"dcnsim reproduce {NAME} --scale small --seeds 2"
    assert set(data["runs"]) == {"short", "by_tor"}
    assert set(data["runs"]["short"]) == {"without CI", "CI"} and set(data["runs"]["by_tor"]) == {"CI"}
    # one fingerprint per (case, variant), and two seeds of every run
    assert set(data["fingerprint"]) == {"short|without CI", "short|CI", "by_tor|CI"}
    for case in data["runs"].values():
        for runs in case.values():
            assert set(runs) == {"1", "2"}
    r = data["runs"]["short"]["CI"]["1"]
    assert r["sim_time_ms"] == pytest.approx(3.0, abs=0.01) and r["_events"] > 0
    # the seeds draw different workloads
    assert data["runs"]["short"]["CI"]["1"]["flows_hash"] != data["runs"]["short"]["CI"]["2"]["flows_hash"]
    # the fingerprint is the output of seed 1 of the case: recomputing it gives the same
    assert check(checkout) == [f"docs/page.md: block {NAME}:table differs from what its results render (run `dcnsim reproduce --render`)"]
    assert render(checkout, log=lambda _: None) == []
    text = (checkout / "docs" / "page.md").read_text(encoding="utf-8")
    assert "| mice mean FCT (us) |" in text and "at commit abc1234" in text and text.endswith("After.\n")
    assert check(checkout) == []


def test_check_catches_an_edited_table_and_a_moved_fingerprint(study, checkout):
    reproduce([NAME], "small", checkout, seeds=2, jobs=1, log=lambda _: None)
    render(checkout, log=lambda _: None)
    page = checkout / "docs" / "page.md"
    good = page.read_text(encoding="utf-8")
    page.write_text(good.replace("| data packet loss (%) |", "| data packet loss (%) | 9 |"), encoding="utf-8")
    [problem] = check(checkout)
    assert "block test_lossy_short:table differs" in problem
    page.write_text(good, encoding="utf-8")

    # a model change: today's outputs no longer match what the results recorded
    path = results_path(checkout, NAME, "small")
    data = load_results(path)
    data["fingerprint"]["short|CI"] = "0000000000000000"
    write_results(path, data)
    [problem] = check(checkout)
    assert "today's engine gives other outputs for short|CI" in problem and "--mark-stale" in problem

    # marked stale, the check passes once the table says so where a reader sees it
    mark_stale(checkout, NAME, commit="def5678", log=lambda _: None)
    problems = check(checkout)
    assert problems == [f"docs/page.md: block {NAME}:table differs from what its results render (run `dcnsim reproduce --render`)"]
    render(checkout, log=lambda _: None)
    assert check(checkout) == []
    assert "**Stale: made by" in page.read_text(encoding="utf-8") and "stale since def5678" in page.read_text(encoding="utf-8")


def test_moved_reruns_only_the_set_ups_that_moved_and_says_what_it_kept(study, checkout, monkeypatch):
    """`--moved`: a set-up whose recorded fingerprint is not today's is run again; the
    others keep their recorded runs (and say from which commit); a file of other seeds is
    refused, and a changed scenario is caught by the check even where the outputs agree."""
    monkeypatch.setenv("DCNSIM_COMMIT", "aaa1111")
    reproduce([NAME], "small", checkout, seeds=1, jobs=1, log=lambda _: None)
    path = results_path(checkout, NAME, "small")
    data = load_results(path)
    truth = data["runs"]["short"]["CI"]["1"]
    assert set(data["inputs"]) == {"short|without CI", "short|CI", "by_tor|CI"}
    # a model change that moved short|CI only (a stand-in: its fingerprint is not today's),
    # and marks on the runs to see which are kept
    data["fingerprint"]["short|CI"] = "0000000000000000"
    data["runs"]["short"]["CI"]["1"] = {**truth, "loss_pct": -1.0}
    data["runs"]["short"]["without CI"]["1"]["loss_pct"] = -2.0
    write_results(path, data)

    monkeypatch.setenv("DCNSIM_COMMIT", "bbb2222")
    said = []
    reproduce([NAME], "small", checkout, seeds=1, jobs=1, log=said.append, moved=True)
    new = load_results(path)
    assert new["runs"]["short"]["CI"]["1"]["loss_pct"] == truth["loss_pct"]  # run again
    assert new["runs"]["short"]["without CI"]["1"]["loss_pct"] == -2.0  # kept as recorded
    assert new["commit"] == "bbb2222" and new["stale_since"] is None
    assert new["kept"] == {"short|without CI": {"commit": "aaa1111", "date": data["date"]}, "by_tor|CI": {"commit": "aaa1111", "date": data["date"]}}
    assert new["fingerprint"] == {k: v for k, v in load_results(path)["fingerprint"].items()} and new["fingerprint"]["short|CI"] != "0000000000000000"
    assert any("2 set-ups unchanged" in line for line in said)
    render(checkout, log=lambda _: None)
    assert check(checkout) == []
    text = (checkout / "docs" / "page.md").read_text(encoding="utf-8")
    assert "at commit bbb2222" in text and "the runs of 2 of its 3 set-ups (\"by_tor: CI\", \"short: without CI\") kept from commit aaa1111" in text

    # a second update keeps the first commit of what it keeps
    monkeypatch.setenv("DCNSIM_COMMIT", "ccc3333")
    reproduce([NAME], "small", checkout, seeds=1, jobs=1, log=lambda _: None, moved=True)
    again = load_results(path)
    assert again["kept"]["by_tor|CI"]["commit"] == "aaa1111" and again["kept"]["short|CI"]["commit"] == "bbb2222"

    with pytest.raises(ValueError, match="made with seeds 1-1, not seeds 1-2"):
        reproduce([NAME], "small", checkout, seeds=2, jobs=1, log=lambda _: None, moved=True)

    # the scenario of a set-up changed where the fingerprint cannot see it (e.g. the full
    # scale, which is not fingerprinted): the check names it
    render(checkout, log=lambda _: None)
    assert check(checkout) == []
    again["inputs"]["by_tor|CI"] = "ffffffffffffffff"
    write_results(path, again)
    [problem] = check(checkout)
    assert "small scenario of by_tor|CI has changed" in problem and "--moved" in problem


def test_a_stopped_call_resumes_from_the_runs_it_finished(study, checkout, monkeypatch):
    """A call stopped after some runs (here: its third run raises, as a killed worker or
    the OOM killer would end it) leaves them in a journal beside the results file; the
    same call again takes them and runs the rest, and its results file is the one a call
    that was never stopped writes. A journal of another commit is not taken."""
    from dcnsim.reproduce import runner

    monkeypatch.setenv("DCNSIM_COMMIT", "aaa1111")
    reproduce([NAME], "small", checkout, seeds=2, jobs=1, log=lambda _: None)
    path = results_path(checkout, NAME, "small")
    whole = load_results(path)
    path.unlink()

    real, calls = runner.run_job, []

    def stops_at_the_third(*args):
        calls.append(args)
        if len(calls) == 3:
            raise RuntimeError("killed")
        return real(*args)

    monkeypatch.setattr(runner, "run_job", stops_at_the_third)
    with pytest.raises(RuntimeError, match="killed"):
        reproduce([NAME], "small", checkout, seeds=2, jobs=1, log=lambda _: None)
    journal = path.with_name(path.name + ".runs")
    assert not path.exists() and len(journal.read_text().splitlines()) == 1 + 2
    journaled = runner.Journal(path, json.loads(journal.read_text().splitlines()[0])).runs
    assert len(journaled) == 2
    monkeypatch.setattr(runner, "run_job", real)

    # another commit does not take them (and its first run replaces the journal)
    monkeypatch.setenv("DCNSIM_COMMIT", "bbb2222")
    assert runner.Journal(path, {"commit": "bbb2222"}).runs == {}
    monkeypatch.setenv("DCNSIM_COMMIT", "aaa1111")
    said, ran = [], []
    monkeypatch.setattr(runner, "run_job", lambda *a: ran.append(a) or real(*a))
    reproduce([NAME], "small", checkout, seeds=2, jobs=1, log=said.append)
    assert any(line.startswith("resumed 2 runs") for line in said), said
    assert len(ran) == 6 - 2 and not journal.exists()
    again = load_results(path)

    def outcomes(runs):  # what the runs gave, not how long they took
        return {c: {v: {sd: {k: x for k, x in r.items() if k not in ("_wall_s", "_cpu_s")} for sd, r in by.items()} for v, by in vs.items()} for c, vs in runs.items()}

    assert outcomes(again["runs"]) == outcomes(whole["runs"]) and again["fingerprint"] == whole["fingerprint"]
    # the two resumed runs are the stopped call's, wall times included
    for (c, v, sd), r in journaled.items():
        assert again["runs"][c][v][str(sd)] == r


def test_rerun_runs_named_set_ups_again_although_their_fingerprints_are_todays(study, checkout, monkeypatch):
    """`--moved --rerun SETUP`: a model change the fingerprint runs do not reach; the named
    set-up (a variant, or case|variant) is run again, the others kept; a name that is not
    a set-up is refused naming it, and --rerun without --moved too."""
    monkeypatch.setenv("DCNSIM_COMMIT", "aaa1111")
    reproduce([NAME], "small", checkout, seeds=1, jobs=1, log=lambda _: None)
    path = results_path(checkout, NAME, "small")
    data = load_results(path)
    truth = data["runs"]["short"]["without CI"]["1"]["loss_pct"]
    for case, variant in (("short", "without CI"), ("short", "CI"), ("by_tor", "CI")):
        data["runs"][case][variant]["1"]["loss_pct"] = -1.0  # marks: which runs are kept
    write_results(path, data)
    monkeypatch.setenv("DCNSIM_COMMIT", "bbb2222")
    reproduce([NAME], "small", checkout, seeds=1, jobs=1, log=lambda _: None, moved=True, rerun=["without CI", "by_tor|CI"])
    new = load_results(path)
    assert new["runs"]["short"]["without CI"]["1"]["loss_pct"] == truth  # by its variant
    assert new["runs"]["by_tor"]["CI"]["1"]["loss_pct"] != -1.0  # by case|variant
    assert new["runs"]["short"]["CI"]["1"]["loss_pct"] == -1.0  # not named: kept
    assert set(new["kept"]) == {"short|CI"}
    with pytest.raises(ValueError, match=r"--rerun: invalid value 'no such', expected a variant"):
        reproduce([NAME], "small", checkout, seeds=1, jobs=1, log=lambda _: None, moved=True, rerun=["no such"])
    with pytest.raises(ValueError, match="add --moved"):
        reproduce([NAME], "small", checkout, seeds=1, jobs=1, log=lambda _: None, rerun=["CI"])


def test_moved_on_another_thread_count_keeps_each_runs_own_count(study, checkout, monkeypatch):
    """`--moved --threads N` on a file made on one thread: the moved set-up runs on N
    threads with the same outputs, the kept runs say they were one thread's, the CPU cost
    counts each run's threads, and the provenance says the file mixes thread counts."""
    monkeypatch.setenv("DCNSIM_COMMIT", "aaa1111")
    reproduce([NAME], "small", checkout, seeds=1, jobs=1, log=lambda _: None)
    path = results_path(checkout, NAME, "small")
    data = load_results(path)
    one = data["runs"]["short"]["CI"]["1"]
    for v in data["runs"].values():  # as files made before runs recorded their threads
        for runs in v.values():
            for r in runs.values():
                r.pop("_threads", None)
    data["fingerprint"]["short|CI"] = "0000000000000000"
    write_results(path, data)
    monkeypatch.setenv("DCNSIM_COMMIT", "bbb2222")
    reproduce([NAME], "small", checkout, seeds=1, jobs=1, threads=2, log=lambda _: None, moved=True)
    new = load_results(path)
    two = new["runs"]["short"]["CI"]["1"]
    assert two["_threads"] == 2 and new["runs"]["short"]["without CI"]["1"]["_threads"] == 1
    assert {k: v for k, v in two.items() if not k.startswith("_")} == {k: v for k, v in one.items() if not k.startswith("_")}
    assert two["_events"] == one["_events"]
    walls = {(c, v): r["1"]["_wall_s"] * r["1"]["_threads"] for c, vs in new["runs"].items() for v, r in vs.items()}
    assert new["cpu_s"] == pytest.approx(sum(walls.values()), abs=0.2)
    render(checkout, log=lambda _: None)
    assert "its runs split over 1 and 2 threads" in (checkout / "docs" / "page.md").read_text(encoding="utf-8")


def test_added_outputs_keep_results_only_where_nothing_else_moved(study, checkout, monkeypatch):
    """`--added-outputs`: results made by an engine that lacked an output (here: a file whose
    fingerprints are today's run hashed without `timeouts`, and without the `s.timeouts`
    the study's metrics take from it) are kept, with today's fingerprints and a record of
    the change, their runs and commit untouched; a file where something else moved is
    left as it was and said, by set-up."""
    monkeypatch.setenv("DCNSIM_COMMIT", "aaa1111")
    reproduce([NAME], "small", checkout, seeds=1, jobs=1, log=lambda _: None)
    render(checkout, log=lambda _: None)
    path = results_path(checkout, NAME, "small")
    today = load_results(path)
    hashes = {f"{c}|{v}": added_outputs_job(NAME, c, v, ("timeouts",)) for c, v in fingerprint_jobs(study)}
    assert all(h[0] != h[1] and h[2] != h[3] for h in hashes.values()), "timeouts is among the outputs and the metrics"
    older = copy.deepcopy(today)
    older["fingerprint"] = {k: h[1] for k, h in hashes.items()}
    older["metrics_fingerprint"] = {k: h[3] for k, h in hashes.items()}
    write_results(path, older)
    assert "today's engine gives other outputs" in check(checkout)[0]

    # an output that does not explain the difference keeps nothing
    [problem] = adopt_added_outputs(checkout, [NAME], ["no_such_output"], log=lambda _: None)
    assert "without no_such_output today's engine still gives other outputs for by_tor|CI, short|CI, short|without CI" in problem
    assert load_results(path) == older

    monkeypatch.setenv("DCNSIM_COMMIT", "bbb2222")
    said = []
    assert adopt_added_outputs(checkout, [NAME], ["timeouts"], log=said.append) == []
    kept = load_results(path)
    assert kept["fingerprint"] == today["fingerprint"] and kept["metrics_fingerprint"] == today["metrics_fingerprint"]
    assert kept["runs"] == older["runs"] and kept["commit"] == "aaa1111"
    assert kept["outputs_added"] == [{"since": "bbb2222", "outputs": ["timeouts"]}]
    assert any("kept" in line and "timeouts" in line for line in said)
    assert check(checkout) == []

    # one set-up moved beyond the added output: the file is left as it was
    older["fingerprint"]["short|CI"] = "0000000000000000"
    write_results(path, older)
    [problem] = adopt_added_outputs(checkout, [NAME], ["timeouts"], log=lambda _: None)
    assert "still gives other outputs for short|CI:" in problem and "rerun" in problem
    assert load_results(path) == older


def test_check_reports_missing_results_and_unknown_studies(study, checkout):
    [problem] = check(checkout)
    assert f"{NAME}.small.json" in problem and f"dcnsim reproduce {NAME} --scale small" in problem
    stray = checkout / "docs" / "results" / "nobody.small.json"
    stray.parent.mkdir(parents=True, exist_ok=True)
    stray.write_text(json.dumps({"format": FORMAT, "study": "nobody"}), encoding="utf-8")
    assert any("no study named 'nobody'" in p for p in check(checkout))
    # a file of an older format (an older fingerprint hash) is named, not compared
    stray.write_text(json.dumps({"format": FORMAT - 1, "study": NAME}), encoding="utf-8")
    assert any(f"results format {FORMAT - 1}, expected {FORMAT}" in p for p in check(checkout))


def test_verdict_rule():
    sig_big = change([10, 11, 12, 10.5], [3, 3.2, 3.1, 3.3])  # about -71%, significant
    assert sig_big.significant and sig_big.rel == pytest.approx(-0.71, abs=0.01)
    assert judge(sig_big, -0.63) == "reproduces"
    assert judge(sig_big, -0.30) == "direction only"  # more than twice the source's size
    assert judge(sig_big, +0.30) == "not reproduced"  # the other way
    noise = change([10, 20, 15, 12], [12, 14, 18, 11])
    assert noise.significant is False and judge(noise, -0.2) == "not reproduced"
    assert judge_direction(sig_big, -1).startswith("reproduces") and judge_direction(sig_big, +1) == "not reproduced"
    # paired: a small change in every seed is significant although the seeds spread widely
    paired = change([100, 200, 300], [99, 198.9, 299.1])
    assert paired.significant is True and paired.rel == pytest.approx(-0.005)
    assert change([100, 200, 300], [99, 198, 297]).significant is False  # differences -1, -2, -3: t's CI holds 0
    one = change([1.0], [2.0])
    assert one.significant is None and judge(one, 1.0) == "not reproduced"


def test_censored_fct_counts_unfinished_flows_at_the_end_of_the_run():
    flows = pd.DataFrame({
        "size_bytes": [50_000, 50_000, 20_000_000, 20_000_000],
        "finished": [True, True, True, False],
        "fct_ps": pd.array([2_000_000, 4_000_000, 10_000_000_000, None], dtype="Int64"),
        "start_ps": [0, 0, 0, 30_000_000_000],
        "slowdown": [1.0, 2.0, 1.5, math.nan],
    })
    m = fct_metrics(flows, 50_000_000_000, "x.")
    assert m["x.<100KB.mean_us"] == pytest.approx(3.0) and m["x.<100KB.unfinished"] == 0
    assert m["x.>10MB.mean_us"] == pytest.approx(10_000.0)  # the finished one
    assert m["x.>10MB.censored_us"] == pytest.approx((10_000 + 20_000) / 2)  # 50 ms - 30 ms for the other
    assert m["x.>10MB.unfinished"] == 1 and m["x.all.flows"] == 4


def test_offered_load_is_measured_over_the_arrival_window():
    sc = {"scenario": {"arrivals_for": "1ms"}, "workload": [{"kind": "poisson", "hosts": [0, 4], "tag": "bg"}]}
    ports = pd.DataFrame({"is_host": [True] * 4 + [False], "rate_bps": [10e9] * 5})
    # 4 hosts x 10 Gb/s x 1 ms = 5 MB of capacity; 2.5 MB arrive in the window, 1 MB after it
    flows = pd.DataFrame({"tag": ["bg", "bg", "bg"], "size_bytes": [2_000_000, 500_000, 1_000_000],
                          "start_ps": [0, 900_000_000, 1_500_000_000]})
    assert offered_load(flows, sc, ports)["offered_load.bg"] == pytest.approx(0.5)


def test_cli_lists_and_refuses_bad_input():
    run = lambda *a: subprocess.run([sys.executable, "-m", "dcnsim.cli", "reproduce", *a], capture_output=True, text=True)  # noqa: E731
    out = run("--list")
    assert out.returncode == 0 and "seed003_ci_2queue" in out.stdout and "of CPU" in out.stdout
    bad = run("no_such_study")
    assert bad.returncode == 2 and "unknown study 'no_such_study'" in bad.stderr and "seed003_ci_2queue" in bad.stderr
    nothing = run()
    assert nothing.returncode == 2 and "name a study" in nothing.stderr


def test_check_with_a_study_name_runs_nothing(study, checkout, tmp_path_factory):
    """`reproduce NAME --check` once ran NAME and rewrote its results file before saying
    whether it had been current: a check names what is stale and writes nothing."""
    reproduce([NAME], "small", checkout, seeds=2, jobs=1, log=lambda _: None)
    render(checkout, log=lambda _: None)
    path = results_path(checkout, NAME, "small")
    data = load_results(path)
    data["fingerprint"]["short|CI"] = "0000000000000000"
    write_results(path, data)
    # only the named studies' results are fingerprinted
    assert check(checkout, names=["seed003_lossy"]) == []
    [problem] = check(checkout, names=[NAME])
    assert "today's engine gives other outputs for short|CI" in problem
    assert load_results(path)["fingerprint"]["short|CI"] == "0000000000000000"

    run = lambda *a: subprocess.run([sys.executable, "-m", "dcnsim.cli", "reproduce", *a], capture_output=True, text=True)  # noqa: E731
    empty = tmp_path_factory.mktemp("empty")
    (empty / "python" / "dcnsim").mkdir(parents=True)
    (empty / "docs").mkdir()
    out = run("seed003_lossy", "--check", "--root", str(empty), "--no-progress")
    assert out.returncode == 0 and "seed003_lossy's fingerprints are today's" in out.stdout, out.stderr
    assert not (empty / "docs" / "results").exists() or not any((empty / "docs" / "results").iterdir())
    both = run("seed003_lossy", "--check", "--moved", "--root", str(empty))
    assert both.returncode == 2 and "--check runs nothing" in both.stderr


def test_every_block_in_the_docs_is_registered():
    """The docs name only registered renderers (the rendering itself is `dcnsim reproduce
    --check`'s, in .ci/run)."""
    from dcnsim.reproduce.render import blocks_in, doc_files

    root = Path(__file__).resolve().parents[1]
    used = [name for path in doc_files(root) for name, _ in blocks_in(path.read_text(encoding="utf-8"))]
    assert used, "no results block in the docs"
    assert set(used) <= set(BLOCKS), sorted(set(used) - set(BLOCKS))
    assert len(used) == len(set(used)), "a block appears twice"


def test_check_catches_a_change_of_the_metrics_code(study, checkout, monkeypatch):
    """A study's metrics function changed (the engine's outputs did not): the results no
    longer say what today's code computes, and the check says so."""
    reproduce([NAME], "small", checkout, seeds=1, jobs=1, log=lambda _: None)
    render(checkout, log=lambda _: None)
    assert check(checkout) == []
    assert set(load_results(results_path(checkout, NAME, "small"))["metrics_fingerprint"]) == {"short|without CI", "short|CI", "by_tor|CI"}

    def other_metrics(r, sc):
        out = ci_metrics(r, sc)
        out["a_new_metric"] = 1.0
        return out

    monkeypatch.setitem(STUDIES, NAME, Study(**{**study.__dict__, "metrics": other_metrics}))
    problems = check(checkout)
    assert len(problems) == 1 and "the study's metrics now give other values" in problems[0], problems


def test_slowdown_bins_follow_the_scenario():
    """The CC slowdown study's bins are the scenario's `metrics.fct_bins`, in its order,
    the last one open."""
    from dcnsim.reproduce.studies_cc import bins_of

    bins = bins_of({"metrics": {"fct_bins": ["10KB", "100KB", "1MB"]}})
    assert [b[0] for b in bins] == ["<10KB", "10KB-100KB", "100KB-1MB", ">1MB"]
    assert bins[0][1:] == (0.0, 10_000.0) and math.isinf(bins[-1][2])


def test_a_figure_is_drawn_by_render_and_checked_by_its_data(tmp_path):
    """`--render` draws a block's figure to docs/img; the block itself carries a hash of the
    plotted data, so a check (which draws nothing) sees the data move."""
    from matplotlib.figure import Figure

    from dcnsim.reproduce.render import Context

    def draw(data):
        fig = Figure(figsize=(2, 2))
        fig.add_subplot(1, 1, 1).plot(data["y"])
        return fig

    text = Context(tmp_path, write_figures=False).figure("f", {"y": [1, 2]}, draw, "alt")
    assert not (tmp_path / "docs" / "img" / "f.png").exists()
    assert text.startswith("![alt](img/f.png)")
    assert Context(tmp_path, write_figures=True).figure("f", {"y": [1, 2]}, draw, "alt") == text
    assert (tmp_path / "docs" / "img" / "f.png").read_bytes()[:4] == b"\x89PNG"
    assert Context(tmp_path).figure("f", {"y": [1, 3]}, draw, "alt") != text
