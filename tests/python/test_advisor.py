"""`netheat.Advisor` from Python: the module's example runs, and answers are hand-computed.

two-tier-4x4.toml: 4 racks x 4 hosts of 32 cores, 10 Gbps ToR uplinks
(tor<r> -> core is directed link 32 + 2r).
"""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

import netheat
import netheat.advisor
from netheat.errors import ConfigError, InputError

ROOT = Path(__file__).resolve().parents[2]
TOPO = ROOT / "examples" / "topologies" / "two-tier-4x4.toml"
T = 1_800_000_000.0


def test_module_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    res = doctest.testmod(netheat.advisor, optionflags=doctest.ELLIPSIS)
    assert res.attempted >= 3 and res.failed == 0


def test_answers_by_hand(tmp_path: Path) -> None:
    adv = netheat.Advisor(TOPO)
    adv.observe([32, 34, 36, 38], [1e9, 2e9, 8e9, 0.0], at_s=T)
    hot = [t["tor"] for t in adv.tors(now_s=T)["tors"] if t["above"]]
    assert hot == ["tor2"]  # 80% > 75%
    # A 1 Gbps task: projected 20%, 30%, 90%, 10% -> tor3 first, tor2 last.
    a = adv.place_task(now_s=T, cores=2, demand_bps=1e9, candidates=["r0h0", "r1h0", "r2h0", "r3h0"])
    assert [r["host"] for r in a["ranked"]] == ["r3h0", "r0h0", "r1h0", "r2h0"]
    # UTP's load-balance key: floor(20 x max(CPU after, projected ToR)); 2 of 32 cores is 6.25%, below
    # every projected ToR, so the keys are floor(20 x 0.1, 0.2, 0.3, 0.9).
    assert [r["keys"]["utp-balance"] for r in a["ranked"]] == [2, 4, 6, 18]
    x = adv.extender(["r0h0", "r2h0"], demand_bps=1e9, now_s=T)
    assert [(n["pass"], n["score"]) for n in x["nodes"]] == [(True, 8), (False, 1)]
    m = adv.migrate(now_s=T, tor="tor2", tasks=[{"id": "a", "rate_bps": 0.5e9}, {"id": "b", "rate_bps": 2e9}])
    assert m["move"] == ["b"] and abs(m["after_utilization"] - 0.6) < 1e-12
    with pytest.raises(InputError, match="unknown host"):
        adv.place_task(now_s=T, candidates=["nope"])
    bad = tmp_path / "adv.toml"
    bad.write_text("[advisor]\nstale-after = 5\n")
    with pytest.raises(ConfigError) as e:
        netheat.Advisor(TOPO, bad)
    assert str(e.value).startswith(f"{bad}:2:15: ") and "write the unit" in str(e.value)


def test_docs_are_current() -> None:
    want = netheat.advisor.docs_markdown()
    have = (ROOT / "docs" / "advisor.md").read_text()
    assert have == want, "docs/advisor.md is stale: python -m netheat.advisor docs > docs/advisor.md"
