// ns-3 side of netheat's packet-engine cross-check (validation/crosscheck_ns3.py).
//
// One switch (an IPv4 router: forwarding is instantaneous, like netheat's
// switch with zero switching delay) and N+1 hosts on point-to-point links of
// RATE with DELAY propagation each. Host i (1..N) sends BYTES to host 0 over
// TCP NewReno (no SACK, no timestamps, an ACK per segment, MSS 1460, initial
// window 10), all starting at t = 0. The switch's port towards host 0 is a
// drop-tail queue of BUFFER bytes (the traffic-control layer is removed, so
// the device queue is the only one); host NIC queues never drop.
//
// Usage: netheat_ns3 SENDERS BYTES BUFFER_BYTES RTO_MIN_S [RATE_BPS] [DELAY_S]
// Prints one line per flow: "flow <i> fct_s <t>" (last byte delivered to
// host 0's application, from t = 0), then "wall_s <s>" and "events <n>".

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

static void
OnRx(uint32_t flow, Ptr<const Packet> p, const Address&)
{
    g_rx[flow] += p->GetSize();
    if (g_rx[flow] >= g_bytes && g_done[flow] < 0)
    {
        g_done[flow] = Simulator::Now().GetSeconds();
    }
}

int
main(int argc, char* argv[])
{
    if (argc < 5)
    {
        std::fprintf(stderr, "usage: %s SENDERS BYTES BUFFER_BYTES RTO_MIN_S [RATE_BPS] [DELAY_S]\n", argv[0]);
        return 2;
    }
    uint32_t n = std::atoi(argv[1]);
    g_bytes = std::strtoull(argv[2], nullptr, 10);
    uint64_t buffer = std::strtoull(argv[3], nullptr, 10);
    double rtoMin = std::atof(argv[4]);
    double rate = argc > 5 ? std::atof(argv[5]) : 10e9;
    double delay = argc > 6 ? std::atof(argv[6]) : 1e-6;

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
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
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    g_rx.assign(n, 0);
    g_done.assign(n, -1.0);
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
    Simulator::Destroy();
    return 0;
}
