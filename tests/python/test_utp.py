"""The ``utp`` scenario kind: a small cluster, each policy, paired jobs."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import netheat
from netheat._netheat import utp_cluster
from netheat.errors import NetheatError
from netheat.experiments import load_experiment, run_experiment
from netheat.experiments.reproduce import kind_figures

DC = (
    '[topology]\nkind = "two-tier"\nracks = 8\nhosts-per-rack = 10\n'
    'host-link = "10Gbps"\ntor-uplink = "20Gbps"\n'
    '[hosts]\ncores = 16\nmemory = "64GB"\n[[rack-group]]\nracks = "0..1"\ntor-uplink = "5Gbps"\n'
)


def test_policies_and_errors(tmp_path: Path) -> None:
    (tmp_path / "dc.toml").write_text(DC)
    topo = netheat.load_topology(tmp_path / "dc.toml")
    base = utp_cluster(topo, "bandwidth-oblivious", 1, 3.0, bw_median_per_core=20e6, warmup_s=1800.0)
    utp = utp_cluster(topo, "utp", 1, 3.0, bw_median_per_core=20e6, warmup_s=1800.0)
    assert base["migrations"] == 0
    # Same jobs: first placements are equal; migrations add placements.
    assert base["placements"] == utp["placements"] - utp["migrations"]
    # 3 hours of 5-minute windows, the first 6 in the 30-minute warm-up.
    assert len(utp["series"]) == 36
    assert [w[4] for w in utp["series"]] == [True] * 6 + [False] * 30
    assert [w[0] for w in utp["series"][:3]] == [0.0, 300.0, 600.0]
    # Migrations per window add up to the total; the baseline never migrates.
    assert sum(w[3] for w in utp["series"]) == utp["migrations"]
    assert all(w[3] == 0 for w in base["series"])
    # The scalar hot share is the mean of the post-warm-up windows (all ToRs in each).
    post = [w[1] for w in utp["series"] if not w[4]]
    assert utp["hot_tor_share"] == pytest.approx(sum(post) / len(post), rel=1e-12)
    # One latency per finished query, matching the per-type counts.
    counts = {k: n for k, (_, n, _, _) in enumerate(utp["queries"])}
    assert len(utp["query_latencies"]) == sum(counts.values())
    for k, n in counts.items():
        assert sum(1 for q in utp["query_latencies"] if q[0] == k) == n
    assert all(lat > 0 and start >= 1800.0 for _, start, lat in utp["query_latencies"])
    assert 0.0 <= utp["hot_tor_share"] <= 1.0
    with pytest.raises(NetheatError, match="bandwidth-oblivious, reactive-only, utp"):
        utp_cluster(topo, "best-fit", 1, 1.0)


def test_experiment_metrics(tmp_path: Path) -> None:
    (tmp_path / "dc.toml").write_text(DC)
    exp = tmp_path / "utp.toml"
    exp.write_text(
        '[experiment]\nname = "utp-small"\nkind = "utp"\n'
        '[base]\ntopology = "dc.toml"\nduration = "2h"\nwarmup = "30min"\nbw-median-per-core = "20Mbps"\n'
        '[[variant]]\nname = "base"\npolicy = "bandwidth-oblivious"\n'
        '[[variant]]\nname = "utp"\npolicy = "utp"\n'
        '[[variant]]\nname = "no-estimates"\npolicy = "utp"\nmissing-estimate-share = 0.5\n'
        '[[metric]]\nname = "red"\nkind = "reduction_pct"\nof = "hot_tor_share"\nnumerator = "utp"\n'
        'denominator = "base"\n'
    )
    loaded = load_experiment(exp)
    run_experiment(loaded, tmp_path / "run", workers=1, progress=False)
    series = pl.read_parquet(tmp_path / "run" / "series.parquet")
    assert series.height == 3 * 24  # three variants, 24 five-minute windows in 2 hours
    assert pl.read_parquet(tmp_path / "run" / "queries.parquet")["query"].unique().sort().to_list() == [
        "large",
        "small",
    ]
    figures = kind_figures(loaded, tmp_path / "run")
    names = sorted(f.path.name for f in figures)
    assert names == ["utp_migrations.png", "utp_over_time.png", "utp_query_cdf.png"]
    assert all(f.path.stat().st_size > 5000 for f in figures)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    m = summary["metrics"]["red"]
    # Jobs without a demand estimate fall back to observed usage, and the summary says so.
    assert [n.split(":")[0] for n in summary["notes"] if "no network-demand estimate" in n] == [
        "no-estimates @ -, seed 0"
    ]
    assert m["unit"] == "%"
    assert m["ours"] is None or m["ours"] <= 100.0
