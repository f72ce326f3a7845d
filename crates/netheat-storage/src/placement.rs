//! Replica placement policies behind one trait, selected by string tag.
//!
//! A request is laid out as an optional local piece (the writer's own host,
//! HDFS-style) plus groups of pieces, one group per remote fault domain
//! (rack); a policy orders candidate racks and hosts by its score, and the
//! shared selector filters constraints first (live hosts that store,
//! distinct racks, enough eligible hosts, storage balance). Every result is
//! validated: a placement that cannot meet r/f is an explicit failure, never
//! fewer domains.

use crate::cluster::{Cluster, UplinkClass};
use crate::fs::Redundancy;
use netheat_core::HostId;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One block to place.
#[derive(Debug, Clone, PartialEq)]
pub struct PlacementRequest {
    /// File id.
    pub file: u64,
    /// Block index in the file.
    pub block: u64,
    /// Block bytes.
    pub bytes: f64,
    /// Writing host (`None`: an external client, no local piece).
    pub writer: Option<HostId>,
    /// Replication or erasure coding.
    pub redundancy: Redundancy,
    /// When the request is placed, in the clock of the policy's reports
    /// ([`ReplicaPlacement::observe`]): Sinbad's hysteresis needs the time
    /// left until the next report (section 6.2).
    pub time_s: f64,
}

/// What policies see of the cluster.
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    /// The cluster.
    pub cluster: &'a Cluster,
    /// Live hosts.
    pub live: &'a [bool],
    /// Bytes stored per host.
    pub host_used: &'a [f64],
    /// Storage-balance constraint: hosts whose used fraction exceeds the
    /// mean by more than this are avoided while others qualify.
    pub balance_threshold: f64,
}

/// Settings shared by the policies.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyConfig {
    /// Sinbad: report interval Delta (s); with the last report's time it
    /// gives the hysteresis' time to the next report, delta (section 6.2).
    pub delta_s: f64,
    /// Sinbad: EWMA weight of a new measurement.
    pub alpha: f64,
    /// Sinbad: blocks below this many bytes use the default policy.
    pub threshold_bytes: f64,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        Self { delta_s: 1.0, alpha: 0.2, threshold_bytes: 10e6 }
    }
}

