//! Planning a simulation within the memory budget
//! ([`netheat_core::budget`]).
//!
//! A run holds its flows ([`BYTES_PER_FLOW`](netheat_core::BYTES_PER_FLOW) each, or what
//! [`budget::flow_bytes`] says for a run that forgets finished flows), its datacenter
//! ([`BYTES_PER_NODE`], [`BYTES_PER_LINK`]) and a telemetry window per
//! directed link and window of simulated time ([`BYTES_PER_LINK_WINDOW`]:
//! the dense links table has every link in every window). What the flows
//! and the datacenter leave of the budget fixes how many windows fit
//! ([`RunBudget::max_windows`]); a lower bound on the end time
//! ([`end_lower_bound`]) refuses a run that needs more before it starts, and
//! [`RunBudget::check_reached`] stops one that gets there while running.

use netheat_core::budget::{
    self, format_bps, format_bytes, format_count, format_duration_up, format_number, BudgetError, BUDGET_HOW,
    BYTES_PER_LINK, BYTES_PER_LINK_WINDOW, BYTES_PER_NODE,
};
use netheat_topology::Topology;

use crate::FlowRow;

/// What a run may hold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunBudget {
    /// The budget in bytes.
    pub budget: u64,
    /// Directed links of the datacenter.
    pub links: u64,
    /// Telemetry windows that fit (at most `u32::MAX`).
    pub max_windows: u32,
}

/// Longest window worth suggesting (a year, in seconds): a run that needs a
/// longer one to fit has an absurd start time or size, and the message says so.
pub const ABSURD_WINDOW_S: f64 = 365.0 * 86_400.0;

impl RunBudget {
    /// The windows left for a run of `flows` flows on `topo` under `budget`
    /// bytes; an error if the flows and the datacenter alone do not fit.
    pub fn new(topo: &Topology, flows: u64, budget: u64) -> Result<Self, BudgetError> {
        Self::with_device_links(topo, 0, flows, budget)
    }

    /// [`RunBudget::new`] for a run whose network has `device_links` links
    /// besides the datacenter's (a disk each, say), kept in windows too.
    pub fn with_device_links(topo: &Topology, device_links: u64, flows: u64, budget: u64) -> Result<Self, BudgetError> {
        let (nodes, links) = (topo.nodes().len() as f64, (topo.links().len() as u64 + device_links) as f64);
        let base =
            flows as f64 * budget::flow_bytes() as f64 + nodes * BYTES_PER_NODE as f64 + links * BYTES_PER_LINK as f64;
        budget::check_against(
            budget,
            &format!(
                "the run's {} flows on a datacenter of {} nodes and {} directed links",
                format_count(flows as f64),
                format_count(nodes),
                format_count(links)
            ),
            base,
            "simulate fewer flows",
        )?;
        let per_window = links.max(1.0) * BYTES_PER_LINK_WINDOW as f64;
        let max_windows = ((budget as f64 - base) / per_window).floor().clamp(0.0, u32::MAX as f64) as u32;
        Ok(Self { budget, links: links as u64, max_windows })
    }

    /// Whether a run ending at `end_s` with windows of `window_s` fits
    /// (with a relative slack of 10^-9 for the rounding of the division, so
    /// the window [`RunBudget::check_bound`] suggests does fit).
    pub fn fits(&self, end_s: f64, window_s: f64) -> bool {
        end_s / window_s <= self.max_windows as f64 * (1.0 + 1e-9)
    }

    /// "the memory budget of 256 MiB (...) leaves room for 111,848 windows
    /// of the 40 links (128 B per link and window): use --window 2.3ms or
    /// longer, or raise the budget" for a run that needs `end_s`.
    fn advice(&self, end_s: f64) -> String {
        let room = format!(
            "the memory budget of {} ({BUDGET_HOW}) leaves room for {} windows of the {} links ({} per link and window)",
            format_bytes(self.budget as f64),
            format_count(self.max_windows as f64),
            format_count(self.links as f64),
            format_bytes(BYTES_PER_LINK_WINDOW as f64)
        );
        if self.max_windows == 0 {
            format!("{room}: raise the budget or simulate fewer flows")
        } else if end_s / self.max_windows as f64 > ABSURD_WINDOW_S {
            // A window of more than a year would fit but tell nothing: the input is what is wrong.
            format!(
                "{room}; no useful window fits a run that long: check the flow's start time and size \
                 (and its hosts' link speeds)"
            )
        } else {
            let w = format_duration_up(end_s / self.max_windows as f64);
            format!("{room}: use --window {w} or longer, or raise the budget")
        }
    }

