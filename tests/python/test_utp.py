"""The ``utp`` scenario kind: a small cluster, each policy, paired jobs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import netheat
from netheat._netheat import utp_cluster
from netheat.errors import NetheatError
from netheat.experiments import load_experiment, run_experiment

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
    # 3 hours of 5-minute windows after a 30-minute warm-up.
    assert len(utp["series"]) == 30
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
        '[[metric]]\nname = "red"\nkind = "reduction_pct"\nof = "hot_tor_share"\nnumerator = "utp"\n'
        'denominator = "base"\n'
    )
    run_experiment(load_experiment(exp), tmp_path / "run", workers=1, progress=False)
    m = json.loads((tmp_path / "run" / "summary.json").read_text())["metrics"]["red"]
    assert m["unit"] == "%"
    assert m["ours"] is None or m["ours"] <= 100.0
