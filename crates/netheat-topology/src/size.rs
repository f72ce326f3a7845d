//! The size of a datacenter before it is built: hosts, switches and directed
//! links from the counts of its description, and the memory they would
//! hold, checked against the memory budget ([`netheat_core::budget`]).
//!
//! Counts are multiplied in `f64`, so no product can overflow however large
//! the keys are; a datacenter that does not fit the budget, or whose nodes or
//! links could not be numbered with 32-bit ids, is an error about the key
//! that makes it large (the largest factor of the largest term).

use netheat_core::budget::{self, format_count, BYTES_PER_DEVICE, BYTES_PER_LINK, BYTES_PER_NODE};

use crate::error::TopologyError;

/// One count of a description and the config key that sets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Count {
    /// Dotted config key, e.g. `topology.racks`.
    pub key: String,
    /// The value.
    pub value: u64,
}

impl Count {
    /// A count set by `key`.
    pub fn new(key: impl Into<String>, value: u64) -> Self {
        Self { key: key.into(), value }
    }

    fn f(&self) -> f64 {
        self.value as f64
    }
}

/// The counts that determine a datacenter's size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dimensions {
    /// Two-tier (one core, one uplink per ToR) or Clos.
    pub two_tier: bool,
    /// The racks, as a product of counts: `[racks]` or `[pods, racks-per-pod]`.
    pub racks: Vec<Count>,
    /// Hosts per rack.
    pub hosts_per_rack: Count,
    /// NIC ports per host (the most of any rack).
    pub ports_per_host: Count,
    /// Storage devices per host (the most of any rack).
    pub devices_per_host: Count,
    /// Pods (1 for two-tier).
    pub pods: Count,
    /// Aggregation switches per pod (1 for two-tier: the core).
    pub aggs_per_pod: Count,
    /// Spines (0 for two-tier).
    pub spines: Count,
    /// Fabric border switches.
    pub border_switches: Count,
}

/// What a datacenter would be.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TopologySize {
    /// Hosts.
    pub hosts: f64,
    /// Switches (ToRs, aggregation or core, spines, border).
    pub switches: f64,
    /// Directed links.
    pub links: f64,
    /// Memory estimate in bytes ([`BYTES_PER_NODE`], [`BYTES_PER_LINK`],
    /// [`BYTES_PER_DEVICE`]).
    pub bytes: f64,
}

impl TopologySize {
    /// Nodes: hosts and switches.
    pub fn nodes(&self) -> f64 {
        self.hosts + self.switches
    }
}

/// A part of the datacenter's memory and the counts it is the product of.
struct Term<'a> {
    bytes: f64,
    factors: Vec<&'a Count>,
}

impl Dimensions {
    fn racks(&self) -> f64 {
        self.racks.iter().map(Count::f).product()
    }

    /// Hosts, switches, directed links and their memory.
    pub fn size(&self) -> TopologySize {
        let terms = self.terms();
        let racks = self.racks();
        let hosts = racks * self.hosts_per_rack.f();
        let (aggs, spines) =
            if self.two_tier { (1.0, 0.0) } else { (self.pods.f() * self.aggs_per_pod.f(), self.spines.f()) };
        let switches = racks + aggs + spines + self.border_switches.f();
        let links = 2.0
            * (hosts * self.ports_per_host.f()
                + racks * self.uplinks_per_tor()
                + if self.two_tier { 0.0 } else { spines * self.pods.f() }
                + self.border_switches.f() * self.top_switches());
        TopologySize { hosts, switches, links, bytes: terms.iter().map(|t| t.bytes).sum() }
    }

    fn uplinks_per_tor(&self) -> f64 {
        if self.two_tier {
            1.0
        } else {
            self.aggs_per_pod.f()
        }
    }

