// ns-3 side of netheat's packet-engine cross-check (validation/crosscheck_ns3.py).
//
// One switch (an IPv4 router: forwarding is instantaneous, like netheat's
// switch with zero switching delay) and N+1 hosts on point-to-point links of
// 10 Gbps with 1 us propagation each. Host i (1..N) sends BYTES to host 0 over
// TCP (no SACK, no timestamps, an ACK per segment, MSS 1460, initial window
// 10), all starting at t = 0: NewReno by default, or DCTCP (ns-3's TcpDctcp,
// g = 1/16, ECT(0), the receiver echoing marks as RFC 8257). The switch's port
// towards host 0 holds BUFFER bytes: with NewReno a drop-tail device queue
// (the traffic-control layer is removed, so the device queue is the only
// one); with DCTCP a RED queue disc used as DCTCP's step marker (weight 1,
// i.e. the instantaneous queue; MinTh = MaxTh = K bytes, not gentle, marking
// instead of dropping above K, dropping only when BUFFER is full) over a
// one-packet device queue. Host NIC queues never drop.
//
// Usage: netheat_ns3 SENDERS BYTES BUFFER_BYTES RTO_MIN_S [newreno|dctcp K_BYTES]
// Prints one line per flow: "flow <i> fct_s <t>" (last byte delivered to
// host 0's application, from t = 0), then "wall_s <s>" and "events <n>", and
// for the bottleneck port "marks", "drops", "mean_queue_bytes" (sampled every
// microsecond until the last flow completes) and "max_queue_bytes"; with DCTCP
// also "alpha_updates" and "alpha_mean", the senders' alpha after each update
// (TcpDctcp's CongestionEstimate trace), averaged over all updates.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace ns3;

static std::vector<uint64_t> g_rx;
static std::vector<double> g_done;
static uint64_t g_bytes = 0;
static uint32_t g_left = 0;

// The bottleneck's backlog: queue disc (DCTCP) plus device queue, sampled every microsecond.
static Ptr<QueueDisc> g_qdisc;
static Ptr<Queue<Packet>> g_devq;
static double g_area = 0; // byte-samples
static uint64_t g_samples = 0;
static uint64_t g_max = 0;

static void
Sample()
{
    uint64_t q = g_devq->GetNBytes() + (g_qdisc ? g_qdisc->GetNBytes() : 0);
    g_area += q;
    g_samples++;
    g_max = std::max(g_max, q);
    if (g_left > 0)
    {
        Simulator::Schedule(MicroSeconds(1), &Sample);
    }
}

// DCTCP's estimate: every sender's alpha after each of its updates (one per
// observation window of about an RTT), summed for the mean over updates.
static double g_alpha_sum = 0;
static uint64_t g_alpha_updates = 0;

static void
OnAlpha(uint32_t, uint32_t, double alpha)
{
    g_alpha_sum += alpha;
    g_alpha_updates++;
}

// The senders' sockets exist once their applications have started.
static void
ConnectAlpha()
{
    if (!Config::ConnectWithoutContextFailSafe(
            "/NodeList/*/$ns3::TcpL4Protocol/SocketList/*/CongestionOps/$ns3::TcpDctcp/CongestionEstimate",
            MakeCallback(&OnAlpha)))
    {
        std::fprintf(stderr, "no DCTCP socket to trace alpha on\n");
        std::exit(1);
    }
}

static void
OnRx(uint32_t flow, Ptr<const Packet> p, const Address&)
{
    g_rx[flow] += p->GetSize();
    if (g_rx[flow] >= g_bytes && g_done[flow] < 0)
    {
        g_done[flow] = Simulator::Now().GetSeconds();
        g_left--;
    }
}

