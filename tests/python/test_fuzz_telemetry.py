"""Fuzzing the telemetry readers: any bytes give a result or an InputError, never another exception.

Hypothesis generates link- and latency-sample files (mutations of valid
ones: bytes flipped, lines cut or repeated, extreme values put in cells,
a BOM, the wrong encoding) and feeds them to the readers behind
``netheat analyze``. The number of examples is Hypothesis' profile:
``ci`` (the default here, bounded for ``make test``) or ``fuzz`` (``make
fuzz``: ``NETHEAT_FUZZ=1``, many more).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from netheat.analytics.io import scan_latency, scan_links
from netheat.analytics.report import AnalysisConfig, analyze
from netheat.errors import InputError

settings.register_profile(
    "ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
settings.register_profile(
    "fuzz", max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
settings.load_profile("fuzz" if os.environ.get("NETHEAT_FUZZ") else "ci")

LINKS = (
    "timestamp,link,direction,utilization,rack\n"
    "0,tor0-up,up,0.5,tor0\n1,tor0-up,up,0.9,tor0\n2,tor0-up,up,0.8,tor0\n"
    "0,tor1-up,up,0.1,tor1\n1,tor1-up,up,0.2,tor1\n2,tor1-up,up,0.95,tor1\n"
)
LATENCY = "start_s,latency_s,op,tors\n0.5,0.001,read,tor0\n1.5,0.004,write,tor0;tor1\n"
EXTREMES = [
    "",
    "nan",
    "inf",
    "-inf",
    "-1",
    "1e300",
    "-1e300",
    "1e-320",
    "18446744073709551616",
    "x",
    '"',
    "\x00",
]


@st.composite
def mutated(draw: st.DrawFn, base: str) -> bytes:
    lines = base.splitlines()
    for _ in range(draw(st.integers(0, 4))):
        op = draw(st.sampled_from(["cell", "drop", "dup", "cut"]))
        i = draw(st.integers(0, len(lines) - 1))
        if op == "cell":
            cells = lines[i].split(",")
            j = draw(st.integers(0, len(cells) - 1))
            cells[j] = draw(st.sampled_from(EXTREMES) | st.text(max_size=12))
            lines[i] = ",".join(cells)
        elif op == "drop" and len(lines) > 1:
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        else:
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
    data = ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")
    if draw(st.booleans()):
        k = draw(st.integers(0, len(data) - 1))
        data = data[:k] + bytes([draw(st.integers(0, 255))]) + data[k + 1 :]
    if draw(st.integers(0, 9)) == 0:
        data = b"\xef\xbb\xbf" + data
    return data


def _read(kind: str, data: bytes, tmp: Path) -> None:
    """Read ``data`` as ``kind`` (links: the reader; latency and analyze: the whole analysis)."""
    f = tmp / f"{kind}.csv"
    f.write_bytes(data)
    ok = tmp / "ok.csv"
    ok.write_text(LINKS)
    try:
        if kind == "links":
            scan_links(f).lf.collect()
        elif kind == "latency":
            analyze(ok, f, config=AnalysisConfig(hotspot_window_s=1.0, latency_window_s=1.0, min_samples=1))
        else:
            analyze(f, None, config=AnalysisConfig(hotspot_window_s=1.0, min_samples=1))
    except InputError as e:
        assert len(str(e)) < 3000


@given(data=mutated(LINKS))
@example(data=b"timestamp,link,direction,utilization\n2,a,up,0.8\n2,b,up,0.95\n")  # one timestamp: no gap
def test_links_reader_never_crashes(tmp_path: Path, data: bytes) -> None:
    _read("links", data, tmp_path)


@given(data=mutated(LATENCY))
@example(data=LATENCY.replace("0.5,", "nan,").encode())  # found by this fuzzer: NaN start time
def test_latency_reader_never_crashes(tmp_path: Path, data: bytes) -> None:
    _read("latency", data, tmp_path)


@settings(max_examples=40 if not os.environ.get("NETHEAT_FUZZ") else 1000)
@given(data=mutated(LINKS))
@example(data=LINKS.replace("\n0,tor0", "\n1e-320,tor0").encode())  # found by this fuzzer: 1e-320 s gap
def test_whole_analysis_never_crashes(tmp_path: Path, data: bytes) -> None:
    _read("analyze", data, tmp_path)


@given(data=st.binary(max_size=400))
def test_links_reader_on_arbitrary_bytes(tmp_path: Path, data: bytes) -> None:
    _read("links", data, tmp_path)


def test_the_seeds_themselves_read(tmp_path: Path) -> None:
    """The unmutated files are valid, so the fuzzers start from files that pass."""
    (tmp_path / "l.csv").write_text(LINKS)
    tel = scan_links(tmp_path / "l.csv")
    assert tel.rows == 6
    (tmp_path / "t.csv").write_text(LATENCY)
    assert scan_latency(tmp_path / "t.csv").rows == 2


pytestmark = pytest.mark.filterwarnings("ignore")
