"""Running studies: every (study, case, variant, seed) job of one call in one process pool,
the engine fingerprints, and the results files they make."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..jobs import Bar, run_all
from .core import (
    FORMAT,
    _json_default,
    Study,
    added_outputs_job,
    clean,
    fingerprint_job,
    fingerprint_jobs,
    git_commit,
    inputs_hashes,
    load_results,
    results_path,
    run_cpu_s,
    run_job,
    run_threads,
    today,
    variants_of,
    write_results,
)
from .studies import STUDIES


def _died(key: Any, e: BaseException) -> BaseException:
    return RuntimeError(f"a worker died during {key} ({e}): out of memory? try fewer jobs (-j)")


def fingerprints(names: Sequence[str], jobs: int = 1, progress: bool = False) -> Dict[str, Dict[str, Tuple[str, str]]]:
    """Today's fingerprints of each study: ``{study: {"case|variant": (engine, metrics)}}``."""
    todo: List[Tuple[Any, Tuple[Any, ...]]] = []
    for n in names:
        for case, variant in fingerprint_jobs(STUDIES[n]):
            todo.append(((n, case, variant), (n, case, variant)))
    out: Dict[str, Dict[str, Tuple[str, str]]] = {n: {} for n in names}
    with Bar(len(todo), "fingerprint runs", progress, False) as bar:
        def done(key: Any, h: Tuple[str, str]) -> None:
            out[key[0]][f"{key[1]}|{key[2]}"] = tuple(h)
            bar.advance()

        run_all(fingerprint_job, todo, jobs, done, _died)
    return {n: dict(sorted(v.items())) for n, v in out.items()}


