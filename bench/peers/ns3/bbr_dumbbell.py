#!/usr/bin/env python3
"""ns-3 (3.44, pip wheel `ns3`, cppyy bindings) peer of dcnsim's BBR v1 (host/cc/bbr.rs) on
the dumbbell of bench/peers/ns3/dctcp_step_dumbbell.py: N senders on 10 Gbit/s, 20 us host
links to a left switch, a 10 Gbit/s, 10 us bottleneck, a 10 Gbit/s, 20 us link to the
receiver (base RTT ~103.8 us, BDP ~86.5 packets of 1500 B). The bottleneck egress is a FIFO
of the given size (tail drop), 1-packet device queues, 100 MB FIFOs elsewhere.

Each sender runs the given algorithm (`bbr`: ns3::TcpBbr, `cubic`: ns3::TcpCubic, `newreno`:
ns3::TcpNewReno), 1460 B
segments (1500 B IP packets, no timestamps), an ACK per segment, initial window 10, minimum
RTO 1 ms (dcnsim's default), no pacing cap (ns-3's default caps it at 4 Gbit/s), 64 MB socket buffers, each case with SACK off and on. Long flows start at t = 0; from 100 to 200 ms it measures each flow's goodput,
the bottleneck FIFO's length (mean, 99th percentile, sampled every 2 us), its drops and the
senders' retransmissions. `compare_bbr.py` runs dcnsim on the same cases.

    /work/ns3-venv/bin/python bbr_dumbbell.py            # writes bbr_dumbbell_ns3.csv
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# name: (algorithms of the senders, bottleneck buffer in packets)
CASES = {
    "lone_deep": ("bbr", 2666),
    "bbr2_deep": ("bbr,bbr", 2666),
    "bbr2_shallow": ("bbr,bbr", 40),
    "bbr_cubic_shallow": ("bbr,cubic", 40),
    "bbr_cubic_deep": ("bbr,cubic", 2666),
    # loss recovery with and without SACK (issue 59): loss-based flows sharing 40 packets
    "cubic4_shallow": ("cubic,cubic,cubic,cubic", 40),
    "reno4_shallow": ("newreno,newreno,newreno,newreno", 40),
}
COLUMNS = ["case", "ccs", "buffer_pkts", "sack", "goodput_gbps", "q_mean", "q_p99", "drops", "retx", "ns3_version"]

CPP = r"""
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/applications-module.h"
#include "ns3/traffic-control-module.h"
#include <algorithm>
#include <string>
#include <vector>