    /// Refuses, before the run, a flow that cannot end within the windows
    /// that fit: `who` names it (`flow 7 (f.csv:9)`).
    pub fn check_bound(&self, b: &EndBound, who: &str, window_s: f64) -> Result<(), String> {
        if self.fits(b.end_s, window_s) {
            return Ok(());
        }
        Err(format!(
            "{who} cannot finish before {} s ({} bytes from {} s at most {}), {} windows of {} s; {}",
            format_number(b.end_s),
            format_number(b.bytes),
            format_number(b.start_s),
            format_bps(b.rate_bps),
            format_count((b.end_s / window_s).ceil()),
            format_number(window_s),
            self.advice(b.end_s)
        ))
    }

    /// Stops a run about to process an event at `t_s` past the windows
    /// that fit.
    pub fn check_reached(&self, t_s: f64, window_s: f64) -> Result<(), String> {
        if self.fits(t_s, window_s) {
            return Ok(());
        }
        Err(format!(
            "the run reached {} s of simulated time, {} windows of {} s; {}",
            format_number(t_s),
            format_count((t_s / window_s).ceil()),
            format_number(window_s),
            self.advice(t_s)
        ))
    }
}

/// The flow that ends last at the least, and when.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EndBound {
    /// Index of the flow in the rows.
    pub index: usize,
    /// Its start, seconds.
    pub start_s: f64,
    /// Its size, bytes.
    pub bytes: f64,
    /// The fastest it can go: the smaller of its source's total uplink, its
    /// destination's total downlink and its rate cap, bits per second.
    pub rate_bps: f64,
    /// `start_s + bytes * 8 / rate_bps`: it cannot finish before.
    pub end_s: f64,
}

/// The latest of the flows' earliest possible ends: each flow needs at least
/// its bytes over the smaller of its source host's total uplink capacity,
/// its destination's total downlink capacity and its rate cap. Flows from a
/// host to itself (which finish at their start) and flows of no bytes count
/// their start. `None` without rows.
pub fn end_lower_bound(topo: &Topology, rows: &[FlowRow]) -> Option<EndBound> {
    let cap = |links: &mut dyn Iterator<Item = u32>| -> f64 {
        links.map(|l| topo.links()[l as usize].capacity_bps).sum::<f64>()
    };
    let hosts = topo.hosts();
    let mut best: Option<EndBound> = None;
    for (i, r) in rows.iter().enumerate() {
        let (src, dst) = (hosts.get(r.src as usize), hosts.get(r.dst as usize));
        let rate = match (src, dst) {
            (Some(s), Some(d)) if r.src != r.dst => {
                let up = cap(&mut s.ports.iter().map(|p| p.up));
                let down = cap(&mut d.ports.iter().map(|p| p.down));
                up.min(down).min(r.rate_cap_bps.unwrap_or(f64::INFINITY))
            }
            _ => f64::INFINITY,
        };
        let end = if r.bytes > 0.0 && rate.is_finite() { r.start_s + r.bytes * 8.0 / rate } else { r.start_s };
        // NaN-safe: a zero rate gives an infinite end, which is the latest.
        let end = if end.is_nan() { f64::INFINITY } else { end };
        if best.is_none_or(|b| end > b.end_s) {
            best = Some(EndBound { index: i, start_s: r.start_s, bytes: r.bytes, rate_bps: rate, end_s: end });
        }
    }
    best
}

