//! The Facebook 2010 coflow trace: totals reproduced; malformed lines named.

use netheat_data::coflow::parse_coflows;
use netheat_data::{load_coflows, DataError};

use crate::real;

#[test]
fn fb2010_reproduces_the_trace_totals() {
    let Some(dir) = real() else { return };
    let t = load_coflows(&dir, "coflow-fb2010").unwrap();
    assert_eq!(t.racks, 150);
    assert_eq!(t.coflows.len(), 526);
    // Total shuffle = sum over coflows of the MB received by their reducers.
    assert_eq!(t.total_shuffle_mb(), 35_533_534.0);
    let first = t.coflows.iter().map(|c| c.arrival_ms).min().unwrap();
    let last = t.coflows.iter().map(|c| c.arrival_ms).max().unwrap();
    assert_eq!((first, last), (0, 3_629_235));
    assert!(t.coflows.windows(2).all(|w| w[0].arrival_ms <= w[1].arrival_ms), "arrivals are sorted");
    let ids: Vec<u32> = t.coflows.iter().map(|c| c.id).collect();
    assert_eq!(ids, (1..=526).collect::<Vec<_>>());
    // Every rack index is below the 150 ports; 147 distinct racks appear.
    let mut used = std::collections::BTreeSet::new();
    for c in &t.coflows {
        used.extend(c.mapper_racks.iter().copied());
        used.extend(c.reducers.iter().map(|r| r.0));
    }
    assert!(used.iter().all(|&r| r < 150));
    assert_eq!(used.len(), 147);
    // First and last lines of the file.
    assert_eq!((t.coflows[0].mapper_racks.clone(), t.coflows[0].reducers.clone()), (vec![22], vec![(65, 1.0)]));
    let c = &t.coflows[525];
    assert_eq!(
        (c.id, c.arrival_ms, c.mapper_racks.clone(), c.reducers.clone()),
        (526, 3_629_235, vec![43, 79], vec![(60, 10.0)])
    );
}

fn err(text: &str) -> String {
    match parse_coflows(text, "fixture.txt") {
        Err(e @ DataError::Parse { .. }) => e.to_string(),
        other => panic!("expected a parse error, got {other:?}"),
    }
}

#[test]
fn small_fixture_parses() {
    let t = parse_coflows("4 2\n1 0 2 0 1 1 3:2.5\n\n2 7 1 2 2 0:1 1:0.5\n", "f").unwrap();
    assert_eq!(t.racks, 4);
    assert_eq!(t.coflows[0].mapper_racks, vec![0, 1]);
    assert_eq!(t.coflows[1].reducers, vec![(0, 1.0), (1, 0.5)]);
    assert_eq!(t.total_shuffle_mb(), 4.0);
}

#[test]
fn malformed_lines_name_file_and_line() {
    let cases = [
        ("", "fixture.txt:0: empty file"),
        ("4\n", "fixture.txt:1: expected `<racks> <coflows>`"),
        ("4 1\n1 0 1 0 1 3-2.5\n", "fixture.txt:2: reducer `3-2.5` is not `rack:MB`"),
        ("4 1\n1 0 1 0 2 3:2.5\n", "fixture.txt:2: coflow 1 declares 2 reducers but lists 1"),
        ("4 2\n1 0 1 0 1 3:1\n2 5 1 9 1 3:1\n", "fixture.txt:3: mapper rack 9 is not below the rack count 4"),
        ("4 1\n1 0 1 0 1 3:abc\n", "fixture.txt:2: reducer megabytes `abc` is not a finite number"),
        ("4 1\n1 -5 1 0 1 3:1\n", "fixture.txt:2: arrival time (ms) `-5` is not a non-negative integer"),
        ("4 1\n1 0 3 0 1\n", "fixture.txt:2: line ends early"),
        ("4 2\n1 0 1 0 1 3:1\n1 5 1 0 1 3:1\n", "fixture.txt:3: duplicate coflow id 1"),
        ("4 3\n1 0 1 0 1 3:1\n", "fixture.txt:0: header (line 1) declares 3 coflows but the file has 1"),
    ];
    for (text, want) in cases {
        let got = err(text);
        assert!(got.starts_with(want), "input {text:?}: got {got:?}, want prefix {want:?}");
    }
}
