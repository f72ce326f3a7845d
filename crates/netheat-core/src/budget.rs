//! The memory budget: how much memory a run may plan to hold.
//!
//! Inputs that are ordinary to write but huge to run (a flow of 10^30 bytes,
//! a 1 ns telemetry window, a trillion racks, a workload at load 10^30) are
//! refused *before* anything large is allocated: every reader and the
//! simulation estimate what they would hold with the per-item costs below and
//! compare it with [`memory_budget`].
//!
//! The budget is, in order of precedence:
//!
//! 1. a scoped override for the current thread ([`with_memory_budget`], for
//!    tests and embedders);
//! 2. the process-wide value set with [`set_memory_budget`] (the command
//!    line's `--memory-budget`);
//! 3. the environment variable `NETHEAT_MEMORY_BUDGET`, a size such as
//!    `4GiB` or `512MB` (an invalid value is an error returned by
//!    [`memory_budget`], never a panic);
//! 4. half of the physical memory: the smaller of `/proc/meminfo`'s
//!    `MemTotal` and the cgroup limit (v2 `memory.max`, v1
//!    `memory.limit_in_bytes`; `max` or absurd values mean no limit), or
//!    [`FALLBACK_BUDGET`] when neither can be read.
//!
//! Estimates are rough but conservative: each constant is an upper bound of
//! what was measured, so a run estimated under the budget does not exhaust a
//! machine that has that much memory.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use thiserror::Error;

use crate::units::{parse_bytes, UnitError};

/// Memory held per flow of a run, everything included: the input row
/// (`FlowRow`, 80 B) and its line, the engine's flow state, hot fields, id
/// index entry, per-link list entries and completion-heap entries, the
/// result record, the output columns handed to Python and the Arrow `flows`
/// table built from them.
///
/// Measured with `netheat simulate` (a flow CSV of random host pairs on
/// `examples/topologies/baraat-36k.toml`, 36,000 hosts, 10 KB-10 MB flows,
/// `--window 1h` so that link windows are negligible) as the growth of RSS
/// between 10^5 and 10^6 flows: 950 B per flow while the engine holds every
/// flow running at once (all starting at 0; sampled during the run, which
/// takes longer than ten minutes at this size), 490 B per flow in peak RSS
/// over a whole run, output included, when they arrive over 10 s. Rounded
/// up to 2 KiB.
pub const BYTES_PER_FLOW: u64 = 2048;

/// Memory per flow of a run that does not keep its flows (a scenario whose
/// `scenario.record` leaves `flows` out): the engine forgets a flow when it
/// finishes, so what stays per flow is the runner's entry for it (8 B) and
/// the engine's id index (4 B), beside the flow's task step
/// ([`BYTES_PER_TASK_STEP`], counted apart); flows in flight hold their
/// state only while they run.
///
/// Measured as the growth of peak RSS of `netheat run
/// examples/scenarios/baraat-aggregation.toml` (fair share, `scenario.record
/// = []`) between 2,000 and 20,000 tasks of 39 flows: 145 B per flow in all,
/// task steps included (with every table recorded: 452 B; 79 B and 310 B
/// since task dependencies are kept in compressed rows, 2026-11-28,
/// `benches/memory_bench.py`). Rounded up to
/// 64 B; with its step and its task's share ([`BYTES_PER_TASK_STEP`],
/// [`BYTES_PER_TASK`]) such a flow is charged 64 + 64 + 1024 / 39 = 154 B.
pub const BYTES_PER_UNKEPT_FLOW: u64 = 64;

/// Memory per flow of a run of Baraat's SPC protocol simulator (or its RCP
/// form, `scheduling.policy = "spc"` / `"rcp"`) that does not keep its
/// `flows` table. The simulator holds every flow of the run from the start
/// to the end: the flow's protocol state (64 B), its path and the ports'
/// answers along it (20 B a link), its release list, its start and finish
/// times, and whether it is a flow step; the scenario's DAG steps and the
/// simulator's inputs are let go as the flows are built.
///
/// Measured by `benches/memory_bench.py` (`make bench`) as the growth of
/// peak RSS of `netheat run` on `examples/topologies/baraat-36k.toml`
/// (2026-11-29): two-stage aggregation (1,230 flows a task), 600 to 2,400
/// tasks, 216 KB a task (176 B a flow, with the task's steps); one-stage
/// (39 flows), 5,000 to 20,000 tasks, 6.1 KB a task (155 B a flow). Rounded
/// up to 256 B; with its step and its task's share ([`BYTES_PER_TASK_STEP`],
/// [`BYTES_PER_TASK`]) such a flow is charged 1.8-2.3 times what it holds.
/// (Until the simulator let its inputs go, a flow held 370-404 B and was
/// charged 512 B.)
pub const BYTES_PER_PROTOCOL_FLOW: u64 = 256;

