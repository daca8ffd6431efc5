#!/usr/bin/env python3
"""ns-3 (3.44, pip wheel `ns3`, cppyy bindings) peer of dcnsim's tests/test_rate_laws.py.

One long TCP flow host0 -> switch -> host1, both links 10 Gbit/s with 250 us one-way delay
(base RTT 1 ms), 1460 B payloads, an ACK for every segment, and at the switch egress toward
host1 a 100 MB FIFO that CE-marks every ECN-capable packet independently with a fixed
probability p (Bernoulli, whatever the queue holds). Congestion controls: TcpDctcp (its own
ECN mode), TcpNewReno and TcpCubic with classic ECN (RFC 3168, UseEcn = On).

Measured after a warm-up: goodput (payload bytes delivered to the sink / 1460 / time), the
time-weighted mean of the sender's CongestionWindow trace (segments), the marked fraction
(marks / ECN-capable packets through the marker), and a few diagnostics (time share in the
CWR state, CWR entries per second, retransmissions, mean smoothed RTT, host0 queue).

The simulation itself is C++ (cppyy.cppdef, below); Python only drives it. Each (cc, p)
case runs in its own process (`--worker`), `-j` of them at a time.

    python fixed_p_ecn.py --out fixed_p_ecn_ns3.csv          # full grid, -j 2
    python fixed_p_ecn.py --quick --out /tmp/quick.csv       # short runs, smoke test
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
MSS = 1460
RTT_S = 1e-3
CCS = ("dctcp", "newreno", "cubic")
PS = (0.001, 0.003, 0.01, 0.03, 0.05)

# (simulated seconds, warm-up seconds). Reno and Cubic as in dcnsim's test (20 s, skip 2).
# DCTCP as in the test (3 s, skip 1) except at small p: alpha starts at 1, so the first
# marks halve the window, which then climbs by about 0.4 segment per RTT (it grows only
# outside CWR rounds) toward ~1.4/p; at p = 0.001 that takes ~5 s (FIXEDP_TRACE=0.25 shows it).
def duration(cc: str, p: float, quick: bool = False) -> tuple[float, float]:
    if quick:
        return (1.5, 0.5) if cc == "dctcp" else (3.0, 1.0)
    if cc == "dctcp":
        return (10.0, 6.0) if p < 0.002 else (4.0, 2.0) if p < 0.005 else (3.0, 1.0)
    return (20.0, 2.0)


COLUMNS = [
    "cc", "p", "rtt_s", "seconds", "warmup_s", "goodput_pps", "mean_cwnd_segments",
    "marked_fraction", "ns3_version",
    # diagnostics (not in the dcnsim csv)
    "marks", "ect_packets", "cwr_time_fraction", "cwr_entries_per_s", "retransmissions",
    "rto_or_recovery_entries", "mean_srtt_s", "max_host0_queue_pkts", "switch_drops", "ns3_run",
    "wall_s",
]

CPP = r"""
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/applications-module.h"
#include "ns3/traffic-control-module.h"

namespace ns3 {

// A FIFO that CE-marks every packet with probability p (Bernoulli, independent of the
// queue), through QueueDisc::Mark (which only succeeds on ECT(0)/ECT(1) packets).
class FixedPMarkQueueDisc : public QueueDisc
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid =
            TypeId("ns3::FixedPMarkQueueDisc")
                .SetParent<QueueDisc>()
                .SetGroupName("TrafficControl")
                .AddConstructor<FixedPMarkQueueDisc>()
                .AddAttribute("MaxSize", "The max queue size",
                              QueueSizeValue(QueueSize("100MB")),
                              MakeQueueSizeAccessor(&QueueDisc::SetMaxSize,
                                                    &QueueDisc::GetMaxSize),
                              MakeQueueSizeChecker())
                .AddAttribute("P", "Marking probability", DoubleValue(0.0),
                              MakeDoubleAccessor(&FixedPMarkQueueDisc::m_p),
                              MakeDoubleChecker<double>(0.0, 1.0));
        return tid;
    }
    FixedPMarkQueueDisc() : QueueDisc(QueueDiscSizePolicy::SINGLE_INTERNAL_QUEUE)
    {
        m_uv = CreateObject<UniformRandomVariable>();
    }
    void SetStream(int64_t s) { m_uv->SetStream(s); }
    void ResetCounters() { m_ect = 0; m_marks = 0; m_all = 0; }
    uint64_t m_ect = 0;   // ECN-capable packets enqueued
    uint64_t m_marks = 0; // of which CE-marked here
    uint64_t m_all = 0;   // all packets enqueued
    double m_p = 0.0;

  private:
    bool DoEnqueue(Ptr<QueueDiscItem> item) override
    {
        if (GetCurrentSize() + item > GetMaxSize())
        {
            DropBeforeEnqueue(item, "Queue full");
            return false;
        }
        m_all++;
        double u = m_uv->GetValue(); // one draw per packet, whatever it is
        Ptr<Ipv4QueueDiscItem> ip = DynamicCast<Ipv4QueueDiscItem>(item);
        if (ip && ip->GetHeader().GetEcn() != Ipv4Header::ECN_NotECT)
        {
            m_ect++;
            if (u < m_p && Mark(item, "Fixed-p mark"))
            {
                m_marks++;
            }
        }
        return GetInternalQueue(0)->Enqueue(item);
    }
    Ptr<QueueDiscItem> DoDequeue() override { return GetInternalQueue(0)->Dequeue(); }
    Ptr<const QueueDiscItem> DoPeek() override { return GetInternalQueue(0)->Peek(); }
    bool CheckConfig() override
    {
        if (GetNInternalQueues() == 0)
        {
            AddInternalQueue(CreateObjectWithAttributes<DropTailQueue<QueueDiscItem>>(
                "MaxSize", QueueSizeValue(GetMaxSize())));
        }
        return GetNInternalQueues() == 1 && GetNQueueDiscClasses() == 0;
    }
    void InitializeParams() override {}

    Ptr<UniformRandomVariable> m_uv;
};

