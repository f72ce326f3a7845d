//! Flow size distributions, in bytes.
//!
//! Every [`SizeDist`] samples by inversion of its CDF from one uniform draw
//! of the caller's (seeded) RNG, so a given seed always yields the same
//! sizes, and each has an exact [`SizeDist::mean`] (used to turn a target
//! load into an arrival rate) and an exact [`SizeDist::cdf`] (used by tests).
//!
//! The empirical distribution is a piecewise-linear CDF through
//! `(bytes, cum_prob)` points: between two points the CDF is linear, so
//! sizes are uniform there. At the first point the CDF jumps from 0 to its
//! `cum_prob`: that probability mass sits exactly on the first size (no size
//! below it is ever drawn). Two points with the same size make a jump (an
//! atom) there, which is how a point mass inside the CDF is written.

use rand::Rng;

use crate::GenError;

/// A validated piecewise-linear CDF of flow sizes in bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct EmpiricalCdf {
    x: Vec<f64>,
    p: Vec<f64>,
}

impl EmpiricalCdf {
    /// Builds the CDF from `(bytes, cum_prob)` points. Sizes must be finite,
    /// non-negative and non-decreasing; probabilities within `[0, 1]`,
    /// non-decreasing, the last equal to 1 (within 1e-9; it is then set to
    /// exactly 1).
    pub fn new(points: &[(f64, f64)]) -> Result<Self, GenError> {
        if points.is_empty() {
            return Err(GenError::param("points", "an empirical CDF needs at least one point"));
        }
        let mut x = Vec::with_capacity(points.len());
        let mut p = Vec::with_capacity(points.len());
        for (i, &(b, c)) in points.iter().enumerate() {
            let name = format!("points[{i}]");
            if !(b.is_finite() && b >= 0.0) {
                return Err(GenError::param(name, format!("size {b} must be a finite number of bytes >= 0")));
            }
            if !(0.0..=1.0).contains(&c) {
                return Err(GenError::param(name, format!("cumulative probability {c} is outside [0, 1]")));
            }
            if i > 0 && (b < x[i - 1] || c < p[i - 1]) {
                return Err(GenError::param(name, "sizes and cumulative probabilities must be non-decreasing"));
            }
            x.push(b);
            p.push(c);
        }
        let last = p.len() - 1;
        if (p[last] - 1.0).abs() > 1e-9 {
            return Err(GenError::param(format!("points[{last}]"), "the last cumulative probability must be 1"));
        }
        p[last] = 1.0;
        Ok(Self { x, p })
    }

    /// The points `(bytes, cum_prob)`.
    pub fn points(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.x.iter().copied().zip(self.p.iter().copied())
    }

    /// Inverse CDF at `u` in `[0, 1]`: the first size when `u <= p[0]`,
    /// else linear interpolation on the segment where the CDF crosses `u`.
    pub fn quantile(&self, u: f64) -> f64 {
        if u <= self.p[0] {
            return self.x[0];
        }
        // First index with p >= u (exists since the last p is 1 >= u).
        let i = self.p.partition_point(|&q| q < u).min(self.p.len() - 1);
        let (p0, p1) = (self.p[i - 1], self.p[i]);
        let (x0, x1) = (self.x[i - 1], self.x[i]);
        if p1 <= p0 {
            return x1;
        }
        x0 + (x1 - x0) * (u - p0) / (p1 - p0)
    }

    /// `P(S <= x)`.
    pub fn cdf(&self, x: f64) -> f64 {
        if x < self.x[0] {
            return 0.0;
        }
        // Last index with size <= x.
        let i = self.x.partition_point(|&b| b <= x) - 1;
        if i + 1 == self.x.len() {
            return 1.0;
        }
        let (x0, x1) = (self.x[i], self.x[i + 1]);
        if x1 <= x0 {
            return self.p[i + 1];
        }
        self.p[i] + (self.p[i + 1] - self.p[i]) * (x - x0) / (x1 - x0)
    }

