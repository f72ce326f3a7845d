//! Sinbad (Chowdhury, Kandula, Stoica, "Leveraging Endpoint Flexibility in
//! Data-Intensive Clusters", SIGCOMM 2013): network-balanced replica
//! placement.
//!
//! The master receives per-host rx/tx utilization every Delta; for each
//! bottleneck link (rack downlinks and host downlinks: the writer's side is
//! fixed, so receive links are what placement can choose) it keeps an EWMA
//! `v <- alpha * measured + (1 - alpha) * v`; a missing report counts as a
//! fully loaded link. After each placement, the chosen links' estimates are
//! bumped by `I(B, delta) = min(Cap - v, Size(B) / delta)` (hysteresis,
//! section 6.2) until the next report, so a burst of decisions between
//! reports does not pile onto one link. `delta` is the time left until the
//! next report is due: the policy keeps the time of the last report it
//! observed and the request carries its own time
//! ([`PlacementRequest::time_s`]), so `delta = Delta - (now - last report)`.
//! A placement just after a report bumps by `Size(B) / Delta`, one just
//! before the next by up to the link's whole spare capacity. The floor of
//! `delta` is 0, taken as the limit: `Size(B) / delta` grows without bound,
//! so the increment is `Cap - v` (any floor `eps` with `Size(B) / eps >=
//! Cap` gives the same increment; no such constant is needed). A report
//! that is overdue (`now` past the last report plus Delta) also gives the
//! full increment, the conservative reading that section 6.2 applies to
//! missing reports. Before the first report the interval is taken as just
//! begun (`delta = Delta`). Selection is recursive: the best rack by expected capacity
//! `min(Cap - v, DiskWriteCap)`, then the best hosts inside it, one replica
//! group per subtree, constraints (live, fault domains, storage balance)
//! filtered first by the shared selector. Blocks below THRESHOLD use the
//! default (uniform) policy. The decision interval q (batching, OPT'
//! order) lives with the caller, which owns time: a scenario's
//! `storage.decision-interval` (netheat-scenario's `StorageRun`).
//!
//! A rack's downlink is the set of its ToR's downlinks (one per
//! aggregation switch in a Clos fabric, one in a two-tier datacenter), and
//! a host's the set of its NIC ports' downlinks: `Cap` and `v` are the sums
//! over the set, and a bump is shared among the set's links in proportion
//! to their spare capacity (no link is bumped past its capacity; the set's
//! sum rises by exactly `min(Cap - v, Size(B) / delta)`). `DiskWriteCap` is
//! the host's disk write rate, and for a rack the fastest among its storage
//! hosts ([`crate::Cluster::rack_disk_bps`]).

use crate::placement::{select, PlacementRequest, PolicyConfig, ReplicaPlacement, Uniform, View};
use netheat_core::{HostId, LinkId};
use rand_chacha::ChaCha8Rng;

/// EWMA link-utilization estimates with hysteresis bumps.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkEstimator {
    /// EWMA weight of a new measurement.
    pub alpha: f64,
    base: Vec<f64>,
    bump: Vec<f64>,
    cap: Vec<f64>,
}

impl LinkEstimator {
    /// Estimates (all zero) for links with capacities `cap` (bits/s).
    pub fn new(cap: Vec<f64>, alpha: f64) -> Self {
        let n = cap.len();
        Self { alpha, base: vec![0.0; n], bump: vec![0.0; n], cap }
    }

    /// Applies a report: EWMA per measured link, `Cap` for a missing one;
    /// clears the hysteresis bumps.
    pub fn update(&mut self, rates: &[Option<f64>]) {
        for (l, r) in rates.iter().enumerate().take(self.base.len()) {
            self.base[l] = match r {
                Some(x) => self.alpha * x + (1.0 - self.alpha) * self.base[l],
                None => self.cap[l],
            };
            self.bump[l] = 0.0;
        }
    }

    /// Current estimate of a link's load, bits/s.
    pub fn load(&self, l: LinkId) -> f64 {
        self.base[l as usize] + self.bump[l as usize]
    }

    /// Hysteresis after placing `bytes` over link `l` with `delta_s` left
    /// until the next report: add `min(Cap - v, bytes * 8 / delta_s)`
    /// (`delta_s <= 0`: the limit, `Cap - v`).
    pub fn bump(&mut self, l: LinkId, bytes: f64, delta_s: f64) {
        let i = l as usize;
        let v = self.load(l);
        self.bump[i] += (self.cap[i] - v).max(0.0).min(increment_rate(bytes, delta_s));
    }