/// Memory per flow of an SPC run that keeps its `flows` table: what
/// [`BYTES_PER_PROTOCOL_FLOW`] counts and the flow's row, in Rust and in
/// the table Python builds. Measured as above, one-stage with the `flows`
/// and `links` tables: 12.8 KB a task (329 B a flow); charged 512 B, 1.8
/// times what it holds with its step and its task's share.
pub const BYTES_PER_PROTOCOL_FLOW_KEPT: u64 = 512;

/// Memory per directed link and telemetry window: the engine's sparse
/// `(u32, f64)` entry (16 B) and the dense `links` table Python builds from
/// the entries (every link in every window: link, layer, direction, source
/// and destination codes of 4 B, capacity, window start and end, and
/// utilization of 8 B: 52 B per row), with `numpy`'s temporaries while it
/// is built and the Parquet writer's buffers.
///
/// Measured as the growth of peak RSS of `netheat simulate` on
/// `examples/topologies/two-tier-4x4.toml` (40 directed links, every one
/// loaded) with `--window 1ms` between 10^2 s and 10^3 s of traffic (4 *
/// 10^6 and 4 * 10^7 link windows): 86 B per link window. Rounded up to
/// 128 B.
pub const BYTES_PER_LINK_WINDOW: u64 = 128;

/// Memory per node (host or switch) of a datacenter: the `Node` record, its
/// name and name-index entry, a host's `Host` record in Rust, and the
/// `nodes()` columns in Python (a name and four small integers per node).
///
/// Measured as the growth of peak RSS when loading two-tier datacenters of
/// 10^5 and 10^6 hosts (40 per rack, one port each) and calling `nodes()`
/// and `links()`, less the links' share (see [`BYTES_PER_LINK`]): 500 B per
/// node. Rounded up to 1 KiB.
pub const BYTES_PER_NODE: u64 = 1024;

/// Memory per directed link of a datacenter in a run: the `Link` record and
/// host `Port`, the `links()` columns in Python (nine values per link), the
/// engine's per-link state (capacity, load, flow list, telemetry cursor)
/// and the links table's per-link columns.
///
/// Measured between datacenters of 250,000 hosts with 1 and 4 ports each
/// (0.5 and 2 million directed links): 390 B per directed link when loaded
/// with `nodes()` and `links()` called, 750 B in the peak RSS of a
/// `netheat simulate` of one flow and one window. Rounded up to 1 KiB.
pub const BYTES_PER_LINK: u64 = 1024;

/// Memory per storage device of a host (`StorageDevice`, 40 B, cloned into
/// every host). Rounded up to 64 B.
pub const BYTES_PER_DEVICE: u64 = 64;

/// Memory per application task, beside its steps ([`BYTES_PER_TASK_STEP`])
/// and flows ([`flow_bytes`]): the task graph's header and the runner's
/// state and record for the task, with their lists' allocations, and the
/// task's row of the `tasks` table in Rust and in Python.
///
/// Measured, with [`BYTES_PER_TASK_STEP`], by `benches/memory_bench.py`
/// (`make bench`): the growth of peak RSS of `netheat run` on
/// `examples/topologies/baraat-36k.toml` with `scenario.record = []` (flows
/// at [`BYTES_PER_UNKEPT_FLOW`]) between two sizes of three task shapes
/// (2026-11-28, task dependencies in compressed rows):
/// - memcache requests (3 steps, 2 flows), 10^5 to 4 * 10^5 tasks: 817 B a
///   task;
/// - one-stage aggregation (39 flow steps), 5,000 to 20,000 tasks: 3,082 B;
/// - two-stage aggregation (1,200 flow steps), 600 to 2,400 tasks: 91.0 KB
///   (79.3 KB from 2,400 to 9,600).
///
/// Less 64 B a flow that leaves 689 = T + 3 S, 586 = T + 39 S and 14,202 =
/// T + 1,200 S: a task's own cost depends on its shape by more than 36
/// steps add, and is at most about 700 B; a step's at most 12 B. Rounded
/// up: 1 KiB a task.
pub const BYTES_PER_TASK: u64 = 1024;

