//! Total orders for the engine's priority queues (`BinaryHeap` is a
//! max-heap; each queue's element says how it compares).

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
