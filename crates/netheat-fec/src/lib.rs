//! LT fountain code (Luby transform) with the robust soliton distribution.
//!
//! A message of `k` equal-size source blocks is turned into an endless stream
//! of encoded symbols; each symbol is the XOR of `d` distinct source blocks,
//! `d` drawn from the robust soliton distribution. Which blocks a symbol
//! covers is a pure function of `(seed, symbol id)`, so a receiver needs only
//! the symbol id (as in a packet header) to rebuild the neighbour list. The
//! decoder peels: every symbol of degree one reveals a block, which is XORed
//! out of the symbols covering it, until all `k` blocks are known.
#![warn(missing_docs)]

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Errors of the LT coder.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum FecError {
    /// A parameter is outside its valid range.
    #[error("invalid LT parameter: {0}")]
    InvalidParameter(String),
    /// A symbol payload does not have the block size of the code.
    #[error("symbol payload has {got} bytes, the code uses {want}-byte blocks")]
    BadSymbolSize {
        /// Payload length received.
        got: usize,
        /// Block size of the code.
        want: usize,
    },
}

/// Robust soliton degree distribution over `1..=k` (Luby 2002).
#[derive(Debug, Clone)]
pub struct RobustSoliton {
    /// Cumulative probabilities, `cdf[d-1] = P(degree <= d)`.
    cdf: Vec<f64>,
}

impl RobustSoliton {
    /// Distribution for `k` blocks with the usual constants `c` and `delta`
    /// (failure probability bound); `R = c ln(k/delta) sqrt(k)`.
    pub fn new(k: usize, c: f64, delta: f64) -> Result<Self, FecError> {
        if k == 0 {
            return Err(FecError::InvalidParameter("k must be at least 1".into()));
        }
        if !(c > 0.0 && delta > 0.0 && delta < 1.0) {
            return Err(FecError::InvalidParameter(format!("need c > 0 and 0 < delta < 1, got c={c} delta={delta}")));
        }
        let kf = k as f64;
        let r = c * (kf / delta).ln() * kf.sqrt();
        // Spike position k/R, clamped into 1..=k.
        let spike = ((kf / r).floor() as usize).clamp(1, k);
        let mut w = vec![0.0; k];
        for (i, wi) in w.iter_mut().enumerate() {
            let d = (i + 1) as f64;
            // Ideal soliton rho(d).
            let rho = if i == 0 { 1.0 / kf } else { 1.0 / (d * (d - 1.0)) };
            // Extra mass tau(d) of the robust version.
            let tau = if i + 1 < spike {
                r / (d * kf)
            } else if i + 1 == spike {
                r * (r / delta).ln() / kf
            } else {
                0.0
            };
            *wi = rho + tau.max(0.0);
        }
        let z: f64 = w.iter().sum();
        let mut acc = 0.0;
        let cdf = w
            .iter()
            .map(|x| {
                acc += x / z;
                acc
            })
            .collect();
        Ok(Self { cdf })
    }

    /// Draws a degree in `1..=k`.
    pub fn sample<R: Rng>(&self, rng: &mut R) -> usize {
        let u: f64 = rng.gen();
        let i = self.cdf.partition_point(|&c| c < u);
        (i + 1).min(self.cdf.len())
    }

    /// Mean degree (expected XORs per symbol).
    pub fn mean(&self) -> f64 {
        let mut prev = 0.0;
        let mut m = 0.0;
        for (i, c) in self.cdf.iter().enumerate() {
            m += (i + 1) as f64 * (c - prev);
            prev = *c;
        }
        m
    }
}

/// Code parameters shared by encoder and decoder.
#[derive(Debug, Clone)]
pub struct LtParams {
    /// Number of source blocks.
    pub k: usize,
    /// Seed of the symbol-to-neighbours mapping.
    pub seed: u64,
    dist: RobustSoliton,
}

impl LtParams {
    /// Parameters with the robust soliton constants `c = 0.03`, `delta = 0.5`
    /// (a common choice for small `k`; low overhead at moderate failure rate).
    pub fn new(k: usize, seed: u64) -> Result<Self, FecError> {
        Self::with_constants(k, seed, 0.03, 0.5)
    }

    /// Parameters with explicit robust soliton constants.
    pub fn with_constants(k: usize, seed: u64, c: f64, delta: f64) -> Result<Self, FecError> {
        Ok(Self { k, seed, dist: RobustSoliton::new(k, c, delta)? })
    }

    /// The degree distribution.
    pub fn distribution(&self) -> &RobustSoliton {
        &self.dist
    }

    /// Source blocks covered by symbol `id`, written to `out` (sorted, distinct).
    pub fn neighbours(&self, id: u64, out: &mut Vec<u32>) {
        out.clear();
        // Mix seed and id so that symbol streams of different messages differ.
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed ^ id.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let d = self.dist.sample(&mut rng);
        if d * 2 > self.k {
            // Dense: choose by partial Fisher-Yates.
            let mut all: Vec<u32> = (0..self.k as u32).collect();
            for i in 0..d {
                let j = rng.gen_range(i..self.k);
                all.swap(i, j);
            }
            out.extend_from_slice(&all[..d]);
        } else {
            while out.len() < d {
                let b = rng.gen_range(0..self.k as u32);
                if !out.contains(&b) {
                    out.push(b);
                }
            }
        }
        out.sort_unstable();
    }
}

/// Encoder over a message split into `k` blocks of `block` bytes (the last
/// block is zero-padded).
#[derive(Debug, Clone)]
pub struct LtEncoder {
    params: LtParams,
    block: usize,
    data: Vec<u8>,
    scratch: Vec<u32>,
}

