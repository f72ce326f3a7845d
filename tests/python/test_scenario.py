"""Scenarios from Python and from `netheat run`: tables, overrides, report, refusals.

Numbers are derived by hand: two flows over one 8 Gbit/s uplink share it
(fair share) or go one after the other (FIFO), see the Rust tests in
crates/netheat-scenario/tests/scenario for the policies themselves.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

from netheat import Scenario
from netheat.cli import main
from netheat.errors import ConfigError, InputError
from netheat.scenario import TABLES, docs_markdown, key_table

ROOT = Path(__file__).resolve().parents[2]

FLOWS = "src,dst,bytes,start_s,task_id\n0,2,1000000000,0,0\n1,3,3000000000,0,1\n"

SCENARIO = """
[scenario]
seed = 3

[topology]
kind = "two-tier"
racks = 2
hosts-per-rack = 2
host-link = "8Gbps"
tor-uplink = "8Gbps"

[workload]
[[workload.traffic]]
kind = "replay"
file = "flows.csv"
"""


def write(tmp: Path, extra: str = "") -> Path:
    (tmp / "flows.csv").write_text(FLOWS)
    p = tmp / "s.toml"
    p.write_text(SCENARIO + extra)
    return p


def test_fair_share_and_fifo_from_python(tmp_path: Path) -> None:
    # Fair share: 4 Gbit/s each until the 1 GB flow ends at 2 s, then the
    # 3 GB flow alone: 2 GB more at 8 Gbit/s, ending at 4 s. FIFO: 1 s, 4 s.
    s = Scenario.from_toml(write(tmp_path))
    fct = s.run().flows.column("fct_s").to_pylist()
    assert fct == pytest.approx([2.0, 4.0], abs=1e-9)
    fifo = s.with_overrides({"scheduling.policy": "fifo"}).run()
    assert fifo.flows.column("fct_s").to_pylist() == pytest.approx([1.0, 4.0], abs=1e-9)
    # The same scenario again: an override does not change the original.
    assert s.run().flows.column("fct_s").to_pylist() == pytest.approx([2.0, 4.0], abs=1e-9)


def test_same_columns_on_both_engines(tmp_path: Path) -> None:
    s = Scenario.from_toml(write(tmp_path))
    flow = s.run()
    packet = s.with_overrides({"scenario.engine": "packet", "scenario.duration": "5s"}).run()
    for name in ("flows", "tasks", "links"):
        assert flow.tables[name].schema.names == packet.tables[name].schema.names, name
    assert "queues" in packet.tables and "queues" not in flow.tables
    # The packet engine's flows take at least their serialization time.
    fct = packet.flows.column("fct_s").to_pylist()
    assert fct[0] >= 1.0 and fct[1] >= 3.0


def test_cli_writes_tables_stats_and_report(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main(["run", str(write(tmp_path)), "--out", str(out), "--set", "scheduling.policy=fifo"]) == 0
    names = {p.name for p in out.iterdir()}
    assert {"flows.parquet", "tasks.parquet", "links.parquet", "stats.json", "report.html"} <= names
    flows = pq.read_table(out / "flows.parquet")
    assert flows.column("fct_s").to_pylist() == pytest.approx([1.0, 4.0], abs=1e-9)
    meta = flows.schema.metadata
    assert b"netheat_version" in meta and b"scheduling.policy" in meta[b"overrides"]
    stats = json.loads((out / "stats.json").read_text())
    assert stats["completed"] == 2 and stats["engine"] == "flow"
    # Links: every directed link in every 1 s window; rack 0's uplink is
    # full for 4 s (1 GB + 3 GB at 8 Gbit/s).
    links = pq.read_table(out / "links.parquet").to_pydict()
    cols = zip(links["layer"], links["direction"], links["src_node"], links["utilization"], strict=True)
    up = [u for layer, d, src, u in cols if layer == "tor-agg" and d == "up" and src.startswith("tor0")]
    assert up[:4] == pytest.approx([1.0] * 4)


def test_record_leaves_tables_out_and_nothing_else(tmp_path: Path) -> None:
    # `scenario.record = []`: no flows or links table, the same tasks (1 GB
    # alone at 8 Gbit/s then shared: task 0 at 2 s, task 1 at 4 s), counts
    # in stats, a report that says what was not recorded, and values over
    # the missing tables absent rather than wrong.
    from netheat.experiments.scenario import point_values

    s = Scenario.from_toml(write(tmp_path))
    full = s.run()
    lean = s.with_overrides({"scenario.record": []}).run()
    assert set(full.tables) - set(lean.tables) == {"flows", "links"}
    assert lean.tasks.equals(full.tasks)
    assert lean.tasks.column("tct_s").to_pylist() == pytest.approx([2.0, 4.0], abs=1e-9)
    assert (lean.stats["flows"], lean.stats["completed"]) == (2, 2)
    with pytest.raises(InputError, match=r"left out of scenario\.record"):
        _ = lean.flows
    assert "2 flows, 2 finished (flows not recorded" in lean.summary()
    values = point_values(lean)
    assert "fct_p99_s" not in values and "hot_tor_share" not in values
    assert values["tct_p99_s"] == point_values(full)["tct_p99_s"]
    out = tmp_path / "lean"
    assert main(["run", str(write(tmp_path)), "--out", str(out), "--set", 'scenario.record=["links"]']) == 0
    names = {p.name for p in out.iterdir()}
    assert "flows.parquet" not in names and {"tasks.parquet", "links.parquet", "report.html"} <= names
    assert "Not recorded" in (out / "report.html").read_text()


def test_spc_from_the_cli(tmp_path: Path) -> None:
    # Both flows cross rack 0's 8 Gbit/s uplink. The default heavy threshold
    # (0.8 quantile of the task sizes 1 GB, 3 GB: 3 GB) never trips, so SPC
    # serves task 0 first, as FIFO does (1 s, 4 s): its first scheduling
    # request takes one 100 us round, then 1 GB at 8 Gbit/s: 1.0001 s.
    # Task 1 takes over a few rounds after it.
    out = tmp_path / "run"
    assert main(["run", str(write(tmp_path)), "--out", str(out), "--set", "scheduling.policy=spc"]) == 0
    flows = pq.read_table(out / "flows.parquet")
    fifo = Scenario.from_toml(write(tmp_path)).with_overrides({"scheduling.policy": "fifo"}).run()
    assert flows.schema.names == fifo.flows.schema.names
    finish = flows.column("finish_s").to_pylist()
    assert finish[0] == pytest.approx(1.0001, abs=1e-9)
    assert 4.0 < finish[1] < 4.0 + 5e-4
    stats = json.loads((out / "stats.json").read_text())
    assert stats["completed"] == 2 and stats["spc_rtt_s"] == pytest.approx(1e-4)
    assert stats["heavy_threshold_bytes"] == 3e9
    tasks = pq.read_table(out / "tasks.parquet")
    assert tasks.schema.names == fifo.tasks.schema.names and tasks.num_rows == 2


def test_a_long_spc_run_reports_progress_and_a_callback_error_stops_it() -> None:
    """The SPC protocol reports its progress while it runs (every 250 ms at most), so a long run
    (300 two-level requests on the paper's 36,000 hosts: seconds) shows it, and an error in the
    callback (Ctrl-C's KeyboardInterrupt is one) stops it mid-run and reaches the caller."""
    scn = Scenario.from_toml(ROOT / "examples" / "scenarios" / "baraat-aggregation.toml").with_overrides(
        {
            "scenario.record": [],
            "workload.app.0.task-sizes": "uniform",
            "workload.app.0.structure": "two-stage",
            "workload.app.0.mid-aggregators": 30,
            "workload.app.0.selectivity": 0.03,
            "workload.app.0.tasks": 300,
            "scheduling.policy": "spc",
        }
    )
    calls: list[tuple[int, int]] = []

    def stop_at_the_second(done: int, total: int) -> None:
        calls.append((done, total))
        if len(calls) == 2:
            raise RuntimeError("stopped by the callback")

    with pytest.raises(RuntimeError, match="stopped by the callback"):
        scn.run(progress=stop_at_the_second)
    done, total = calls[-1]
    assert total == 300 * 1200 and 0 < done < total, calls


def test_spc_on_the_packet_engine_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    args = ["run", str(write(tmp_path)), "--out", str(out), "--set", "scenario.engine=packet"]
    assert main([*args, "--set", "scheduling.policy=spc"]) == 2
    err = capsys.readouterr().err
    assert "scheduling.policy" in err and "scenario.engine" in err, err
    assert not out.exists()


def test_dense_mode_is_a_scenario_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `scenario.dense` reaches the flow engine: `always` enters dense mode, `off` never does, and
    # the finish times agree (the allocation is the same); the packet engine has no dense mode.
    s = Scenario.from_toml(write(tmp_path))
    on = s.with_overrides({"scenario.dense": "always"}).run()
    off = s.with_overrides({"scenario.dense": "off"}).run()
    assert on.stats["dense_instants"] > 0 and off.stats["dense_instants"] == 0
    assert on.flows.column("finish_s").to_pylist() == pytest.approx(
        off.flows.column("finish_s").to_pylist(), rel=1e-12
    )
    out = tmp_path / "run"
    args = ["run", str(write(tmp_path)), "--out", str(out), "--set", "scenario.engine=packet"]
    assert main([*args, "--set", "scenario.dense=off"]) == 2
    err = capsys.readouterr().err
    assert "scenario.dense" in err and "scenario.engine" in err, err
    assert main(["run", str(write(tmp_path)), "--out", str(out), "--set", "scenario.dense=sometimes"]) == 2
    assert "auto" in capsys.readouterr().err
    assert not out.exists()


def test_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    if shutil.which("chromium") is None:
        pytest.skip("chromium not installed (make test-python installs it)")
    out = tmp_path / "run"
    assert main(["run", str(write(tmp_path)), "--out", str(out)]) == 0
    r = subprocess.run(
        [
            "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={tmp_path / 'chrome'}", "--dump-dom", (out / "report.html").as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    dom = r.stdout
    assert "netheat scenario run" in dom
    # FCT CDF, task CDF (two trace tasks) and the ToR heat map.
    assert dom.count('src="data:image/png;base64,') == 3


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ("[scheduling]\npolcy = 'fifo'\n", ["s.toml:", "did you mean `policy`"]),
        ("[transport]\nkind = 'dctcp'\n", ["transport", "scenario.engine"]),
        ("[storage]\npolicy = 'sinbad'\n", ["storage.policy", "file-write"]),
        ("[routing]\npolicy = 'ecmpp'\n", ["routing.policy", "ecmp"]),
        (
            "[scheduling]\npolicy = 'spc'\n[routing]\npolicy = 'adaptive'\n",
            ["scheduling.policy", "routing.policy"],
        ),
        (
            "[scheduling]\npolicy = 'spc'\n[storage]\npolicy = 'sinbad'\n",
            ["scheduling.policy", "storage.policy"],
        ),
    ],
)
def test_bad_scenarios_exit_2_and_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: str, words: list[str]
) -> None:
    out = tmp_path / "run"
    assert main(["run", str(write(tmp_path, extra)), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    for w in words:
        assert w in err, err
    assert not out.exists()


def test_bad_overrides_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s = write(tmp_path)
    assert main(["run", str(s), "--out", str(tmp_path / "o"), "--set", "routing.polcy=ecmp"]) == 2
    assert "routing.polcy" in capsys.readouterr().err
    assert main(["run", str(s), "--out", str(tmp_path / "o"), "--set", "nokey"]) == 2
    with pytest.raises(ConfigError) as e:
        Scenario.from_toml(s).with_overrides({"topology.racks": "two"}).run()
    assert "topology.racks" in str(e.value)


def test_unknown_hosts_in_the_workload_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s = write(tmp_path)
    (tmp_path / "flows.csv").write_text("src,dst,bytes,start_s\n0,9,1000,0\n")
    assert main(["run", str(s), "--out", str(tmp_path / "o")]) == 2
    assert "9" in capsys.readouterr().err


def test_keys_and_docs_come_from_the_rust_schema() -> None:
    keys = {k for k, _, _ in key_table()}
    assert {
        "routing.policy",
        "scheduling.policy",
        "storage.policy",
        "transport.kind",
        "scenario.engine",
    } <= keys
    choices = dict((k, v) for k, v, _ in key_table())
    assert choices["scheduling.policy"] == "fair-share | sff | stf | fifo | fifo-lm | spc | rcp"
    assert choices["scheduling.class-unit"] == "task | flow"
    assert {"scheduling.rtt", "scheduling.delta"} <= keys
    # The committed docs are the generated ones.
    assert (ROOT / "docs" / "scenarios.md").read_text() == docs_markdown()
    assert set(TABLES) >= {"flows", "tasks", "links", "queues", "blocks"}


def test_examples_check(tmp_path: Path) -> None:
    """Every bundled scenario reads, builds its datacenter and workload, and passes the checks."""
    data = Path("/work/shared/data")
    for p in sorted((ROOT / "examples" / "scenarios").glob("*.toml")):
        args = ["run", "--check", str(p)]
        if "subways-adaptive" in p.name:
            if not data.exists():
                continue
            args += ["--data-dir", str(data)]
        assert main(args) == 0, p


def test_placement_tables_from_python(tmp_path: Path) -> None:
    # The UTP example for 40 minutes: compute tasks are placed, their stays
    # are rows of `placements`, every move a row of `migrations` (both
    # written as Parquet, after the per-entity tables of every run).
    s = Scenario.from_toml(ROOT / "examples" / "scenarios" / "placement-utp.toml").with_overrides(
        {"scenario.duration": "40min", "workload.duration": "20min"}
    )
    r = s.run()
    p = r.tables["placements"]
    assert p.schema.names == [
        "task_id",
        "job",
        "task",
        "host",
        "rack",
        "tor_util",
        "start_s",
        "finish_s",
        "migrated",
    ]
    assert p.num_rows == r.stats["placements"] + len(r.tables.get("migrations", []))
    assert r.stats["placements"] % 8 == 0  # jobs of 8 tasks
    assert list(r.tables) == [t for t in TABLES if t in r.tables]
    out = r.write(tmp_path / "o")
    assert pq.read_table(out / "placements.parquet").num_rows == p.num_rows
    # The report shows where tasks went and the migrations over time, with the tables' counts.
    html = (out / "report.html").read_text()
    moves = len(r.tables.get("migrations", []))
    assert "Task placement and migrations" in html
    assert f"<td>migrations</td><td>{moves}</td>" in html.replace(" ", "")


def test_precalculated_traffic_in_the_links_table_and_tor_balance(tmp_path: Path) -> None:
    """A precalculated 8 Gbit flow from host 0 to host 2 leaves half of the 8 Gbit/s ToR links
    in its one second (one flow on them: the fair-share floor); the run's own 8 Gbit from host 1
    to host 3 sends 4 there and the rest at 8 Gbit/s: done at 1.5 s. The links table counts
    both, with the background's part; the ToR balance values follow by hand."""
    from netheat.scenario_report import tor_balance

    (tmp_path / "bg.csv").write_text("src,dst,bytes,start_s\n0,2,1000000000,0\n")
    (tmp_path / "fg.csv").write_text("src,dst,bytes,start_s\n1,3,1000000000,0\n")
    text = SCENARIO.replace('file = "flows.csv"', 'file = "bg.csv"\nprecalculated = true')
    text += '[[workload.traffic]]\nkind = "replay"\nfile = "fg.csv"\n'
    (tmp_path / "s.toml").write_text(text)
    res = Scenario.from_toml(tmp_path / "s.toml").run()
    assert res.flows.num_rows == 1
    assert res.flows.column("finish_s").to_pylist() == pytest.approx([1.5], abs=1e-9)
    assert res.stats["background_flows"] == 1 and res.stats["background_bytes"] == 1e9
    links = res.links
    tor_up = [
        i
        for i in range(links.num_rows)
        if links["layer"][i].as_py() == "tor-agg"
        and links["direction"][i].as_py() == "up"
        and links["utilization"][i].as_py() > 0
    ]
    got = sorted(
        (links["window_start_s"][i].as_py(), links["utilization"][i].as_py(), links["background"][i].as_py())
        for i in tor_up
    )
    assert [x for row in got for x in row] == pytest.approx([0.0, 1.5, 1.0, 1.0, 0.5, 0.0], abs=1e-9)
    # Uplinks: ToR 0 carries [1.5, 0.5], ToR 1 nothing: Cv 1 in both windows (population std
    # over mean); the same for the downlinks. The background alone: Cv 1 in window 0 (window 1
    # is empty and left out). Its p95 over the four ToR links [1, 0, 0, 1] is 1 > 0.75 in
    # window 0 and 0 in window 1: hot half of the time.
    v = tor_balance(res, 2.0)
    assert v == pytest.approx(
        {
            "tor_up_cv_median": 1.0,
            "tor_down_cv_median": 1.0,
            "background.tor_up_cv_median": 1.0,
            "background.tor_down_cv_median": 1.0,
            "background.tor_p95_hot_pct": 50.0,
        },
        abs=1e-9,
    )
    # Without precalculated traffic there are no background values.
    assert set(tor_balance(Scenario.from_toml(write(tmp_path)).run(), 2.0)) == {
        "tor_up_cv_median",
        "tor_down_cv_median",
    }


def test_erasure_coded_example_reads_degraded_while_a_tor_is_down() -> None:
    """examples/scenarios/chunk-store-erasure.toml: RS(4, 2) stripes on eight
    disk racks of 8 hosts, tor3 (hosts 24-31) down from 2 s to 6 s."""
    r = Scenario.from_toml(ROOT / "examples" / "scenarios" / "chunk-store-erasure.toml").run()
    tasks = pl.from_arrow(r.tables["tasks"])
    flows = pl.from_arrow(r.tables["flows"])
    assert isinstance(tasks, pl.DataFrame) and isinstance(flows, pl.DataFrame)
    j = flows.join(tasks.select("task_id", "kind", "start_s"), on="task_id", suffix="_task")
    down = (pl.col("start_s_task") >= 2.0) & (pl.col("start_s_task") < 6.0)
    rack3 = pl.col("src").is_between(24, 31)
    reads = j.filter(pl.col("kind") == "chunk-read")
    # While tor3 is down no read fetches a chunk from rack 3 and no write
    # sends one there; before and after, stripes use rack 3 as any rack.
    assert reads.filter(down & rack3).height == 0
    assert reads.filter(~down & rack3).height > 0
    writes = j.filter(pl.col("kind") == "chunk-write")
    assert writes.filter(down & pl.col("dst").is_between(24, 31)).height == 0
    # A stripe's 6 chunks are on 6 of the 8 racks, so a given rack holds one
    # of its 4 data chunks with probability 4/8: about half of the reads
    # started while it is down are degraded (fewer, as the chunks written
    # meanwhile avoid it), none unavailable, and nothing stays stranded.
    in_window = (pl.col("start_s") >= 2.0) & (pl.col("start_s") < 6.0)
    window = tasks.filter((pl.col("kind") == "chunk-read") & in_window)
    degraded = r.stats["chunk_reads_degraded"]
    assert 0.35 * window.height <= degraded <= 0.55 * window.height, (degraded, window.height)
    assert r.stats["chunk_reads_unavailable"] == 0
    assert r.stats["stranded"] == 0 and tasks["finish_s"].is_nan().sum() == 0


def test_degraded_reads_on_a_hot_tor_add_load_and_rarely_win() -> None:
    """examples/scenarios/degraded-reads-hot-tor.toml: RS(6, 3) reads from
    a hot client rack (12: hosts 96-103) and a cold one (13), without and
    with degraded reads after the file's threshold."""
    import re

    from netheat.metrics import quantile

    path = ROOT / "examples" / "scenarios" / "degraded-reads-hot-tor.toml"
    after = re.search(r"hedge-reads-after='\"(\d+)ms\"'", path.read_text())
    assert after is not None
    after_ms = int(after.group(1))

    def reads(r: object) -> pl.DataFrame:
        tasks = pl.from_arrow(r.tables["tasks"])  # type: ignore[attr-defined]
        flows = pl.from_arrow(r.tables["flows"])  # type: ignore[attr-defined]
        assert isinstance(tasks, pl.DataFrame) and isinstance(flows, pl.DataFrame)
        rack = flows.group_by("task_id").agg((pl.col("dst").first() // 8).alias("rack"))
        took = (pl.col("finish_s") - pl.col("start_s")).alias("t")
        return tasks.join(rack, on="task_id").with_columns(took)

    plain_run = Scenario.from_toml(path).run()
    hedged_run = Scenario.from_toml(path).with_overrides({"storage.hedge-reads-after": f"{after_ms}ms"}).run()
    plain, hedged = reads(plain_run), reads(hedged_run)
    assert plain.height == hedged.height == 3000
    assert plain["finish_s"].is_nan().sum() == hedged["finish_s"].is_nan().sum() == 0
    # The threshold is the plain run's 95th percentile, to the millisecond.
    assert round(quantile(plain["t"].to_numpy(), 0.95) * 1e3) == after_ms
    assert "chunk_reads_hedged" not in plain_run.stats
    # A fetch cancelled under way is a flow that did not complete.
    # (Under fifo-lm, too, where a read's flows often end at the same instant:
    # one that delivered its last byte as its read's quorum was reached is
    # not cut.)
    fifo = Scenario.from_toml(path).with_overrides(
        {"storage.hedge-reads-after": f"{after_ms}ms", "scheduling.policy": "fifo-lm"}
    )
    for st in (hedged_run.stats, fifo.run().stats):
        assert st["flows"] == st["completed"] + st["hedge_cancelled_flows"]
        assert st["hedge_cancelled_flows"] > 0 and st["stranded"] == 0
    # A read that hedged has more than its 6 data fetches; the hot rack's
    # tail is its network, so most of them are its reads.
    hedged_reads = hedged.filter(pl.col("flows") > 6)
    assert hedged_reads.height == hedged_run.stats["chunk_reads_hedged"] > 50
    assert f"hedged reads: {hedged_reads.height} of 3000, " in hedged_run.summary()
    assert "hedged reads" not in plain_run.summary()
    assert hedged_reads.filter(pl.col("rack") == 12).height > 0.75 * hedged_reads.height
    # Few of them finish sooner for it: a parity chunk asked for at the
    # 95th percentile still queues at its disk and shares the same links.
    assert hedged_run.stats["chunk_reads_hedge_used"] < 0.15 * hedged_run.stats["chunk_reads_hedged"]
    # The hot rack's reads take longer, mean and 95th percentile.
    hot = [df.filter(pl.col("rack") == 12)["t"].to_numpy() for df in (plain, hedged)]
    assert hot[1].mean() > hot[0].mean()
    assert quantile(hot[1], 0.95) > quantile(hot[0], 0.95)
    # The hot ToR takes more bytes: the plain run's (the same reads of the
    # same chunks) and what the hedges delivered before they were
    # cancelled or finished, at most what they asked for.
    into = [
        pl.from_arrow(r.tables["flows"]).filter(pl.col("dst") // 8 == 12)["bytes"].sum()  # type: ignore[union-attr]
        for r in (plain_run, hedged_run)
    ]
    assert into[0] == pytest.approx(plain.filter(pl.col("rack") == 12)["bytes"].sum(), rel=1e-12)
    assert 0 < into[1] - into[0] <= hedged_run.stats["hedge_read_bytes"]


def test_a_bad_hedge_threshold_is_refused_by_the_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`netheat run --check` (and so an experiment's load) refuses `storage.hedge-reads-after` at its
    line: not a positive duration, or no chunk reads to hedge."""
    text = (ROOT / "examples" / "scenarios" / "degraded-reads-hot-tor.toml").read_text()
    line = text.splitlines().index("[storage]") + 2
    for bad, reason in (
        (text.replace("[storage]\n", '[storage]\nhedge-reads-after = "0s"\n'), "must be a duration > 0"),
        (
            text.replace("[storage]\n", '[storage]\nhedge-reads-after = "10ms"\n').replace(
                "read-share = 1.0", "read-share = 0.0"
            ),
            "no chunk reads",
        ),
    ):
        p = tmp_path / "s.toml"
        p.write_text(bad)
        assert main(["run", "--check", str(p)]) == 2
        err = capsys.readouterr().err
        assert f"s.toml:{line}:1: key `storage.hedge-reads-after`: " in err and reason in err, err
