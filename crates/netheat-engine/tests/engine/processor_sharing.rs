//! A single bottleneck under Poisson arrivals behaves as an M/G/1
//! processor-sharing queue: mean sojourn time E[S]/(C(1-ρ)) (in time units of
//! bits), whatever the size distribution.

use super::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const C: f64 = 1e9; // 1 Gbps bottleneck

/// Bounded Pareto on [L, H] with shape A (sizes in bytes).
const L: f64 = 1e4;
const H: f64 = 1e7;
const A: f64 = 1.5;

/// E[S] of the bounded Pareto, analytically:
/// L^a / (1 - (L/H)^a) * a/(a-1) * (L^(1-a) - H^(1-a)).
fn pareto_mean() -> f64 {
    L.powf(A) / (1.0 - (L / H).powf(A)) * A / (A - 1.0) * (L.powf(1.0 - A) - H.powf(1.0 - A))
}

fn pareto(rng: &mut ChaCha8Rng) -> f64 {
    // Inverse CDF: F(x) = (1 - (L/x)^a) / (1 - (L/H)^a).
    let u: f64 = rng.gen();
    L / (1.0 - u * (1.0 - (L / H).powf(A))).powf(1.0 / A)
}

fn exponential(rng: &mut ChaCha8Rng, mean: f64) -> f64 {
    let u: f64 = rng.gen();
    -(1.0 - u).ln() * mean
}

/// Mean FCT relative to the M/G/1-PS prediction.
fn ps_ratio(n: usize, rho: f64, mean_bytes: f64, seed: u64, size: impl Fn(&mut ChaCha8Rng) -> f64) -> f64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let lambda = rho * C / (8.0 * mean_bytes); // flows per second
    let mut t = 0.0;
    let mut flows = Vec::with_capacity(n);
    for i in 0..n {
        t += exponential(&mut rng, 1.0 / lambda);
        flows.push(flow(i as u64, size(&mut rng), t, &[0]));
    }
    let mut sim = Simulation::new(Network::new(vec![C]), None, SimConfig::default());
    sim.add_flows(flows).unwrap();
    let r = sim.run();
    assert_eq!(r.stats.flows_completed as usize, n);
    let mean_fct = r.flows.iter().map(|f| f.fct_s).sum::<f64>() / n as f64;
    let predicted = mean_bytes * 8.0 / (C * (1.0 - rho));
    let ratio = mean_fct / predicted;
    eprintln!("n={n} rho={rho}: mean FCT {mean_fct:.6e} s, M/G/1-PS {predicted:.6e} s, ratio {ratio:.4}");
    ratio
}

#[test]
fn pareto_mean_is_right() {
    // Cross-check the closed form by numerical integration of x f(x).
    let k = A * L.powf(A) / (1.0 - (L / H).powf(A));
    let (mut s, n) = (0.0, 2_000_000);
    let (ln_l, ln_h) = (L.ln(), H.ln());
    for i in 0..n {
        // Integrate in log space: x f(x) dx = x^2 f(x) d(ln x).
        let x = (ln_l + (i as f64 + 0.5) * (ln_h - ln_l) / n as f64).exp();
        s += x * x * k * x.powf(-A - 1.0) * (ln_h - ln_l) / n as f64;
    }
    assert!((s / pareto_mean() - 1.0).abs() < 1e-6, "{s} vs {}", pareto_mean());
}

#[test]
fn exponential_sizes_rho_05() {
    let r = ps_ratio(200_000, 0.5, 1e5, 1, |g| exponential(g, 1e5));
    assert!((r - 1.0).abs() < 0.03, "mean FCT / PS prediction = {r}");
}

#[test]
fn exponential_sizes_rho_08() {
    let r = ps_ratio(200_000, 0.8, 1e5, 2, |g| exponential(g, 1e5));
    assert!((r - 1.0).abs() < 0.03, "mean FCT / PS prediction = {r}");
}

#[test]
fn bounded_pareto_sizes_rho_05() {
    let r = ps_ratio(1_000_000, 0.5, pareto_mean(), 3, pareto);
    assert!((r - 1.0).abs() < 0.03, "mean FCT / PS prediction = {r}");
}

#[test]
fn bounded_pareto_sizes_rho_08() {
    let r = ps_ratio(1_000_000, 0.8, pareto_mean(), 4, pareto);
    assert!((r - 1.0).abs() < 0.03, "mean FCT / PS prediction = {r}");
}