def reproduce(
    names: Sequence[str],
    scale: str,
    root: Path,
    seeds: Optional[int] = None,
    jobs: int = 1,
    threads: int = 1,
    progress: bool = False,
    log: Callable[[str], None] = print,
    moved: bool = False,
    rerun: Sequence[str] = (),
) -> List[Path]:
    """Run the studies ``names`` at ``scale`` over seeds 1..``seeds`` (default: each
    study's) and write one results file per study; return their paths.

    With ``moved``, each study's results file is updated instead of remade: only the set-ups
    (case, variant) whose engine or metrics fingerprint is not the recorded one, whose
    scenario at this scale changed, or that the file lacks are run; the others keep their
    recorded runs, and the file says from which commit (``kept``). ``rerun`` names set-ups
    (a variant, or "case|variant") that are run again although their fingerprints are
    today's: for a model change the fingerprint runs (each study's small scenario at seed 1)
    do not reach."""
    studies = [STUDIES[n] for n in names]
    if rerun:
        if not moved:
            raise ValueError("--rerun names set-ups to run again within --moved; add --moved")
        known = {f"{c.label}|{v}" for st in studies for c in st.cases for v in variants_of(st, c, scale)}
        for r in rerun:
            if r not in known and not any(k.split("|", 1)[1] == r for k in known):
                raise ValueError(f"--rerun: invalid value {r!r}, expected a variant or \"case|variant\" of {', '.join(names)}: {', '.join(sorted(known))}")
    plan: Dict[str, List[int]] = {st.name: list(range(1, (seeds or st.seeds) + 1)) for st in studies}
    commit = git_commit(root)
    runs: Dict[str, Dict[str, Dict[str, Dict[str, Any]]]] = {n: {} for n in names}
    fps: Dict[str, Dict[str, Tuple[str, str]]] = {n: {} for n in names}
    kept: Dict[str, Dict[str, Dict[str, str]]] = {n: {} for n in names}
    if moved:
        old = {st.name: _updatable(root, st, scale, plan[st.name]) for st in studies}
        fps = fingerprints(names, jobs, progress)
    inputs = {st.name: inputs_hashes(st, scale) for st in studies}
    todo: List[Tuple[Any, Tuple[Any, ...]]] = []
    for st in studies:
        for case in st.cases:
            for v in variants_of(st, case, scale):
                pair = f"{case.label}|{v}"
                forced = pair in rerun or v in rerun
                if moved and not forced and _unchanged(old[st.name], pair, fps[st.name].get(pair), inputs[st.name][pair]):
                    d = old[st.name]
                    # each kept run says its own thread count: the file's may be another's
                    runs[st.name].setdefault(case.label, {})[v] = {s: {**r, "_threads": run_threads(r, d)} for s, r in d["runs"][case.label][v].items()}
                    kept[st.name][pair] = d.get("kept", {}).get(pair) or {"commit": d["commit"], "date": d["date"]}
                    continue
                for s in plan[st.name]:
                    todo.append(((st.name, case.label, v, s), (st.name, case.label, scale, v, s, threads)))
        if not moved:
            for case_label, variant in fingerprint_jobs(st):
                todo.append((("#fp", st.name, case_label, variant), (st.name, case_label, variant)))
        elif kept[st.name]:
            log(f"{st.name}: {len(kept[st.name])} set-ups unchanged, kept: {', '.join(sorted(kept[st.name]))}")
    # runs a call that was stopped (a crash, a kill, the machine's OOM killer) finished:
    # kept where that call ran the same commit, seeds and thread count, so a long study
    # resumes rather than starts again
    journals = {st.name: Journal(results_path(root, st.name, scale), {"commit": commit, "scale": scale, "seeds": plan[st.name],
                                                                       "threads": threads, "inputs": inputs[st.name]}) for st in studies}
    left_to_run = []
    for key, args in todo:
        if key[0] != "#fp" and (value := journals[key[0]].runs.get(key[1:])) is not None:
            runs[key[0]].setdefault(key[1], {}).setdefault(key[2], {})[str(key[3])] = value
        else:
            left_to_run.append((key, args))
    resumed, todo = len(todo) - len(left_to_run), left_to_run
    if resumed:
        log(f"resumed {resumed} runs that a stopped call of the same commit finished ({', '.join(str(j.path.relative_to(root)) for j in journals.values() if j.runs)})")
    left = {n: sum(1 for k, _ in todo if (k[1] if k[0] == "#fp" else k[0]) == n) for n in names}
    paths: List[Path] = []
    t0 = time.perf_counter()

    def write(st: Study) -> None:
        data = {
            "format": FORMAT,
            "study": st.name,
            "title": st.title,
            "scale": scale,
            "scenario": st.scenario_for(scale),
            "seeds": plan[st.name],
            "threads": threads,
            "machine": machine(),
            "commit": commit,
            "date": today(),
            "command": command_line(st.name, scale, seeds or st.seeds),
            "fingerprint": {k: v[0] for k, v in sorted(fps[st.name].items())},
            "metrics_fingerprint": {k: v[1] for k, v in sorted(fps[st.name].items())},
            "inputs": inputs[st.name],
            "stale_since": None,
            "cpu_s": round(sum(run_cpu_s(r, {"threads": threads}) for c in runs[st.name].values() for v in c.values() for r in v.values()), 1),
            "runs": {c: {v: dict(sorted(seeds_.items(), key=lambda kv: int(kv[0]))) for v, seeds_ in sorted(vs.items())} for c, vs in runs[st.name].items()},
        }
        if kept[st.name]:
            data["kept"] = dict(sorted(kept[st.name].items()))
        p = results_path(root, st.name, scale)
        write_results(p, data)
        journals[st.name].remove()
        paths.append(p)
        log(f"wrote {p.relative_to(root)} ({len(plan[st.name])} seeds, {data['cpu_s']:.0f} CPU-s of runs, {time.perf_counter() - t0:.0f} s in)")

    # fingerprint jobs and study runs share the pool: the key says which is which; a
    # study's file is written as soon as its last job ends (a long call that is stopped
    # keeps the studies it finished)
    tagged = [(k, (("fp" if k[0] == "#fp" else "run"), *a)) for k, a in todo]
    for n in names:
        if left[n] == 0:  # nothing moved: the file is rewritten with today's provenance
            write(STUDIES[n])
    with Bar(len(tagged), f"runs of {', '.join(names)} ({scale})", progress, False) as bar:
        def done(key: Any, value: Any) -> None:
            if key[0] == "#fp":
                n = key[1]
                fps[n][f"{key[2]}|{key[3]}"] = tuple(value)
            else:
                n, case, v, s = key
                runs[n].setdefault(case, {}).setdefault(v, {})[str(s)] = clean(value)
                journals[n].add((case, v, s), runs[n][case][v][str(s)])
            bar.advance(str(key))
            left[n] -= 1
            if left[n] == 0:
                write(STUDIES[n])

        run_all(_tagged_job, tagged, jobs, done, _died)
    wall = time.perf_counter() - t0
    log(f"{len(todo)} jobs in {wall:.0f} s")
    return paths


