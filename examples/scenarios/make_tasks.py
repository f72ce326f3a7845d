"""Regenerate tasks.csv: an example of a user's own flow trace with tasks.

1,000 partition-aggregate tasks arriving as a Poisson process over 5 s on
examples/topologies/baraat-36k.toml (36,000 hosts, 40 per rack). Each task
has an aggregator drawn from a pool of 10 hosts and 20 workers in other
racks, each sending one response to it. Response sizes are heavy-tailed, as
in search workloads: 80% of tasks send 2-20 KB per worker, 20% 100 KB-2 MB.
Mean task 4.4 MB, so each aggregator's 1 Gbit/s link runs at about 70%
load: tasks meet at their receivers, where task-aware scheduling matters.
Deterministic (seed 7). Run: python examples/scenarios/make_tasks.py
"""

import csv
from pathlib import Path

import numpy as np

rng = np.random.default_rng(7)
hosts, per_rack = 36_000, 40
aggregators = rng.choice(hosts, 10, replace=False)
t = 0.0
rows = []
for task in range(1000):
    t += rng.exponential(5.0 / 1000)
    agg = int(rng.choice(aggregators))
    heavy = rng.random() < 0.2
    size = rng.uniform(100e3, 2e6) if heavy else rng.uniform(2e3, 20e3)
    workers = []
    while len(workers) < 20:
        w = int(rng.integers(hosts))
        if w // per_rack != agg // per_rack and w not in workers:
            workers.append(w)
    for w in workers:
        rows.append((f"{t:.6f}", w, agg, int(size), task))
with open(Path(__file__).with_name("tasks.csv"), "w", newline="") as f:
    out = csv.writer(f)
    out.writerow(["start_s", "src", "dst", "bytes", "task_id"])
    out.writerows(rows)
