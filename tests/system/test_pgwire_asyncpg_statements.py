"""asyncpg's ``fetch`` of the privacy statements and the re-check of a public statement's columns.

asyncpg decodes rows by its statement's Describe. The privacy statements were described NoData,
so ``await con.fetch("SHOW PRIVACY BUDGET")`` failed ("the number of columns in the result row
(4) is different from what was described (0)"), and ``PROTECT TABLE`` failed so *after* it had
run. Their columns are now described from the constants their runs build rows with
(:mod:`provsql_dp.interfaces.dbapi.statement_columns`); a statement answering a status line is
described NoData, as PostgreSQL describes such statements, and its line comes as a notice.

A public statement described, then changed under it by a curator (``ALTER TABLE … ADD COLUMN``),
is refused before it runs with PostgreSQL's "cached plan must not change result type" (0A000),
on which asyncpg prepares it again — as private statements already were."""

from __future__ import annotations

import pytest

from pgwire_support import asyncpg_run, dsn, ledger_rows, served

pytestmark = pytest.mark.slow  # a server and its clients: .ci/run's second step

asyncpg = pytest.importorskip("asyncpg", reason="asyncpg is not installed (pip install '.[test]')")
psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install '.[test]')")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    yield from served(tmp_path_factory, "pgwire_asyncpg_statements")


SHOWN = ["SHOW PRIVACY BUDGET", "SHOW PRIVACY BUDGET FOR USER 'ann'", "SHOW PROTECTED",
         "SHOW GROUP KEYS", "SHOW BOUNDS", "SHOW POLICIES", "SHOW STREAMS", "SHOW AUDIT LOG LIMIT 3",
         "EXPLAIN PRIVACY SELECT COUNT(*) FROM emp WITH EPSILON 1", "SHOW LAST RELEASE"]


@pytest.mark.parametrize("sql", SHOWN)
def test_privacy_statements_described_as_they_run(server, sql):
    """Each statement's Describe (asyncpg: nothing run) names and types the columns its run
    (psycopg describes the portal: the run's own description) answers; asyncpg's fetch reads
    its rows."""
    async def body(c):
        described = [(a.name, a.type.oid) for a in (await c.prepare(sql)).get_attributes()]
        return described, [tuple(r) for r in await c.fetch(sql)]
    described, fetched = asyncpg_run(server, "cu", body)
    with psycopg.connect(dsn(server, "cu"), autocommit=True) as c:
        cur = c.execute(sql)
        ran, rows = [(x.name, x.type_code) for x in cur.description], cur.fetchall()
    assert described == ran and len(fetched) == len(rows)


def test_analyst_budget_rows_and_a_refusal_at_prepare(server):
    before = ledger_rows(server.engine)

    async def body(c):
        mine = [tuple(r) for r in await c.fetch("SHOW PRIVACY BUDGET")]
        with pytest.raises(asyncpg.InsufficientPrivilegeError, match="curator"):
            await c.prepare("SHOW AUDIT LOG")  # refused at Describe, as at its run
        return mine
    assert asyncpg_run(server, "ann", body) == [("ann", "3", "0", "3")]
    assert ledger_rows(server.engine) == before


def test_status_statement_is_nodata_and_its_line_a_notice(server):
    """``PROTECT TABLE`` fetched through asyncpg: no rows (NoData, as PostgreSQL's utility
    statements), its status line a notice, the table protected."""
    notices = []

    async def body(c):
        c.add_log_listener(lambda _c, msg: notices.append(msg.message))
        await c.execute("CREATE TABLE later(id INT PRIMARY KEY, v INT)")
        stmt = await c.prepare("PROTECT TABLE later")
        assert stmt.get_attributes() == ()
        rows = await stmt.fetch()
        return rows, [r["table"] for r in await c.fetch("SHOW PROTECTED")]
    rows, protected = asyncpg_run(server, "cu", body)
    assert rows == [] and "later" in protected
    assert any(n.startswith("protected later") for n in notices)


def test_a_public_statement_changed_under_it_is_prepared_again(server):
    """asyncpg keeps ``SELECT * FROM wide`` prepared; a curator adds a column; the next fetch is
    refused before it runs (0A000, RevalidateCachedQuery) and asyncpg prepares it again: the
    rows come with the new column, not an error on their count."""
    async def curator(c):
        await c.execute("CREATE TABLE wide(a INT)")
        await c.execute("INSERT INTO wide VALUES (1)")
    asyncpg_run(server, "cu", curator)

    async def analyst(c):
        first = await c.fetch("SELECT * FROM wide")
        with psycopg.connect(dsn(server, "cu"), autocommit=True) as cu:
            cu.execute("ALTER TABLE wide ADD COLUMN b VARCHAR DEFAULT 'x'")
        again = await c.fetch("SELECT * FROM wide")
        stmt = await c.prepare("SELECT * FROM wide")
        with psycopg.connect(dsn(server, "cu"), autocommit=True) as cu:
            cu.execute("ALTER TABLE wide DROP COLUMN b")
        # a statement the program holds: refused, not prepared again (asyncpg names PostgreSQL's
        # "cached plan must not change result type" so)
        with pytest.raises(asyncpg.exceptions.InvalidCachedStatementError) as refused:
            await stmt.fetch()
        assert refused.value.sqlstate == "0A000"
        return [tuple(r) for r in first], [tuple(r) for r in again]
    assert asyncpg_run(server, "ann", analyst) == ([(1,)], [(1, "x")])


def test_kmeans_described_from_its_columns_and_charged_once(server):
    """``KMEANS`` answers a cluster number and one coordinate per column it names: described so
    (its checks run, nothing charged), fetched, charged once."""
    async def curator(c):
        await c.execute("SET BOUNDS ON emp (salary) BETWEEN 0 AND 2000")
    asyncpg_run(server, "cu", curator)
    sql = "KMEANS CLUSTERS 2 OF (salary) FROM emp WITH EPSILON 0.5"

    async def analyst(c):
        stmt = await c.prepare(sql)
        described = [(a.name, a.type.name) for a in stmt.get_attributes()]
        unchanged = len(ledger_rows(server.engine))
        return described, unchanged, await stmt.fetch()
    before = len(ledger_rows(server.engine))
    described, unchanged, rows = asyncpg_run(server, "bob", analyst)
    assert described == [("cluster", "int4"), ("salary", "float8")]
    assert unchanged == before and len(ledger_rows(server.engine)) == before + 1
    assert [r["cluster"] for r in rows] == [1, 2]
