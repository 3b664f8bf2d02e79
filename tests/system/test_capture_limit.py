"""``max_capture_rows``: a provenance too large for memory never reaches Python.

A private release past the limit reads no data (the data-independent fallback, its ε charged,
the incident recorded for the curator); the analyst's answer has the same shape either way.
The curator's ``provenance`` raises :class:`CaptureTooLarge` with the fix in its message.
"""

from __future__ import annotations

import numpy as np
import pytest

import provsql_dp
from provsql_dp.errors import CaptureTooLarge, InterfaceError
from provsql_dp.interfaces import example_data
from provsql_dp.provenance.capture import DEFAULT_MAX_ROWS, capture

from graph_sql_kit import TRIANGLES, example_db, example_file


@pytest.fixture
def con():
    return example_db(budget=10, seed=3)


def incidents(c) -> list[str]:
    return [r[0] for r in c._duck.execute("SELECT what FROM _provsql_dp.incidents").fetchall()]


def test_default_and_validation():
    c = provsql_dp.connect()
    assert c.max_capture_rows == DEFAULT_MAX_ROWS
    c.max_capture_rows = None
    assert c.max_capture_rows is None
    for bad in (0, -3, 2.5, "10", True):
        with pytest.raises(InterfaceError, match="max_capture_rows"):
            c.max_capture_rows = bad
    with pytest.raises(InterfaceError, match="max_capture_rows"):
        provsql_dp.connect(max_capture_rows=0)
    assert provsql_dp.connect(max_capture_rows=np.int64(5)).max_capture_rows == 5


def test_capture_at_the_limit_is_unchanged(con):
    plan = con.plan(TRIANGLES)
    full = capture(con._duck, plan)
    n = len(full.mono_ptr) - 1
    assert n > 2
    at = capture(con._duck, plan, max_rows=n)  # exactly at the limit: everything comes back
    assert np.array_equal(at.mono_part, full.mono_part) and np.array_equal(at.weights, full.weights)
    with pytest.raises(CaptureTooLarge, match=f"more than {n - 1:,} derivation rows"):
        capture(con._duck, plan, max_rows=n - 1)


def test_curator_provenance_names_the_fix(con):
    con.max_capture_rows = 1
    with pytest.raises(CaptureTooLarge, match=r"max_capture_rows=N"):
        con.provenance(TRIANGLES)
    con.max_capture_rows = None
    assert len(con.provenance(TRIANGLES)) > 1


@pytest.mark.parametrize("options", ["", " OPTIONS (mechanism = 'r2t')"])
def test_private_release_past_the_limit_reads_no_data(con, options):
    before = con.ledger.remaining("default")
    con.max_capture_rows = 1
    cur = con.execute(TRIANGLES + " WITH EPSILON 0.5" + options)
    (row,) = cur.fetchall()
    assert len(row) == 1 and row[0] >= 0
    assert con.ledger.remaining("default") == before - 0.5  # charged either way
    (what,) = incidents(con)
    assert "max_capture_rows = 1" in what and "data-independent fallback" in what


def test_analyst_sees_the_same_shape(tmp_path):
    path = str(tmp_path / "db.duckdb")
    cur = provsql_dp.connect(path)
    example_data.load(cur)
    cur.execute("PROTECT TABLE friendship BY (src, dst) AS member; SET PRIVACY BUDGET 2 FOR USER 'ann'")
    cur.close()
    outcomes = []
    for limit in (None, 1):
        an = provsql_dp.connect(path, role="analyst", user="ann", max_capture_rows=limit)
        c = an.execute(TRIANGLES + " WITH EPSILON 0.5")
        outcomes.append((c.description, len(c.fetchall()), c.privacy.mechanism, c.privacy.epsilon))
        an.close()
    assert outcomes[0] == outcomes[1]


def test_error_estimate_past_the_limit(con):
    con.max_capture_rows = 1
    rows = con.execute("EXPLAIN PRIVACY " + TRIANGLES + " WITH EPSILON 1 ESTIMATE ERROR WITH EPSILON 0.5").fetchall()
    assert rows
    assert any("max_capture_rows = 1" in w for w in incidents(con))


@pytest.mark.parametrize("options", ["", " OPTIONS (mechanism = 'r2t')"])
def test_explain_tells_the_curator(con, options):
    con.max_capture_rows = 1
    text = " ".join(str(v) for r in con.execute("EXPLAIN PRIVACY " + TRIANGLES + " WITH EPSILON 1" + options).fetchall() for v in r)
    assert "max_capture_rows = 1" in text and "fallback" in text


def test_shell_flag_sets_the_limit(tmp_path, capsys):
    """``provsql-dp shell --max-capture-rows N`` reaches the connection: the curator's EXPLAIN
    names the limit; ``none`` lifts it; a bad value is refused by the argument parser."""
    from provsql_dp.interfaces import cli

    db = example_file(tmp_path)
    explain = f"EXPLAIN PRIVACY {TRIANGLES} WITH EPSILON 1;"
    assert cli.main(["shell", db, "--max-capture-rows", "1", "-c", explain]) == 0
    assert "max_capture_rows = 1)" in capsys.readouterr().out
    assert cli.main(["shell", db, "--max-capture-rows", "none", "-c", explain]) == 0
    out = capsys.readouterr().out
    assert "max_capture_rows" not in out and "private sizes" in out
    for bad in ("0", "-2", "lots"):
        with pytest.raises(SystemExit):
            cli.main(["shell", db, "--max-capture-rows", bad])
        assert "positive whole number or 'none'" in capsys.readouterr().err


def test_web_engine_takes_the_limit(tmp_path):
    pytest.importorskip("starlette")
    from provsql_dp.interfaces.web.engine import Engine

    eng = Engine(str(tmp_path / "w.duckdb"), max_capture_rows=7)
    assert eng.connection("curator", "ann").max_capture_rows == 7
    assert Engine(str(tmp_path / "v.duckdb")).connection("curator", "ann").max_capture_rows == DEFAULT_MAX_ROWS