/// Memory per step of an application task (a `Step` of the task graph,
/// its dependency list, and the runner's per-step entries: dependencies
/// left, children, finish time), on top of [`BYTES_PER_TASK`] for its task
/// and [`flow_bytes`] for each flow (every flow step becomes an engine
/// flow). Measured as [`BYTES_PER_TASK`] says: at most 12 B a step
/// (32 B before the dependencies were kept in compressed rows). Rounded up
/// to 64 B. (Until 2026-11-28 a step was charged 256 B and a task nothing:
/// 3.3 times the measured growth of aggregation tasks then, whose steps are
/// all flows, and 12% under that of memcache requests.)
/// `benches/memory_bench.py` (`make bench`) measures the three shapes again
/// and checks that the estimate stays 1 to 4 times their growth.
pub const BYTES_PER_TASK_STEP: u64 = 64;

/// What `tasks` application tasks with `steps` steps in all hold besides
/// their flows: `tasks` x [`BYTES_PER_TASK`] + `steps` x
/// [`BYTES_PER_TASK_STEP`] (in `f64`, so no count overflows).
pub fn task_overhead_bytes(tasks: f64, steps: f64) -> f64 {
    tasks * BYTES_PER_TASK as f64 + steps * BYTES_PER_TASK_STEP as f64
}

/// Budget when the physical memory cannot be read: 4 GiB.
pub const FALLBACK_BUDGET: u64 = 4 << 30;

/// Cgroup limits at or above this (4 EiB) mean "no limit" (cgroup v1 writes
/// `9223372036854771712` for no limit).
const ABSURD_LIMIT: u64 = 1 << 62;

/// Name of the environment variable that sets the budget.
pub const BUDGET_ENV: &str = "NETHEAT_MEMORY_BUDGET";

/// Where the budget is set, quoted in every "over budget" message.
pub const BUDGET_HOW: &str = "set with --memory-budget or NETHEAT_MEMORY_BUDGET";

/// A budget that cannot be used, or an estimate over it.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum BudgetError {
    /// `NETHEAT_MEMORY_BUDGET` is not a size.
    #[error("{BUDGET_ENV}: {0}")]
    Env(#[from] UnitError),
    /// `NETHEAT_MEMORY_BUDGET` is a size below one byte.
    #[error("{BUDGET_ENV}: `{0}` is less than 1 byte; give a size such as \"4GiB\"")]
    EnvTooSmall(String),
    /// A budget of zero bytes was asked for.
    #[error("a memory budget must be at least 1 byte, got 0")]
    Zero,
    /// An estimate over the budget (the message says what and how to lower it).
    #[error("{what} would hold about {}, over the memory budget of {} ({BUDGET_HOW}); {hint}", format_bytes(*.estimate_bytes), format_bytes(*.budget_bytes as f64))]
    Over {
        /// What would be held ("the flows of the trace", ...).
        what: String,
        /// Estimated bytes.
        estimate_bytes: f64,
        /// The budget in bytes.
        budget_bytes: u64,
        /// What to change.
        hint: String,
    },
}

/// Process-wide budget set with [`set_memory_budget`]; 0 = not set.
static PROCESS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Scoped budget of this thread ([`with_memory_budget`]); 0 = none.
    static SCOPED: Cell<u64> = const { Cell::new(0) };
    /// Scoped bytes per flow of this thread ([`with_flow_bytes`]); 0 = none.
    static FLOW_BYTES: Cell<u64> = const { Cell::new(0) };
}

/// Runs `f` with each flow counted as `bytes` in this thread's estimates
/// ([`flow_bytes`]): a run that does not keep its flows passes
/// [`BYTES_PER_UNKEPT_FLOW`]. Restores the previous setting afterwards,
/// also on panic. Zero means "the default".
pub fn with_flow_bytes<R>(bytes: u64, f: impl FnOnce() -> R) -> R {
    with_scoped(&FLOW_BYTES, bytes, f)
}

