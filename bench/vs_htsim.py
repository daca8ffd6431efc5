#!/usr/bin/env python3
"""Side-by-side speed runs of dcnsim's core runner and htsim's DCTCP fat-tree driver on
the same flows (issue 15).

Two steps, so that the flow lists can be made on a machine with dcnsim installed and the
runs done on another (a quiet many-core box that has neither Python packages nor a
compiler):

``export``: run each fat-tree scenario once through ``dcnsim.run`` and write, per
scenario, htsim's connection matrix (``NAME.tm``: ``src->dst start PS size BYTES``, every
flow dcnsim generated, same hosts, start times and sizes), its fat-tree topology file
(``NAME.topo``: tiers, radices, link speed and latency from the scenario) and dcnsim's own
flow completion times (``NAME.fct.csv``) for a sanity check of the htsim run::

    python bench/vs_htsim.py export bench/scenarios/fat_tree_k8_websearch.toml -o /tmp/vs

``run``: start each pair at the same moment, dcnsim and htsim each pinned to its own core,
all scenarios at once; report wall time of the whole process, events, events/s and peak RSS (GNU time) of both,
the time ratio, and both simulators' mean and 99th-percentile FCT::

    python bench/vs_htsim.py run --htsim BIN --core-bin run_scenario --dir /tmp/vs \\
        bench/scenarios/fat_tree_k8_websearch.toml ...

With ``--threads 1,N`` (or ``all``: one thread and every core) dcnsim also runs split over
N threads (issue 38); every run then goes by itself, unpinned, htsim and dcnsim at each
count in turn, ``--rounds R`` times with the order reversed every other round, and the
table gives each median with its range and the htsim / dcnsim ratio per round.

htsim is not part of this project and is not built here. The driver this was written for is
csg-htsim's ``sim/datacenter/main_dctcp.cpp`` with the DCTCP sender over drop-tail ECN
queues (``-strat single -q QUEUE_PKTS``), patched to stop when every flow has finished and
to print ``FCT src dst bytes start_us S end_us E fct_us F`` per flow and ``Events N
flows_done a/b`` at the end (bench/README.md, "Side by side with htsim", lists what was
changed and what differs between the two models).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import run_core, run_measured  # after the path insert: one measurement for every bench script

HTSIM_FCT = re.compile(r"^FCT (\d+) (\d+) (\d+) start_us \S+ end_us \S+ fct_us (\S+)$", re.M)
HTSIM_END = re.compile(r"^Events (\d+) flows_done (\d+)/(\d+)", re.M)


def _scenario(path: str) -> Dict[str, Any]:
    import tomllib

    with open(path, "rb") as f:
        doc = tomllib.load(f)
    topo = doc.get("topology", {})
    if topo.get("kind") != "fat_tree3" or "k" not in topo:
        raise SystemExit(f"{path}: topology.kind = {topo.get('kind')!r}: expected a k-ary \"fat_tree3\" (htsim's FatTreeTopology)")
    return doc


def _gbps(rate: str) -> int:
    m = re.fullmatch(r"(\d+)\s*Gbps", rate)
    if not m:
        raise SystemExit(f"link rate {rate!r}: expected whole Gbps (htsim's topology file takes an integer Downlink_speed_Gbps)")
    return int(m.group(1))


def _ns(delay: str) -> int:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(ns|us)", delay)
    if not m:
        raise SystemExit(f"link delay {delay!r}: expected ns or us")
    return round(float(m.group(1)) * (1000 if m.group(2) == "us" else 1))


def topology_file(k: int, gbps: int, ns: int) -> str:
    """FatTreeTopology::load's format for a 3-tier k-ary fat tree: tier 0 host-ToR, 1 ToR-agg,
    2 agg-core; radices up = down = k/2 below the core, k at the core."""
    h = k // 2
    out = [f"# 3-tier k={k} fat tree, {k**3 // 4} hosts, {gbps} Gbps, {ns} ns per link", f"Nodes {k**3 // 4}", "Tiers 3", f"Podsize {k * k // 4}", ""]
    for tier, up, down in ((0, h, h), (1, h, h), (2, None, k)):
        out += [f"Tier {tier}", f"Downlink_speed_Gbps {gbps}"]
        if up is not None:
            out.append(f"Radix_Up {up}")
        out += [f"Radix_Down {down}", f"Downlink_Latency_ns {ns}", ""]
    return "\n".join(out)


def export(paths: Sequence[str], outdir: Path) -> None:
    import dcnsim

    outdir.mkdir(parents=True, exist_ok=True)
    for path in paths:
        doc = _scenario(path)
        t = doc["topology"]
        k = int(t["k"])
        host = t.get("host_link", {})
        fabric = t.get("fabric_link", host)
        if (host.get("rate"), host.get("delay")) != (fabric.get("rate"), fabric.get("delay")):
            raise SystemExit(f"{path}: host and fabric links differ: htsim's file gives each tier its own, but this export writes one")
        res = dcnsim.run(path)
        f = res.flows.sort_values("start_ps", kind="stable")
        name = Path(path).stem
        hosts = k**3 // 4
        lines = [f"Nodes {hosts}", f"Connections {len(f)}"]
        lines += [f"{s}->{d} start {st} size {sz}" for s, d, st, sz in zip(f.src, f.dst, f.start_ps, f.size_bytes)]
        (outdir / f"{name}.tm").write_text("\n".join(lines) + "\n")
        (outdir / f"{name}.topo").write_text(topology_file(k, _gbps(host["rate"]), _ns(host["delay"])))
        f[["src", "dst", "size_bytes", "start_ps", "fct_ps"]].to_csv(outdir / f"{name}.fct.csv", index=False)
        print(f"{name}: {len(f)} flows, {hosts} hosts -> {outdir}/{name}.tm, .topo, .fct.csv")


def _fct_stats(fct_us: List[float]) -> str:
    if not fct_us:
        return "-"
    s = sorted(fct_us)
    return f"{statistics.fmean(s):.1f} / {s[min(len(s) - 1, int(0.99 * len(s)))]:.1f}"


def htsim_once(htsim: str, d: Path, name: str, queue_pkts: int, cpu: Optional[int]) -> Dict[str, Any]:
    """One htsim run on ``name``'s exported files: wall time of the whole process, events,
    flows finished, peak RSS and FCT statistics (or ``error``)."""
    # htsim writes its log and idmap.txt into the working directory
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [htsim, "-topo", str(d / f"{name}.topo"), "-tm", str(d / f"{name}.tm"), "-strat", "single", "-q", str(queue_pkts), "-o", "log.dat"]
        rc, o, e, wall, peak, _ = run_measured(cmd, None, cwd=tmp, cpu=cpu)
    m = HTSIM_END.search(o)
    if rc != 0 or not m:
        return {"error": (e or o).strip()[-300:]}
    fcts = [float(x[3]) for x in HTSIM_FCT.findall(o)]
    return {"wall_s": wall, "events": int(m[1]), "flows": f"{m[2]}/{m[3]}", "rss_mb": peak, "fct": _fct_stats(fcts)}


def core_once(core: str, scenario: str, threads: int, cpu: Optional[int]) -> Dict[str, Any]:
    """One dcnsim core-runner run on ``threads`` threads (or ``error``)."""
    row = run_core(Path(core), Path(scenario), None, cpu, ["--threads", str(threads)] if threads > 1 else [])
    if "error" in row:
        return {"error": row["error"]}
    # the process's wall time, as htsim's: parsing and building included
    return {"wall_s": row["process_wall_s"], "engine_s": row["wall_s"], "events": row["events"], "flows": f"{row['flows_finished']}/{row['flows_total']}", "rss_mb": row["peak_rss_mb"]}


def dcnsim_fct(d: Path, name: str) -> str:
    """dcnsim's FCT statistics, from the flows `export` wrote (the same at every thread
    count: split runs are byte-identical)."""
    fct_csv = d / f"{name}.fct.csv"
    if not fct_csv.exists():
        return "-"
    rows = fct_csv.read_text().splitlines()[1:]
    return _fct_stats([int(r.split(",")[4]) / 1e6 for r in rows if r.split(",")[4]])


def run_pair(scenario: str, d: Path, htsim: str, core: str, queue_pkts: int, cpus: Sequence[Optional[int]], out: Dict[str, Any]) -> None:
    """htsim and dcnsim (one thread) started together, each on its own core."""
    name = Path(scenario).stem
    res: Dict[str, Any] = {"htsim": [], "core": {1: []}}
    a = threading.Thread(target=lambda: res["core"][1].append(core_once(core, scenario, 1, cpus[0])))
    b = threading.Thread(target=lambda: res["htsim"].append(htsim_once(htsim, d, name, queue_pkts, cpus[1])))
    a.start()
    b.start()
    a.join()
    b.join()
    out[name] = res
    print(f"# {name}: {json.dumps(res)}", flush=True)  # as each pair ends: a run cut short keeps what finished


def run_alone(scenarios: Sequence[str], d: Path, htsim: str, core: str, queue_pkts: int, threads: Sequence[int], rounds: int, out: Dict[str, Any]) -> None:
    """Every run by itself, unpinned (a split run takes as many cores as it has threads),
    htsim then dcnsim at each thread count, the order alternating from round to round so
    that a drift in the machine's speed falls on both."""
    for name in (Path(s).stem for s in scenarios):
        out[name] = {"htsim": [], "core": {t: [] for t in threads}}
    for r in range(rounds):
        for s in scenarios:
            name = Path(s).stem
            jobs = [("htsim", 0)] + [("core", t) for t in threads]
            for kind, t in jobs if r % 2 == 0 else jobs[::-1]:
                if kind == "htsim":
                    row = htsim_once(htsim, d, name, queue_pkts, None)
                    out[name]["htsim"].append(row)
                else:
                    row = core_once(core, s, t, None)
                    out[name]["core"][t].append(row)
                print(f"# round {r + 1} {name} {kind}{'' if kind == 'htsim' else f' threads={t}'}: {json.dumps(row)}", flush=True)


