// ns-3 side of netheat's packet-engine speed comparison
// (validation/crosscheck_ns3.py): the 128-host leaf-spine of netheat's
// packet benchmark (8 leaves x 16 hosts, 4 spines, 10 Gbps links, 1 us per
// link) replaying the exact flows netheat simulated (FLOWS.csv written by
// the `leafspine_crosscheck` example: start_s,src,dst,bytes,...) with DCTCP.
// Switch ports: RED queue discs as ECN markers at K = 30 KB (20 packets)
// over a 300 KB (200 packet) buffer; hosts queue without limit. Routing:
// ns-3 global routing with per-flow ECMP is not available, so paths are
// sprayed per packet (RandomEcmpRouting), which netheat's benchmark does
// not do: the workload, topology and transport are the same, the path
// choice is not. Runs until END_S.
//
// Usage: leafspine_ns3 FLOWS.csv END_S [fct]
// With `fct`, also prints `flow i start_s fct_s` per flow (the incast
// completion-time check).
// Prints flows finished (all bytes delivered), wall_s and events.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

struct Flow
{
    double start;
    uint32_t src, dst;
    uint64_t bytes;
};

static std::vector<uint64_t> g_rx;
static std::vector<uint64_t> g_want;
static std::vector<double> g_finish;
static uint32_t g_done = 0;

static void
OnRx(uint32_t flow, Ptr<const Packet> p, const Address&)
{
    bool was = g_rx[flow] >= g_want[flow];
    g_rx[flow] += p->GetSize();
    if (!was && g_rx[flow] >= g_want[flow])
    {
        ++g_done;
        g_finish[flow] = Simulator::Now().GetSeconds();
    }
}

int
main(int argc, char* argv[])
{
    if (argc < 3)
    {
        std::fprintf(stderr, "usage: %s FLOWS.csv END_S [fct]\n", argv[0]);
        return 2;
    }
    std::ifstream in(argv[1]);
    std::string line;
    std::getline(in, line); // header
    std::vector<Flow> flows;
    while (std::getline(in, line))
    {
        std::stringstream ss(line);
        std::string a, b, c, d;
        std::getline(ss, a, ',');
        std::getline(ss, b, ',');
        std::getline(ss, c, ',');
        std::getline(ss, d, ',');
        flows.push_back({std::stod(a), (uint32_t)std::stoul(b), (uint32_t)std::stoul(c), std::stoull(d)});
    }
    double end = std::atof(argv[2]);
    bool print_fct = argc > 3 && std::string(argv[3]) == "fct";
    const uint32_t leaves = 8, hpl = 16, spines = 4;

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpDctcp::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1460));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 24));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 24));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(5)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MicroSeconds(1)));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::Ipv4GlobalRouting::RandomEcmpRouting", BooleanValue(true));
    Config::SetDefault("ns3::RedQueueDisc::UseEcn", BooleanValue(true));
    Config::SetDefault("ns3::RedQueueDisc::UseHardDrop", BooleanValue(false));
    Config::SetDefault("ns3::RedQueueDisc::MeanPktSize", UintegerValue(1500));
    Config::SetDefault("ns3::RedQueueDisc::QW", DoubleValue(1.0));
    Config::SetDefault("ns3::RedQueueDisc::MinTh", DoubleValue(20));
    Config::SetDefault("ns3::RedQueueDisc::MaxTh", DoubleValue(20));
    Config::SetDefault("ns3::RedQueueDisc::MaxSize", QueueSizeValue(QueueSize("200p")));

    NodeContainer hosts, leaf, spine;
    hosts.Create(leaves * hpl);
    leaf.Create(leaves);
    spine.Create(spines);
    InternetStackHelper stack;
    stack.InstallAll();

    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue("10Gbps"));
    p2p.SetChannelAttribute("Delay", StringValue("1us"));
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("2p"));
    TrafficControlHelper red;
    red.SetRootQueueDisc("ns3::RedQueueDisc", "LinkBandwidth", StringValue("10Gbps"), "LinkDelay",
                         StringValue("1us"));
    Ipv4AddressHelper addr;
    std::vector<Ipv4Address> hostAddr(leaves * hpl);
    uint32_t subnet = 0;
    auto next_base = [&]() {
        char base[32];
        std::snprintf(base, sizeof base, "10.%u.%u.0", (subnet >> 8) & 255, subnet & 255);
        ++subnet;
        addr.SetBase(base, "255.255.255.0");
    };
    TrafficControlHelper none;
    for (uint32_t h = 0; h < leaves * hpl; ++h)
    {
        NetDeviceContainer d = p2p.Install(hosts.Get(h), leaf.Get(h / hpl));
        next_base();
        Ipv4InterfaceContainer ifs = addr.Assign(d);
        hostAddr[h] = ifs.GetAddress(0);
        none.Uninstall(d.Get(0));
        d.Get(0)->GetObject<PointToPointNetDevice>()->GetQueue()->SetMaxSize(QueueSize("1000000p"));
        none.Uninstall(d.Get(1));
        red.Install(d.Get(1));
    }
    for (uint32_t l = 0; l < leaves; ++l)
    {
        for (uint32_t s = 0; s < spines; ++s)
        {
            NetDeviceContainer d = p2p.Install(leaf.Get(l), spine.Get(s));
            next_base();
            addr.Assign(d);
            none.Uninstall(d);
            red.Install(d);
        }
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    g_rx.assign(flows.size(), 0);
    g_want.assign(flows.size(), 0);
    g_finish.assign(flows.size(), -1.0);
    for (size_t f = 0; f < flows.size(); ++f)
    {
        const Flow& fl = flows[f];
        // One sink per flow on its own port (at most 64k flows).
        uint16_t port = 1024 + (uint16_t)f;
        g_want[f] = fl.bytes;
        PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer s = sink.Install(hosts.Get(fl.dst));
        s.Start(Seconds(0.0));
        s.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRx, (uint32_t)f));
        BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(hostAddr[fl.dst], port));
        src.SetAttribute("MaxBytes", UintegerValue(fl.bytes));
        src.SetAttribute("SendSize", UintegerValue(1460));
        ApplicationContainer a = src.Install(hosts.Get(fl.src));
        a.Start(Seconds(fl.start));
    }

    auto t0 = std::chrono::steady_clock::now();
    Simulator::Stop(Seconds(end));
    Simulator::Run();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (print_fct)
    {
        // Per flow: start and completion time (all bytes delivered; nan
        // when unfinished by END_S).
        for (size_t f = 0; f < flows.size(); ++f)
        {
            double fct = g_finish[f] < 0 ? std::nan("") : g_finish[f] - flows[f].start;
            std::printf("flow %zu %.12f %.12f\n", f, flows[f].start, fct);
        }
    }
    std::printf("flows %zu\nfinished %u\nwall_s %.6f\nevents %llu\n", flows.size(), g_done, wall,
                static_cast<unsigned long long>(Simulator::GetEventCount()));
    Simulator::Destroy();
    return 0;
}