class Journal:
    """The runs of one study and scale finished so far in a call of `dcnsim reproduce`, a
    line each beside its results file (``NAME.SCALE.json.runs``, not committed), after a
    line saying what made them. A later call whose header is the same (commit, scale,
    seeds, threads, the set-ups' scenarios) takes them instead of running them again; one
    from another commit, or from a checkout with changes ("-dirty": the code that made them
    is not known), is not read, and the call's first run replaces it. Removed when the
    results file is written."""

    def __init__(self, results: Path, header: Dict[str, Any]) -> None:
        self.path = results.with_name(results.name + ".runs")
        self.header = header
        self.runs: Dict[Tuple[str, str, int], Dict[str, Any]] = {}
        self._open = False
        if self.path.exists() and not str(header["commit"]).endswith("-dirty"):
            lines = self.path.read_text(encoding="utf-8").splitlines()
            try:
                if lines and json.loads(lines[0]) == json.loads(json.dumps(header)):
                    for ln in lines[1:]:
                        r = json.loads(ln)
                        self.runs[(r["case"], r["variant"], int(r["seed"]))] = r["value"]
            except (ValueError, KeyError, TypeError):
                self.runs = {}  # a line cut short by the stop: the runs before it are not trusted either

    def add(self, key: Tuple[str, str, int], value: Dict[str, Any]) -> None:
        if not self._open:
            # a new call starts the journal afresh, keeping the runs it took from the last
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("w", encoding="utf-8") as f:
                f.write(json.dumps(self.header, sort_keys=True) + "\n")
                f.writelines(self._line(k, val) for k, val in self.runs.items())
            self._open = True
        with self.path.open("a", encoding="utf-8") as f:
            f.write(self._line(key, value))
            f.flush()
            os.fsync(f.fileno())

    @staticmethod
    def _line(key: Tuple[str, str, int], value: Dict[str, Any]) -> str:
        return json.dumps({"case": key[0], "variant": key[1], "seed": key[2], "value": value}, sort_keys=True, default=_json_default) + "\n"

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


def _updatable(root: Path, st: Study, scale: str, seeds: List[int]) -> Dict[str, Any]:
    """The results file ``--moved`` updates, refused where its runs cannot be kept: runs of
    other seeds. Runs of another thread count are kept (a split run's outputs are one
    thread's), each with its own count, which the tables of wall time then show."""
    p = results_path(root, st.name, scale)
    if not p.exists():
        raise ValueError(f"{p.relative_to(root)}: no results to update; run `dcnsim reproduce {st.name} --scale {scale}` without --moved")
    d = load_results(p)
    if d["seeds"] != seeds:
        raise ValueError(
            f"{p.relative_to(root)}: made with seeds {d['seeds'][0]}-{d['seeds'][-1]}, not seeds {seeds[0]}-{seeds[-1]}: "
            "--moved keeps runs only of the same seeds; rerun without it"
        )
    return d


