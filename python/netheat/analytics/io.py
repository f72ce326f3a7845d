"""Reading and validating link and latency telemetry, lazily with Polars.

Link samples (CSV, Parquet, or a directory of Parquet files) need the
columns ``timestamp, link, direction, utilization``; instead of
``utilization`` they may give ``bytes`` and ``capacity_bps`` plus an
interval (an ``interval_s`` column, ``window_end_s``, or the ``interval_s``
argument), and then ``utilization = 8 * bytes / (capacity_bps * interval)``.
netheat's own ``links.parquet`` is accepted as is: ``window_start_s`` is the
timestamp, ``window_end_s - window_start_s`` the interval, and a ToR link's
``rack`` is its ``tor<N>`` end (``src_node`` or ``dst_node``).

Optional per-link columns: ``layer, rack, rack_type, uplink_class, qos,
capacity_bps, storage_share, storage_tb, net_tasks``. They are per-link
attributes: the value of each directed link's first row is used.

Optional per-sample columns: ``storage_utilization`` and
``compute_utilization``, the part of the sample's utilization carried by
storage and by compute traffic (fractions of the link's capacity, like
``utilization``). They drive the Mixed-rack attribution (hotspot paper
§3.2, see :func:`netheat.analytics.hotspots.mixed_attribution`). And
``utilization_<QoS class>`` (e.g. ``utilization_PC``): that class's part
of the utilization, for the weighted-effective utilization of latency
samples by QoS class (Appendix C, see
:func:`netheat.analytics.latency.associate`).

Timestamps are seconds (numbers) or date-times (ISO 8601 strings, with or
without a UTC offset; naive ones are taken as UTC), turned into seconds.

Latency samples need ``start_s, latency_s, op`` and the links the
operation used (``links``/``link``: link names) or its ToRs
(``tors``/``tor``/``racks``/``rack``: rack names as in the link samples'
``rack`` column, e.g. ``tor3``), each a list column or a string separated
by ``;``. Optional: ``network_latency_s``, ``qos``, ``size_bytes`` (or
``bytes``), and ``compute_ratio`` (share of the sample's time spent
computing, in [0, 1]) or ``compute_s`` (its computing time) for the
compute-ratio view (hotspot paper Figure 12b).

Nothing is dropped silently: bad link samples (missing columns,
unparsable timestamps or numbers, utilization outside [0, 1.5]) raise
:class:`netheat.errors.InputError` naming the file, the column, the first
bad value and how many rows are affected; latency samples without a usable
link are counted by reason and reported (see
:mod:`netheat.analytics.latency`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from netheat.errors import InputError

MAX_TIMESTAMP_S = 1e12
"""Largest timestamp magnitude accepted, in seconds (about 31,700 years from the epoch)."""

MIN_INTERVAL_S = 1e-6
"""Shortest sample interval accepted (given or inferred from timestamps), in seconds."""

MAX_UTILIZATION = 1.5
"""Largest utilization accepted (bursts measured over short windows can exceed 1)."""

LINK_REQUIRED = ("timestamp", "link", "direction", "utilization")
"""Columns every link-sample file needs (``utilization`` may be derived from ``bytes``)."""

LINK_TEXT_ATTRS = ("layer", "rack", "rack_type", "uplink_class", "qos")
"""Optional text attributes of a link."""

LINK_NUMERIC_ATTRS = ("capacity_bps", "storage_share", "storage_tb", "net_tasks")
"""Optional numeric attributes of a link (its rack's, for the rack columns)."""

LINK_TRAFFIC_COLUMNS = ("storage_utilization", "compute_utilization")
"""Optional per-sample utilization carried by storage / compute traffic (fractions of capacity)."""

QOS_UTILIZATION_PREFIX = "utilization_"
"""Optional per-sample columns ``utilization_<QoS class>``: that class's utilization."""

LINK_CODE_BITS = 21
"""Bits of a link's code in the directed-link key ``lk`` (at most 2,097,152 distinct links)."""

DIR_CODE_BITS = 20
"""Bits of a direction's code in ``lk``."""

ATTR_HEAD_ROWS = 2_000_000
"""Per-link attributes are read from the first rows; links not seen there are looked up afterwards."""

LATENCY_REQUIRED = ("start_s", "latency_s", "op")
"""Columns every latency-sample file needs (plus a links or ToRs column)."""

LINK_LIST_COLUMNS = ("links", "link")
TOR_LIST_COLUMNS = ("tors", "tor", "racks", "rack")

_DT_FORMATS = (
    "%Y-%m-%dT%H:%M:%S%.f%#z",
    "%Y-%m-%d %H:%M:%S%.f%#z",
    "%Y-%m-%dT%H:%M:%S%.f",
    "%Y-%m-%d %H:%M:%S%.f",
)

PathLike = str | os.PathLike[str]


@dataclass
class LinkTelemetry:
    """Validated link samples.

    ``lf`` is a lazy frame with ``lk`` (an Int64 key of the directed link:
    link code << 20 | direction code, so that aggregations hash one integer),
    ``timestamp`` (float seconds) and ``utilization`` (float fraction), plus
    the :data:`LINK_TRAFFIC_COLUMNS` the file has (null where a row leaves
    them empty); ``attrs`` has one row per directed link: ``lk, link, direction`` (as
    text) and the optional attribute columns that were present (and ``rack``
    derived from node names when possible). ``interval_s`` is the
    sample interval: given, or the smallest gap between distinct timestamps.
    """

    lf: pl.LazyFrame
    attrs: pl.DataFrame
    source: str
    rows: int
    interval_s: float
    start_s: float
    end_s: float
    notes: list[str] = field(default_factory=list)
    raw: pl.LazyFrame | None = None
    attr_aggs: list[pl.Expr] = field(default_factory=list)

    def ensure_attrs(self, keys: pl.Series) -> None:
        """Look up the attributes of directed links (``lk`` values) missing from ``attrs`` (a scan)."""
        missing = keys.filter(~keys.is_in(self.attrs["lk"].implode()))
        if missing.len() == 0 or self.raw is None:
            return
        more = (
            self.raw.with_columns(_lk_expr(self.raw))
            .filter(pl.col("lk").is_in(missing.implode()))
            .group_by("lk")
            .agg(self.attr_aggs)
            .collect(engine="streaming")
        )
        self.attrs = _finish_attrs(pl.concat([self.attrs.select(more.columns), more], how="vertical_relaxed"))

    def qos_columns(self) -> dict[str, str]:
        """The per-QoS utilization columns of the samples: ``{QoS class: column}``."""
        names = self.lf.collect_schema().names()
        n = len(QOS_UTILIZATION_PREFIX)
        return {c[n:]: c for c in names if c.startswith(QOS_UTILIZATION_PREFIX) and len(c) > n}

    def has(self, column: str) -> bool:
        """Whether the per-link attribute ``column`` is available (present and not all null)."""
        return column in self.attrs.columns and self.attrs[column].null_count() < self.attrs.height


@dataclass
class LatencyTelemetry:
    """Validated latency samples (small enough to hold in memory).

    ``df`` has ``sid`` (row number, from 1), ``start_s``, ``latency_s``,
    ``op``, optional ``network_latency_s``, ``qos``, ``size_bytes``,
    ``compute_ratio``, ``compute_s``, and ``links`` and/or ``tors`` as
    lists of strings.
    """

    df: pl.DataFrame
    source: str
    rows: int


def _code(column: str, dtype: pl.DataType) -> pl.Expr:
    if dtype.is_integer():
        return pl.col(column).cast(pl.Int64)
    if isinstance(dtype, pl.Categorical | pl.Enum):
        return pl.col(column).to_physical().cast(pl.Int64)
    return pl.col(column).cast(pl.String).cast(pl.Categorical).to_physical().cast(pl.Int64)


def _lk_expr(raw: pl.LazyFrame) -> pl.Expr:
    """Expression: the directed-link key ``lk = link code << 20 | direction code``."""
    schema = raw.collect_schema()
    link, d = _code("link", schema["link"]), _code("direction", schema["direction"])
    return (link * (1 << DIR_CODE_BITS) + d).alias("lk")


def scan(path: PathLike, what: str) -> pl.LazyFrame:
    """Lazily scan a CSV file (all columns as text), a Parquet file or a directory of Parquet files."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"{what} file {p}: not found")
    if p.is_dir():
        files = sorted(p.glob("*.parquet"))
        if not files:
            raise InputError(f"{what} directory {p}: no *.parquet files in it")
        return pl.scan_parquet(files)
    # The format is told by content, not by name: Parquet starts with PAR1, anything else is CSV.
    try:
        with p.open("rb") as f:
            magic = f.read(4)
    except OSError as e:
        raise InputError(f"{what} file {p}: cannot read: {e.strerror or e}") from None
    if magic == b"PAR1":
        return pl.scan_parquet(p)
    return pl.scan_csv(p, infer_schema=False)


def _schema(lf: pl.LazyFrame, src: str, what: str) -> dict[str, pl.DataType]:
    try:
        return dict(lf.collect_schema())
    except (pl.exceptions.PolarsError, OSError) as e:
        raise InputError(f"{what} file {src}: cannot be read: {e}") from e


def _missing(src: str, what: str, cols: dict[str, pl.DataType], need: list[str], hint: str = "") -> None:
    missing = [c for c in need if c not in cols]
    if missing:
        names = ", ".join(f"`{c}`" for c in missing)
        found = ", ".join(cols) or "none"
        raise InputError(
            f"{what} file {src}: missing column{'s' if len(missing) > 1 else ''} {names}"
            f"{hint}; found columns: {found}"
        )


def numeric(name: str, dtype: pl.DataType, src: str) -> pl.Expr:
    """Expression turning column ``name`` into Float64 (text that is not a number becomes null)."""
    if dtype == pl.String:
        return pl.col(name).str.strip_chars().cast(pl.Float64, strict=False)
    if dtype.is_numeric():
        return pl.col(name).cast(pl.Float64)
    raise InputError(f"file {src}: column `{name}` must be numeric, not {dtype}")


def timestamp_seconds(name: str, dtype: pl.DataType, src: str) -> pl.Expr:
    """Expression turning column ``name`` (seconds or date-times) into float seconds (null if unparsable)."""
    if dtype.is_numeric():
        return pl.col(name).cast(pl.Float64)
    if isinstance(dtype, pl.Datetime):
        return pl.col(name).dt.epoch("us").cast(pl.Float64) / 1e6
    if dtype == pl.Date:
        return pl.col(name).cast(pl.Datetime("us")).dt.epoch("us").cast(pl.Float64) / 1e6
    if dtype != pl.String:
        raise InputError(f"file {src}: column `{name}` must hold seconds or date-times, not {dtype}")
    text = pl.col(name).str.strip_chars()
    parsed = [text.cast(pl.Float64, strict=False)]
    for fmt in _DT_FORMATS:
        tz = "UTC" if "%#z" in fmt else None
        dt = text.str.to_datetime(fmt, strict=False, time_unit="us", time_zone=tz)
        parsed.append(dt.dt.epoch("us").cast(pl.Float64) / 1e6)
    date = text.str.to_date("%Y-%m-%d", strict=False).cast(pl.Datetime("us"))
    parsed.append(date.dt.epoch("us").cast(pl.Float64) / 1e6)
    return pl.coalesce(parsed)


@dataclass
class _Check:
    """A validation rule: rows of ``column`` where ``mask`` holds are bad; ``count`` counts them."""

    column: str
    mask: pl.Expr
    message: str
    count: pl.Expr | None = None


def _null(column: str, message: str) -> _Check:
    """A missing-value rule, counted cheaply with ``null_count`` (column metadata in Parquet)."""
    return _Check(column, pl.col(column).is_null(), message, pl.col(column).null_count())


def _problems(raw: pl.LazyFrame, checks: list[_Check], counts: pl.DataFrame) -> list[str]:
    """One message per violated rule: first bad value, its data row, and how many rows."""
    problems = []
    for i, c in enumerate(checks):
        n = int(counts[f"bad{i}"][0] or 0)
        if n:
            row, value = _first_bad(raw, c.column, c.mask)
            if len(value) > 60:
                value = value[:57] + "..."  # a huge cell is not echoed whole
            shown = f" {value}" if value and value != "None" else ""
            problems.append(
                f"{c.message}{shown} in column `{c.column}`: {_rows(n)} (first at data row {row})"
            )
    return problems


def _counts(checks: list[_Check]) -> list[pl.Expr]:
    return [(c.count if c.count is not None else c.mask.sum()).alias(f"bad{i}") for i, c in enumerate(checks)]


def _first_bad(lf: pl.LazyFrame, raw: str, bad: pl.Expr) -> tuple[int, str]:
    """(1-based data row, raw value) of the first row where ``bad`` holds (error path only)."""
    first = (
        lf.with_row_index("__row", offset=1)
        .filter(bad)
        .select("__row", pl.col(raw).cast(pl.String))
        .head(1)
        .collect()
    )
    if first.height == 0:
        return 0, ""
    return int(first["__row"][0]), str(first[raw][0])


def _rows(n: int) -> str:
    return f"{n} row" if n == 1 else f"{n} rows"


def _collect(lf: pl.LazyFrame, src: str, what: str) -> pl.DataFrame:
    try:
        return lf.collect(engine="streaming")
    except pl.exceptions.PolarsError as e:
        raise InputError(f"{what} file {src}: cannot be read: {e}") from e


def scan_links(path: PathLike, interval_s: float | None = None) -> LinkTelemetry:
    """Open and validate link samples; see the module docstring for the accepted columns.

    One streaming pass counts bad rows; any bad row raises
    :class:`~netheat.errors.InputError` naming the file, column, first bad
    value (with its 1-based data row) and the number of bad rows.
    """
    src = os.fspath(path)
    what = "links"
    raw = scan(path, what)
    cols = _schema(raw, src, what)
    checks: list[_Check] = []

    ts_col = "timestamp" if "timestamp" in cols else ("window_start_s" if "window_start_s" in cols else "")
    need = [ts_col or "timestamp", "link", "direction"]
    has_bytes = "utilization" not in cols and "bytes" in cols
    if has_bytes:
        need += ["capacity_bps"]
    else:
        need += ["utilization"]
    hint = " (need timestamp, link, direction and utilization, or bytes with capacity_bps and an interval)"
    _missing(src, what, cols, need, hint)

    ts = timestamp_seconds(ts_col, cols[ts_col], src)
    checks.append(_null(ts_col, "missing timestamp"))
    if cols[ts_col] == pl.String:
        checks.append(_Check(ts_col, pl.col(ts_col).is_not_null() & ts.is_null(), "unparsable timestamp"))
    bad_ts = ts.is_not_null() & (ts.is_nan() | ts.is_infinite() | (ts.abs() > MAX_TIMESTAMP_S))
    checks.append(_Check(ts_col, bad_ts, f"timestamp not finite or beyond ±{MAX_TIMESTAMP_S:g} s:"))
    for key in ("link", "direction"):
        checks.append(_null(key, f"missing {key}"))

    # Interval of each sample, when the file says.
    interval: pl.Expr | None = None
    if "interval_s" in cols:
        interval = numeric("interval_s", cols["interval_s"], src)
    elif "window_end_s" in cols and ts_col == "window_start_s":
        interval = numeric("window_end_s", cols["window_end_s"], src) - ts
    elif interval_s is not None:
        interval = pl.lit(float(interval_s))

    if has_bytes:
        if interval is None:
            raise InputError(
                f"links file {src}: `bytes` needs an interval: an `interval_s` or `window_end_s` column, "
                "or --interval"
            )
        b = numeric("bytes", cols["bytes"], src)
        cap = numeric("capacity_bps", cols["capacity_bps"], src)
        util = 8.0 * b / (cap * interval)
        checks.append(_Check("bytes", pl.col("bytes").is_not_null() & b.is_null(), "not a number"))
        checks.append(_null("bytes", "missing bytes"))
        checks.append(_Check("capacity_bps", (~(cap > 0)).fill_null(True), "not a positive number"))
        ucol = "bytes"
    else:
        util = numeric("utilization", cols["utilization"], src)
        if cols["utilization"] == pl.String:
            checks.append(
                _Check("utilization", pl.col("utilization").is_not_null() & util.is_null(), "not a number")
            )
        checks.append(_null("utilization", "missing utilization"))
        ucol = "utilization"
    oob = util.is_not_null() & (util.is_nan() | (util < 0) | (util > MAX_UTILIZATION))
    checks.append(_Check(ucol, oob, f"utilization outside [0, {MAX_UTILIZATION}]"))
    traffic = {c: numeric(c, cols[c], src) for c in LINK_TRAFFIC_COLUMNS if c in cols}
    traffic |= {
        c: numeric(c, cols[c], src)
        for c in cols
        if c.startswith(QOS_UTILIZATION_PREFIX) and len(c) > len(QOS_UTILIZATION_PREFIX)
    }
    for c, e in traffic.items():
        bad = pl.col(c).is_not_null() & (e.is_null() | e.is_nan() | (e < 0) | (e > MAX_UTILIZATION))
        checks.append(_Check(c, bad, f"not a number in [0, {MAX_UTILIZATION}]"))

    link_code, dir_code = _code("link", cols["link"]), _code("direction", cols["direction"])
    stats = [pl.len().alias("rows"), ts.min().alias("tmin"), ts.max().alias("tmax")]
    stats += [link_code.min().alias("lmin"), link_code.max().alias("lmax"), dir_code.max().alias("dmax")]
    stats += _counts(checks)
    if interval is not None:
        stats += [interval.min().alias("imin")]
    st = _collect(raw.select(stats), src, what)
    problems = _problems(raw, checks, st)
    if problems:
        raise InputError(f"links file {src}: " + "; ".join(problems))
    rows = int(st["rows"][0])
    if rows == 0:
        raise InputError(f"links file {src}: no samples")

    notes: list[str] = []
    if interval is not None:
        ival = float(st["imin"][0])
        if not ival > 0:
            raise InputError(f"links file {src}: sample interval must be positive, got {ival}")
    else:
        gaps = _collect(
            raw.select(ts.alias("t")).unique().sort("t").select(pl.col("t").diff().filter(pl.col("t") > 0)),
            src,
            what,
        )["t"]
        gaps = gaps.drop_nulls()
        ival = float(gaps.min()) if gaps.len() else 1.0  # type: ignore[arg-type]
        notes.append(f"sample interval inferred from timestamp spacing: {ival:g} s")
    if ival < MIN_INTERVAL_S:
        raise InputError(
            f"links file {src}: sample interval of {ival:g} s is below {MIN_INTERVAL_S:g} s (timestamps "
            "closer than that); timestamps must be in seconds"
        )

    lmin, lmax, dmax = (int(st[c][0]) for c in ("lmin", "lmax", "dmax"))
    if lmin < 0 or lmax >= 1 << LINK_CODE_BITS or dmax >= 1 << DIR_CODE_BITS:
        raise InputError(
            f"links file {src}: link ids must be 0..{(1 << LINK_CODE_BITS) - 1} (or names, at most "
            f"{1 << LINK_CODE_BITS:,} of them); found {lmin}..{lmax}"
        )
    lk = _lk_expr(raw)
    lf = raw.select(
        lk, ts.alias("timestamp"), util.alias("utilization"), *(e.alias(c) for c, e in traffic.items())
    )
    distinct = int(
        _collect(lf.select(pl.struct("lk", "timestamp").hash().n_unique().alias("n")), src, what)["n"][0]
    )
    if distinct < rows:
        notes.append(
            f"warning: {rows - distinct:,} duplicate samples (same link, direction and timestamp as another "
            "row); each is kept and weighs in its window's mean"
        )
    aggs = _attr_aggs(cols, src)
    attrs = _finish_attrs(_collect(raw.head(ATTR_HEAD_ROWS).group_by(lk).agg(aggs), src, what))
    _check_attrs(attrs, cols, src)
    return LinkTelemetry(
        lf=lf,
        raw=raw,
        attr_aggs=aggs,
        attrs=attrs,
        source=src,
        rows=rows,
        interval_s=ival,
        start_s=float(st["tmin"][0]),
        end_s=float(st["tmax"][0]) + ival,
        notes=notes,
    )


_TOR_NAME = r"^tor\d+$"


def _attr_aggs(cols: dict[str, pl.DataType], src: str) -> list[pl.Expr]:
    """Per-``lk`` aggregations: a directed link's name, direction and attributes from its first row."""
    text = [c for c in LINK_TEXT_ATTRS if c in cols]
    nums = [c for c in LINK_NUMERIC_ATTRS if c in cols]
    nodes = [c for c in ("src_node", "dst_node") if c in cols and "rack" not in cols]
    aggs = [pl.col("link").first(), pl.col("direction").cast(pl.String).first()]
    aggs += [pl.col(c).cast(pl.String).first() for c in [*text, *nodes]]
    aggs += [pl.col(c).cast(pl.String).first().alias(f"__raw_{c}") for c in nums]
    aggs += [numeric(c, cols[c], src).first() for c in nums]
    return aggs


def _check_attrs(a: pl.DataFrame, cols: dict[str, pl.DataType], src: str) -> None:
    for c in LINK_NUMERIC_ATTRS:
        if c not in cols or f"__raw_{c}" not in a.columns:
            continue
        bad = a.filter(pl.col(f"__raw_{c}").is_not_null() & pl.col(c).is_null())
        if bad.height:
            raise InputError(
                f"links file {src}: column `{c}` is not a number for {_rows(bad.height)} links "
                f"(first: {bad[f'__raw_{c}'][0]!s} on link {bad['link'][0]!s})"
            )


def _finish_attrs(a: pl.DataFrame) -> pl.DataFrame:
    """Derive ``rack`` from ``tor<N>`` node names when needed; sort by ``lk``."""
    if "src_node" in a.columns and "dst_node" in a.columns and "rack" not in a.columns:
        s, d = pl.col("src_node"), pl.col("dst_node")
        a = a.with_columns(
            pl.when(s.str.contains(_TOR_NAME))
            .then(s)
            .when(d.str.contains(_TOR_NAME))
            .then(d)
            .otherwise(None)
            .alias("rack")
        )
    return a.sort("lk")


def _name_list(name: str, dtype: pl.DataType) -> pl.Expr:
    """A list-of-strings expression from a list column or a ``;``-separated string column."""
    if isinstance(dtype, pl.List):
        e = pl.col(name).list.eval(pl.element().cast(pl.String).str.strip_chars())
    else:
        e = pl.col(name).cast(pl.String).str.split(";").list.eval(pl.element().str.strip_chars())
    return e.list.eval(pl.element().filter(pl.element().is_not_null() & (pl.element() != "")))


def scan_latency(path: PathLike) -> LatencyTelemetry:
    """Read and validate latency samples; see the module docstring for the accepted columns.

    Unparsable ``start_s``, missing ``op``, and latencies that are not
    non-negative numbers raise :class:`~netheat.errors.InputError`; rows
    without a usable link are kept here and counted as skips by
    :func:`netheat.analytics.latency.associate`.
    """
    src = os.fspath(path)
    what = "latency"
    raw = scan(path, what)
    cols = _schema(raw, src, what)
    _missing(src, what, cols, list(LATENCY_REQUIRED))
    link_col = next((c for c in LINK_LIST_COLUMNS if c in cols), "")
    tor_col = next((c for c in TOR_LIST_COLUMNS if c in cols), "")
    if not link_col and not tor_col:
        raise InputError(
            f"latency file {src}: missing column `links` (or `tors`): the links or ToRs each operation "
            f"used; found columns: {', '.join(cols)}"
        )
    ts = timestamp_seconds("start_s", cols["start_s"], src)
    lat = numeric("latency_s", cols["latency_s"], src)
    sel: list[pl.Expr] = [ts.alias("start_s"), lat.alias("latency_s"), pl.col("op").cast(pl.String)]
    checks = [
        _Check("start_s", ts.is_null(), "missing or unparsable start time"),
        _Check(
            "start_s",
            ts.is_not_null() & (ts.is_nan() | ts.is_infinite() | (ts.abs() > MAX_TIMESTAMP_S)),
            f"start time not finite or beyond ±{MAX_TIMESTAMP_S:g} s:",
        ),
        _Check(
            "latency_s",
            lat.is_null() | lat.is_nan() | lat.is_infinite() | (lat < 0),
            "latency not a finite non-negative number",
        ),
        _null("op", "missing op"),
    ]
    if "network_latency_s" in cols:
        net = numeric("network_latency_s", cols["network_latency_s"], src)
        sel.append(net.alias("network_latency_s"))
        bad_net = pl.col("network_latency_s").is_not_null() & (
            net.is_null() | net.is_nan() | net.is_infinite() | (net < 0)
        )
        checks.append(_Check("network_latency_s", bad_net, "network latency not a non-negative number"))
    if "qos" in cols:
        sel.append(pl.col("qos").cast(pl.String))
    size_col = "size_bytes" if "size_bytes" in cols else ("bytes" if "bytes" in cols else "")
    if size_col:
        size = numeric(size_col, cols[size_col], src)
        sel.append(size.alias("size_bytes"))
        bad_size = pl.col(size_col).is_not_null() & (size.is_null() | size.is_nan() | (size < 0))
        checks.append(_Check(size_col, bad_size, "size not a non-negative number"))
    for c, hi in (("compute_ratio", 1.0), ("compute_s", float("inf"))):
        if c in cols:
            v = numeric(c, cols[c], src)
            sel.append(v.alias(c))
            bad_v = pl.col(c).is_not_null() & (v.is_null() | v.is_nan() | (v < 0) | (v > hi))
            checks.append(
                _Check(c, bad_v, "not a number in [0, 1]" if hi == 1.0 else "not a non-negative number")
            )
    if link_col:
        sel.append(_name_list(link_col, cols[link_col]).alias("links"))
    if tor_col and tor_col != link_col:
        sel.append(_name_list(tor_col, cols[tor_col]).alias("tors"))
    counts = _collect(raw.select([pl.len().alias("rows"), *_counts(checks)]), src, what)
    problems = _problems(raw, checks, counts)
    if problems:
        raise InputError(f"latency file {src}: " + "; ".join(problems))
    df = _collect(raw.with_row_index("sid", offset=1).select([pl.col("sid"), *sel]), src, what)
    return LatencyTelemetry(df=df, source=src, rows=df.height)
