//! Prints the measured LT decoding overhead (symbols needed / k - 1) per k.
use netheat_fec::symbols_to_decode;

fn main() {
    println!("{:>6} {:>8} {:>10} {:>10} {:>10}", "k", "trials", "mean_ovh", "p50_ovh", "p99_ovh");
    for &k in &[4usize, 16, 64, 256, 1024] {
        let trials = 500;
        let mut v: Vec<f64> = (0..trials)
            .map(|t| symbols_to_decode(k, t as u64, 0, 50 * k + 100).unwrap().unwrap() as f64 / k as f64 - 1.0)
            .collect();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let mean = v.iter().sum::<f64>() / trials as f64;
        println!("{:>6} {:>8} {:>10.3} {:>10.3} {:>10.3}", k, trials, mean, v[trials / 2], v[trials * 99 / 100]);
    }
}
