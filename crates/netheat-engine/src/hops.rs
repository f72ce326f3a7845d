//! A flow's path, stored inline for the usual datacenter path lengths.
//!
//! The repair reads a flow's links for every flow of every region; with the
//! path in a separate allocation that is one more dependent cache miss per
//! flow, and one allocation per flow (millions in a long run). Paths of up
//! to [`INLINE`] links live in the flow's state itself.

use netheat_core::LinkId;
use std::ops::{Deref, DerefMut};

/// Links kept inline (a three-tier path has 6).
const INLINE: usize = 8;

/// A flow's links, in order.
#[derive(Clone, Debug)]
pub(crate) enum Hops {
    /// Up to [`INLINE`] links.
    Inline { len: u8, buf: [LinkId; INLINE] },
    /// Longer paths (explicit routes).
    Heap(Vec<LinkId>),
}

impl Default for Hops {
    fn default() -> Self {
        Hops::Inline { len: 0, buf: [0; INLINE] }
    }
}

impl Hops {
    /// Replaces the links by `links`.
    pub(crate) fn set(&mut self, links: &[LinkId]) {
        *self = Hops::from(links);
    }
}

impl From<&[LinkId]> for Hops {
    fn from(links: &[LinkId]) -> Self {
        if links.len() <= INLINE {
            let mut buf = [0; INLINE];
            buf[..links.len()].copy_from_slice(links);
            Hops::Inline { len: links.len() as u8, buf }
        } else {
            Hops::Heap(links.to_vec())
        }
    }
}

impl From<Vec<LinkId>> for Hops {
    fn from(links: Vec<LinkId>) -> Self {
        if links.len() <= INLINE {
            Hops::from(links.as_slice())
        } else {
            Hops::Heap(links)
        }
    }
}

impl Deref for Hops {
    type Target = [LinkId];
    fn deref(&self) -> &[LinkId] {
        match self {
            Hops::Inline { len, buf } => &buf[..*len as usize],
            Hops::Heap(v) => v,
        }
    }
}

impl DerefMut for Hops {
    fn deref_mut(&mut self) -> &mut [LinkId] {
        match self {
            Hops::Inline { len, buf } => &mut buf[..*len as usize],
            Hops::Heap(v) => v,
        }
    }
}

impl<'a> IntoIterator for &'a Hops {
    type Item = &'a LinkId;
    type IntoIter = std::slice::Iter<'a, LinkId>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::{Hops, INLINE};

    #[test]
    fn short_and_long_paths_read_back() {
        for n in [0, 1, 6, INLINE, INLINE + 1, 20] {
            let links: Vec<u32> = (0..n as u32).map(|k| 7 * k + 3).collect();
            let h = Hops::from(links.clone());
            assert_eq!(&h[..], &links[..], "{n} links");
            assert_eq!(matches!(h, Hops::Heap(_)), n > INLINE);
            let mut g = Hops::default();
            g.set(&links);
            assert_eq!(g.iter().copied().collect::<Vec<_>>(), links);
        }
    }
}
