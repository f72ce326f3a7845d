"""Scenarios: any datacenter, any workload, any stack of policies, one file.

``netheat run scenario.toml --out DIR`` and, from Python,
``Scenario.from_toml(path).with_overrides({...}).run()``. The scenario is
read, checked and run in Rust (crate ``netheat-scenario``) with the GIL
released; this module turns the result into Arrow tables, writes them with
their provenance and draws the report.

The keys of every section, their meaning and defaults come from the Rust
structs that read them (:func:`schema`); ``netheat run --help`` and
``docs/scenarios.md`` are generated from that schema, never written by hand.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from netheat import __version__
from netheat._columns import arrow_column
from netheat._netheat import Topology, run_scenario, scenario_schema
from netheat.errors import InputError
from netheat.metrics import quantile
from netheat.output import OutputDir
from netheat.units import fmt_seconds

TABLES = ("flows", "tasks", "links", "queues", "blocks", "placements", "migrations")
"""Per-entity tables a run may write, in this order (see ``docs/scenarios.md``)."""


@cache
def schema() -> dict[str, Any]:
    """The JSON Schema of a scenario file's sections, from the Rust structs that read them."""
    return dict(json.loads(scenario_schema()))


def _resolve(s: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if ref:
        return dict(s["definitions"][ref.split("/")[-1]])
    for key in ("anyOf", "allOf"):
        for alt in node.get(key, []):
            if "$ref" in alt:
                return dict(s["definitions"][alt["$ref"].split("/")[-1]])
    return node


def _choices(s: dict[str, Any], node: dict[str, Any]) -> list[str]:
    node = _resolve(s, node)
    out: list[str] = []
    for alt in node.get("oneOf", []):
        out.extend(str(v) for v in alt.get("enum", []))
    out.extend(str(v) for v in node.get("enum", []))
    return out


def key_table(s: dict[str, Any] | None = None) -> list[tuple[str, str, str]]:
    """Every policy key as ``(section.key, choices or type, description)``, from :func:`schema`
    (or another schema built the same way, such as the advisor file's)."""
    s = schema() if s is None else s
    rows: list[tuple[str, str, str]] = []
    for section, node in s["properties"].items():
        sec = _resolve(s, node)
        props = sec.get("properties")
        if not props:
            rows.append((f"[{section}]", "table", " ".join(node.get("description", "").split())))
            continue
        for key, prop in props.items():
            choices = _choices(s, prop)
            kind = " | ".join(choices) if choices else _type_name(prop)
            desc = " ".join(prop.get("description", "").split())
            if prop.get("default") is not None:
                desc += f" Default: {json.dumps(prop['default'])}."
            rows.append((f"{section}.{key}", kind, desc))
    return rows


def _type_name(prop: dict[str, Any]) -> str:
    if prop.get("format") == "unit" or any(a.get("format") == "unit" for a in prop.get("anyOf", [])):
        return 'unit string, e.g. "10Gbps", "256MiB", "5ms"'
    if any("$ref" in a and a["$ref"].endswith("/UnitString") for a in prop.get("anyOf", [])) or prop.get(
        "$ref", ""
    ).endswith("/UnitString"):
        return 'unit string, e.g. "10Gbps", "256MiB", "5ms"'
    t = prop.get("type", "")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "")
    return {"string": "string", "number": "number", "integer": "integer"}.get(str(t), str(t) or "value")


def help_text() -> str:
    """The key reference printed by ``netheat run --help``."""
    lines = ["scenario keys (besides the datacenter tables and [workload]):"]
    for key, kind, desc in key_table():
        lines.append(f"  {key}  ({kind})")
        if desc:
            lines.append(f"      {desc}")
    return "\n".join(lines)


