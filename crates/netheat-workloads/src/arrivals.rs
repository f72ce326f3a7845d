//! Open-loop flow arrivals: Poisson at a target load, on-off bursts,
//! periodic batches and trace replay.
//!
//! Every generator is seeded (ChaCha8) and deterministic, returns
//! [`FlowRow`]s sorted by `start_s` (seconds) with ids `0, 1, ...` in that
//! order (plus [`Poisson::first_id`] etc. where offered), sizes in bytes,
//! no task, priority 0, weight 1 and no rate cap. [`to_flow_spec`] turns a
//! row into an engine flow with ECMP routing.
//!
//! Background traffic from a rack-to-rack traffic matrix is Poisson with
//! [`Pattern::RackMatrix`] ([`Poisson::rack_matrix`]): the matrix gives the relative rate of each
//! rack pair and the load target fixes the absolute rate.

use netheat_engine::{FlowSpec, Route};
use netheat_topology::Topology;
use rand::Rng;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use netheat_core::budget::format_count;

use crate::budget::FlowCap;
use crate::load::{calibrate, Calibration, LinkSet, PairSampler, Pattern};
use crate::sizes::SizeDist;
use crate::{FlowRow, GenError};

/// When a generator stops.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Horizon {
    /// Flows arriving in `[0, duration)` seconds.
    Duration(f64),
    /// Exactly this many flows.
    Flows(usize),
}

/// The engine flow of a row: same id, endpoints, size, start, task,
/// priority, weight and cap, routed by ECMP.
pub fn to_flow_spec(row: &FlowRow) -> FlowSpec {
    let mut f = FlowSpec::new(row.flow_id, row.src, row.dst, row.bytes, row.start_s, Route::Ecmp)
        .with_priority(row.priority)
        .with_weight(row.weight);
    f.rate_cap_bps = row.rate_cap_bps;
    f.task_id = row.task_id;
    f
}

fn row(flow_id: u64, start_s: f64, src: u32, dst: u32, bytes: f64) -> FlowRow {
    FlowRow { flow_id, start_s, src, dst, bytes, task_id: None, priority: 0, weight: 1.0, rate_cap_bps: None }
}

/// An exponential inter-arrival time at rate `rate` (per second).
#[inline]
fn exp_gap<R: Rng + ?Sized>(rng: &mut R, rate: f64) -> f64 {
    -(1.0 - rng.gen::<f64>()).ln() / rate
}

/// Poisson arrivals offering a target load on a link set.
#[derive(Debug, Clone, PartialEq)]
pub struct Poisson {
    /// Links whose load is targeted.
    pub links: LinkSet,
    /// Target offered load as a fraction of the set's total capacity.
    pub load: f64,
    /// Flow sizes.
    pub sizes: SizeDist,
    /// Endpoint pairs.
    pub pattern: Pattern,
    /// When to stop.
    pub horizon: Horizon,
    /// Id of the first flow.
    pub first_id: u64,
}

impl Poisson {
    /// Uniform random endpoints, ids from 0.
    pub fn new(links: LinkSet, load: f64, sizes: SizeDist, horizon: Horizon) -> Self {
        Self { links, load, sizes, pattern: Pattern::Uniform, horizon, first_id: 0 }
    }

    /// Background traffic: rack pairs weighted by a rack-to-rack traffic
    /// matrix (`weights[src_rack][dst_rack]`, any scale), scaled so that the
    /// offered load on `links` is `load`.
    pub fn rack_matrix(weights: Vec<Vec<f64>>, links: LinkSet, load: f64, sizes: SizeDist, horizon: Horizon) -> Self {
        Self::new(links, load, sizes, horizon).with_pattern(Pattern::RackMatrix(weights))
    }

    /// Sets the endpoint pattern.
    pub fn with_pattern(mut self, pattern: Pattern) -> Self {
        self.pattern = pattern;
        self
    }

