//! The one quantile definition of netheat.
//!
//! Every percentile netheat reports (FCT and task-time tails, utilization
//! percentiles, latency tails) is the *linear-interpolation* quantile of
//! the sample, Hyndman and Fan's definition 7: sort the `n` values into
//! `x[0] <= ... <= x[n-1]`, let `h = (n - 1) q`, and return
//! `x[floor h] + (h - floor h) (x[floor h + 1] - x[floor h])`. It is the
//! default of numpy (`np.quantile`), pandas, R and Polars' `"linear"`, so a
//! number from netheat's Rust side, its Python side and a user's notebook
//! agree. `q` is a fraction in `[0, 1]` (p99 is `q = 0.99`).
//!
//! Callers decide what enters the sample (finished flows only, say); a NaN
//! in the sample makes the result NaN rather than being skipped silently.

/// The linear-interpolation quantile (see the module docs) of `values`
/// for `q` in `[0, 1]`; `NaN` for an empty sample, a NaN value or a `q`
/// outside `[0, 1]`. Sorts a copy; use [`quantile_sorted`] on data that is
/// already sorted.
pub fn quantile(values: &[f64], q: f64) -> f64 {
    let mut v = values.to_vec();
    v.sort_unstable_by(f64::total_cmp);
    quantile_sorted(&v, q)
}

/// [`quantile`] of an ascending slice, without copying.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    if n == 0 || !(0.0..=1.0).contains(&q) || sorted.iter().any(|x| x.is_nan()) {
        return f64::NAN;
    }
    let h = (n - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(n - 1);
    let (a, b) = (sorted[lo], sorted[hi]);
    let t = h - lo as f64;
    if a == b || t == 0.0 {
        return a; // also keeps infinities exact (0 * inf would be NaN)
    }
    a + t * (b - a)
}

/// Several quantiles of one sample (sorted once).
pub fn quantiles(values: &[f64], qs: &[f64]) -> Vec<f64> {
    let mut v = values.to_vec();
    v.sort_unstable_by(f64::total_cmp);
    qs.iter().map(|&q| quantile_sorted(&v, q)).collect()
}

/// Arithmetic mean; `NaN` for an empty sample.
pub fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.iter().sum::<f64>() / values.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_numpy_linear_by_hand() {
        // numpy.quantile([1, 2, 3, 4], 0.5) = 2.5; h = 3 * 0.9 = 2.7 -> 3 + 0.7.
        let v = [4.0, 1.0, 3.0, 2.0];
        assert_eq!(quantile(&v, 0.5), 2.5);
        assert!((quantile(&v, 0.9) - 3.7).abs() < 1e-12);
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert_eq!(quantile(&v, 1.0), 4.0);
        // p99 of 1..=100: h = 99 * 0.99 = 98.01 -> 99 + 0.01.
        let w: Vec<f64> = (1..=100).map(f64::from).collect();
        assert!((quantile(&w, 0.99) - 99.01).abs() < 1e-9);
    }

    #[test]
    fn edge_cases() {
        assert!(quantile(&[], 0.5).is_nan());
        assert!(quantile(&[1.0], 1.5).is_nan());
        assert!(quantile(&[1.0, f64::NAN], 0.5).is_nan());
        assert_eq!(quantile(&[7.0], 0.99), 7.0);
        assert_eq!(quantile(&[1.0, f64::INFINITY, f64::INFINITY], 0.9), f64::INFINITY);
        // h = 2 * 0.5 = 1 exactly: the middle value, even with an infinity above it.
        assert_eq!(quantile(&[1.0, 2.0, f64::INFINITY], 0.5), 2.0);
        assert_eq!(quantiles(&[3.0, 1.0, 2.0], &[0.0, 0.5, 1.0]), vec![1.0, 2.0, 3.0]);
        assert_eq!(mean(&[1.0, 2.0, 6.0]), 3.0);
    }
}
