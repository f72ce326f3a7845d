"""netheat.analytics.latency: association, inflation, Load-tolerance, Hotspot-inflation, skips."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from netheat import InputError
from netheat.analytics import latency as lt
from netheat.analytics.io import scan_latency, scan_links

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
    assert req["share"].sum() == pytest.approx(1.0)


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
