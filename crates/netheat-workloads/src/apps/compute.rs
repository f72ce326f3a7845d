//! Long-running compute jobs with drifting network demand.
//!
//! A job has `tasks` tasks, each requesting `cores_per_task` cores and
//! `memory_per_task_bytes`, placed by [`RandomPlacement`]. Its historical
//! network estimate is `cores_per_task · x` bits/s per task, with `x` drawn
//! once per job from `bw_per_core` (a heavy-tailed distribution of bits/s
//! per core, so some jobs need more than 10x the median). The actual demand
//! of each task drifts from the estimate by a mean-one log-normal factor
//! `exp(σZ - σ²/2)`, `σ = drift_sigma`. Each task sends to its next `peers`
//! tasks (ring order) one flow each, capped at `actual / peers` and sized to
//! last `duration_s` at that rate (`bytes = cap · duration_s / 8`). The
//! DAG carries what its tasks request ([`JobTasks`]), so a placement policy
//! can choose their hosts again when the job starts.

use netheat_core::HostId;
use netheat_topology::Topology;
use rand::RngCore;

use super::choose;
use crate::dag::{JobTasks, TaskDag};
use crate::sizes::{std_normal, SizeDist};
use crate::GenError;

/// The generator's own task hosts: uniform over hosts with enough free
/// cores and memory, keeping track of what it has handed out (nothing is
/// ever released).
///
/// This is not a task placement *policy*: those (bandwidth-oblivious, UTP,
/// reactive-only) implement `netheat_sched::PlacementPolicy`, the one trait
/// of that decision, and a scenario's `placement.policy` chooses every
/// task's host again when its job starts (from the [`JobTasks`] the DAG
/// carries). These hosts stand only in a run without a placement policy.
#[derive(Debug, Clone, Default)]
pub struct RandomPlacement {
    used_cores: Vec<u32>,
    used_mem: Vec<f64>,
}

impl RandomPlacement {
    /// `tasks` distinct hosts that can take `cores` cores and
    /// `memory_bytes` each (and reserves them).
    pub fn place(
        &mut self,
        topo: &Topology,
        tasks: usize,
        cores: u32,
        memory_bytes: f64,
        rng: &mut dyn RngCore,
    ) -> Result<Vec<HostId>, GenError> {
        let n = topo.hosts().len();
        self.used_cores.resize(n, 0);
        self.used_mem.resize(n, 0.0);
        let fits: Vec<HostId> = (0..n)
            .filter(|&h| {
                let host = &topo.hosts()[h];
                self.used_cores[h] + cores <= host.cores && self.used_mem[h] + memory_bytes <= host.memory_bytes
            })
            .map(|h| h as HostId)
            .collect();
        let hosts = choose(rng, &fits, tasks)
            .ok_or_else(|| GenError::NotEnoughHosts(format!("{tasks} tasks wanted, {} hosts have room", fits.len())))?;
        for &h in &hosts {
            self.used_cores[h as usize] += cores;
            self.used_mem[h as usize] += memory_bytes;
        }
        Ok(hosts)
    }
}

/// Parameters of compute jobs.
#[derive(Debug, Clone, PartialEq)]
pub struct ComputeJobs {
    /// Tasks per job.
    pub tasks: usize,
    /// Cores per task.
    pub cores_per_task: u32,
    /// Memory per task, bytes.
    pub memory_per_task_bytes: f64,
    /// Historical network demand per core, bits/s (heavy-tailed).
    pub bw_per_core: SizeDist,
    /// Spread of the actual demand around the estimate (log-normal sigma).
    pub drift_sigma: f64,
    /// How long each flow lasts at its cap, seconds.
    pub duration_s: f64,
    /// Peers each task sends to.
    pub peers: usize,
}

impl Default for ComputeJobs {
    /// 8 tasks of 4 cores and 16 GB, per-core demand bounded Pareto
    /// (shape 1.1, 1 Mbps .. 1 Gbps), drift 0.5, one hour, 2 peers.
    fn default() -> Self {
        Self {
            tasks: 8,
            cores_per_task: 4,
            memory_per_task_bytes: 16e9,
            bw_per_core: SizeDist::BoundedPareto { shape: 1.1, lo: 1e6, hi: 1e9 },
            drift_sigma: 0.5,
            duration_s: 3600.0,
            peers: 2,
        }
    }
}

/// One job: its task and its demands.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// The flows (all start with the job).
    pub dag: TaskDag,
    /// Host of every task.
    pub hosts: Vec<HostId>,
    /// Historical estimate per task, bits/s.
    pub estimate_bps: f64,
    /// Actual demand of every task, bits/s.
    pub actual_bps: Vec<f64>,
}

impl ComputeJobs {
    /// The parameters' own checks.
    fn check(&self) -> Result<(), GenError> {
        self.bw_per_core.validate()?;
        if !(self.duration_s.is_finite() && self.duration_s > 0.0) {
            return Err(GenError::param("duration_s", format!("{} must be > 0", self.duration_s)));
        }
        if !(self.drift_sigma.is_finite() && self.drift_sigma >= 0.0) {
            return Err(GenError::param("drift_sigma", format!("{} must be >= 0", self.drift_sigma)));
        }
        if self.tasks > 0 && self.peers >= self.tasks {
            return Err(GenError::param("peers", format!("{} peers need more than {} tasks", self.peers, self.tasks)));
        }
        Ok(())
    }

    /// Draws one job and places its tasks with `placement`.
    pub fn job(
        &self,
        topo: &Topology,
        placement: &mut RandomPlacement,
        rng: &mut dyn RngCore,
    ) -> Result<Job, GenError> {
        self.check()?;
        let hosts = placement.place(topo, self.tasks, self.cores_per_task, self.memory_per_task_bytes, rng)?;
        self.job_on(hosts, rng)
    }

    /// Draws one job whose tasks run on `hosts` (one per task, in task
    /// order).
    pub fn job_on(&self, hosts: Vec<HostId>, rng: &mut dyn RngCore) -> Result<Job, GenError> {
        self.check()?;
        if hosts.len() != self.tasks {
            return Err(GenError::param("hosts", format!("{} hosts for {} tasks", hosts.len(), self.tasks)));
        }
        let estimate_bps = f64::from(self.cores_per_task) * self.bw_per_core.sample(rng);
        let s = self.drift_sigma;
        let actual_bps: Vec<f64> =
            (0..self.tasks).map(|_| estimate_bps * (s * std_normal(rng) - 0.5 * s * s).exp()).collect();
        let mut dag = TaskDag::new("compute-job");
        for (i, &h) in hosts.iter().enumerate() {
            if self.peers == 0 {
                continue;
            }
            let cap = actual_bps[i] / self.peers as f64;
            for j in 1..=self.peers {
                let peer = hosts[(i + j) % hosts.len()];
                dag.capped_flow(h, peer, cap * self.duration_s / 8.0, cap, &[]);
            }
        }
        dag.job = Some(Box::new(JobTasks {
            hosts: hosts.clone(),
            cores: self.cores_per_task,
            memory_bytes: self.memory_per_task_bytes,
            estimate_bps,
        }));
        Ok(Job { dag, hosts, estimate_bps, actual_bps })
    }
}
