"""``benchmarks/peers_tumult.py`` and ``benchmarks/_tumult_runner.py`` (Tumult Analytics as a peer,
issues 30 and 28): their examples, the error arithmetic, the penguin statements all accounted for,
and the line printed when Tumult's virtualenv is absent. Tumult itself is never needed here (it
runs from a virtualenv of its own; the measured run is ``benchmarks/peers_tumult_measured.md``)."""

from __future__ import annotations

import doctest
import importlib
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def mods():
    sys.path.insert(0, str(BENCH))
    try:
        yield {n: importlib.import_module(n) for n in
               ("_tumult_runner", "peers_tumult", "_analyst_workload")}
    finally:
        sys.path.remove(str(BENCH))


@pytest.mark.parametrize("name", ["_tumult_runner", "peers_tumult"])
def test_examples(mods, name):
    failed, attempted = doctest.testmod(mods[name], optionflags=doctest.ELLIPSIS)[:2]
    assert attempted and not failed


def test_every_penguin_statement_is_written_or_said_missing(mods):
    tr, w = mods["_tumult_runner"], mods["_analyst_workload"]
    assert not set(tr.PENGUIN_OFFERED) & set(tr.PENGUIN_MISSING)
    assert set(tr.PENGUIN_OFFERED) | set(tr.PENGUIN_MISSING) == {s.name for s in w.STATEMENTS}


def test_scale_workloads_match_ours(mods):
    tr, pt = mods["_tumult_runner"], mods["peers_tumult"]
    assert set(tr.SCALE) == set(pt.PRIVATE)
    for name, private in pt.PRIVATE.items():  # the same query, on the plain view
        assert tr.SCALE[name][0] == private.replace("people", "src")


def test_rel_error_groups(mods):
    rel = mods["peers_tumult"].rel_error
    assert rel([[0, 12.0], [1, 10.0]], [[0, 10.0], [1, 10.0]], 1) == pytest.approx(0.1)
    assert rel([[0, 10.0]], [[0, 10.0], [1, 10.0]], 1) == pytest.approx(0.5)  # a group missing
    assert rel([[None]], [[4.0]], 0) == 1.0


def test_absent_tumult_says_how_to_make_it(mods, monkeypatch, capsys, tmp_path):
    pt = mods["peers_tumult"]
    monkeypatch.delenv(pt.ENV, raising=False)
    assert pt.tumult_python(None) is None
    assert "pip install tmlt.analytics" in capsys.readouterr().out
    assert pt.tumult_python(sys.executable) is None or importlib.util.find_spec("tmlt")
    assert "not installed for" in capsys.readouterr().out
