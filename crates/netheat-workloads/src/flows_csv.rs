//! Flow traces as CSV.
//!
//! A header row is required. Required columns: `start_s, src, dst, bytes`;
//! optional: `flow_id, task_id, priority, weight, rate_cap_bps`, in any
//! order. `src`/`dst` are host indices or names (resolved by the caller's
//! topology). Lower `priority` is served first (default 0); `weight`
//! defaults to 1; `flow_id` defaults to the row's position. Blank lines and
//! lines starting with `#` are skipped. Any malformed row is an error naming
//! the file, line and column; nothing is partially read.
//!
//! Files are read a line at a time: a UTF-8 byte-order mark at the start is
//! dropped, a line longer than [`MAX_LINE`] is an error after reading just
//! past it (so a huge file without newlines costs 1 MiB, not its size),
//! messages quote at most [`QUOTE`] characters of a value, and a file with
//! more rows than fit the memory budget ([`crate::FlowCap`]) is refused as
//! soon as its count passes the limit.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use netheat_core::budget::format_count;
use netheat_core::{clip, BudgetError, HostId};
use thiserror::Error;

use crate::budget::FlowCap;

/// Longest line a flow CSV may have: 1 MiB.
pub const MAX_LINE: usize = 1 << 20;

/// Most characters of a value quoted in a message.
pub const QUOTE: usize = 60;

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
    /// More rows than the memory budget holds.
    #[error("{file}: {source}")]
    Budget {
        /// Path as given.
        file: String,
        /// The budget error (the estimate, the budget, what to do).
        source: BudgetError,
    },
}

/// A trace and where each row was read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlowTrace {
    /// The rows, in file order.
    pub rows: Vec<FlowRow>,
    /// 1-based line of each row.
    pub lines: Vec<u64>,
}

const REQUIRED: [&str; 4] = ["start_s", "src", "dst", "bytes"];
const OPTIONAL: [&str; 5] = ["flow_id", "task_id", "priority", "weight", "rate_cap_bps"];

/// Reads a flow CSV file; `resolve` maps a host index or name to a host id.
pub fn read_flows_csv(path: &Path, resolve: &dyn Fn(&str) -> Option<HostId>) -> Result<Vec<FlowRow>, WorkloadError> {
    read_flow_trace(path, resolve).map(|t| t.rows)
}

/// [`read_flows_csv`] keeping the line of every row.
pub fn read_flow_trace(path: &Path, resolve: &dyn Fn(&str) -> Option<HostId>) -> Result<FlowTrace, WorkloadError> {
    let file = path.display().to_string();
    let f = std::fs::File::open(path).map_err(|source| WorkloadError::Io { file: file.clone(), source })?;
    parse_flows_reader(BufReader::with_capacity(1 << 16, f), &file, resolve)
}

/// Parses flow CSV text; `file` is only used in messages.
pub fn parse_flows_csv(
    text: &str,
    file: &str,
    resolve: &dyn Fn(&str) -> Option<HostId>,
) -> Result<Vec<FlowRow>, WorkloadError> {
    parse_flows_reader(text.as_bytes(), file, resolve).map(|t| t.rows)
}

/// Reads one line (without its `\n` or `\r\n`) into `buf`, never holding
/// more than [`MAX_LINE`] + 1 bytes; `Ok(false)` at the end of the input.
fn next_line<R: BufRead>(r: &mut R, buf: &mut Vec<u8>) -> std::io::Result<bool> {
    buf.clear();
    let n = r.by_ref().take(MAX_LINE as u64 + 1).read_until(b'\n', buf)?;
    if n == 0 {
        return Ok(false);
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
    }
    Ok(true)
}

