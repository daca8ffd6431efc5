"""Issue 59's incast study, our own: the UEC's htsim's 8-to-1 incast (`uet_incast_small`,
k = 4) and a 32-to-1 one on the k = 8 bench fabric (`uet_incast`), over Ultra Ethernet's
transport with NSCC with and without switch trimming, and over DCTCP: incast completion,
loss, NACKs and resends, and what trimming costs in header bytes on the wire."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Sequence

import numpy as np

import copy

from .core import Case, Study
from .render import Context, md_table
from .studies import register, scaled
from .studies_cc import _mean

VARIANTS = ("UET + trimming", "UET, no trimming", "UET + trimming, ACK per packet", "UET, no trimming, ACK per packet", "DCTCP")


def trim_counts(r: Any) -> Dict[str, Any]:
    """Trims, the bytes the hosts sent, and the trimmed headers' bytes the switches sent on."""
    p = r.ports
    return {
        "trims": int(r.summary.get("trims", 0)),
        "data_bytes_sent": int(p[p["is_host"].astype(bool)]["tx_bytes"].sum()),
        "header_bytes_switches": int(r.summary.get("trimmed_header_bytes", 0)),
    }


def replies(r: Any) -> int:
    """The receivers' ACKs, NACKs and other replies: every packet made that is neither a
    data packet a host sent (new or resent) nor a control frame."""
    s = r.summary
    return int(s["packets_created"]) - int(s["data_packets_sent"]) - int(s.get("control_frames", 0))


def incast_metrics(r: Any, sc: Dict[str, Any]) -> Dict[str, Any]:
    """FCTs of the incast's flows (min, median, max, us), retransmissions, drops, trims,
    the trimmed headers' bytes the switches sent on (the trims' cost in bandwidth), the
    receivers' ACKs and NACKs (`replies`) and the senders' timer expiries (`timeouts`)."""
    f = r.flows
    fct = f["fct_ps"].to_numpy(dtype=float) / 1e6
    done = f["finished"].to_numpy(dtype=bool)
    ok = fct[done]
    out: Dict[str, Any] = {
        "flows": len(f),
        "unfinished": int((~done).sum()),
        "fct_min_us": float(ok.min()) if len(ok) else math.nan,
        "fct_median_us": float(np.median(ok)) if len(ok) else math.nan,
        "fct_max_us": float(ok.max()) if len(ok) else math.nan,
        "retx": int(f["retx"].sum()),
        "drops": int(r.summary.get("packets_dropped", 0)),
        **trim_counts(r),
        "replies": replies(r),
        "timeouts": int(r.summary["timeouts"]),
    }
    return out


for _name, _full_cost in (("uet_incast", 60),):
    register(Study(
        name=_name,
        title="Incast over Ultra Ethernet's transport (NSCC) with and without switch trimming, and over DCTCP: htsim's 8-to-1 (small) and a 32-to-1 on the k = 8 fabric (full)",
        scenario=_name,
        metrics=incast_metrics,
        cost_s={"small": 10, "full": _full_cost},
    ))


def _cell(xs: Sequence[float], fmt: str = "{:.1f}") -> str:
    xs = [x for x in xs if not math.isnan(x)]
    if not xs:
        return "-"
    m = sum(xs) / len(xs)
    return fmt.format(m) if len(xs) == 1 else f"{fmt.format(m)} [{fmt.format(min(xs))}-{fmt.format(max(xs))}]"


def _header_share(val: Any) -> List[float]:
    """Per seed, the trimmed headers' bytes at the switches as % of the bytes the hosts sent."""
    return [h / s * 100 if s else math.nan for h, s in zip(val("header_bytes_switches"), val("data_bytes_sent"))]