    /// Expected capacity `min(Cap - v, disk)`.
    pub fn expected(&self, l: LinkId, disk_bps: f64) -> f64 {
        (self.cap[l as usize] - self.load(l)).max(0.0).min(disk_bps)
    }

    /// Capacity of a link, bits/s.
    pub fn capacity(&self, l: LinkId) -> f64 {
        self.cap[l as usize]
    }

    /// Summed capacity of a set of links, bits/s.
    pub fn set_capacity(&self, links: &[LinkId]) -> f64 {
        links.iter().map(|&l| self.cap[l as usize]).sum()
    }

    /// Summed load estimate of a set of links, bits/s.
    pub fn set_load(&self, links: &[LinkId]) -> f64 {
        links.iter().map(|&l| self.load(l)).sum()
    }

    /// Expected capacity of a set of links: `min(sum Cap - sum v, disk)`
    /// (for one link, [`LinkEstimator::expected`]).
    pub fn set_expected(&self, links: &[LinkId], disk_bps: f64) -> f64 {
        (self.set_capacity(links) - self.set_load(links)).max(0.0).min(disk_bps)
    }

    /// Hysteresis after placing `bytes` over a set of links: the set's sum
    /// rises by `min(sum Cap - sum v, bytes * 8 / delta_s)`, shared among
    /// its links in proportion to their spare capacity `Cap - v` (for one
    /// link, [`LinkEstimator::bump`]).
    pub fn set_bump(&mut self, links: &[LinkId], bytes: f64, delta_s: f64) {
        if let [l] = links {
            self.bump(*l, bytes, delta_s);
            return;
        }
        let spare: Vec<f64> = links.iter().map(|&l| (self.cap[l as usize] - self.load(l)).max(0.0)).collect();
        let total: f64 = spare.iter().sum();
        let b = (self.set_capacity(links) - self.set_load(links)).max(0.0).min(increment_rate(bytes, delta_s));
        if !(b > 0.0 && total > 0.0) {
            return;
        }
        for (&l, s) in links.iter().zip(spare) {
            self.bump[l as usize] += b * (s / total);
        }
    }
}

/// `Size(B) / delta` in bits/s; unbounded when `delta <= 0` (the limit of
/// section 6.2's increment as the next report comes due).
fn increment_rate(bytes: f64, delta_s: f64) -> f64 {
    if delta_s > 0.0 {
        bytes * 8.0 / delta_s
    } else {
        f64::INFINITY
    }
}

/// The Sinbad policy.
#[derive(Debug, Clone)]
pub struct Sinbad {
    cfg: PolicyConfig,
    est: Option<LinkEstimator>,
    last_report_s: Option<f64>,
}

impl Sinbad {
    /// A Sinbad master with the given settings.
    pub fn new(cfg: PolicyConfig) -> Self {
        Self { cfg, est: None, last_report_s: None }
    }

    /// Section 6.2's `delta` at `now_s`: the time left until the next report
    /// is due on the reporting cadence, `Delta - ((now - last report) mod
    /// Delta)`, within `(0, Delta]`: a report that is late (or never comes,
    /// as with a load file written once) is expected at the next multiple of
    /// `Delta` after the last one, so placements never see an unbounded
    /// increment; a request stamped before the last report, or exactly on
    /// the cadence, gets a full `Delta`, as before the first report.
    pub fn time_to_next_report(&self, now_s: f64) -> f64 {
        let d = self.cfg.delta_s;
        match self.last_report_s {
            Some(t) if now_s > t => {
                let left = d - (now_s - t).rem_euclid(d);
                if left > 0.0 {
                    left
                } else {
                    d
                }
            }
            _ => d,
        }
    }

    /// The estimator (after the first report or placement).
    pub fn estimator(&self) -> Option<&LinkEstimator> {
        self.est.as_ref()
    }
}

