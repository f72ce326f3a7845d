//! A monotone radix heap: the priority queue of flow completion predictions.
//!
//! Predictions are never earlier than the simulation clock, and the clock
//! only moves forward, so the queue is *monotone*: almost every key pushed
//! is at least the last minimum taken. A radix heap exploits that. Keys
//! live in buckets by the highest bit in which they differ from that last
//! minimum; a push is one append, and a bucket is only sorted out (each of
//! its keys moved to a lower bucket) when it holds the next minimum. Where
//! a binary or 8-ary heap of millions of entries pays a cache miss per level
//! on every push and pop, this streams through contiguous vectors.
//!
//! Pops come in increasing key order, exactly as from a
//! `BinaryHeap<Reverse<_>>` holding the same keys: the order, and hence
//! every result, does not depend on the structure. A key below the last
//! minimum (a flow due now, with a smaller id than one already popped at
//! the same time) is accepted too: it waits in the lowest bucket, whose
//! minimum is always the global one.

/// An element of a [`RadixHeap`]: its order is that of its key.
pub(crate) trait RadixKey: Copy {
    /// The order key (smaller pops first).
    fn key(&self) -> u128;
}

const BUCKETS: usize = 129;
/// Bucket 0 is sorted rather than scanned from this many keys on.
const SORT_AT: usize = 32;

/// A min-queue of [`RadixKey`] elements (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct RadixHeap<T> {
    /// Bucket `b > 0` holds keys above `last` whose highest bit differing
    /// from `last` is `b - 1`; bucket 0 holds keys at or below `last`.
    buckets: Vec<Vec<T>>,
    last: u128,
    len: usize,
    /// Position of the minimum of bucket 0, if known.
    top: Option<usize>,
    /// Bucket 0 is sorted by decreasing key (its minimum last). It holds
    /// one key or a few as a rule; when keys below the last minimum pile
    /// up there, it is sorted once instead of scanned at every pop.
    sorted0: bool,
    /// Bit `b - 1` set: bucket `b > 0` may hold keys (set by pushes,
    /// cleared when the bucket is emptied), so the next bucket to sort out
    /// is found in one instruction rather than by scanning 128 vectors.
    nonempty: u128,
}

impl<T> Default for RadixHeap<T> {
    fn default() -> Self {
        Self {
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
            last: 0,
            len: 0,
            top: None,
            sorted0: false,
            nonempty: 0,
        }
    }
}

fn bucket(key: u128, last: u128) -> usize {
    if key <= last {
        0
    } else {
        (128 - (key ^ last).leading_zeros()) as usize
    }
}

impl<T: RadixKey> RadixHeap<T> {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn push(&mut self, x: T) {
        let k = x.key();
        let b = bucket(k, self.last);
        self.len += 1;
        if b == 0 {
            self.top = None;
            if self.sorted0 {
                let b0 = &mut self.buckets[0];
                let at = b0.partition_point(|y| y.key() > k);
                b0.insert(at, x);
                return;
            }
        } else {
            self.nonempty |= 1 << (b - 1);
        }
        self.buckets[b].push(x);
    }

    /// Position of the minimum in bucket 0, refilling it from the first
    /// non-empty bucket when it is empty.
    fn find_top(&mut self) -> Option<usize> {
        if let Some(p) = self.top {
            return Some(p);
        }
        if self.buckets[0].is_empty() {
            if self.nonempty == 0 {
                return None;
            }
            let i = self.nonempty.trailing_zeros() as usize + 1;
            self.nonempty &= !(1 << (i - 1));
            self.sorted0 = false;
            let mut items = std::mem::take(&mut self.buckets[i]);
            self.last = items.iter().map(|x| x.key()).min().expect("a bucket marked non-empty holds keys");
            for &x in &items {
                // Every key shares `last`'s bits above `i - 1`: a lower bucket.
                let b = bucket(x.key(), self.last);
                if b > 0 {
                    self.nonempty |= 1 << (b - 1);
                }
                self.buckets[b].push(x);
            }
            // Bucket `i` stays empty; keep its allocation for when it fills.
            items.clear();
            self.buckets[i] = items;
        }
        let b0 = &mut self.buckets[0];
        if !self.sorted0 && b0.len() >= SORT_AT {
            b0.sort_unstable_by_key(|y| std::cmp::Reverse(y.key()));
            self.sorted0 = true;
        }
        let best = if self.sorted0 {
            b0.len() - 1
        } else {
            let mut best = 0;
            for k in 1..b0.len() {
                if b0[k].key() < b0[best].key() {
                    best = k;
                }
            }
            best
        };
        self.top = Some(best);
        Some(best)
    }

