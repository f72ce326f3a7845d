//! The cluster-file-system model: files split into blocks, each replicated
//! or erasure-coded across fault domains (racks), storage-balance tracking,
//! a threshold-triggered rebalancer, replica reads and degraded reads.

use crate::cluster::Cluster;
use netheat_core::HostId;
use rand::Rng;

/// How a block is made durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Redundancy {
    /// `r` full copies in at least `f + 1` fault domains.
    Replicate {
        /// Copies.
        r: usize,
        /// Fault domains that may fail (`f + 1` domains are used).
        f: usize,
    },
    /// `k` data and `m` parity chunks, one per fault domain.
    Erasure {
        /// Data chunks.
        k: usize,
        /// Parity chunks.
        m: usize,
    },
}

impl Redundancy {
    /// Number of stored pieces (copies or chunks).
    pub fn pieces(&self) -> usize {
        match *self {
            Self::Replicate { r, .. } => r,
            Self::Erasure { k, m } => k + m,
        }
    }

    /// Fault domains the pieces must span.
    pub fn domains(&self) -> usize {
        match *self {
            Self::Replicate { f, .. } => f + 1,
            Self::Erasure { k, m } => k + m,
        }
    }

    /// Bytes stored per piece of a `bytes`-byte block.
    pub fn piece_bytes(&self, bytes: f64) -> f64 {
        match *self {
            Self::Replicate { .. } => bytes,
            Self::Erasure { k, .. } => bytes / k as f64,
        }
    }
}

/// A placement that could not be made, kept with the file and the reason.
#[derive(Debug, Clone, PartialEq)]
pub struct PlacementFailure {
    /// File id.
    pub file: u64,
    /// Block index in the file.
    pub block: u64,
    /// Why.
    pub reason: String,
}

/// One stored block.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredBlock {
    /// File id.
    pub file: u64,
    /// Block size in bytes.
    pub bytes: f64,
    /// Hosts of the pieces (replicas, or chunks in stripe order).
    pub hosts: Vec<HostId>,
    /// Redundancy used.
    pub redundancy: Redundancy,
}

/// A block move planned by the rebalancer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Move {
    /// Block index in [`FileSystem::blocks`].
    pub block: usize,
    /// Host giving a piece away.
    pub from: HostId,
    /// Host receiving it.
    pub to: HostId,
    /// Bytes moved.
    pub bytes: f64,
}

/// Storage state: blocks, bytes per host, failures.
#[derive(Debug, Clone, PartialEq)]
pub struct FileSystem {
    /// Stored blocks.
    pub blocks: Vec<StoredBlock>,
    /// Bytes per host.
    pub host_used: Vec<f64>,
    /// Failed placements.
    pub failures: Vec<PlacementFailure>,
}

impl FileSystem {
    /// An empty file system over `hosts` hosts.
    pub fn new(hosts: usize) -> Self {
        Self { blocks: Vec::new(), host_used: vec![0.0; hosts], failures: Vec::new() }
    }

    /// Records a placed block; returns its index.
    pub fn store(&mut self, file: u64, bytes: f64, hosts: Vec<HostId>, redundancy: Redundancy) -> usize {
        let pb = redundancy.piece_bytes(bytes);
        for &h in &hosts {
            self.host_used[h as usize] += pb;
        }
        self.blocks.push(StoredBlock { file, bytes, hosts, redundancy });
        self.blocks.len() - 1
    }

    /// Records a failed placement.
    pub fn fail(&mut self, file: u64, block: u64, reason: impl Into<String>) {
        self.failures.push(PlacementFailure { file, block, reason: reason.into() });
    }

    /// Bytes per rack.
    pub fn rack_used(&self, c: &Cluster) -> Vec<f64> {
        let mut v = vec![0.0; c.racks.len()];
        for (h, &u) in self.host_used.iter().enumerate() {
            v[c.hosts[h].rack as usize] += u;
        }
        v
    }

    /// Largest deviation of a storage host's used fraction from the mean
    /// fraction (the quantity the rebalancer keeps below its threshold).
    pub fn imbalance(&self, c: &Cluster) -> f64 {
        let fr: Vec<f64> =
            self.host_used.iter().zip(&c.hosts).filter(|(_, h)| h.stores).map(|(u, h)| u / h.capacity_bytes).collect();
        let mean = fr.iter().sum::<f64>() / fr.len().max(1) as f64;
        fr.iter().map(|f| (f - mean).abs()).fold(0.0, f64::max)
    }

    /// Like [`FileSystem::imbalance`] over the storage hosts marked in
    /// `among`.
    pub fn imbalance_over(&self, c: &Cluster, among: &[bool]) -> f64 {
        let fr: Vec<f64> = (0..self.host_used.len())
            .filter(|&h| among[h] && c.hosts[h].stores)
            .map(|h| self.host_used[h] / c.hosts[h].capacity_bytes)
            .collect();
        let mean = fr.iter().sum::<f64>() / fr.len().max(1) as f64;
        fr.iter().map(|f| (f - mean).abs()).fold(0.0, f64::max)
    }

