//! Memcache-like request/response: a small request (50 B), a service time
//! at the server, a response (1500 B); the task is the round trip.

use netheat_core::HostId;
use netheat_topology::Topology;
use rand::Rng;

use super::{check_host, check_nonneg};
use crate::dag::TaskDag;
use crate::GenError;

/// Parameters of a key-value request.
#[derive(Debug, Clone, PartialEq)]
pub struct Memcache {
    /// Request size, bytes.
    pub request_bytes: f64,
    /// Response size, bytes.
    pub response_bytes: f64,
    /// Server processing time, seconds.
    pub service_s: f64,
}

impl Default for Memcache {
    /// 50 B requests, 1500 B responses, 10 µs service.
    fn default() -> Self {
        Self { request_bytes: 50.0, response_bytes: 1500.0, service_s: 10e-6 }
    }
}

impl Memcache {
    /// One request from `client` to `server`.
    pub fn task(&self, topo: &Topology, client: HostId, server: HostId) -> Result<TaskDag, GenError> {
        check_nonneg("request_bytes", self.request_bytes)?;
        check_nonneg("response_bytes", self.response_bytes)?;
        check_nonneg("service_s", self.service_s)?;
        check_host(topo, "client", client)?;
        check_host(topo, "server", server)?;
        let mut dag = TaskDag::new("memcache");
        let q = dag.flow(client, server, self.request_bytes, &[]);
        let s = dag.delay(self.service_s, &[q]);
        dag.flow(server, client, self.response_bytes, &[s]);
        Ok(dag)
    }

    /// A request from a uniform client to a uniform server among `servers`
    /// (other than the client).
    pub fn random_task<R: Rng + ?Sized>(
        &self,
        topo: &Topology,
        servers: &[HostId],
        rng: &mut R,
    ) -> Result<TaskDag, GenError> {
        let n = topo.hosts().len() as HostId;
        if servers.is_empty() || n < 2 {
            return Err(GenError::NotEnoughHosts("memcache needs a server and another host".into()));
        }
        let server = servers[rng.gen_range(0..servers.len())];
        let mut client = rng.gen_range(0..n - 1);
        if client >= server {
            client += 1;
        }
        self.task(topo, client, server)
    }

    /// A request from a uniform client among `clients` to a uniform server
    /// among `servers` (the client drawn again while it is the server).
    pub fn random_task_between<R: Rng + ?Sized>(
        &self,
        topo: &Topology,
        clients: &[HostId],
        servers: &[HostId],
        rng: &mut R,
    ) -> Result<TaskDag, GenError> {
        if servers.is_empty() || clients.is_empty() || (clients.len() == 1 && servers == clients) {
            return Err(GenError::NotEnoughHosts("memcache needs a server and another host as client".into()));
        }
        let server = servers[rng.gen_range(0..servers.len())];
        let mut client = clients[rng.gen_range(0..clients.len())];
        while client == server {
            client = clients[rng.gen_range(0..clients.len())];
        }
        self.task(topo, client, server)
    }
}
