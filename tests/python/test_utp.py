"""The ``utp`` scenario kind: a small cluster, each policy, paired jobs."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from netheat._columns import arrow_table
from netheat.errors import NetheatError
from netheat.experiments import load_experiment, points, run_experiment
from netheat.experiments.reproduce import kind_figures

_KEYS = {"bw_median_per_core": "bw-median-per-core", "warmup_s": "warmup"}


def utp_cluster(topology: Path, policy: str, seed: int, hours: float, **kw: float) -> dict[str, Any]:
    """One ``utp`` point without an incident, through ``run_point``, as the old per-kind binding
    returned it: values and bookkeeping, ``series`` as tuples, ``queries`` as
    ``(name, count, nan, p95)`` and ``query_latencies`` as ``(query index, start, latency)``."""
    params: dict[str, Any] = {
        "topology": str(topology),
        "policy": policy,
        "duration": hours * 3600.0,
        "incident-every": 0,
        **{_KEYS[k]: v for k, v in kw.items()},
    }
    out = points.run("utp", params, seed)
    r: dict[str, Any] = {**out["values"], **out["extra"]}
    t = {name: arrow_table(cols).to_pydict() for name, cols in out["tables"].items()}
    s = t["series"]
    r["series"] = list(
        zip(
            s["window_start_s"],
            s["hot_tor_share"],
            s["p98_tor_util"],
            s["migrations"],
            s["warmup"],
            strict=True,
        )
    )
    names = [k.removeprefix("query_count_") for k in out["extra"] if k.startswith("query_count_")]
    r["queries"] = [
        (n, int(out["extra"][f"query_count_{n}"]), math.nan, out["values"][f"query_p95_{n}_s"]) for n in names
    ]
    q = t["queries"]
    r["query_latencies"] = [
        (names.index(n), start, lat)
        for n, start, lat in zip(q["query"], q["start_s"], q["latency_s"], strict=True)
    ]
    return r


DC = (
    '[topology]\nkind = "two-tier"\nracks = 8\nhosts-per-rack = 10\n'
    'host-link = "10Gbps"\ntor-uplink = "20Gbps"\n'
    '[hosts]\ncores = 16\nmemory = "64GB"\n[[rack-group]]\nracks = "0..1"\ntor-uplink = "5Gbps"\n'
)


def test_policies_and_errors(tmp_path: Path) -> None:
    (tmp_path / "dc.toml").write_text(DC)
    topo = tmp_path / "dc.toml"
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
    # The metric is the reduction of the two variants' hot shares, each the mean of the
    # post-warm-up windows of its series (the definition checked in test_policies_and_errors).
    post = series.filter(~pl.col("warmup")).group_by("variant").agg(pl.col("hot_tor_share").mean())
    share = dict(zip(post["variant"].to_list(), post["hot_tor_share"].to_list(), strict=True))
    if share["base"] > 0:
        assert m["ours"] == pytest.approx(100.0 * (1.0 - share["utp"] / share["base"]), rel=1e-9)
    else:
        assert m["ours"] is None


# The mechanism (hotspot paper §5.1, Figs 15-18) on the project's quick UTP cluster
# (experiments/topologies/utp-cluster-small.toml: 40 racks of 25 servers of 32 cores; ToR uplinks
# 10 x 25, 20 x 50 and 10 x 100 Gbps), with a demand level derived before any run, not tuned:
# - At the default 60% core load a rack has 25 x 32 x 0.6 = 480 busy cores when the scheduler
#   spreads them evenly (all racks have the same cores).
# - Every task sends its demand to a peer in another rack, so a ToR's outbound load is the sum of
#   its tasks' demands. Demand per core is log-normal with the default sigma 1 (mean = median x
#   e^0.5 = 1.649 x median) and 5% of jobs are 12x heavier (x 1 + 0.05 x 11 = 1.55): a busy core
#   sends 2.556 x the median on average.
# - The median is set so that a Low rack (25 Gbps) sits at the 75% hot threshold on average under
#   a bandwidth-oblivious scheduler: 18.75 Gbps / (480 x 2.556) = 15.3 Mbps, rounded down to
#   15 Mbps. The Low racks are then hot about half the time, while the whole cluster sends
#   40 x 480 x 2.556 x 15 Mbps = 736 Gbps over 2,250 Gbps of uplinks (33%): ample room for a
#   ToR-aware placement to keep ToRs below 75%.
# Three hours with a 30-minute warm-up (as above), seed 1: 30 windows x 40 ToRs.
# (The same derivation on the 8-rack cluster above gives 15 Mbps too, but there one seed holds too
# few hotspots to tell the policies apart: over seeds 1-6 UTP had more hot windows than
# reactive-only in 2 and migrated more in 3.)
MECH_TOPOLOGY = Path(__file__).resolve().parents[2] / "experiments" / "topologies" / "utp-cluster-small.toml"
MECH_TORS = 40
MECH_MEDIAN_BPS = 15e6
MECH_HOURS = 3.0
MECH_WARMUP_S = 1800.0


def _mech_runs() -> dict[str, dict[str, object]]:
    topo = MECH_TOPOLOGY
    return {
        policy: utp_cluster(
            topo, policy, 1, MECH_HOURS, bw_median_per_core=MECH_MEDIAN_BPS, warmup_s=MECH_WARMUP_S
        )
        for policy in ("bandwidth-oblivious", "reactive-only", "utp")
    }


def _hot_windows(r: dict[str, object]) -> int:
    """Hot (ToR, window) pairs after the warm-up: each window's hot share x the ToRs, summed."""
    series = r["series"]
    assert isinstance(series, list)
    return round(sum(w[1] * MECH_TORS for w in series if not w[4]))


def _apart(a: int, b: int) -> bool:
    """``a`` exceeds ``b`` by more than twice the counting noise of the difference of two
    independent Poisson counts, 2 sqrt(a + b); equal counts never pass."""
    return a - b > 2.0 * math.sqrt(a + b)


def test_utp_lowers_hot_share_and_migrates_less_than_reactive_only() -> None:
    runs = _mech_runs()
    base, reactive, utp = runs["bandwidth-oblivious"], runs["reactive-only"], runs["utp"]
    hot_b, hot_u = (_hot_windows(r) for r in (base, utp))
    # UTP (placement + migration) has fewer hot ToR-windows than the bandwidth-oblivious scheduler
    # (Fig 15, Table 2). Against migration alone the paper compares migrations and network-intensive
    # placements on hot ToRs (Table 3), not hot windows: with UTP as the paper's tweak of the
    # low-priority load-balance objective, both reach about the same hot-window count here (migration
    # clears what placement would have avoided), so placement's effect is checked below, and if the
    # placement score did nothing UTP would be reactive-only (same jobs, same seed) and both fail.
    assert _apart(hot_b, hot_u), (hot_b, hot_u)
    # Without ToR-aware placement, migration has to do all the work (Fig 17; Table 3: -41%
    # migrations with placement).
    m_r, m_u = int(reactive["migrations"]), int(utp["migrations"])
    assert _apart(m_r, m_u), (m_r, m_u)
    # Network-intensive placements land on hot ToRs more often without it (Fig 18; Table 3), by more
    # than twice the binomial standard error of the difference of the two shares.
    n_r, n_u = (int(r["net_intensive_placements"]) for r in (reactive, utp))
    on_r = int(reactive["net_intensive_on_hot"]) / n_r
    on_u = int(utp["net_intensive_on_hot"]) / n_u
    se = math.sqrt(on_r * (1 - on_r) / n_r + on_u * (1 - on_u) / n_u)
    assert on_r - on_u > 2.0 * se, (on_r, on_u, se)