struct FixedPResult
{
    double goodput_pps = 0, mean_cwnd_segments = 0, marked_fraction = 0;
    double marks = 0, ect = 0, cwr_time_fraction = 0, cwr_entries_per_s = 0;
    double retransmissions = 0, rto_or_recovery_entries = 0, mean_srtt_s = 0;
    double max_host0_queue_pkts = 0, switch_drops = 0;
};

namespace fixedp {
struct State
{
    double warmup = 0;
    bool measuring = false;
    // cwnd, time-weighted
    double cwnd = 0, lastCwndT = 0, cwndArea = 0;
    // smoothed RTT, time-weighted
    double srtt = 0, lastSrttT = 0, srttArea = 0;
    // congestion state
    int cong = 0;
    double lastCongT = 0, cwrTime = 0;
    uint64_t cwrEntries = 0, otherEntries = 0, retx = 0;
    uint64_t rx0 = 0;
    uint32_t maxQ0 = 0;
};
static State g;

static double NowS() { return Simulator::Now().GetSeconds(); }

static void OnCwnd(uint32_t, uint32_t v)
{
    double t = NowS();
    if (g.measuring) g.cwndArea += g.cwnd * (t - g.lastCwndT);
    g.cwnd = v;
    g.lastCwndT = t;
}
static void OnRtt(Time, Time v)
{
    double t = NowS();
    if (g.measuring) g.srttArea += g.srtt * (t - g.lastSrttT);
    g.srtt = v.GetSeconds();
    g.lastSrttT = t;
}
static void OnCong(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t s)
{
    double t = NowS();
    if (g.measuring && g.cong == TcpSocketState::CA_CWR) g.cwrTime += t - g.lastCongT;
    if (g.measuring && s == TcpSocketState::CA_CWR) g.cwrEntries++;
    if (g.measuring && (s == TcpSocketState::CA_RECOVERY || s == TcpSocketState::CA_LOSS))
        g.otherEntries++;
    g.cong = s;
    g.lastCongT = t;
}
static void OnRetx(Ptr<const Packet>, const TcpHeader&, const Address&, const Address&,
                   Ptr<const TcpSocketBase>)
{
    if (g.measuring) g.retx++;
}
static double g_traceEvery = 0; // > 0: print t, cwnd, srtt to stderr every this many s
static void Sample()
{
    std::cerr << "TRACE " << NowS() << " " << g.cwnd / 1460.0 << " " << g.srtt << std::endl;
    Simulator::Schedule(Seconds(g_traceEvery), &Sample);
}
static void OnQ0(uint32_t, uint32_t v)
{
    if (g.measuring && v > g.maxQ0) g.maxQ0 = v;
}
} // namespace fixedp

