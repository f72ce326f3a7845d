//! An implicit `D`-ary max-heap, a drop-in for `BinaryHeap` where the heap
//! is large: the completion predictions of millions of running flows.
//!
//! A binary heap of n entries costs about log2(n) cache misses per pop once
//! it outgrows the cache; with 8 children per node (two cache lines of
//! 16-byte entries) a pop touches log8(n) levels, a third as many. The
//! order is the same total order as `BinaryHeap` (the greatest first), so
//! which element pops next, and hence every result, does not depend on the
//! heap's shape.

/// Orders a heap entry by a comparison of `self` (`$a`) with `other`
/// (`$b`), with `PartialEq`, `Eq` and `PartialOrd` consistent with it.
/// Entries compare floats with `total_cmp` and break ties by ids, so heap
/// order, and every result, is deterministic.
macro_rules! heap_order {
    ($t:ty, |$a:ident, $b:ident| $cmp:expr) => {
        impl PartialEq for $t {
            fn eq(&self, o: &Self) -> bool {
                self.cmp(o) == std::cmp::Ordering::Equal
            }
        }
        impl Eq for $t {}
        impl PartialOrd for $t {
            fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
                Some(self.cmp(o))
            }
        }
        impl Ord for $t {
            fn cmp(&self, $b: &Self) -> std::cmp::Ordering {
                let $a = self;
                $cmp
            }
        }
    };
}
pub(crate) use heap_order;

/// Children per node.
const D: usize = 8;

/// A max-heap (greatest element first) with `D` children per node.
#[derive(Debug, Clone)]
pub(crate) struct DHeap<T> {
    v: Vec<T>,
}

impl<T> Default for DHeap<T> {
    fn default() -> Self {
        Self { v: Vec::new() }
    }
}

impl<T: Ord + Copy> DHeap<T> {
    /// Number of elements.
    pub(crate) fn len(&self) -> usize {
        self.v.len()
    }

    /// The greatest element.
    pub(crate) fn peek(&self) -> Option<&T> {
        self.v.first()
    }

    /// Adds an element.
    pub(crate) fn push(&mut self, x: T) {
        self.v.push(x);
        self.sift_up(self.v.len() - 1);
    }

    /// Removes and returns the greatest element.
    pub(crate) fn pop(&mut self) -> Option<T> {
        let last = self.v.pop()?;
        if self.v.is_empty() {
            return Some(last);
        }
        let top = std::mem::replace(&mut self.v[0], last);
        self.sift_down(0);
        Some(top)
    }

    /// Replaces the greatest element by `x` (one sift instead of a pop and
    /// a push). The heap must not be empty.
    pub(crate) fn replace_top(&mut self, x: T) {
        self.v[0] = x;
        self.sift_down(0);
    }

    /// Keeps only the elements for which `keep` holds.
    pub(crate) fn retain(&mut self, keep: impl FnMut(&T) -> bool) {
        self.v.retain(keep);
        // Floyd's heap construction from the last inner node down.
        let n = self.v.len();
        if n > 1 {
            for i in (0..=(n - 2) / D).rev() {
                self.sift_down(i);
            }
        }
    }

    fn sift_up(&mut self, mut i: usize) {
        let x = self.v[i];
        while i > 0 {
            let p = (i - 1) / D;
            if self.v[p] >= x {
                break;
            }
            self.v[i] = self.v[p];
            i = p;
        }
        self.v[i] = x;
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.v.len();
        let x = self.v[i];
        loop {
            let first = i * D + 1;
            if first >= n {
                break;
            }
            let end = (first + D).min(n);
            let mut best = first;
            for c in first + 1..end {
                if self.v[c] > self.v[best] {
                    best = c;
                }
            }
            if self.v[best] <= x {
                break;
            }
            self.v[i] = self.v[best];
            i = best;
        }
        self.v[i] = x;
    }
}

#[cfg(test)]
mod tests {
    use super::DHeap;
    use std::collections::BinaryHeap;

    /// Same pops as `BinaryHeap` under random pushes, pops and retains.
    #[test]
    fn pops_in_the_same_order_as_binary_heap() {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut d = DHeap::default();
        let mut b = BinaryHeap::new();
        for step in 0..200_000 {
            let r = next();
            match r % 7 {
                0..=3 => {
                    let v = (next() % 1000, step);
                    d.push(v);
                    b.push(v);
                }
                4 | 5 => assert_eq!(d.pop(), b.pop()),
                _ if step % 1000 == 0 => {
                    let m = next() % 5;
                    d.retain(|v| v.0 % 5 != m);
                    b.retain(|v| v.0 % 5 != m);
                }
                _ => {}
            }
            assert_eq!(d.len(), b.len());
            assert_eq!(d.peek(), b.peek());
        }
        while let Some(v) = b.pop() {
            assert_eq!(d.pop(), Some(v));
        }
        assert_eq!(d.pop(), None);
    }
}
