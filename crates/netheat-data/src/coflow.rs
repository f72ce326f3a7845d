//! The Coflow-Benchmark trace format (Facebook 2010, `FB2010-1Hr-150-0.txt`).
//!
//! Line 1 is `<racks> <coflows>`; each following line is one coflow:
//! `<id> <arrival_ms> <#mappers> <mapper rack>... <#reducers> <rack:MB>...`.
//! Racks are 0-based and below `<racks>`. The shuffle size of a coflow is the
//! sum of its reducers' MB (each reducer receives that many MB in total from
//! the coflow's mappers), so the trace total is the sum over all reducers.

use crate::error::DataError;
use crate::text::{data_lines, integer, number};

/// One coflow: a shuffle from mapper racks to reducer racks.
#[derive(Debug, Clone, PartialEq)]
pub struct Coflow {
    /// Coflow id from the trace.
    pub id: u32,
    /// Arrival time in milliseconds from the start of the trace.
    pub arrival_ms: u64,
    /// Racks holding the (rack-aggregated) mappers.
    pub mapper_racks: Vec<u32>,
    /// `(rack, megabytes received)` per (rack-aggregated) reducer.
    pub reducers: Vec<(u32, f64)>,
}

impl Coflow {
    /// Total shuffle megabytes (sum over reducers).
    pub fn shuffle_mb(&self) -> f64 {
        self.reducers.iter().map(|r| r.1).sum()
    }
}

/// A parsed coflow trace.
#[derive(Debug, Clone, PartialEq)]
pub struct CoflowTrace {
    /// Number of racks (ports of the rack-level fabric) from the header.
    pub racks: u32,
    /// Coflows in file order.
    pub coflows: Vec<Coflow>,
}

impl CoflowTrace {
    /// Total shuffle megabytes of the trace.
    pub fn total_shuffle_mb(&self) -> f64 {
        self.coflows.iter().map(Coflow::shuffle_mb).sum()
    }

    /// The shuffle size of every coflow, bytes (MB taken as 10^6 bytes),
    /// in file order: the data-analytics task-size law of the Baraat
    /// experiments (Baraat §2, Figure 2 right: task sizes of Facebook
    /// MapReduce jobs, from the datasets of the paper's reference [9]; on
    /// the Facebook 2010 trace, 526 values). The paper plots the law
    /// normalized, so only its shape matters: with a single bottleneck,
    /// scaling every size scales every completion time, and the ratios it
    /// reports do not move. The trace has the shuffle phase, not the jobs'
    /// input sizes; the paper notes that other phases follow similar
    /// heavy-tailed laws.
    pub fn shuffle_sizes_bytes(&self) -> Vec<f64> {
        self.coflows.iter().map(|c| c.shuffle_mb() * 1e6).collect()
    }
}

/// Parses a Coflow-Benchmark trace; `file` names it in errors.
pub fn parse_coflows(text: &str, file: &str) -> Result<CoflowTrace, DataError> {
    let mut lines = data_lines(text);
    let Some((hn, header)) = lines.next() else {
        return Err(DataError::parse(file, 0, "empty file: expected `<racks> <coflows>` on line 1"));
    };
    let h: Vec<&str> = header.split_whitespace().collect();
    if h.len() != 2 {
        return Err(DataError::parse(file, hn, format!("expected `<racks> <coflows>`, found {} fields", h.len())));
    }
    let racks: u32 = integer(file, hn, "rack count", h[0])?;
    let declared: usize = integer(file, hn, "coflow count", h[1])?;
    if racks == 0 {
        return Err(DataError::parse(file, hn, "rack count must be positive"));
    }
    let mut coflows = Vec::with_capacity(declared);
    let mut ids = std::collections::HashSet::new();
    for (n, l) in lines {
        let t: Vec<&str> = l.split_whitespace().collect();
        let need = |k: usize, what: &str| -> Result<(), DataError> {
            if t.len() < k {
                Err(DataError::parse(file, n, format!("line ends early: missing {what}")))
            } else {
                Ok(())
            }
        };
        need(3, "`<id> <arrival_ms> <#mappers>`")?;
        let id: u32 = integer(file, n, "coflow id", t[0])?;
        let arrival_ms: u64 = integer(file, n, "arrival time (ms)", t[1])?;
        let nm: usize = integer(file, n, "mapper count", t[2])?;
        need(3 + nm + 1, &format!("{nm} mapper racks and the reducer count"))?;
        let rack = |tok: &str, what: &str| -> Result<u32, DataError> {
            let r: u32 = integer(file, n, what, tok)?;
            if r >= racks {
                return Err(DataError::parse(file, n, format!("{what} {r} is not below the rack count {racks}")));
            }
            Ok(r)
        };
        let mapper_racks = t[3..3 + nm].iter().map(|x| rack(x, "mapper rack")).collect::<Result<Vec<_>, _>>()?;
        let nr: usize = integer(file, n, "reducer count", t[3 + nm])?;
        let rest = &t[4 + nm..];
        if rest.len() != nr {
            return Err(DataError::parse(
                file,
                n,
                format!("coflow {id} declares {nr} reducers but lists {} `rack:MB` entries", rest.len()),
            ));
        }
        let reducers = rest
            .iter()
            .map(|tok| {
                let (r, mb) = tok
                    .split_once(':')
                    .ok_or_else(|| DataError::parse(file, n, format!("reducer `{tok}` is not `rack:MB`")))?;
                let mb = number(file, n, "reducer megabytes", mb)?;
                if mb < 0.0 {
                    return Err(DataError::parse(file, n, format!("reducer megabytes {mb} is negative")));
                }
                Ok((rack(r, "reducer rack")?, mb))
            })
            .collect::<Result<Vec<_>, DataError>>()?;
        if nm == 0 || nr == 0 {
            return Err(DataError::parse(file, n, format!("coflow {id} has no mappers or no reducers")));
        }
        if !ids.insert(id) {
            return Err(DataError::parse(file, n, format!("duplicate coflow id {id}")));
        }
        coflows.push(Coflow { id, arrival_ms, mapper_racks, reducers });
    }
    if coflows.len() != declared {
        return Err(DataError::parse(
            file,
            0,
            format!("header (line {hn}) declares {declared} coflows but the file has {}", coflows.len()),
        ));
    }
    Ok(CoflowTrace { racks, coflows })
}
