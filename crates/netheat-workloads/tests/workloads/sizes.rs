//! Sampled sizes follow their distributions (one-sample Kolmogorov-Smirnov).

use netheat_workloads::SizeDist;
use proptest::prelude::*;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

const N: usize = 100_000;

/// `sup |F_n - F|` for a CDF that may have atoms: at each distinct sample
/// value `v` compare `F_n(v)` with `F(v)` and `F_n(v-)` with `F(v-)`.
fn ks(dist: &SizeDist, mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len() as f64;
    let mut d: f64 = 0.0;
    let mut i = 0;
    while i < xs.len() {
        let v = xs[i];
        let mut j = i;
        while j < xs.len() && xs[j] == v {
            j += 1;
        }
        d = d.max((i as f64 / n - dist.cdf_left(v)).abs());
        d = d.max((j as f64 / n - dist.cdf(v)).abs());
        i = j;
    }
    d
}

fn sample(dist: &SizeDist, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..N).map(|_| dist.sample(&mut rng)).collect()
}

fn check(name: &str, dist: &SizeDist, seed: u64) {
    let xs = sample(dist, seed);
    let mean = xs.iter().sum::<f64>() / N as f64;
    let d = ks(dist, xs);
    let crit = 1.63 / (N as f64).sqrt();
    eprintln!("KS {name}: D = {d:.5} (1% critical {crit:.5}); sample mean {mean:.1} vs exact {:.1}", dist.mean());
    assert!(d < crit, "{name}: KS statistic {d} >= {crit}");
}

#[test]
fn web_search_sizes_match_the_cdf() {
    check("web-search", &SizeDist::web_search(), 11);
}

#[test]
fn bounded_pareto_sizes_match_the_cdf() {
    check("bounded-pareto", &SizeDist::BoundedPareto { shape: 1.1, lo: 1e3, hi: 1e9 }, 12);
}

#[test]
fn other_distributions_match_their_cdfs() {
    check("exponential", &SizeDist::Exponential { mean: 5e5 }, 13);
    check("log-normal", &SizeDist::log_normal_with_mean(1e5, 1.2), 14);
}

#[test]
fn empirical_mean_is_exact() {
    // 0.5 at 100 B, uniform on [100, 300] with 0.5: 0.5*100 + 0.5*200.
    let d = SizeDist::empirical(&[(100.0, 0.5), (300.0, 1.0)]).unwrap();
    assert_eq!(d.mean(), 150.0);
    let ws = SizeDist::web_search();
    assert!((1.5e6..1.8e6).contains(&ws.mean()), "{}", ws.mean());
    // The first point is an atom: nothing below it, its probability on it.
    let xs = sample(&ws, 3);
    assert!(xs.iter().all(|&x| x >= 8760.0));
    let at_first = xs.iter().filter(|&&x| x == 8760.0).count() as f64 / N as f64;
    assert!((at_first - 0.15).abs() < 0.005, "{at_first}");
}

#[test]
fn same_seed_same_sizes() {
    let d = SizeDist::web_search();
    assert_eq!(sample(&d, 1), sample(&d, 1));
    assert_ne!(sample(&d, 1), sample(&d, 2));
}

proptest! {
    #[test]
    fn quantile_inverts_cdf(u in 0.0f64..1.0) {
        for d in [SizeDist::web_search(), SizeDist::BoundedPareto { shape: 0.7, lo: 10.0, hi: 1e6 }] {
            let x = d.quantile(u);
            prop_assert!(d.cdf(x) >= u - 1e-9);
            prop_assert!(d.cdf_left(x) <= u + 1e-9);
        }
    }
}
