#!/usr/bin/env python3
"""ns-3 (3.44, pip wheel `ns3`, cppyy bindings) peer of dcnsim's engine test
`dctcp_matches_the_papers_analysis` (crates/dcnsim-core/src/engine/tests.rs, dctcp_dumbbell(n, k, 20, 10)).

Dumbbell: N senders, each on a 10 Gbit/s, 20 us host link to a left switch; a 10 Gbit/s,
10 us bottleneck to a right switch; a 10 Gbit/s, 20 us link to the receiver (base RTT
~ 2 x 50 us + serialization ~ 103.7 us, BDP ~ 86.5 packets of 1500 B). Step ECN marking at
the bottleneck egress (left switch -> right switch) with ns-3's RedQueueDisc set up as in
examples/tcp/dctcp-example.cc (QW = 1, i.e. the instantaneous queue, UseEcn, UseHardDrop
false, MeanPktSize 1500) with MinTh = MaxTh = K packets and Gentle = false: with Gentle
(ns-3's default) RED would mark only probabilistically between MaxTh and 2 MaxTh, so it is
a step only without it. Then RED CE-marks a packet iff the queue it joins already holds
>= K packets (dcnsim marks when the queue holds more than K x 1500 B, i.e. >= K + 1 packets).
Queue limit 2666 packets (4 MB), 100 MB FIFOs elsewhere, 1-packet device queues.

TcpDctcp on every sender (it switches its sockets to DctcpEcn itself), 1460 B segments
(1500 B IP packets, no timestamps), DelAckCount 1, 64 MB socket buffers, initial cwnd 10,
ns-3's default recovery (TcpPrrRecovery). N long flows start at t = 0; the run lasts 160 ms;
from 60 ms to 160 ms it measures the bottleneck utilisation (IP bytes sent by the bottleneck
device), the RED queue disc's length in packets sampled every 0.5 us (mean, 1st and 99th
percentile, as dcnsim's test does), and the senders' mean DCTCP alpha (each sender's alpha
from TcpDctcp's CongestionEstimate trace, averaged over senders and over the same samples).

Each case runs in its own process (`--worker`), one at a time.

    /work/ns3-venv/bin/python dctcp_step_dumbbell.py        # writes dctcp_step_dumbbell_ns3.csv
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES = ((2, 40), (4, 40), (8, 65))
COLUMNS = ["n", "k", "util", "q_mean", "q_p1", "q_p99", "alpha_mean", "ns3_version"]

CPP = r"""
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/applications-module.h"
#include "ns3/traffic-control-module.h"
#include <algorithm>
#include <vector>

