//! Fuzzing the flow CSV reader (proptest): arbitrary bytes, and mutations of
//! a valid trace (bit flips, deleted and repeated lines, cells replaced by
//! extreme or huge values, a byte-order mark, truncation), must read or fail
//! with a short message naming the file, never panic, and never hold more
//! than the line limit.
//!
//! The number of cases is proptest's `PROPTEST_CASES` (default 256);
//! `make fuzz` runs many more in release mode.

use netheat_core::{with_memory_budget, HostId, BYTES_PER_FLOW};
use netheat_workloads::{parse_flows_reader, WorkloadError};
use proptest::prelude::*;

/// Longest error message accepted.
const MAX_MESSAGE: usize = 300;

/// 16 hosts, by index or by name `r<rack>h<slot>` (4 per rack).
fn hosts(s: &str) -> Option<HostId> {
    if let Ok(h) = s.parse::<u32>() {
        return (h < 16).then_some(h);
    }
    let (r, h) = s.strip_prefix('r')?.split_once('h')?;
    let (r, h): (u32, u32) = (r.parse().ok()?, h.parse().ok()?);
    (r < 4 && h < 4).then_some(r * 4 + h)
}

const VALID: &str = "# a trace\nflow_id,start_s,src,dst,bytes,task_id,priority,weight,rate_cap_bps\n\
0,0,0,5,1000000,,0,1,\n1,0.5,r1h2,r3h0,2e6,7,1,2.5,1e9\n\n2,1.25,\"3\",\"r0h1\",0,7,-2,,\n3,2,15,0,123456789,8,0,1,5e8\n";

const EXTREMES: [&str; 14] = [
    "0",
    "-1",
    "1e30",
    "1e300",
    "nan",
    "inf",
    "-inf",
    "18446744073709551615",
    "9223372036854775808",
    "-9223372036854775809",
    "2147483648",
    "",
    "\"\"",
    "1e-320",
];

#[derive(Debug, Clone)]
enum Mutation {
    FlipBit {
        at: usize,
        bit: u8,
    },
    DeleteLine(usize),
    RepeatLine(usize),
    /// Replace cell `cell` of line `line` by an extreme value.
    Cell {
        line: usize,
        cell: usize,
        value: usize,
    },
    /// Replace cell `cell` of line `line` by a huge one.
    HugeCell {
        line: usize,
        cell: usize,
        len: usize,
    },
    Bom,
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        2 => (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Mutation::FlipBit { at, bit }),
        1 => any::<usize>().prop_map(Mutation::DeleteLine),
        1 => any::<usize>().prop_map(Mutation::RepeatLine),
        6 => (any::<usize>(), any::<usize>(), 0..EXTREMES.len()).prop_map(|(line, cell, value)| Mutation::Cell { line, cell, value }),
        1 => (any::<usize>(), any::<usize>(), 1usize..200_000).prop_map(|(line, cell, len)| Mutation::HugeCell { line, cell, len }),
        1 => Just(Mutation::Bom),
        1 => any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn apply(text: &str, ms: &[Mutation]) -> Vec<u8> {
    let mut b = text.as_bytes().to_vec();
    for m in ms {
        if b.is_empty() {
            break;
        }
        let mut lines: Vec<Vec<u8>> = b.split(|&c| c == b'\n').map(<[u8]>::to_vec).collect();
        let n = lines.len();
        match *m {
            Mutation::FlipBit { at, bit } => {
                let i = at % b.len();
                b[i] ^= 1 << bit;
                continue;
            }
            Mutation::Bom => {
                b.splice(0..0, [0xef, 0xbb, 0xbf]);
                continue;
            }
            Mutation::Truncate(at) => {
                b.truncate(at % (b.len() + 1));
                continue;
            }
            Mutation::DeleteLine(k) => {
                lines.remove(k % n);
            }
            Mutation::RepeatLine(k) => {
                let l = lines[k % n].clone();
                lines.insert(k % n, l);
            }
            Mutation::Cell { line, cell, value } => set_cell(&mut lines[line % n], cell, EXTREMES[value].as_bytes()),
            Mutation::HugeCell { line, cell, len } => set_cell(&mut lines[line % n], cell, &vec![b'7'; len]),
        }
        b = lines.join(&b'\n');
    }
    b
}

fn set_cell(line: &mut Vec<u8>, cell: usize, value: &[u8]) {
    let mut cells: Vec<Vec<u8>> = line.split(|&c| c == b',').map(<[u8]>::to_vec).collect();
    let k = cell % cells.len();
    cells[k] = value.to_vec();
    *line = cells.join(&b',');
}

fn check(bytes: &[u8], budget_flows: u64) {
    let r = with_memory_budget(budget_flows * BYTES_PER_FLOW, || parse_flows_reader(bytes, "f.csv", &hosts));
    match r {
        Ok(t) => {
            assert_eq!(t.rows.len(), t.lines.len());
            assert!(t.rows.len() as u64 <= budget_flows);
            for r in &t.rows {
                assert!(r.start_s.is_finite() && r.start_s >= 0.0, "{r:?}");
                assert!(r.bytes.is_finite() && r.bytes >= 0.0, "{r:?}");
                assert!(r.weight.is_finite() && r.weight > 0.0, "{r:?}");
                assert!(r.src < 16 && r.dst < 16);
            }
        }
        Err(e) => {
            let msg = e.to_string();
            assert!(msg.len() <= MAX_MESSAGE, "message of {} characters: {}", msg.len(), &msg[..MAX_MESSAGE]);
            assert!(msg.starts_with("f.csv"), "{msg}");
            assert!(!matches!(e, WorkloadError::Io { .. }), "{msg}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..2000), budget in 1u64..8) {
        check(&bytes, budget);
    }

    #[test]
    fn arbitrary_text(text in "[0-9a-z_,.\\-+eE\"# \\n\\r]{0,400}") {
        check(format!("start_s,src,dst,bytes\n{text}").as_bytes(), 1000);
    }

    #[test]
    fn mutations_of_a_valid_trace(ms in prop::collection::vec(mutation(), 1..5), budget in 1u64..8) {
        check(&apply(VALID, &ms), budget);
    }
}

#[test]
fn the_valid_trace_reads() {
    let t = parse_flows_reader(VALID.as_bytes(), "f.csv", &hosts).unwrap();
    assert_eq!(t.rows.len(), 4);
    assert_eq!(t.lines, vec![3, 4, 6, 7]);
    assert_eq!(apply("a,b\nc,d", &[Mutation::Cell { line: 1, cell: 0, value: 4 }]), b"a,b\nnan,d");
}
