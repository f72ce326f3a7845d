//! Meta rack-to-rack traffic matrices (parsimon-eval `workload/spatials/*.json`).
//!
//! The JSON holds `matrix.inner` (a square matrix of sampled packet counts,
//! ToR by ToR, zero-padded beyond the real racks), `matrix.idx2name` (ToR
//! name of each real index), `pod2tors` (pod name -> ToR names), `nr_pods`
//! and `nr_racks`. [`parse_traffic_matrix`] returns the `nr_racks` x
//! `nr_racks` part, checking that the padding is all zero, that every rack is
//! in exactly one pod and that the counts agree.

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;

use crate::error::DataError;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMatrix {
    inner: Vec<Vec<f64>>,
    idx2name: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    matrix: RawMatrix,
    pod2tors: BTreeMap<String, Vec<String>>,
    nr_pods: usize,
    nr_racks: usize,
}

/// A pod: a named group of racks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pod {
    /// Pod name (an opaque hash in the Meta data).
    pub name: String,
    /// Rack indices (into [`TrafficMatrix::rack_names`]) in file order.
    pub racks: Vec<u32>,
}

/// A rack-to-rack traffic matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct TrafficMatrix {
    /// ToR name of each rack index.
    pub rack_names: Vec<String>,
    /// `matrix[src][dst]`: sampled traffic (packet counts) from rack `src` to rack `dst`.
    pub matrix: Vec<Vec<f64>>,
    /// Pods sorted by name.
    pub pods: Vec<Pod>,
}

impl TrafficMatrix {
    /// Number of racks.
    pub fn n_racks(&self) -> usize {
        self.rack_names.len()
    }

    /// Sum of all entries.
    pub fn total(&self) -> f64 {
        self.matrix.iter().flatten().sum()
    }

    /// Pod index of every rack.
    pub fn rack_pods(&self) -> Vec<u32> {
        let mut out = vec![0u32; self.n_racks()];
        for (p, pod) in self.pods.iter().enumerate() {
            for &r in &pod.racks {
                out[r as usize] = p as u32;
            }
        }
        out
    }
}

/// Parses a parsimon spatial JSON; `file` names it in errors.
pub fn parse_traffic_matrix(text: &str, file: &str) -> Result<TrafficMatrix, DataError> {
    let raw: Raw = serde_json::from_str(text).map_err(|e| {
        DataError::parse(file, e.line(), format!("column {}: invalid traffic-matrix JSON: {e}", e.column()))
    })?;
    let bad = |reason: String| DataError::parse(file, 0, reason);
    let n = raw.nr_racks;
    if raw.matrix.idx2name.len() != n {
        return Err(bad(format!("nr_racks is {n} but matrix.idx2name has {} names", raw.matrix.idx2name.len())));
    }
    let size = raw.matrix.inner.len();
    if size < n {
        return Err(bad(format!("matrix has {size} rows, fewer than nr_racks {n}")));
    }
    for (i, row) in raw.matrix.inner.iter().enumerate() {
        if row.len() != size {
            return Err(bad(format!("matrix row {i} has {} entries; the matrix must be {size} x {size}", row.len())));
        }
        for (j, &v) in row.iter().enumerate() {
            if !v.is_finite() || v < 0.0 {
                return Err(bad(format!("matrix[{i}][{j}] = {v} is not a finite non-negative number")));
            }
            if (i >= n || j >= n) && v != 0.0 {
                return Err(bad(format!("matrix[{i}][{j}] = {v} lies beyond nr_racks {n} but is not zero padding")));
            }
        }
    }
    if raw.pod2tors.len() != raw.nr_pods {
        return Err(bad(format!("nr_pods is {} but pod2tors has {} pods", raw.nr_pods, raw.pod2tors.len())));
    }
    let index: HashMap<&str, u32> =
        raw.matrix.idx2name.iter().enumerate().map(|(i, s)| (s.as_str(), i as u32)).collect();
    if index.len() != n {
        return Err(bad("matrix.idx2name has duplicate rack names".to_string()));
    }
    let mut seen = vec![false; n];
    let mut pods = Vec::with_capacity(raw.pod2tors.len());
    for (name, tors) in &raw.pod2tors {
        let mut racks = Vec::with_capacity(tors.len());
        for t in tors {
            let &r = index.get(t.as_str()).ok_or_else(|| bad(format!("pod {name} lists unknown rack {t}")))?;
            if std::mem::replace(&mut seen[r as usize], true) {
                return Err(bad(format!("rack {t} is listed in more than one pod")));
            }
            racks.push(r);
        }
        pods.push(Pod { name: name.clone(), racks });
    }
    if let Some(r) = seen.iter().position(|s| !s) {
        return Err(bad(format!("rack {} is in no pod", raw.matrix.idx2name[r])));
    }
    let matrix = raw.matrix.inner.into_iter().take(n).map(|mut row| {
        row.truncate(n);
        row
    });
    Ok(TrafficMatrix { rack_names: raw.matrix.idx2name, matrix: matrix.collect(), pods })
}
