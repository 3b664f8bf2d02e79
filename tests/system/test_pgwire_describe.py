"""Describe of a prepared statement from the clients that use it beside asyncpg: psql's
``\\gdesc`` (it prepares the query and Describes the statement: it printed nothing but the
columns' names, as NoData gave none, and a VARCHAR column's type empty), and psycopg's untyped
lists — a list of strings in the text format, sent with OID 0 as ``{a,b}`` — as the list of
``x = ANY(%s)``, where PostgreSQL infers an array from the context (they arrived as text); and
``x <> ALL(%s)``, planned as ``NOT x IN (…)``."""

from __future__ import annotations

import pytest

from pgwire_support import PSQL, dsn, psql, served, spent

pytestmark = pytest.mark.slow  # a server and its clients: .ci/run's second step

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install '.[test]')")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    yield from served(tmp_path_factory, "pgwire_describe")


@pytest.mark.skipif(PSQL is None, reason="psql is not installed (Debian: apt-get install postgresql-client)")
def test_psql_gdesc_describes_without_running(server):
    before = spent(server.engine, "ann")
    out = psql(server, "ann", "SELECT name, floor FROM depts \\gdesc\n"
               "SELECT dept, COUNT(*) AS n FROM emp GROUP BY dept WITH EPSILON 0.5 \\gdesc\n",
               "-A", "-F", "|", "-t")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["name|text", "floor|integer", "dept|text", "n|bigint",
                                  "n_low|double", "precision", "n_high|double", "precision"]
    assert spent(server.engine, "ann") == before  # described, never run


def test_psycopg_untyped_string_list_is_an_array(server):
    with psycopg.connect(dsn(server, "ann"), autocommit=True) as c:
        rows = c.execute("SELECT name FROM depts WHERE name = ANY(%s) ORDER BY 1",
                         [["d1", "d2", 'no "such", dept']]).fetchall()
        assert rows == [("d1",), ("d2",)]
        rows = c.execute("SELECT name FROM depts WHERE name <> ALL(%s) ORDER BY 1",
                         [["d1", "d2"]]).fetchall()
        assert rows == [("d0",)]


def test_psycopg_private_untyped_list(server):
    before = spent(server.engine, "bob")
    with psycopg.connect(dsn(server, "bob"), autocommit=True) as c:
        c.execute("SET provsql_dp.interval_columns = off")
        (n,), = c.execute("SELECT COUNT(*) FROM emp WHERE dept = ANY(%s) WITH EPSILON 0.5",
                          [["d0", "d1"]]).fetchall()
    assert abs(n - 134) < 40
    assert spent(server.engine, "bob") != before