/// Runs `f` with this thread's `cell` set to `value`, restoring it
/// afterwards, also on panic.
fn with_scoped<R>(cell: &'static std::thread::LocalKey<Cell<u64>>, value: u64, f: impl FnOnce() -> R) -> R {
    struct Restore(&'static std::thread::LocalKey<Cell<u64>>, u64);
    impl Drop for Restore {
        fn drop(&mut self) {
            self.0.with(|s| s.set(self.1));
        }
    }
    let _restore = Restore(cell, cell.with(|s| s.replace(value)));
    f()
}

/// Bytes a flow holds in this thread's estimates: [`BYTES_PER_FLOW`], or
/// what [`with_flow_bytes`] set.
pub fn flow_bytes() -> u64 {
    match FLOW_BYTES.with(Cell::get) {
        0 => BYTES_PER_FLOW,
        b => b,
    }
}

/// Sets the process-wide budget in bytes (overrides `NETHEAT_MEMORY_BUDGET`
/// and the default). Zero is an error.
pub fn set_memory_budget(bytes: u64) -> Result<(), BudgetError> {
    if bytes == 0 {
        return Err(BudgetError::Zero);
    }
    PROCESS.store(bytes, Ordering::Relaxed);
    Ok(())
}

/// Runs `f` with a budget of `bytes` seen by this thread only (tests,
/// embedders that run several sizes side by side); restores the previous
/// scoped budget afterwards, also on panic. Zero means "no scoped budget".
pub fn with_memory_budget<R>(bytes: u64, f: impl FnOnce() -> R) -> R {
    with_scoped(&SCOPED, bytes, f)
}

/// The budget in bytes (see the module docs for where it comes from).
pub fn memory_budget() -> Result<u64, BudgetError> {
    let scoped = SCOPED.with(Cell::get);
    if scoped != 0 {
        return Ok(scoped);
    }
    let process = PROCESS.load(Ordering::Relaxed);
    if process != 0 {
        return Ok(process);
    }
    match std::env::var(BUDGET_ENV) {
        Ok(text) => parse_budget(&text),
        // Unset, or not Unicode (then not a size either: say so).
        Err(std::env::VarError::NotPresent) => Ok(default_budget()),
        Err(std::env::VarError::NotUnicode(_)) => {
            Err(BudgetError::Env(UnitError::NotANumber { input: "<not UTF-8>".into(), example: "\"4GiB\"" }))
        }
    }
}

/// Parses a budget such as `4GiB` (what `NETHEAT_MEMORY_BUDGET` holds).
pub fn parse_budget(text: &str) -> Result<u64, BudgetError> {
    let v = parse_bytes(text)?;
    if v < 1.0 {
        return Err(BudgetError::EnvTooSmall(crate::units::clip(text, 60)));
    }
    // Saturates at u64::MAX for absurdly large sizes.
    Ok(v as u64)
}

/// Half of the physical memory (cached): see the module docs.
pub fn default_budget() -> u64 {
    static DEFAULT: OnceLock<u64> = OnceLock::new();
    *DEFAULT.get_or_init(|| {
        let read = |p: &str| std::fs::read_to_string(p).ok();
        let own = read("/proc/self/cgroup").and_then(|s| own_cgroup_v2(&s));
        let own_limit = own.and_then(|dir| read(&format!("/sys/fs/cgroup{dir}/memory.max")));
        let limits =
            [read("/sys/fs/cgroup/memory.max"), own_limit, read("/sys/fs/cgroup/memory/memory.limit_in_bytes")];
        budget_from(read("/proc/meminfo").as_deref(), limits.iter().flatten().map(String::as_str))
    })
}

/// The cgroup v2 path of this process (`0::/path` in `/proc/self/cgroup`).
fn own_cgroup_v2(text: &str) -> Option<String> {
    let path = text.lines().find_map(|l| l.strip_prefix("0::"))?.trim();
    (path != "/" && !path.is_empty() && !path.contains("..")).then(|| path.to_string())
}

/// Half of the smaller of `MemTotal` (from the text of `/proc/meminfo`) and
/// the cgroup limits (texts of `memory.max` / `memory.limit_in_bytes`);
/// [`FALLBACK_BUDGET`] when none can be read.
pub fn budget_from<'a>(meminfo: Option<&str>, cgroup_limits: impl IntoIterator<Item = &'a str>) -> u64 {
    let total = meminfo.and_then(|m| {
        let line = m.lines().find(|l| l.starts_with("MemTotal:"))?;
        let mut parts = line["MemTotal:".len()..].split_whitespace();
        let n: u64 = parts.next()?.parse().ok()?;
        let mult = match parts.next() {
            Some("kB") | Some("KB") | Some("kiB") => 1024,
            None => 1,
            Some(_) => return None,
        };
        n.checked_mul(mult).filter(|&b| b > 0)
    });
    let limit = cgroup_limits
        .into_iter()
        .filter_map(|s| s.trim().parse::<u64>().ok())
        .filter(|&b| b > 0 && b < ABSURD_LIMIT)
        .min();
    match (total, limit) {
        (Some(t), Some(l)) => t.min(l) / 2,
        (Some(x), None) | (None, Some(x)) => x / 2,
        (None, None) => FALLBACK_BUDGET,
    }
    .max(1)
}