    /// `P(S < x)`, the CDF's left limit (differs from [`Self::cdf`] at atoms).
    pub fn cdf_left(&self, x: f64) -> f64 {
        if x <= self.x[0] {
            return 0.0;
        }
        // Last index with size < x.
        let i = self.x.partition_point(|&b| b < x) - 1;
        if i + 1 == self.x.len() {
            return 1.0;
        }
        let (x0, x1) = (self.x[i], self.x[i + 1]);
        self.p[i] + (self.p[i + 1] - self.p[i]) * (x - x0) / (x1 - x0)
    }

    /// Exact mean: the atom at the first point plus, per segment, its
    /// probability times its midpoint (sizes are uniform on a segment).
    pub fn mean(&self) -> f64 {
        let mut m = self.p[0] * self.x[0];
        for i in 1..self.x.len() {
            m += (self.p[i] - self.p[i - 1]) * 0.5 * (self.x[i - 1] + self.x[i]);
        }
        m
    }
}

/// Bytes of a full-size packet in the packet-count CDFs below.
const MSS: f64 = 1460.0;

/// Web-search flow sizes (the DCTCP paper's measured distribution, as used
/// by pFabric and later work), in packets of 1460 B. Tests and examples use
/// it; experiments should prefer the dataset from the data directory
/// (`netheat-data`), which records its provenance and checksum.
const WEB_SEARCH_PKTS: [(f64, f64); 12] = [
    (6.0, 0.0),
    (6.0, 0.15),
    (13.0, 0.2),
    (19.0, 0.3),
    (33.0, 0.4),
    (53.0, 0.53),
    (133.0, 0.6),
    (667.0, 0.7),
    (1333.0, 0.8),
    (3333.0, 0.9),
    (6667.0, 0.97),
    (20000.0, 1.0),
];

/// A flow size distribution; every variant is in bytes.
#[derive(Debug, Clone, PartialEq)]
pub enum SizeDist {
    /// Always the same size.
    Constant(f64),
    /// Exponential with the given mean.
    Exponential {
        /// Mean size, bytes.
        mean: f64,
    },
    /// Pareto with tail index `shape` truncated to `[lo, hi]`:
    /// `P(S > x) ∝ x^-shape - hi^-shape`.
    BoundedPareto {
        /// Tail index (alpha) > 0.
        shape: f64,
        /// Smallest size, bytes (> 0).
        lo: f64,
        /// Largest size, bytes (> lo).
        hi: f64,
    },
    /// `ln(S)` is normal with mean `mu` and standard deviation `sigma`.
    LogNormal {
        /// Mean of `ln(bytes)`.
        mu: f64,
        /// Standard deviation of `ln(bytes)` (>= 0).
        sigma: f64,
    },
    /// Piecewise-linear empirical CDF (see the module docs).
    Empirical(EmpiricalCdf),
    /// Uniform on `[lo, hi]`.
    Uniform {
        /// Smallest size, bytes (>= 0).
        lo: f64,
        /// Largest size, bytes (>= lo).
        hi: f64,
    },
}

impl SizeDist {
    /// The built-in web-search CDF (DCTCP shape) in bytes; mean ≈ 1.67 MB.
    pub fn web_search() -> Self {
        let pts: Vec<(f64, f64)> = WEB_SEARCH_PKTS.iter().map(|&(k, p)| (k * MSS, p)).collect();
        SizeDist::Empirical(EmpiricalCdf::new(&pts).expect("built-in CDF is valid"))
    }

    /// An empirical distribution from `(bytes, cum_prob)` points.
    pub fn empirical(points: &[(f64, f64)]) -> Result<Self, GenError> {
        EmpiricalCdf::new(points).map(SizeDist::Empirical)
    }

    /// A log-normal with the given mean (bytes) and `sigma` of `ln(bytes)`.
    pub fn log_normal_with_mean(mean: f64, sigma: f64) -> Self {
        SizeDist::LogNormal { mu: mean.ln() - 0.5 * sigma * sigma, sigma }
    }

