//! Incasts of small messages: at each incast a receiver and `fanin`
//! senders in other racks; every sender sends the receiver one message, all
//! at the incast's start. Each message is one task of one flow (kind
//! `"incast"`), so a task's completion time is the message completion time
//! (MCT) that the CloudBurst slides and its baselines compare.
//!
//! Incasts come `period` apart on average, each gap drawn uniformly from
//! half to one and a half periods (a jittered train, not Poisson: the
//! slides repeat incasts "about every millisecond"); message sizes cycle
//! through `message_bytes`, one size per incast (the first incast sends the
//! first size).

use netheat_core::HostId;
use netheat_topology::Topology;
use rand::Rng;

use crate::dag::TaskDag;
use crate::GenError;

/// Parameters of an incast train.
#[derive(Debug, Clone, PartialEq)]
pub struct Incasts {
    /// Senders per incast (fewer when fewer hosts are outside the
    /// receiver's rack).
    pub fanin: usize,
    /// Message sizes in bytes, one per incast, cycled.
    pub message_bytes: Vec<f64>,
    /// Number of incasts.
    pub incasts: usize,
    /// Mean time between incasts, seconds.
    pub period_s: f64,
}

impl Incasts {
    /// The messages of the whole train: `(start, task)` per message, in
    /// start order, senders of one incast in the order drawn.
    pub fn tasks<R: Rng + ?Sized>(&self, topo: &Topology, rng: &mut R) -> Result<Vec<(f64, TaskDag)>, GenError> {
        if self.fanin == 0 {
            return Err(GenError::param("fanin", "must be at least 1"));
        }
        if self.message_bytes.is_empty() || self.message_bytes.iter().any(|b| !(b.is_finite() && *b > 0.0)) {
            return Err(GenError::param("message_bytes", "needs at least one size, each more than 0 bytes"));
        }
        if !(self.period_s.is_finite() && self.period_s > 0.0) {
            return Err(GenError::param("period_s", format!("{} must be > 0", self.period_s)));
        }
        let hosts = topo.hosts();
        let n = hosts.len() as HostId;
        if topo.racks().len() < 2 {
            return Err(GenError::NotEnoughHosts("an incast needs senders in another rack: one rack only".into()));
        }
        let mut out = Vec::with_capacity(self.incasts * self.fanin);
        let mut t = 0.0;
        for i in 0..self.incasts {
            t += self.period_s * (0.5 + rng.gen::<f64>());
            let recv = rng.gen_range(0..n);
            let rack = hosts[recv as usize].rack;
            let outside = hosts.iter().filter(|h| h.rack != rack).count();
            let bytes = self.message_bytes[i % self.message_bytes.len()];
            let mut senders: Vec<HostId> = Vec::with_capacity(self.fanin);
            while senders.len() < self.fanin.min(outside) {
                let s = rng.gen_range(0..n);
                if hosts[s as usize].rack != rack && !senders.contains(&s) {
                    senders.push(s);
                }
            }
            for s in senders {
                let mut dag = TaskDag::new("incast");
                dag.flow(s, recv, bytes, &[]);
                out.push((t, dag));
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netheat_topology::TopologySpec;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn every_message_crosses_racks_and_sizes_cycle_per_incast() {
        // 3 racks of 4 hosts: at most 8 senders outside the receiver's rack.
        let topo = Topology::build(&TopologySpec::three_tier(1, 3, 4, 2, 0, 10e9, 20e9, None)).unwrap();
        let inc = Incasts { fanin: 12, message_bytes: vec![5e3, 93e3], incasts: 50, period_s: 1e-3 };
        let tasks = inc.tasks(&topo, &mut ChaCha8Rng::seed_from_u64(1)).unwrap();
        assert_eq!(tasks.len(), 50 * 8, "fanin capped at the 8 hosts of the other racks");
        let hosts = topo.hosts();
        let mut last = 0.0;
        for (k, chunk) in tasks.chunks(8).enumerate() {
            let t = chunk[0].0;
            // Gaps uniform in [0.5, 1.5] periods.
            assert!((0.5e-3..=1.5e-3).contains(&(t - last)), "gap {}", t - last);
            last = t;
            let want = if k % 2 == 0 { 5e3 } else { 93e3 };
            let mut senders = Vec::new();
            for (start, dag) in chunk {
                assert_eq!(*start, t);
                assert_eq!(dag.kind, "incast");
                assert_eq!(dag.steps.len(), 1);
                assert!(dag.deps(0).is_empty());
                let crate::dag::Step::Flow { src, dst, bytes, .. } = dag.steps[0] else { panic!("a flow") };
                assert_eq!(bytes, want);
                assert_ne!(hosts[src as usize].rack, hosts[dst as usize].rack);
                senders.push(src);
            }
            senders.sort_unstable();
            senders.dedup();
            assert_eq!(senders.len(), 8, "distinct senders");
        }
        // The mean gap of 50 uniform [0.5, 1.5] ms gaps: 1 ms, sd 0.29/sqrt(50) = 0.04 ms.
        assert!((last / 50.0 - 1e-3).abs() < 0.2e-3, "{last}");
    }

    #[test]
    fn bad_parameters_are_refused() {
        let topo = Topology::build(&TopologySpec::three_tier(1, 2, 2, 1, 0, 10e9, 10e9, None)).unwrap();
        let ok = Incasts { fanin: 1, message_bytes: vec![1e3], incasts: 1, period_s: 1e-3 };
        let mut r = ChaCha8Rng::seed_from_u64(1);
        assert!(Incasts { fanin: 0, ..ok.clone() }.tasks(&topo, &mut r).is_err());
        assert!(Incasts { message_bytes: vec![], ..ok.clone() }.tasks(&topo, &mut r).is_err());
        assert!(Incasts { message_bytes: vec![0.0], ..ok.clone() }.tasks(&topo, &mut r).is_err());
        assert!(Incasts { period_s: 0.0, ..ok.clone() }.tasks(&topo, &mut r).is_err());
        let one = Topology::build(&TopologySpec::three_tier(1, 1, 4, 1, 0, 10e9, 10e9, None)).unwrap();
        assert!(ok.tasks(&one, &mut r).is_err());
    }
}
