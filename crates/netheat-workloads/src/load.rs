//! Link sets, traffic patterns and the arithmetic that turns a target load
//! into an arrival rate.
//!
//! # Calibration
//! A flow of `S` bytes crossing `n` links of a link set `L` puts `8·S·n`
//! bits on `L`. With Poisson arrivals at rate `λ` (flows/s), sizes i.i.d.
//! and independent of endpoints and paths, the offered bit rate on `L` is
//! `λ · E[S] · 8 · E[n]`, and the target is `load · Σ_{l∈L} cap(l)`, so
//!
//! ```text
//! λ = load · Σ cap / (8 · E[S] · E[n])
//! ```
//!
//! `E[n]` averages over the pattern's endpoint pairs and, per pair, over its
//! ECMP paths weighted by `Routing::path_weight` (the engine's choice).
//! It is computed **exactly** when the set is [`LinkSet::HostUplinks`]
//! (every path leaves its source through exactly one host uplink, so
//! `E[n] = 1`), or [`LinkSet::TorUplinks`] on a topology where every host's
//! ports are on its own rack's ToR (a path crosses exactly one ToR uplink
//! iff its endpoints are in different racks, so `E[n]` is the pattern's
//! probability of crossing racks). Otherwise (custom sets, Subways wiring)
//! it is **estimated** from [`SAMPLED_PAIRS`] pairs drawn from the pattern
//! with a fixed seed, averaging exactly over each pair's paths;
//! [`Calibration::exact`] says which.

use netheat_core::{HostId, LinkId, Routing};
use netheat_topology::{Direction, Layer, Topology};
use rand::Rng;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::GenError;

/// Endpoint pairs sampled when `E[#links on a path]` has no exact formula.
pub const SAMPLED_PAIRS: usize = 20_000;

/// A set of directed links whose load a generator targets.
#[derive(Debug, Clone, PartialEq)]
pub enum LinkSet {
    /// Every ToR uplink in the up direction (layer `tor-agg`, up).
    TorUplinks,
    /// Every host NIC link in the up direction (layer `host-tor`, up).
    HostUplinks,
    /// An explicit list of directed links.
    Custom(Vec<LinkId>),
}

impl LinkSet {
    /// The directed links of the set, in id order.
    pub fn links(&self, topo: &Topology) -> Vec<LinkId> {
        let pick = |layer: Layer| -> Vec<LinkId> {
            topo.links()
                .iter()
                .enumerate()
                .filter(|(_, l)| l.layer == layer && l.direction == Direction::Up)
                .map(|(i, _)| i as LinkId)
                .collect()
        };
        match self {
            LinkSet::TorUplinks => pick(Layer::TorAgg),
            LinkSet::HostUplinks => pick(Layer::HostTor),
            LinkSet::Custom(v) => {
                let mut v = v.clone();
                v.sort_unstable();
                v.dedup();
                v
            }
        }
    }

    /// Sum of the set's nominal capacities, bits per second.
    pub fn capacity_bps(&self, topo: &Topology) -> f64 {
        self.links(topo).iter().map(|&l| topo.link_capacity_bps(l)).sum()
    }
}

/// Which (source, destination) pairs flows go between.
#[derive(Debug, Clone, PartialEq)]
pub enum Pattern {
    /// Source uniform over all hosts, destination uniform over the others.
    Uniform,
    /// Source uniform over all hosts, destination uniform over the hosts of
    /// other racks.
    InterRack,
    /// Rack pair `(r, s)` with probability proportional to `weights[r][s]`
    /// (a rack-to-rack traffic matrix, any non-negative scale), then hosts
    /// uniform within the racks (distinct when `r == s`).
    RackMatrix(Vec<Vec<f64>>),
}

/// Draws endpoint pairs of a [`Pattern`] on a topology.
#[derive(Debug, Clone)]
pub struct PairSampler {
    hosts: u32,
    per_rack: u32,
    kind: SamplerKind,
}

#[derive(Debug, Clone)]
enum SamplerKind {
    Uniform,
    InterRack,
    /// Cumulative weights over rack pairs `r * R + s`.
    Matrix {
        cum: Vec<f64>,
        racks: u32,
    },
}