FixedPResult RunFixedP(std::string cc, double p, double seconds, double warmup, uint32_t run,
                       double traceEvery)
{
    using namespace fixedp;
    g = State();
    g.warmup = warmup;
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(run);
    FixedPMarkQueueDisc::GetTypeId(); // register the TypeId (no static initialisers in cling)

    std::string tcpType = cc == "dctcp" ? "ns3::TcpDctcp"
                        : cc == "newreno" ? "ns3::TcpNewReno"
                        : cc == "cubic" ? "ns3::TcpCubic" : "";
    NS_ABORT_MSG_IF(tcpType.empty(), "unknown cc " << cc);
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue(tcpType));
    // Classic ECN for NewReno/Cubic; TcpDctcp::Init switches its sockets to DctcpEcn anyway.
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue("On"));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1460));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false)); // 20 B TCP header
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(64u << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(64u << 20));

    NodeContainer nodes;
    nodes.Create(3); // 0 = host0, 1 = switch, 2 = host1
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue("10Gbps"));
    p2p.SetChannelAttribute("Delay", StringValue("250us"));
    p2p.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
    NetDeviceContainer d01 = p2p.Install(nodes.Get(0), nodes.Get(1));
    NetDeviceContainer d12 = p2p.Install(nodes.Get(1), nodes.Get(2));

    InternetStackHelper stack;
    stack.Install(nodes);

    // Queue discs before addresses (so Ipv4AddressHelper does not put its default
    // fq_codel there): plain 100 MB FIFOs everywhere, the marker at switch -> host1.
    TrafficControlHelper fifo;
    fifo.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue("100MB"));
    QueueDiscContainer q01 = fifo.Install(d01);              // host0 egress, switch -> host0
    fifo.Install(d12.Get(1));                                // host1 egress (ACKs)
    TrafficControlHelper marker;
    marker.SetRootQueueDisc("ns3::FixedPMarkQueueDisc", "MaxSize", StringValue("100MB"),
                            "P", DoubleValue(p));
    QueueDiscContainer qm = marker.Install(d12.Get(0));      // switch -> host1
    Ptr<FixedPMarkQueueDisc> mq = DynamicCast<FixedPMarkQueueDisc>(qm.Get(0));
    mq->SetStream(1000 + run);

    Ipv4AddressHelper addr;
    addr.SetBase("10.0.1.0", "255.255.255.0");
    addr.Assign(d01);
    addr.SetBase("10.0.2.0", "255.255.255.0");
    Ipv4InterfaceContainer i12 = addr.Assign(d12);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    uint16_t port = 5000;
    PacketSinkHelper sinkH("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sinkApp = sinkH.Install(nodes.Get(2));
    sinkApp.Start(Seconds(0));
    Ptr<PacketSink> sink = DynamicCast<PacketSink>(sinkApp.Get(0));
    BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(i12.GetAddress(1), port));
    src.SetAttribute("MaxBytes", UintegerValue(0));
    src.SetAttribute("SendSize", UintegerValue(1460 * 64));
    ApplicationContainer srcApp = src.Install(nodes.Get(0));
    srcApp.Start(Seconds(0.001));

    Simulator::Schedule(Seconds(0.0015), [] {
        std::string s = "/NodeList/0/$ns3::TcpL4Protocol/SocketList/0/";
        Config::ConnectWithoutContext(s + "CongestionWindow", MakeCallback(&OnCwnd));
        Config::ConnectWithoutContext(s + "RTT", MakeCallback(&OnRtt));
        Config::ConnectWithoutContext(s + "CongState", MakeCallback(&OnCong));
        Config::ConnectWithoutContext(s + "Retransmission", MakeCallback(&OnRetx));
    });
    q01.Get(0)->TraceConnectWithoutContext("PacketsInQueue", MakeCallback(&OnQ0));

    Simulator::Schedule(Seconds(warmup), [sink, mq] {
        double t = NowS();
        g.measuring = true;
        g.lastCwndT = g.lastSrttT = g.lastCongT = t;
        g.rx0 = sink->GetTotalRx();
        mq->ResetCounters();
    });
    g_traceEvery = traceEvery;
    if (traceEvery > 0) Simulator::Schedule(Seconds(traceEvery), &Sample);
    Simulator::Stop(Seconds(seconds));
    Simulator::Run();

    double t = NowS();
    g.cwndArea += g.cwnd * (t - g.lastCwndT);
    g.srttArea += g.srtt * (t - g.lastSrttT);
    if (g.cong == TcpSocketState::CA_CWR) g.cwrTime += t - g.lastCongT;
    double span = seconds - warmup;

    FixedPResult r;
    r.goodput_pps = double(sink->GetTotalRx() - g.rx0) / 1460.0 / span;
    r.mean_cwnd_segments = g.cwndArea / span / 1460.0;
    r.marks = double(mq->m_marks);
    r.ect = double(mq->m_ect);
    r.marked_fraction = mq->m_ect ? double(mq->m_marks) / double(mq->m_ect) : 0.0;
    r.cwr_time_fraction = g.cwrTime / span;
    r.cwr_entries_per_s = double(g.cwrEntries) / span;
    r.retransmissions = double(g.retx);
    r.rto_or_recovery_entries = double(g.otherEntries);
    r.mean_srtt_s = g.srttArea / span;
    r.max_host0_queue_pkts = double(g.maxQ0);
    r.switch_drops = double(mq->GetStats().nTotalDroppedPackets);
    Simulator::Destroy();
    return r;
}

} // namespace ns3
"""


def run_case(cc: str, p: float, seconds: float, warmup: float, run: int = 1) -> dict:
    """Runs one case in this process (imports ns-3: ~15-20 s of start-up)."""
    t0 = time.time()
    from ns import ns  # noqa: F401  (loads the ns-3 libraries and headers into cppyy)
    import cppyy

    cppyy.cppdef(CPP)
    trace = float(os.environ.get("FIXEDP_TRACE", "0"))  # debugging: cwnd samples on stderr
    r = cppyy.gbl.ns3.RunFixedP(cc, p, seconds, warmup, run, trace)
    try:
        from importlib.metadata import version
        ver = version("ns3")
    except Exception:  # pragma: no cover
        ver = "3.44"
    return {
        "cc": cc, "p": p, "rtt_s": RTT_S, "seconds": seconds, "warmup_s": warmup,
        "goodput_pps": r.goodput_pps, "mean_cwnd_segments": r.mean_cwnd_segments,
        "marked_fraction": r.marked_fraction, "ns3_version": ver,
        "marks": int(r.marks), "ect_packets": int(r.ect),
        "cwr_time_fraction": r.cwr_time_fraction, "cwr_entries_per_s": r.cwr_entries_per_s,
        "retransmissions": int(r.retransmissions),
        "rto_or_recovery_entries": int(r.rto_or_recovery_entries),
        "mean_srtt_s": r.mean_srtt_s, "max_host0_queue_pkts": int(r.max_host0_queue_pkts),
        "switch_drops": int(r.switch_drops), "ns3_run": run, "wall_s": round(time.time() - t0, 1),
    }


def _spawn(cc: str, p: float, seconds: float, warmup: float, run: int) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--run", str(run), "--worker", cc,
           repr(p), repr(seconds), repr(warmup)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    lines = [l for l in out.stdout.splitlines() if l.startswith("RESULT ")]
    if out.returncode != 0 or not lines:
        raise RuntimeError(f"{cc} p={p} failed (rc {out.returncode}):\n{out.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT "):])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(HERE / "fixed_p_ecn_ns3.csv"))
    ap.add_argument("--quick", action="store_true", help="short runs (smoke test)")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--cc", nargs="*", default=list(CCS), choices=CCS)
    ap.add_argument("--p", nargs="*", type=float, default=list(PS))
    ap.add_argument("--run", type=int, default=1,
                    help="ns-3 RngRun; also picks the marker's random stream (1000 + run)")
    ap.add_argument("--worker", nargs=4, metavar=("CC", "P", "SECONDS", "WARMUP"),
                    help=argparse.SUPPRESS)
    a = ap.parse_args()

    if a.worker:
        cc, p, s, w = a.worker
        print("RESULT " + json.dumps(run_case(cc, float(p), float(s), float(w), a.run)), flush=True)
        return

    # longest (most packets) first so the two workers finish together
    cases = [(cc, p) for cc in a.cc for p in a.p]
    cases.sort(key=lambda c: -(duration(*c, a.quick)[0]
                               * (min(1.4 / c[1], 830) if c[0] == "dctcp" else 1.3 / c[1] ** 0.5)))
    t0 = time.time()
    results = []
    with ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = {ex.submit(_spawn, cc, p, *duration(cc, p, a.quick), a.run): (cc, p) for cc, p in cases}
        for f in futs:
            r = f.result()
            results.append(r)
            print(f"{r['cc']:8s} p={r['p']:<6g} goodput {r['goodput_pps']:9.0f} pkt/s  "
                  f"cwnd {r['mean_cwnd_segments']:7.1f}  marked {r['marked_fraction']:.5f}  "
                  f"cwr {r['cwr_time_fraction']:.2f}  wall {r['wall_s']:.0f}s", flush=True)
    results.sort(key=lambda r: (CCS.index(r["cc"]), r["p"]))
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=COLUMNS)
        w.writeheader()
        for r in results:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
    print(f"wrote {out} ({len(results)} cases, {time.time() - t0:.0f} s wall, -j {a.jobs})")


if __name__ == "__main__":
    main()
