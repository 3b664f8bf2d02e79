"""A connection's default R2T ``lp_gap`` (``connect(..., lp_gap=γ)``, ``con.lp_gap``,
``provsql-dp shell|serve --lp-gap γ``): used by statements that give no ``OPTIONS (lp_gap = …)``,
overridden by those that do, stated by ``EXPLAIN PRIVACY``; bad values refused by name."""

from __future__ import annotations

import numpy as np
import pytest

import provsql_dp
from provsql_dp.errors import InterfaceError
from provsql_dp.mechanisms.r2t import race as r2t

from graph_sql_kit import TRIANGLES, example_db, example_file

R2T = TRIANGLES + " WITH EPSILON 1 OPTIONS (mechanism = 'r2t', max_contribution = 64)"


def _gap(con, sql) -> float:
    (rel,) = con.execute(sql).privacy.releases
    return rel.params["lp_gap"]


def test_the_connection_default_applies_unless_the_statement_gives_one():
    con = example_db(budget=10, seed=1)
    assert con.lp_gap is None and _gap(con, R2T) == r2t.DEFAULT_LP_GAP
    con.lp_gap = 0
    assert _gap(con, R2T) == 0.0
    con.lp_gap = 0.5
    assert _gap(con, R2T) == 0.5
    assert _gap(con, R2T.replace("= 64)", "= 64, lp_gap = 0.25)")) == 0.25  # the statement wins
    (row,) = con.execute("EXPLAIN PRIVACY " + R2T).fetchall()
    assert "lp_gap γ = 0.5" in row[-1]
    con.lp_gap = None
    assert _gap(con, R2T) == r2t.DEFAULT_LP_GAP


def test_bad_values_are_refused_by_name():
    con = provsql_dp.connect()
    for bad in (-0.1, float("inf"), float("nan"), "0.1", True):
        with pytest.raises(InterfaceError, match="lp_gap must be a nonnegative finite number"):
            con.lp_gap = bad
    with pytest.raises(InterfaceError, match="lp_gap"):
        provsql_dp.connect(lp_gap=-1)
    assert provsql_dp.connect(lp_gap=np.float64(0.125)).lp_gap == 0.125


def test_shell_flag_sets_the_default(tmp_path, capsys):
    from provsql_dp.interfaces import cli

    db = example_file(tmp_path)
    explain = f"EXPLAIN PRIVACY {R2T};"
    assert cli.main(["shell", db, "--lp-gap", "0.375", "-c", explain]) == 0
    assert "lp_gap γ = 0.375" in capsys.readouterr().out
    assert cli.main(["shell", db, "--lp-gap", "0", "-c", explain]) == 0
    assert "lp_gap" not in capsys.readouterr().out  # γ = 0: every LP exact, nothing to state
    for bad in ("-1", "inf", "lots"):
        with pytest.raises(SystemExit):
            cli.main(["shell", db, "--lp-gap", bad])
        assert "expected a nonnegative number" in capsys.readouterr().err


def test_web_engine_takes_the_default(tmp_path):
    pytest.importorskip("starlette")
    from provsql_dp.interfaces.web.engine import Engine

    assert Engine(str(tmp_path / "w.duckdb"), lp_gap=0.25).connection("curator", "a").lp_gap == 0.25
    assert Engine(str(tmp_path / "v.duckdb")).connection("curator", "a").lp_gap is None
    eng = Engine(str(tmp_path / "u.duckdb"), release_time_limit=9.0)
    assert eng.connection("curator", "a").release_time_limit == 9.0