/// Parses a flow CSV from a reader, a line at a time (see the module docs).
pub fn parse_flows_reader<R: BufRead>(
    mut reader: R,
    file: &str,
    resolve: &dyn Fn(&str) -> Option<HostId>,
) -> Result<FlowTrace, WorkloadError> {
    let err = |line: u64, column: Option<&str>, reason: String| WorkloadError::Malformed {
        file: file.to_string(),
        line: line as usize,
        column: column.map(|c| clip(c, QUOTE)),
        reason,
    };
    let cap = FlowCap::current().map_err(|source| WorkloadError::Budget { file: file.to_string(), source })?;
    let mut buf = Vec::new();
    let mut line_no: u64 = 0;
    // The next line worth reading: not blank, not a comment.
    let mut next = |buf: &mut Vec<u8>| -> Result<Option<(u64, String)>, WorkloadError> {
        loop {
            let more =
                next_line(&mut reader, buf).map_err(|source| WorkloadError::Io { file: file.to_string(), source })?;
            if !more {
                return Ok(None);
            }
            line_no += 1;
            if buf.len() > MAX_LINE {
                return Err(err(line_no, None, "the line is longer than 1 MiB: is this a flow CSV?".into()));
            }
            let mut text = std::str::from_utf8(buf)
                .map_err(|_| err(line_no, None, "the line is not UTF-8 text: is this a flow CSV?".into()))?;
            if line_no == 1 {
                text = text.strip_prefix('\u{feff}').unwrap_or(text);
            }
            let text = text.trim();
            if !text.is_empty() && !text.starts_with('#') {
                return Ok(Some((line_no, text.to_string())));
            }
        }
    };
    let Some((hline, header)) = next(&mut buf)? else {
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
    let mut out = FlowTrace::default();
    let mut seen = HashSet::new();
    let mut row: u64 = 0;
    while let Some((line, text)) = next(&mut buf)? {
        let cells: Vec<&str> = text.split(',').map(unquote).collect();
        if cells.len() != names.len() {
            return Err(err(line, None, format!("{} columns, but the header has {}", cells.len(), names.len())));
        }
        if out.rows.len() >= cap.limit {
            let what = format!("more than {} flows (line {line})", format_count(cap.limit as f64));
            let source = cap.exceeded(out.rows.len() + 1, &what, "simulate a part of the trace");
            return Err(WorkloadError::Budget { file: file.to_string(), source });
        }
        let cell = |slot: usize| (slot < 9 && col[slot] != usize::MAX).then(|| cells[col[slot]]);
        let number = |slot: usize, name: &str| -> Result<Option<f64>, WorkloadError> {
            match cell(slot) {
                None | Some("") if slot >= 4 => Ok(None),
                None | Some("") => Err(err(line, Some(name), "is empty".into())),
                Some(s) => match s.parse::<f64>() {
                    Ok(v) if v.is_finite() => Ok(Some(v)),
                    _ => Err(err(line, Some(name), format!("`{}` is not a number", clip(s, QUOTE)))),
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
            resolve(s).ok_or_else(|| err(line, Some(name), format!("unknown host `{}`", clip(s, QUOTE))))
        };
        let (src, dst) = (host(1, "src")?, host(2, "dst")?);
        let integer = |slot: usize, name: &str| -> Result<Option<i64>, WorkloadError> {
            match cell(slot) {
                None | Some("") => Ok(None),
                Some(s) => s
                    .parse::<i64>()
                    .map(Some)
                    .map_err(|_| err(line, Some(name), format!("`{}` is not an integer", clip(s, QUOTE)))),
            }
        };
        let flow_id = match integer(4, "flow_id")? {
            Some(v) if v < 0 => return Err(err(line, Some("flow_id"), format!("flow id {v} is negative"))),
            Some(v) => v as u64,
            None => row,
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
        out.rows.push(FlowRow { flow_id, start_s, src, dst, bytes, task_id, priority, weight, rate_cap_bps });
        out.lines.push(line);
        row += 1;
    }
    Ok(out)
}

/// Flows given as columns (from Python: dicts of arrays, Parquet files), with
/// the same meaning and checks as a flow CSV. Messages name the column and
/// the 1-based data row (`data row 3: column `bytes`: ...`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlowColumns {
    /// Start times, seconds.
    pub start_s: Vec<f64>,
    /// Source hosts (resolved by the caller).
    pub src: Vec<HostId>,
    /// Destination hosts.
    pub dst: Vec<HostId>,
    /// Sizes, bytes.
    pub bytes: Vec<f64>,
    /// Flow ids (non-negative integers, unique; default: the row index).
    pub flow_id: Option<Vec<f64>>,
    /// Task ids (negative: no task).
    pub task_id: Option<Vec<f64>>,
    /// Priority classes (integers).
    pub priority: Option<Vec<f64>>,
    /// Max-min weights (positive; default 1).
    pub weight: Option<Vec<f64>>,
    /// Rate caps, bits per second (0 or negative: no cap).
    pub rate_cap_bps: Option<Vec<f64>>,
}

/// Largest integer an `f64` holds exactly: ids above are refused.
const MAX_EXACT: f64 = 9_007_199_254_740_992.0;

impl FlowColumns {
    /// The rows, or the first problem.
    pub fn rows(&self) -> Result<Vec<FlowRow>, String> {
        let n = self.start_s.len();
        for (name, len) in
            [("src", self.src.len()), ("dst", self.dst.len()), ("bytes", self.bytes.len())].into_iter().chain(
                [
                    ("flow_id", &self.flow_id),
                    ("task_id", &self.task_id),
                    ("priority", &self.priority),
                    ("weight", &self.weight),
                    ("rate_cap_bps", &self.rate_cap_bps),
                ]
                .into_iter()
                .filter_map(|(k, v)| v.as_ref().map(|v| (k, v.len()))),
            )
        {
            if len != n {
                return Err(format!("column `{name}` has {len} values, but `start_s` has {n}"));
            }
        }
        let bad = |i: usize, col: &str, what: String| format!("data row {}: column `{col}`: {what}", i + 1);
        let at = |v: &Option<Vec<f64>>, i: usize| v.as_ref().map(|v| v[i]);
        let integer = |i: usize, col: &str, v: f64, lo: f64, hi: f64| -> Result<f64, String> {
            if v.is_finite() && v.fract() == 0.0 && (lo..=hi).contains(&v) {
                Ok(v)
            } else {
                Err(bad(i, col, format!("{v} is not an integer in [{lo}, {hi}]")))
            }
        };
        let mut seen = HashSet::with_capacity(if self.flow_id.is_some() { n } else { 0 });
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let (start_s, bytes) = (self.start_s[i], self.bytes[i]);
            if !(start_s.is_finite() && start_s >= 0.0) {
                return Err(bad(i, "start_s", format!("{start_s} is not a time >= 0")));
            }
            if !(bytes.is_finite() && bytes >= 0.0) {
                return Err(bad(i, "bytes", format!("{bytes} is not a size >= 0")));
            }
            let flow_id = match at(&self.flow_id, i) {
                None => i as u64,
                Some(v) => {
                    let id = integer(i, "flow_id", v, 0.0, MAX_EXACT)? as u64;
                    if !seen.insert(id) {
                        return Err(bad(i, "flow_id", format!("flow id {id} appears twice")));
                    }
                    id
                }
            };
            let task_id = match at(&self.task_id, i) {
                Some(v) if v < 0.0 => None,
                Some(v) => Some(integer(i, "task_id", v, 0.0, MAX_EXACT)? as u64),
                None => None,
            };
            let priority = match at(&self.priority, i) {
                Some(v) => integer(i, "priority", v, i32::MIN as f64, i32::MAX as f64)? as i32,
                None => 0,
            };
            let weight = at(&self.weight, i).unwrap_or(1.0);
            if !(weight.is_finite() && weight > 0.0) {
                return Err(bad(i, "weight", format!("{weight} must be a positive number")));
            }
            let rate_cap_bps = match at(&self.rate_cap_bps, i) {
                Some(c) if c.is_nan() => return Err(bad(i, "rate_cap_bps", "NaN is not a rate".into())),
                Some(c) if c > 0.0 => Some(c),
                _ => None,
            };
            out.push(FlowRow {
                flow_id,
                start_s,
                src: self.src[i],
                dst: self.dst[i],
                bytes,
                task_id,
                priority,
                weight,
                rate_cap_bps,
            });
        }
        Ok(out)
    }
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
    fn bom_crlf_and_lines() {
        let t = parse_flows_reader(
            "\u{feff}start_s,src,dst,bytes\r\n# c\r\n\r\n0,1,2,5\r\n1,a,b,6".as_bytes(),
            "f.csv",
            &hosts,
        )
        .unwrap();
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.lines, vec![4, 5]);
        assert_eq!((t.rows[1].src, t.rows[1].dst, t.rows[1].bytes), (0, 1, 6.0));
        // A BOM anywhere but the start is not stripped.
        assert_eq!(bad("start_s,src,dst,bytes\n\u{feff}0,1,2,5\n").1.as_deref(), Some("start_s"));
    }

    #[test]
    fn long_lines_and_binary_are_refused_after_1_mib() {
        // Reads at most MAX_LINE + 1 bytes of a line whatever its length: a
        // reader that panics past 2 MiB proves it.
        struct Endless(usize);
        impl Read for Endless {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                assert!(self.0 < 2 << 20, "read {} bytes", self.0);
                buf.fill(b'x');
                self.0 += buf.len();
                Ok(buf.len())
            }
        }
        let e = parse_flows_reader(BufReader::new(Endless(0)), "big.csv", &hosts).unwrap_err();
        assert_eq!(e.to_string(), "big.csv:1: the line is longer than 1 MiB: is this a flow CSV?");
        // Exactly 1 MiB is fine (here: a comment line).
        let ok = format!("#{}\nstart_s,src,dst,bytes\n0,1,2,3\n", "c".repeat(MAX_LINE - 1));
        assert_eq!(parse_flows_csv(&ok, "f.csv", &hosts).unwrap().len(), 1);
        let e = parse_flows_reader(&b"start_s,src,dst,bytes\n0,1,2,\xff\n"[..], "f.csv", &hosts).unwrap_err();
        assert_eq!(e.to_string(), "f.csv:2: the line is not UTF-8 text: is this a flow CSV?");
    }

    #[test]
    fn values_are_quoted_in_at_most_60_characters() {
        let long = "y".repeat(10_000);
        for text in [
            format!("start_s,src,dst,bytes\n0,1,2,{long}\n"),
            format!("start_s,src,dst,bytes\n0,{long},2,3\n"),
            format!("start_s,src,dst,bytes,{long}\n"),
            format!("flow_id,start_s,src,dst,bytes\n{long},0,1,2,3\n"),
        ] {
            let msg = parse_flows_csv(&text, "f.csv", &hosts).unwrap_err().to_string();
            assert!(msg.len() < 250, "{} characters: {msg}", msg.len());
            assert!(msg.contains(&format!("{}…", "y".repeat(59))), "{msg}");
        }
    }

    #[test]
    fn rows_over_the_budget_are_refused_as_soon_as_they_pass_it() {
        use netheat_core::{with_memory_budget, BYTES_PER_FLOW};
        let mut text = String::from("start_s,src,dst,bytes\n");
        for i in 0..5 {
            text.push_str(&format!("{i},1,2,3\n"));
        }
        // Then a malformed line: never reached, the count stops first.
        text.push_str("garbage\n");
        let e = with_memory_budget(4 * BYTES_PER_FLOW, || parse_flows_csv(&text, "f.csv", &hosts)).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, WorkloadError::Budget { .. }));
        assert!(
            msg.starts_with(
                "f.csv: more than 4 flows (line 6) would hold about 10.0 KiB, over the memory budget of 8.00 KiB"
            ),
            "{msg}"
        );
        let text = text.replace("garbage\n", "");
        assert_eq!(
            with_memory_budget(5 * BYTES_PER_FLOW, || parse_flows_csv(&text, "f.csv", &hosts)).unwrap().len(),
            5
        );
    }

    #[test]
    fn columns_are_checked_like_csv_rows() {
        let base = FlowColumns {
            start_s: vec![0.0, 1.0],
            src: vec![0, 1],
            dst: vec![1, 1],
            bytes: vec![10.0, 20.0],
            ..FlowColumns::default()
        };
        let rows = base.rows().unwrap();
        assert_eq!((rows[1].flow_id, rows[1].weight, rows[1].priority, rows[1].task_id), (1, 1.0, 0, None));
        let with = |f: &dyn Fn(&mut FlowColumns)| {
            let mut c = base.clone();
            f(&mut c);
            c.rows()
        };
        type Edit = Box<dyn Fn(&mut FlowColumns)>;
        let cases: Vec<(Edit, &str)> = vec![
            (Box::new(|c| c.bytes = vec![1.0]), "column `bytes` has 1 values, but `start_s` has 2"),
            (Box::new(|c| c.weight = Some(vec![1.0])), "column `weight` has 1 values, but `start_s` has 2"),
            (Box::new(|c| c.start_s[1] = f64::NAN), "data row 2: column `start_s`: NaN is not a time >= 0"),
            (Box::new(|c| c.start_s[0] = -1.0), "data row 1: column `start_s`: -1 is not a time >= 0"),
            (Box::new(|c| c.bytes[1] = f64::INFINITY), "data row 2: column `bytes`: inf is not a size >= 0"),
            (Box::new(|c| c.flow_id = Some(vec![3.0, 3.0])), "data row 2: column `flow_id`: flow id 3 appears twice"),
            (
                Box::new(|c| c.flow_id = Some(vec![-1.0, 3.0])),
                "data row 1: column `flow_id`: -1 is not an integer in [0, 9007199254740992]",
            ),
            (Box::new(|c| c.flow_id = Some(vec![0.5, 3.0])), "data row 1: column `flow_id`: 0.5 is not an integer"),
            (
                Box::new(|c| c.task_id = Some(vec![1.0, f64::NAN])),
                "data row 2: column `task_id`: NaN is not an integer",
            ),
            (
                Box::new(|c| c.priority = Some(vec![1e10, 0.0])),
                "data row 1: column `priority`: 10000000000 is not an integer",
            ),
            (Box::new(|c| c.weight = Some(vec![1.0, 0.0])), "data row 2: column `weight`: 0 must be a positive number"),
            (Box::new(|c| c.weight = Some(vec![f64::INFINITY, 1.0])), "data row 1: column `weight`: inf must be"),
            (
                Box::new(|c| c.rate_cap_bps = Some(vec![f64::NAN, 1.0])),
                "data row 1: column `rate_cap_bps`: NaN is not a rate",
            ),
        ];
        for (f, msg) in cases {
            let e = with(&*f).unwrap_err();
            assert!(e.starts_with(msg), "{e:?} does not start with {msg:?}");
        }
        let r = with(&|c| {
            c.task_id = Some(vec![-1.0, 7.0]);
            c.rate_cap_bps = Some(vec![0.0, 1e9]);
            c.priority = Some(vec![-3.0, 2.0]);
        })
        .unwrap();
        assert_eq!(
            (r[0].task_id, r[1].task_id, r[0].rate_cap_bps, r[1].rate_cap_bps),
            (None, Some(7), None, Some(1e9))
        );
        assert_eq!((r[0].priority, r[1].priority), (-3, 2));
    }

    #[test]
    fn message_format() {
        let e = parse_flows_csv("start_s,src,dst,bytes\n0,1,2,x\n", "f.csv", &hosts).unwrap_err();
        assert_eq!(e.to_string(), "f.csv:2: column `bytes`: `x` is not a number");
    }
}
