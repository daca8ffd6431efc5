"""Per-run metrics of the studies: one run reduced to a flat dict of numbers, so that a
results file holds every seed's values and the docs' statistics are computed at render time.

Flow completion times are reported two ways wherever flows may still be running when the
run ends: over the finished flows, and "censored" (an unfinished flow counted at a lower
bound of its FCT, the end of the run minus its start), so that a variant that leaves more
elephants unfinished is not judged on its survivors.
"""

from __future__ import annotations

import hashlib
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .. import _core

#: The seeds' FCT bins (seed 000/003): <100KB, 100KB-1MB, 1MB-10MB, >10MB, and all flows.
BINS: List[Tuple[str, float, float]] = [
    ("<100KB", 0, 100e3),
    ("100KB-1MB", 100e3, 1e6),
    ("1MB-10MB", 1e6, 10e6),
    (">10MB", 10e6, float("inf")),
    ("all", 0, float("inf")),
]


def quantity(text: Any, unit: str) -> Optional[float]:
    """A scenario quantity ("10ms", "100Gbps", "750KB") in ps, bit/s or bytes."""
    if text is None:
        return None
    if isinstance(text, (int, float)):
        return float(text)
    q = _core.quantity(str(text))
    if q is None or q[1] != unit:
        raise ValueError(f"{text!r} is not a quantity in {unit}")
    return q[0]


def fct_metrics(flows: Any, end_ps: int, prefix: str) -> Dict[str, Any]:
    """Per size bin: flows, unfinished, mean / p50 / p99 FCT of the finished flows (us),
    censored mean FCT (us), mean slowdown of the finished flows."""
    out: Dict[str, Any] = {}
    size = flows["size_bytes"].to_numpy(dtype=float)
    done = flows["finished"].to_numpy(dtype=bool)
    fct = flows["fct_ps"].to_numpy(dtype=float, na_value=np.nan)
    start = flows["start_ps"].to_numpy(dtype=float)
    slow = flows["slowdown"].to_numpy(dtype=float, na_value=np.nan)
    for label, lo, hi in BINS:
        sel = (size >= lo) & (size < hi)
        d = done[sel]
        f = fct[sel][d]
        cens = np.where(d, fct[sel], end_ps - start[sel])
        k = f"{prefix}{label}"
        out[f"{k}.flows"] = int(sel.sum())
        out[f"{k}.unfinished"] = int((~d).sum())
        out[f"{k}.mean_us"] = float(f.mean() / 1e6) if len(f) else np.nan
        out[f"{k}.p50_us"] = float(np.percentile(f, 50) / 1e6) if len(f) else np.nan
        out[f"{k}.p99_us"] = float(np.percentile(f, 99) / 1e6) if len(f) else np.nan
        out[f"{k}.censored_us"] = float(cens.mean() / 1e6) if len(cens) else np.nan
        out[f"{k}.slowdown"] = float(slow[sel][d].mean()) if d.any() else np.nan
    return out


def summary_metrics(summary: Dict[str, Any]) -> Dict[str, Any]:
    """Every numeric summary counter, as ``s.KEY`` (wall-clock keys left out)."""
    return {
        f"s.{k}": v
        for k, v in summary.items()
        if isinstance(v, (int, float)) and not isinstance(v, bool) and k not in ("wall_time_s", "events_per_s", "seed")
    }