impl ReplicaPlacement for Sinbad {
    fn name(&self) -> &'static str {
        "sinbad"
    }

    fn place(&mut self, req: &PlacementRequest, view: &View<'_>, rng: &mut ChaCha8Rng) -> Result<Vec<HostId>, String> {
        if req.bytes < self.cfg.threshold_bytes {
            return Uniform.place(req, view, rng);
        }
        let c = view.cluster;
        let alpha = self.cfg.alpha;
        self.est.get_or_insert_with(|| LinkEstimator::new(c.link_bps.clone(), alpha));
        let hs = {
            let this = &*self;
            select(view, req, rng, &mut |r| this.rack_score(view, r), &mut |h| this.host_score(view, h))?
        };
        let delta = self.time_to_next_report(req.time_s);
        let est = self.est.as_mut().expect("made above");
        let local_rack = req.writer.map(|w| c.rack_of(w));
        let mut racks_done: Vec<u32> = Vec::new();
        for &h in &hs {
            if Some(h) == req.writer {
                continue;
            }
            let r = c.rack_of(h);
            if Some(r) != local_rack && !racks_done.contains(&r) {
                est.set_bump(&c.racks[r as usize].down, req.bytes, delta);
                racks_done.push(r);
            }
            est.set_bump(&c.hosts[h as usize].down, req.bytes, delta);
        }
        Ok(hs)
    }

    /// The expected capacity of the rack's downlink set,
    /// `min(Cap - v, DiskWriteCap)` (no estimate yet: no load).
    fn rack_score(&self, view: &View<'_>, rack: usize) -> f64 {
        let c = view.cluster;
        let links = &c.racks[rack].down;
        let disk = c.rack_disk_bps(rack);
        match &self.est {
            Some(e) => e.set_expected(links, disk),
            None => links.iter().map(|&l| c.link_bps[l as usize]).sum::<f64>().min(disk),
        }
    }

    /// The expected capacity of the host's downlinks, capped by its disk.
    fn host_score(&self, view: &View<'_>, host: HostId) -> f64 {
        let c = view.cluster;
        let h = &c.hosts[host as usize];
        let disk = h.disk_write_bps.unwrap_or(f64::INFINITY);
        match &self.est {
            Some(e) => e.set_expected(&h.down, disk),
            None => h.down.iter().map(|&l| c.link_bps[l as usize]).sum::<f64>().min(disk),
        }
    }

    fn bind(&mut self, cluster: &crate::cluster::Cluster) {
        self.attach(cluster.link_bps.clone());
    }

    fn observe(&mut self, now_s: f64, rates: &[Option<f64>]) {
        self.last_report_s = Some(now_s);
        if self.est.is_none() {
            // Capacities are only known from the cluster at the first
            // placement; until then a report has nothing to update.
            return;
        }
        if let Some(e) = self.est.as_mut() {
            e.update(rates);
        }
    }
}

