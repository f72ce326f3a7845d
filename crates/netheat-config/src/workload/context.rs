//! The generation context of a workload file: the checks and lookups
//! every table shares (units, durations, size laws, patterns, datasets and
//! the memory budget), with errors at the table's key.

use std::path::{Path, PathBuf};

use netheat_core::budget::{self, format_count};
use netheat_data::DataDir;
use netheat_workloads::{GenError, Pattern, SizeDist};

use super::{fold_matrix, DistName, PatternName, SizesTable, Wcx, Workload, DEFAULT_COFLOW};
use crate::error::ConfigError;
use crate::units::Duration;

impl Wcx<'_> {
    pub(super) fn at(&self, key: &str, reason: impl Into<String>) -> ConfigError {
        self.cx.at(key, reason)
    }

    pub(super) fn gen(&self, key: &str, e: GenError) -> ConfigError {
        self.at(key, e.to_string())
    }

    /// Refuses, at `key`, a table whose estimate (`flows` flows and
    /// `extra_bytes` more) does not fit the memory budget together with what
    /// the tables before it hold.
    pub(super) fn fits(
        &self,
        key: &str,
        what: String,
        flows: f64,
        extra_bytes: f64,
        out: &Workload,
        hint: &str,
    ) -> Result<(), ConfigError> {
        let held = out.estimate_bytes();
        let what = if held > 0.0 { format!("{what}, with the tables before it,") } else { what };
        let budget = budget::memory_budget()?;
        budget::check_against(budget, &what, held + flows * budget::flow_bytes() as f64 + extra_bytes, hint)
            .map_err(|e| self.at(key, e.to_string()))
    }

    /// The memory budget in bytes.
    pub(super) fn budget(&self) -> Result<f64, ConfigError> {
        Ok(budget::memory_budget()? as f64)
    }

    /// The key of the duration a table uses: its own or `[workload]`'s.
    pub(super) fn duration_key(&self, prefix: &str, own: Option<Duration>) -> String {
        if own.is_some() || self.default_duration.is_none() {
            format!("{prefix}.duration")
        } else {
            "workload.duration".into()
        }
    }

    pub(super) fn only(
        &self,
        prefix: &str,
        kind: &str,
        set: &[(&str, bool)],
        allowed: &[&str],
    ) -> Result<(), ConfigError> {
        match set.iter().find(|(k, on)| *on && !allowed.contains(k)) {
            Some((k, _)) => Err(self.at(&format!("{prefix}.{k}"), format!("is not used by kind \"{kind}\""))),
            None => Ok(()),
        }
    }

    pub(super) fn duration(&self, prefix: &str, own: Option<Duration>) -> Result<f64, ConfigError> {
        match own.map(|d| d.0).or(self.default_duration) {
            Some(d) if d.is_finite() && d > 0.0 => Ok(d),
            Some(d) => Err(self.at(&format!("{prefix}.duration"), format!("must be positive, got {d} s"))),
            None => Err(self.at(prefix, "needs `duration` (here or in [workload])")),
        }
    }

    pub(super) fn positive(&self, key: &str, v: Option<f64>, what: &str) -> Result<f64, ConfigError> {
        match v {
            Some(x) if x.is_finite() && x > 0.0 => Ok(x),
            Some(x) => Err(self.at(key, format!("must be a positive {what}, got {x}"))),
            None => Err(self.at(key, format!("missing required key (a positive {what})"))),
        }
    }

    pub(super) fn sizes(&self, key: &str, s: Option<&SizesTable>) -> Result<SizeDist, ConfigError> {
        let s = s.ok_or_else(|| self.at(key, "missing required key, e.g. sizes = { dist = \"web-search\" }"))?;
        let need = |v: Option<f64>, k: &str| v.ok_or_else(|| self.at(&format!("{key}.{k}"), "missing required key"));
        let set = present!(s, size => "size", mean => "mean", sigma => "sigma", shape => "shape", min => "min", max => "max", cdf => "cdf");
        let dist = match s.dist {
            DistName::Constant => {
                self.only(key, "constant", &set, &["size"])?;
                SizeDist::Constant(need(s.size.map(|b| b.0), "size")?)
            }
            DistName::Exponential => {
                self.only(key, "exponential", &set, &["mean"])?;
                SizeDist::Exponential { mean: need(s.mean.map(|b| b.0), "mean")? }
            }
            DistName::BoundedPareto => {
                self.only(key, "bounded-pareto", &set, &["shape", "min", "max"])?;
                SizeDist::BoundedPareto {
                    shape: need(s.shape, "shape")?,
                    lo: need(s.min.map(|b| b.0), "min")?,
                    hi: need(s.max.map(|b| b.0), "max")?,
                }
            }
            DistName::Lognormal => {
                self.only(key, "lognormal", &set, &["mean", "sigma"])?;
                let (mean, sigma) = (need(s.mean.map(|b| b.0), "mean")?, need(s.sigma, "sigma")?);
                if !(mean > 0.0 && sigma.is_finite() && sigma >= 0.0) {
                    return Err(
                        self.at(key, format!("lognormal needs mean > 0 and sigma >= 0, got {mean} and {sigma}"))
                    );
                }
                SizeDist::log_normal_with_mean(mean, sigma)
            }
            DistName::Uniform => {
                self.only(key, "uniform", &set, &["min", "max"])?;
                let (lo, hi) = (need(s.min.map(|b| b.0), "min")?, need(s.max.map(|b| b.0), "max")?);
                if hi < lo {
                    return Err(
                        self.at(&format!("{key}.max"), format!("must be at least `min` ({lo} bytes), got {hi}"))
                    );
                }
                SizeDist::Uniform { lo, hi }
            }
            DistName::WebSearch => {
                self.only(key, "web-search", &set, &[])?;
                SizeDist::web_search()
            }
            DistName::Empirical => {
                self.only(key, "empirical", &set, &["cdf"])?;
                let name = s.cdf.as_deref().ok_or_else(|| self.at(&format!("{key}.cdf"), "missing required key"))?;
                let cdf =
                    self.dataset(&format!("{key}.cdf"), name, netheat_data::load_cdf, netheat_data::read_cdf_file)?;
                SizeDist::empirical(&cdf.points).map_err(|e| self.gen(&format!("{key}.cdf"), e))?
            }
        };
        dist.validate().map_err(|e| self.gen(key, e))?;
        Ok(dist)
    }

    pub(super) fn pattern(
        &self,
        prefix: &str,
        name: Option<PatternName>,
        matrix: Option<&str>,
    ) -> Result<Pattern, ConfigError> {
        match (name, matrix) {
            (None | Some(PatternName::Uniform), None) => Ok(Pattern::Uniform),
            (Some(PatternName::InterRack), None) => Ok(Pattern::InterRack),
            (None | Some(PatternName::Matrix), Some(ds)) => {
                let tm = netheat_data::load_traffic_matrix(self.data, ds)
                    .map_err(|e| self.at(&format!("{prefix}.matrix"), e.to_string()))?;
                let racks = self.topo.racks().len() as f64;
                budget::check_against(
                    budget::memory_budget()?,
                    &format!("a rack-to-rack matrix of {} racks", format_count(racks)),
                    racks * racks * 8.0,
                    "use a datacenter with fewer racks for matrix traffic",
                )
                .map_err(|e| self.at(&format!("{prefix}.matrix"), e.to_string()))?;
                Ok(Pattern::RackMatrix(fold_matrix(&tm.matrix, self.topo.racks().len())))
            }
            (Some(PatternName::Matrix), None) => {
                Err(self.at(&format!("{prefix}.pattern"), "pattern \"matrix\" needs `matrix = \"<dataset>\"`"))
            }
            (Some(p), Some(_)) => Err(self.at(
                &format!("{prefix}.matrix"),
                format!("is only used with pattern \"matrix\", not {:?}", p).to_lowercase(),
            )),
        }
    }

    pub(super) fn resolve(&self, f: &str) -> PathBuf {
        let p = Path::new(f);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.base.join(p)
        }
    }

    /// The coflow trace a `dataset` key names (default `coflow-fb2010`): a
    /// registered dataset, or a file of the user's (a value with a `/` or a
    /// `.`), relative to the workload file.
    pub(super) fn coflow_trace(&self, key: &str, name: Option<&str>) -> Result<netheat_data::CoflowTrace, ConfigError> {
        let name = name.unwrap_or(DEFAULT_COFLOW);
        self.dataset(key, name, netheat_data::load_coflows, netheat_data::read_coflows_file)
    }

    /// What a dataset key (`key`) names: the registered dataset `name`
    /// (`load`), or, when `name` is a path (a `/` or a `.`), the user's file
    /// in the same format relative to the workload file (`read`).
    pub(super) fn dataset<T>(
        &self,
        key: &str,
        name: &str,
        load: fn(&DataDir, &str) -> Result<T, netheat_data::DataError>,
        read: fn(&Path) -> Result<T, netheat_data::DataError>,
    ) -> Result<T, ConfigError> {
        let got = if netheat_data::is_file_reference(name) { read(&self.resolve(name)) } else { load(self.data, name) };
        got.map_err(|e| self.at(key, e.to_string()))
    }
}
