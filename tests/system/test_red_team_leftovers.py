"""Red team h85attack's leftovers (h86follow): what it found and did not fix.

* A column renamed into a declared column's name inherited its declarations (``RENAME COLUMN
  salary TO old_salary; RENAME COLUMN bonus TO salary``: the bounds and the policy of ``salary``
  then described ``bonus``): an ``ALTER TABLE`` of a declared column, or into a declared name, is
  refused before it runs (``interfaces/dbapi/declared_columns.py``).
* An analyst's ``SHOW ALL TABLES`` and ``DESCRIBE _provsql_dp.budget`` listed provsql_dp's own
  tables (names and columns): they are hidden from analysts (``sql/analyst``); the curator sees
  them.
* ``SHOW PROTECTED`` listed a declaration whose table had been renamed or dropped outside
  provsql_dp as if all were well: its ``status`` column says what is missing, and ``UNPROTECT
  TABLE`` removes the orphan by the name it was declared under.
* ``OPTIONS (theta = 1e-9)`` was refused by ``must lie between 1e-09 and 1e+15, got 1e-09``
  (the limits compared as doubles): the stated limits are now included; ``SET PRIVACY EPSILON
  1e400`` was accepted (and echoed 400 digits): refused as an option of that size is.
* A curator's ``SET GLOBAL default_collation = 'nocase'`` reached an analyst's releases: a
  private ``COUNT(DISTINCT s)`` over 'A' and 'a' released about the row count and ``s = 'a'``
  counted the 'A' rows too, charged. It is a pinned setting now (``privacy/_session_settings``).
"""

from __future__ import annotations

import duckdb
import pytest

import provsql_dp
from provsql_dp.errors import DeclarationError, ProgrammingError


def _database(path):
    con = provsql_dp.connect(str(path))
    con.execute("CREATE TABLE people(id INT PRIMARY KEY, owner INT, salary DOUBLE, bonus DOUBLE, "
                "city VARCHAR, age INT, note VARCHAR)")
    con.execute("INSERT INTO people SELECT i, i % 3, i * 10.0, i, 'c' || (i % 2), i, 'n' "
                "FROM range(12) t(i)")
    con.execute("CREATE TABLE cities(name VARCHAR, label VARCHAR)")
    con.execute("INSERT INTO cities VALUES ('c0', 'a'), ('c1', 'b')")
    con.execute("PROTECT TABLE people BY (owner)")
    con.execute("SET BOUNDS ON people (salary) BETWEEN 0 AND 100")
    con.execute("SET GROUP KEYS ON people (city) FROM cities (name)")
    con.execute("CREATE TABLE trips(id INT PRIMARY KEY, km INT, fare INT)")
    con.execute("PROTECT TABLE trips")
    con.execute("CREATE POLICY near ON trips (km) AS DELTA 0.01 DOMAIN [0, 100) WIDTH 1 BOUNDED")
    con.commit()
    return con


def _columns(con, table="people"):
    return [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()]


@pytest.mark.parametrize("change, named", [
    ("ALTER TABLE people RENAME COLUMN salary TO old_salary", "salary"),
    ("ALTER TABLE people RENAME COLUMN bonus TO salary", "salary"),
    ("ALTER TABLE people RENAME bonus TO SALARY", "SALARY"),
    ('/* first */ ALTER TABLE main."People" RENAME COLUMN "bonus" TO "city"', "city"),
    ("ALTER TABLE trips RENAME COLUMN fare TO km", "km"),
    ("ALTER TABLE trips DROP km", "km"),
    ("ALTER TABLE trips ALTER km SET DATA TYPE VARCHAR", "km"),
    ("ALTER TABLE people RENAME COLUMN owner TO holder", "owner"),
    ("ALTER TABLE people RENAME COLUMN note TO owner", "owner"),
    ("ALTER TABLE people RENAME COLUMN city TO town", "city"),
    ("ALTER TABLE cities RENAME COLUMN name TO n", "name"),
    ("ALTER TABLE cities RENAME COLUMN label TO name", "name"),
    ("ALTER TABLE people DROP COLUMN salary", "salary"),
    ("ALTER TABLE IF EXISTS people DROP COLUMN IF EXISTS city", "city"),
    ("ALTER TABLE people ALTER COLUMN owner TYPE VARCHAR", "owner"),
])
def test_a_declared_column_cannot_be_renamed_dropped_or_replaced(tmp_path, change, named):
    con = _database(tmp_path / "db.duckdb")
    before = [_columns(con, t) for t in ("people", "cities", "trips")]
    with pytest.raises(DeclarationError, match=rf"the column name '{named}' is named by a "
                                               r"declaration .*Drop it \("):
        con.execute(change)
    assert [_columns(con, t) for t in ("people", "cities", "trips")] == before


