//! The registry of replica placement policies: each policy's tag beside
//! its constructor, so scenarios, the advisor and the HDFS service name the
//! same set. It sits apart from [`crate::placement`] (the trait and the
//! policies that need nothing else) because it also names [`Sinbad`].

use crate::placement::{Ccp, CcpBalance, PolicyConfig, ReplicaPlacement, Uniform};
use crate::sinbad::Sinbad;
use crate::StorageError;

/// Builds a policy from its tag; unknown tags list the known ones.
pub fn make_policy(tag: &str, cfg: &PolicyConfig) -> Result<Box<dyn ReplicaPlacement>, StorageError> {
    build(tag, cfg).ok_or_else(|| StorageError::UnknownPolicy { tag: tag.to_string(), known: POLICIES.join(", ") })
}

netheat_core::registry! {
    /// Registered policy tags.
    pub const POLICIES;
    /// The policy of a tag (`None`: unknown).
    fn build(cfg: &PolicyConfig) -> Box<dyn ReplicaPlacement> {
        "ccp" => Box::new(Ccp),
        "ccp-balance" => Box::new(CcpBalance),
        "sinbad" => Box::new(Sinbad::new(cfg.clone())),
        "uniform" => Box::new(Uniform),
    }
}
