//! Meta rack-to-rack traffic matrices: sizes, pods, padding, bad JSON.

use netheat_data::spatial::parse_traffic_matrix;
use netheat_data::{load_traffic_matrix, DataError};

use crate::real;

#[test]
fn clusters_have_the_published_shapes() {
    let Some(dir) = real() else { return };
    // (name, racks, pods, total sampled count)
    for (name, racks, pods, total) in [
        ("tm-cluster-a", 155, 4, 47_876_518.0),
        ("tm-cluster-b", 324, 8, 1_694_856_402.0),
        ("tm-cluster-c", 365, 9, 88_501_013.0),
        ("tm-cluster-a-2-16", 32, 2, 2_464_613.0),
    ] {
        let m = load_traffic_matrix(&dir, name).unwrap();
        assert_eq!(m.n_racks(), racks, "{name}");
        assert_eq!(m.matrix.len(), racks, "{name}");
        assert!(m.matrix.iter().all(|r| r.len() == racks), "{name}");
        assert_eq!(m.pods.len(), pods, "{name}");
        assert_eq!(m.pods.iter().map(|p| p.racks.len()).sum::<usize>(), racks, "{name}");
        assert_eq!(m.total(), total, "{name}: padding dropped, nothing else");
        assert_eq!(m.rack_pods().len(), racks);
    }
    let a = load_traffic_matrix(&dir, "tm-cluster-a").unwrap();
    let mut sizes: Vec<usize> = a.pods.iter().map(|p| p.racks.len()).collect();
    sizes.sort_unstable();
    assert_eq!(sizes, vec![23, 40, 45, 47]);
}

const OK: &str = r#"{"matrix": {"inner": [[0, 5, 0], [2, 0, 0], [0, 0, 0]], "idx2name": ["r0", "r1"]},
 "pod2tors": {"p": ["r1", "r0"]}, "nr_pods": 1, "nr_racks": 2}"#;

#[test]
fn small_fixture_drops_zero_padding() {
    let m = parse_traffic_matrix(OK, "tm.json").unwrap();
    assert_eq!(m.matrix, vec![vec![0.0, 5.0], vec![2.0, 0.0]]);
    assert_eq!(m.pods[0].racks, vec![1, 0]);
    assert_eq!(m.rack_names, vec!["r0", "r1"]);
}

#[test]
fn bad_matrices_are_refused_with_a_reason() {
    let cases = [
        (OK.replace("[0, 0, 0]]", "[0, 0, 9]]"), "tm.json:0: matrix[2][2] = 9 lies beyond nr_racks 2"),
        (OK.replace("\"nr_racks\": 2", "\"nr_racks\": 3"), "tm.json:0: nr_racks is 3 but matrix.idx2name has 2"),
        (OK.replace("[\"r1\", \"r0\"]", "[\"r1\"]"), "tm.json:0: rack r0 is in no pod"),
        (OK.replace("[\"r1\", \"r0\"]", "[\"r1\", \"r9\"]"), "tm.json:0: pod p lists unknown rack r9"),
        (OK.replace("[2, 0, 0]", "[2, 0]"), "tm.json:0: matrix row 1 has 2 entries"),
        (OK.replace("\"nr_pods\": 1", "\"nr_pods\": 2"), "tm.json:0: nr_pods is 2 but pod2tors has 1"),
        (OK.replace("[2, 0, 0]", "[-2, 0, 0]"), "tm.json:0: matrix[1][0] = -2"),
        (OK.replace("\"nr_pods\": 1,", "\"nr_pods\": 1, \"extra\": 0,"), "tm.json:2: column"),
        ("{\n\"matrix\": [".to_string(), "tm.json:2: column"),
    ];
    for (text, want) in cases {
        let got = match parse_traffic_matrix(&text, "tm.json") {
            Err(e @ DataError::Parse { .. }) => e.to_string(),
            other => panic!("expected a parse error, got {other:?}"),
        };
        assert!(got.starts_with(want), "got {got:?}, want prefix {want:?}");
    }
}