def toml_value(v: Any) -> str:
    """A Python value as TOML text (strings, numbers, booleans, lists of them and tables as inline tables)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        if isinstance(v, float) and not math.isfinite(v):
            raise InputError(f"override value {v!r} is not a finite number")
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {toml_value(x)}" for k, x in v.items()) + "}"
    raise InputError(f"override value {v!r} must be a string, number, boolean, list or table")


@dataclass(frozen=True)
class Scenario:
    """A scenario file (or text) plus overrides of its dotted keys."""

    path: Path | None = None
    text: str | None = None
    base: Path = Path(".")
    overrides: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_toml(cls, path: str | Path) -> Scenario:
        """The scenario in ``path`` (relative paths inside it resolve against its directory)."""
        p = Path(path)
        return cls(path=p, base=p.parent)

    @classmethod
    def from_text(cls, text: str, base: str | Path = ".") -> Scenario:
        """A scenario from TOML text; relative paths resolve against ``base``."""
        return cls(text=text, base=Path(base))

    def with_overrides(self, values: dict[str, Any]) -> Scenario:
        """The same scenario with dotted keys set (``{"routing.policy": "adaptive"}``)."""
        more = tuple((k, toml_value(v)) for k, v in values.items())
        return Scenario(self.path, self.text, self.base, self.overrides + more)

    def with_override_texts(self, pairs: list[tuple[str, str]]) -> Scenario:
        """The same scenario with overrides whose values are TOML text (``--set key=value``)."""
        return Scenario(self.path, self.text, self.base, self.overrides + tuple(pairs))

    def _args(self, data_dir: str | Path | None) -> dict[str, Any]:
        from netheat.data import _roots

        return {
            "path": str(self.path) if self.path is not None else None,
            "text": self.text,
            "file": "<scenario>",
            "base": str(self.base),
            "overrides": list(self.overrides),
            "data_dir": str(data_dir) if data_dir is not None else None,
            "extra_roots": _roots(),
        }

    def check(self, data_dir: str | Path | None = None) -> dict[str, Any]:
        """Read, build and check it without running: its size (hosts, links, flows, tasks, engine)."""
        return dict(run_scenario(**self._args(data_dir), check_only=True))

    def run(self, data_dir: str | Path | None = None, progress: Any = None) -> ScenarioResult:
        """Run it (GIL released; Ctrl-C stops it with KeyboardInterrupt) and return its tables."""
        raw = run_scenario(**self._args(data_dir), progress=progress)
        return ScenarioResult.from_raw(raw, self)


@dataclass
class ScenarioResult:
    """The tables, statistics and notes of one run."""

    tables: dict[str, pa.Table]
    stats: dict[str, Any]
    notes: list[str]
    engine: str
    topology: Topology
    provenance: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_raw(cls, raw: dict[str, Any], scenario: Scenario) -> ScenarioResult:
        from netheat.simulate import _LinkWindows

        tables: dict[str, pa.Table] = {}
        for name, cols in raw["tables"].items():
            if name == "links":
                continue
            arrays = {k: arrow_column(v) for k, v in cols.items()}
            if name == "flows":
                # No task, no path: null (as `netheat simulate` and `workload generate` write them).
                for col in ("task_id", "path_id"):
                    v = arrays[col]
                    arrays[col] = pa.array(v, mask=v < 0)
            tables[name] = pa.table(arrays)
        stats = {
            k: (int(v) if float(v).is_integer() and abs(v) < 2**53 else v) for k, v in raw["stats"].items()
        }
        window_s = float(raw["window_s"])
        end_s = float(raw["stats"].get("end_s", 0.0))
        n_windows = math.ceil(end_s / window_s) if end_s > 0 else 0
        if "links" in raw["tables"]:  # absent when left out of scenario.record
            windows = _LinkWindows(raw["topology"], raw["tables"]["links"], window_s, n_windows)
            tables["links"] = windows.table()
        ordered = {k: tables[k] for k in TABLES if k in tables}
        prov = {
            "netheat_version": __version__,
            "scenario": str(scenario.path) if scenario.path else "<text>",
            "overrides": json.dumps(list(scenario.overrides)),
            "engine": str(raw["engine"]),
        }
        return cls(ordered, stats, list(raw["notes"]), str(raw["engine"]), raw["topology"], prov)

    def table(self, name: str) -> pa.Table:
        """Table ``name``; a table the run did not record (``scenario.record``) raises :class:`InputError`."""
        if name not in self.tables:
            recordable = name in ("flows", "links", "queues", "placements")
            raise InputError(
                f"the run has no {name!r} table"
                + (
                    f": it was left out of scenario.record (add {name!r} to it)"
                    if recordable
                    else f"; it has {', '.join(self.tables)}"
                )
            )
        return self.tables[name]

    @property
    def flows(self) -> pa.Table:
        """One row per flow (same columns on both engines)."""
        return self.table("flows")

    @property
    def tasks(self) -> pa.Table:
        """One row per application or trace task."""
        return self.table("tasks")

    @property
    def links(self) -> pa.Table:
        """Every directed link in every window, with its utilization."""
        return self.table("links")

    def measured(self, name: str) -> pa.Table:
        """Table ``name`` without the rows that start before ``scenario.warmup`` (all rows without one)."""
        t = self.table(name)
        warmup = float(self.stats.get("warmup_s", 0.0))
        if warmup <= 0.0 or "start_s" not in t.column_names:
            return t
        import pyarrow.compute as pc

        return t.filter(pc.greater_equal(t["start_s"], warmup))

    def summary(self) -> str:
        """A few lines for the terminal (after ``scenario.warmup``, when given)."""
        if "flows" in self.tables:
            f = self.measured("flows")
            fct = f["fct_s"].to_numpy(zero_copy_only=False)
            done = fct[~np.isnan(fct)]
            lines = [
                f"engine {self.engine}: {f.num_rows} flows, {len(done)} finished"
                + (
                    f", FCT p50 {fmt_seconds(quantile(done, 0.5))} p99 {fmt_seconds(quantile(done, 0.99))}"
                    if len(done)
                    else ""
                )
            ]
        else:
            lines = [
                f"engine {self.engine}: {self.stats.get('flows', 0)} flows, {self.stats.get('completed', 0)} "
                "finished (flows not recorded: scenario.record)"
            ]
        t = self.measured("tasks")
        if t.num_rows:
            tct = t["tct_s"].to_numpy(zero_copy_only=False)
            ok = tct[~np.isnan(tct)]
            if len(ok):
                lines.append(
                    f"{t.num_rows} tasks, {len(ok)} finished, time p50 {fmt_seconds(quantile(ok, 0.5))} "
                    f"p99 {fmt_seconds(quantile(ok, 0.99))}"
                )
        for k in ("rebinds", "detours", "class_changes", "drops", "marks"):
            if self.stats.get(k):
                lines.append(f"{k.replace('_', ' ')}: {self.stats[k]}")
        if "chunk_reads_hedged" in self.stats:
            s = self.stats
            lines.append(
                f"hedged reads: {s['chunk_reads_hedged']:.0f} of {s.get('chunk_reads', 0):.0f}, "
                f"{s['chunk_reads_hedge_used']:.0f} finished sooner for it; "
                f"{s['hedge_cancelled_flows']:.0f} flows cancelled under way (their rows end at the cut)"
            )
        if self.stats.get("warmup_s"):
            lines.append(
                f"(flows and tasks starting after the {fmt_seconds(self.stats['warmup_s'])} warm-up)"
            )
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)

    def write(self, out: str | Path, force: bool = False) -> Path:
        """Write every table as Parquet, ``stats.json`` and ``report.html`` into ``out`` (the output rule)."""
        with OutputDir.open(out, "run", force=force) as od, od.transaction("run") as tmp:
            meta = {k.encode(): v.encode() for k, v in self.provenance.items()}
            for name, table in self.tables.items():
                pq.write_table(table.replace_schema_metadata(meta), tmp / f"{name}.parquet")
            stats = {**self.stats, **self.provenance, "notes": self.notes}
            (tmp / "stats.json").write_text(json.dumps(stats, indent=2))
            from netheat.scenario_report import write_scenario_report

            write_scenario_report(self, tmp / "report.html")
        return Path(out)


def _parse_set(items: list[str]) -> list[tuple[str, str]]:
    out = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(
                f"--set {item!r}: write KEY=VALUE, e.g. --set routing.policy=adaptive "
                "or --set topology.loop-size=4"
            )
        value = value.strip()
        # A bare word is a string: --set routing.policy=adaptive.
        if value and value[0] not in "\"'[{" and not _is_toml_scalar(value):
            value = json.dumps(value)
        out.append((key.strip(), value))
    return out


def _is_toml_scalar(v: str) -> bool:
    if v in ("true", "false"):
        return True
    try:
        float(v.replace("_", ""))
        return True
    except ValueError:
        return False


def run_cli(args: argparse.Namespace) -> int:
    """``netheat run``."""
    scn = Scenario.from_toml(args.scenario).with_override_texts(_parse_set(args.set or []))
    if args.check:
        info = scn.check(data_dir=args.data_dir)
        print(
            f"{args.scenario}: ok ({info['engine']} engine; {info['hosts']} hosts, {info['links']} links; "
            f"{info['flows']} open-loop flows, {info['tasks']} application tasks; "
            f"datacenter {info['datacenter']})"
        )
        return 0
    if args.out is None:
        raise InputError("netheat run: --out DIR is required (or --check to only validate)")
    from netheat.simulate import _Progress

    bar = _Progress(sys.stderr.isatty())
    try:
        res = scn.run(data_dir=args.data_dir, progress=bar)
    finally:
        bar.close()
    res.write(args.out, force=args.force)
    print(res.summary())
    print(f"wrote {args.out}/ ({', '.join(f'{k}.parquet' for k in res.tables)}, stats.json, report.html)")
    return 0


def add_cli(sub: Any) -> None:
    """Register ``netheat run``."""
    from netheat.output import add_force

    p = sub.add_parser(
        "run",
        help="run a scenario: a datacenter, a workload and a stack of policies in one TOML file",
        description=(
            "Run a scenario file on the flow or packet engine and write DIR/{flows,tasks,links}.parquet "
            "(plus queues.parquet on the packet engine, blocks.parquet under a storage policy, "
            "placements.parquet and migrations.parquet under a placement policy), "
            "DIR/stats.json and DIR/report.html. See docs/scenarios.md and examples/scenarios/."
        ),
        epilog=help_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("scenario", help="scenario TOML file")
    p.add_argument("--out", default=None, help="output directory (see `Outputs` in the README)")
    p.add_argument(
        "--check", action="store_true", help="read, build and check the scenario, print its size, run nothing"
    )
    p.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help=(
            "override a dotted key, e.g. --set routing.policy=adaptive --set topology.loop-size=4 "
            "(repeatable; a bare word is a string)"
        ),
    )
    p.add_argument("--data-dir", default=None, help="data directory for datasets the workload names")
    add_force(p)
    p.set_defaults(func=lambda a: run_cli(a))


DOC_HEAD = """# Scenarios

