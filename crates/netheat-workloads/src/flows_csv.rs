//! Flow traces as CSV.
//!
//! A header row is required. Required columns: `start_s, src, dst, bytes`;
//! optional: `flow_id, task_id, priority, weight, rate_cap_bps`, in any
//! order. `src`/`dst` are host indices or names (resolved by the caller's
//! topology). Lower `priority` is served first (default 0); `weight`
//! defaults to 1; `flow_id` defaults to the row's position. Blank lines and
//! lines starting with `#` are skipped. Any malformed row is an error naming
//! the file, line and column; nothing is partially read.

use std::collections::HashSet;
use std::path::Path;

use netheat_core::HostId;
use thiserror::Error;

/// One flow of a trace.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowRow {
    /// Unique id.
    pub flow_id: u64,
    /// Arrival time, seconds.
    pub start_s: f64,
    /// Source host.
    pub src: HostId,
    /// Destination host.
    pub dst: HostId,
    /// Size in bytes.
    pub bytes: f64,
    /// Task (coflow) the flow belongs to.
    pub task_id: Option<u64>,
    /// Priority class, lower first.
    pub priority: i32,
    /// Max-min weight.
    pub weight: f64,
    /// Rate cap in bits per second.
    pub rate_cap_bps: Option<f64>,
}

/// A trace that cannot be used.
#[derive(Debug, Error)]
pub enum WorkloadError {
    /// The file could not be read.
    #[error("{file}: cannot read: {source}")]
    Io {
        /// Path as given.
        file: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// A malformed header or row.
    #[error("{file}:{line}: {}{reason}", column.as_ref().map(|c| format!("column `{c}`: ")).unwrap_or_default())]
    Malformed {
        /// Path as given.
        file: String,
        /// 1-based line.
        line: usize,
        /// Column name, when the problem is in one column.
        column: Option<String>,
        /// What is wrong.
        reason: String,
    },
}

const REQUIRED: [&str; 4] = ["start_s", "src", "dst", "bytes"];
const OPTIONAL: [&str; 5] = ["flow_id", "task_id", "priority", "weight", "rate_cap_bps"];

/// Reads a flow CSV file; `resolve` maps a host index or name to a host id.
pub fn read_flows_csv(path: &Path, resolve: &dyn Fn(&str) -> Option<HostId>) -> Result<Vec<FlowRow>, WorkloadError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| WorkloadError::Io { file: file.clone(), source })?;
    parse_flows_csv(&text, &file, resolve)
}

/// Parses flow CSV text; `file` is only used in messages.
pub fn parse_flows_csv(
    text: &str,
    file: &str,
    resolve: &dyn Fn(&str) -> Option<HostId>,
) -> Result<Vec<FlowRow>, WorkloadError> {
    let err = |line: usize, column: Option<&str>, reason: String| WorkloadError::Malformed {
        file: file.to_string(),
        line,
        column: column.map(str::to_string),
        reason,
    };
    let mut lines =
        text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())).filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
    let Some((hline, header)) = lines.next() else {
        return Err(err(1, None, "the file is empty; expected a header `start_s,src,dst,bytes`".into()));
    };
    let names: Vec<&str> = header.split(',').map(unquote).collect();
    let mut col = [usize::MAX; 9];
    for (i, n) in names.iter().enumerate() {
        let Some(slot) = REQUIRED.iter().chain(OPTIONAL.iter()).position(|k| k == n) else {
            return Err(err(
                hline,
                Some(n),
                format!("unknown column; expected {} and optionally {}", REQUIRED.join(","), OPTIONAL.join(",")),
            ));
        };
        if col[slot] != usize::MAX {
            return Err(err(hline, Some(n), "column given twice".into()));
        }
        col[slot] = i;
    }
    for (slot, n) in REQUIRED.iter().enumerate() {
        if col[slot] == usize::MAX {
            return Err(err(hline, None, format!("the header has no `{n}` column (required: {})", REQUIRED.join(","))));
        }
    }
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for (row, (line, text)) in lines.enumerate() {
        let cells: Vec<&str> = text.split(',').map(unquote).collect();
        if cells.len() != names.len() {
            return Err(err(line, None, format!("{} columns, but the header has {}", cells.len(), names.len())));
        }
        let cell = |slot: usize| (slot < 9 && col[slot] != usize::MAX).then(|| cells[col[slot]]);
        let number = |slot: usize, name: &str| -> Result<Option<f64>, WorkloadError> {
            match cell(slot) {
                None | Some("") if slot >= 4 => Ok(None),
                None | Some("") => Err(err(line, Some(name), "is empty".into())),
                Some(s) => match s.parse::<f64>() {
                    Ok(v) if v.is_finite() => Ok(Some(v)),
                    _ => Err(err(line, Some(name), format!("`{s}` is not a number"))),
                },
            }
        };
        let start_s = number(0, "start_s")?.unwrap_or(0.0);
        if start_s < 0.0 {
            return Err(err(line, Some("start_s"), format!("start time {start_s} is negative")));
        }
        let bytes = number(3, "bytes")?.unwrap_or(0.0);
        if bytes < 0.0 {
            return Err(err(line, Some("bytes"), format!("size {bytes} is negative")));
        }
        let host = |slot: usize, name: &str| -> Result<HostId, WorkloadError> {
            let s = cell(slot).unwrap_or("");
            resolve(s).ok_or_else(|| err(line, Some(name), format!("unknown host `{s}`")))
        };
        let (src, dst) = (host(1, "src")?, host(2, "dst")?);
        let integer = |slot: usize, name: &str| -> Result<Option<i64>, WorkloadError> {
            match cell(slot) {
                None | Some("") => Ok(None),
                Some(s) => {
                    s.parse::<i64>().map(Some).map_err(|_| err(line, Some(name), format!("`{s}` is not an integer")))
                }
            }
        };
        let flow_id = match integer(4, "flow_id")? {
            Some(v) if v < 0 => return Err(err(line, Some("flow_id"), format!("flow id {v} is negative"))),
            Some(v) => v as u64,
            None => row as u64,
        };
        if !seen.insert(flow_id) {
            return Err(err(line, Some("flow_id"), format!("flow id {flow_id} appears twice")));
        }
        let task_id = match integer(5, "task_id")? {
            Some(v) if v < 0 => return Err(err(line, Some("task_id"), format!("task id {v} is negative"))),
            v => v.map(|v| v as u64),
        };
        let priority = match integer(6, "priority")? {
            Some(v) if i32::try_from(v).is_err() => {
                return Err(err(line, Some("priority"), format!("priority {v} is out of range")))
            }
            v => v.unwrap_or(0) as i32,
        };
        let weight = number(7, "weight")?.unwrap_or(1.0);
        if weight <= 0.0 {
            return Err(err(line, Some("weight"), format!("weight {weight} must be positive")));
        }
        let rate_cap_bps = number(8, "rate_cap_bps")?;
        if let Some(c) = rate_cap_bps {
            if c <= 0.0 {
                return Err(err(line, Some("rate_cap_bps"), format!("rate cap {c} must be positive")));
            }
        }
        out.push(FlowRow { flow_id, start_s, src, dst, bytes, task_id, priority, weight, rate_cap_bps });
    }
    Ok(out)
}