int
main(int argc, char* argv[])
{
    if (argc < 5)
    {
        std::fprintf(stderr, "usage: %s SENDERS BYTES BUFFER_BYTES RTO_MIN_S [newreno|dctcp K_BYTES]\n", argv[0]);
        return 2;
    }
    uint32_t n = std::atoi(argv[1]);
    g_bytes = std::strtoull(argv[2], nullptr, 10);
    uint64_t buffer = std::strtoull(argv[3], nullptr, 10);
    double rtoMin = std::atof(argv[4]);
    std::string transport = argc > 5 ? argv[5] : "newreno";
    uint64_t k = argc > 6 ? std::strtoull(argv[6], nullptr, 10) : 0;
    bool dctcp = transport == "dctcp";
    if (!dctcp && transport != "newreno")
    {
        std::fprintf(stderr, "transport must be newreno or dctcp, got %s\n", transport.c_str());
        return 2;
    }
    double rate = 10e9;
    double delay = 1e-6;

    Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       TypeIdValue(dctcp ? TcpDctcp::GetTypeId() : TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1460));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 26));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 26));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(rtoMin)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MicroSeconds(1)));

    NodeContainer sw;
    sw.Create(1);
    NodeContainer hosts;
    hosts.Create(n + 1);
    InternetStackHelper stack;
    stack.Install(sw);
    stack.Install(hosts);

    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(static_cast<uint64_t>(rate))));
    p2p.SetChannelAttribute("Delay", TimeValue(Seconds(delay)));
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::BYTES, buffer)));

    Ipv4AddressHelper addr;
    std::vector<Ipv4Address> hostAddr;
    TrafficControlHelper tch;
    for (uint32_t i = 0; i <= n; ++i)
    {
        NetDeviceContainer d = p2p.Install(hosts.Get(i), sw.Get(0));
        // Only switch ports have BUFFER: a host's NIC queue never drops
        // (netheat's hosts queue without limit).
        d.Get(0)->GetObject<PointToPointNetDevice>()->GetQueue()->SetMaxSize(
            QueueSize(QueueSizeUnit::BYTES, 1u << 30));
        char base[32];
        std::snprintf(base, sizeof base, "10.%u.%u.0", (i >> 8) & 255, i & 255);
        addr.SetBase(base, "255.255.255.0");
        Ipv4InterfaceContainer ifs = addr.Assign(d);
        tch.Uninstall(d); // queue discs exist once the interfaces do
        hostAddr.push_back(ifs.GetAddress(0));
        if (i == 0)
        {
            Ptr<PointToPointNetDevice> port = d.Get(1)->GetObject<PointToPointNetDevice>();
            g_devq = port->GetQueue();
            if (dctcp)
            {
                // The marking queue disc holds the buffer; the device keeps one packet.
                g_devq->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, 1));
                TrafficControlHelper red;
                red.SetRootQueueDisc("ns3::RedQueueDisc",
                                     "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::BYTES, buffer)),
                                     "MinTh", DoubleValue(static_cast<double>(k)),
                                     "MaxTh", DoubleValue(static_cast<double>(k)),
                                     "QW", DoubleValue(1.0),
                                     "Gentle", BooleanValue(false),
                                     "UseEcn", BooleanValue(true),
                                     "UseHardDrop", BooleanValue(false),
                                     "MeanPktSize", UintegerValue(1500));
                g_qdisc = red.Install(d.Get(1)).Get(0);
            }
        }
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    g_rx.assign(n, 0);
    g_done.assign(n, -1.0);
    g_left = n;
    Simulator::ScheduleNow(&Sample);
    for (uint32_t f = 0; f < n; ++f)
    {
        uint16_t port = 5000 + f;
        PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer s = sink.Install(hosts.Get(0));
        s.Start(Seconds(0.0));
        s.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRx, f));
        BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(hostAddr[0], port));
        src.SetAttribute("MaxBytes", UintegerValue(g_bytes));
        src.SetAttribute("SendSize", UintegerValue(1460));
        ApplicationContainer a = src.Install(hosts.Get(f + 1));
        a.Start(Seconds(0.0));
    }

    if (dctcp)
    {
        Simulator::Schedule(NanoSeconds(1), &ConnectAlpha);
    }
    auto t0 = std::chrono::steady_clock::now();
    Simulator::Stop(Seconds(100.0));
    Simulator::Run();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    uint64_t events = Simulator::GetEventCount();
    for (uint32_t f = 0; f < n; ++f)
    {
        std::printf("flow %u fct_s %.9f\n", f, g_done[f]);
    }
    std::printf("wall_s %.6f\nevents %llu\n", wall, static_cast<unsigned long long>(events));
    uint64_t marks = 0;
    uint64_t drops = g_devq->GetTotalDroppedPackets();
    if (g_qdisc)
    {
        QueueDisc::Stats st = g_qdisc->GetStats();
        marks = st.nTotalMarkedPackets;
        drops += st.nTotalDroppedPackets;
    }
    std::printf("marks %llu\ndrops %llu\nmean_queue_bytes %.1f\nmax_queue_bytes %llu\n",
                static_cast<unsigned long long>(marks), static_cast<unsigned long long>(drops),
                g_samples ? g_area / g_samples : 0.0, static_cast<unsigned long long>(g_max));
    if (dctcp)
    {
        std::printf("alpha_updates %llu\nalpha_mean %.6f\n", static_cast<unsigned long long>(g_alpha_updates),
                    g_alpha_updates ? g_alpha_sum / g_alpha_updates : 0.0);
    }
    Simulator::Destroy();
    return 0;
}