    /// Standard deviation of bytes per host.
    pub fn host_std(&self) -> f64 {
        std_dev(&self.host_used)
    }

    /// Moves that bring every host within `threshold` (fraction of capacity)
    /// of the mean used fraction, moving pieces from the fullest to the
    /// emptiest host that keeps the block's fault-domain spread; applied to
    /// the byte counts and block host lists as planned.
    pub fn rebalance(&mut self, c: &Cluster, threshold: f64) -> Vec<Move> {
        self.rebalance_among(c, threshold, &vec![true; self.host_used.len()])
    }

    /// [`FileSystem::rebalance`] over the storage hosts marked in `among`
    /// (compute-only hosts hold nothing and take nothing).
    ///
    /// Each move takes a piece from the fullest host that has one it can
    /// give to the emptiest host that may take it (a host never holds two
    /// pieces of a block, and a rack gains no second piece of a block unless
    /// the piece stays in its rack), so one unmovable pair does not stop the
    /// rebalancer while other pairs can still even things out.
    pub fn rebalance_among(&mut self, c: &Cluster, threshold: f64, among: &[bool]) -> Vec<Move> {
        let mut moves = Vec::new();
        let hosts: Vec<usize> =
            (0..self.host_used.len()).filter(|&h| among.get(h) == Some(&true) && c.hosts[h].stores).collect();
        let n = hosts.len();
        if n == 0 {
            return moves;
        }
        // Blocks with a piece on each host, kept up to date as pieces move.
        let mut on: Vec<Vec<usize>> = vec![Vec::new(); self.host_used.len()];
        for (bi, b) in self.blocks.iter().enumerate() {
            for &h in &b.hosts {
                on[h as usize].push(bi);
            }
        }
        let frac = |used: &[f64], h: usize| used[h] / c.hosts[h].capacity_bytes;
        let mut order = hosts.clone();
        // Bounded so a pathological state cannot loop forever.
        for _ in 0..self.blocks.len().saturating_mul(4).max(16) {
            let used = &self.host_used;
            let mean = hosts.iter().map(|&h| frac(used, h)).sum::<f64>() / n as f64;
            order.sort_by(|&a, &b| frac(used, a).total_cmp(&frac(used, b)).then(a.cmp(&b)));
            let (lo0, hi0) = (order[0], order[n - 1]);
            if frac(used, hi0) - mean <= threshold && mean - frac(used, lo0) <= threshold {
                break;
            }
            let mut found = None;
            'pairs: for &hi in order.iter().rev().take_while(|&&h| frac(used, h) > mean) {
                for &lo in order.iter().take_while(|&&h| frac(used, h) < mean) {
                    // A move between two hosts already within the threshold
                    // does not help.
                    if frac(used, hi) - mean <= threshold && mean - frac(used, lo) <= threshold {
                        continue;
                    }
                    let same_rack = c.rack_of(hi as HostId) == c.rack_of(lo as HostId);
                    let ok = on[hi].iter().copied().find(|&bi| {
                        let b = &self.blocks[bi];
                        !b.hosts.contains(&(lo as HostId))
                            && (same_rack || !b.hosts.iter().any(|&x| c.rack_of(x) == c.rack_of(lo as HostId)))
                    });
                    if let Some(bi) = ok {
                        found = Some((bi, hi, lo));
                        break 'pairs;
                    }
                }
            }
            let Some((bi, hi, lo)) = found else { break };
            let b = &mut self.blocks[bi];
            let pb = b.redundancy.piece_bytes(b.bytes);
            if let Some(slot) = b.hosts.iter_mut().find(|x| **x == hi as HostId) {
                *slot = lo as HostId;
            }
            on[hi].retain(|&x| x != bi);
            on[lo].push(bi);
            self.host_used[hi] -= pb;
            self.host_used[lo] += pb;
            moves.push(Move { block: bi, from: hi as HostId, to: lo as HostId, bytes: pb });
        }
        moves
    }

    /// Replica to read a replicated block from for `client`: the client
    /// itself, else one in its rack, else a uniformly random live one.
    /// `None` when no replica is live.
    pub fn read_source<R: Rng>(
        &self,
        c: &Cluster,
        block: usize,
        client: HostId,
        live: &[bool],
        rng: &mut R,
    ) -> Option<HostId> {
        let hs: Vec<HostId> = self.blocks[block].hosts.iter().copied().filter(|&h| live[h as usize]).collect();
        if hs.contains(&client) {
            return Some(client);
        }
        if let Some(&h) = hs.iter().find(|&&h| c.rack_of(h) == c.rack_of(client)) {
            return Some(h);
        }
        (!hs.is_empty()).then(|| hs[rng.gen_range(0..hs.len())])
    }

    /// Sources of a degraded read of an erasure-coded block whose chunk on
    /// `lost` is unavailable: the first `k` live other chunks (their bytes
    /// are fetched and the lost chunk reconstructed). `None` if fewer than
    /// `k` chunks are live.
    pub fn degraded_sources(&self, block: usize, lost: HostId, live: &[bool]) -> Option<Vec<HostId>> {
        let b = &self.blocks[block];
        let Redundancy::Erasure { k, .. } = b.redundancy else { return None };
        let v: Vec<HostId> = b.hosts.iter().copied().filter(|&h| h != lost && live[h as usize]).take(k).collect();
        (v.len() == k).then_some(v)
    }
}

