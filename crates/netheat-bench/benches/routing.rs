//! Criterion benchmarks of topology building and path queries.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use netheat_bench::{baraat, baraat_spec};
use netheat_core::Routing;
use netheat_topology::Topology;

fn build(c: &mut Criterion) {
    let spec = baraat_spec();
    c.bench_function("build 36k-host three-tier", |b| b.iter(|| Topology::build(black_box(&spec)).unwrap()));
}

fn paths(c: &mut Criterion) {
    let t = baraat();
    let mut buf = Vec::new();
    let mut i = 0u32;
    c.bench_function("ecmp path query (inter-pod)", |b| {
        b.iter(|| {
            i = (i + 7919) % 36_000;
            let d = (i + 18_000) % 36_000;
            let n = t.num_paths(i, d);
            t.path(black_box(i), black_box(d), (i as usize) % n, &mut buf);
            buf.len()
        })
    });
}

criterion_group!(benches, build, paths);
criterion_main!(benches);
