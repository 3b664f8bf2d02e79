"""Declarations whose table or column is gone (renamed or dropped by DuckDB's own client, out of
provsql_dp's reach): ``SHOW BOUNDS``, ``SHOW GROUP KEYS`` and ``SHOW POLICIES`` flag them in a
``status`` column, as ``SHOW PROTECTED`` does, naming the statement that removes them; ``DROP
BOUNDS`` and ``DROP GROUP KEYS`` find them by the name they were declared under
(``sql/_orphan_declarations.py``)."""

from __future__ import annotations

import re

import duckdb
import pytest

import provsql_dp
from provsql_dp.errors import DeclarationError


def _database(path):
    con = provsql_dp.connect(str(path))
    con.execute("CREATE TABLE people(id INT PRIMARY KEY, salary DOUBLE, city VARCHAR, age INT)")
    con.execute("CREATE TABLE cities(name VARCHAR)")
    con.execute("CREATE TABLE towns(name VARCHAR)")
    con.execute("CREATE TABLE trips(id INT PRIMARY KEY, km INT, fare INT)")
    con.execute("PROTECT TABLE trips; PROTECT TABLE people")
    con.execute("SET BOUNDS ON people (salary) BETWEEN 0 AND 100")
    con.execute("SET BOUNDS ON trips (fare) BETWEEN 0 AND 10")
    con.execute("SET BOUNDS ON trips (km) BETWEEN 0 AND 10")
    con.execute("SET GROUP KEYS ON people (city) FROM cities (name)")
    con.execute("SET GROUP KEYS ON people (age) FROM towns (name)")
    con.execute("SET GROUP KEYS ON trips (km) VALUES (1, 2)")
    con.execute("CREATE POLICY near ON trips (km) AS DELTA 0.01 DOMAIN [0, 100) WIDTH 1 BOUNDED")
    con.execute("SET PRIVACY BUDGET 10 FOR USER 'default'")
    con.execute("SELECT COUNT(*) FROM trips WITH EPSILON 1")
    con.commit()
    con.close()
    with duckdb.connect(str(path)) as duck:  # DuckDB's own client: out of provsql_dp's reach
        duck.execute("ALTER TABLE trips RENAME TO journeys")
        duck.execute("ALTER TABLE people DROP COLUMN salary")
        duck.execute("DROP TABLE cities")
    return provsql_dp.connect(str(path))


def _ledger(con):
    return (con.execute("SELECT * FROM _provsql_dp.ledger ORDER BY id").fetchall(),
            con.execute("SELECT * FROM _provsql_dp.budget ORDER BY ALL").fetchall())


def test_show_flags_the_declarations_whose_table_or_column_is_gone(tmp_path):
    con = _database(tmp_path / "db.duckdb")
    cur = con.execute("SHOW BOUNDS")
    assert cur.description[-1][0] == "status"
    bounds = {(r[1], r[2]): r[-1] for r in cur.fetchall()}
    assert bounds[("people", "salary")] == (
        "column salary missing (renamed or dropped outside provsql_dp): "
        "DROP BOUNDS ON people (salary)")
    assert bounds[("trips", "fare")] == ("table missing (renamed or dropped outside "
                                         "provsql_dp): DROP BOUNDS ON trips (fare)")
    cur = con.execute("SHOW GROUP KEYS")
    assert cur.description[-1][0] == "status"
    keys = {(r[1], r[2]): r[-1] for r in cur.fetchall()}
    assert keys[("people", "city")].startswith("source table cities missing")
    assert keys[("people", "city")].endswith(": DROP GROUP KEYS ON people (city)")
    assert keys[("people", "age")] == "ok"
    assert keys[("trips", "km")].startswith("table missing")
    cur = con.execute("SHOW POLICIES")
    assert cur.description[-1][0] == "status"
    assert cur.fetchall()[0][-1] == ("table missing (renamed or dropped outside provsql_dp): "
                                     "DROP POLICY near")


def test_the_drop_statements_remove_an_orphan_by_its_declared_name(tmp_path):
    con = _database(tmp_path / "db.duckdb")
    ledger = _ledger(con)
    assert [r[2] for r in con.execute("SHOW BOUNDS ON trips").fetchall()] == ["fare", "km"]
    assert [r[2] for r in con.execute('SHOW GROUP KEYS ON main."TRIPS"').fetchall()] == ["km"]
    con.execute("DROP BOUNDS ON trips (fare)")
    con.execute('DROP BOUNDS ON main."Trips" (KM)')
    con.execute("DROP GROUP KEYS ON trips (km)")
    con.execute("DROP BOUNDS ON people (salary)")  # its table is there, its column is not
    con.execute("DROP GROUP KEYS ON people (city)")
    con.execute("DROP POLICY near")
    con.execute("UNPROTECT TABLE trips")
    assert [r[1:3] for r in con.execute("SHOW BOUNDS").fetchall()] == []
    assert [r[1:3] for r in con.execute("SHOW GROUP KEYS").fetchall()] == [("people", "age")]
    assert con.execute("SHOW POLICIES").fetchall() == []
    assert _ledger(con) == ledger


@pytest.mark.parametrize("stmt, message", [
    ("DROP BOUNDS ON nowhere (x)", "no bounds are declared on nowhere (x)"),
    ("DROP BOUNDS ON journeys (fare)", "no bounds are declared on journeys (fare)"),
    ("DROP GROUP KEYS ON trips (fare)", "no group keys are declared on trips (fare)"),
])
def test_a_drop_of_nothing_still_says_so_and_changes_nothing(tmp_path, stmt, message):
    con = _database(tmp_path / "db.duckdb")
    before = [con.execute(s).fetchall() for s in ("SHOW BOUNDS", "SHOW GROUP KEYS")], _ledger(con)
    with pytest.raises(DeclarationError, match=re.escape(message)):
        con.execute(stmt)
    assert ([con.execute(s).fetchall() for s in ("SHOW BOUNDS", "SHOW GROUP KEYS")],
            _ledger(con)) == before
