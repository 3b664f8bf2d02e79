"""asyncpg against the wire server: it prepares, Describes the statement, and decodes every row
by the RowDescription it got there. Describe of a statement answered NoData, so asyncpg's
``fetch`` failed on every query ("the number of columns in the result row (2) is different from
what was described (0)") — after a private query had been run and charged — and its parameters
were described ``text``, so ``WHERE floor = $1`` refused an int. The statement's Describe now
gives its columns without running it (:mod:`provsql_dp.interfaces.pgwire._describe`)."""

from __future__ import annotations

import datetime
from fractions import Fraction

import pytest

pytestmark = pytest.mark.slow  # a server and its clients: .ci/run's second step

asyncpg = pytest.importorskip("asyncpg", reason="asyncpg is not installed (pip install '.[test]')")
psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install '.[test]')")

from pgwire_support import asyncpg_run as run, dsn, served, spent  # noqa: E402


@pytest.fixture(scope="module")
def server(tmp_path_factory):  # typed GROUP BY keys and a DATE column beside emp
    yield from served(
        tmp_path_factory, "pgwire_asyncpg",
        "CREATE TABLE visits(id INT PRIMARY KEY, g INT, day DATE, x DOUBLE)",
        "INSERT INTO visits SELECT i, i % 3, DATE '2020-01-01' + (i % 2)::INT, i % 40 "
        "FROM range(300) r(i)",
        "PROTECT TABLE visits", "SET GROUP KEYS ON visits (g) VALUES (0, 1, 2)",
        "SET GROUP KEYS ON visits (day) VALUES ('2020-01-01', '2020-01-02')",
        "CREATE TABLE events(day DATE, n INT)",
        "INSERT INTO events VALUES ('2020-01-01', 1), ('2020-01-02', 2)",
        "SET PRIVACY BUDGET 5 FOR USER 'cu'")


def test_public_query_and_parameters(server):
    async def body(c):
        assert [tuple(r) for r in await c.fetch("SELECT name, floor FROM depts ORDER BY 1")] == \
            [("d0", 1), ("d1", 2), ("d2", 2)]
        # $1 compared with an INTEGER column: described int4, so asyncpg sends an int
        assert await c.fetchval("SELECT COUNT(*) FROM depts WHERE floor = $1", 2) == 2
        assert await c.fetchval("SELECT floor FROM depts WHERE name = $1", "d0") == 1
        assert await c.fetchval("SELECT n FROM events WHERE day = $1",
                                datetime.date(2020, 1, 2)) == 2
        # an int4[] parameter: asyncpg introspects the array type first (answered for arrays)
        rows = await c.fetch("SELECT x FROM pub WHERE x = ANY($1) ORDER BY x", [3, 1, 2999])
        assert [r[0] for r in rows] == [1, 3, 2999]
    run(server, "ann", body)


def test_private_query_charged_once_and_group_keys_typed(server):
    before = Fraction(spent(server.engine, "ann"))

    async def body(c):
        value = await c.fetchval("SELECT COUNT(*) FROM emp WITH EPSILON 0.5")
        rows = await c.fetch("SELECT g, day, COUNT(*) AS n FROM visits GROUP BY g, day "
                             "WITH EPSILON 0.25")
        return value, rows
    value, rows = run(server, "ann", body)
    assert isinstance(value, int) and abs(value - 200) < 60
    assert len(rows) == 6 and list(rows[0].keys()) == ["g", "day", "n", "n_low", "n_high"]
    assert (rows[0]["g"], rows[0]["day"]) == (0, datetime.date(2020, 1, 1))
    assert isinstance(rows[0]["n"], int) and isinstance(rows[0]["n_low"], float)
    assert Fraction(spent(server.engine, "ann")) == before + Fraction(3, 4)