def test_a_declared_name_cannot_be_reused_after_the_column_is_gone(tmp_path):
    con = _database(tmp_path / "db.duckdb")
    con.execute("DROP BOUNDS ON people (salary)")
    con.execute("ALTER TABLE people DROP COLUMN note")  # undeclared: passes
    con.execute("SET BOUNDS ON people (bonus) BETWEEN 0 AND 20")
    con.execute("ALTER TABLE people RENAME COLUMN salary TO pay")  # its bounds dropped: passes
    with pytest.raises(DeclarationError, match="cannot add column people.bonus"):
        con.execute("ALTER TABLE people ADD COLUMN bonus INT")


def test_the_way_out_and_harmless_changes_pass(tmp_path):
    con = _database(tmp_path / "db.duckdb")
    con.execute("ALTER TABLE people RENAME COLUMN note TO remark")
    con.execute("ALTER TABLE people ALTER COLUMN salary SET DEFAULT 0")  # no value changes
    con.execute("ALTER TABLE people ALTER COLUMN salary TYPE INT")  # bounds: checked at use
    con.execute("ALTER TABLE people ADD COLUMN extra INT")
    con.execute("DROP BOUNDS ON people (salary)")
    con.execute("ALTER TABLE people RENAME COLUMN salary TO old_salary")
    con.execute("ALTER TABLE people RENAME COLUMN bonus TO salary")
    con.execute("SET BOUNDS ON people (salary) BETWEEN 0 AND 20")
    con.execute("SET PRIVACY BUDGET 5 FOR USER 'default'")
    assert "old_salary" in _columns(con) and "salary" in _columns(con)
    assert con.execute("SELECT SUM(salary) FROM people WITH EPSILON 1").fetchall()


def test_an_analyst_does_not_see_provsql_dps_own_tables(tmp_path):
    con = _database(tmp_path / "db.duckdb")
    con.execute("SET PRIVACY BUDGET 5 FOR USER 'ann'")
    con.commit()
    assert "_provsql_dp" in {r[1] for r in con.execute("SHOW ALL TABLES").fetchall()}
    ann = provsql_dp.connect(str(tmp_path / "db.duckdb"), role="analyst", user="ann")
    cur = ann.execute("SHOW ALL TABLES")
    assert [c[0] for c in cur.description][:3] == ["database", "schema", "name"]
    assert sorted(r[1:3] for r in cur.fetchall()) == [
        ("main", "cities"), ("main", "people"), ("main", "trips")]
    assert sorted(ann.execute("SHOW TABLES").fetchall()) == [("cities",), ("people",), ("trips",)]
    for sql in ("DESCRIBE _provsql_dp.budget", "SHOW _provsql_dp.audit_log",
                "DESCRIBE \"_PROVSQL_DP\".ledger"):
        with pytest.raises(provsql_dp.errors.PrivacyError, match="is not one"):
            ann.execute(sql)
    for sql in ("SELECT table_name FROM information_schema.tables",
                "SELECT table_name FROM duckdb_tables()", "SELECT * FROM _provsql_dp.budget"):
        with pytest.raises(provsql_dp.errors.PrivacyError):
            ann.execute(sql)


