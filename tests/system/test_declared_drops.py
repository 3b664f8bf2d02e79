"""A ``DROP`` or ``CREATE OR REPLACE`` of a table that declarations name, through provsql_dp:
refused before it runs, naming the declarations and the statements that remove them
(``interfaces/dbapi/declared_drops.py``); the database, the declarations and the ledger are as
they were."""

from __future__ import annotations

import pytest

import provsql_dp
from conftest import declared_state
from provsql_dp.errors import DeclarationError


def _database(path):
    con = provsql_dp.connect(str(path))
    con.execute("CREATE TABLE people(id INT PRIMARY KEY, owner INT, salary DOUBLE, city VARCHAR)")
    con.execute("INSERT INTO people SELECT i, i % 3, i * 10.0, 'c' || (i % 2) FROM range(12) t(i)")
    con.execute("CREATE TABLE cities(name VARCHAR)")
    con.execute("INSERT INTO cities VALUES ('c0'), ('c1')")
    con.execute("PROTECT TABLE people BY (owner)")
    con.execute("CREATE TABLE visits(id INT PRIMARY KEY, pid INT REFERENCES people(id))")
    con.execute("PROTECT TABLE visits BY (pid) REFERENCES people (id)")
    con.execute("SET BOUNDS ON people (salary) BETWEEN 0 AND 100")
    con.execute("CREATE TABLE trips(id INT PRIMARY KEY, km INT)")
    con.execute("PROTECT TABLE trips; SET GROUP KEYS ON trips (km) VALUES (1, 2)")
    con.execute("SET GROUP KEYS ON people (city) FROM cities (name)")
    con.execute("CREATE POLICY near ON trips (km) AS DELTA 0.01 DOMAIN [0, 100) WIDTH 1 BOUNDED")
    con.execute("CREATE SCHEMA s; CREATE TABLE s.\"Logs\"(id INT PRIMARY KEY); PROTECT TABLE s.Logs")
    con.execute("CREATE TABLE notes(x INT); CREATE VIEW v AS SELECT * FROM notes")
    con.execute("SET PRIVACY BUDGET 10 FOR USER 'default'")
    con.execute("SELECT COUNT(*) FROM people WITH EPSILON 1")
    con.commit()
    return con


def _state(con):
    """:func:`conftest.declared_state`, and the protected table's rows."""
    return declared_state(con) + (con.execute("SELECT COUNT(*) FROM people").fetchall(),)


@pytest.mark.parametrize("stmt, names", [
    ("DROP TABLE people", ["PROTECT TABLE people", "PROTECT TABLE visits",
                           "SET BOUNDS ON people (salary)", "SET GROUP KEYS ON people (city)"]),
    ("DROP TABLE IF EXISTS people CASCADE", ["UNPROTECT TABLE visits; UNPROTECT TABLE people"]),
    ('/* tidy */ DROP TABLE main."PEOPLE"', ["DROP BOUNDS ON people (salary)"]),
    ("-- reload\nDROP TABLE trips", ["SET GROUP KEYS ON trips (km)", "DROP POLICY near"]),
    ("DROP TABLE cities", ["SET GROUP KEYS ON people (city) FROM cities (name)",
                           "DROP GROUP KEYS ON people (city)"]),
    ("DROP TABLE visits", ["UNPROTECT TABLE visits"]),
    ("DROP TABLE s.logs", ["UNPROTECT TABLE Logs"]),
    ("DROP SCHEMA s CASCADE", ["cannot drop the schema 's'", "UNPROTECT TABLE Logs"]),
    ("CREATE OR REPLACE TABLE people AS SELECT * FROM people",
     ["cannot replace the table 'people' (CREATE OR REPLACE)", "DELETE FROM people, then "
      "INSERT INTO people SELECT", "UNPROTECT TABLE visits; UNPROTECT TABLE people"]),
    ("CREATE OR REPLACE TABLE Trips(id INT, km VARCHAR)", ["DROP POLICY near"]),
    ("CREATE OR REPLACE VIEW cities AS SELECT 'x' AS name", ["cannot replace the view"]),
    # DuckDB's spellings sqlglot does not all parse: read from the tokens, never let through
    ("CREATE OR REPLACE TABLE trips(id INT, km INT GENERATED ALWAYS AS (id + 1) VIRTUAL)",
     ["cannot replace the table 'trips'"]),
    ("create or replace table TRIPS as pivot notes on x using count(*)",
     ["cannot replace the table 'trips'"]),
    ("CREATE OR REPLACE TABLE db.main.trips AS SELECT 1 AS id",
     ["cannot replace the table 'trips'"]),
])
def test_a_declared_table_cannot_be_dropped_or_replaced(tmp_path, stmt, names):
    con = _database(tmp_path / "db.duckdb")
    before = _state(con)
    with pytest.raises(DeclarationError) as err:
        con.execute(stmt)
    for name in names:
        assert name in str(err.value), (name, str(err.value))
    assert _state(con) == before


def test_inside_a_text_of_several_statements_the_ones_before_stand(tmp_path):
    con = _database(tmp_path / "db.duckdb")
    with pytest.raises(DeclarationError, match="cannot drop the table 'trips'"):
        con.execute("CREATE TABLE extra(x INT); DROP TABLE trips; DROP TABLE notes")
    tables = {r[0] for r in con.execute("SHOW TABLES").fetchall()}
    assert {"extra", "trips", "notes"} <= tables  # the first ran, the refused one and the rest not


def test_undeclared_tables_and_the_way_out_pass(tmp_path):
    con = _database(tmp_path / "db.duckdb")
    con.execute("DROP VIEW v")
    con.execute("CREATE OR REPLACE TABLE notes AS SELECT 1 AS x")
    con.execute("CREATE OR REPLACE TEMP TABLE scratch AS SELECT 1 AS x")  # (people's name would
    con.execute("DROP TABLE temp.scratch")  # shadow the protected table: test_temp_shadowing.py)
    con.execute("DROP TABLE IF EXISTS gone")
    con.execute("DELETE FROM trips; INSERT INTO trips VALUES (1, 2)")  # a reload keeping them
    con.execute("DROP GROUP KEYS ON trips (km); DROP POLICY near; UNPROTECT TABLE trips")
    con.execute("CREATE OR REPLACE TABLE trips AS SELECT 1 AS id, 'x' AS km")
    con.execute("UNPROTECT TABLE visits; UNPROTECT TABLE people; DROP BOUNDS ON people (salary); "
                "DROP GROUP KEYS ON people (city)")
    con.execute("DROP TABLE visits; DROP TABLE people; DROP TABLE cities")
    assert con.execute("SHOW PROTECTED").fetchall()[0][1] == "Logs"
    assert con.execute("SHOW BOUNDS").fetchall() == []