namespace ns3 {
namespace bbrd {
struct State
{
    std::vector<double> qs;
    uint64_t retx = 0;
    bool measuring = false;
    Ptr<QueueDisc> q;
};
static State g;
static void OnRetx(Ptr<const Packet>, const TcpHeader&, const Address&, const Address&, Ptr<const TcpSocketBase>)
{
    if (g.measuring) g.retx++;
}
static void Sample(double step, double end)
{
    g.qs.push_back(g.q->GetNPackets());
    if (Simulator::Now().GetSeconds() + step <= end + 1e-12) Simulator::Schedule(Seconds(step), &Sample, step, end);
}
} // namespace bbrd

std::vector<double> RunBbrDumbbell(std::vector<std::string> ccs, uint32_t bufPkts, bool sack, double seconds, double warmup)
{
    using namespace bbrd;
    g = State();
    uint32_t n = ccs.size();
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(1);
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1460));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(64u << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(64u << 20));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(1)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MicroSeconds(1)));
    // ns-3 caps pacing at 4 Gb/s by default; Linux's sk_max_pacing_rate is unlimited
    Config::SetDefault("ns3::TcpSocketState::MaxPacingRate", StringValue("1000Gbps"));

    NodeContainer nodes;
    nodes.Create(n + 3);
    Ptr<Node> left = nodes.Get(n), right = nodes.Get(n + 1), recv = nodes.Get(n + 2);
    PointToPointHelper host;
    host.SetDeviceAttribute("DataRate", StringValue("10Gbps"));
    host.SetChannelAttribute("Delay", StringValue("20us"));
    host.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
    PointToPointHelper neck;
    neck.SetDeviceAttribute("DataRate", StringValue("10Gbps"));
    neck.SetChannelAttribute("Delay", StringValue("10us"));
    neck.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
    std::vector<NetDeviceContainer> hd;
    for (uint32_t i = 0; i < n; i++) hd.push_back(host.Install(nodes.Get(i), left));
    NetDeviceContainer bd = neck.Install(left, right);
    NetDeviceContainer rd = host.Install(right, recv);
    InternetStackHelper stack;
    stack.Install(nodes);
    for (uint32_t i = 0; i < n; i++)
    {
        TypeId t = ccs[i] == "bbr" ? TcpBbr::GetTypeId() : ccs[i] == "newreno" ? TcpNewReno::GetTypeId() : TcpCubic::GetTypeId();
        Ptr<TcpL4Protocol> l4 = nodes.Get(i)->GetObject<TcpL4Protocol>();
        l4->SetAttribute("SocketType", TypeIdValue(t));
    }
    TrafficControlHelper fifo;
    fifo.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue("100MB"));
    for (auto& c : hd) fifo.Install(c);
    fifo.Install(bd.Get(1));
    fifo.Install(rd);
    TrafficControlHelper neckq;
    neckq.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(QueueSize(std::to_string(bufPkts) + "p")));
    g.q = neckq.Install(bd.Get(0)).Get(0);

    Ipv4AddressHelper addr;
    for (uint32_t i = 0; i < n; i++)
    {
        std::string base = "10.1." + std::to_string(i + 1) + ".0";
        addr.SetBase(base.c_str(), "255.255.255.0");
        addr.Assign(hd[i]);
    }
    addr.SetBase("10.2.0.0", "255.255.255.0");
    addr.Assign(bd);
    addr.SetBase("10.3.0.0", "255.255.255.0");
    Ipv4InterfaceContainer ri = addr.Assign(rd);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    std::vector<Ptr<PacketSink>> sinks;
    std::vector<Ptr<BulkSendApplication>> apps;
    for (uint32_t i = 0; i < n; i++)
    {
        uint16_t port = 5000 + i;
        PacketSinkHelper sinkH("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer s = sinkH.Install(recv);
        s.Start(Seconds(0));
        sinks.push_back(DynamicCast<PacketSink>(s.Get(0)));
        BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(ri.GetAddress(1), port));
        src.SetAttribute("MaxBytes", UintegerValue(0));
        src.SetAttribute("SendSize", UintegerValue(1460 * 64));
        ApplicationContainer a = src.Install(nodes.Get(i));
        a.Start(Seconds(0));
        apps.push_back(DynamicCast<BulkSendApplication>(a.Get(0)));
    }
    Simulator::Schedule(NanoSeconds(1), [apps, n] {
        for (uint32_t i = 0; i < n; i++)
        {
            Ptr<TcpSocketBase> s = DynamicCast<TcpSocketBase>(apps[i]->GetSocket());
            s->TraceConnectWithoutContext("Retransmission", MakeCallback(&OnRetx));
        }
    });
    double step = 2e-6;
    std::vector<uint64_t> rx0(n, 0);
    uint64_t drops0 = 0;
    Simulator::Schedule(Seconds(warmup), [&] {
        g.measuring = true;
        for (uint32_t i = 0; i < n; i++) rx0[i] = sinks[i]->GetTotalRx();
        drops0 = g.q->GetStats().nTotalDroppedPackets;
        Simulator::Schedule(Seconds(step), &Sample, step, seconds);
    });
    Simulator::Stop(Seconds(seconds) + NanoSeconds(1));
    Simulator::Run();
    double span = seconds - warmup;
    std::vector<double> out;  // goodput per flow, then q_mean, q_p99, drops, retx
    for (uint32_t i = 0; i < n; i++) out.push_back((sinks[i]->GetTotalRx() - rx0[i]) * 8.0 / span / 1e9);
    std::vector<double>& qs = g.qs;
    double sum = 0;
    for (double q : qs) sum += q;
    out.push_back(sum / qs.size());
    std::sort(qs.begin(), qs.end());
    out.push_back(qs[size_t((qs.size() - 1) * 0.99)]);
    out.push_back(double(g.q->GetStats().nTotalDroppedPackets - drops0));
    out.push_back(double(g.retx));
    Simulator::Destroy();
    g.q = nullptr;
    return out;
}
} // namespace ns3
"""


def run_case(ccs: str, buf: int, sack: bool, seconds: float, warmup: float) -> dict:
    from ns import ns  # noqa: F401  (loads the ns-3 libraries and headers into cppyy)
    import cppyy

    cppyy.cppdef(CPP)
    names = ccs.split(",")
    v = cppyy.gbl.std.vector[cppyy.gbl.std.string]()
    for c in names:
        v.push_back(c)
    r = list(cppyy.gbl.ns3.RunBbrDumbbell(v, buf, sack, seconds, warmup))
    n = len(names)
    try:
        from importlib.metadata import version
        ver = version("ns3")
    except Exception:  # pragma: no cover
        ver = "3.44"
    return {"ccs": ccs, "buffer_pkts": buf, "sack": int(sack),
            "goodput_gbps": " ".join(f"{x:.3f}" for x in r[:n]), "q_mean": r[n], "q_p99": r[n + 1],
            "drops": r[n + 2], "retx": r[n + 3], "ns3_version": ver}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(HERE / "bbr_dumbbell_ns3.csv"))
    ap.add_argument("--seconds", type=float, default=0.200)
    ap.add_argument("--warmup", type=float, default=0.100)
    ap.add_argument("--cases", nargs="*", default=list(CASES))
    ap.add_argument("--worker", nargs=5, metavar=("CCS", "BUF", "SACK", "SECONDS", "WARMUP"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        ccs, buf, sack, s, w = a.worker
        print("RESULT " + json.dumps(run_case(ccs, int(buf), sack == "1", float(s), float(w))), flush=True)
        return
    t0 = time.time()
    rows = []
    for name in a.cases:
        ccs, buf = CASES[name]
        for sack in (0, 1):
            cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", ccs, str(buf), str(sack), repr(a.seconds), repr(a.warmup)]
            p = subprocess.run(cmd, capture_output=True, text=True, cwd=HERE)
            lines = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
            if p.returncode != 0 or not lines:
                raise RuntimeError(f"{name} failed (rc {p.returncode}):\n{p.stderr[-3000:]}")
            r = {"case": name, **json.loads(lines[-1][len("RESULT "):])}
            rows.append(r)
            print(r, flush=True)
    out = Path(a.out)
    with out.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=COLUMNS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
    print(f"wrote {out} ({len(rows)} runs, {time.time() - t0:.0f} s wall)")


if __name__ == "__main__":
    main()