    /// Checks the parameters; generators call this before sampling.
    pub fn validate(&self) -> Result<(), GenError> {
        let bad = |name: &str, reason: String| Err(GenError::param(name, reason));
        match *self {
            SizeDist::Constant(b) if !(b.is_finite() && b >= 0.0) => bad("bytes", format!("{b} is not a size")),
            SizeDist::Exponential { mean } if !(mean.is_finite() && mean > 0.0) => {
                bad("mean", format!("{mean} must be > 0"))
            }
            SizeDist::BoundedPareto { shape, lo, hi } => {
                if !(shape.is_finite() && shape > 0.0) {
                    bad("shape", format!("{shape} must be > 0"))
                } else if !(lo.is_finite() && lo > 0.0 && hi.is_finite() && hi > lo) {
                    bad("lo/hi", format!("need 0 < lo < hi, got lo={lo}, hi={hi}"))
                } else {
                    Ok(())
                }
            }
            SizeDist::LogNormal { mu, sigma } if !(mu.is_finite() && sigma.is_finite() && sigma >= 0.0) => {
                bad("sigma", format!("need finite mu and sigma >= 0, got mu={mu}, sigma={sigma}"))
            }
            SizeDist::Uniform { lo, hi } if !(lo.is_finite() && lo >= 0.0 && hi.is_finite() && hi >= lo) => {
                bad("lo/hi", format!("need 0 <= lo <= hi, got lo={lo}, hi={hi}"))
            }
            _ => Ok(()),
        }
    }

    /// Inverse CDF at `u` in `[0, 1)`.
    pub fn quantile(&self, u: f64) -> f64 {
        match self {
            SizeDist::Constant(b) => *b,
            SizeDist::Exponential { mean } => -mean * (1.0 - u).ln(),
            &SizeDist::BoundedPareto { shape, lo, hi } => {
                let r = (lo / hi).powf(shape);
                lo * (1.0 - u * (1.0 - r)).powf(-1.0 / shape)
            }
            &SizeDist::LogNormal { mu, sigma } => (mu + sigma * std_normal_quantile(u)).exp(),
            SizeDist::Empirical(c) => c.quantile(u),
            &SizeDist::Uniform { lo, hi } => lo + (hi - lo) * u,
        }
    }

    /// Draws one size in bytes.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        match self {
            SizeDist::Constant(b) => *b,
            &SizeDist::LogNormal { mu, sigma } => (mu + sigma * std_normal(rng)).exp(),
            _ => self.quantile(rng.gen::<f64>()),
        }
    }

    /// Exact mean in bytes.
    pub fn mean(&self) -> f64 {
        match self {
            SizeDist::Constant(b) => *b,
            SizeDist::Exponential { mean } => *mean,
            &SizeDist::BoundedPareto { shape: a, lo, hi } => {
                let norm = 1.0 - (lo / hi).powf(a);
                if (a - 1.0).abs() < 1e-12 {
                    lo * (hi / lo).ln() / norm
                } else {
                    // ∫ x f(x) dx with f(x) = a lo^a x^(-a-1) / norm.
                    a * lo.powf(a) / norm * (lo.powf(1.0 - a) - hi.powf(1.0 - a)) / (a - 1.0)
                }
            }
            &SizeDist::LogNormal { mu, sigma } => (mu + 0.5 * sigma * sigma).exp(),
            SizeDist::Empirical(c) => c.mean(),
            &SizeDist::Uniform { lo, hi } => 0.5 * (lo + hi),
        }
    }

    /// `P(S <= x)`.
    pub fn cdf(&self, x: f64) -> f64 {
        match self {
            SizeDist::Constant(b) => f64::from(u8::from(x >= *b)),
            SizeDist::Exponential { mean } => {
                if x <= 0.0 {
                    0.0
                } else {
                    1.0 - (-x / mean).exp()
                }
            }
            &SizeDist::BoundedPareto { shape, lo, hi } => {
                if x < lo {
                    0.0
                } else if x >= hi {
                    1.0
                } else {
                    (1.0 - (lo / x).powf(shape)) / (1.0 - (lo / hi).powf(shape))
                }
            }
            &SizeDist::LogNormal { mu, sigma } => {
                if x <= 0.0 {
                    0.0
                } else if sigma == 0.0 {
                    f64::from(u8::from(x.ln() >= mu))
                } else {
                    0.5 * erfc(-(x.ln() - mu) / (sigma * std::f64::consts::SQRT_2))
                }
            }
            SizeDist::Empirical(c) => c.cdf(x),
            &SizeDist::Uniform { lo, hi } => {
                if x < lo {
                    0.0
                } else if x >= hi {
                    1.0
                } else {
                    (x - lo) / (hi - lo)
                }
            }
        }
    }

    /// `P(S < x)`: equal to [`Self::cdf`] except at atoms.
    pub fn cdf_left(&self, x: f64) -> f64 {
        match self {
            SizeDist::Constant(b) => f64::from(u8::from(x > *b)),
            SizeDist::Empirical(c) => c.cdf_left(x),
            SizeDist::LogNormal { sigma, mu } if *sigma == 0.0 => f64::from(u8::from(x > 0.0 && x.ln() > *mu)),
            &SizeDist::Uniform { lo, hi } if lo == hi => f64::from(u8::from(x > lo)),
            d => d.cdf(x),
        }
    }
}