impl Sinbad {
    /// Initializes the estimator for a cluster (so reports before the first
    /// placement count).
    pub fn attach(&mut self, cap: Vec<f64>) {
        self.est = Some(LinkEstimator::new(cap, self.cfg.alpha));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::Cluster;
    use crate::fs::Redundancy;
    use rand::SeedableRng;

    #[test]
    fn ewma_and_hysteresis_by_hand() {
        let mut e = LinkEstimator::new(vec![1000.0, 1000.0], 0.2);
        e.update(&[Some(500.0), Some(100.0)]);
        // 0.2*500 = 100; 0.2*100 = 20.
        assert!((e.load(0) - 100.0).abs() < 1e-12);
        e.update(&[Some(500.0), None]);
        // 0.2*500 + 0.8*100 = 180; missing report: fully loaded 1000.
        assert!((e.load(0) - 180.0).abs() < 1e-12);
        assert_eq!(e.load(1), 1000.0);
        // bump by min(1000 - 180, 50 B * 8 / 1 s = 400) = 400 -> 580.
        e.bump(0, 50.0, 1.0);
        assert!((e.load(0) - 580.0).abs() < 1e-12);
        // again: min(1000 - 580, 400) = 400 -> 980; then min(20, 400) -> 1000.
        e.bump(0, 50.0, 1.0);
        e.bump(0, 50.0, 1.0);
        assert!((e.load(0) - 1000.0).abs() < 1e-12);
        assert_eq!(e.expected(0, 300.0), 0.0);
        // The next report drops the bumps: 0.2*0 + 0.8*180 = 144.
        e.update(&[Some(0.0), Some(0.0)]);
        assert!((e.load(0) - 144.0).abs() < 1e-12);
        assert!((e.expected(0, 300.0) - 300.0).abs() < 1e-12);
        assert!((e.expected(0, 2000.0) - 856.0).abs() < 1e-12);
        // Mid-interval, delta = 0.25 s left: min(856, 50 B * 8 / 0.25 s =
        // 1600) = 856, the whole spare capacity; 10 B: min(856, 320) = 320.
        let mut m = e.clone();
        m.bump(0, 10.0, 0.25);
        assert!((m.load(0) - 464.0).abs() < 1e-12);
        m.bump(0, 50.0, 0.25);
        assert!((m.load(0) - 1000.0).abs() < 1e-12);
        // delta = 0 (the report is due): the limit, the whole spare capacity.
        let mut z = e.clone();
        z.bump(0, 1.0, 0.0);
        assert!((z.load(0) - 1000.0).abs() < 1e-12);
    }

    #[test]
    fn hysteresis_delta_is_the_time_to_the_next_report() {
        // One rack link of 2 Gbps spare per remote rack (3 racks x 2 hosts,
        // 1 Gbps hosts, no oversubscription, no disk cap), Delta = 1 s, a
        // 25 MB block = 200 Mbit, one remote replica (r = 2, f = 1).
        let c = Cluster::two_tier(3, 2, 1e9, 1.0, None, 1e12, &[], &[]);
        let mut s = Sinbad::new(PolicyConfig { threshold_bytes: 0.0, ..PolicyConfig::default() });
        s.attach(c.link_bps.clone());
        assert_eq!(s.time_to_next_report(0.3), 1.0); // no report yet: a full Delta
        s.observe(10.0, &vec![Some(0.0); c.link_bps.len()]);
        assert_eq!(s.time_to_next_report(10.0), 1.0);
        assert!((s.time_to_next_report(10.75) - 0.25).abs() < 1e-12);
        // Late: the next report is expected on the cadence, at 12 s.
        assert!((s.time_to_next_report(11.5) - 0.5).abs() < 1e-12);
        let live = vec![true; 6];
        let used = vec![0.0; 6];
        let v = View { cluster: &c, live: &live, host_used: &used, balance_threshold: 0.1 };
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let rq = |block: u64, time_s: f64| PlacementRequest {
            file: 1,
            block,
            bytes: 25e6,
            writer: Some(0),
            redundancy: Redundancy::Replicate { r: 2, f: 1 },
            time_s,
        };
        let load = |s: &Sinbad, h: HostId| {
            let e = s.estimator().unwrap();
            (e.load(c.racks[c.rack_of(h) as usize].down[0]), e.load(c.hosts[h as usize].down[0]))
        };
        // At the report (delta = Delta = 1 s): 200 Mbit / 1 s = 0.2 Gbps on
        // the rack link and on the host link.
        let a = s.place(&rq(0, 10.0), &v, &mut rng).unwrap()[1];
        let (r, h) = load(&s, a);
        assert!((r - 0.2e9).abs() < 1.0 && (h - 0.2e9).abs() < 1.0, "{r} {h}");
        // Mid-interval, 0.25 s left: 200 Mbit / 0.25 s = 0.8 Gbps on the
        // other remote rack (2 Gbps spare beats 1.8) and its host.
        let b = s.place(&rq(1, 10.75), &v, &mut rng).unwrap()[1];
        assert_ne!(c.rack_of(a), c.rack_of(b));
        let (r, h) = load(&s, b);
        assert!((r - 0.8e9).abs() < 1.0 && (h - 0.8e9).abs() < 1.0, "{r} {h}");
        // The report due at 11 s is late: delta is the 0.5 s to 12 s on the
        // cadence, 200 Mbit / 0.5 s = 0.4 Gbps; rack of `a` has 1.8 Gbps
        // spare (against 1.2), and inside it `a`'s idle rack-mate.
        let d = s.place(&rq(2, 11.5), &v, &mut rng).unwrap()[1];
        assert_eq!(c.rack_of(d), c.rack_of(a));
        assert_ne!(d, a);
        let (r, h) = load(&s, d);
        assert!((r - 0.6e9).abs() < 1.0 && (h - 0.4e9).abs() < 1.0, "{r} {h}");
    }

    /// A 256 MB block from host 0, two replicas in two racks, at 1 s.
    fn block(b: u64) -> PlacementRequest {
        PlacementRequest {
            file: 1,
            block: b,
            bytes: 256e6,
            writer: Some(0),
            redundancy: Redundancy::Replicate { r: 2, f: 1 },
            time_s: 1.0,
        }
    }

    /// Sinbad (every block placed by it) after one report at 1 s of
    /// `down_bps[r]` on rack `r`'s downlink and nothing elsewhere, taken
    /// as is (alpha = 1: estimates = measurements).
    fn reported(c: &Cluster, down_bps: &[f64]) -> Sinbad {
        let mut s = Sinbad::new(PolicyConfig { threshold_bytes: 0.0, ..PolicyConfig::default() });
        s.attach(c.link_bps.clone());
        let mut rates = vec![Some(0.0); c.link_bps.len()];
        for (r, &x) in down_bps.iter().enumerate() {
            rates[c.racks[r].down[0] as usize] = Some(x);
        }
        s.est.as_mut().unwrap().alpha = 1.0;
        s.observe(1.0, &rates);
        s
    }

    #[test]
    fn picks_least_loaded_rack_downlink_on_three_racks() {
        // 3 racks x 2 hosts, rack links 2 Gbps, no disk cap (in memory).
        let c = Cluster::two_tier(3, 2, 1e9, 1.0, None, 1e12, &[], &[]);
        let mut s = reported(&c, &[0.0, 1.5e9, 0.5e9]);
        let live = vec![true; 6];
        let used = vec![0.0; 6];
        let v = View { cluster: &c, live: &live, host_used: &used, balance_threshold: 0.1 };
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        // Expected capacities: rack 1: 2 - 1.5 = 0.5 Gbps, rack 2: 1.5 Gbps.
        let hs = s.place(&block(0), &v, &mut rng).unwrap();
        assert_eq!(hs[0], 0);
        assert_eq!(c.rack_of(hs[1]), 2);
        // Hysteresis: rack 2 downlink bumped by min(2e9 - 0.5e9, 2.048e9) to
        // full; now rack 1 (0.5 Gbps spare) wins.
        let e = s.estimator().unwrap();
        assert!((e.load(c.racks[2].down[0]) - 2e9).abs() < 1.0);
        let hs2 = s.place(&block(1), &v, &mut rng).unwrap();
        assert_eq!(c.rack_of(hs2[1]), 1);
    }

    #[test]
    fn racks_with_a_disks_rate_to_spare_tie() {
        // Section 5's expected capacity is min(Cap - v, DiskWriteCap): with
        // 400 Mbit/s disks, a rack with 1.5 Gbit/s spare and one with 0.5
        // Gbit/s spare score the same, so the choice between them is a coin
        // toss; a rack with 0.2 Gbit/s spare loses to both. 4 racks x 2
        // hosts, 2 Gbit/s rack links, the writer in rack 0 (2 replicas, the
        // second in another rack). Each placement runs on a fresh report
        // (no hysteresis carried over).
        let load = [0.0, 0.5e9, 1.5e9, 1.8e9];
        let c = Cluster::two_tier(4, 2, 1e9, 1.0, Some(400e6), 1e12, &[], &[]);
        let live = vec![true; 8];
        let used = vec![0.0; 8];
        let v = View { cluster: &c, live: &live, host_used: &used, balance_threshold: 0.1 };
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut count = [0u32; 4];
        for b in 0..2000 {
            let hs = reported(&c, &load).place(&block(b), &v, &mut rng).unwrap();
            count[c.rack_of(hs[1]) as usize] += 1;
        }
        // Racks 1 and 2 each with probability 1/2: 1000 +- 4.5 sd (sd 22.4).
        assert_eq!(count[0] + count[3], 0, "{count:?}");
        assert!((900..=1100).contains(&count[1]), "{count:?}");
        // Without the disk cap (in memory) the least-loaded rack wins (a
        // cluster without disks has no disk links: its own link ids).
        let c = Cluster::two_tier(4, 2, 1e9, 1.0, None, 1e12, &[], &[]);
        let v = View { cluster: &c, live: &live, host_used: &used, balance_threshold: 0.1 };
        let hs = reported(&c, &load).place(&block(0), &v, &mut rng).unwrap();
        assert_eq!(c.rack_of(hs[1]), 1);
    }

    #[test]
    fn small_blocks_use_default() {
        let c = Cluster::two_tier(3, 2, 1e9, 1.0, None, 1e12, &[], &[]);
        let mut s = Sinbad::new(PolicyConfig::default());
        let live = vec![true; 6];
        let used = vec![0.0; 6];
        let v = View { cluster: &c, live: &live, host_used: &used, balance_threshold: 0.1 };
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let rq = PlacementRequest {
            file: 1,
            block: 0,
            bytes: 1e6,
            writer: Some(0),
            redundancy: Redundancy::Replicate { r: 2, f: 1 },
            time_s: 0.0,
        };
        assert!(s.place(&rq, &v, &mut rng).is_ok());
        assert!(s.estimator().is_none()); // the default path never touches estimates
    }
}
