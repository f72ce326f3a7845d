//! Background traffic from a rack-to-rack traffic matrix.

use netheat_workloads::load::offered_load;
use netheat_workloads::{Horizon, LinkSet, Pattern, Poisson, SizeDist};

use crate::arrivals::clos;

fn matrix() -> Vec<Vec<f64>> {
    // 8 racks: rack 0 sends mostly to rack 7, a little everywhere else,
    // some intra-rack traffic in rack 3.
    let mut w = vec![vec![0.1; 8]; 8];
    for (r, row) in w.iter_mut().enumerate() {
        row[r] = 0.0;
    }
    w[0][7] = 5.0;
    w[3][3] = 2.0;
    w
}

#[test]
fn rack_matrix_load_and_pair_frequencies() {
    let topo = clos();
    let w = matrix();
    let total: f64 = w.iter().flatten().sum();
    let g = Poisson::rack_matrix(w.clone(), LinkSet::TorUplinks, 0.4, SizeDist::web_search(), Horizon::Duration(60.0));
    let cal = g.calibration(&topo).unwrap();
    assert!(cal.exact);
    assert!((cal.links_per_flow - (1.0 - 2.0 / total)).abs() < 1e-12);
    let rows = g.generate(&topo, 3).unwrap();
    let measured = offered_load(&topo, &LinkSet::TorUplinks, &rows, 60.0);
    let err = (measured - 0.4) / 0.4;
    eprintln!("rack matrix: {} flows, measured load {measured:.4} vs 0.4 ({:+.2}%)", rows.len(), 100.0 * err);
    assert!(err.abs() < 0.02, "{err}");
    let n = rows.len() as f64;
    let frac = |r: u32, s: u32| rows.iter().filter(|f| f.src / 8 == r && f.dst / 8 == s).count() as f64 / n;
    assert!((frac(0, 7) - 5.0 / total).abs() < 0.01);
    assert!((frac(3, 3) - 2.0 / total).abs() < 0.01);
    assert_eq!(frac(1, 1), 0.0);
    assert!(rows.iter().all(|f| f.src != f.dst));
}

#[test]
fn bad_matrices_are_rejected() {
    let topo = clos();
    let gen = |w: Vec<Vec<f64>>| {
        Poisson::new(LinkSet::TorUplinks, 0.4, SizeDist::web_search(), Horizon::Flows(1))
            .with_pattern(Pattern::RackMatrix(w))
            .generate(&topo, 1)
    };
    assert!(gen(vec![vec![1.0; 3]; 3]).is_err());
    assert!(gen(vec![vec![0.0; 8]; 8]).is_err());
    let mut w = vec![vec![1.0; 8]; 8];
    w[2][5] = -1.0;
    assert!(gen(w).unwrap_err().to_string().contains("weights[2][5]"));
}
