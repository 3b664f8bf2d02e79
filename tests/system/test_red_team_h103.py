"""Red team h103attack: attacks on main after session 9 (declared drops, the wire's catalog
replica, one thread a connection, streams' sensitivity, issue 28's analyst SQL).

Finding 1 — a text DuckDB reads as more statements than provsql_dp does. provsql_dp splits a
text on its tokenizer's semicolons; DuckDB's parser quotes a name in backticks (```a b```), which
the tokenizer does not, so ``SELECT 1 `--`; DROP TABLE people`` was one statement for provsql_dp
(``--`` opening a comment to the end of the line) and two for DuckDB. A curator's text of that
form ran a ``DROP TABLE`` of a protected table past :mod:`provsql_dp.interfaces.dbapi.declared_drops`
(and past every check read from the statement's first words), leaving its declarations behind.

Finding 2 — the same text on the wire, as an analyst's catalog query: the schema replica (one
in-memory DuckDB shared by every session of the server) ran every statement of it, so an analyst
could ``DROP SCHEMA pgcompat CASCADE`` there (every later catalog query of every session failed
until the schema changed: psql's ``\\d``, JDBC's metadata) or ``CREATE MACRO``/``CREATE TABLE`` to
change the catalog answers other analysts get — with nothing in the audit log (a catalog query
that succeeds writes nothing). The replica now runs one read-only statement, as DuckDB reads it.
"""

from __future__ import annotations

import duckdb
import psycopg
import pytest

import provsql_dp
from provsql_dp.errors import ProgrammingError
from provsql_dp.interfaces.pgwire._catalog import Replica
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from pgwire_support import dsn, make_database, running_server  # noqa: E402

HIDDEN_DROP = "SELECT 1 `--`; DROP TABLE people"


def _people():
    con = provsql_dp.connect()
    con.execute("CREATE TABLE people(id INT PRIMARY KEY, pay INT); INSERT INTO people VALUES (1, 5)")
    con.execute("PROTECT TABLE people")
    con.execute("SET BOUNDS ON people (pay) BETWEEN 0 AND 10")
    return con


@pytest.mark.parametrize("text", [HIDDEN_DROP, "SELECT 1 AS `--`; CREATE OR REPLACE TABLE people AS SELECT 2 AS id",
                                  "SELECT 1 `--`; ALTER TABLE people RENAME TO p2"])
def test_a_drop_duckdb_reads_as_a_second_statement_is_refused(text):
    con = _people()
    with pytest.raises(ProgrammingError, match="backtick"):
        con.execute(text)
    assert con._duck.execute("SELECT id, pay FROM people").fetchall() == [(1, 5)]
    con.execute("SELECT 1 AS `a b`; SELECT 2")  # a backtick-quoted name alone still runs


def test_the_replica_runs_one_read_only_statement():
    source = duckdb.connect()
    source.execute("CREATE TABLE t(a INT)")
    replica = Replica()
    for attack in ("SELECT 1 FROM pg_class `--`; DROP SCHEMA pgcompat CASCADE",
                   "SELECT 1 FROM pg_class `--`; CREATE TABLE main.planted AS SELECT 1 AS a"):
        cur = replica.cursor(source)
        with pytest.raises(ProgrammingError, match="one query"):
            replica.run(cur, attack)
        cur.close()
    cur = replica.cursor(source)  # the replica is as it was
    assert replica.run(cur, "SELECT table_name FROM information_schema.tables "
                            "WHERE table_schema = 'main'")[1] == [("t",)]


def test_an_analyst_cannot_change_the_replica_other_sessions_read(tmp_path):
    path = str(tmp_path / "w.duckdb")
    make_database(path)
    with running_server(path) as server:
        with psycopg.connect(dsn(server, "ann"), autocommit=True) as ann, \
                psycopg.connect(dsn(server, "bob"), autocommit=True) as bob:
            with pytest.raises(psycopg.Error, match="one query"):
                ann.execute("SELECT 1 FROM pg_catalog.pg_class `--`; DROP SCHEMA pgcompat CASCADE")
            names = bob.execute("SELECT table_name FROM information_schema.tables "
                                "WHERE table_schema = 'main' ORDER BY 1").fetchall()
            assert names == [("depts",), ("emp",), ("pub",)]
            bob.execute("SELECT c.relname FROM pg_catalog.pg_class c").fetchall()
        with server.engine.checkout("curator", "_test") as con:
            logged = con.execute("SHOW AUDIT LOG").fetchall()
        assert any("pgcompat" in str(r) for r in logged)  # the refusal is in the audit log
