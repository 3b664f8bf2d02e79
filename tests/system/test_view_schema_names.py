"""A view's names resolve in the view's own database and schema first, then the search path,
as DuckDB binds them: private queries over a view in another schema read the tables the view
reads (not the search path's tables of the same name), and the curator's copy guard finds a
protected table read through such a view."""

from __future__ import annotations

import pytest

import provsql_dp
from conftest import declared_state


def _two_schemas(path):
    """``main.t`` (3 rows) and ``s2.t`` (1000 rows), both protected; ``s2.v`` reads ``t``
    (DuckDB: ``s2.t``), ``s2.w`` reads ``u``, which exists in ``main`` only."""
    con = provsql_dp.connect(str(path))
    con.execute("CREATE SCHEMA s2")
    con.execute("CREATE TABLE main.t AS SELECT range AS id, 1.0 AS x FROM range(3)")
    con.execute("CREATE TABLE s2.t AS SELECT range AS id, 1.0 AS x FROM range(1000)")
    con.execute("CREATE TABLE main.u AS SELECT range AS id FROM range(7)")
    for t in ("main.t", "s2.t", "main.u"):
        con.execute(f"PROTECT TABLE {t} BY (id) AS person")
    con.execute("CREATE VIEW s2.v AS SELECT id, x FROM t")
    con.execute("CREATE VIEW s2.w AS SELECT id FROM u")
    con.execute("SET PRIVACY BUDGET 100000 FOR USER 'default'")
    return con


def test_a_private_query_over_a_view_reads_the_views_own_schema(tmp_path):
    con = _two_schemas(tmp_path / "db.duckdb")
    (n,), = con.execute("SELECT COUNT(*) FROM s2.v WITH EPSILON 1000").fetchall()
    assert abs(n - 1000) < 50, n  # s2.t, as DuckDB reads the view (main.t has 3 rows)
    (n,), = con.execute("SELECT COUNT(*) FROM s2.v AS a JOIN s2.v AS b ON a.id = b.id "
                        "WITH EPSILON 1000").fetchall()
    assert abs(n - 1000) < 50, n
    (n,), = con.execute("SELECT COUNT(*) FROM s2.w WITH EPSILON 1000").fetchall()
    assert abs(n - 7) < 5, n  # not in s2: the search path's main.u


def test_a_copy_through_a_view_in_another_schema_is_refused(tmp_path):
    """``s2.people`` is protected, ``main.people`` is not: a copy of ``s2.v``, which reads
    ``people`` in its own schema, copies protected rows."""
    con = provsql_dp.connect(str(tmp_path / "db.duckdb"))
    con.execute("CREATE SCHEMA s2")
    con.execute("CREATE TABLE main.people AS SELECT 1 AS id")
    con.execute("CREATE TABLE s2.people AS SELECT 2 AS id; PROTECT TABLE s2.people")
    con.execute("CREATE VIEW s2.v AS SELECT id FROM people")
    before = declared_state(con)
    with pytest.raises(provsql_dp.Error, match="people"):
        con.execute("CREATE TABLE copy AS SELECT * FROM s2.v")
    assert declared_state(con) == before