def test_show_protected_flags_a_declaration_whose_table_or_column_is_gone(tmp_path):
    con = _database(tmp_path / "db.duckdb")
    con.execute("CREATE TABLE visits(id INT PRIMARY KEY, who INT)")
    con.execute("PROTECT TABLE visits BY (who)")
    assert {r[1]: r[-1] for r in con.execute("SHOW PROTECTED").fetchall()} == {
        "people": "ok", "trips": "ok", "visits": "ok"}
    con.commit()
    con.close()
    with duckdb.connect(str(tmp_path / "db.duckdb")) as duck:  # DuckDB's own client
        duck.execute("ALTER TABLE people RENAME TO staff")
        duck.execute("ALTER TABLE visits RENAME COLUMN who TO whom")
    con = provsql_dp.connect(str(tmp_path / "db.duckdb"))
    cur = con.execute("SHOW PROTECTED")
    assert cur.description[-1][0] == "status"
    status = {r[1]: r[-1] for r in cur.fetchall()}
    assert status["trips"] == "ok"
    assert status["people"].startswith("table missing (renamed or dropped outside provsql_dp): "
                                       "UNPROTECT TABLE people")
    assert status["visits"].startswith("column who missing")
    con.execute("UNPROTECT TABLE people")  # the orphan, by the name it was declared under
    assert sorted(r[1] for r in con.execute("SHOW PROTECTED").fetchall()) == ["trips", "visits"]


def test_the_stated_option_limits_are_included_and_a_huge_epsilon_is_refused(tmp_path):
    con = _database(tmp_path / "db.duckdb")
    con.execute("SET PRIVACY BUDGET 5 FOR USER 'ann'")
    con.commit()
    ann = provsql_dp.connect(str(tmp_path / "db.duckdb"), role="analyst", user="ann")
    sql = ("SELECT SUM(salary) FROM people WITH EPSILON 0.1 OPTIONS (mechanism = 'recursive', "
           "theta = {})")
    with pytest.raises(ProgrammingError, match="option theta must lie between 1e-09 and "
                                               "1e\\+15, got 1e-10"):
        ann.execute(sql.format("1e-10"))
    assert ann.execute("SHOW PRIVACY BUDGET").fetchall()[0][2] == "0"
    assert len(ann.execute(sql.format("1e-9")).fetchall()) == 1  # the lower limit itself
    for eps in ("1e400", "1e-400"):
        with pytest.raises(ProgrammingError, match="epsilon is beyond what a double holds"):
            ann.execute(f"SET PRIVACY EPSILON {eps}")
    assert ann.execute("SET PRIVACY EPSILON 1e300").fetchall() == [
        ("default epsilon set to 1e300",)]  # the largest a double holds with room: accepted


def test_a_global_default_collation_is_refused_before_the_charge(tmp_path):
    con = _database(tmp_path / "db.duckdb")
    con.execute("SET PRIVACY BUDGET 50 FOR USER 'ann'")
    con.commit()
    ann = provsql_dp.connect(str(tmp_path / "db.duckdb"), role="analyst", user="ann")
    sql = ("SELECT COUNT(DISTINCT note) FROM people WITH EPSILON 1",
           "SELECT COUNT(*) FROM people WHERE city = 'C0' WITH EPSILON 1")
    try:
        con.execute("SET GLOBAL default_collation = 'nocase'")  # the analyst's connection too
        for q in sql:
            with pytest.raises(provsql_dp.OperationalError,
                               match="default_collation is nocase.*RESET GLOBAL "
                                     "default_collation.*Nothing was charged"):
                ann.execute(q)
        assert ann.execute("SHOW PRIVACY BUDGET").fetchall()[0][2] == "0"
        con.execute("SET GLOBAL default_collation = 'binary'")  # the default, spelled out
        assert all(len(ann.execute(q).fetchall()) == 1 for q in sql)
    finally:
        con.execute("RESET GLOBAL default_collation")
