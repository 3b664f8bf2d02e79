"""A TEMP table or view under the name of a declared ``main`` table: refused through provsql_dp.

DuckDB resolves ``people`` to ``temp.main.people`` before ``main.people`` in the connection
that made it, and declarations are stored by (schema, table): every declaration made for
``main.people`` (its protection, bounds, group keys, policies) would describe the temporary
table, whose rows and definition they were never checked against, and the planner took it as
protected. The way out: another name for the temporary table."""

from __future__ import annotations

import pytest

import provsql_dp
from conftest import declared_state
from provsql_dp.errors import DeclarationError


@pytest.mark.parametrize("stmt", [
    "CREATE OR REPLACE TEMP TABLE people AS SELECT 1 AS id, 5 AS pay",
    "CREATE TEMP TABLE people(id INT, pay INT)",
    "CREATE TEMPORARY VIEW people AS SELECT 1 AS id",
    'CREATE TEMP TABLE IF NOT EXISTS "People"(id INT)',
    "CREATE TEMP TABLE temp.main.people(id INT)",
])
def test_a_temp_table_shadowing_a_declared_table_is_refused(stmt):
    con = provsql_dp.connect()
    con.execute("CREATE TABLE people(id INT PRIMARY KEY, pay INT); PROTECT TABLE people")
    con.execute("INSERT INTO people VALUES (1, 3)")
    before = declared_state(con)
    temps = "SELECT count(*) FROM duckdb_tables() WHERE database_name = 'temp'"
    with pytest.raises(DeclarationError) as err:
        con.execute(stmt)
    assert "shadow" in str(err.value) and "another name" in str(err.value)
    assert declared_state(con) == before
    assert con.execute(temps).fetchone()[0] == 0


def test_a_temp_table_of_another_name_still_passes():
    con = provsql_dp.connect()
    con.execute("CREATE TABLE people(id INT PRIMARY KEY, pay INT); PROTECT TABLE people")
    con.execute("CREATE TEMP TABLE scratch AS SELECT 1 AS x")
    con.execute("CREATE SCHEMA s2; CREATE TABLE s2.other(id INT); PROTECT TABLE s2.other")
    con.execute("CREATE TEMP TABLE other AS SELECT 1 AS x")  # s2.other is not shadowed
    assert con.execute("SELECT x FROM scratch").fetchall() == [(1,)]