def _unchanged(old: Dict[str, Any], pair: str, now: Optional[Tuple[str, str]], inputs: str) -> bool:
    """Whether a recorded set-up's runs are what today's code would make: the same engine
    and metrics fingerprints, the same scenario (where the file recorded it), every seed."""
    case, variant = pair.split("|", 1)
    if now is None or old.get("fingerprint", {}).get(pair) != now[0] or old.get("metrics_fingerprint", {}).get(pair) != now[1]:
        return False
    if old.get("inputs", {}).get(pair, inputs) != inputs:
        return False
    recorded = old.get("runs", {}).get(case, {}).get(variant, {})
    return set(recorded) == {str(s) for s in old["seeds"]}


def machine() -> str:
    """The processor and CPU count that made a results file (its CPU times depend on it)."""
    model = "unknown processor"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} CPUs"


def _tagged_job(kind: str, *args: Any) -> Any:
    return run_job(*args) if kind == "run" else fingerprint_job(*args)


def command_line(name: str, scale: str, seeds: int) -> str:
    return f"dcnsim reproduce {name} --scale {scale} --seeds {seeds}"


def mark_stale(root: Path, name: str, commit: Optional[str] = None, log: Callable[[str], None] = print) -> List[Path]:
    """Mark every results file of a study stale since ``commit`` (default: this checkout's),
    keeping its numbers: the rendered tables then say "made by X, stale since Y"."""
    commit = commit or git_commit(root)
    paths = []
    for scale in STUDIES[name].scales:
        p = results_path(root, name, scale)
        if not p.exists():
            continue
        data = load_results(p)
        if not data.get("stale_since"):
            data["stale_since"] = commit
            write_results(p, data)
            log(f"marked {p.relative_to(root)} stale since {commit}")
        paths.append(p)
    return paths


def adopt_added_outputs(root: Path, names: Sequence[str], added: Sequence[str], jobs: int = 1, progress: bool = False, log: Callable[[str], None] = print) -> List[str]:
    """Keep the named studies' results through an engine change that only added outputs
    (``added``: flows or ports columns, summary keys): for every set-up of a study, today's
    seed-1 run of its fingerprint scenario, without those outputs, must hash to the engine
    fingerprint its results file recorded, and the study's metrics, without the values they
    take from those outputs, must hash as recorded (the same evidence :func:`check` holds
    them to). Where every set-up agrees the file takes
    today's fingerprints and records the change (``outputs_added``); its numbers and the
    commit that made them stay. A study where any set-up differs is left untouched and said,
    by set-up: it needs a rerun. Returns those problems (empty when every file was kept)."""
    if not added:
        raise ValueError("name the outputs the engine added")
    files = {n: [(p, load_results(p)) for sc in STUDIES[n].scales if (p := results_path(root, n, sc)).exists()] for n in names}
    todo: List[Tuple[Any, Tuple[Any, ...]]] = []
    for n in names:
        if not files[n]:
            raise ValueError(f"study {n!r} has no results file to keep")
        for case, variant in fingerprint_jobs(STUDIES[n]):
            todo.append(((n, f"{case}|{variant}"), (n, case, variant, tuple(added))))
    now: Dict[str, Dict[str, Tuple[str, str, str, str]]] = {n: {} for n in names}
    with Bar(len(todo), "fingerprint runs", progress, False) as bar:
        def done(key: Any, h: Tuple[str, str, str, str]) -> None:
            now[key[0]][key[1]] = tuple(h)
            bar.advance()

        run_all(added_outputs_job, todo, jobs, done, _died)
    commit = git_commit(root)
    problems: List[str] = []
    for n in names:
        for p, data in files[n]:
            rel = p.relative_to(root)
            was, was_m = data.get("fingerprint", {}), data.get("metrics_fingerprint")
            differ = sorted(
                pair for pair in set(was) | set(now[n])
                if pair not in now[n] or was.get(pair) != now[n][pair][1] or (was_m is not None and was_m.get(pair) != now[n][pair][3])
            )
            if data.get("stale_since"):
                problems.append(f"{rel}: marked stale since {data['stale_since']}; rerun it instead")
                continue
            if differ:
                problems.append(f"{rel}: without {', '.join(added)} today's engine still gives other outputs for {', '.join(differ)}: rerun `{data['command']}`")
                continue
            data["fingerprint"] = {pair: h[0] for pair, h in sorted(now[n].items())}
            if was_m is not None:
                data["metrics_fingerprint"] = {pair: h[2] for pair, h in sorted(now[n].items())}
            # the runs recorded lack what today's metrics take from the added outputs
            data.setdefault("outputs_added", []).append({"since": commit, "outputs": sorted(added)})
            write_results(p, data)
            log(f"kept {rel}: its runs are today's engine's but for the outputs added ({', '.join(sorted(added))})")
    return problems