/// A replica placement policy.
pub trait ReplicaPlacement: Send {
    /// Its tag.
    fn name(&self) -> &'static str;
    /// Hosts for the pieces of a block (local piece first when there is
    /// one), or the reason it cannot be placed.
    fn place(&mut self, req: &PlacementRequest, view: &View<'_>, rng: &mut ChaCha8Rng) -> Result<Vec<HostId>, String>;
    /// Called once with the cluster before a run. Default: nothing.
    fn bind(&mut self, cluster: &Cluster) {
        let _ = cluster;
    }
    /// A utilization report: per link of the cluster, the measured rate in
    /// bits/s, or `None` when the report is missing. Default: ignored.
    fn observe(&mut self, now_s: f64, rates: &[Option<f64>]) {
        let _ = (now_s, rates);
    }
    /// What the policy ranks rack `rack` by now (higher first; equal
    /// scores are drawn at random). Default: 0 for every rack.
    fn rack_score(&self, view: &View<'_>, rack: usize) -> f64 {
        let _ = (view, rack);
        0.0
    }
    /// What the policy ranks host `host` by inside its rack now (higher
    /// first). Default: 0 for every host.
    fn host_score(&self, view: &View<'_>, host: HostId) -> f64 {
        let _ = (view, host);
        0.0
    }
}

/// Local piece and remote group sizes of a request.
pub fn layout(req: &PlacementRequest, view: &View<'_>) -> Result<(Option<HostId>, Vec<usize>), String> {
    let n = req.redundancy.pieces();
    let d = req.redundancy.domains();
    if n == 0 || d == 0 {
        return Err("redundancy asks for no copies".into());
    }
    if d > n {
        return Err(format!("{n} pieces cannot span {d} fault domains"));
    }
    let racks = view.cluster.racks.len();
    if d > racks {
        return Err(format!("needs {d} fault domains but the cluster has {racks} racks"));
    }
    let local = match (req.redundancy, req.writer) {
        (Redundancy::Replicate { .. }, Some(w))
            if view.live[w as usize] && view.cluster.hosts[w as usize].stores && d >= 2 =>
        {
            Some(w)
        }
        _ => None,
    };
    let (rest, groups) = if local.is_some() { (n - 1, d - 1) } else { (n, d) };
    // Spread `rest` pieces over `groups` domains as evenly as possible.
    let sizes = (0..groups).map(|g| rest / groups + usize::from(g < rest % groups)).collect();
    Ok((local, sizes))
}

/// Mean used fraction over live storage hosts (dead or non-storage hosts
/// hold nothing and would drag the mean down).
fn live_mean(view: &View<'_>) -> f64 {
    let (mut sum, mut n) = (0.0, 0usize);
    for (h, (u, hh)) in view.host_used.iter().zip(&view.cluster.hosts).enumerate() {
        if view.live[h] && hh.stores {
            sum += u / hh.capacity_bytes;
            n += 1;
        }
    }
    sum / n.max(1) as f64
}

/// Hosts of rack `rack` that may take a piece of `req` now (live, storing,
/// with free space, not the local piece's host), and of those the
/// storage-balanced ones: `(eligible, balanced)`.
pub fn rack_eligibility(view: &View<'_>, req: &PlacementRequest, rack: usize) -> (usize, usize) {
    let local = layout(req, view).ok().and_then(|(l, _)| l);
    let mean = live_mean(view);
    (eligible_hosts(view, rack, local, false, mean).len(), eligible_hosts(view, rack, local, true, mean).len())
}

fn eligible_hosts(
    view: &View<'_>,
    rack: usize,
    exclude: Option<HostId>,
    balanced_only: bool,
    mean: f64,
) -> Vec<HostId> {
    let c = view.cluster;
    let live: Vec<HostId> = c.racks[rack]
        .hosts
        .iter()
        .copied()
        .filter(|&h| {
            view.live[h as usize]
                && c.hosts[h as usize].stores
                && Some(h) != exclude
                && view.host_used[h as usize] < c.hosts[h as usize].capacity_bytes
        })
        .collect();
    let balanced: Vec<HostId> = live
        .iter()
        .copied()
        .filter(|&h| view.host_used[h as usize] / c.hosts[h as usize].capacity_bytes - mean <= view.balance_threshold)
        .collect();
    if balanced_only {
        balanced
    } else {
        live
    }
}

/// The shared selector: racks other than the local one holding enough
/// eligible hosts, ordered by `rack_score` (higher first, random ties),
/// get one group each (largest group first); hosts inside by `host_score`.
pub fn select(
    view: &View<'_>,
    req: &PlacementRequest,
    rng: &mut ChaCha8Rng,
    rack_score: &mut dyn FnMut(usize) -> f64,
    host_score: &mut dyn FnMut(HostId) -> f64,
) -> Result<Vec<HostId>, String> {
    let (local, groups) = layout(req, view)?;
    let local_rack = local.map(|h| view.cluster.rack_of(h) as usize);
    let need = groups.iter().copied().max().unwrap_or(0);
    let mean = live_mean(view);
    // Storage balance first; only when too few racks qualify, any live host
    // with free space (balance is a preference, fault domains are not).
    let mut cands: Vec<(f64, u64, usize, Vec<HostId>)> = Vec::new();
    for balanced_only in [true, false] {
        cands = (0..view.cluster.racks.len())
            .filter(|&r| Some(r) != local_rack)
            .filter_map(|r| {
                let hs = eligible_hosts(view, r, local, balanced_only, mean);
                (hs.len() >= need && need > 0).then(|| (rack_score(r), rng.gen::<u64>(), r, hs))
            })
            .collect();
        if cands.len() >= groups.len() {
            break;
        }
    }
    if cands.len() < groups.len() {
        return Err(format!(
            "needs {} more fault domains with {} eligible live host(s) each, found {}",
            groups.len(),
            need,
            cands.len()
        ));
    }
    cands.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut out: Vec<HostId> = local.into_iter().collect();
    for (g, (_, _, _, hs)) in groups.iter().zip(cands) {
        let mut hs: Vec<(f64, u64, HostId)> = hs.into_iter().map(|h| (host_score(h), rng.gen::<u64>(), h)).collect();
        hs.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        out.extend(hs.iter().take(*g).map(|x| x.2));
    }
    Ok(out)
}

/// Checks a placement against the request: piece count, distinct live
/// hosts, fault domains.
pub fn validate(req: &PlacementRequest, view: &View<'_>, hosts: &[HostId]) -> Result<(), String> {
    let n = req.redundancy.pieces();
    if hosts.len() != n {
        return Err(format!("{} pieces placed, {n} asked", hosts.len()));
    }
    let mut hs = hosts.to_vec();
    hs.sort_unstable();
    hs.dedup();
    if hs.len() != n {
        return Err("two pieces on one host".into());
    }
    if hs.iter().any(|&h| !view.live[h as usize]) {
        return Err("a piece on a dead host".into());
    }
    let mut racks: Vec<u32> = hs.iter().map(|&h| view.cluster.rack_of(h)).collect();
    racks.sort_unstable();
    racks.dedup();
    let d = req.redundancy.domains();
    if racks.len() < d {
        return Err(format!("spans {} fault domains, {d} asked", racks.len()));
    }
    if matches!(req.redundancy, Redundancy::Erasure { .. }) && racks.len() != n {
        return Err("two erasure-coded chunks in one fault domain".into());
    }
    Ok(())
}

/// Places and validates.
pub fn place_checked(
    p: &mut dyn ReplicaPlacement,
    req: &PlacementRequest,
    view: &View<'_>,
    rng: &mut ChaCha8Rng,
) -> Result<Vec<HostId>, String> {
    let hs = p.place(req, view, rng)?;
    validate(req, view, &hs)?;
    Ok(hs)
}

/// The rack-aware default: local piece, other racks uniformly at random
/// among the storage-balanced candidates.
#[derive(Debug, Clone, Copy, Default)]
pub struct Uniform;

impl ReplicaPlacement for Uniform {
    fn name(&self) -> &'static str {
        "uniform"
    }
    fn place(&mut self, req: &PlacementRequest, view: &View<'_>, rng: &mut ChaCha8Rng) -> Result<Vec<HostId>, String> {
        select(view, req, rng, &mut |_| 0.0, &mut |_| 0.0)
    }
}

