"""Issue 59's incast study, our own: the UEC's htsim's 8-to-1 incast (`uet_incast_small`,
k = 4) and a 32-to-1 one on the k = 8 bench fabric (`uet_incast`), over Ultra Ethernet's
transport with NSCC with and without switch trimming, and over DCTCP: incast completion,
loss, NACKs and resends, and what trimming costs in header bytes on the wire."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Sequence

import numpy as np

from .core import Study
from .render import Context, md_table
from .studies import register, scaled
from .studies_cc import _mean

VARIANTS = ("UET + trimming", "UET, no trimming", "DCTCP")


def incast_metrics(r: Any, sc: Dict[str, Any]) -> Dict[str, Any]:
    """FCTs of the incast's flows (min, median, max, us), retransmissions, drops, trims,
    and the trimmed headers' bytes the switches sent on (the trims' cost in bandwidth)."""
    f = r.flows
    fct = f["fct_ps"].to_numpy(dtype=float) / 1e6
    done = f["finished"].to_numpy(dtype=bool)
    ok = fct[done]
    p = r.ports
    trims = int(r.summary.get("trims", 0))
    out: Dict[str, Any] = {
        "flows": len(f),
        "unfinished": int((~done).sum()),
        "fct_min_us": float(ok.min()) if len(ok) else math.nan,
        "fct_median_us": float(np.median(ok)) if len(ok) else math.nan,
        "fct_max_us": float(ok.max()) if len(ok) else math.nan,
        "retx": int(f["retx"].sum()),
        "drops": int(r.summary.get("packets_dropped", 0)),
        "trims": trims,
        "data_bytes_sent": int(p[p["is_host"].astype(bool)]["tx_bytes"].sum()),
        "header_bytes_switches": int(r.summary.get("trimmed_header_bytes", 0)),
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


@scaled("uet_incast:table")
def _table(ctx: Context, scale: str) -> str:
    res = ctx.results("uet_incast", scale)
    rows: List[List[str]] = []
    for v in VARIANTS:
        val = lambda k: res.values("shipped", v, k)
        sent = [x for x in val("data_bytes_sent")]
        hdr = val("header_bytes_switches")
        share = [h / s * 100 if s else math.nan for h, s in zip(hdr, sent)]
        rows.append([
            v,
            _cell(val("fct_min_us")), _cell(val("fct_median_us")), _cell(val("fct_max_us")),
            _cell(val("trims"), "{:,.0f}"), _cell(val("retx"), "{:,.0f}"), _cell(val("drops"), "{:,.0f}"),
            _cell(share, "{:.2f}"),
        ])
    n = int(_mean(res.values("shipped", VARIANTS[0], "flows")))
    table = md_table(["variant", "FCT min (us)", "FCT median (us)", "FCT max (us)", "trims", "resends", "packets dropped",
                      "trimmed headers' bytes at the switches (% of the bytes the hosts sent)"], rows)
    return f"{n} flows per run; mean over seeds [range over seeds], seeds {res.seeds[0]}-{res.seeds[-1]}:\n\n{table}"