def port_metrics(ports: Any, xoff_bytes: Optional[float]) -> Dict[str, Any]:
    """PFC and queues per traffic class: PFC frames sent, XOFF time (ms), distinct pause
    periods at switches and at NICs, switch queues' largest depth (KB) and, where PFC has
    an XOFF, how many switch queues rose above it."""
    out: Dict[str, Any] = {}
    host = ports["is_host"].to_numpy(dtype=bool)
    pfc = "pfc_tx_frames" in ports  # PFC's columns: absent from runs without PFC
    for q, g in ports.groupby("queue"):
        h = g["is_host"].to_numpy(dtype=bool)
        if pfc:
            out[f"pfc_frames.q{q}"] = int(g["pfc_tx_frames"].sum())
            out[f"xoff_ms.q{q}"] = float(g["xoff_time_ps"].sum() / 1e9)
            out[f"pause_periods_switch.q{q}"] = int(g["pause_periods"][~h].sum())
            out[f"pause_periods_nic.q{q}"] = int(g["pause_periods"][h].sum())
        drops = g["drops"][~h].to_numpy(dtype=float)
        out[f"switch_drops.q{q}"] = int(drops.sum())
        depth = g["max_depth_bytes"][~h].to_numpy(dtype=float)
        out[f"max_depth_kb.q{q}"] = float(depth.max() / 1e3) if len(depth) else 0.0
        if xoff_bytes is not None:
            out[f"above_xoff.q{q}"] = int((depth > xoff_bytes).sum())
    if pfc:
        out["pfc_frames"] = int(ports["pfc_tx_frames"].sum())
        out["xoff_ms"] = float(ports["xoff_time_ps"].sum() / 1e9)
        out["pause_periods"] = int(ports["pause_periods"].sum())
        out["pause_periods_switch"] = int(ports["pause_periods"][~host].sum())
    return out


def offered_load(flows: Any, sc: Dict[str, Any], ports: Any) -> Dict[str, Any]:
    """The load each Poisson workload offered, measured: the bytes of its flows that
    arrive within ``arrivals_for`` over its hosts' capacity in that window (the scenario's
    ``load`` is the target the arrival process aims at)."""
    out: Dict[str, Any] = {}
    window = quantity(sc.get("scenario", {}).get("arrivals_for"), "ps")
    if not window:
        return out
    rates = ports[ports["is_host"].astype(bool)]["rate_bps"].to_numpy(dtype=float)
    if not len(rates):
        return out
    rate = float(np.median(rates))
    for w in sc.get("workload", []):
        if w.get("kind") != "poisson" or "hosts" not in w:
            continue
        tag = w.get("tag", "")
        lo, hi = w["hosts"]
        f = flows[flows["start_ps"].to_numpy(dtype=float) < window]
        if tag:
            f = f[f["tag"] == tag]
        out[f"offered_load.{tag or 'all'}"] = float(f["size_bytes"].sum() * 8 / ((hi - lo) * rate * window / 1e12))
    return out


def flows_hash(flows: Any) -> str:
    """A hash of the flows' outcomes (what "identical results" is judged by)."""
    h = hashlib.sha256()
    for col in ("size_bytes", "start_ps", "fct_ps", "finished"):
        h.update(np.ascontiguousarray(flows[col].to_numpy(dtype=float, na_value=-1.0)).tobytes())
    return h.hexdigest()[:16]


def lossless_xoff(sc: Dict[str, Any]) -> Optional[float]:
    pfc = sc.get("switch", {}).get("pfc")
    if not pfc or "xoff" not in pfc:
        return None
    return quantity(pfc["xoff"], "B")


def ci_metrics(r: Any, sc: Dict[str, Any]) -> Dict[str, Any]:
    """The seed 000/003 Congestion Isolation studies: FCT per seed bin of the background
    flows (finished and censored) and of all flows, PFC and queues per class, loss, the
    measured offered load, and the summary counters."""
    end = int(r.summary["sim_time_ps"])
    f = r.flows
    out: Dict[str, Any] = {}
    out.update(fct_metrics(f[f["tag"] == "background"], end, "bg."))
    out.update(fct_metrics(f, end, "any."))
    out.update(port_metrics(r.ports, lossless_xoff(sc)))
    out.update(offered_load(f, sc, r.ports))
    out.update(summary_metrics(r.summary))
    sent = r.summary.get("data_packets_sent", 0)
    out["loss_pct"] = 100.0 * r.summary.get("data_packets_dropped", 0) / sent if sent else 0.0
    out["sim_time_ms"] = end / 1e9
    out["flows_hash"] = flows_hash(f)
    return out