@scaled("uet_incast:table")
def _table(ctx: Context, scale: str) -> str:
    res = ctx.results("uet_incast", scale)
    rows: List[List[str]] = []
    for v in VARIANTS:
        val = lambda k: res.values("shipped", v, k)
        share = _header_share(val)
        rows.append([
            v,
            _cell(val("fct_min_us")), _cell(val("fct_median_us")), _cell(val("fct_max_us")),
            _cell(val("trims"), "{:,.0f}"), _cell(val("retx"), "{:,.0f}"), _cell(val("drops"), "{:,.0f}"), _cell(val("timeouts"), "{:,.0f}"),
            _cell(val("replies"), "{:,.0f}"), _cell(share, "{:.2f}"),
        ])
    n = int(_mean(res.values("shipped", VARIANTS[0], "flows")))
    table = md_table(["variant", "FCT min (us)", "FCT median (us)", "FCT max (us)", "trims", "resends", "packets dropped", "timer expiries", "ACKs and NACKs",
                      "trimmed headers' bytes at the switches (% of the bytes the hosts sent)"], rows)
    return f"{n} flows per run; mean over seeds [range over seeds], seeds {res.seeds[0]}-{res.seeds[-1]}:\n\n{table}"




# --------------------------------------------------------------------------- study 2

#: the variants of `uet_seed004`, in the scenario's order
SEED004_VARIANTS = ("PFC+DCQCN", "PFC+HPCC", "SFC native+DCQCN", "UET NSCC, lossy", "UET NSCC, lossy, control first", "UET NSCC, lossy, 399 us timer", "UET NSCC+trim",
                    "UET NSCC+trim, htsim's header memory", "UET RCCC+trim", "UET NSCC+RCCC+trim")


def lossless_metrics(r: Any, sc: Dict[str, Any]) -> Dict[str, Any]:
    """Seed 004's benefits metrics (FCT per bin of the background, incast FCT, queues,
    PAUSE frames, SFC messages), and the transport's losses: drops, trims, resends and
    the trimmed headers' bytes against the bytes the hosts sent."""
    from .studies_seed004 import benefits_metrics

    out = benefits_metrics(r, sc)
    out.update(trim_counts(r))
    out["retx"] = int(r.flows["retx"].sum())
    return out


register(Study(
    name="uet_seed004",
    title="Ultra Ethernet's transport (NSCC, RCCC, both; lossy and with trimming) against PFC + DCQCN / HPCC and SFC + DCQCN on seed 004's fabric and workload",
    scenario="uet_seed004",
    metrics=lossless_metrics,
    cost_s={"small": 60, "full": 9 * 5 * 320},
))


@scaled("uet_seed004:table")
def _seed004_table(ctx: Context, scale: str) -> str:
    res = ctx.results("uet_seed004", scale)
    rows: List[List[str]] = []
    ran = set(res.variants("shipped"))
    for v in [v for v in SEED004_VARIANTS if v in ran]:
        val = lambda k: res.values("shipped", v, k)
        share = _header_share(val)
        rows.append([v] + [f"{_cell(val(f'{k}.mean_us'))} / {_cell(val(f'{k}.p99_us'))}" for k in ("bg.<10KB", "bg.10KB-1MB", "bg.>1MB", "incast")]
                    + [_cell(val("pfc_frames"), "{:,.0f}"), _cell(val("sfc_sent"), "{:,.0f}"), _cell(val("dropped"), "{:,.0f}"),
                       _cell(val("trims"), "{:,.0f}"), _cell(val("s.timeouts"), "{:,.0f}"), _cell(share, "{:.3f}"), _cell(val("unfinished"), "{:,.0f}")])
    table = md_table(["variant", "<10KB: mean / p99 FCT (us)", "10KB-1MB", ">1MB", "incast (256 KB)", "PAUSE frames", "SFC messages",
                      "packets dropped", "trims", "timer expiries", "trimmed headers (% of host bytes)", "unfinished"], rows)
    # the summary's `timeouts` (packets a UET or TCP timer declared lost) came after the
    # runs kept for the lossless set-ups: their cells say "-" rather than a count not made
    return (f"Background FCT per the seed's bins and the incast's, mean over seeds [range over seeds], seeds {res.seeds[0]}-{res.seeds[-1]}; counts per run"
            " (timer expiries: packets a sender's timer declared lost; \"-\": runs made before the engine counted them; a timer that ends a wait for"
            " RCCC's credit with an RTS declares none):\n\n" + table)