    /// The arrival rate this generator uses on `topo` (see [`crate::load`]).
    pub fn calibration(&self, topo: &Topology) -> Result<Calibration, GenError> {
        self.sizes.validate()?;
        let sampler = PairSampler::new(topo, &self.pattern)?;
        calibrate(topo, &self.links, &sampler, self.sizes.mean(), self.load)
    }

    /// Generates the flows, sorted by start time.
    pub fn generate(&self, topo: &Topology, seed: u64) -> Result<Vec<FlowRow>, GenError> {
        self.sizes.validate()?;
        let sampler = PairSampler::new(topo, &self.pattern)?;
        let cal = calibrate(topo, &self.links, &sampler, self.sizes.mean(), self.load)?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (limit_t, limit_n) = horizon_limits(self.horizon)?;
        let cap = FlowCap::current()?;
        // Reserve what is expected, at most 4M rows up front.
        let mut out =
            Vec::with_capacity(limit_n.min(cap.limit).min((cal.lambda_per_s * limit_t).min(4e6) as usize + 16));
        let mut t = 0.0;
        loop {
            t += exp_gap(&mut rng, cal.lambda_per_s);
            if t >= limit_t || out.len() >= limit_n {
                break;
            }
            cap.check(out.len() + 1, "the flows of a Poisson generator")?;
            let (s, d) = sampler.sample(&mut rng);
            let b = self.sizes.sample(&mut rng);
            out.push(row(self.first_id + out.len() as u64, t, s, d, b));
        }
        Ok(out)
    }
}

fn horizon_limits(h: Horizon) -> Result<(f64, usize), GenError> {
    match h {
        Horizon::Duration(d) if d.is_finite() && d >= 0.0 => Ok((d, usize::MAX)),
        Horizon::Duration(d) => Err(GenError::param("duration", format!("{d} s must be finite and >= 0"))),
        Horizon::Flows(n) => Ok((f64::INFINITY, n)),
    }
}

/// Most on/off periods an on-off generator walks through (over all sources).
pub const MAX_PERIODS: f64 = 1e8;

/// Bursty sources: each source host alternates exponential on and off
/// periods (independently, starting in its stationary phase) and, while
/// on, starts flows as a Poisson process.
#[derive(Debug, Clone, PartialEq)]
pub struct OnOff {
    /// Source hosts (each runs its own on/off process).
    pub sources: Vec<u32>,
    /// Mean on period, seconds.
    pub on_mean_s: f64,
    /// Mean off period, seconds.
    pub off_mean_s: f64,
    /// Flow arrival rate of one source while on, flows per second.
    pub rate_on_per_s: f64,
    /// Flow sizes.
    pub sizes: SizeDist,
    /// Destinations: uniform over other hosts, or over other racks' hosts.
    pub inter_rack_only: bool,
    /// Flows start in `[0, duration_s)`.
    pub duration_s: f64,
}

impl OnOff {
    /// Long-run mean flow rate of one source, flows per second.
    pub fn mean_rate_per_source(&self) -> f64 {
        self.rate_on_per_s * self.on_mean_s / (self.on_mean_s + self.off_mean_s)
    }