/// `Ok` when `estimate_bytes` fits the budget; otherwise
/// [`BudgetError::Over`], whose message reads "`what` would hold about
/// 12.4 GiB, over the memory budget of 11.7 GiB (set with --memory-budget or
/// NETHEAT_MEMORY_BUDGET); `hint`". A non-finite estimate is over any budget.
pub fn check_budget(what: &str, estimate_bytes: f64, hint: &str) -> Result<(), BudgetError> {
    let budget = memory_budget()?;
    check_against(budget, what, estimate_bytes, hint)
}

/// [`check_budget`] against a given budget.
pub fn check_against(budget: u64, what: &str, estimate_bytes: f64, hint: &str) -> Result<(), BudgetError> {
    if estimate_bytes.is_finite() && estimate_bytes <= budget as f64 {
        return Ok(());
    }
    Err(BudgetError::Over {
        what: what.to_string(),
        estimate_bytes: if estimate_bytes.is_nan() { f64::INFINITY } else { estimate_bytes },
        budget_bytes: budget,
        hint: hint.to_string(),
    })
}

/// The "over budget" message of [`check_budget`] if the estimate does not
/// fit (or the budget cannot be read), else `None`.
pub fn over_budget(what: &str, estimate_bytes: f64, hint: &str) -> Option<String> {
    check_budget(what, estimate_bytes, hint).err().map(|e| e.to_string())
}

/// How many items of `bytes_each` fit in the budget (at least 1).
pub fn items_within(budget: u64, bytes_each: u64) -> u64 {
    (budget / bytes_each.max(1)).max(1)
}

/// A size in binary units with three significant digits: `512 B`,
/// `12.4 GiB`, `1.5 EiB`; sizes beyond 1024 EiB in scientific notation.
pub fn format_bytes(bytes: f64) -> String {
    if !bytes.is_finite() {
        return "more than can be counted".into();
    }
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = bytes.max(0.0);
    for (i, u) in UNITS.iter().enumerate() {
        if v < 1024.0 || i == UNITS.len() - 1 {
            if i == UNITS.len() - 1 && v >= 1024.0 {
                return format!("{bytes:.2e} B");
            }
            return if i == 0 {
                format!("{v:.0} {u}")
            } else if v < 10.0 {
                format!("{v:.2} {u}")
            } else if v < 100.0 {
                format!("{v:.1} {u}")
            } else {
                format!("{v:.0} {u}")
            };
        }
        v /= 1024.0;
    }
    unreachable!("the loop returns at the last unit")
}