def _median(rows: List[Dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def _span(rows: List[Dict[str, Any]], key: str, fmt: str) -> str:
    """The median, with the range over runs when there is more than one."""
    vals = sorted(r[key] for r in rows)
    med = format(statistics.median(vals), fmt)
    return med if len(vals) == 1 else f"{med} ({format(vals[0], fmt)}-{format(vals[-1], fmt)})"


def table(scenarios: Sequence[str], d: Path, out: Dict[str, Any]) -> bool:
    """Print the side-by-side table (one row per scenario and dcnsim thread count); False
    if some run failed."""
    print("| scenario | dcnsim threads | dcnsim wall (s) | events | events/s | peak RSS (MB) | flows | FCT mean / p99 (us) | htsim wall (s) | events | events/s | peak RSS (MB) | flows | FCT mean / p99 (us) | htsim / dcnsim time |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    ok = True
    for s in scenarios:
        name = Path(s).stem
        r = out[name]
        bad = [x["error"] for x in r["htsim"] + [y for ys in r["core"].values() for y in ys] if "error" in x]
        if bad or not r["htsim"]:
            ok = False
            print(f"| {name} | error: {bad[0] if bad else 'htsim did not run'} |")
            continue
        h = r["htsim"]
        hw = _median(h, "wall_s")
        fct = dcnsim_fct(d, name)
        hcol = f"{_span(h, 'wall_s', '.2f')} | {h[0]['events'] / 1e6:.1f} M | {h[0]['events'] / hw / 1e6:.2f} M | {_span(h, 'rss_mb', '.1f')} | {h[0]['flows']} | {h[0]['fct']}"
        for t, c in r["core"].items():
            cw = _median(c, "wall_s")
            # per-round ratios where both ran every round
            ratios = sorted(a["wall_s"] / b["wall_s"] for a, b in zip(h, c))
            ratio = f"{statistics.median(ratios):.2f}x" + (f" ({ratios[0]:.2f}-{ratios[-1]:.2f})" if len(ratios) > 1 else "")
            print(
                f"| {name} | {t} | {_span(c, 'wall_s', '.2f')} | {c[0]['events'] / 1e6:.1f} M | {c[0]['events'] / cw / 1e6:.2f} M | {_span(c, 'rss_mb', '.1f')} | {c[0]['flows']} | {fct} "
                f"| {hcol} | {ratio} |"
            )
    return ok


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    ex = sub.add_parser("export", help="write htsim's flow and topology files from dcnsim scenarios")
    ex.add_argument("scenarios", nargs="+")
    ex.add_argument("-o", "--outdir", required=True)
    rn = sub.add_parser("run", help="run the pairs side by side")
    rn.add_argument("scenarios", nargs="+")
    rn.add_argument("--htsim", required=True, help="htsim DCTCP driver binary")
    rn.add_argument("--core-bin", required=True, help="dcnsim's run_scenario binary")
    rn.add_argument("--dir", required=True, help="where export wrote the .tm/.topo files")
    rn.add_argument("--queue-pkts", type=int, default=100, help="htsim -q: switch queue in packets (default 100, as the bench scenarios)")
    rn.add_argument("--threads", default="1", help="dcnsim thread counts, comma-separated (default 1; 'all': 1 and every core). With any count above 1 every run goes alone")
    rn.add_argument("--alone", action="store_true", help="every run by itself, unpinned, instead of each pair started together on two cores")
    rn.add_argument("--rounds", type=int, default=1, help="rounds of every run (default 1; more than one: every run alone)")
    a = ap.parse_args(argv)
    if a.cmd == "export":
        export(a.scenarios, Path(a.outdir))
        return 0
    for b in (a.htsim, a.core_bin):
        if not os.access(b, os.X_OK):
            ap.error(f"{b!r}: not an executable")
    cores = len(os.sched_getaffinity(0))
    try:
        threads = sorted({1, cores}) if a.threads == "all" else sorted({int(x) for x in a.threads.split(",")})
    except ValueError:
        ap.error(f"--threads {a.threads!r}: expected thread counts separated by commas (e.g. 1,2) or 'all'")
    if threads[0] < 1:
        ap.error(f"--threads {a.threads!r}: a thread count is at least 1")
    if a.rounds < 1:
        ap.error(f"--rounds {a.rounds}: expected 1 or more")
    # the runs start in other directories (htsim writes files into its own)
    htsim, core, d = os.path.abspath(a.htsim), os.path.abspath(a.core_bin), Path(a.dir).resolve()
    scenarios = [os.path.abspath(s) for s in a.scenarios]
    for s in a.scenarios:
        for ext in (".tm", ".topo"):
            if not (d / (Path(s).stem + ext)).is_file():
                ap.error(f"{d / (Path(s).stem + ext)}: missing; run `export` first")
    out: Dict[str, Any] = {}
    if a.alone or threads != [1] or a.rounds > 1:
        run_alone(scenarios, d, htsim, core, a.queue_pkts, threads, a.rounds, out)
    else:
        cpus: List[Optional[int]] = sorted(os.sched_getaffinity(0)) if shutil.which("taskset") else []
        if cpus and len(cpus) > 2 * len(a.scenarios):
            cpus = cpus[1:]  # leave one core to the system and this script
        pairs = [(cpus[2 * i], cpus[2 * i + 1]) if len(cpus) >= 2 * len(a.scenarios) else (None, None) for i in range(len(a.scenarios))]
        workers = [threading.Thread(target=run_pair, args=(s, d, htsim, core, a.queue_pkts, p, out)) for s, p in zip(scenarios, pairs)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    return 0 if table(scenarios, d, out) else 1


if __name__ == "__main__":
    sys.exit(main())