/// "3 flows have src == dst (first: f.csv:7); they finish at their start
/// and use no link", or `None`. `place(i)` names row `i` (a file and line,
/// or a data row).
pub fn same_host_note(rows: &[FlowRow], place: &dyn Fn(usize) -> String) -> Option<String> {
    let mut same = rows.iter().enumerate().filter(|(_, r)| r.src == r.dst);
    let (first, _) = same.next()?;
    let n = 1 + same.count();
    let (flows, have) = if n == 1 { ("flow", "has") } else { ("flows", "have") };
    Some(format!(
        "{} {flows} {have} src == dst (first: {}); they finish at their start and use no link",
        format_count(n as f64),
        place(first)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use netheat_topology::TopologySpec;

    fn row(src: u32, dst: u32, bytes: f64, start_s: f64) -> FlowRow {
        FlowRow { flow_id: 0, start_s, src, dst, bytes, task_id: None, priority: 0, weight: 1.0, rate_cap_bps: None }
    }

    #[test]
    fn the_bound_is_bytes_over_the_slower_end() {
        // 10 Gbps hosts: 1 GB takes 0.8 s; a 1 Gbps cap makes it 8 s.
        let topo = Topology::build(&TopologySpec::two_tier(4, 4, 10e9, 10e9)).unwrap();
        let rows = vec![row(0, 5, 1e9, 0.0), row(1, 1, 1e12, 0.0), row(2, 6, 1e6, 0.5)];
        let b = end_lower_bound(&topo, &rows).unwrap();
        assert_eq!((b.index, b.end_s, b.rate_bps), (0, 0.8, 1e10));
        let mut capped = rows.clone();
        capped[0].rate_cap_bps = Some(1e9);
        assert_eq!(end_lower_bound(&topo, &capped).unwrap().end_s, 8.0);
        assert!(end_lower_bound(&topo, &[]).is_none());
        // The same host: finishes at its start (here 3 s).
        assert_eq!(end_lower_bound(&topo, &[row(3, 3, 1e30, 3.0)]).unwrap().end_s, 3.0);
        let note = same_host_note(&rows, &|i| format!("line {}", i + 2)).unwrap();
        assert_eq!(note, "1 flow has src == dst (first: line 3); they finish at their start and use no link");
        assert!(same_host_note(&rows[..1], &|_| String::new()).is_none());
    }

    #[test]
    fn windows_follow_what_the_flows_and_datacenter_leave() {
        // 16 hosts + 4 ToRs + core = 21 nodes, 40 directed links, 1 flow.
        let topo = Topology::build(&TopologySpec::two_tier(4, 4, 10e9, 10e9)).unwrap();
        let base = netheat_core::BYTES_PER_FLOW + 21 * BYTES_PER_NODE + 40 * BYTES_PER_LINK;
        let budget = base + 100 * 40 * BYTES_PER_LINK_WINDOW;
        let rb = RunBudget::new(&topo, 1, budget).unwrap();
        assert_eq!(rb.max_windows, 100);
        assert_eq!(RunBudget::new(&topo, 1, budget - 1).unwrap().max_windows, 99);
        assert_eq!(RunBudget::new(&topo, 1, base).unwrap().max_windows, 0);
        let e = RunBudget::new(&topo, 1, base - 1).unwrap_err().to_string();
        assert!(e.starts_with("the run's 1 flows on a datacenter of 21 nodes and 40 directed links"), "{e}");
        assert_eq!(RunBudget::new(&topo, 0, u64::MAX).unwrap().max_windows, u32::MAX);

        // A 1 GB flow on 10 Gbps: at least 0.8 s, 800 windows of 1 ms > 100.
        let b = end_lower_bound(&topo, &[row(0, 5, 1e9, 0.0)]).unwrap();
        let msg = rb.check_bound(&b, "flow 0 (f.csv:2)", 1e-3).unwrap_err();
        assert_eq!(
            msg,
            format!(
                "flow 0 (f.csv:2) cannot finish before 0.8 s (1e9 bytes from 0 s at most 10 Gbps), 800 windows of \
                 0.001 s; the memory budget of {} (set with --memory-budget or NETHEAT_MEMORY_BUDGET) leaves room \
                 for 100 windows of the 40 links (128 B per link and window): use --window 8ms or longer, or raise \
                 the budget",
                format_bytes(budget as f64)
            )
        );
        // A flow that cannot end for 10^12 s would need windows of 10^10 s (over a year): the message
        // points at the flow instead of suggesting such a window.
        let late = end_lower_bound(&topo, &[row(0, 5, 1e9, 1e12)]).unwrap();
        let msg = rb.check_bound(&late, "flow 0 (f.csv:2)", 1.0).unwrap_err();
        assert!(msg.ends_with("check the flow's start time and size (and its hosts' link speeds)"), "{msg}");
        assert!(!msg.contains("--window"), "{msg}");
        // 8 ms windows: exactly 100.
        assert!(rb.check_bound(&b, "x", 8e-3).is_ok());
        assert!(rb.check_reached(0.8, 8e-3).is_ok());
        let msg = rb.check_reached(0.81, 8e-3).unwrap_err();
        assert!(msg.starts_with("the run reached 0.81 s of simulated time, 102 windows of 0.008 s;"), "{msg}");
        assert!(msg.ends_with("use --window 8.1ms or longer, or raise the budget"), "{msg}");
        let none = RunBudget::new(&topo, 1, base).unwrap();
        assert!(none.check_reached(1.0, 1.0).unwrap_err().ends_with("raise the budget or simulate fewer flows"));
        assert!(none.check_reached(0.0, 1.0).is_ok());
    }
}
