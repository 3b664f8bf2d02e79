"""Leftovers of session 9's red team and helpers, fixed by h104follow: each refusal names the
problem and the way out, and leaves the database, the declarations and the ledger as they were.

* a table or view created, or renamed, through provsql_dp under the name of a declared table
  dropped outside provsql_dp (an orphan) would take its declarations: refused
  (``interfaces/dbapi/declared_drops.py``);
* ``DROP SCHEMA`` is matched as DuckDB resolves it, database and schema.
"""

from __future__ import annotations

import duckdb
import pytest

import provsql_dp
from conftest import declared_state
from provsql_dp.errors import DeclarationError


def _orphaned(path):
    """``people`` (protected, bounded, group keys from ``cities``) and ``trips`` (policy),
    then ``people`` and ``cities`` dropped by DuckDB's own client."""
    con = provsql_dp.connect(str(path))
    con.execute("CREATE TABLE people(id INT PRIMARY KEY, salary DOUBLE, city VARCHAR)")
    con.execute("CREATE TABLE cities(name VARCHAR); CREATE TABLE notes(x INT)")
    con.execute("PROTECT TABLE people; SET BOUNDS ON people (salary) BETWEEN 0 AND 100")
    con.execute("SET GROUP KEYS ON people (city) FROM cities (name)")
    con.execute("CREATE TABLE trips(id INT PRIMARY KEY, km INT); PROTECT TABLE trips")
    con.execute("SET PRIVACY BUDGET 10 FOR USER 'default'")
    con.execute("SELECT COUNT(*) FROM trips WITH EPSILON 1")
    con.commit()
    con.close()
    with duckdb.connect(str(path)) as duck:  # out of provsql_dp's reach
        duck.execute("DROP TABLE people; DROP TABLE cities")
    return provsql_dp.connect(str(path))


@pytest.mark.parametrize("stmt, verb, names", [
    ("CREATE TABLE people(id INT, salary DOUBLE, city VARCHAR)", "create the table 'people'",
     ["PROTECT TABLE people", "SET BOUNDS ON people (salary)", "SET GROUP KEYS ON people (city)",
      "UNPROTECT TABLE people; DROP BOUNDS ON people (salary); DROP GROUP KEYS ON people (city)"]),
    ('CREATE TABLE IF NOT EXISTS main."PEOPLE" AS SELECT 1 AS id', "create the table 'PEOPLE'",
     ["UNPROTECT TABLE people"]),
    ("CREATE OR REPLACE TABLE people AS SELECT 1 AS id", "create the table 'people'",
     ["UNPROTECT TABLE people"]),
    ("CREATE TEMP TABLE people(id INT)", "create the table 'people'", ["UNPROTECT TABLE people"]),
    ("CREATE VIEW people AS SELECT 1 AS id", "create the view 'people'", ["UNPROTECT TABLE people"]),
    ("CREATE TABLE db.main.people(id INT)", "create the table 'people'", ["UNPROTECT TABLE people"]),
    # the source of people's group keys: a new cities would be read as its public keys
    ("CREATE TABLE cities(name VARCHAR)", "create the table 'cities'",
     ["SET GROUP KEYS ON people (city) FROM cities (name)", "DROP GROUP KEYS ON people (city)"]),
    ("ALTER TABLE notes RENAME TO people", "rename 'notes' to 'people'", ["UNPROTECT TABLE people"]),
])
def test_a_table_created_under_an_orphans_name_is_refused(tmp_path, stmt, verb, names):
    con = _orphaned(tmp_path / "db.duckdb")
    before = declared_state(con)
    with pytest.raises(DeclarationError) as err:
        con.execute(stmt)
    message = str(err.value)
    assert message.startswith(f"cannot {verb}: declarations made for a table of that name that "
                              "was dropped outside provsql_dp"), message
    for name in names:
        assert name in message, (name, message)
    assert declared_state(con) == before