def check(root: Path, jobs: int = 1, progress: bool = False, names: Optional[Sequence[str]] = None) -> List[str]:
    """What is stale: results files whose recorded engine fingerprint is not today's (and
    that are not marked stale), results files of no known study, and docs blocks that differ
    from what their results render. Empty when everything is current. ``names``: only those
    studies' results files are fingerprinted (the docs blocks are all checked); it runs
    nothing else and writes nothing."""
    from .core import RESULTS_DIR
    from .render import check_docs

    problems: List[str] = []
    recorded: Dict[str, List[Tuple[Path, Dict[str, Any]]]] = {}
    for p in sorted((root / RESULTS_DIR).glob("*.json")):
        rel = p.relative_to(root)
        try:
            data = load_results(p)
        except (ValueError, KeyError) as e:
            problems.append(f"{rel}: unreadable results file ({e})")
            continue
        if data.get("study") not in STUDIES:
            problems.append(f"{rel}: no study named {data.get('study')!r} (dcnsim reproduce --list)")
            continue
        if names is not None and data["study"] not in names:
            continue
        recorded.setdefault(data["study"], []).append((p, data))
    now = fingerprints(sorted(recorded), jobs, progress)
    for name, files in recorded.items():
        engine = {k: v[0] for k, v in now[name].items()}
        metrics = {k: v[1] for k, v in now[name].items()}
        for p, data in files:
            if data.get("stale_since"):
                continue
            was = data.get("fingerprint", {})
            rerun = f"rerun `{data['command']}` (add --moved to run only the set-ups that moved) or mark it stale (`dcnsim reproduce {name} --mark-stale`)"
            if was != engine:
                moved = sorted(k for k in set(was) | set(engine) if was.get(k) != engine.get(k))
                problems.append(f"{p.relative_to(root)}: made by {data['commit']}, but today's engine gives other outputs for {', '.join(moved)}: {rerun}")
            # files made before the metrics were fingerprinted carry only the engine's
            elif "metrics_fingerprint" in data and data["metrics_fingerprint"] != metrics:
                was_m = data["metrics_fingerprint"]
                moved = sorted(k for k in set(was_m) | set(metrics) if was_m.get(k) != metrics.get(k))
                problems.append(f"{p.relative_to(root)}: made by {data['commit']}, but the study's metrics now give other values for {', '.join(moved)} (same engine outputs): {rerun}")
            elif "inputs" in data and data["inputs"] != (now_in := inputs_hashes(STUDIES[name], data["scale"])):
                moved = sorted(k for k in set(data["inputs"]) | set(now_in) if data["inputs"].get(k) != now_in.get(k))
                problems.append(f"{p.relative_to(root)}: made by {data['commit']}, but the {data['scale']} scenario of {', '.join(moved)} has changed since: {rerun}")
    problems += check_docs(root)
    return problems