/// A standard normal draw (Box-Muller, one of the pair).
pub fn std_normal<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    let u1: f64 = 1.0 - rng.gen::<f64>(); // (0, 1]
    let u2: f64 = rng.gen::<f64>();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// Standard normal quantile by bisection on [`erfc`] (used only by
/// [`SizeDist::quantile`]; sampling uses Box-Muller).
fn std_normal_quantile(u: f64) -> f64 {
    if u <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if u >= 1.0 {
        return f64::INFINITY;
    }
    let (mut a, mut b) = (-40.0f64, 40.0f64);
    for _ in 0..200 {
        let m = 0.5 * (a + b);
        if 0.5 * erfc(-m / std::f64::consts::SQRT_2) < u {
            a = m;
        } else {
            b = m;
        }
    }
    0.5 * (a + b)
}

/// Complementary error function (Numerical Recipes' Chebyshev fit,
/// relative error < 1.2e-7 everywhere).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empirical_quantile_and_cdf_are_inverse() {
        let c = EmpiricalCdf::new(&[(10.0, 0.2), (20.0, 0.6), (20.0, 0.8), (100.0, 1.0)]).unwrap();
        assert_eq!(c.quantile(0.0), 10.0);
        assert_eq!(c.quantile(0.2), 10.0);
        assert_eq!(c.quantile(0.4), 15.0);
        assert_eq!(c.quantile(0.7), 20.0);
        assert_eq!(c.quantile(0.9), 60.0);
        assert_eq!(c.cdf(9.0), 0.0);
        assert_eq!(c.cdf(10.0), 0.2);
        assert_eq!(c.cdf_left(10.0), 0.0);
        assert_eq!(c.cdf(20.0), 0.8);
        assert_eq!(c.cdf_left(20.0), 0.6);
        assert_eq!(c.cdf(60.0), 0.9);
        // 0.2*10 + 0.4*15 + 0.2*20 + 0.2*60
        assert!((c.mean() - 24.0).abs() < 1e-12);
    }

    #[test]
    fn rejects_bad_points() {
        assert!(EmpiricalCdf::new(&[]).is_err());
        assert!(EmpiricalCdf::new(&[(1.0, 0.5)]).is_err());
        assert!(EmpiricalCdf::new(&[(2.0, 0.5), (1.0, 1.0)]).is_err());
        assert!(EmpiricalCdf::new(&[(1.0, 0.5), (2.0, 0.4), (3.0, 1.0)]).is_err());
    }

    #[test]
    fn closed_form_means() {
        let p = SizeDist::BoundedPareto { shape: 1.0, lo: 1.0, hi: 100.0 };
        // ∫_1^100 x * (1/x^2) / (1 - 1/100) dx = ln(100) / 0.99
        assert!((p.mean() - 100f64.ln() / 0.99).abs() < 1e-9);
        let ln = SizeDist::log_normal_with_mean(1e6, 1.5);
        assert!((ln.mean() - 1e6).abs() < 1e-3);
        assert!((SizeDist::LogNormal { mu: 0.0, sigma: 1.0 }.cdf(1.0) - 0.5).abs() < 1e-7);
        assert!((std_normal_quantile(0.975) - 1.959_964).abs() < 1e-5);
    }
}
