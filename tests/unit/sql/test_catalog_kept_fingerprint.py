"""The catalog fingerprint read as one row (provsql_dp.sql._catalog_kept.fingerprint): the key
is the one separate reads give — the generation row, then every table of each name in any
schema as read_definitions reads it — and the read leaves no unfinished result on the
connection."""

from __future__ import annotations

import duckdb
import pytest

from provsql_dp.sql._catalog_kept import SETTINGS, fingerprint, read_definitions


@pytest.fixture
def con():
    c = duckdb.connect()
    c.execute("CREATE SCHEMA s; CREATE SEQUENCE s.generation; CREATE SCHEMA o")
    c.execute("CREATE TABLE t(x INT PRIMARY KEY); CREATE TABLE o.T(y VARCHAR); "
              "CREATE TABLE u(z INT); CREATE TABLE \"we'ird\"(a INT)")
    c.execute("SELECT nextval('s.generation')")
    return c


def _separately(con, names, fixed=None):
    read = SETTINGS if fixed is None else SETTINGS[:1]
    g = con.execute("SELECT 'g', currval('s.generation')::VARCHAR, current_database(), "
                    "current_schema(), "
                    + ", ".join(f"current_setting('{s}')" for s in read)).fetchall()[0]
    rows = [g + (fixed or ())]
    for name in names:
        rows += read_definitions(con, name)
    return (names, *sorted(rows, key=repr))


@pytest.mark.parametrize("names", [(), ("t",), ("t", "u"), ("nope",), ("t", "nope"),
                                   ("we'ird",)])
def test_the_key_is_what_separate_reads_give(con, names):
    key = fingerprint(con, names, "s")
    assert key == _separately(con, names)
    fixed = next(r for r in key[1:] if r[0] == "g")[5:]
    assert fingerprint(con, names, "s", fixed) == _separately(con, names, fixed)


def test_a_table_of_the_name_in_another_schema_is_in_the_key(con):
    tables = [r for r in fingerprint(con, ("t",), "s")[1:] if r[0] == "t"]
    assert sorted(r[2] for r in tables) == ["main", "o"]


def test_no_unfinished_result_is_left_on_the_connection(con):
    # this DuckDB refuses a connection's relation API while a result of execute() is unfinished
    # (a fetchone of a one-row result leaves it so)
    fingerprint(con, ("t",), "s")
    assert con.sql("SELECT 2").fetchall() == [(2,)]


def test_no_generation_yet_or_a_failed_read_gives_none():
    c = duckdb.connect()
    c.execute("CREATE SCHEMA s; CREATE SEQUENCE s.generation; CREATE TABLE t(x INT)")
    assert fingerprint(c, ("t",), "s") is None  # never bumped
    assert fingerprint(c, ("t",), "missing") is None  # no such sequence