def test_the_way_out_and_other_names_pass(tmp_path):
    con = _orphaned(tmp_path / "db.duckdb")
    con.execute("CREATE SCHEMA s; CREATE TABLE s.people(id INT)")  # another schema's name
    con.execute("CREATE TABLE IF NOT EXISTS trips(id INT)")  # there: DuckDB's own no-op
    con.execute("UNPROTECT TABLE people; DROP BOUNDS ON people (salary); "
                "DROP GROUP KEYS ON people (city)")
    con.execute("CREATE TABLE people(id INT PRIMARY KEY, salary DOUBLE); CREATE TABLE cities(n INT)")
    assert [r[1] for r in con.execute("SHOW PROTECTED").fetchall()] == ["trips"]


def test_a_table_created_outside_under_an_orphans_name_takes_its_declarations(tmp_path):
    """Documented: DuckDB gives a table no identity that survives a reopen, so provsql_dp
    cannot tell it from the declared table reloaded; its rows are protected."""
    path = tmp_path / "db.duckdb"
    _orphaned(path).close()
    with duckdb.connect(str(path)) as duck:
        duck.execute("CREATE TABLE people(id INT PRIMARY KEY, salary DOUBLE, city VARCHAR)")
    con = provsql_dp.connect(str(path), role="analyst")
    assert con.execute("SHOW PROTECTED").fetchall()[0][-1] == "ok"
    with pytest.raises(provsql_dp.Error):
        con.execute("SELECT * FROM people")  # protected: no row leaves without noise


def _schemas(path):
    con = provsql_dp.connect(str(path))
    con.execute(f"ATTACH '{path.with_name('other.duckdb')}' AS other")
    con.execute("CREATE SCHEMA s; CREATE TABLE s.logs(id INT PRIMARY KEY); PROTECT TABLE s.logs")
    con.execute('CREATE SCHEMA "Odd"; CREATE TABLE "Odd".t(id INT PRIMARY KEY); '
                'PROTECT TABLE "Odd".t')
    con.execute("CREATE SCHEMA other.s; CREATE TABLE other.s.notes(x INT)")
    con.execute("CREATE SCHEMA other.odd; CREATE SCHEMA empty")
    con.execute("SET PRIVACY BUDGET 10 FOR USER 'default'")
    con.execute("SELECT COUNT(*) FROM s.logs WITH EPSILON 1")
    con.commit()
    return con


@pytest.mark.parametrize("stmt, named", [
    ("DROP SCHEMA s CASCADE", "'s'"),
    ("DROP SCHEMA IF EXISTS db.S CASCADE", "'S'"),
    ('DROP SCHEMA "odd" CASCADE', "'odd'"),
    ("DROP SCHEMA ODD CASCADE", "'ODD'"),
])
def test_drop_schema_of_a_declared_table_is_refused(tmp_path, stmt, named):
    con = _schemas(tmp_path / "db.duckdb")
    before = declared_state(con)
    with pytest.raises(DeclarationError, match=f"cannot drop the schema {named}: declarations"):
        con.execute(stmt)
    assert declared_state(con) == before


def test_drop_schema_that_holds_no_declared_table_passes(tmp_path):
    """Matched by name only, ``other.s`` and ``other.odd`` (another database's) were refused."""
    con = _schemas(tmp_path / "db.duckdb")
    con.execute("DROP SCHEMA other.s CASCADE")
    con.execute("DROP SCHEMA other.ODD")
    con.execute("DROP SCHEMA empty")
    con.execute("USE other; CREATE SCHEMA s; DROP SCHEMA s; USE db")  # s of the current database
    schemas = {tuple(r) for r in con.execute(
        "SELECT database_name, schema_name FROM duckdb_schemas()").fetchall()}
    assert ("db", "s") in schemas and ("db", "Odd") in schemas
    assert not {("other", "s"), ("other", "odd"), ("db", "empty")} & schemas