    /// Generates the flows, sorted by start time (ties by source order).
    pub fn generate(&self, topo: &Topology, seed: u64) -> Result<Vec<FlowRow>, GenError> {
        for (n, v) in
            [("on_mean_s", self.on_mean_s), ("off_mean_s", self.off_mean_s), ("rate_on_per_s", self.rate_on_per_s)]
        {
            if !(v.is_finite() && v > 0.0) {
                return Err(GenError::param(n, format!("{v} must be > 0")));
            }
        }
        horizon_limits(Horizon::Duration(self.duration_s))?;
        self.sizes.validate()?;
        let hosts = topo.hosts().len() as u32;
        if let Some(&h) = self.sources.iter().find(|&&h| h >= hosts) {
            return Err(GenError::param("sources", format!("host {h} does not exist ({hosts} hosts)")));
        }
        let pattern = if self.inter_rack_only { Pattern::InterRack } else { Pattern::Uniform };
        let per_rack = topo.hosts_per_rack();
        PairSampler::new(topo, &pattern)?;
        // Every on or off period is a step of the loop below: bound them, so
        // tiny periods over a long duration cannot spin for ever (and the
        // mean period stays far above the clock's resolution at `duration`).
        let periods = self.sources.len() as f64 * 2.0 * self.duration_s / (self.on_mean_s + self.off_mean_s);
        if periods > MAX_PERIODS {
            return Err(GenError::param(
                "on_mean_s",
                format!(
                    "on and off periods of {} s and {} s over {} s make about {} periods over {} sources \
                     (at most {}); lengthen the periods or shorten the duration",
                    self.on_mean_s,
                    self.off_mean_s,
                    self.duration_s,
                    format_count(periods.round()),
                    self.sources.len(),
                    format_count(MAX_PERIODS)
                ),
            ));
        }
        let cap = FlowCap::current()?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut out = Vec::new();
        let p_on = self.on_mean_s / (self.on_mean_s + self.off_mean_s);
        for &s in &self.sources {
            let mut on = rng.gen::<f64>() < p_on;
            let mut t = 0.0;
            while t < self.duration_s {
                let len = exp_gap(&mut rng, 1.0 / if on { self.on_mean_s } else { self.off_mean_s });
                let end = (t + len).min(self.duration_s);
                if on {
                    let mut a = t + exp_gap(&mut rng, self.rate_on_per_s);
                    while a < end {
                        let d = if self.inter_rack_only {
                            let first = s / per_rack * per_rack;
                            let mut d = rng.gen_range(0..hosts - per_rack);
                            if d >= first {
                                d += per_rack;
                            }
                            d
                        } else {
                            let mut d = rng.gen_range(0..hosts - 1);
                            if d >= s {
                                d += 1;
                            }
                            d
                        };
                        cap.check(out.len() + 1, "the flows of an on-off generator")?;
                        out.push(row(0, a, s, d, self.sizes.sample(&mut rng)));
                        a += exp_gap(&mut rng, self.rate_on_per_s);
                    }
                }
                t += len;
                on = !on;
            }
        }
        out.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
        for (i, r) in out.iter_mut().enumerate() {
            r.flow_id = i as u64;
        }
        Ok(out)
    }
}

/// Synchronised batches: every `period_s` seconds (from `offset_s`), `k`
/// flows start at once between pairs of the pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct Batches {
    /// Flows per batch.
    pub k: usize,
    /// Time between batches, seconds.
    pub period_s: f64,
    /// Time of the first batch, seconds.
    pub offset_s: f64,
    /// Number of batches.
    pub batches: usize,
    /// Flow sizes.
    pub sizes: SizeDist,
    /// Endpoint pairs.
    pub pattern: Pattern,
}

impl Batches {
    /// Generates the flows, sorted by start time.
    pub fn generate(&self, topo: &Topology, seed: u64) -> Result<Vec<FlowRow>, GenError> {
        if !(self.period_s.is_finite() && self.period_s > 0.0) {
            return Err(GenError::param("period_s", format!("{} must be > 0", self.period_s)));
        }
        if !(self.offset_s.is_finite() && self.offset_s >= 0.0) {
            return Err(GenError::param("offset_s", format!("{} must be >= 0", self.offset_s)));
        }
        self.sizes.validate()?;
        let sampler = PairSampler::new(topo, &self.pattern)?;
        let cap = FlowCap::current()?;
        let n = self.k.saturating_mul(self.batches);
        cap.check(
            n,
            &format!("{} batches of {} flows", format_count(self.batches as f64), format_count(self.k as f64)),
        )?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut out = Vec::with_capacity(n);
        for b in 0..self.batches {
            let t = self.offset_s + b as f64 * self.period_s;
            for _ in 0..self.k {
                let (s, d) = sampler.sample(&mut rng);
                out.push(row(out.len() as u64, t, s, d, self.sizes.sample(&mut rng)));
            }
        }
        Ok(out)
    }
}