/// ToR-capacity-aware chunk placement: racks ranked by uplink class (High
/// over Medium over Low uplink per TB), then the default objectives
/// (uniform among the storage-balanced candidates of the best class).
///
/// Hotspot paper (NSDI'25) section 5.2: CCP "prioritizes" High-Uplink ToRs
/// over Medium- and Low-Uplink ones for new chunks, as a minimal change to
/// the file system's existing objectives, like UTP (section 5.1, where the
/// change sits below the scheduler's other objectives). So the class is a
/// strict priority, applied after the constraints the file system already
/// has (fault domains, then storage balance, in [`select`]): a Low rack is
/// taken only when no High (or Medium) rack has room. The paper states High
/// over the other two; ranking Medium over Low is ours (the same order of
/// uplink per storage). It uses the static classes only (section 7: CCP
/// needs no live network data), so it does not see disk or link load.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ccp;

impl Ccp {
    /// The rank of a rack of a class (higher is preferred): High 2,
    /// Medium 1, Low 0.
    pub fn rank(class: UplinkClass) -> f64 {
        match class {
            UplinkClass::High => 2.0,
            UplinkClass::Medium => 1.0,
            UplinkClass::Low => 0.0,
        }
    }
}

impl ReplicaPlacement for Ccp {
    fn name(&self) -> &'static str {
        "ccp"
    }
    fn place(&mut self, req: &PlacementRequest, view: &View<'_>, rng: &mut ChaCha8Rng) -> Result<Vec<HostId>, String> {
        select(view, req, rng, &mut |r| self.rack_score(view, r), &mut |_| 0.0)
    }
    fn rack_score(&self, view: &View<'_>, rack: usize) -> f64 {
        Ccp::rank(view.cluster.racks[rack].class)
    }
}

/// CCP read as a tweak of the file system's spreading objective rather
/// than a strict class order: new chunks go to racks at random (as
/// [`Uniform`], after the same fault-domain and storage-balance
/// constraints), each rack with a weight proportional to its uplink
/// bandwidth per installed storage, so that in expectation every rack gets
/// new chunks, and the reads that follow them, in proportion to what its
/// uplinks carry.
///
/// Hotspot paper (NSDI'25) section 5.2 says CCP's change to Colossus was
/// "similar in principle" to UTP's, which tweaks an existing low-priority
/// load-balancing objective (section 5.1) instead of adding a hard rule.
/// The default spreads new chunks evenly over racks (uniform in
/// expectation); this tweak rescales that spread by uplink per storage. It
/// has no parameter: the weights are the datacenter's own uplinks and
/// disks. Racks are drawn without replacement by Efraimidis and Spirakis'
/// keys `u^(1 / w)` (`u` uniform in (0, 1)), largest first, which gives
/// each rack its weight's share of the first draw.
#[derive(Debug, Clone, Copy, Default)]
pub struct CcpBalance;