# --------------------------------------------------------------------------- study 3

#: the variants of `trim_vs_pfc`, in the scenario's order
TRIM_VARIANTS = ("PFC, DCQCN", "PFC, UET", "PFC per egress queue, DCQCN", "PFC per egress queue, UET", "trimming, UET", "lossy, UET",
                 "lossy, UET, control first", "trimming, UET, ECN at dequeue", "trimming, UET, lossy's NSCC target")


def memory_200kb(sc: Dict[str, Any]) -> Dict[str, Any]:
    """200 KB of memory per port in place of the seeds' 1 MB: the egress queues of the
    lossy, trimming and PFC-per-egress-queue variants, and every PFC variant's XOFF at the
    same 75% of it (150 KB)."""
    sc = copy.deepcopy(sc)
    sc["switch"]["buffer"]["queue"] = "200KB"
    for v in sc.get("variant", []):
        if "pfc" in v.get("switch", {}):
            v["switch"]["pfc"]["xoff"] = "150KB"
    return sc


def trim_pfc_metrics(r: Any, sc: Dict[str, Any]) -> Dict[str, Any]:
    """The seed 000/003 metrics (background FCT per seed bin, PFC per class, loss), the
    incast's FCT, and trimming's counts and header bytes against the bytes the hosts sent."""
    from .metrics import ci_metrics, fct_metrics

    out = ci_metrics(r, sc)
    f = r.flows
    out.update(fct_metrics(f[f["tag"] == "incast"], int(r.summary["sim_time_ps"]), "incast."))
    out.update(trim_counts(r))
    return out


register(Study(
    name="trim_vs_pfc",
    title="Packet trimming against PFC as the loss-free mechanism on seed 000's set-up: head-of-line blocking, loss and the headers' cost, at 1 MB and 200 KB per port",
    scenario="trim_vs_pfc",
    metrics=trim_pfc_metrics,
    cases=(Case("1 MB per port"), Case("200 KB per port", memory_200kb)),
    scales=("small", "full"),
    cost_s={"small": 45, "full": 3600},
))


@scaled("trim_vs_pfc:table")
def _trim_table(ctx: Context, scale: str) -> str:
    res = ctx.results("trim_vs_pfc", scale)
    rows: List[List[str]] = []
    for case in ("1 MB per port", "200 KB per port"):
        for v in TRIM_VARIANTS:
            val = lambda k: res.values(case, v, k)
            rows.append([case, v] + [f"{_cell(val(f'{k}.mean_us'))} / {_cell(val(f'{k}.p99_us'))}" for k in ("bg.<100KB", "bg.100KB-1MB", "incast.all")]
                        + [_cell(val("max_depth_kb.q0"), "{:,.0f}"), _cell(val("pfc_frames"), "{:,.0f}"), _cell(val("s.flows_paused"), "{:,.0f}"),
                           _cell(val("s.packets_dropped"), "{:,.0f}"), _cell(val("trims"), "{:,.0f}"), _cell(val("s.timeouts"), "{:,.0f}"),
                           _cell(_header_share(val), "{:.3f}")])
    table = md_table(["memory", "variant", "background <100KB: mean / p99 FCT (us)", "background 100KB-1MB", "incast (1 MB)", "largest queue (KB)",
                      "PAUSE frames", "flows a pause held", "packets dropped", "trims", "timer expiries", "trimmed headers (% of host bytes)"], rows)
    return f"Mean over seeds [range over seeds], seeds {res.seeds[0]}-{res.seeds[-1]}; counts per run:\n\n{table}"