/// A count with thousands separators (`1,000,000`), or as
/// [`format_number`] writes it from 10^15 on and for non-integers (`8e20`).
pub fn format_count(n: f64) -> String {
    if !n.is_finite() {
        return "infinitely many".into();
    }
    if n >= 1e15 || n.fract() != 0.0 || n < 0.0 {
        return format_number(n);
    }
    let digits = format!("{}", n as u64);
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A number with four significant digits, trailing zeros dropped, in
/// scientific notation outside `[0.001, 10^6)`: `0.8`, `0.1016`, `8e20`,
/// `1.25e34`, `1e300`.
pub fn format_number(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let a = x.abs();
    if (1e-3..1e6).contains(&a) {
        let decimals = (3 - a.log10().floor() as i32).max(0) as usize;
        let s = format!("{x:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    } else {
        let s = format!("{x:.3e}");
        match s.split_once('e') {
            Some((m, e)) if m.contains('.') => format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.')),
            _ => s,
        }
    }
}

/// A bandwidth such as `10 Gbps`, `1 bps`, `2.5 Tbps` (see [`format_number`]).
pub fn format_bps(bps: f64) -> String {
    const UNITS: [(&str, f64); 4] = [("Tbps", 1e12), ("Gbps", 1e9), ("Mbps", 1e6), ("Kbps", 1e3)];
    // The largest unit the value reaches (Tbps however large).
    match UNITS.iter().find(|&&(_, s)| bps >= s) {
        Some(&(u, s)) => format!("{} {u}", format_number(bps / s)),
        None => format!("{} bps", format_number(bps)),
    }
}

/// A duration rounded *up* to two significant digits in the largest unit
/// where it is at least 1, written so that [`crate::parse_duration`] reads
/// it back: `910ns`, `8ms`, `2.5min`, `20h`, `1.2e289d`. For suggesting the
/// smallest window that fits.
pub fn format_duration_up(seconds: f64) -> String {
    if !(seconds.is_finite() && seconds > 0.0) {
        return format!("{seconds}s");
    }
    const UNITS: [(&str, f64); 7] =
        [("d", 86400.0), ("h", 3600.0), ("min", 60.0), ("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)];
    let (unit, scale) = UNITS.iter().copied().find(|&(_, s)| seconds >= s).unwrap_or(("ns", 1e-9));
    let v = seconds / scale;
    // Two significant digits, rounded up (with a little slack for the
    // division's rounding so an exact 2.5 stays 2.5).
    let mag = 10f64.powi(v.log10().floor() as i32 - 1);
    let r = ((v / mag) * (1.0 - 1e-12)).ceil() * mag;
    if r >= 1e6 {
        format!("{r:.1e}{unit}")
    } else if r >= 10.0 {
        format!("{r:.0}{unit}")
    } else {
        let s = format!("{r:.1}");
        let s = s.strip_suffix(".0").unwrap_or(&s).to_string();
        format!("{s}{unit}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_half_the_smaller_of_memory_and_cgroup() {
        let mi = "MemTotal:       24000000 kB\nMemFree: 1 kB\n";
        assert_eq!(budget_from(Some(mi), []), 24_000_000 * 1024 / 2);
        // A cgroup limit below the memory wins; "max" and absurd values do not count.
        assert_eq!(budget_from(Some(mi), ["max\n", "9223372036854771712\n", "4294967296\n"]), 2 << 30);
        assert_eq!(budget_from(Some(mi), ["max\n"]), 24_000_000 * 1024 / 2);
        assert_eq!(budget_from(None, ["1073741824"]), 512 << 20);
        assert_eq!(budget_from(None, []), FALLBACK_BUDGET);
        assert_eq!(budget_from(Some("garbage"), ["max"]), FALLBACK_BUDGET);
        assert_eq!(own_cgroup_v2("0::/user.slice/x.scope\n").as_deref(), Some("/user.slice/x.scope"));
        assert_eq!(own_cgroup_v2("0::/\n"), None);
    }

    #[test]
    fn env_values_parse_or_fail_cleanly() {
        assert_eq!(parse_budget("4GiB").unwrap(), 4 << 30);
        assert_eq!(parse_budget("512MB").unwrap(), 512_000_000);
        assert!(matches!(parse_budget("lots"), Err(BudgetError::Env(_))));
        assert!(matches!(parse_budget("4096"), Err(BudgetError::Env(_))), "a bare number has no unit");
        assert!(matches!(parse_budget("0B"), Err(BudgetError::EnvTooSmall(_))));
        let msg = parse_budget("lots").unwrap_err().to_string();
        assert!(msg.starts_with("NETHEAT_MEMORY_BUDGET: `lots`"), "{msg}");
        assert_eq!(parse_budget("1e300PiB").unwrap(), u64::MAX, "saturates");
    }

    #[test]
    fn scoped_and_process_budgets() {
        assert_eq!(set_memory_budget(0), Err(BudgetError::Zero));
        with_memory_budget(1000, || {
            assert_eq!(memory_budget().unwrap(), 1000);
            with_memory_budget(7, || assert_eq!(memory_budget().unwrap(), 7));
            assert_eq!(memory_budget().unwrap(), 1000);
            assert!(check_budget("x", 1000.0, "h").is_ok());
            assert!(check_budget("x", 1001.0, "h").is_err());
            assert!(check_budget("x", f64::NAN, "h").is_err());
            assert!(check_budget("x", f64::INFINITY, "h").is_err());
            assert!(over_budget("x", 10.0, "h").is_none());
        });
        let r = std::panic::catch_unwind(|| with_memory_budget(5, || panic!("boom")));
        assert!(r.is_err());
        assert_ne!(SCOPED.with(Cell::get), 5, "restored after a panic");
    }

    #[test]
    fn flow_bytes_are_scoped_to_the_call() {
        assert_eq!(flow_bytes(), BYTES_PER_FLOW);
        let inner = with_flow_bytes(BYTES_PER_UNKEPT_FLOW, || (flow_bytes(), with_flow_bytes(7, flow_bytes)));
        assert_eq!(inner, (BYTES_PER_UNKEPT_FLOW, 7));
        assert_eq!(flow_bytes(), BYTES_PER_FLOW);
        let _ = std::panic::catch_unwind(|| with_flow_bytes(9, || panic!("inside")));
        assert_eq!(flow_bytes(), BYTES_PER_FLOW, "restored after a panic");
    }

    #[test]
    fn over_budget_message() {
        let msg = with_memory_budget(11_700 << 20, || {
            over_budget("the flows", 12.4 * (1u64 << 30) as f64, "use fewer flows").unwrap()
        });
        assert_eq!(
            msg,
            "the flows would hold about 12.4 GiB, over the memory budget of 11.4 GiB \
             (set with --memory-budget or NETHEAT_MEMORY_BUDGET); use fewer flows"
        );
    }

    #[test]
    fn formats() {
        assert_eq!(format_bytes(512.0), "512 B");
        assert_eq!(format_bytes(1536.0), "1.50 KiB");
        assert_eq!(format_bytes(256.0 * 1048576.0), "256 MiB");
        assert_eq!(format_bytes(f64::INFINITY), "more than can be counted");
        assert_eq!(format_bytes(1e30), "1.00e30 B");
        assert_eq!(format_count(1_000_000.0), "1,000,000");
        assert_eq!(format_count(999.0), "999");
        assert_eq!(format_count(1e30), "1e30");
        assert_eq!(format_count(1.25e34), "1.25e34");
        assert_eq!(format_number(0.8), "0.8");
        assert_eq!(format_number(0.10160000001), "0.1016");
        assert_eq!(format_number(8e20), "8e20");
        assert_eq!(format_number(1.25e34), "1.25e34");
        assert_eq!(format_number(1e300), "1e300");
        assert_eq!(format_number(123456.0), "123456");
        assert_eq!(format_number(-2.5e-7), "-2.5e-7");
        assert_eq!(format_bps(1e10), "10 Gbps");
        assert_eq!(format_bps(1.0), "1 bps");
        assert_eq!(format_bps(2.5e15), "2500 Tbps");
        assert_eq!(format_bps(2.5e8), "250 Mbps");
        assert_eq!(format_bps(999.0), "999 bps");
        assert_eq!(format_duration_up(2.5 * 60.0), "2.5min");
        assert_eq!(format_duration_up(0.008), "8ms");
        assert_eq!(format_duration_up(9.084e-7), "910ns");
        assert_eq!(format_duration_up(71526.0), "20h");
        assert_eq!(format_duration_up(1e300), "1.2e295d");
        for s in [1e-9, 3.3e-7, 0.008, 1.0, 59.9, 61.0, 7200.5, 1e7, 1e300] {
            let text = format_duration_up(s);
            let back = crate::parse_duration(&text).unwrap();
            assert!(back >= s * (1.0 - 1e-9), "{s} -> {text} -> {back}");
            assert!(back <= s * 1.11 + 1e-18, "{s} -> {text} -> {back}");
        }
    }
}