/// A cell without surrounding white space and, if present, one pair of
/// double quotes (as written by CSV writers that quote every header name).
fn unquote(cell: &str) -> &str {
    let c = cell.trim();
    c.strip_prefix('"').and_then(|c| c.strip_suffix('"')).unwrap_or(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(s: &str) -> Option<HostId> {
        match s {
            "a" => Some(0),
            "b" => Some(1),
            _ => s.parse().ok().filter(|h| *h < 16),
        }
    }

    fn bad(text: &str) -> (usize, Option<String>, String) {
        match parse_flows_csv(text, "f.csv", &hosts).unwrap_err() {
            WorkloadError::Malformed { line, column, reason, .. } => (line, column, reason),
            e => panic!("{e}"),
        }
    }

    #[test]
    fn quoted_header_names_and_cells_are_accepted() {
        let rows =
            parse_flows_csv("\"start_s\",\"src\",\"dst\",\"bytes\"\n0.5,\"a\",3,100\n", "f.csv", &hosts).unwrap();
        assert_eq!((rows[0].src, rows[0].dst, rows[0].bytes), (0, 3, 100.0));
    }

    #[test]
    fn reads_required_and_optional_columns() {
        let rows = parse_flows_csv(
            "# comment\nsrc,dst,start_s,bytes,priority,weight,rate_cap_bps,task_id\n0,b,0.5,1.25e9,1,2,1e9,7\n\na,3,1,100,,,,\n",
            "f.csv",
            &hosts,
        )
        .unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            rows[0],
            FlowRow {
                flow_id: 0,
                start_s: 0.5,
                src: 0,
                dst: 1,
                bytes: 1.25e9,
                task_id: Some(7),
                priority: 1,
                weight: 2.0,
                rate_cap_bps: Some(1e9)
            }
        );
        assert_eq!((rows[1].flow_id, rows[1].priority, rows[1].weight, rows[1].rate_cap_bps), (1, 0, 1.0, None));
    }

    #[test]
    fn malformed_rows_name_line_and_column() {
        let h = "start_s,src,dst,bytes\n";
        assert_eq!(bad(&format!("{h}0,1,2\n")).0, 2);
        assert!(bad(&format!("{h}0,1,2\n")).2.contains("3 columns, but the header has 4"));
        assert_eq!(bad(&format!("{h}0,1,2,3\n0,1,2,-5\n")), (3, Some("bytes".into()), "size -5 is negative".into()));
        assert_eq!(bad(&format!("{h}0,1,99,5\n")), (2, Some("dst".into()), "unknown host `99`".into()));
        assert_eq!(bad(&format!("{h}soon,1,2,5\n")), (2, Some("start_s".into()), "`soon` is not a number".into()));
        assert_eq!(bad(&format!("{h}-1,1,2,5\n")).1.as_deref(), Some("start_s"));
        assert_eq!(bad("start_s,src,dst\n").2, "the header has no `bytes` column (required: start_s,src,dst,bytes)");
        assert_eq!(bad("start_s,src,dst,bytes,colour\n").1.as_deref(), Some("colour"));
        assert_eq!(bad("flow_id,start_s,src,dst,bytes\n1,0,1,2,5\n1,0,1,2,5\n").2, "flow id 1 appears twice");
        assert_eq!(bad("").0, 1);
    }

    #[test]
    fn message_format() {
        let e = parse_flows_csv("start_s,src,dst,bytes\n0,1,2,x\n", "f.csv", &hosts).unwrap_err();
        assert_eq!(e.to_string(), "f.csv:2: column `bytes`: `x` is not a number");
    }
}
