//! Flow-size CDFs: every registered CDF is strict; formats and units; bad input.

use netheat_data::cdf::{parse_cdf, CdfFormat};
use netheat_data::registry::HOMA_DCTCP_BYTES_PER_PACKET;
use netheat_data::{load_cdf, DataError, EmpiricalCdf, Format, DATASETS};

use crate::real;

fn assert_strict(name: &str, c: &EmpiricalCdf) {
    assert!(!c.points.is_empty(), "{name}");
    assert!(c.points.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1), "{name} not monotone");
    assert!(c.points.iter().all(|p| p.0 >= 0.0 && (0.0..=1.0).contains(&p.1)), "{name} out of range");
    assert_eq!(c.points.last().unwrap().1, 1.0, "{name} does not end at 1");
}

#[test]
fn every_registered_cdf_is_monotone_and_ends_at_one() {
    let Some(dir) = real() else { return };
    let mut n = 0;
    for d in DATASETS.iter().filter(|d| matches!(d.format, Format::Cdf(_))) {
        let c = load_cdf(&dir, d.name).unwrap_or_else(|e| panic!("{}: {e}", d.name));
        assert_strict(d.name, &c);
        n += 1;
    }
    assert!(n >= 25, "{n} CDFs");
}

#[test]
fn hpcc_percentages_are_normalised() {
    let Some(dir) = real() else { return };
    let c = load_cdf(&dir, "cdf-websearch-hpcc").unwrap();
    assert_eq!(c.points.len(), 12);
    assert_eq!(c.points[0], (0.0, 0.0));
    assert_eq!(c.points[1], (10_000.0, 0.15));
    assert_eq!(c.points[11], (30_000_000.0, 1.0));
    // The same file under two registry names (parsimon keeps a copy) loads the same.
    assert_eq!(load_cdf(&dir, "cdf-websearch-parsimon").unwrap(), c);
    assert_eq!(load_cdf(&dir, "cdf-fbhadoop-hpcc").unwrap(), load_cdf(&dir, "cdf-facebook-parsimon").unwrap());
}

#[test]
fn homa_dctcp_packets_are_scaled_to_bytes() {
    let Some(dir) = real() else { return };
    let c = load_cdf(&dir, "cdf-dctcp-original-homa").unwrap();
    let p = f64::from(HOMA_DCTCP_BYTES_PER_PACKET);
    assert_eq!(HOMA_DCTCP_BYTES_PER_PACKET, 1460);
    assert_eq!(c.points[0], (6.0 * p, 0.15));
    assert_eq!(*c.points.last().unwrap(), (20_000.0 * p, 1.0));
    // 20,000 packets x 1460 B ~ 29.2 MB, close to the 30 MB maximum of the byte-valued web search CDF.
    let hpcc = load_cdf(&dir, "cdf-websearch-hpcc").unwrap();
    assert!((c.max_bytes() / hpcc.max_bytes() - 1.0).abs() < 0.03);
    // The byte-valued Homa files are not scaled.
    let g = load_cdf(&dir, "cdf-googlesearch-homa").unwrap();
    assert_eq!(g.points[0].0, 2.0);
}

#[test]
fn repeated_sizes_are_merged_keeping_the_highest_probability() {
    let c = parse_cdf("1 0.2\n2 0.3\n2 0.4\n2 0.5\n3 1\n", "f", CdfFormat::Fraction).unwrap();
    assert_eq!(c.points, vec![(1.0, 0.2), (2.0, 0.5), (3.0, 1.0)]);
    let Some(dir) = real() else { return };
    // FacebookKeyValue_Sampled.txt: 315 points of which 8 repeat the previous size.
    let kv = load_cdf(&dir, "cdf-fbkv-homa").unwrap();
    assert_eq!(kv.points.len(), 315 - 8);
    assert_eq!(kv.points.iter().find(|p| p.0 == 16.0).unwrap().1, 0.474821816501057);
}

#[test]
fn homamodule_and_hkust_fractions_parse() {
    let Some(dir) = real() else { return };
    let w5 = load_cdf(&dir, "cdf-w5-homamodule").unwrap();
    assert_eq!(w5.points.len(), 400, "the `#` header line is skipped");
    assert_eq!(w5.max_bytes(), 29_400_000.0);
    let vl2 = load_cdf(&dir, "cdf-vl2-hkust").unwrap();
    assert_eq!(vl2.max_bytes(), 1e9);
}

fn err(text: &str, f: CdfFormat) -> String {
    match parse_cdf(text, "cdf.txt", f) {
        Err(e @ DataError::Parse { .. }) => e.to_string(),
        other => panic!("expected a parse error, got {other:?}"),
    }
}

#[test]
fn formats_parse_small_fixtures() {
    let c = parse_cdf("0 0\n100 50\n200 100\n", "f", CdfFormat::Percent).unwrap();
    assert_eq!(c.points, vec![(0.0, 0.0), (100.0, 0.5), (200.0, 1.0)]);
    let c = parse_cdf("# header\n1 0.5\n\n2 1.0\n", "f", CdfFormat::Fraction).unwrap();
    assert_eq!(c.points, vec![(1.0, 0.5), (2.0, 1.0)]);
    let c = parse_cdf("3.5\n1 0.5\n2 1\n", "f", CdfFormat::HomaMeanFirst { bytes_per_unit: 1000 }).unwrap();
    assert_eq!(c.points, vec![(1000.0, 0.5), (2000.0, 1.0)]);
    assert_eq!(c.mean_step(), 1500.0);
}

#[test]
fn malformed_cdfs_name_file_and_line() {
    use CdfFormat::*;
    let homa = HomaMeanFirst { bytes_per_unit: 1 };
    let cases = [
        ("0 0\n100 50 7\n200 100\n", Percent, "cdf.txt:2: expected `<size> <cumulative probability>`, found 3"),
        ("0 0\n100 x\n", Percent, "cdf.txt:2: cumulative probability `x` is not a finite number"),
        ("0 0\n100 60\n200 50\n300 100\n", Percent, "cdf.txt:3: cumulative probability 0.5 decreases"),
        ("0 0\n200 50\n100 100\n", Percent, "cdf.txt:3: size 100 decreases (previous 200)"),
        ("0 0\n100 50\n200 90\n", Percent, "cdf.txt:3: the CDF ends at 0.9 instead of 1"),
        ("0 0\n100 1.5\n", Fraction, "cdf.txt:2: cumulative probability 1.5 is outside [0, 1]"),
        ("0 0\n100 150\n", Percent, "cdf.txt:2: cumulative probability 150 is outside [0, 100]"),
        ("-1 0\n100 1\n", Fraction, "cdf.txt:1: size -1 must be finite"),
        ("1 0.5\n2 1\n", homa, "cdf.txt:1: expected the mean size alone, found 2 fields"),
        ("12.5\n", homa, "cdf.txt:0: no CDF points"),
        ("", homa, "cdf.txt:0: empty file"),
        ("# only a comment\n", Fraction, "cdf.txt:0: no CDF points"),
    ];
    for (text, f, want) in cases {
        let got = err(text, f);
        assert!(got.starts_with(want), "input {text:?}: got {got:?}, want prefix {want:?}");
    }
}