    /// The smallest element.
    pub(crate) fn peek(&mut self) -> Option<&T> {
        let p = self.find_top()?;
        Some(&self.buckets[0][p])
    }

    /// Removes and returns the smallest element.
    pub(crate) fn pop(&mut self) -> Option<T> {
        let p = self.find_top()?;
        self.top = None;
        self.len -= 1;
        // Sorted, the minimum is last: removing it keeps the order.
        Some(self.buckets[0].swap_remove(p))
    }

    /// Keeps only the elements for which `keep` is true.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        let mut n = 0;
        self.nonempty = 0;
        for (i, b) in self.buckets.iter_mut().enumerate() {
            b.retain(&mut keep);
            n += b.len();
            if i > 0 && !b.is_empty() {
                self.nonempty |= 1 << (i - 1);
            }
        }
        self.len = n;
        self.top = None;
    }
}

#[cfg(test)]
mod tests {
    use super::{RadixHeap, RadixKey};
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    impl RadixKey for u128 {
        fn key(&self) -> u128 {
            *self
        }
    }

    /// Same pops as `BinaryHeap` under random pushes (mostly at or above
    /// the last pop, some below it), pops, retains and keys far apart.
    #[test]
    fn pops_in_the_same_order_as_binary_heap() {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut r = RadixHeap::default();
        let mut b = BinaryHeap::new();
        let mut last: u128 = 0;
        for step in 0..400_000u64 {
            match next() % 8 {
                0..=3 => {
                    // Distinct keys: a time part and a unique low part.
                    let t = u128::from(next() % 4);
                    let base = match next() % 16 {
                        0 => last >> 64 << 64, // the same time as the last pop, possibly below it
                        1 => u128::from(next()) << 64,
                        _ => last,
                    };
                    let v = ((base >> 64) + t) << 64 | u128::from(step);
                    r.push(v);
                    b.push(Reverse(v));
                }
                4..=6 => {
                    let got = r.pop();
                    assert_eq!(got, b.pop().map(|v| v.0));
                    if let Some(v) = got {
                        last = v;
                    }
                }
                _ if step % 1000 == 0 => {
                    let m = u128::from(next() % 5);
                    r.retain(|v| v % 5 != m);
                    b.retain(|v| v.0 % 5 != m);
                }
                _ => {}
            }
            assert_eq!(r.len(), b.len());
            assert_eq!(r.peek().copied(), b.peek().map(|v| v.0));
        }
        while let Some(v) = b.pop() {
            assert_eq!(r.pop(), Some(v.0));
        }
        assert_eq!(r.pop(), None);
        assert_eq!(r.len(), 0);
    }

    /// Thousands of keys below the last minimum (bucket 0 is then sorted),
    /// mixed with pushes above it and a retain: still the global order.
    #[test]
    fn many_keys_below_the_last_minimum() {
        let mut r = RadixHeap::default();
        r.push(10 << 64);
        r.push((20 << 64) | 7);
        assert_eq!(r.pop(), Some(10 << 64));
        // Scrambled keys below 10 << 64, and some above.
        for i in 0..5000u128 {
            r.push((i * 7919) % 5000 + 1);
            if i % 100 == 0 {
                r.push((30 << 64) | i);
            }
        }
        r.retain(|v| v % 3 != 0);
        // Pop a hundred (bucket 0 gets sorted), push more below the last
        // minimum into the sorted bucket, then pop the rest.
        let mut got: Vec<u128> = (0..100).map(|_| r.pop().expect("not empty")).collect();
        for i in 0..1000u128 {
            r.push(5001 + (i * 389) % 1000);
        }
        got.extend(std::iter::from_fn(|| r.pop()));
        // Before the retain: 1..=5000, (30 << 64) | i for i = 0, 100, ...,
        // and (20 << 64) | 7; after it, 5001..=6000.
        let mut want: Vec<u128> = (1..=5000u128)
            .chain((0..5000).step_by(100).map(|i| (30 << 64) | i))
            .chain([(20 << 64) | 7])
            .filter(|v| v % 3 != 0)
            .chain(5001..=6000)
            .collect();
        want.sort_unstable();
        assert_eq!(got, want);
    }
}
