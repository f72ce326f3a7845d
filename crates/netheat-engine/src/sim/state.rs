//! The state the engine keeps per flow ([`FlowState`], and the [`Hot`]
//! copy of what the repair's link scans read), and the maps from flow ids
//! to the flows' slots ([`IdIndex`], [`SlotBlocks`]).

use crate::flow::StrandReason;
use crate::hops::Hops;
use netheat_core::HostId;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Status {
    Pending,
    Active,
    Done,
    /// A completed flow forgotten by `recycle_finished`; its slot is free.
    Free,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum RouteKind {
    Explicit,
    /// ECMP among the pair's paths (their number, counted when the flow was
    /// added: a routing's path sets do not change during a run).
    Ecmp(u32),
    Index(u32),
}

#[derive(Debug)]
// Laid out by hand in 256 bytes: the first 64 hold what completions,
// predictions and repairs read, the next 96 the path and list positions,
// the rest what only records and routing need. (Aligning it to cache lines
// as well was slower: a growing vector of over-aligned elements is copied
// on every reallocation instead of being remapped.)
#[repr(C)]
pub(super) struct FlowState {
    /// Version of the flow's valid entry in the prediction heap.
    pub(super) ver: u32,
    /// Bottleneck of the current rate: a link id,
    /// [`BN_CAP`](crate::maxmin::BN_CAP) or [`BN_NONE`](crate::maxmin::BN_NONE).
    pub(super) bn: u32,
    pub(super) prio: i32,
    pub(super) status: Status,
    pub(super) rate: f64,
    pub(super) left: f64,
    pub(super) t_last: f64,
    /// Predicted completion time at the current rate (infinite at rate 0).
    pub(super) pred: f64,
    /// Time of the valid heap entry (infinite if none). It is at most
    /// `pred`: a flow that slows down keeps its earlier entry, which is
    /// moved to `pred` when it reaches the top (one heap operation instead
    /// of a push now and a stale pop later).
    pub(super) entry_t: f64,
    pub(super) bytes: f64,
    pub(super) path: Hops,
    /// Position of this flow in `link_flows[path[h]]`.
    pub(super) pos: Positions,
    pub(super) weight: f64,
    pub(super) cap: f64,
    pub(super) id: u64,
    pub(super) src: HostId,
    pub(super) dst: HostId,
    pub(super) start_s: f64,
    pub(super) finish_s: f64,
    /// Bytes delivered when the flow was cancelled (NaN: not cancelled).
    pub(super) cancelled: f64,
    pub(super) task_id: Option<u64>,
    pub(super) kind: RouteKind,
    pub(super) path_id: Option<u32>,
    pub(super) stranded: Option<StrandReason>,
}

// 256 bytes on 64-bit targets (see above).
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<FlowState>() == 256);

/// Hops whose list positions a flow keeps inline (a three-tier path has
/// 6): the moved entry's position is then updated in the flow's state
/// itself, one cache miss fewer per hop when a flow leaves its links.
const POS_INLINE: usize = 8;

/// A flow's position in each of its links' lists.
#[derive(Debug, Clone, Default)]
pub(super) struct Positions {
    inline: [u32; POS_INLINE],
    /// Hops from `POS_INLINE` on (long explicit paths).
    spill: Vec<u32>,
}

impl Positions {
    pub(super) fn reset(&mut self, hops: usize) {
        self.spill.clear();
        self.spill.resize(hops.saturating_sub(POS_INLINE), 0);
    }
    pub(super) fn get(&self, h: usize) -> u32 {
        if h < POS_INLINE {
            self.inline[h]
        } else {
            self.spill[h - POS_INLINE]
        }
    }
    pub(super) fn set(&mut self, h: usize, p: u32) {
        if h < POS_INLINE {
            self.inline[h] = p;
        } else {
            self.spill[h - POS_INLINE] = p;
        }
    }
}

impl FlowState {
    /// Bytes delivered when the flow was cancelled, if it was.
    pub(super) fn cancelled_bytes(&self) -> Option<f64> {
        (!self.cancelled.is_nan()).then_some(self.cancelled)
    }

    pub(super) fn done_eps(&self) -> f64 {
        (1e-12 * self.bytes).max(1e-6)
    }
}

/// The fields of a flow that the repair's link scans read, packed apart from
/// [`FlowState`] so scans stay in cache. `rate` and `bn` mirror the state;
/// the repair's marks sit here too, so a scan touches one line per flow.
#[derive(Clone, Copy, Debug)]
pub(super) struct Hot {
    pub(super) rate: f64,
    pub(super) weight: f64,
    pub(super) prio: i32,
    pub(super) bn: u32,
    /// Epoch in which the flow joined the repair's region.
    pub(super) seen: u32,
    /// Epoch of the boundary check that listed it as a violator.
    pub(super) viol: u32,
}

/// Flow id -> flow index. Callers mostly number their flows 0, 1, 2, ...:
/// such ids live in a plain vector (4 bytes per id, no hashing); an id far
/// beyond the number of flows goes to a hash map instead, so memory stays
/// proportional to the flows whatever the ids.
#[derive(Default)]
pub(super) struct IdIndex {
    dense: Vec<u32>,
    sparse: netheat_core::IdMap<u64, u32>,
}

impl IdIndex {
    const FREE: u32 = u32::MAX;
    /// Ids below `2 * flows + DENSE_SLACK` go to the vector.
    const DENSE_SLACK: u64 = 1 << 16;

    pub(super) fn get(&self, id: u64) -> Option<u32> {
        if let Some(&i) = self.dense.get(id as usize) {
            if i != Self::FREE {
                return Some(i);
            }
        }
        if self.sparse.is_empty() {
            None
        } else {
            self.sparse.get(&id).copied()
        }
    }