/// Replays recorded flows: sorted by start time, times multiplied by
/// `time_scale` (0.5 replays twice as fast) and shifted by `offset_s`, and,
/// with `repeat_until_s`, the trace looped back to back (each copy shifted
/// by the scaled span of the trace, `max start - min start` plus one mean
/// gap) until that time. Flow ids are renumbered `0, 1, ...` in time order
/// when repeating and kept otherwise; all other fields are kept.
#[derive(Debug, Clone, PartialEq)]
pub struct Replay {
    /// Multiplier of start times.
    pub time_scale: f64,
    /// Added to start times after scaling, seconds.
    pub offset_s: f64,
    /// Loop the trace until this time, seconds.
    pub repeat_until_s: Option<f64>,
}

impl Default for Replay {
    fn default() -> Self {
        Self { time_scale: 1.0, offset_s: 0.0, repeat_until_s: None }
    }
}

impl Replay {
    /// How many flows [`Replay::apply`] makes of a trace of `rows` flows
    /// starting over `span_s` seconds (max start - min start, unscaled): the
    /// rows times the copies that start before `repeat_until_s`.
    pub fn estimate(&self, rows: usize, span_s: f64) -> f64 {
        let Some(until) = self.repeat_until_s else { return rows as f64 };
        let span = span_s * self.time_scale;
        let period = span + if rows > 1 { span / (rows - 1) as f64 } else { 0.0 };
        if period.is_nan() || period <= 0.0 {
            return rows as f64;
        }
        rows as f64 * ((until - self.offset_s) / period).ceil().max(1.0)
    }

    /// The replayed flows, sorted by start time (stable for ties).
    pub fn apply(&self, rows: &[FlowRow], num_hosts: usize) -> Result<Vec<FlowRow>, GenError> {
        if !(self.time_scale.is_finite() && self.time_scale > 0.0) {
            return Err(GenError::param("time_scale", format!("{} must be > 0", self.time_scale)));
        }
        if !(self.offset_s.is_finite() && self.offset_s >= 0.0) {
            return Err(GenError::param("offset_s", format!("{} must be >= 0", self.offset_s)));
        }
        if let Some(r) = rows.iter().find(|r| r.src as usize >= num_hosts || r.dst as usize >= num_hosts) {
            return Err(GenError::NotEnoughHosts(format!(
                "flow {} goes {} -> {} but the topology has {num_hosts} hosts",
                r.flow_id, r.src, r.dst
            )));
        }
        let mut base: Vec<FlowRow> = rows.to_vec();
        base.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
        let Some(first) = base.first().map(|r| r.start_s) else { return Ok(base) };
        for r in &mut base {
            r.start_s = (r.start_s - first) * self.time_scale + self.offset_s;
            if !r.start_s.is_finite() {
                return Err(GenError::param(
                    "time_scale",
                    format!("flow {} would start at {} s; lower the time scale or the offset", r.flow_id, r.start_s),
                ));
            }
        }
        let Some(until) = self.repeat_until_s else { return Ok(base) };
        let span = base.last().map(|r| r.start_s - self.offset_s).unwrap_or(0.0);
        let period = span + if base.len() > 1 { span / (base.len() - 1) as f64 } else { 0.0 };
        if period <= 0.0 {
            return Err(GenError::param("repeat_until_s", "cannot loop a trace whose flows all start at once"));
        }
        let cap = FlowCap::current()?;
        let mut out = Vec::new();
        let mut k = 0.0;
        'outer: loop {
            for r in &base {
                let t = r.start_s + k * period;
                if t >= until {
                    break 'outer;
                }
                cap.check(out.len() + 1, "the replayed trace")?;
                out.push(FlowRow { flow_id: out.len() as u64, start_s: t, ..r.clone() });
            }
            k += 1.0;
        }
        Ok(out)
    }
}