impl CcpBalance {
    /// Uplink bandwidth of rack `rack` per byte of storage its hosts hold
    /// (0 for a rack that stores nothing).
    pub fn weight(view: &View<'_>, rack: usize) -> f64 {
        let c = view.cluster;
        let r = &c.racks[rack];
        let up: f64 = r.up.iter().map(|&l| c.link_bps[l as usize]).sum();
        let store: f64 =
            r.hosts.iter().filter(|&&h| c.hosts[h as usize].stores).map(|&h| c.hosts[h as usize].capacity_bytes).sum();
        if store > 0.0 {
            up / store
        } else {
            0.0
        }
    }
}

impl ReplicaPlacement for CcpBalance {
    fn name(&self) -> &'static str {
        "ccp-balance"
    }
    fn place(&mut self, req: &PlacementRequest, view: &View<'_>, rng: &mut ChaCha8Rng) -> Result<Vec<HostId>, String> {
        let mut draw = ChaCha8Rng::seed_from_u64(rng.gen::<u64>());
        select(
            view,
            req,
            rng,
            &mut |r| {
                let w = CcpBalance::weight(view, r);
                if w > 0.0 {
                    // ln(u) / w orders racks as u^(1/w) does, without underflow.
                    let u: f64 = draw.gen_range(f64::MIN_POSITIVE..1.0);
                    u.ln() / w
                } else {
                    f64::NEG_INFINITY
                }
            },
            &mut |_| 0.0,
        )
    }
    fn rack_score(&self, view: &View<'_>, rack: usize) -> f64 {
        CcpBalance::weight(view, rack)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{make_policy, POLICIES};
    use proptest::prelude::*;

    fn req(r: usize, f: usize, writer: Option<HostId>) -> PlacementRequest {
        PlacementRequest {
            file: 7,
            block: 0,
            bytes: 256e6,
            writer,
            redundancy: Redundancy::Replicate { r, f },
            time_s: 0.0,
        }
    }

    #[test]
    fn unknown_tag_lists_known() {
        let e = make_policy("random", &PolicyConfig::default()).err().map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(e, "unknown placement policy \"random\"; known: ccp, ccp-balance, sinbad, uniform");
    }

    #[test]
    fn uniform_hdfs_layout() {
        let c = Cluster::two_tier(4, 3, 1e9, 1.0, Some(4e8), 1e12, &[], &[]);
        let live = vec![true; 12];
        let used = vec![0.0; 12];
        let v = View { cluster: &c, live: &live, host_used: &used, balance_threshold: 0.1 };
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let hs = place_checked(&mut Uniform, &req(3, 1, Some(4)), &v, &mut rng).unwrap();
        // Local replica first, then two hosts of one other rack.
        assert_eq!(hs[0], 4);
        assert_eq!(c.rack_of(hs[1]), c.rack_of(hs[2]));
        assert_ne!(c.rack_of(hs[1]), 1);
    }

    #[test]
    fn ccp_balance_spreads_new_chunks_in_proportion_to_uplink_per_storage() {
        // 4 racks of 3 hosts with uplinks 1, 2, 3 and 4 x the base and equal
        // disks: one piece per request (r = 1, no writer) lands in rack i with
        // probability w_i / sum w = i / 10 (the first Efraimidis-Spirakis
        // draw); uniform gives 1/4 each. 10,000 requests: counts within 4
        // binomial standard deviations (sqrt(n p (1 - p)) <= 50).
        let c = Cluster::two_tier(4, 3, 1e9, 1.0, None, 1e12, &[1.0, 2.0, 3.0, 4.0], &[]);
        let live = vec![true; 12];
        let used = vec![0.0; 12];
        let v = View { cluster: &c, live: &live, host_used: &used, balance_threshold: 0.1 };
        let w: Vec<f64> = (0..4).map(|r| CcpBalance::weight(&v, r)).collect();
        for r in 1..4 {
            assert!((w[r] / w[0] - (r + 1) as f64).abs() < 1e-12, "{w:?}");
        }
        let n = 10_000;
        for (policy, want) in [("ccp-balance", [0.1, 0.2, 0.3, 0.4]), ("uniform", [0.25; 4])] {
            let mut p = make_policy(policy, &PolicyConfig::default()).unwrap();
            let mut rng = ChaCha8Rng::seed_from_u64(11);
            let mut count = [0usize; 4];
            for _ in 0..n {
                let hs = place_checked(p.as_mut(), &req(1, 0, None), &v, &mut rng).unwrap();
                count[c.rack_of(hs[0]) as usize] += 1;
            }
            for (r, &p) in want.iter().enumerate() {
                let sd = (n as f64 * p * (1.0 - p)).sqrt();
                assert!((count[r] as f64 - n as f64 * p).abs() < 4.0 * sd, "{policy}: rack {r}: {count:?}");
            }
        }
    }

    #[test]
    fn ccp_prefers_high_uplink_racks() {
        let cls = [UplinkClass::Low, UplinkClass::High, UplinkClass::Medium, UplinkClass::Low];
        let c = Cluster::two_tier(4, 3, 1e9, 1.0, None, 1e12, &[], &cls);
        let live = vec![true; 12];
        let used = vec![0.0; 12];
        let v = View { cluster: &c, live: &live, host_used: &used, balance_threshold: 0.1 };
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let r = PlacementRequest { writer: None, redundancy: Redundancy::Replicate { r: 2, f: 1 }, ..req(2, 1, None) };
        let hs = place_checked(&mut Ccp, &r, &v, &mut rng).unwrap();
        let mut racks: Vec<u32> = hs.iter().map(|&h| c.rack_of(h)).collect();
        racks.sort_unstable();
        assert_eq!(racks, vec![1, 2]); // High then Medium
    }

    #[test]
    fn impossible_request_is_explicit_failure() {
        let c = Cluster::two_tier(2, 2, 1e9, 1.0, None, 1e12, &[], &[]);
        let mut live = vec![true; 4];
        live[2] = false;
        live[3] = false;
        let used = vec![0.0; 4];
        let v = View { cluster: &c, live: &live, host_used: &used, balance_threshold: 0.1 };
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let e = place_checked(&mut Uniform, &req(3, 1, Some(0)), &v, &mut rng).unwrap_err();
        assert!(e.contains("fault domains"), "{e}");
        let ec = PlacementRequest { redundancy: Redundancy::Erasure { k: 2, m: 1 }, ..req(3, 1, None) };
        assert!(place_checked(&mut Uniform, &ec, &v, &mut rng).is_err());
    }

    /// Whether a placement never takes a rack of a lower class while a rack
    /// of a higher class that it did not take had room: enough hosts for
    /// the largest group among the candidates the selector used (the
    /// storage-balanced ones when enough racks have them, else any with
    /// free space). Written from the rule, not from `select`.
    fn classes_respected(v: &View<'_>, rq: &PlacementRequest, hs: &[HostId]) -> bool {
        let (local, groups) = layout(rq, v).unwrap();
        let need = groups.iter().copied().max().unwrap_or(0);
        let local_rack = local.map(|h| v.cluster.rack_of(h) as usize);
        let others: Vec<usize> = (0..v.cluster.racks.len()).filter(|&r| Some(r) != local_rack).collect();
        let counts: Vec<(usize, usize)> = (0..v.cluster.racks.len()).map(|r| rack_eligibility(v, rq, r)).collect();
        let balanced_ok = others.iter().filter(|&&r| counts[r].1 >= need).count() >= groups.len();
        let room = |r: usize| if balanced_ok { counts[r].1 >= need } else { counts[r].0 >= need };
        let taken: Vec<usize> =
            hs.iter().map(|&h| v.cluster.rack_of(h) as usize).filter(|&r| Some(r) != local_rack).collect();
        let rank = |r: usize| Ccp::rank(v.cluster.racks[r].class);
        taken.iter().all(|&t| others.iter().all(|&o| taken.contains(&o) || !room(o) || rank(o) <= rank(t)))
    }

    #[test]
    fn the_class_check_catches_a_policy_that_ignores_classes() {
        // One High rack and three Low racks with room, one replica: CCP
        // takes the High rack every time; uniform takes a Low rack with
        // probability 3/4, so over 40 seeds the check must flag it (all 40
        // on High has probability 4^-40).
        let cls = [UplinkClass::Low, UplinkClass::High, UplinkClass::Low, UplinkClass::Low];
        let c = Cluster::two_tier(4, 2, 1e9, 1.0, None, 1e12, &[], &cls);
        let (live, used) = (vec![true; 8], vec![0.0; 8]);
        let v = View { cluster: &c, live: &live, host_used: &used, balance_threshold: 0.1 };
        let rq = req(1, 0, None);
        let mut flagged = 0;
        for seed in 0..40 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let hs = place_checked(&mut Ccp, &rq, &v, &mut rng).unwrap();
            assert_eq!(c.rack_of(hs[0]), 1);
            assert!(classes_respected(&v, &rq, &hs));
            let hs = place_checked(&mut Uniform, &rq, &v, &mut rng).unwrap();
            flagged += usize::from(!classes_respected(&v, &rq, &hs));
        }
        assert!(flagged > 0);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn never_fewer_domains_than_asked(
            racks in 1usize..6, hpr in 1usize..4, dead in proptest::collection::vec(any::<bool>(), 24),
            r in 1usize..5, f in 0usize..4, ec in any::<bool>(), tag in 0usize..3, seed in any::<u64>(),
        ) {
            let c = Cluster::two_tier(racks, hpr, 1e9, 1.0, Some(4e8), 1e12, &[], &[]);
            let n = racks * hpr;
            let live: Vec<bool> = (0..n).map(|h| !dead[h % dead.len()] || h % 3 == 0).collect();
            let used = vec![0.0; n];
            let v = View { cluster: &c, live: &live, host_used: &used, balance_threshold: 0.1 };
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let red = if ec { Redundancy::Erasure { k: r, m: f } } else { Redundancy::Replicate { r, f } };
            let rq = PlacementRequest { file: 1, block: 0, bytes: 256e6, writer: Some((seed % n as u64) as HostId), redundancy: red, time_s: 0.0 };
            let mut p = make_policy(POLICIES[tag], &PolicyConfig::default()).unwrap();
            if let Ok(hs) = place_checked(p.as_mut(), &rq, &v, &mut rng) {
                let mut rs: Vec<u32> = hs.iter().map(|&h| c.rack_of(h)).collect();
                rs.sort_unstable();
                rs.dedup();
                prop_assert!(rs.len() >= red.domains());
                prop_assert_eq!(hs.len(), red.pieces());
            }
        }

        /// CCP (section 5.2: High-Uplink ToRs before Medium and Low) never
        /// takes a Low rack while a High one it left had room, nor any
        /// lower class over a higher one, with full hosts, hosts past the
        /// storage-balance threshold, dead hosts and a writer's local piece.
        #[test]
        fn ccp_never_takes_a_lower_class_while_a_higher_one_has_room(
            racks in 2usize..8, hpr in 1usize..4, cls in proptest::collection::vec(0u8..3, 8),
            fill in proptest::collection::vec(0u8..4, 32), r in 1usize..4, spread in any::<bool>(),
            writer in proptest::option::of(0u32..32), seed in any::<u64>(),
        ) {
            let classes: Vec<UplinkClass> =
                cls.iter().map(|&k| [UplinkClass::Low, UplinkClass::Medium, UplinkClass::High][k as usize]).collect();
            let c = Cluster::two_tier(racks, hpr, 1e9, 1.0, None, 1000.0, &[], &classes);
            let n = racks * hpr;
            // 0: empty, 1: 30% used, 2: full, 3: dead.
            let used: Vec<f64> = (0..n).map(|h| [0.0, 300.0, 1000.0, 0.0][fill[h] as usize]).collect();
            let live: Vec<bool> = (0..n).map(|h| fill[h] != 3).collect();
            let v = View { cluster: &c, live: &live, host_used: &used, balance_threshold: 0.1 };
            let f = if spread { r - 1 } else { 0 };
            let rq = PlacementRequest { writer: writer.map(|w| w % n as u32), ..req(r, f, None) };
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            if let Ok(hs) = place_checked(&mut Ccp, &rq, &v, &mut rng) {
                prop_assert!(classes_respected(&v, &rq, &hs), "{:?} {:?}", hs, classes);
            }
        }
    }
}
