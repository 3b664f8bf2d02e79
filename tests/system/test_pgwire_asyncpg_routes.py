"""asyncpg's fetch of the private statements whose route makes its columns: quantiles, variances,
``COUNT(DISTINCT …)`` over declared keys, Blowfish policy histograms and ranges, ``WITH EPSILON ε
DELTA δ`` (partition selection, the smooth-sensitivity median) and ``WITH RHO ρ``. They were
described NoData, so asyncpg's Execute was refused; they are now described route by route
(:mod:`provsql_dp.privacy.route_columns`) without running or charging, and each is charged once
per answer. A raw COUNT, typed by the aggregate route its run decides, is still refused before it
runs, the way out named, the ledger unchanged."""

from __future__ import annotations

import pytest

from pgwire_support import asyncpg_run, dsn, ledger_rows, served

pytestmark = pytest.mark.slow  # a server and its clients: .ci/run's second step

asyncpg = pytest.importorskip("asyncpg", reason="asyncpg is not installed (pip install '.[test]')")
psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install '.[test]')")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    yield from served(
        tmp_path_factory, "pgwire_routes", "SET BOUNDS ON emp (salary) BETWEEN 0 AND 2000",
        "CREATE TABLE people(id INT PRIMARY KEY, age INT, band INT)",
        "INSERT INTO people SELECT i, i % 90, i % 4 FROM range(300) r(i)", "PROTECT TABLE people",
        "CREATE POLICY age_line ON people (age) AS LINE DOMAIN [0, 120) WIDTH 10",
        "CREATE TABLE spots(id INT PRIMARY KEY, x DOUBLE)",
        "INSERT INTO spots SELECT i, (i % 97) / 100.0 FROM range(200) r(i)", "PROTECT TABLE spots",
        "CREATE POLICY nx ON spots (x) AS DELTA 0.02 METRIC L1 DOMAIN [0, 1) WIDTH 0.01 BOUNDED",
        "SET PRIVACY BUDGET EPSILON 50 DELTA 0.01 FOR USER 'ann'",
        "SET PRIVACY BUDGET RHO 50 FOR USER 'bob'")


ROUTES = [
    ("ann", "SELECT dept, MEDIAN(salary) AS m FROM emp GROUP BY dept WITH EPSILON 0.5"),
    ("ann", "SELECT VAR_SAMP(salary) FROM emp WITH EPSILON 0.5"),
    ("ann", "SELECT COUNT(DISTINCT dept) AS kinds FROM emp WITH EPSILON 0.5"),
    ("ann", "SELECT age, COUNT(*) AS n FROM people GROUP BY age WITH EPSILON 0.5"),
    ("ann", "COUNT RANGES (age BETWEEN 20 AND 29, age >= 60) FROM people WITH EPSILON 0.5"),
    ("ann", "SELECT band, COUNT(*) AS n FROM people GROUP BY band WITH EPSILON 1 DELTA 1e-5"),
    ("ann", "SELECT MEDIAN(x) FROM spots WITH EPSILON 1 DELTA 1e-6"),
    ("bob", "SELECT dept, COUNT(*), AVG(salary) FROM emp GROUP BY dept WITH RHO 0.05"),
    ("ann", "SELECT COUNT(*) AS n, AVG(salary), MEDIAN(salary) AS m FROM emp WITH EPSILON 1"),
    ("ann", "SELECT dept, STDDEV(salary) AS sd, COUNT(*) FROM emp GROUP BY dept WITH EPSILON 1"),
]


@pytest.mark.parametrize("user, sql", ROUTES)
def test_route_statements_fetched_and_charged_once(server, user, sql):
    """asyncpg prepares (Describe: nothing charged), fetches (one charge), and its columns are
    those psycopg's portal Describe (the run's own description) gives."""
    async def body(c):
        stmt = await c.prepare(sql)
        described = [(a.name, a.type.oid) for a in stmt.get_attributes()]
        unchanged = len(ledger_rows(server.engine))
        rows = await stmt.fetch()
        return described, unchanged, rows
    before = len(ledger_rows(server.engine))
    described, unchanged, rows = asyncpg_run(server, user, body)
    assert unchanged == before and len(ledger_rows(server.engine)) == before + 1
    assert rows and len(rows[0]) == len(described)
    with psycopg.connect(dsn(server, user), autocommit=True) as c:
        ran = [(x.name, x.type_code) for x in c.execute(sql).description]
    assert described == ran


def test_a_raw_count_is_refused_before_it_runs_naming_the_way_out(server):
    before = ledger_rows(server.engine)

    async def body(c):
        with pytest.raises(asyncpg.FeatureNotSupportedError,
                           match=r"leave out OPTIONS \(raw = true\).*nothing was charged"):
            await c.fetch("SELECT dept, COUNT(*) FROM emp GROUP BY dept WITH EPSILON 0.5 "
                          "OPTIONS (raw = true)")
        return await c.fetchval("SELECT COUNT(*) FROM emp WITH EPSILON 0.5 OPTIONS (raw = false)")
    assert isinstance(asyncpg_run(server, "ann", body), int)
    assert ledger_rows(server.engine)[:len(before)] == before
    assert len(ledger_rows(server.engine)) == len(before) + 1  # the COUNT without raw only