<!-- Generated by `python -m netheat.scenario docs > docs/scenarios.md` from the Rust
structs that read scenario files (crates/netheat-scenario/src/config.rs); do not edit
by hand. tests/python/test_scenario.py checks that it is current. -->

A scenario is one TOML file: a datacenter, a workload and the policies of each
kind of decision. `netheat run scenario.toml --out DIR` runs it;
`--set KEY=VALUE` overrides any dotted key (`--set topology.loop-size=4`,
`--set routing.policy=adaptive`, `--set workload.traffic.0.load=0.5`). From
Python: `netheat.Scenario.from_toml(path).with_overrides({...}).run()`.

- **Datacenter**: `[topology] file = "dc.toml"` with any `[topology]` key beside
  `file` overriding the file's, or the datacenter tables of `netheat topo`
  (`[topology]`, `[hosts]`, `[provisioning]`, `[[rack-group]]`, `[[events]]`)
  inline. `[[events]]` may also come with a file (after the file's own): a
  ToR down from the start is `events = [{ at = "0s", nodes = ["tor2"],
  action = "fail" }]`.
- **Workload**: `[workload] file = "w.toml"`, or `[[workload.traffic]]` and
  `[[workload.app]]` tables inline, with the schema of `netheat workload
  generate` (`kind = "file-write"` writes files through replication pipelines
  for the storage policies; `kind = "compute-job"` runs jobs of tasks with
  cores, memory and network demand for the placement policies; `kind =
  "cluster"` is a Borg-like cluster's jobs (the hotspot paper's UTP
  setting): Poisson jobs at `cpu-load` of the cores, `max-tasks-per-job`
  tasks of up to `max-cores-per-task` cores running an exponential
  `task-mean` once placed, each sending a flow capped at its demand to a
  server in another rack (log-normal per job around
  `bandwidth-median-per-core`, `heavy-share` of jobs `heavy-factor` times
  heavier, estimates off by `estimate-sigma`, drifting by `drift-sigma` for
  `drift-share` of the tasks every detection window), or jobs from a job
  table (`jobs = "cloudsimpy-jobs"` or a CSV of yours with its columns,
  arrivals times `time-scale`), with `queries`
  (analytical queries, `query-<name>` tasks) every `query-period`: the
  `[placement]` policy schedules them, keeps tasks that fit nowhere
  pending and restarts migrated ones after `placement.restart-delay`, and
  the routing policy routes their flows; its
  measures are in `stats.json` (`placement_hot_tor_share`,
  `placement_p98_tor_util`, `placement_cell_util`, `migrations`,
  `net_intensive_on_hot_share`, and why placements land on hot ToRs:
  `measured_on_hot_tie_share`, `_above_balance_share`,
  `_cool_busier_cpu_share`, `_calm_now_share`...); `kind =
  "shuffle-job"` is one shuffle job at time 0 on servers placed by `nodes`,
  `first-rack`, `placement` (`contiguous`, `two-loops`) and `pattern`
  (`all-to-all`, `into-last-rack`), `flows-per-pair` flows of
  `bytes-per-pair` each: the Subways experiments' jobs; `kind =
  "aggregation"` is the Baraat paper's tasks: `task-sizes` (`bing`,
  `data-analytics`, `uniform`, `pareto`, `fixed` with `task-size`),
  `structure` (`one-stage`, `two-stage`, `storage`), `placement` (`rack`,
  `pool`, `front-end`: clients in the first racks reading from the
  others, the §5.1 testbed), `fanout`, `aggregators` and Poisson arrivals
  at a `load` of the aggregators' links (`front-end`: of their racks'
  uplinks if smaller); two-stage tasks have `mid-aggregators`, each a
  random host of its rack or, with `mid-host = "first"`, the rack's first
  host; `flow-size-range` sets the `uniform` law's range (default 2-50 KB);
  senders compute an exponential time of mean `compute` before they
  answer (two-stage mid-levels: of `mid-compute`, default `compute`);
  `client-queue = true` makes each aggregator serve
  one task at a time and queue the others (the tasks table's `queued_s`);
  `kind = "incast"` is trains of `incasts` incasts about `period` apart,
  `fanin` senders in other racks each sending one message (a task) of the
  next of `message-sizes` to a receiver: the CloudBurst slides' incasts;
  `kind = "memcache"` takes `server-racks` and `client-racks`; `kind =
  "chunk-store"` is chunk operations at `rate` from `client-racks` (default:
  the racks without disks), `read-share` reads of a chunk picked among those
  stored (`read-from = "all"`, written ones once their write has finished,
  or `"stored"`, those stored before the run) and writes of new chunks of
  `sizes` with `replicas` over `fault-tolerance + 1` racks (`write =
  "direct"` from the client to each replica, or `"pipeline"`), or as
  erasure-coded stripes (`erasure = { data = 6, parity = 3 }`: one chunk
  of a sixth per rack, a read fetching the data chunks in parallel, or,
  when a failure has cut one off, the first reachable chunks of the stripe:
  a degraded read; `storage.hedge-reads-after` also reads more, once, when
  a read is still waiting after that long), with
  `stored` chunks placed before the run by `storage.initial-policy`: each
  disk access waits in the FIFO queue of one of the host's disks and takes
  its access time plus its bytes at its rate; the tasks table's `network_s`
  and `io_s` split each operation's time (the hotspot paper's CCP setting,
  `experiments/scenarios/ccp-chunks.toml`). A
  `[[workload.traffic]]` table with `precalculated = true` runs alone first
  and is then taken off the links' capacity step by step
  (`scenario.background-step`), at least the per-flow fair share left: a
  background no decision can change (Sinbad's simulation), counted in the
  `links` table's `utilization` and, apart, in its `background` column.
  `file-write` files are `file-size` long or, with `mean-file-blocks`, of
  1 + a geometric number of full blocks. A `coflow` table's
  `bytes-scale` scales the trace's jobs to a smaller cluster (Sinbad's EC2
  experiment, `experiments/scenarios/sinbad-ec2.toml`). Jobs that write to
  the file system (`experiments/scenarios/sinbad-ec2-jobs.toml`): a
  `coflow` app with `output-ratio` makes each shuffle a MapReduce job
  (`mr-job`) whose reducers each write `output-ratio` times the bytes
  they received once their shuffle input has arrived, and `kind =
  "write-job"` is write-only jobs at `rate`, each taking the mappers and
  bytes (times `bytes-scale`) of a shuffle of `dataset` drawn at random,
  every mapper writing an equal share; both take `block`, `replicas` and
  `fault-tolerance` as `file-write` does, and their blocks are placed by
  the storage policy. A job's time in writes runs from its first block
  request to its end (the experiment values `write_mean_s` and
  `<kind>.write_mean_s`). A `coflow` app with `precalculated = true` has
  its shuffles precalculated like such traffic, and in the run each
  shuffle flow is a pause of the time it took alone, so its reducers'
  writes still wait for it (`experiments/scenarios/sinbad-fb2010-jobs.toml`,
  Sinbad's simulation with jobs).
- **Policies**: the sections below. Keys left out take the policy's own
  default (the papers' values, documented with each policy in
  docs/architecture.md).

Combinations that mean nothing stop with exit 2 naming both keys: a
`[transport]` on the flow engine, a flow scheduler other than `fair-share`,
`subways-ecmp` routing or a storage or placement policy on the packet
engine, a storage policy without
tasks that write blocks (`file-write`, `write-job`, a `coflow` with
`output-ratio`) or chunks (`chunk-store`), a placement policy without `compute-job` tasks or a
`cluster` app, a `cluster` app without `[placement]` or
`scenario.duration` or with a flow scheduler other than `fair-share`, and
`scheduling.policy = "spc"` or `"rcp"` with `adaptive`, `detour` or
`subways-ecmp` routing, a storage or placement policy or capacity
`[[events]]`.

`scheduling.policy = "spc"` runs the tasks through Baraat's Smart Priority
Class protocol (SIGCOMM'14 §4.3, Algorithms 1 and 2) instead of the flow
engine: a round-based simulator (one round per `scheduling.rtt`) on ECMP
paths drawn when the run starts, with the same tasks as `fifo-lm` and the
same tables (`links` from the bytes each flow sent per round). Compare it
with the idealized scheduler it approximates:
`netheat run examples/scenarios/baraat-spc.toml --out runs/spc` and
`--set scheduling.policy=fifo-lm`. `scheduling.class-size` maps several
consecutive tasks onto one class and `class-unit = "flow"` gives every flow
its own (§5.3's task aggregation and per-flow serialization);
`scheduling.policy = "rcp"` is the same protocol with every flow in one
class, per-flow fair share at the protocol's rounds: the paper's FS
baseline in its testbed and ns-2 runs (`experiments/baraat-task-size.toml`,
`baraat-tiny-flows.toml`, `baraat-task-aggregation.toml`).

The packet engine runs application tasks as the flow engine does (a step
starts when what it waits for has finished: a memcache response when its
request has arrived), and `routing.policy = "adaptive"` and `"detour"` there
are the Subways controller of the flow engine, choosing each flow's path as it
starts and re-binding or detouring flows from the links' counters every
`routing.period` (`experiments/memcache.toml`); with `routing.least-queued =
true` (ours) each packet takes its flow's least-queued path instead, detours
through a neighbouring server included. On the packet engine,
`transport.kind` is the transport of every flow, or of
the application tasks' messages when `transport.traffic-kind` sets the
open-loop traffic's: CloudBurst's incast messages over DCTCP background is
`kind = "cloudburst"`, `traffic-kind = "dctcp"`
(`experiments/scenarios/cloudburst-incast.toml`). Baselines get CloudBurst's
isolation with `transport.task-class = 0` under background traffic of
`priority = 1` (strict priority) and, optionally, `transport.small-queue`.

Every run writes the same tables whichever engine ran (`flows`, `tasks`,
`links`; `queues` on the packet engine; `blocks` under a storage policy;
`placements` and `migrations` under a placement policy), plus
`stats.json` and `report.html`. Columns are documented in
crates/netheat-scenario/src/result.rs. Examples: examples/scenarios/.

## Keys

| key | values | meaning |
|---|---|---|
"""


def docs_markdown() -> str:
    """``docs/scenarios.md``, generated from :func:`schema`."""
    rows = [f"| `{k}` | {v.replace('|', '/')} | {d.replace('|', '/')} |" for k, v, d in key_table()]
    return DOC_HEAD + "\n".join(rows) + "\n"


if __name__ == "__main__":  # pragma: no cover - `python -m netheat.scenario docs`
    if sys.argv[1:] == ["docs"]:
        sys.stdout.write(docs_markdown())
    else:
        sys.exit("usage: python -m netheat.scenario docs")
