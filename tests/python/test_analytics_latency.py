"""netheat.analytics.latency: association, inflation, Load-tolerance, Hotspot-inflation, skips."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from netheat import InputError
from netheat.analytics import latency as lt
from netheat.analytics.io import scan_latency, scan_links
from netheat.analytics.report import AnalysisConfig, analyze

# p95 latency per 5% bucket (lower edge): flat at 1.0 up to 45, then 1.2, 1.4, exactly 1.5 at 60,
# 1.8, 2.0 at 70, 2.5 at 75. Bucket 0 has too few samples (5 < 20) to be the base, so the base is 5.
LATENCY = {0: 0.5, **{b: 1.0 for b in range(5, 50, 5)}, 50: 1.2, 55: 1.4, 60: 1.5, 65: 1.8, 70: 2.0, 75: 2.5}


def build(tmp_path: Path) -> tuple[Path, Path]:
    """One ToR link whose 30 s window w has utilization in the middle of bucket 5w; 20 ops per bucket."""
    links, ops = [], []
    for w, (b, lat) in enumerate(sorted(LATENCY.items())):
        for d in ("up", "down"):
            u = (b + 2.0) / 100 if d == "up" else 0.01
            links.append(
                {
                    "timestamp": w * 30.0,
                    "link": "u1",
                    "direction": d,
                    "layer": "tor-agg",
                    "rack": "tor1",
                    "uplink_class": "High",
                    "utilization": u,
                }
            )
        for i in range(5 if b == 0 else 20):
            ops.append(
                {
                    "start_s": w * 30.0 + i,
                    "latency_s": lat,
                    "network_latency_s": lat / 2,
                    "op": "hdd-read" if i % 2 else "ssd-read",
                    "qos": "gold",
                    "size_bytes": 4096.0,
                    "tors": "tor1",
                    "links": "",
                }
            )
    # Skips: no link at all, an unknown ToR, and a time with no link sample.
    ops.append(
        {
            "start_s": 1.0,
            "latency_s": 1.0,
            "network_latency_s": None,
            "op": "x",
            "qos": "gold",
            "size_bytes": 1.0,
            "tors": "",
            "links": "",
        }
    )
    ops.append(
        {
            "start_s": 1.0,
            "latency_s": 1.0,
            "network_latency_s": None,
            "op": "x",
            "qos": "gold",
            "size_bytes": 1.0,
            "tors": "tor99",
            "links": "",
        }
    )
    ops.append(
        {
            "start_s": 1e6,
            "latency_s": 1.0,
            "network_latency_s": None,
            "op": "x",
            "qos": "gold",
            "size_bytes": 1.0,
            "tors": "",
            "links": "u1",
        }
    )
    lp, sp = tmp_path / "links.csv", tmp_path / "lat.csv"
    pl.DataFrame(links).write_csv(lp)
    pl.DataFrame(ops).write_csv(sp)
    return lp, sp


def test_load_tolerance_and_hotspot_inflation(tmp_path: Path) -> None:
    lp, sp = build(tmp_path)
    assoc = lt.associate(scan_links(lp), scan_latency(sp))
    assert assoc.skips == {lt.SKIP_NO_LINK: 1, lt.SKIP_UNKNOWN: 1, lt.SKIP_NO_WINDOW: 1}
    assert assoc.df.height == 5 + 20 * (len(LATENCY) - 1)
    # Max over both directions: the "up" utilization.
    assert sorted(assoc.df["bucket_pct"].unique().to_list()) == sorted(LATENCY)
    table = lt.inflation_table(assoc.df)
    assert table["base_bucket_pct"].unique().to_list() == [5]
    assert table.filter(pl.col("bucket_pct") == 60)["inflation_p95"][0] == pytest.approx(1.5)
    assert lt.load_tolerance(table, 1.5)["load_tolerance"][0] == 60
    assert lt.load_tolerance(table, 2.0)["load_tolerance"][0] == 70
    assert lt.load_tolerance(table, 3.0)["load_tolerance"][0] is None
    assert lt.hotspot_inflation(table)["hotspot_inflation"][0] == pytest.approx(2.5)


def test_views_network_op_qos_size_and_uplink_classes(tmp_path: Path) -> None:
    lp, sp = build(tmp_path)
    assoc = lt.associate(scan_links(lp), scan_latency(sp))
    buckets, summary = lt.latency_analysis(assoc)
    views = set(zip(summary["metric"].to_list(), summary["view"].to_list(), strict=True))
    assert ("network latency", "all") in views and ("latency", "op") in views
    assert ("latency", "qos") in views and ("latency", "size") in views
    # Every view is the same latency curve (or half of it), so every Load-tolerance(1.5) is 60... except
    # per op, where each op has only 10 samples per bucket (< 20): no bucket qualifies.
    for row in summary.iter_rows(named=True):
        if row["view"] == "op":
            assert row["load_tolerance_1.5"] is None
        else:
            assert row["load_tolerance_1.5"] == 60, row
            assert row["hotspot_inflation"] == pytest.approx(2.5)
    assert buckets.height > 0
    req = lt.requests_by_uplink_class(assoc)
    assert req["uplink_class"].unique().to_list() == ["High"]
    assert req.filter(pl.col("bucket_pct") == 60)["requests"][0] == 20
    # One class: it has every bucket's requests.
    assert req["share"].to_list() == pytest.approx([1.0] * len(LATENCY))


def test_requests_by_uplink_class_are_shares_of_each_bucket() -> None:
    # Figure 14: for each utilization level, the share of its requests per uplink class.
    # Bucket 10: 3 High + 1 Low; bucket 80: 1 Medium + 3 Low; bucket 95: 2 without a class.
    rows = [(10, "High")] * 3 + [(10, "Low")] + [(80, "Medium")] + [(80, "Low")] * 3 + [(95, None)] * 2
    df = pl.DataFrame(rows, schema={"bucket_pct": pl.Int64, "uplink_class": pl.String}, orient="row")
    req = lt.requests_by_uplink_class(lt.Association(df=df))
    got = {(b, c): (n, sh) for b, c, n, sh in req.iter_rows()}
    assert got == {
        (10, "High"): (3, pytest.approx(0.75)),
        (10, "Low"): (1, pytest.approx(0.25)),
        (80, "Low"): (3, pytest.approx(0.75)),
        (80, "Medium"): (1, pytest.approx(0.25)),
        (95, "unknown"): (2, pytest.approx(1.0)),
    }
    # (Normalized within each class instead, Low would be 1/4 at 10 and 3/4 at 80.)


def test_size_buckets_are_the_papers() -> None:
    # Appendix B / Figure 21: 10 KB-100 KB, 100 KB-1 MB, 1 MB-10 MB (decimal), lower edge inclusive.
    sizes = [9_999.0, 10_000.0, 99_999.0, 100_000.0, 999_999.0, 1e6, 9_999_999.0, 1e7, None]
    got = pl.DataFrame({"size_bytes": sizes}).select(lt.size_bucket())["size_bucket"].to_list()
    assert got == [
        "< 10 KB",
        "10-100 KB",
        "10-100 KB",
        "100 KB-1 MB",
        "100 KB-1 MB",
        "1-10 MB",
        "1-10 MB",
        ">= 10 MB",
        None,
    ]


def _compute_frame(use_seconds: bool) -> pl.DataFrame:
    # One op; compute ratios 0.06 and 0.12 round to 0.1, 0.75 and 0.84 to 0.8. Each group has 20
    # samples at bucket 5 (latency 1.0) and 20 at bucket 75: 2.25 s for the 0.1 group, 1.2 s for 0.8.
    rows = []
    for ratios, hot_latency in (((0.06, 0.12), 2.25), ((0.75, 0.84), 1.2)):
        for bucket, latency in ((5, 1.0), (75, hot_latency)):
            for i in range(20):
                r = ratios[i % 2]
                rows.append({"op": "q", "bucket_pct": bucket, "latency_s": latency, "r": r})
    df = pl.DataFrame(rows)
    if use_seconds:
        return df.with_columns((pl.col("r") * pl.col("latency_s")).alias("compute_s")).drop("r")
    return df.rename({"r": "compute_ratio"})


@pytest.mark.parametrize("use_seconds", [False, True])
def test_hotspot_inflation_by_compute_ratio(use_seconds: bool) -> None:
    # Figure 12b: per compute-ratio group, p95 at 75% / p95 at the base bucket (5): 2.25 and 1.2.
    t = lt.hotspot_inflation_by_compute_ratio(_compute_frame(use_seconds))
    assert t["compute_ratio"].to_list() == pytest.approx([0.1, 0.8])
    assert t["samples"].to_list() == [40, 40]
    assert t["base_bucket_pct"].to_list() == [5, 5]
    assert t["hotspot_inflation"].to_list() == pytest.approx([2.25, 1.2])
    # Fewer than N samples in a group's 75% bucket: no Hotspot-inflation for it.
    assert lt.hotspot_inflation_by_compute_ratio(_compute_frame(use_seconds), min_samples=21)[
        "hotspot_inflation"
    ].to_list() == [None, None]
    assert lt.hotspot_inflation_by_compute_ratio(pl.DataFrame({"op": ["q"], "latency_s": [1.0]})).height == 0


def test_weighted_effective_utilization() -> None:
    # Appendix C with queue weights PC 2, NC 1, BE 0.5. Window 0: PC 0.1, NC 0.4, BE 0.3, so
    # sum_c w_c u_c = 0.2 + 0.4 + 0.15 = 0.75 and class q sees 0.75 / w_q: PC 0.375, NC 0.75,
    # BE 1.5. Window 1 has only NC traffic (0.2): NC sees 0.2.
    per_qos = pl.DataFrame(
        {
            "lk": [1, 1, 1, 1],
            "window": [0, 0, 0, 1],
            "qos": ["PC", "NC", "BE", "NC"],
            "utilization": [0.1, 0.4, 0.3, 0.2],
        }
    )
    weights = {"PC": 2.0, "NC": 1.0, "BE": 0.5}
    eff = lt.weighted_effective_utilization(per_qos, weights)
    got = {(w, q): u for _, w, q, u in eff.iter_rows()}
    assert got == {
        (0, "BE"): pytest.approx(1.5),
        (0, "NC"): pytest.approx(0.75),
        (0, "PC"): pytest.approx(0.375),
        (1, "NC"): pytest.approx(0.2),
    }
    with pytest.raises(InputError, match="no QoS weight for class"):
        lt.weighted_effective_utilization(per_qos, {"PC": 2.0, "NC": 1.0})
    with pytest.raises(InputError, match="positive"):
        lt.weighted_effective_utilization(per_qos, {"PC": 2.0, "NC": 1.0, "BE": 0.0})


def test_analyze_writes_the_compute_ratio_and_uplink_views(tmp_path: Path) -> None:
    lp, sp = build(tmp_path)
    ops = pl.read_csv(sp).with_columns(pl.lit(0.52).alias("compute_ratio"))  # group 0.5
    ops.write_csv(sp)
    res = analyze(lp, sp, out=tmp_path / "out", config=AnalysisConfig(min_samples=10))
    t = pl.read_parquet(tmp_path / "out" / "tables" / "hotspot_inflation_by_compute_ratio.parquet")
    # Per op (10 samples per bucket, N = 10), base bucket 5 (1.0 s) and 2.5 s at 75%: 2.5.
    # Samples: 15 buckets x 10 per op, plus bucket 0's 5 ops (odd i: 2 hdd, 3 ssd).
    got = {(op, r): (n, hi) for op, r, n, _, hi in t.filter(pl.col("op") != "x").iter_rows()}
    assert got == {
        ("hdd-read", 0.5): (152, pytest.approx(2.5)),
        ("ssd-read", 0.5): (153, pytest.approx(2.5)),
    }
    req = pl.read_parquet(tmp_path / "out" / "tables" / "requests_by_uplink_class.parquet")
    assert req["share"].to_list() == pytest.approx([1.0] * len(LATENCY))
    assert any(f.name == "compute_ratio.png" for f in res.figures)
    assert res.report is not None and "Hotspot-inflation vs compute ratio" in res.report.read_text()


def test_links_column_associates_listed_links(tmp_path: Path) -> None:
    links = tmp_path / "l.csv"
    links.write_text("timestamp,link,direction,utilization\n0,a,up,0.30\n0,b,up,0.62\n0,c,up,0.99\n")
    lat = tmp_path / "s.csv"
    lat.write_text("start_s,latency_s,op,links\n3,0.01,query:q1,a;b\n")
    assoc = lt.associate(scan_links(links, interval_s=30.0), scan_latency(lat))
    assert assoc.df["utilization"].to_list() == pytest.approx([0.62])
    assert assoc.df["bucket_pct"].to_list() == [60]


def test_latency_bad_input(tmp_path: Path) -> None:
    p = tmp_path / "s.csv"
    p.write_text("start_s,latency_s,op\n0,0.1,hdd-read\n")
    with pytest.raises(InputError, match="`links`"):
        scan_latency(p)
    p.write_text("start_s,latency_s,op,tors\n0,-1,hdd-read,tor1\nnoon,0.1,hdd-read,tor1\n")
    with pytest.raises(InputError) as e:
        scan_latency(p)
    msg = str(e.value)
    assert "latency not a finite non-negative number -1" in msg and "unparsable start time noon" in msg


def test_compute_ratio_out_of_range_is_an_error(tmp_path: Path) -> None:
    p = tmp_path / "s.csv"
    p.write_text("start_s,latency_s,op,tors,compute_ratio\n0,0.1,q,tor1,0.5\n1,0.1,q,tor1,1.2\n")
    with pytest.raises(InputError, match=r"not a number in \[0, 1\] 1.2 in column `compute_ratio`"):
        scan_latency(p)


def test_qos_ops_see_their_weighted_effective_utilization(tmp_path: Path) -> None:
    # One link in one 30 s window: total 0.8 = PC 0.1 + NC 0.4 + BE 0.3. With queue weights PC 2,
    # NC 1, BE 0.5 (Appendix C): sum_c w_c u_c = 0.75, so PC sees 0.375, NC 0.75 and BE 1.5.
    links = tmp_path / "l.csv"
    links.write_text(
        "timestamp,link,direction,utilization,utilization_PC,utilization_NC,utilization_BE\n"
        "0,u1,up,0.8,0.1,0.4,0.3\n10,u1,up,0.8,0.1,0.4,0.3\n"
    )
    lat = tmp_path / "s.csv"
    lat.write_text(
        "start_s,latency_s,op,qos,links\n1,0.1,r,PC,u1\n2,0.1,r,NC,u1\n3,0.1,r,BE,u1\n4,0.1,r,gold,u1\n"
        "5,0.1,r,,u1\n6,0.1,r,PC,nope\n"
    )
    weights = {"PC": 2.0, "NC": 1.0, "BE": 0.5}
    assoc = lt.associate(scan_links(links), scan_latency(lat), qos_weights=weights)
    got = dict(zip(assoc.df["qos"].to_list(), assoc.df["utilization"].to_list(), strict=True))
    assert got == {"PC": pytest.approx(0.375), "NC": pytest.approx(0.75), "BE": pytest.approx(1.5)}
    assert assoc.df["bucket_pct"].to_list() == [35, 75, 150]
    # "gold" has no weight and one op has no class: counted, not dropped silently.
    assert assoc.skips == {lt.SKIP_NO_QOS: 2, lt.SKIP_UNKNOWN: 1}
    # Without weights every op sees the total, 0.8.
    plain = lt.associate(scan_links(links), scan_latency(lat))
    assert plain.df["utilization"].to_list() == pytest.approx([0.8] * 5)
    with pytest.raises(InputError, match="BE without a weight"):
        lt.associate(scan_links(links), scan_latency(lat), qos_weights={"PC": 2.0, "NC": 1.0})


def test_qos_weights_option() -> None:
    from netheat.analytics.cli import _weights

    assert _weights("PC=2, NC=1,BE=0.5") == {"PC": 2.0, "NC": 1.0, "BE": 0.5}
    assert _weights(None) is None
    for bad in ("PC", "PC=0", "PC=x", "=1"):
        with pytest.raises(InputError, match="CLASS=WEIGHT"):
            _weights(bad)