impl PairSampler {
    /// Checks the pattern against the topology and prepares sampling.
    pub fn new(topo: &Topology, pattern: &Pattern) -> Result<Self, GenError> {
        let hosts = topo.hosts().len() as u32;
        let per_rack = topo.hosts_per_rack();
        let racks = topo.racks().len() as u32;
        let kind = match pattern {
            Pattern::Uniform => {
                if hosts < 2 {
                    return Err(GenError::NotEnoughHosts("uniform traffic needs at least 2 hosts".into()));
                }
                SamplerKind::Uniform
            }
            Pattern::InterRack => {
                if racks < 2 {
                    return Err(GenError::NotEnoughHosts("inter-rack traffic needs at least 2 racks".into()));
                }
                SamplerKind::InterRack
            }
            Pattern::RackMatrix(w) => {
                if w.len() != racks as usize || w.iter().any(|row| row.len() != racks as usize) {
                    return Err(GenError::param("weights", format!("the traffic matrix must be {racks} x {racks}")));
                }
                let mut cum = Vec::with_capacity((racks * racks) as usize);
                let mut acc = 0.0;
                for (r, row) in w.iter().enumerate() {
                    for (s, &x) in row.iter().enumerate() {
                        if !(x.is_finite() && x >= 0.0) {
                            return Err(GenError::param(format!("weights[{r}][{s}]"), format!("{x} must be >= 0")));
                        }
                        if r == s && x > 0.0 && per_rack < 2 {
                            return Err(GenError::param(
                                format!("weights[{r}][{s}]"),
                                "intra-rack traffic needs at least 2 hosts per rack",
                            ));
                        }
                        acc += x;
                        cum.push(acc);
                    }
                }
                if acc <= 0.0 {
                    return Err(GenError::param("weights", "the traffic matrix is all zero"));
                }
                SamplerKind::Matrix { cum, racks }
            }
        };
        Ok(Self { hosts, per_rack, kind })
    }

    /// Draws one `(src, dst)` pair, `src != dst`.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> (HostId, HostId) {
        match &self.kind {
            SamplerKind::Uniform => {
                let s = rng.gen_range(0..self.hosts);
                let mut d = rng.gen_range(0..self.hosts - 1);
                if d >= s {
                    d += 1;
                }
                (s, d)
            }
            SamplerKind::InterRack => {
                let s = rng.gen_range(0..self.hosts);
                let first = s / self.per_rack * self.per_rack;
                let mut d = rng.gen_range(0..self.hosts - self.per_rack);
                if d >= first {
                    d += self.per_rack;
                }
                (s, d)
            }
            SamplerKind::Matrix { cum, racks } => {
                let total = *cum.last().expect("non-empty");
                let u = rng.gen::<f64>() * total;
                let k = cum.partition_point(|&c| c <= u).min(cum.len() - 1) as u32;
                let (r, q) = (k / racks, k % racks);
                let s = r * self.per_rack + rng.gen_range(0..self.per_rack);
                let d = if r == q {
                    let mut d = rng.gen_range(0..self.per_rack - 1);
                    if r * self.per_rack + d >= s {
                        d += 1;
                    }
                    r * self.per_rack + d
                } else {
                    q * self.per_rack + rng.gen_range(0..self.per_rack)
                };
                (s, d)
            }
        }
    }

    /// Probability that a pair's endpoints are in different racks.
    pub fn cross_rack_probability(&self) -> f64 {
        match &self.kind {
            SamplerKind::Uniform => f64::from(self.hosts - self.per_rack) / f64::from(self.hosts - 1),
            SamplerKind::InterRack => 1.0,
            SamplerKind::Matrix { cum, racks } => {
                let total = *cum.last().expect("non-empty");
                let mut diag = 0.0;
                for r in 0..*racks {
                    let k = (r * racks + r) as usize;
                    diag += cum[k] - if k == 0 { 0.0 } else { cum[k - 1] };
                }
                1.0 - diag / total
            }
        }
    }
}

/// The outcome of turning a target load into an arrival rate.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// Flow arrival rate, flows per second.
    pub lambda_per_s: f64,
    /// Mean flow size `E[S]`, bytes.
    pub mean_bytes: f64,
    /// `E[#links of the set on a flow's path]`.
    pub links_per_flow: f64,
    /// `Σ cap` over the set, bits per second.
    pub capacity_bps: f64,
    /// Whether `links_per_flow` is exact (see the module docs) or sampled.
    pub exact: bool,
}

