//! Property tests: every enumerated path of every kind is a valid walk.

use netheat_core::Routing;
use netheat_topology::{Topology, TopologySpec, Wiring};
use proptest::prelude::*;

use crate::common::{check_paths, subways, G};

fn check_all_pairs(t: &Topology) {
    let n = t.num_hosts() as u32;
    for s in 0..n {
        for d in 0..n {
            if s != d {
                assert!(check_paths(t, s, d) > 0, "hosts {s} and {d} must be connected");
                assert_eq!(t.num_paths(s, d), t.num_paths(d, s), "path sets are symmetric in size");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn clos_paths_are_walks(pods in 1usize..4, rpp in 1usize..4, h in 1usize..3, aggs in 1usize..4, planes in 1usize..3) {
        let spines = if pods > 1 { aggs * planes } else { 0 };
        let t = Topology::build(&TopologySpec::three_tier(pods, rpp, h, aggs, spines, G, G, None)).unwrap();
        check_all_pairs(&t);
    }

    #[test]
    fn subways_paths_are_walks(p in 1usize..4, extra in 0usize..3, h in 1usize..3, type2 in any::<bool>()) {
        let l = p + extra;
        let t = if type2 {
            let l2 = 2 * l.max(2).div_ceil(2);
            subways(Wiring::Type2, 2, l2 / 2, h, p.min(l2), l2, 2, 2, 2)
        } else {
            subways(Wiring::Type1, 2, l, h, p, l, 1, 2, 2)
        };
        check_all_pairs(&t);
        // Each ToR is wired to exactly p * hosts server ports.
        let want = (t.hosts()[0].ports.len() * h) as u32;
        prop_assert!(t.tors().iter().all(|tor| tor.server_ports == want));
    }
}
