"""A ``chunk-store`` app under ``[storage]`` (the hotspot paper's CCP setting) from Python: the tasks
table's critical-path columns, an experiment's metrics recomputed from its tasks, its figures, and the
bundled ``ccp.toml`` checked."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from netheat.experiments import load_experiment, run_experiment
from netheat.experiments.reproduce import kind_figures
from netheat.scenario import Scenario

ROOT = Path(__file__).resolve().parents[2]

# Six Disk racks of four hosts whose uplinks spread 2x (10 Gbit/s x (2/3 + (2/3) i / 5)), two client
# racks; one HDD per host (10 ms per access, 200 MB/s).
_GROUPS = "".join(
    f'[[rack-group]]\nracks = [{i}]\ntor-uplink = "{10e9 * (2 / 3 + (2 / 3) * i / 5):.0f}bps"\n'
    for i in range(6)
)
DC = (
    '[topology]\nkind = "two-tier"\nracks = 8\nhosts-per-rack = 4\n'
    'host-link = "10Gbps"\ntor-uplink = "40Gbps"\n'
    '[[rack-group]]\nracks = "0..6"\nkind = "disk"\n'
    'hosts = { storage = [{ kind = "hdd", count = 1, capacity = "4TB", read = "200MB/s", write = "200MB/s", '
    'access-time = "10ms" }] }\n' + _GROUPS
)
SCENARIO = (
    '[scenario]\nseed = 1\n[topology]\nfile = "dc.toml"\n[workload]\nduration = "5s"\n'
    '[[workload.app]]\nkind = "chunk-store"\nrate = 1500.0\ntasks = 2000\nstored = 500\nfault-tolerance = 2\n'
    '[storage]\npolicy = "ccp"\ninitial-policy = "uniform"\n'
)


def test_a_read_is_its_disk_time_then_its_network_time(tmp_path: Path) -> None:
    (tmp_path / "dc.toml").write_text(DC)
    (tmp_path / "s.toml").write_text(SCENARIO)
    res = Scenario.from_toml(tmp_path / "s.toml").run()
    tasks = pl.from_arrow(res.tasks)
    assert isinstance(tasks, pl.DataFrame)
    reads = tasks.filter(pl.col("kind") == "chunk-read")
    assert reads.height > 1000
    # A read is a chain (disk, then network): its time is exactly the two parts; its disk part is
    # at least one access plus 100 KB at 200 MB/s.
    gap = (reads["tct_s"] - reads["io_s"] - reads["network_s"]).abs().max()
    assert isinstance(gap, float) and gap < 1e-9
    io_min = reads["io_s"].min()
    assert isinstance(io_min, float) and io_min >= 0.010 + 100e3 / 200e6 - 1e-12
    assert res.stats["chunk_reads"] == reads.height
    assert 0.0 < res.stats["chunk_reads_of_written_share"] < 1.0


def test_experiment_metrics_and_figures(tmp_path: Path) -> None:
    (tmp_path / "dc.toml").write_text(DC)
    (tmp_path / "s.toml").write_text(SCENARIO)
    exp = tmp_path / "ccp.toml"
    exp.write_text(
        '[experiment]\nname = "ccp-small"\nkind = "scenario"\n[base]\nscenario = "s.toml"\n'
        '[[variant]]\nname = "uniform"\n"storage.policy" = "uniform"\n'
        '[[variant]]\nname = "ccp"\n'
        '[[metric]]\nname = "net"\nkind = "reduction_pct"\nof = "chunk-read.network_p95_s"\n'
        'numerator = "ccp"\ndenominator = "uniform"\n'
        '[[metric]]\nname = "total"\nkind = "reduction_pct"\nof = "chunk-read.tct_p95_s"\n'
        'numerator = "ccp"\ndenominator = "uniform"\n'
    )
    loaded = load_experiment(exp)
    run_experiment(loaded, tmp_path / "run", workers=1, progress=False)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    tasks = pl.read_parquet(tmp_path / "run" / "tasks.parquet").filter(pl.col("kind") == "chunk-read")

    def p95(variant: str, column: str) -> float:
        v = tasks.filter(pl.col("variant") == variant)[column].quantile(0.95, interpolation="linear")
        assert isinstance(v, float)
        return v

    for name, column in (("net", "network_s"), ("total", "tct_s")):
        want = 100.0 * (1.0 - p95("ccp", column) / p95("uniform", column))
        assert summary["metrics"][name]["ours"] == pytest.approx(want, rel=1e-9)
    figures = [f.path.name for f in kind_figures(loaded, tmp_path / "run")]
    assert {"chunk_read_network_cdf.png", "chunk_read_total_cdf.png"} <= set(figures)


def test_bundled_ccp_experiment_loads_every_variant() -> None:
    # Every variant of the bundled experiment is read, built and checked (not run) by the loader.
    exp = load_experiment(ROOT / "experiments" / "ccp.toml")
    assert [v.name for v in exp.variants][:3] == ["uniform", "ccp", "ccp-balance"]
    assert {m.name for m in exp.metrics} >= {
        "p95_read_network_latency_reduction_pct",
        "p95_read_total_latency_reduction_pct",
    }


def test_degraded_reads_experiment_thresholds_follow_its_rule() -> None:
    """experiments/degraded-reads.toml: each threshold is the p95 read time of `plain` at its load
    on seed 1, to the millisecond (`degraded`: at 30%, the unloaded p95; `degraded-own-p95-at-*`:
    at their own load), and those variants run only at their load."""
    from netheat.metrics import quantile

    exp = load_experiment(ROOT / "experiments" / "degraded-reads.toml")
    factors = exp.sweep["events.0.factor"]
    assert [round(6 / (40 * f), 2) for f in factors] == [0.3, 0.5, 0.75, 0.9]
    by_name = {v.name: v for v in exp.variants}
    own = zip((50, 75, 90), factors[1:], strict=True)
    want = {"degraded": factors[0]} | {f"degraded-own-p95-at-{u}": f for u, f in own}
    base = Scenario.from_toml(ROOT / "experiments" / "scenarios" / "degraded-reads.toml")
    for name, factor in want.items():
        v = by_name[name]
        assert v.runs_at({"events.0.factor": factor})
        if name != "degraded":
            assert not any(v.runs_at({"events.0.factor": f}) for f in factors if f != factor)
        r = base.with_overrides({"events.0.factor": factor}).run()
        t = pl.from_arrow(r.tables["tasks"])
        assert isinstance(t, pl.DataFrame) and t.height == 3000
        p95_ms = quantile((t["finish_s"] - t["start_s"]).to_numpy(), 0.95) * 1e3
        assert v.params["storage.hedge-reads-after"] == f"{round(p95_ms)}ms", (name, p95_ms)


def test_degraded_reads_on_a_hot_tor_feed_on_themselves() -> None:
    """The experiment's point at 75% with the unloaded threshold: most reads outlast 24 ms once
    parity fetches add up to half their bytes to the hot ToR, and a parity chunk seldom arrives
    before the data chunk it stands in for (both cross the same congested downlink)."""
    s = Scenario.from_toml(ROOT / "experiments" / "scenarios" / "degraded-reads.toml")
    plain = s.with_overrides({"events.0.factor": 0.2}).run()
    hedged = s.with_overrides({"events.0.factor": 0.2, "storage.hedge-reads-after": "24ms"}).run()
    st = hedged.stats
    assert st["chunk_reads_hedged"] > 3000 / 3
    assert st["chunk_reads_hedge_used"] < 0.05 * st["chunk_reads_hedged"]
    mean = [pl.from_arrow(r.tables["tasks"])["tct_s"].mean() for r in (plain, hedged)]  # type: ignore[union-attr]
    assert mean[1] > 2 * mean[0]
