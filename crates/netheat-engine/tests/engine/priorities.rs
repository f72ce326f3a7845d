//! Strict priority classes.

use super::*;
use netheat_engine::max_min_rates;

#[test]
fn high_priority_takes_link_low_waits() {
    // Priority 0 takes all 10G and finishes its 10 Gbit at 1.0; the priority-1
    // flow gets nothing until then, then 10G for 1 s -> 2.0.
    let r = run(
        vec![10.0 * G],
        vec![flow(1, 1.25e9, 0.0, &[0]).with_priority(1), flow(2, 1.25e9, 0.0, &[0]).with_priority(0)],
    );
    assert_close(rec(&r, 2).finish_s, 1.0, 1e-9);
    assert_close(rec(&r, 1).finish_s, 2.0, 1e-9);
}

#[test]
fn low_priority_uses_what_high_leaves() {
    // High flow capped at 4G; low flow gets 6G. Low (6 Gbit) finishes at 1.0;
    // high (8 Gbit at 4G) at 2.0.
    let g = 1.25e8;
    let r = run(
        vec![10.0 * G],
        vec![
            flow(1, 8.0 * g, 0.0, &[0]).with_priority(0).with_rate_cap(4.0 * G),
            flow(2, 6.0 * g, 0.0, &[0]).with_priority(1),
        ],
    );
    assert_close(rec(&r, 2).finish_s, 1.0, 1e-9);
    assert_close(rec(&r, 1).finish_s, 2.0, 1e-9);
}

#[test]
fn blocked_low_flow_does_not_hold_its_other_link() {
    // Link A (0) 10: high h uses A. Low l uses A and B (1, 10); low m uses B.
    // h takes A entirely, so l gets 0 and m gets all of B.
    let inf = f64::INFINITY;
    let r = max_min_rates(&[10.0, 10.0], &[(vec![0], 1.0, inf, 0), (vec![0, 1], 1.0, inf, 1), (vec![1], 1.0, inf, 1)]);
    assert_eq!(r, vec![10.0, 0.0, 10.0]);
    // Three priority levels on one link with caps: p0 cap 3, p1 cap 5, p2 rest.
    let r = max_min_rates(&[10.0], &[(vec![0], 1.0, inf, 2), (vec![0], 1.0, 5.0, 1), (vec![0], 1.0, 3.0, 0)]);
    assert_eq!(r, vec![2.0, 5.0, 3.0]);
}