/// Population standard deviation.
pub fn std_dev(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let m = v.iter().sum::<f64>() / v.len() as f64;
    (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / v.len() as f64).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::Cluster;
    use rand::SeedableRng;

    fn small() -> Cluster {
        Cluster::two_tier(3, 2, 1e9, 1.0, Some(4e8), 1000.0, &[], &[])
    }

    #[test]
    fn redundancy_counts() {
        assert_eq!(Redundancy::Replicate { r: 3, f: 1 }.domains(), 2);
        assert_eq!(Redundancy::Replicate { r: 3, f: 2 }.domains(), 3);
        assert_eq!(Redundancy::Erasure { k: 6, m: 3 }.domains(), 9);
        assert_eq!(Redundancy::Erasure { k: 4, m: 2 }.piece_bytes(100.0), 25.0);
    }

    #[test]
    fn rebalancer_among_storage_hosts_only() {
        // Hosts 3..6 are compute-only: the mean is over hosts 0..3, 400 /
        // 3000 = 0.133; host 0 at 0.4 is 0.267 over it. Moving 100 to host 1
        // (0.3, 0.1, 0) then to host 2 (0.2, 0.1, 0.1) brings every host
        // within 0.1 of the mean: two moves, compute hosts untouched.
        let c = small();
        let mut fs = FileSystem::new(6);
        let rep = Redundancy::Replicate { r: 1, f: 0 };
        for _ in 0..4 {
            fs.store(0, 100.0, vec![0], rep);
        }
        let among = [true, true, true, false, false, false];
        let moves = fs.rebalance_among(&c, 0.1, &among);
        assert_eq!(moves.iter().map(|m| (m.from, m.to)).collect::<Vec<_>>(), vec![(0, 1), (0, 2)]);
        assert_eq!(fs.host_used, vec![200.0, 100.0, 100.0, 0.0, 0.0, 0.0]);
        assert!(fs.imbalance_over(&c, &among) <= 0.1);
    }

    #[test]
    fn usage_and_rebalancer() {
        let c = small();
        let mut fs = FileSystem::new(6);
        let rep = Redundancy::Replicate { r: 1, f: 0 };
        for _ in 0..4 {
            fs.store(0, 100.0, vec![0], rep);
        }
        // Host 0 holds 400 of 1000 bytes, mean fraction 400/6000 = 0.0667:
        // imbalance 0.4 - 0.0667 = 0.3333.
        assert!((fs.imbalance(&c) - (0.4 - 400.0 / 6000.0)).abs() < 1e-12);
        assert_eq!(fs.rack_used(&c), vec![400.0, 0.0, 0.0]);
        let moves = fs.rebalance(&c, 0.1);
        // Fractions must end within 0.1 of the mean (0.0667): host 0 may keep
        // at most 0.1667 -> 1 block (100 bytes); 3 moves.
        assert_eq!(moves.len(), 3);
        assert!(fs.imbalance(&c) <= 0.1 + 1e-12);
        assert_eq!(fs.host_used.iter().sum::<f64>(), 400.0);
    }

    #[test]
    fn reads_prefer_local_then_rack_and_degraded_needs_k() {
        let c = small();
        let mut fs = FileSystem::new(6);
        let b = fs.store(0, 300.0, vec![1, 2, 4], Redundancy::Replicate { r: 3, f: 2 });
        let live = vec![true; 6];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        assert_eq!(fs.read_source(&c, b, 2, &live, &mut rng), Some(2));
        assert_eq!(fs.read_source(&c, b, 5, &live, &mut rng), Some(4)); // same rack 2
        let e = fs.store(1, 300.0, vec![0, 2, 4], Redundancy::Erasure { k: 2, m: 1 });
        assert_eq!(fs.host_used[0], 150.0);
        assert_eq!(fs.degraded_sources(e, 0, &live), Some(vec![2, 4]));
        let mut dead = live.clone();
        dead[2] = false;
        assert_eq!(fs.degraded_sources(e, 0, &dead), None);
    }
}
