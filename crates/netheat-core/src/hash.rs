//! The one fixed hash of netheat's seeded choices (ECMP paths, derived
//! seeds): SplitMix64's finaliser (Steele, Lea and Flood, "Fast splittable
//! pseudorandom number generators", OOPSLA 2014), portable and stable
//! across platforms and releases, so a seed gives the same run everywhere.

/// SplitMix64's finaliser of `x`.
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A [`Hasher`](std::hash::Hasher) for maps keyed by ids (flow, task,
/// link ids): [`mix`] of the key replaces SipHash. A simulator's input is
/// not an attacker's, and none of these maps is iterated where the order
/// would reach a result.
#[derive(Debug, Default, Clone, Copy)]
pub struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = mix(self.0 ^ x);
    }
    fn write_u32(&mut self, x: u32) {
        self.write_u64(u64::from(x));
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
}

/// A hash map keyed by ids, hashed by [`IdHasher`].
pub type IdMap<K, V> = std::collections::HashMap<K, V, std::hash::BuildHasherDefault<IdHasher>>;

#[cfg(test)]
mod tests {
    /// SplitMix64's published first outputs for seed 0 (state advanced by
    /// the golden gamma, then finalised): 0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4.
    #[test]
    fn matches_splitmix64_reference_outputs() {
        assert_eq!(super::mix(0), 0xE220_A839_7B1D_CDAF);
        assert_eq!(super::mix(0x9E37_79B9_7F4A_7C15), 0x6E78_9E6A_A1B9_65F4);
    }

    /// An id's hash is the finaliser of the id; tuple keys hash every field.
    #[test]
    fn id_hasher_mixes_the_key() {
        use std::hash::{BuildHasher, BuildHasherDefault};
        let b = BuildHasherDefault::<super::IdHasher>::default();
        assert_eq!(b.hash_one(7u64), super::mix(7));
        assert_eq!(b.hash_one(7u32), super::mix(7));
        assert_ne!(b.hash_one((1u64, 2u64)), b.hash_one((2u64, 1u64)));
        let mut m = super::IdMap::default();
        m.insert(5u64, "a");
        assert_eq!(m.get(&5), Some(&"a"));
    }
}
