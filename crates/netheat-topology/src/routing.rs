//! Shortest-path routing between hosts.
//!
//! A path picks a source port, a destination port, and a route between their
//! ToRs through the fabric. Only the port pairs whose ToRs are closest are
//! kept (shortest paths): the same ToR (2 hops, the Subways *shortcut*), the
//! same pod via one of `A` aggregation switches (4 hops), or different pods
//! via one of `S` spines (6 hops; the spine fixes the plane and so the
//! aggregation switch at both ends). The ECMP path set of a host pair is all
//! of these, enumerated in (source port, destination port, agg or spine)
//! order; nothing is stored per pair.

use netheat_core::{HostId, LinkId, Routing};

use crate::model::{OnePort, Port, Topology};

impl Topology {
    /// Hops and number of fabric routes between two ToRs.
    #[inline]
    fn tor_pair(&self, ts: u32, td: u32) -> (u8, usize) {
        if ts == td {
            (2, 1)
        } else if self.route.tor_pod[ts as usize] == self.route.tor_pod[td as usize] {
            (4, self.aggs_per_pod as usize)
        } else {
            (6, self.spines.len())
        }
    }

    #[inline]
    fn best_hops(&self, src: &[Port], dst: &[Port]) -> u8 {
        let mut best = u8::MAX;
        for sp in src {
            for dp in dst {
                best = best.min(self.tor_pair(sp.tor, dp.tor).0);
            }
        }
        best
    }

    /// Number of hops of the shortest paths between two distinct hosts.
    pub fn hops(&self, src: HostId, dst: HostId) -> u8 {
        self.best_hops(&self.hosts[src as usize].ports, &self.hosts[dst as usize].ports)
    }

    /// ToRs shared by two hosts (the Subways shortcut ToRs), in port order.
    pub fn shared_tors(&self, src: HostId, dst: HostId) -> Vec<u32> {
        let d = self.host_tors(dst);
        self.host_tors(src).into_iter().filter(|t| d.contains(t)).collect()
    }

    /// Every shortest path between two hosts (small topologies and tests).
    pub fn all_paths(&self, src: HostId, dst: HostId) -> Vec<Vec<LinkId>> {
        let n = self.num_paths(src, dst);
        (0..n)
            .map(|k| {
                let mut p = Vec::new();
                self.path(src, dst, k, &mut p);
                p
            })
            .collect()
    }

    /// The ports of two single-port hosts (from the flat route index).
    #[inline]
    fn one_ports(&self, src: HostId, dst: HostId) -> Option<(OnePort, OnePort)> {
        let (a, b) = (self.route.port1[src as usize], self.route.port1[dst as usize]);
        (a.tor != u32::MAX && b.tor != u32::MAX).then_some((a, b))
    }

    fn fabric_route(&self, sp: &Port, dp: &Port, hops: u8, i: usize, out: &mut Vec<LinkId>) {
        out.push(sp.up);
        if hops != 2 {
            self.tor_route(sp.tor, dp.tor, i, out);
        }
        out.push(dp.down);
    }

    /// Number of fabric routes from ToR `ts` to ToR `td`: 1 for the same ToR
    /// (nothing to cross), the pod's aggregation switches within a pod, the
    /// spines across pods.
    pub fn tor_routes(&self, ts: u32, td: u32) -> usize {
        self.tor_pair(ts, td).1
    }

    /// Appends the directed links of fabric route `i` (< [`Self::tor_routes`])
    /// from ToR `ts` to ToR `td`: nothing for the same ToR, up and down
    /// through aggregation switch `i` within a pod, or through spine `i`
    /// (which fixes the plane, hence the aggregation switch at both ends)
    /// across pods. Policies that build their own paths (Subways detours)
    /// join these with host port links.
    pub fn tor_route(&self, ts: u32, td: u32, i: usize, out: &mut Vec<LinkId>) {
        if ts == td {
            return;
        }
        let (a, b) = (&self.tors[ts as usize], &self.tors[td as usize]);
        if a.pod == b.pod {
            out.push(a.up[i]);
            out.push(b.down[i]);
        } else {
            let per_plane = self.spines.len() / self.aggs_per_pod as usize;
            let plane = i / per_plane;
            let agg = a.pod as usize * self.aggs_per_pod as usize + plane;
            out.push(a.up[plane]);
            out.push(self.aggs[agg].up[i % per_plane]);
            out.push(self.spines[i].down[b.pod as usize]);
            out.push(b.down[plane]);
        }
    }
}

impl Routing for Topology {
    fn num_hosts(&self) -> usize {
        self.hosts.len()
    }

    fn num_links(&self) -> usize {
        self.links.len()
    }

    fn link_capacity_bps(&self, link: LinkId) -> f64 {
        self.links[link as usize].capacity_bps
    }

    fn num_paths(&self, src: HostId, dst: HostId) -> usize {
        if src == dst {
            return 0;
        }
        // One port each (most datacenters): the routes between their ToRs.
        if let Some((a, b)) = self.one_ports(src, dst) {
            return self.tor_pair(a.tor, b.tor).1;
        }
        let (s, d) = (&self.hosts[src as usize].ports, &self.hosts[dst as usize].ports);
        let best = self.best_hops(s, d);
        let mut n = 0;
        for sp in s {
            for dp in d {
                let (h, c) = self.tor_pair(sp.tor, dp.tor);
                if h == best {
                    n += c;
                }
            }
        }
        n
    }

    fn path(&self, src: HostId, dst: HostId, k: usize, out: &mut Vec<LinkId>) {
        out.clear();
        if let Some((a, b)) = self.one_ports(src, dst) {
            let (h, c) = self.tor_pair(a.tor, b.tor);
            assert!(k < c, "path index out of range for hosts {src} -> {dst}");
            out.push(a.up);
            if h != 2 {
                self.tor_route(a.tor, b.tor, k, out);
            }
            out.push(b.down);
            return;
        }
        let (s, d) = (&self.hosts[src as usize].ports, &self.hosts[dst as usize].ports);
        let best = self.best_hops(s, d);
        let mut k = k;
        for sp in s {
            for dp in d {
                let (h, c) = self.tor_pair(sp.tor, dp.tor);
                if h != best {
                    continue;
                }
                if k < c {
                    self.fabric_route(sp, dp, h, k, out);
                    return;
                }
                k -= c;
            }
        }
        panic!("path index out of range for hosts {src} -> {dst}");
    }

    fn path_weight(&self, src: HostId, dst: HostId, k: usize) -> f64 {
        // Source and destination ports are chosen independently, each in
        // proportion to its speed (10G+25G ports split 2/7 and 5/7).
        let (s, d) = (&self.hosts[src as usize].ports, &self.hosts[dst as usize].ports);
        let best = self.best_hops(s, d);
        let mut k = k;
        for sp in s {
            for dp in d {
                let (h, c) = self.tor_pair(sp.tor, dp.tor);
                if h != best {
                    continue;
                }
                if k < c {
                    return sp.speed_bps * dp.speed_bps;
                }
                k -= c;
            }
        }
        0.0
    }
}