impl LtEncoder {
    /// Encoder for `message` with `block`-byte blocks.
    pub fn new(message: &[u8], block: usize, seed: u64) -> Result<Self, FecError> {
        if block == 0 {
            return Err(FecError::InvalidParameter("block size must be positive".into()));
        }
        let k = message.len().div_ceil(block).max(1);
        let mut data = message.to_vec();
        data.resize(k * block, 0);
        Ok(Self { params: LtParams::new(k, seed)?, block, data, scratch: Vec::new() })
    }

    /// Code parameters (to build the matching decoder).
    pub fn params(&self) -> &LtParams {
        &self.params
    }

    /// Payload of symbol `id`.
    pub fn symbol(&mut self, id: u64) -> Vec<u8> {
        self.params.neighbours(id, &mut self.scratch);
        let mut out = vec![0u8; self.block];
        for &b in &self.scratch {
            let src = &self.data[b as usize * self.block..(b as usize + 1) * self.block];
            for (o, s) in out.iter_mut().zip(src) {
                *o ^= s;
            }
        }
        out
    }
}

/// Peeling decoder. With `block == 0` it tracks only the graph (no payloads),
/// which is what the packet simulator uses to decide when a message decodes.
#[derive(Debug, Clone)]
pub struct LtDecoder {
    params: LtParams,
    block: usize,
    /// Known source blocks.
    known: Vec<bool>,
    blocks: Vec<Vec<u8>>,
    n_known: usize,
    /// Pending symbols: remaining neighbours and payload.
    pending: Vec<(Vec<u32>, Vec<u8>)>,
    /// For each block, pending symbols that cover it.
    covers: Vec<Vec<u32>>,
    received: usize,
    scratch: Vec<u32>,
}

impl LtDecoder {
    /// Decoder for a code with `params` and `block`-byte blocks.
    pub fn new(params: LtParams, block: usize) -> Self {
        let k = params.k;
        Self {
            params,
            block,
            known: vec![false; k],
            blocks: vec![Vec::new(); k],
            n_known: 0,
            pending: Vec::new(),
            covers: vec![Vec::new(); k],
            received: 0,
            scratch: Vec::new(),
        }
    }

    /// Symbols received so far.
    pub fn received(&self) -> usize {
        self.received
    }

    /// Whether every source block is known.
    pub fn is_done(&self) -> bool {
        self.n_known == self.params.k
    }

    /// Source blocks recovered so far.
    pub fn recovered(&self) -> usize {
        self.n_known
    }

    /// Adds symbol `id`; returns whether the message is now decoded.
    pub fn add_symbol(&mut self, id: u64, payload: &[u8]) -> Result<bool, FecError> {
        if payload.len() != self.block {
            return Err(FecError::BadSymbolSize { got: payload.len(), want: self.block });
        }
        self.received += 1;
        if self.is_done() {
            return Ok(true);
        }
        let mut nb = std::mem::take(&mut self.scratch);
        self.params.neighbours(id, &mut nb);
        let mut data = payload.to_vec();
        // Reduce by already known blocks.
        nb.retain(|&b| {
            if self.known[b as usize] {
                xor_into(&mut data, &self.blocks[b as usize]);
                false
            } else {
                true
            }
        });
        if nb.is_empty() {
            self.scratch = nb;
            return Ok(false);
        }
        let sid = self.pending.len() as u32;
        for &b in &nb {
            self.covers[b as usize].push(sid);
        }
        let deg1 = nb.len() == 1;
        self.pending.push((nb.clone(), data));
        self.scratch = nb;
        if deg1 {
            self.peel(sid);
        }
        Ok(self.is_done())
    }

    /// Releases degree-one symbols transitively starting from `start`.
    fn peel(&mut self, start: u32) {
        let mut stack = vec![start];
        while let Some(s) = stack.pop() {
            let (nb, _) = &self.pending[s as usize];
            if nb.len() != 1 {
                continue;
            }
            let b = nb[0] as usize;
            let payload = std::mem::take(&mut self.pending[s as usize].1);
            self.pending[s as usize].0.clear();
            if self.known[b] {
                continue;
            }
            self.known[b] = true;
            self.n_known += 1;
            let users = std::mem::take(&mut self.covers[b]);
            for u in users {
                if u == s {
                    continue;
                }
                let entry = &mut self.pending[u as usize];
                if let Some(pos) = entry.0.iter().position(|&x| x as usize == b) {
                    entry.0.swap_remove(pos);
                    xor_into(&mut entry.1, &payload);
                    if entry.0.len() == 1 {
                        stack.push(u);
                    }
                }
            }
            self.blocks[b] = payload;
        }
    }

    /// The decoded message (`k * block` bytes, padding included), once done.
    pub fn message(&self) -> Option<Vec<u8>> {
        if !self.is_done() {
            return None;
        }
        Some(self.blocks.concat())
    }
}

fn xor_into(dst: &mut [u8], src: &[u8]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d ^= s;
    }
}

/// Number of symbols (ids `first`, `first+1`, ...) needed to decode a `k`-block
/// code with `seed`, tracking only the graph; `None` if `limit` is reached.
pub fn symbols_to_decode(k: usize, seed: u64, first: u64, limit: usize) -> Result<Option<usize>, FecError> {
    let mut dec = LtDecoder::new(LtParams::new(k, seed)?, 0);
    for i in 0..limit as u64 {
        if dec.add_symbol(first + i, &[])? {
            return Ok(Some(dec.received()));
        }
    }
    Ok(None)
}