def test_prepared_statement_reused_with_parameters(server):
    before = Fraction(spent(server.engine, "bob"))

    async def body(c):
        stmt = await c.prepare("SELECT COUNT(*) FROM emp WHERE dept = $1 WITH EPSILON 0.25")
        assert [a.name for a in stmt.get_attributes()] == ["COUNT(*)", "COUNT(*)_low",
                                                           "COUNT(*)_high"]
        first, second = await stmt.fetchval("d0"), await stmt.fetchval("d1")
        listed = await c.fetchval("SELECT COUNT(*) FROM emp WHERE dept = ANY($1) "
                                  "WITH EPSILON 0.25", ["d0", "d2"])
        return first, second, listed
    first, second, listed = run(server, "bob", body)
    assert all(isinstance(v, int) for v in (first, second, listed))
    assert abs(listed - 134) < 60
    assert Fraction(spent(server.engine, "bob")) == before + Fraction(3, 4)


def test_a_changed_setting_prepares_the_statement_again(server):
    """asyncpg keeps the prepared statement: after ``SET provsql_dp.interval_columns = off`` its
    columns change, the server says so before running it (PostgreSQL's "cached plan must not
    change result type"), and asyncpg prepares it again — one charge per answer."""
    before = Fraction(spent(server.engine, "bob"))

    async def body(c):
        sql = "SELECT COUNT(*) AS n FROM emp WITH EPSILON 0.125"
        first = await c.fetch(sql)
        await c.execute("SET provsql_dp.interval_columns = off")
        return first, await c.fetch(sql)
    first, second = run(server, "bob", body)
    assert list(first[0].keys()) == ["n", "n_low", "n_high"] and list(second[0].keys()) == ["n"]
    assert Fraction(spent(server.engine, "bob")) == before + Fraction(1, 4)


def test_error_in_a_transaction_then_recovery(server):
    async def body(c):
        with pytest.raises(asyncpg.PostgresError, match="nosuch"):
            async with c.transaction():
                await c.fetch("SELECT * FROM nosuch")
        return await c.fetchval("SELECT COUNT(*) FROM depts")
    assert run(server, "ann", body) == 3


def test_refusals_spend_nothing(server):
    """A refused statement (an analyst reading a protected table) is refused at prepare; a private
    statement whose columns are known only as it runs (a raw COUNT, typed by the aggregate route
    its run decides) is refused at Execute, before it runs, since asyncpg would reject its rows
    after the charge."""
    before = spent(server.engine, "ann")

    async def body(c):
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await c.fetch("SELECT * FROM emp")
        with pytest.raises(asyncpg.PostgresError, match="not run and nothing was charged"):
            await c.fetch("SELECT COUNT(*) FROM emp WITH EPSILON 0.5 OPTIONS (raw = true)")
    run(server, "ann", body)
    assert spent(server.engine, "ann") == before


STATEMENTS = ["SELECT name, floor FROM depts", "SELECT COUNT(*) FROM emp WITH EPSILON 0.1",
              "SELECT dept, COUNT(*), AVG(salary) FROM emp GROUP BY dept WITH EPSILON 0.1 "
              "OPTIONS (lower = 0, upper = 2000)",
              "SELECT g, COUNT(*) * 2 AS twice FROM visits GROUP BY g ORDER BY twice "
              "WITH EPSILON 0.1",
              "SHOW LAST RELEASE", "SELECT relname FROM pg_class LIMIT 1"]


@pytest.mark.parametrize("sql", STATEMENTS)
def test_statement_and_portal_describe_agree(server, sql):
    """The statement's Describe (asyncpg) gives the columns the portal's (psycopg: it runs the
    statement) gives."""
    async def body(c):
        return [(a.name, a.type.oid) for a in (await c.prepare(sql)).get_attributes()]
    described = run(server, "cu", body)
    with psycopg.connect(dsn(server, "cu"), autocommit=True) as c:
        cur = c.execute(sql)
        ran = [(x.name, x.type_code) for x in cur.description]
    assert described == ran