/// Weighted mean over a pair's ECMP paths of how many of them are in `member`.
pub fn expected_links_on_path(
    topo: &Topology,
    member: &[bool],
    src: HostId,
    dst: HostId,
    buf: &mut Vec<LinkId>,
) -> f64 {
    let n = topo.num_paths(src, dst);
    let (mut num, mut den) = (0.0, 0.0);
    for k in 0..n {
        topo.path(src, dst, k, buf);
        let w = topo.path_weight(src, dst, k);
        num += w * buf.iter().filter(|&&l| member[l as usize]).count() as f64;
        den += w;
    }
    if den > 0.0 {
        num / den
    } else {
        0.0
    }
}

/// Membership bitmap of a link list.
pub fn link_mask(topo: &Topology, links: &[LinkId]) -> Vec<bool> {
    let mut m = vec![false; topo.links().len()];
    for &l in links {
        m[l as usize] = true;
    }
    m
}

/// `E[#links of the set on a path]` for the pattern, and whether it is exact.
pub fn links_per_flow(topo: &Topology, set: &LinkSet, sampler: &PairSampler) -> (f64, bool) {
    let own_tor_only = topo.hosts().iter().all(|h| h.ports.iter().all(|p| p.tor == h.rack));
    match set {
        LinkSet::HostUplinks => (1.0, true),
        LinkSet::TorUplinks if own_tor_only => (sampler.cross_rack_probability(), true),
        _ => {
            let member = link_mask(topo, &set.links(topo));
            let mut rng = ChaCha8Rng::seed_from_u64(0x11f0_c0de);
            let mut buf = Vec::new();
            let mut acc = 0.0;
            for _ in 0..SAMPLED_PAIRS {
                let (s, d) = sampler.sample(&mut rng);
                acc += expected_links_on_path(topo, &member, s, d, &mut buf);
            }
            (acc / SAMPLED_PAIRS as f64, false)
        }
    }
}

/// Arrival rate that offers `load` (fraction of `Σ cap` of `set`) with
/// flows of mean size `mean_bytes` between pairs of `sampler`.
pub fn calibrate(
    topo: &Topology,
    set: &LinkSet,
    sampler: &PairSampler,
    mean_bytes: f64,
    load: f64,
) -> Result<Calibration, GenError> {
    if !(load.is_finite() && load > 0.0) {
        return Err(GenError::param("load", format!("{load} must be > 0")));
    }
    if !(mean_bytes.is_finite() && mean_bytes > 0.0) {
        return Err(GenError::param("sizes", format!("mean size {mean_bytes} must be > 0")));
    }
    let capacity_bps = set.capacity_bps(topo);
    if capacity_bps <= 0.0 {
        return Err(GenError::param("links", "the link set is empty or has no capacity"));
    }
    let (links_per_flow, exact) = links_per_flow(topo, set, sampler);
    if links_per_flow <= 0.0 {
        return Err(GenError::param("links", "no path of the pattern crosses the link set"));
    }
    let lambda_per_s = load * capacity_bps / (8.0 * mean_bytes * links_per_flow);
    Ok(Calibration { lambda_per_s, mean_bytes, links_per_flow, capacity_bps, exact })
}

/// Offered load of flows on a link set over `duration_s`: the sum over flows
/// of `8 · bytes · E[#set links on that flow's ECMP paths]`, divided by
/// `Σ cap · duration_s`. Independent of the calibration (it looks at each
/// flow's actual endpoints and paths), so it checks it.
pub fn offered_load(topo: &Topology, set: &LinkSet, flows: &[crate::FlowRow], duration_s: f64) -> f64 {
    let links = set.links(topo);
    let member = link_mask(topo, &links);
    let cap: f64 = links.iter().map(|&l| topo.link_capacity_bps(l)).sum();
    let mut buf = Vec::new();
    let mut cache = std::collections::HashMap::new();
    let mut bits = 0.0;
    for f in flows {
        let n = *cache
            .entry((f.src, f.dst))
            .or_insert_with(|| expected_links_on_path(topo, &member, f.src, f.dst, &mut buf));
        bits += 8.0 * f.bytes * n;
    }
    bits / (cap * duration_s)
}
