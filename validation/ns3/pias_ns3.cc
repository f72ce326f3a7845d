// ns-3 side of the PIAS priority cross-check (validation/crosscheck_ns3.py):
// one switch (an IPv4 router) and 3 hosts on 10 Gbps links with 1 us
// propagation. Host 1 sends LONG bytes to host 0 from t = 0; host 2 sends
// SHORT bytes to host 0 from START_S. TCP NewReno (MSS 1460, initial window
// 10, an ACK per segment, no SACK or timestamps; netheat's PIAS is DCTCP,
// which without ECN marks reacts only to losses, as NewReno, and there are
// none: the port holds more than both flows). PIAS tagging: a flow's packets
// carry priority 0 until it has sent THRESHOLD bytes, then priority 1 (the
// socket's priority, changed from its transmit trace). The switch's port
// towards host 0: a strict-priority queue disc (band 0 first) of two FIFOs
// over a one-packet device queue.
//
// Usage: pias_ns3 LONG SHORT START_S THRESHOLD
// Prints "flow <i> fct_s <t>" for the long (0) and the short (1) flow, from
// its first data segment (after the SYN handshake, which netheat's flows
// do not make) to its last byte delivered to host 0's application.
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <cstdio>
#include <vector>

using namespace ns3;

// Band 0 for packets with a non-zero IP TOS (not yet demoted), band 1 for
// the others.
class TosBandFilter : public Ipv4PacketFilter
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("TosBandFilter").SetParent<Ipv4PacketFilter>().AddConstructor<TosBandFilter>();
        return tid;
    }

  private:
    int32_t DoClassify(Ptr<QueueDiscItem> item) const override
    {
        Ptr<Ipv4QueueDiscItem> ip = DynamicCast<Ipv4QueueDiscItem>(item);
        return ip && ip->GetHeader().GetTos() != 0 ? 0 : 1;
    }
};

NS_OBJECT_ENSURE_REGISTERED(TosBandFilter);

static std::vector<uint64_t> g_rx(2, 0), g_want(2, 0);
static std::vector<double> g_done(2, -1.0), g_start(2, 0.0), g_first(2, -1.0);
static uint64_t g_threshold = 0;
static Ptr<QueueDisc> g_root;

static void
OnRx(uint32_t flow, Ptr<const Packet> p, const Address&)
{
    g_rx[flow] += p->GetSize();
    if (g_rx[flow] >= g_want[flow] && g_done[flow] < 0)
    {
        g_done[flow] = Simulator::Now().GetSeconds();
    }
}

static void
OnTx(uint32_t flow, Ptr<Socket> s, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    if (p->GetSize() > 0 && g_first[flow] < 0)
    {
        g_first[flow] = Simulator::Now().GetSeconds();
    }
    // Bytes sent so far, this segment included (the SYN takes sequence 0).
    uint64_t sent = h.GetSequenceNumber().GetValue() + p->GetSize();
    if (p->GetSize() > 0 && sent > g_threshold && s->GetIpTos() != 0)
    {
        s->SetIpTos(0); // demoted: band 1
    }
}

static void
Hook(uint32_t flow, Ptr<BulkSendApplication> app)
{
    Ptr<Socket> s = app->GetSocket();
    s->SetIpTos(0x10); // not demoted yet: band 0
    s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTx, flow, s));
}

int
main(int argc, char* argv[])
{
    if (argc < 5)
    {
        std::fprintf(stderr, "usage: %s LONG SHORT START_S THRESHOLD\n", argv[0]);
        return 2;
    }
    g_want[0] = std::strtoull(argv[1], nullptr, 10);
    g_want[1] = std::strtoull(argv[2], nullptr, 10);
    g_start[1] = std::atof(argv[3]);
    g_threshold = std::strtoull(argv[4], nullptr, 10);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1460));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 24));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 24));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(5)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MicroSeconds(1)));

    NodeContainer hosts, sw;
    hosts.Create(3);
    sw.Create(1);
    InternetStackHelper stack;
    stack.InstallAll();
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue("10Gbps"));
    p2p.SetChannelAttribute("Delay", StringValue("1us"));
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1000000p"));
    Ipv4AddressHelper addr;
    std::vector<Ipv4Address> hostAddr(3);
    TrafficControlHelper none;
    for (uint32_t h = 0; h < 3; ++h)
    {
        NetDeviceContainer d = p2p.Install(hosts.Get(h), sw.Get(0));
        char base[32];
        std::snprintf(base, sizeof base, "10.0.%u.0", h);
        addr.SetBase(base, "255.255.255.0");
        hostAddr[h] = addr.Assign(d).GetAddress(0);
        none.Uninstall(d);
        if (h == 0)
        {
            // The bottleneck: strict priority, band 0 first, over a one-packet device queue.
            d.Get(1)->GetObject<PointToPointNetDevice>()->GetQueue()->SetMaxSize(QueueSize("1p"));
            TrafficControlHelper prio;
            uint16_t handle = prio.SetRootQueueDisc("ns3::PrioQueueDisc", "Priomap",
                                                    StringValue("0 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1"));
            prio.AddPacketFilter(handle, "TosBandFilter");
            TrafficControlHelper::ClassIdList cls = prio.AddQueueDiscClasses(handle, 2, "ns3::QueueDiscClass");
            prio.AddChildQueueDisc(handle, cls[0], "ns3::FifoQueueDisc", "MaxSize", StringValue("100000p"));
            prio.AddChildQueueDisc(handle, cls[1], "ns3::FifoQueueDisc", "MaxSize", StringValue("100000p"));
            g_root = prio.Install(d.Get(1)).Get(0);
        }
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    for (uint32_t f = 0; f < 2; ++f)
    {
        uint16_t port = 5000 + f;
        PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer s = sink.Install(hosts.Get(0));
        s.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRx, f));
        BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(hostAddr[0], port));
        src.SetAttribute("MaxBytes", UintegerValue(g_want[f]));
        src.SetAttribute("SendSize", UintegerValue(1460));
        ApplicationContainer a = src.Install(hosts.Get(1 + f));
        a.Start(Seconds(g_start[f]));
        // The socket exists once the application has started.
        Simulator::Schedule(Seconds(g_start[f]) + NanoSeconds(1), &Hook, f,
                            DynamicCast<BulkSendApplication>(a.Get(0)));
    }
    Simulator::Stop(Seconds(1.0));
    Simulator::Run();
    for (uint32_t f = 0; f < 2; ++f)
    {
        std::printf("flow %u fct_s %.9f\n", f, g_done[f] < 0 || g_first[f] < 0 ? -1.0 : g_done[f] - g_first[f]);
    }
    if (getenv("PIAS_DEBUG"))
    {
        for (uint32_t b = 0; b < 2; ++b)
        {
            std::printf("band %u packets %u\n", b, g_root->GetQueueDiscClass(b)->GetQueueDisc()->GetStats().nTotalReceivedPackets);
        }
    }
    Simulator::Destroy();
    return 0;
}
