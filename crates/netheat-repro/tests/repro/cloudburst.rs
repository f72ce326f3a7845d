//! The CloudBurst experiment's network (moved from netheat-packet's
//! validation tests).

use netheat_packet::{FlowSpec, Simulator, TransportConfig};
use netheat_repro::cloudburst::{IncastParams, SHARED_BUFFER_ALPHA, TRIDENT_PLUS_BUFFER_PER_PORT};
use netheat_topology::{Topology, TopologySpec};

fn flow(id: u64, src: u32, dst: u32, bytes: u64, tp: &str) -> FlowSpec {
    FlowSpec::new(id, src, dst, bytes, tp)
}

#[test]
fn cloudburst_experiment_switches_share_a_trident_plus_buffer() {
    // The experiment's leaf-spine: a leaf has 8 host ports and 4 uplinks, so
    // its shared buffer is 12 x 192 KB = 2,304,000 B, and one congested port
    // holds at most (B + 1,500) / 2 = 1,152,750 B with alpha = 1, far above
    // the old static 150 KB port buffer.
    assert_eq!((TRIDENT_PLUS_BUFFER_PER_PORT, SHARED_BUFFER_ALPHA), (192_000, 1.0));
    let topo = Topology::build(&TopologySpec::three_tier(1, 4, 8, 4, 0, 10e9, 40e9, None)).unwrap();
    let net = IncastParams::net_config(30_000, 12_000, 1e-6);
    assert_eq!(net.shared_buffer_per_port_bytes, Some(192_000));
    let mut sim = Simulator::new(&topo, net).unwrap();
    // NewReno ignores ECN marks, so it fills the buffer; senders in racks 0, 2, 3.
    for (i, src) in [0u32, 16, 24].into_iter().enumerate() {
        sim.add_flow(flow(i as u64, src, 8, 6_000_000, "newreno"), &TransportConfig::default()).unwrap();
    }
    let r = sim.run(f64::INFINITY);
    let down = topo.hosts()[8].ports[0].down as usize;
    let (max_q, drops) = (r.ports[down].max_queue_bytes, r.ports[down].drops);
    println!("leaf port: max queue {max_q} B, drops {drops}");
    let cap = (2_304_000.0 + 1500.0) / 2.0;
    assert!(max_q as f64 <= cap && max_q as f64 >= cap - 3000.0, "{max_q} vs {cap}");
    assert!(drops > 0);
}
