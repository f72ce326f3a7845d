"""netheat.analytics: hotspots, durations, rack types and bad input, with hand-derived answers."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from netheat import InputError
from netheat.analytics import hotspots as hs
from netheat.analytics.io import scan_links
from netheat.analytics.report import AnalysisConfig, analyze

W = 300.0


def write_links(tmp_path: Path, rows: list[dict[str, object]], name: str = "links.csv") -> Path:
    p = tmp_path / name
    pl.DataFrame(rows).write_csv(p)
    return p


def test_link_hot_in_windows_3_to_8_is_one_six_window_hotspot(tmp_path: Path) -> None:
    # One directed link, 12 five-minute windows, hot (0.9) in windows 3..8 only.
    rows = [
        {"timestamp": w * W, "link": "a", "direction": "up", "utilization": 0.9 if 3 <= w <= 8 else 0.2}
        for w in range(12)
    ]
    tel = scan_links(write_links(tmp_path, rows))
    win = hs.window_utilization(tel, W)
    runs = hs.hotspot_runs(win, W)
    assert runs.height == 1
    assert runs["first_window"][0] == 3
    assert runs["windows"][0] == 6
    assert runs["duration_s"][0] == pytest.approx(6 * W)
    dist = hs.duration_distribution(runs)
    assert dist.filter(pl.col("bucket") == "< 1 h")["hotspots"][0] == 1
    assert dist["hotspots"].sum() == 1
    assert "> 2 weeks" not in dist["bucket"].to_list()


def test_gap_splits_runs_and_subwindow_samples_are_averaged(tmp_path: Path) -> None:
    # 60 s samples re-aggregated to 5 min: window 0 has mean (1.0*3 + 0.5*2)/5 = 0.8 -> hot;
    # window 1 mean 0.5 -> cold; window 2 hot again -> two runs of one window.
    util = [1.0, 1.0, 1.0, 0.5, 0.5] + [0.5] * 5 + [0.9] * 5
    rows = [
        {"timestamp": i * 60.0, "link": 7, "direction": "down", "utilization": u} for i, u in enumerate(util)
    ]
    tel = scan_links(write_links(tmp_path, rows))
    assert tel.interval_s == pytest.approx(60.0)
    win = hs.window_utilization(tel, W).sort("window")
    assert win["utilization"].to_list() == pytest.approx([0.8, 0.5, 0.9])
    runs = hs.hotspot_runs(win, W)
    assert runs["windows"].to_list() == [1, 1]


def test_duration_buckets_and_layer_normalization(tmp_path: Path) -> None:
    hour = 3600.0
    rows = []
    # tor-agg link t1 hot for 2 h (1-12 h); agg-spine link s1 hot for 13 h (12 h-1 day) in 1-hour windows.
    for w in range(30):
        rows.append(
            {
                "timestamp": w * hour,
                "link": "t1",
                "direction": "up",
                "layer": "tor-agg",
                "utilization": 0.8 if w < 2 else 0.1,
            }
        )
        rows.append(
            {
                "timestamp": w * hour,
                "link": "s1",
                "direction": "up",
                "layer": "agg-spine",
                "utilization": 0.8 if w < 13 else 0.1,
            }
        )
    tel = scan_links(write_links(tmp_path, rows))
    win = hs.window_utilization(tel, hour)
    stats = hs.link_stats(win)
    rate = hs.hotspot_rate_by_layer(stats, tel.attrs).sort("layer")
    # tor-agg: 2/30; agg-spine: 13/30 -> normalized 6.5.
    assert rate["layer"].to_list() == ["agg-spine", "tor-agg"]
    assert rate["hotspot_rate"].to_list() == pytest.approx([13 / 30, 2 / 30])
    assert rate["normalized_rate"].to_list() == pytest.approx([6.5, 1.0])
    dist = hs.duration_distribution(hs.hotspot_runs(win, hour))
    got = dict(zip(dist["bucket"].to_list(), dist["hotspots"].to_list(), strict=True))
    assert got == {"< 1 h": 0, "1-12 h": 1, "12 h-1 day": 1, "1 day-2 weeks": 0}


def test_mixed_attribution_uses_each_traffic_over_its_provisioned_capacity(tmp_path: Path) -> None:
    # Mixed rack m0: 40% of its uplink provisioned for storage, 60% for compute (§3.2).
    # (window, utilization, storage, compute) of its `up` link, one sample per window except w5:
    up = [
        (0, 0.90, 0.35, 0.55),  # storage 0.35/0.4 = 0.875, compute 0.55/0.6 = 0.917: both
        (1, 0.80, 0.50, 0.30),  # 1.25 and 0.5: storage
        (2, 0.85, 0.10, 0.75),  # 0.25 and 1.25: compute
        (3, 0.80, 0.20, 0.30),  # 0.5 and 0.5 (0.3 of other traffic): neither
        (4, 0.50, 0.40, 0.10),  # not hot: not counted although storage is at 1.0
    ]
    rows: list[dict[str, object]] = []

    def row(
        t: float, link: str, d: str, kind: str, share: float | None, u: float, s: float, c: float | None
    ) -> None:
        rows.append(
            {
                "timestamp": t,
                "link": link,
                "direction": d,
                "layer": "tor-agg",
                "rack": link[:2],
                "rack_type": kind,
                "storage_share": share,
                "utilization": u,
                "storage_utilization": s,
                "compute_utilization": c,
            }
        )

    for w, u, s, c in up:
        row(w * W, "m0-up", "up", "Mixed", 0.4, u, s, c)
    # w5 has two samples: storage means (0.3 + 0.5) / 2 = 0.4 -> 1.0, compute (0.5 + 0.3) / 2 = 0.4
    # -> 0.67: storage (the window means are tested, not the samples).
    row(5 * W, "m0-up", "up", "Mixed", 0.4, 0.9, 0.3, 0.5)
    row(5 * W + 150, "m0-up", "up", "Mixed", 0.4, 0.9, 0.5, 0.3)
    # The `down` link gives no compute traffic: compute is the rest, 0.9 - 0.6 = 0.3 -> 0.5;
    # storage 0.6 / 0.4 = 1.5: storage.
    row(0.0, "m0-down", "down", "Mixed", 0.4, 0.9, 0.6, None)
    # Hot windows of a Disk rack and of a Mixed rack without storage_share are not attributed.
    row(0.0, "d1-up", "up", "Disk", None, 0.95, 0.95, 0.0)
    row(0.0, "m2-up", "up", "Mixed", None, 0.95, 0.95, 0.0)
    tel = scan_links(write_links(tmp_path, rows))
    traffic = hs.window_utilization(tel, W, extra=("storage_utilization", "compute_utilization"))
    mixed = hs.mixed_attribution(traffic, tel.attrs)
    assert mixed["traffic"].to_list() == ["storage", "compute", "both", "neither"]
    # storage: w1, w5 (up) and w0 (down); compute: w2; both: w0; neither: w3. 6 hot windows.
    assert mixed["hot_link_windows"].to_list() == [3, 1, 1, 1]
    assert mixed["fraction"].to_list() == pytest.approx([3 / 6, 1 / 6, 1 / 6, 1 / 6])
    # The 75% attribution threshold is strict and a parameter: at 1.0, w0 (0.875, 0.917) is neither,
    # w5 (1.0, 0.67) neither, and only w1 (1.25), w2 (1.25) and down-w0 (1.5) pass.
    strict = hs.mixed_attribution(traffic, tel.attrs, attribution_threshold=1.0)
    assert strict["hot_link_windows"].to_list() == [2, 1, 0, 3]
    # `netheat analyze` writes the same table.
    analyze(tel.source, out=tmp_path / "out", config=AnalysisConfig())
    written = pl.read_parquet(tmp_path / "out" / "tables" / "mixed_rack_attribution.parquet")
    assert written["hot_link_windows"].to_list() == [3, 1, 1, 1]


def test_rack_types_and_capacity(tmp_path: Path) -> None:
    rows = []
    racks = [
        # rack, type, hot windows of 4, storage_share, net_tasks, storage_tb, capacity per link
        ("r0", "Mixed", 2, 0.25, 10.0, 100.0, 10e9),
        ("r1", "Disk", 1, None, 5.0, 200.0, 10e9),
        ("r2", "Compute", 0, None, 20.0, None, 20e9),
    ]
    for rack, kind, hot, share, tasks, tb, cap in racks:
        for d in ("up", "down"):
            for w in range(4):
                rows.append(
                    {
                        "timestamp": w * W,
                        "link": f"{rack}-uplink",
                        "direction": d,
                        "layer": "tor-agg",
                        "rack": rack,
                        "rack_type": kind,
                        "storage_share": share,
                        "net_tasks": tasks,
                        "storage_tb": tb,
                        "capacity_bps": cap,
                        "utilization": 0.9 if w < hot else 0.3,
                    }
                )
    tel = scan_links(write_links(tmp_path, rows))
    stats = hs.link_stats(hs.window_utilization(tel, W))
    by = hs.hotspots_by_rack_type(stats, tel.attrs)
    got = dict(zip(by["rack_type"].to_list(), by["hotspot_rate"].to_list(), strict=True))
    assert got == pytest.approx({"Compute": 0.0, "Disk": 1 / 4, "Mixed": 2 / 4})
    # No per-sample storage traffic: the Mixed rack's hotspots cannot be attributed (§3.2 needs traffic).
    assert hs.mixed_attribution(hs.window_utilization(tel, W), tel.attrs).height == 0
    racks_t = hs.rack_stats(stats, tel.attrs)
    tasks = hs.tor_utilization_vs_tasks(racks_t).sort("rack")
    # ToR capacity each way: two links of 10 Gbps over 2 directions = 10 Gbps -> 10 tasks / 10 Gbps.
    assert tasks["tasks_per_gbps"].to_list() == pytest.approx([1.0, 0.5, 1.0])
    disk = hs.disk_link_capacity(racks_t)
    assert disk["rack"].to_list() == ["r1"]
    assert disk["gbps_per_tb"][0] == pytest.approx(10 / 200)


def test_netheat_links_parquet_is_accepted(tmp_path: Path) -> None:
    # The shape `netheat simulate` writes: window_start_s/window_end_s, src_node/dst_node, no rack.
    n = 4
    df = pl.DataFrame(
        {
            "link": pl.Series([0] * n + [1] * n, dtype=pl.UInt32),
            "layer": pl.Series(["tor-agg"] * (2 * n)).cast(pl.Categorical),
            "direction": pl.Series(["up"] * n + ["down"] * n).cast(pl.Categorical),
            "src_node": pl.Series(["tor3"] * n + ["core"] * n).cast(pl.Categorical),
            "dst_node": pl.Series(["core"] * n + ["tor3"] * n).cast(pl.Categorical),
            "capacity_bps": [1e10] * (2 * n),
            "window_start_s": [float(i) for i in range(n)] * 2,
            "window_end_s": [float(i + 1) for i in range(n)] * 2,
            "utilization": [0.1, 0.9, 0.9, 0.1, 0.0, 0.0, 0.0, 0.0],
        }
    )
    p = tmp_path / "links.parquet"
    df.write_parquet(p)
    tel = scan_links(p)
    assert tel.interval_s == 1.0
    assert tel.attrs["rack"].to_list() == ["tor3", "tor3"]
    runs = hs.hotspot_runs(hs.window_utilization(tel, 1.0), 1.0)
    assert runs["windows"].to_list() == [2]


def test_bytes_input_becomes_utilization(tmp_path: Path) -> None:
    # 1.25 GB in 1 s on a 10 Gbps link is 100%.
    rows = [{"timestamp": 0.0, "link": "x", "direction": "up", "bytes": 1.25e9, "capacity_bps": 1e10}]
    tel = scan_links(write_links(tmp_path, rows), interval_s=1.0)
    assert tel.lf.collect()["utilization"].to_list() == pytest.approx([1.0])
    with pytest.raises(InputError, match="interval"):
        scan_links(write_links(tmp_path, rows))


def test_missing_column_names_column_and_file(tmp_path: Path) -> None:
    p = write_links(tmp_path, [{"timestamp": 0, "link": "a", "utilization": 0.5}])
    with pytest.raises(InputError) as e:
        scan_links(p)
    msg = str(e.value)
    assert "`direction`" in msg and str(p) in msg


def test_unparsable_timestamp(tmp_path: Path) -> None:
    p = tmp_path / "l.csv"
    p.write_text(
        "timestamp,link,direction,utilization\n"
        "2024-01-01T00:00:00Z,a,up,0.5\n2024-01-01T00:05:00Z,a,up,0.5\nyesterday,a,up,0.5\n"
    )
    with pytest.raises(InputError) as e:
        scan_links(p)
    msg = str(e.value)
    assert "unparsable timestamp yesterday" in msg and "1 row" in msg and "data row 3" in msg


def test_iso_timestamps_are_seconds(tmp_path: Path) -> None:
    p = tmp_path / "l.csv"
    p.write_text(
        "timestamp,link,direction,utilization\n2024-01-01T00:00:00Z,a,up,0.5\n2024-01-01 00:05:00,a,up,0.5\n"
    )
    tel = scan_links(p)
    assert tel.interval_s == pytest.approx(300.0)
    assert tel.start_s == pytest.approx(1704067200.0)


def test_utilization_out_of_range_names_value_and_count(tmp_path: Path) -> None:
    rows = [{"timestamp": float(i), "link": "a", "direction": "up", "utilization": 0.5} for i in range(5)]
    rows[3]["utilization"] = 1.7
    rows[4]["utilization"] = 1.6
    with pytest.raises(InputError) as e:
        scan_links(write_links(tmp_path, rows))
    msg = str(e.value)
    assert "1.7" in msg and "2 rows" in msg and "outside [0, 1.5]" in msg and "data row 4" in msg


def test_analyze_without_latency_writes_tables_and_report(tmp_path: Path) -> None:
    rows = [
        {"timestamp": w * W, "link": "a", "direction": "up", "utilization": 0.9 if 3 <= w <= 8 else 0.2}
        for w in range(12)
    ]
    res = analyze(write_links(tmp_path, rows), out=tmp_path / "out", config=AnalysisConfig())
    assert res.summary["hotspots"] == 1
    assert (tmp_path / "out" / "tables" / "hotspot_runs.parquet").exists()
    assert res.report is not None and res.report.exists()
    assert len(res.figures) == 5


def test_traffic_columns_out_of_range_are_errors(tmp_path: Path) -> None:
    rows = [
        {"timestamp": float(i), "link": "a", "direction": "up", "utilization": 0.9, "storage_utilization": s}
        for i, s in enumerate([0.5, 2.0, "x"])
    ]
    with pytest.raises(InputError) as e:
        scan_links(write_links(tmp_path, rows))
    msg = str(e.value)
    assert "`storage_utilization`" in msg and "2 rows" in msg and "not a number in [0, 1.5]" in msg