namespace ns3 {

struct DctcpStepResult
{
    double util = 0, q_mean = 0, q_p1 = 0, q_p99 = 0, alpha_mean = 0;
    // diagnostics
    double qdev_mean = 0, q_max = 0, q_min = 0, marked_fraction = 0, cwr_time_fraction = 0;
    double cwr_entries_per_flow_per_ms = 0, retransmissions = 0, drops = 0, goodput_gbps = 0;
    double mean_srtt_us = 0, alpha_updates = 0, cwr_reentry_fraction = 0;
};

namespace dstep {
struct State
{
    uint32_t n = 0;
    bool measuring = false;
    std::vector<double> alpha;          // latest alpha per sender
    std::vector<int> cong;              // congestion state per sender
    std::vector<double> congT;
    std::vector<double> srtt, srttT, srttArea;
    double cwrTime = 0;
    uint64_t cwrEntries = 0, cwrReentries = 0, retx = 0, alphaUpdates = 0;
    std::vector<double> cwrExitT;       // when each sender last left CA_CWR
    uint64_t txIpBytes = 0;
    std::vector<double> qs;             // queue disc packets, every 0.5 us
    double qdevSum = 0;                 // queue disc + device queue packets
    double alphaSum = 0;
    Ptr<QueueDisc> red;
    Ptr<Queue<Packet>> devq;
};
static State g;
static double NowS() { return Simulator::Now().GetSeconds(); }

static void OnAlpha(uint32_t i, uint32_t, uint32_t, double a)
{
    g.alpha[i] = a;
    if (g.measuring) g.alphaUpdates++;
}
static void OnCong(uint32_t i, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t s)
{
    double t = NowS();
    if (g.measuring && g.cong[i] == TcpSocketState::CA_CWR) g.cwrTime += t - g.congT[i];
    if (g.cong[i] == TcpSocketState::CA_CWR && s != TcpSocketState::CA_CWR) g.cwrExitT[i] = t;
    if (g.measuring && s == TcpSocketState::CA_CWR)
    {
        g.cwrEntries++;
        if (g.cwrExitT[i] == t) g.cwrReentries++; // left CWR and re-entered on the same ACK (ECE still set)
    }
    g.cong[i] = s;
    g.congT[i] = t;
}
static void OnRtt(uint32_t i, Time, Time v)
{
    double t = NowS();
    if (g.measuring) g.srttArea[i] += g.srtt[i] * (t - g.srttT[i]);
    g.srtt[i] = v.GetSeconds();
    g.srttT[i] = t;
}
static void OnRetx(Ptr<const Packet>, const TcpHeader&, const Address&, const Address&,
                   Ptr<const TcpSocketBase>)
{
    if (g.measuring) g.retx++;
}
static void OnPhyTx(Ptr<const Packet> p)
{
    if (g.measuring) g.txIpBytes += p->GetSize() - 2; // less the 2 B PPP header
}
static void Sample(double step, double end)
{
    double t = NowS();
    uint32_t q = g.red->GetNPackets();
    g.qs.push_back(q);
    g.qdevSum += q + g.devq->GetNPackets();
    double a = 0;
    for (double x : g.alpha) a += x;
    g.alphaSum += a / g.n;
    if (t + step <= end + 1e-12) Simulator::Schedule(Seconds(step), &Sample, step, end);
}
} // namespace dstep

DctcpStepResult RunDctcpStep(uint32_t n, uint32_t k, double seconds, double warmup)
{
    using namespace dstep;
    g = State();
    g.n = n;
    g.alpha.assign(n, 1.0); // TcpDctcp's DctcpAlphaOnInit
    g.cong.assign(n, 0);
    g.congT.assign(n, 0.0);
    g.cwrExitT.assign(n, -1.0);
    g.srtt.assign(n, 0.0);
    g.srttT.assign(n, 0.0);
    g.srttArea.assign(n, 0.0);
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(1);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue("ns3::TcpDctcp"));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1460));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false)); // 20 B TCP header
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(64u << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(64u << 20));

    // 0..n-1 senders, n = left switch, n+1 = right switch, n+2 = receiver
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

    // Queue discs before addresses (else Ipv4AddressHelper installs fq_codel): 100 MB FIFOs
    // everywhere, step-marking RED on the bottleneck egress left -> right.
    TrafficControlHelper fifo;
    fifo.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue("100MB"));
    for (auto& c : hd) fifo.Install(c);
    fifo.Install(bd.Get(1));
    fifo.Install(rd);
    TrafficControlHelper red;
    red.SetRootQueueDisc("ns3::RedQueueDisc",
                         "MaxSize", QueueSizeValue(QueueSize("2666p")), // 4 MB
                         "MeanPktSize", UintegerValue(1500),
                         "QW", DoubleValue(1.0),
                         "MinTh", DoubleValue(k),
                         "MaxTh", DoubleValue(k),
                         "Gentle", BooleanValue(false),
                         "UseEcn", BooleanValue(true),
                         "UseHardDrop", BooleanValue(false),
                         "LinkBandwidth", StringValue("10Gbps"),
                         "LinkDelay", StringValue("10us"));
    QueueDiscContainer rq = red.Install(bd.Get(0));
    g.red = rq.Get(0);
    g.devq = DynamicCast<PointToPointNetDevice>(bd.Get(0))->GetQueue();

    Ipv4AddressHelper addr;
    for (uint32_t i = 0; i < n; i++)
    {
        std::ostringstream base;
        base << "10.1." << i + 1 << ".0";
        addr.SetBase(base.str().c_str(), "255.255.255.0");
        addr.Assign(hd[i]);
    }
    addr.SetBase("10.2.0.0", "255.255.255.0");
    addr.Assign(bd);
    addr.SetBase("10.3.0.0", "255.255.255.0");
    Ipv4InterfaceContainer ri = addr.Assign(rd);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    uint16_t port = 5000;
    PacketSinkHelper sinkH("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sinkApp = sinkH.Install(recv);
    sinkApp.Start(Seconds(0));
    Ptr<PacketSink> sink = DynamicCast<PacketSink>(sinkApp.Get(0));
    BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(ri.GetAddress(1), port));
    src.SetAttribute("MaxBytes", UintegerValue(0));
    src.SetAttribute("SendSize", UintegerValue(1460 * 64));
    std::vector<Ptr<BulkSendApplication>> apps;
    for (uint32_t i = 0; i < n; i++)
    {
        ApplicationContainer a = src.Install(nodes.Get(i));
        a.Start(Seconds(0));
        apps.push_back(DynamicCast<BulkSendApplication>(a.Get(0)));
    }

    // Hook the senders' sockets and DCTCP objects once the applications have created them.
    Simulator::Schedule(NanoSeconds(1), [apps, n] {
        for (uint32_t i = 0; i < n; i++)
        {
            Ptr<TcpSocketBase> s = DynamicCast<TcpSocketBase>(apps[i]->GetSocket());
            NS_ABORT_MSG_IF(!s, "no TCP socket on sender " << i);
            PointerValue pv;
            s->GetAttribute("CongestionOps", pv);
            Ptr<TcpDctcp> d = DynamicCast<TcpDctcp>(pv.Get<TcpCongestionOps>());
            NS_ABORT_MSG_IF(!d, "sender " << i << " does not run TcpDctcp");
            d->TraceConnectWithoutContext("CongestionEstimate", MakeBoundCallback(&OnAlpha, i));
            s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCong, i));
            s->TraceConnectWithoutContext("RTT", MakeBoundCallback(&OnRtt, i));
            s->TraceConnectWithoutContext("Retransmission", MakeCallback(&OnRetx));
        }
    });
    bd.Get(0)->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&OnPhyTx));

    double step = 0.5e-6;
    uint64_t rx0 = 0;
    uint64_t marks0 = 0, enq0 = 0, drops0 = 0;
    Simulator::Schedule(Seconds(warmup), [&] {
        double t = NowS();
        g.measuring = true;
        for (uint32_t i = 0; i < n; i++) g.congT[i] = g.srttT[i] = t;
        rx0 = sink->GetTotalRx();
        QueueDisc::Stats st = g.red->GetStats();
        marks0 = st.nTotalMarkedPackets;
        enq0 = st.nTotalEnqueuedPackets;
        drops0 = st.nTotalDroppedPackets;
        Simulator::Schedule(Seconds(step), &Sample, step, seconds);
    });
    Simulator::Stop(Seconds(seconds) + NanoSeconds(1));
    Simulator::Run();

    double t = seconds;
    double span = seconds - warmup;
    DctcpStepResult r;
    for (uint32_t i = 0; i < n; i++)
    {
        if (g.cong[i] == TcpSocketState::CA_CWR) g.cwrTime += t - g.congT[i];
        g.srttArea[i] += g.srtt[i] * (t - g.srttT[i]);
        r.mean_srtt_us += g.srttArea[i] / span / n * 1e6;
    }
    std::vector<double>& qs = g.qs;
    double ns = qs.size();
    double sum = 0;
    for (double q : qs) sum += q;
    r.q_mean = sum / ns;
    r.qdev_mean = g.qdevSum / ns;
    r.alpha_mean = g.alphaSum / ns;
    std::sort(qs.begin(), qs.end());
    r.q_p1 = qs[size_t((ns - 1) * 0.01)];
    r.q_p99 = qs[size_t((ns - 1) * 0.99)];
    r.q_min = qs.front();
    r.q_max = qs.back();
    r.util = g.txIpBytes * 8.0 / 10e9 / span;
    r.goodput_gbps = (sink->GetTotalRx() - rx0) * 8.0 / span / 1e9;
    QueueDisc::Stats st = g.red->GetStats();
    double enq = double(st.nTotalEnqueuedPackets - enq0);
    r.marked_fraction = enq > 0 ? double(st.nTotalMarkedPackets - marks0) / enq : 0;
    r.drops = double(st.nTotalDroppedPackets - drops0);
    r.cwr_time_fraction = g.cwrTime / span / n;
    r.cwr_entries_per_flow_per_ms = double(g.cwrEntries) / n / (span * 1e3);
    r.retransmissions = double(g.retx);
    r.alpha_updates = double(g.alphaUpdates);
    r.cwr_reentry_fraction = g.cwrEntries ? double(g.cwrReentries) / g.cwrEntries : 0;
    Simulator::Destroy();
    g.red = nullptr;
    g.devq = nullptr;
    return r;
}

} // namespace ns3
"""


def theory(n: int, k: int) -> dict:
    # base RTT as in dcnsim's test: 3 hops each way, data serialization on 3 links, ACK on 3
    base_rtt = 2 * (2 * 20 + 10) * 1e-6 + 3 * 1500 * 8 / 10e9 + 3 * 64 * 8 / 10e9
    c_rtt = 10e9 * base_rtt / (1500 * 8)
    w = (c_rtt + k) / n
    q_max = k + n
    amp = 0.5 * math.sqrt(2 * n * (c_rtt + k))
    return {"c_rtt": c_rtt, "q_max": q_max, "amp": amp, "q_min": q_max - amp,
            "alpha": math.sqrt(2 / w)}


def run_case(n: int, k: int, seconds: float, warmup: float) -> dict:
    t0 = time.time()
    from ns import ns  # noqa: F401  (loads the ns-3 libraries and headers into cppyy)
    import cppyy

    cppyy.cppdef(CPP)
    r = cppyy.gbl.ns3.RunDctcpStep(n, k, seconds, warmup)
    try:
        from importlib.metadata import version
        ver = version("ns3")
    except Exception:  # pragma: no cover
        ver = "3.44"
    out = {"n": n, "k": k, "util": r.util, "q_mean": r.q_mean, "q_p1": r.q_p1,
           "q_p99": r.q_p99, "alpha_mean": r.alpha_mean, "ns3_version": ver}
    for f in ("qdev_mean", "q_min", "q_max", "marked_fraction", "cwr_time_fraction",
              "cwr_entries_per_flow_per_ms", "retransmissions", "drops", "goodput_gbps",
              "mean_srtt_us", "alpha_updates", "cwr_reentry_fraction"):
        out[f] = getattr(r, f)
    out["wall_s"] = round(time.time() - t0, 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(HERE / "dctcp_step_dumbbell_ns3.csv"))
    ap.add_argument("--seconds", type=float, default=0.160)
    ap.add_argument("--warmup", type=float, default=0.060)
    ap.add_argument("--cases", nargs="*", default=[f"{n}:{k}" for n, k in CASES],
                    help="N:K pairs")
    ap.add_argument("--worker", nargs=4, metavar=("N", "K", "SECONDS", "WARMUP"),
                    help=argparse.SUPPRESS)
    a = ap.parse_args()

    if a.worker:
        n, k, s, w = a.worker
        print("RESULT " + json.dumps(run_case(int(n), int(k), float(s), float(w))), flush=True)
        return

    t0 = time.time()
    results = []
    for c in a.cases:
        n, k = (int(x) for x in c.split(":"))
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", str(n), str(k),
               repr(a.seconds), repr(a.warmup)]
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=HERE)  # the bindings search the cwd for ns-3 builds
        lines = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
        if p.returncode != 0 or not lines:
            raise RuntimeError(f"N={n} K={k} failed (rc {p.returncode}):\n{p.stderr[-3000:]}")
        r = json.loads(lines[-1][len("RESULT "):])
        th = theory(n, k)
        results.append(r)
        print(f"N={n} K={k} C*RTT={th['c_rtt']:.1f} util={r['util']:.4f} q_mean={r['q_mean']:.1f} "
              f"q_p1={r['q_p1']:.0f} q_p99={r['q_p99']:.0f} (theory Qmax={th['q_max']:.1f} "
              f"A={th['amp']:.1f} => [{th['q_min']:.1f}, {th['q_max']:.1f}]) "
              f"alpha={r['alpha_mean']:.3f} (theory {th['alpha']:.3f})", flush=True)
        print(f"    diag: q+devq mean {r['qdev_mean']:.1f}, q min/max {r['q_min']:.0f}/{r['q_max']:.0f}, "
              f"marked {r['marked_fraction']:.4f}, CWR time {r['cwr_time_fraction']:.2f}, "
              f"CWR entries/flow/ms {r['cwr_entries_per_flow_per_ms']:.2f} (re-entered on the exit ACK: "
              f"{r['cwr_reentry_fraction']:.2f}), srtt {r['mean_srtt_us']:.1f} us, "
              f"retx {r['retransmissions']:.0f}, drops {r['drops']:.0f}, goodput {r['goodput_gbps']:.3f} Gb/s, "
              f"alpha updates {r['alpha_updates']:.0f}, wall {r['wall_s']} s", flush=True)
    out = Path(a.out)
    with out.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=COLUMNS, extrasaction="ignore")
        w.writeheader()
        for r in results:
            w.writerow({kk: (f"{v:.6g}" if isinstance(v, float) else v) for kk, v in r.items()})
    print(out.read_text(), end="")
    print(f"wrote {out} ({len(results)} cases, {time.time() - t0:.0f} s wall)")


if __name__ == "__main__":
    main()
