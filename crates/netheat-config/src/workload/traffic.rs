//! `[[traffic]]` tables: open-loop flow generators, and the coflow
//! traces shared with the `coflow` app.

use netheat_core::budget::{self, format_count, format_number, task_overhead_bytes};
use netheat_workloads::apps::coflow::{map_rack_shuffles, MappedShuffles, RackShuffle};
use netheat_workloads::{read_flows_csv, Batches, FlowRow, GenError, Horizon, LinkSet, OnOff, Poisson, Replay};

use super::{rack_shuffle, LinksName, TrafficKind, TrafficTable, Wcx, Workload};
use crate::cx::count;
use crate::error::ConfigError;
use crate::units::Duration;

impl Wcx<'_> {
    pub(super) fn traffic(
        &self,
        i: usize,
        t: &TrafficTable,
        seed: u64,
        out: &mut Workload,
    ) -> Result<Vec<FlowRow>, ConfigError> {
        let p = format!("traffic[{i}]");
        let set = present!(t,
            load => "load", links => "links", sizes => "sizes", pattern => "pattern", matrix => "matrix",
            duration => "duration", flows => "flows", priority => "priority", on_mean => "on-mean",
            off_mean => "off-mean", rate_on => "rate-on", sources => "sources", inter_rack => "inter-rack", k => "k",
            period => "period", offset => "offset", batches => "batches", file => "file", time_scale => "time-scale",
            repeat_until => "repeat-until", dataset => "dataset", bytes_scale => "bytes-scale",
        );
        let mut rows = match t.kind {
            TrafficKind::Poisson => {
                self.only(
                    &p,
                    "poisson",
                    &set,
                    &["load", "links", "sizes", "pattern", "matrix", "duration", "flows", "priority"],
                )?;
                let load = self.positive(&format!("{p}.load"), t.load, "fraction")?;
                let links = match t.links.unwrap_or(LinksName::TorUplinks) {
                    LinksName::TorUplinks => LinkSet::TorUplinks,
                    LinksName::HostUplinks => LinkSet::HostUplinks,
                };
                let horizon = match t.flows {
                    Some(n) => Horizon::Flows(count(self.cx, &format!("{p}.flows"), n, 1)?),
                    None => Horizon::Duration(self.duration(&p, t.duration)?),
                };
                let sizes = self.sizes(&format!("{p}.sizes"), t.sizes.as_ref())?;
                let pattern = self.pattern(&p, t.pattern, t.matrix.as_deref())?;
                let gen = Poisson::new(links, load, sizes, horizon).with_pattern(pattern);
                let lambda = gen.calibration(self.topo).map_err(|e| self.gen(&p, e))?.lambda_per_s;
                let (flows, key, hint) = match horizon {
                    Horizon::Flows(n) => (n as f64, format!("{p}.flows"), "lower `flows`".to_string()),
                    Horizon::Duration(d) => {
                        // One second alone too large: the rate (load) is the problem.
                        if lambda * budget::flow_bytes() as f64 > self.budget()? {
                            (
                                lambda * d,
                                format!("{p}.load"),
                                format!("lower `load` ({}) or use larger flows", format_number(load)),
                            )
                        } else {
                            (
                                lambda * d,
                                self.duration_key(&p, t.duration),
                                format!("lower `duration` ({} s) or `load`, or use larger flows", format_number(d)),
                            )
                        }
                    }
                };
                let what = match horizon {
                    Horizon::Flows(_) => format!("`{p}`: {} flows", format_count(flows)),
                    Horizon::Duration(d) => format!(
                        "`{p}`: about {} flows ({} per second for {} s)",
                        format_count(flows.round()),
                        format_count(lambda.round()),
                        format_number(d)
                    ),
                };
                self.fits(&key, what, flows, 0.0, out, &hint)?;
                gen.generate(self.topo, seed).map_err(|e| self.gen(&p, e))?
            }
            TrafficKind::OnOff => {
                self.only(
                    &p,
                    "on-off",
                    &set,
                    &["sizes", "duration", "priority", "on-mean", "off-mean", "rate-on", "sources", "inter-rack"],
                )?;
                let sources = match &t.sources {
                    None => (0..self.topo.hosts().len() as u32).collect(),
                    Some(v) => v
                        .iter()
                        .enumerate()
                        .map(|(j, h)| {
                            self.topo
                                .host_ref(h)
                                .ok_or_else(|| self.at(&format!("{p}.sources[{j}]"), format!("unknown host `{h}`")))
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                };
                let gen = OnOff {
                    sources,
                    on_mean_s: self.positive(&format!("{p}.on-mean"), t.on_mean.map(|d| d.0), "duration")?,
                    off_mean_s: self.positive(&format!("{p}.off-mean"), t.off_mean.map(|d| d.0), "duration")?,
                    rate_on_per_s: self.positive(&format!("{p}.rate-on"), t.rate_on, "rate (flows/s)")?,
                    sizes: self.sizes(&format!("{p}.sizes"), t.sizes.as_ref())?,
                    inter_rack_only: t.inter_rack.unwrap_or(false),
                    duration_s: self.duration(&p, t.duration)?,
                };
                let per_s = gen.sources.len() as f64 * gen.mean_rate_per_source();
                let flows = per_s * gen.duration_s;
                let (key, hint) = if per_s * budget::flow_bytes() as f64 > self.budget()? {
                    (format!("{p}.rate-on"), format!("lower `rate-on` ({})", format_number(gen.rate_on_per_s)))
                } else {
                    (
                        self.duration_key(&p, t.duration),
                        format!("lower `duration` ({} s) or `rate-on`", format_number(gen.duration_s)),
                    )
                };
                let what = format!(
                    "`{p}`: about {} flows ({} per second for {} s)",
                    format_count(flows.round()),
                    format_count(per_s.round()),
                    format_number(gen.duration_s)
                );
                self.fits(&key, what, flows, 0.0, out, &hint)?;
                gen.generate(self.topo, seed).map_err(|e| match &e {
                    GenError::InvalidParameter { name, .. } if name == "on_mean_s" => {
                        self.gen(&format!("{p}.on-mean"), e)
                    }
                    _ => self.gen(&p, e),
                })?
            }
            TrafficKind::Batches => {
                self.only(
                    &p,
                    "batches",
                    &set,
                    &["sizes", "pattern", "matrix", "priority", "k", "period", "offset", "batches"],
                )?;
                let k = count(self.cx, &format!("{p}.k"), t.k.ok_or_else(|| self.at(&p, "needs `k`"))?, 1)?;
                let n = count(self.cx, &format!("{p}.batches"), t.batches.unwrap_or(1), 1)?;
                let flows = k as f64 * n as f64;
                let (key, hint) = if k as f64 * budget::flow_bytes() as f64 > self.budget()? {
                    (format!("{p}.k"), format!("lower `k` ({k})"))
                } else {
                    (format!("{p}.batches"), format!("lower `batches` ({n}) or `k`"))
                };
                let what = format!("`{p}`: {} batches of {} flows", format_count(n as f64), format_count(k as f64));
                self.fits(&key, what, flows, 0.0, out, &hint)?;
                Batches {
                    k,
                    period_s: self.positive(&format!("{p}.period"), t.period.map(|d| d.0).or(Some(1.0)), "duration")?,
                    offset_s: t.offset.map_or(0.0, |d| d.0),
                    batches: n,
                    sizes: self.sizes(&format!("{p}.sizes"), t.sizes.as_ref())?,
                    pattern: self.pattern(&p, t.pattern, t.matrix.as_deref())?,
                }
                .generate(self.topo, seed)
                .map_err(|e| self.gen(&p, e))?
            }
            TrafficKind::Replay => {
                self.only(&p, "replay", &set, &["file", "time-scale", "offset", "repeat-until", "priority"])?;
                let f = t.file.as_deref().ok_or_else(|| self.at(&p, "needs `file` (a flow CSV)"))?;
                let path = self.resolve(f);
                let topo = self.topo;
                let rows = read_flows_csv(&path, &|s| topo.host_ref(s))
                    .map_err(|e| self.at(&format!("{p}.file"), e.to_string()))?;
                let replay = Replay {
                    time_scale: t.time_scale.unwrap_or(1.0),
                    offset_s: t.offset.map_or(0.0, |d| d.0),
                    repeat_until_s: t.repeat_until.map(|d| d.0),
                };
                let (lo, hi) = rows
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| (lo.min(r.start_s), hi.max(r.start_s)));
                let flows = replay.estimate(rows.len(), if rows.is_empty() { 0.0 } else { hi - lo });
                let what = format!(
                    "`{p}`: {} flows ({} rows, repeated)",
                    format_count(flows),
                    format_count(rows.len() as f64)
                );
                // The rows read and the replayed copies are held at once.
                let key = if t.repeat_until.is_some() { format!("{p}.repeat-until") } else { format!("{p}.file") };
                self.fits(
                    &key,
                    what,
                    rows.len() as f64 + flows,
                    0.0,
                    out,
                    "lower `repeat-until` or replay fewer rows",
                )?;
                replay.apply(&rows, self.topo.hosts().len()).map_err(|e| self.gen(&p, e))?
            }
            TrafficKind::Coflow => {
                self.only(&p, "coflow", &set, &["dataset", "time-scale", "bytes-scale", "duration", "priority"])?;
                let mapped =
                    self.coflows(&p, t.dataset.as_deref(), (t.time_scale, t.bytes_scale), t.duration, seed, out)?;
                mapped.rows()
            }
        };
        if let Some(pr) = t.priority {
            let pr = i32::try_from(pr).map_err(|_| self.at(&format!("{p}.priority"), "out of range"))?;
            rows.iter_mut().for_each(|r| r.priority = pr);
        }
        Ok(rows)
    }

    pub(super) fn coflows(
        &self,
        p: &str,
        dataset: Option<&str>,
        (time_scale, bytes_scale): (Option<f64>, Option<f64>),
        duration: Option<Duration>,
        seed: u64,
        out: &mut Workload,
    ) -> Result<MappedShuffles, ConfigError> {
        let trace = self.coflow_trace(&format!("{p}.dataset"), dataset)?;
        let scale = time_scale.unwrap_or(1.0);
        if !(scale.is_finite() && scale > 0.0) {
            return Err(self.at(&format!("{p}.time-scale"), format!("must be positive, got {scale}")));
        }
        let bytes = bytes_scale.unwrap_or(1.0);
        if !(bytes.is_finite() && bytes > 0.0) {
            return Err(self.at(&format!("{p}.bytes-scale"), format!("must be positive, got {bytes}")));
        }
        let until = duration.map(|d| d.0).or(self.default_duration).unwrap_or(f64::INFINITY);
        let shuffles: Vec<RackShuffle> =
            trace.coflows.iter().map(|c| rack_shuffle(c, scale, bytes)).filter(|s| s.start_s < until).collect();
        let flows: f64 = shuffles.iter().map(|s| s.mapper_racks.len() as f64 * s.reducers.len() as f64).sum();
        let key = if duration.is_some() { format!("{p}.duration") } else { format!("{p}.dataset") };
        let what = format!("`{p}`: {} shuffles of {} flows", format_count(shuffles.len() as f64), format_count(flows));
        // In an `[[app]]` table (`p` is `app[i]`) every shuffle is a task of
        // one step a flow; a `[[traffic]]` table's are plain flows.
        let tasks = if p.starts_with("app[") { task_overhead_bytes(shuffles.len() as f64, flows) } else { 0.0 };
        self.fits(&key, what, flows, tasks, out, "replay part of the trace with a shorter `duration`")?;
        let mapped = map_rack_shuffles(self.topo, &shuffles, seed).map_err(|e| self.gen(p, e))?;
        out.local_bytes += mapped.local_bytes;
        if mapped.folded {
            out.notes.push(format!(
                "{p}: the trace has {} racks and the topology {}: trace rack t was placed on rack t mod {}",
                trace.racks,
                self.topo.racks().len(),
                self.topo.racks().len()
            ));
        }
        if mapped.local_bytes > 0.0 {
            out.notes.push(format!(
                "{p}: {:.0} bytes between a mapper and a reducer on the same host stay local (not simulated)",
                mapped.local_bytes
            ));
        }
        Ok(mapped)
    }
}