    /// Switches the border links to: spines, else the core / aggregation switches.
    fn top_switches(&self) -> f64 {
        match (self.two_tier, self.spines.value) {
            (true, _) => 1.0,
            (false, 0) => self.pods.f() * self.aggs_per_pod.f(),
            (false, s) => s as f64,
        }
    }

    fn terms(&self) -> Vec<Term<'_>> {
        let (node, link, dev) = (BYTES_PER_NODE as f64, BYTES_PER_LINK as f64, BYTES_PER_DEVICE as f64);
        let racks = self.racks();
        let hosts = racks * self.hosts_per_rack.f();
        let per_host_ports = 2.0 * self.ports_per_host.f() * link;
        let per_host_devices = self.devices_per_host.f() * dev;
        let mut host_factors: Vec<&Count> = self.racks.iter().collect();
        host_factors.push(&self.hosts_per_rack);
        host_factors.push(if per_host_devices > per_host_ports {
            &self.devices_per_host
        } else {
            &self.ports_per_host
        });
        let mut rack_factors: Vec<&Count> = self.racks.iter().collect();
        if !self.two_tier {
            rack_factors.push(&self.aggs_per_pod);
        }
        let mut out = vec![
            Term { bytes: hosts * (node + per_host_ports + per_host_devices), factors: host_factors },
            Term { bytes: racks * (node + 2.0 * self.uplinks_per_tor() * link), factors: rack_factors },
        ];
        // Aggregation switches (or the core) and spines.
        out.push(if self.two_tier {
            Term { bytes: node, factors: vec![&self.pods] }
        } else {
            Term {
                bytes: (self.pods.f() * self.aggs_per_pod.f() + self.spines.f()) * node
                    + 2.0 * self.spines.f() * self.pods.f() * link,
                factors: vec![&self.spines, &self.pods, &self.aggs_per_pod],
            }
        });
        let top = if self.two_tier || self.spines.value == 0 {
            vec![&self.pods, &self.aggs_per_pod]
        } else {
            vec![&self.spines]
        };
        let mut border_factors = vec![&self.border_switches];
        border_factors.extend(top);
        out.push(Term {
            bytes: self.border_switches.f() * (node + 2.0 * self.top_switches() * link),
            factors: border_factors,
        });
        out
    }

    /// The count to blame for the size: the largest factor of the largest term.
    pub fn culprit(&self) -> &Count {
        let terms = self.terms();
        let big = terms.iter().max_by(|a, b| a.bytes.total_cmp(&b.bytes)).expect("at least two terms");
        big.factors.iter().copied().fold(big.factors[0], |best, c| if c.value > best.value { c } else { best })
    }

    /// The size if it fits the memory budget and 32-bit ids; otherwise an
    /// error about [`Dimensions::culprit`] naming the counts, the estimate and
    /// the budget.
    pub fn check(&self) -> Result<TopologySize, TopologyError> {
        let budget = budget::memory_budget().map_err(|e| TopologyError::new(&self.culprit().key, e.to_string()))?;
        self.check_against(budget)
    }

    /// [`Dimensions::check`] against a given budget in bytes.
    pub fn check_against(&self, budget_bytes: u64) -> Result<TopologySize, TopologyError> {
        let s = self.size();
        let c = self.culprit();
        let name = c.key.rsplit('.').next().unwrap_or(&c.key);
        let what = format!(
            "a datacenter of {} hosts, {} switches and {} directed links",
            format_count(s.hosts),
            format_count(s.switches),
            format_count(s.links)
        );
        let hint = format!("lower `{name}` ({}) or raise the budget", format_count(c.f()));
        budget::check_against(budget_bytes, &what, s.bytes, &hint)
            .map_err(|e| TopologyError::new(&c.key, e.to_string()))?;
        let limit = u32::MAX as f64;
        if s.nodes() > limit || s.links > limit {
            return Err(TopologyError::new(
                &c.key,
                format!(
                    "{what} cannot be numbered: nodes and links have 32-bit ids (at most {}); {hint}",
                    format_count(limit)
                ),
            ));
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_tier(racks: u64, hpr: u64) -> Dimensions {
        Dimensions {
            two_tier: true,
            racks: vec![Count::new("topology.racks", racks)],
            hosts_per_rack: Count::new("topology.hosts-per-rack", hpr),
            ports_per_host: Count::new("topology.ports-per-host", 1),
            devices_per_host: Count::new("hosts.storage", 0),
            pods: Count::new("topology.pods", 1),
            aggs_per_pod: Count::new("topology.aggs-per-pod", 1),
            spines: Count::new("topology.spines", 0),
            border_switches: Count::new("topology.border-switches", 0),
        }
    }

    #[test]
    fn counts_match_the_builder() {
        // 4 racks x 4 hosts: 16 hosts, 4 ToRs + core, 2 * (16 + 4) directed links.
        let s = two_tier(4, 4).size();
        assert_eq!((s.hosts, s.switches, s.links), (16.0, 5.0, 40.0));
        assert_eq!(s.bytes, 21.0 * BYTES_PER_NODE as f64 + 40.0 * BYTES_PER_LINK as f64);
        // Clos: 2 pods x 3 racks x 2 hosts, 2 aggs per pod, 4 spines, 1 border.
        let d = Dimensions {
            two_tier: false,
            racks: vec![Count::new("topology.pods", 2), Count::new("topology.racks-per-pod", 3)],
            pods: Count::new("topology.pods", 2),
            aggs_per_pod: Count::new("topology.aggs-per-pod", 2),
            spines: Count::new("topology.spines", 4),
            border_switches: Count::new("topology.border-switches", 1),
            ..two_tier(0, 2)
        };
        let s = d.size();
        // hosts 12; switches 6 ToRs + 4 aggs + 4 spines + 1 border = 15;
        // links 2 * (12 + 6*2 + 4*2 + 1*4) = 72.
        assert_eq!((s.hosts, s.switches, s.links), (12.0, 15.0, 72.0));
    }

    #[test]
    fn a_trillion_racks_blames_racks() {
        let d = two_tier(1_000_000_000_000, 4);
        assert_eq!(d.culprit().key, "topology.racks");
        let e = d.check_against(256 << 20).unwrap_err();
        assert_eq!(e.key, "topology.racks");
        assert!(
            e.reason.starts_with(
                "a datacenter of 4,000,000,000,000 hosts, 1,000,000,000,001 switches and \
                 10,000,000,000,000 directed links would hold about"
            ),
            "{}",
            e.reason
        );
        assert!(e.reason.contains("over the memory budget of 256 MiB"), "{}", e.reason);
        assert!(e.reason.ends_with("lower `racks` (1,000,000,000,000) or raise the budget"), "{}", e.reason);
        // Four billion hosts per rack: blame that key instead.
        let e = two_tier(4, 4_000_000_000).check_against(256 << 20).unwrap_err();
        assert_eq!(e.key, "topology.hosts-per-rack");
        // Extremes do not overflow.
        let s = two_tier(u64::MAX, u64::MAX).size();
        assert!(s.bytes.is_finite() && s.bytes > 1e38);
    }

    #[test]
    fn the_budget_is_the_limit() {
        // 16 hosts, 5 switches, 40 links: 21 * 1024 + 40 * 1024 = 62,464 bytes.
        assert_eq!((BYTES_PER_NODE, BYTES_PER_LINK), (1024, 1024));
        let d = two_tier(4, 4);
        assert!(d.check_against(62_464).is_ok());
        assert!(d.check_against(62_463).is_err());
    }

    #[test]
    fn ids_must_fit_32_bits_even_with_a_huge_budget() {
        let e = two_tier(3_000_000_000, 1).check_against(u64::MAX).unwrap_err();
        assert_eq!(e.key, "topology.racks");
        assert!(e.reason.contains("32-bit ids"), "{}", e.reason);
    }
}