    /// Adds a new id (not present) for flow index `idx`; `added` flows were
    /// added before it (with recycled slots, more than `idx`).
    pub(super) fn insert(&mut self, id: u64, idx: u32, added: u64) {
        if id < 2 * added + Self::DENSE_SLACK {
            let i = id as usize;
            if i >= self.dense.len() {
                let n = (i + 1).max(self.dense.len() * 3 / 2);
                self.dense.resize(n, Self::FREE);
            }
            self.dense[i] = idx;
        } else {
            self.sparse.insert(id, idx);
        }
    }

    /// Forgets an id.
    pub(super) fn remove(&mut self, id: u64) {
        match self.dense.get_mut(id as usize) {
            Some(i) if *i != Self::FREE => *i = Self::FREE,
            _ => {
                self.sparse.remove(&id);
            }
        }
    }
}

/// Slots of forgotten flows handed out again in blocks: a block is reused
/// once every flow in it is forgotten, and its slots in order. Flows added
/// together (a task's) then stay side by side in memory, as without reuse;
/// reusing single slots as they free up scatters them, and costs more in
/// cache misses than the memory saves.
#[derive(Debug)]
pub(super) struct SlotBlocks {
    /// Flows not forgotten, per block.
    live: Vec<u32>,
    /// Blocks whose every slot is free, not the current one.
    free: Vec<u32>,
    /// The block being handed out, and its next slot (`BLOCK`: none).
    cur: u32,
    next: u32,
}

impl Default for SlotBlocks {
    fn default() -> Self {
        Self { live: Vec::new(), free: Vec::new(), cur: 0, next: Self::BLOCK }
    }
}

impl SlotBlocks {
    const BLOCK: u32 = 64;

    /// A free slot, if a block has one to hand out.
    pub(super) fn take(&mut self) -> Option<u32> {
        if self.next >= Self::BLOCK {
            let b = self.free.pop()?;
            self.cur = b;
            self.next = 0;
        }
        let slot = self.cur * Self::BLOCK + self.next;
        self.next += 1;
        self.live[self.cur as usize] += 1;
        Some(slot)
    }

    /// Slot `slot`, just appended, is in use.
    pub(super) fn grow(&mut self, slot: u32) {
        let b = (slot / Self::BLOCK) as usize;
        if b >= self.live.len() {
            self.live.resize(b + 1, 0);
        }
        self.live[b] += 1;
    }

    /// Slot `slot` is free; `slots` exist in all.
    pub(super) fn release(&mut self, slot: u32, slots: usize) {
        let b = slot / Self::BLOCK;
        self.live[b as usize] -= 1;
        // A full block, not being handed out, with no flow left.
        let whole = ((b + 1) * Self::BLOCK) as usize <= slots;
        if self.live[b as usize] == 0 && whole && !(b == self.cur && self.next < Self::BLOCK) {
            self.free.push(b);
        }
    }
}

/// The fixed, portable hash of ECMP decisions.
pub(super) use netheat_core::mix;

#[cfg(test)]
mod tests {
    use super::{IdIndex, SlotBlocks};

    #[test]
    fn slot_blocks_are_reused_whole_and_in_order() {
        const B: u32 = SlotBlocks::BLOCK;
        let mut s = SlotBlocks::default();
        assert_eq!(s.take(), None);
        // Two blocks and one slot appended.
        for slot in 0..2 * B + 1 {
            s.grow(slot);
        }
        let n = (2 * B + 1) as usize;
        // Block 1 loses all but one flow, block 0 all: only block 0 is free.
        for slot in B..2 * B - 1 {
            s.release(slot, n);
        }
        assert_eq!(s.take(), None);
        for slot in 0..B {
            s.release(slot, n);
        }
        let got: Vec<u32> = (0..B).map(|_| s.take().expect("block 0 is free")).collect();
        assert_eq!(got, (0..B).collect::<Vec<_>>());
        assert_eq!(s.take(), None);
        // Block 1's last flow leaves, then block 0 (fully handed out) empties
        // again: the block freed last is handed out first.
        s.release(2 * B - 1, n);
        for slot in 0..B {
            s.release(slot, n);
        }
        let got: Vec<u32> = (0..2 * B).map(|_| s.take().expect("blocks 0 and 1")).collect();
        assert_eq!(got, (0..2 * B).collect::<Vec<_>>());
        // The partial last block (one slot) is never handed out.
        s.release(2 * B, n);
        assert_eq!(s.take(), None);
    }

    #[test]
    fn id_index_small_and_far_ids() {
        let mut ix = IdIndex::default();
        // In order, out of order, and one far beyond the flow count.
        let ids = [0u64, 5, 3, 1 << 40, 70_000, 2];
        for (k, &id) in ids.iter().enumerate() {
            assert_eq!(ix.get(id), None);
            ix.insert(id, k as u32, k as u64);
        }
        for (k, &id) in ids.iter().enumerate() {
            assert_eq!(ix.get(id), Some(k as u32), "id {id}");
        }
        // 70,000 is beyond 2 * 4 + 65,536 flows: in the map, like 2^40.
        assert_eq!(ix.sparse.len(), 2);
        assert!(ix.dense.len() < 100);
        assert_eq!(ix.get(4), None);
        assert_eq!(ix.get(69_999), None);
        assert_eq!(ix.get(u64::MAX), None);
        // Forgotten ids, in the vector and in the map; then reused.
        ix.remove(5);
        ix.remove(1 << 40);
        assert_eq!(ix.get(5), None);
        assert_eq!(ix.get(1 << 40), None);
        assert_eq!(ix.get(3), Some(2));
        assert_eq!(ix.sparse.len(), 1);
        ix.insert(5, 9, 6);
        assert_eq!(ix.get(5), Some(9));
    }
}
