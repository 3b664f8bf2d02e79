"""The wire server's catalog replica runs only text we emit (``_catalog.emitted``), never the
client's: a catalog query is read by sqlglot as PostgreSQL and emitted for DuckDB without its
comments; what sqlglot cannot read, several statements, a name no PostgreSQL client writes
unquoted and a table function drivers do not use are refused before the replica runs anything."""

from __future__ import annotations

import duckdb
import pytest

from provsql_dp.errors import ProgrammingError
from provsql_dp.interfaces.pgwire._catalog import Replica, emitted


class _Recording:
    """A replica cursor that records the text of every statement it runs."""

    def __init__(self, cur):
        self._cur, self.ran = cur, []

    def execute(self, sql, parameters=None):
        self.ran.append(sql)
        return self._cur.execute(sql, parameters)

    def __getattr__(self, name):
        return getattr(self._cur, name)


@pytest.fixture
def replica():
    source = duckdb.connect()
    source.execute("CREATE TABLE emp(id INT PRIMARY KEY, name VARCHAR)")
    rep = Replica()
    cur = _Recording(rep.cursor(source))
    yield rep, cur
    cur.close()


def test_the_replica_runs_our_text_not_the_clients(replica):
    rep, cur = replica
    sql = ("SELECT c.relname /* marker-1 */ FROM pg_catalog.pg_class c  -- marker-2\n"
           "WHERE c.relname OPERATOR(pg_catalog.~) '^(emp)$' COLLATE pg_catalog.default")
    desc, rows = rep.run(cur, sql)
    assert rows == [("emp",)]
    assert cur.ran == [emitted(sql)] and sql not in cur.ran
    assert "marker" not in cur.ran[0]  # comments are the client's: not emitted


def test_parameters_stay_parameters(replica):
    rep, cur = replica
    _, rows = rep.run(cur, "SELECT relname FROM pg_catalog.pg_class WHERE relname = $1", ["emp"])
    assert rows == [("emp",)] and "$1" in cur.ran[0]


@pytest.mark.parametrize("sql, why", [
    ("SELECT 1 FROM pg_class `--`; DROP SCHEMA pgcompat CASCADE", "` is not a name"),
    ("SELECT 1 FROM pg_class; DROP SCHEMA pgcompat CASCADE", "2 statement"),
    ("SELECT relname FROM pg_class; SELECT 2", "send each query on its own"),
    ("SELECT * FROM enable_logging(level = 'trace'), pg_class", "table function ENABLE_LOGGING"),
    ("SELECT * FROM read_csv('/etc/passwd'), pg_class", "table function READ_CSV"),
    ("SELECT relname FROM pg_class WHERE (", "could not be read as one PostgreSQL query"),
])
def test_refused_before_the_replica_runs_anything(replica, sql, why):
    rep, cur = replica
    with pytest.raises(ProgrammingError, match="could not be read as one PostgreSQL query") as e:
        rep.run(cur, sql)
    assert why in str(e.value)
    assert cur.ran == []
    _, rows = rep.run(cur, "SELECT schema_name FROM information_schema.schemata WHERE "
                           "schema_name = 'pgcompat'")
    assert rows == [("pgcompat",)]  # the replica is as it was


def test_drivers_idioms_still_answer(replica):
    """psql's, JDBC's and SQLAlchemy's forms (the client tests run them end to end)."""
    rep, cur = replica
    assert rep.run(cur, "SELECT n.nspname FROM pg_catalog.pg_namespace n WHERE n.nspname "
                        "!~ '^pg_' AND n.nspname <> 'information_schema' ORDER BY 1")[1]
    assert rep.run(cur, "SELECT t.typname, t.oid::regtype::text FROM pg_catalog.pg_type t "
                        "WHERE t.typname = 'int4'")[1]
    assert rep.run(cur, "SELECT * FROM generate_series(1, 2) g, pg_catalog.pg_type t LIMIT 1")[1]
    assert rep.run(cur, "select pg_catalog.version()")[1][0][0].startswith("PostgreSQL")


def test_the_replica_keeps_not_null_and_primary_keys():
    """Public schema facts (``DESCRIBE`` shows them to analysts): psql's ``\\d`` says "not
    null" for a key column; no rows come with them."""
    source = duckdb.connect()
    source.execute("CREATE TABLE emp(id INT PRIMARY KEY, name VARCHAR NOT NULL, note VARCHAR)")
    source.execute("CREATE TABLE pair(a INT, b INT, PRIMARY KEY (a, b))")
    source.execute("INSERT INTO emp VALUES (1, 'ann', NULL)")
    rep = Replica()
    cur = rep.cursor(source)
    _, rows = rep.run(cur, "SELECT column_name, is_nullable FROM information_schema.columns "
                           "WHERE table_name = 'emp' ORDER BY ordinal_position")
    assert rows == [("id", "NO"), ("name", "NO"), ("note", "YES")]
    _, rows = rep.run(cur, "SELECT table_name, constraint_type FROM "
                           "information_schema.table_constraints WHERE constraint_type = "
                           "'PRIMARY KEY' ORDER BY 1")
    assert rows == [("emp", "PRIMARY KEY"), ("pair", "PRIMARY KEY")]
    assert rep.run(cur, "SELECT count(*) FROM emp")[1] == [(0,)]  # the schema, never the rows
    cur.close()

