"""Red team h147red: the analyst boundary after session 15's red team (h143), attacked as a
signed-in analyst would.

Finding 1 — row-concatenating aggregates over multiplied rows. ``string_agg`` of a public cross
join built up to DuckDB's 4 GiB string limit in one query (3.5 GB for ``pub a, pub b, pub c`` of
1,000 × 1,000 × 30 rows of 100 bytes), memory taken from every session of the server; a window
form needs no join: ``list(s) OVER ()`` gives every row a list of every row, so one public table
of 20,000 rows held the process at 8.9 GB for 100 s, and ``string_agg(s, ',') OVER (ORDER BY i)``
of 50,000 rows reached a 4 GB memory limit. The public path now bounds what such aggregates can
build before running (``sql/analyst/_concat_bound.py``: public tables' row counts multiplied
along joins, windows, subqueries and PIVOT, and by the copies a join makes of a concatenated
value — ``list(x)`` over ``(SELECT list(s) AS x FROM pub) q, pub`` is 2,000 lists of 2,000 —
times the longest value read) at 256 MiB; a lateral subquery beside one is refused (it runs once
per row: ``list(b.s)`` of every earlier ``a``).

Finding 2 — ``generate_series``/``range`` on the wire's catalog replica were bounded only by the
10 s timer: ``array_to_string(generate_series(1, 50000000), ',')``, one catalog query, held the
server at 5.9 GB for 13 s (the replica's 512 MB memory limit does not cover it), and
``count(*)`` over ``generate_series(1, 1e11)`` a core for 10 s. A series now counts at most
10,000 values between constant bounds (or an array column's), 1,000,000 together
(``pgwire/_catalog_functions._check_series``).

Finding 3 (the second wall) — any INTERNAL error of DuckDB invalidates the database instance for
every session, and a new connection to the file gets the dead instance while one old connection
stays open (measured on DuckDB 2.0.0 with ``||`` past 4 GiB: 7 GB, 16 s). The engine now
recognises it by type (``web/_fatal.is_fatal``; never by text, which an analyst's value can
fill), closes every connection it opened (a running statement is interrupted and its connection
closed at its end), and each session reopens its own before its next message, with its settings;
a charge committed before the error stays, one not committed was never counted, nothing is
retried. In memory the engine refuses service, saying so, and logs. The catalog replica is built
anew. Tested by simulation (``_Invalidation``): no cheaper internal error was found (130 probes of
scalar functions on bad input, WAL writes past RLIMIT_FSIZE: all clean errors).

Finding 4 — a number's text became an exact ``Fraction`` before any check: ``Fraction("1e9999999")``
computes 10^9999999, 28 s of a core holding Python's lock, so every session of a server stalled
on ``WITH EPSILON 1e-9999999`` (22.9 s), ``WHERE id > 1e9999999`` (25.8 s) or
``percentile_cont(1e9999999) WITHIN GROUP (ORDER BY x DESC)`` (46 s, then a raw OverflowError).
Refused past 10^±4096 now (``_numbers.literal_fraction``).

Finding 5 — ``GROUP BY ROUND(x, -9999999)`` had the private binder compute 10^9999999 as the
step of last session's ``key_domain._through_steps``: 12 s holding Python's lock (minutes at
-99999999). Steps past 10^308 are not read.

Finding 6 — a wire Describe ran outside the engine's registry of statements: no
``--max-concurrent``, no time limit, no CancelRequest, and a catalog query's Describe runs it on
the replica (``pg_attribute`` joined three times: 5 s of a core), so one analyst's sessions could
each hold a core. It counts as a statement now.

Attacks that held (tried on this code, nothing to fix):

* GROUP BY of listed keys (``key_domain._listed``): a CASE's results are the statement's
  constants only (a column, ``CAST('abc' AS INT)`` refused or failing at plan time, on no data);
  ``CASE … ELSE 1/0`` lists ``inf`` as a group, from the text; the typing probe runs on the
  private binder without a table;
* ``count_if`` over a cast that fails on some rows (``count_if(CAST(d AS INT) > 0)``) is total
  (NULL, counted as false): no error depends on a row; ``count_if`` with FILTER, GROUP BY ALL and
  ORDER BY ALL refuse a protected key as before;
* ordered-set quantiles: ``percentile_disc`` DESC refused, ``q`` outside [0, 1] refused, a route
  without declared bounds refused with nothing charged;
* Describe: no row is read for a private statement (its columns from the plan, post-processing
  typed on an empty table), a public one is DESCRIBEd on our text; a Describe charges nothing;
* the recovery cannot be triggered by an analyst's text in an error message (type-based);
* ledger retries happen on write conflicts only: a failed COMMIT (a WAL write past
  RLIMIT_FSIZE) rolls back and is not double-counted.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import provsql_dp
from provsql_dp.errors import UnsupportedQueryError

sys.path.insert(0, str(Path(__file__).parent))
from conftest import analyst_beside_curator  # noqa: E402
from test_red_team_h143 import replica_cursor  # noqa: E402,F401 - the fixture, shared


@pytest.fixture
def analyst():
    yield from analyst_beside_curator(":memory:h147red", (
        "CREATE TABLE pub AS SELECT repeat('x', 100) AS s, range AS i FROM range(2000); "
        "CREATE VIEW pairs AS SELECT a.s AS s, b.i AS i FROM pub a, pub b"))


@pytest.mark.parametrize("sql", [
    "SELECT length(string_agg(a.s, '')) FROM pub a, pub b, (SELECT * FROM pub LIMIT 30) c",
    "SELECT len(list(a.s)) FROM pub a JOIN pub b ON a.i = b.i",  # a join: every pair
    "SELECT len(list(s) OVER ()) FROM pub",
    "SELECT length(string_agg(s, ',') OVER (ORDER BY i)) FROM pub",
    "SELECT (SELECT length(string_agg(p.s, '')) FROM pub p WHERE p.i <= a.i) FROM pub a",
    "SELECT len(array_unique_agg(a.s)) FROM pub a, pub b",
    "SELECT len(max(a.s, 100)) FROM pub a, pub b",
    "WITH r(n) AS (SELECT s FROM pub a, pub b) SELECT length(string_agg(n, '')) FROM r",
    "PIVOT pairs ON s USING list(i)",  # a view of a join, pivoted
    "PIVOT (SELECT list(a.s) AS l, 1 AS k FROM pub a, pub b) ON k USING first(l)",
    # a concatenation carried by a join: every copy is a row (2,000 lists of 2,000 values)
    "SELECT len(list(x)) FROM (SELECT list(s) AS x FROM pub) q, pub p",
    "SELECT x FROM (SELECT string_agg(s, '') x FROM pub) q, pub",
])
def test_concatenations_over_multiplied_rows_are_refused(analyst, sql):
    cu, an = analyst
    before = cu.ledger.budget("ann")
    with pytest.raises(UnsupportedQueryError, match=r"holds every row of its group: .* can reach "
                       r"[\d,]+ bytes, more than the 268,435,456 accepted .* LIMIT n"):
        an.execute(sql)
    assert cu.ledger.budget("ann") == before  # nothing charged
    assert an.execute("SELECT count(*) FROM pub").fetchall() == [(2000,)]


def test_concatenations_without_a_bound_are_refused(analyst):
    _, an = analyst
    with pytest.raises(UnsupportedQueryError, match=r"recursive CTE .* no bound known"):
        an.execute("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 10) "
                   "SELECT list(n) FROM r")
    # a lateral subquery runs once per row of its query: list(b.s) of every a, 4 GB here
    with pytest.raises(UnsupportedQueryError, match=r"the lateral join .* no bound known"):
        an.execute("SELECT len(l) FROM pub a, LATERAL (SELECT list(b.s) AS l FROM pub b "
                   "WHERE b.i < a.i) x")


def test_bounded_concatenations_still_run(analyst):
    _, an = analyst
    assert an.execute("SELECT length(string_agg(s, ',')) FROM pub").fetchall() == [(201_999,)]
    assert an.execute("SELECT i % 2, len(list(i)) FROM pub GROUP BY ALL ORDER BY 1").fetchall() \
        == [(0, 1000), (1, 1000)]
    assert an.execute("SELECT len(list(s) OVER ()) FROM (SELECT s FROM pub LIMIT 100) x "
                      "LIMIT 1").fetchall() == [(100,)]
    assert an.execute("SELECT length(string_agg(a.s, '')) FROM pub a, "
                      "(SELECT * FROM pub LIMIT 3) b").fetchall() == [(600_000,)]
    assert an.execute("SELECT length(x) FROM (SELECT string_agg(s, '') x FROM pub) q, "
                      "(SELECT * FROM pub LIMIT 3) p LIMIT 1").fetchall() == [(200_000,)]
    assert len(an.execute("SELECT * FROM (SELECT i % 10 AS k, list(s) FROM pub GROUP BY k) t"
                          ).fetchall()) == 10
    assert len(an.execute("PIVOT (SELECT * FROM pub LIMIT 10) ON s USING list(i)").fetchall()[0][0]) \
        == 10


@pytest.mark.parametrize("sql, why", [
    ("SELECT length(array_to_string(generate_series(1, 50000000), ',')), version()",
     "counts 50,000,000 values in GENERATE_SERIES(1, 50000000)"),
    ("SELECT count(*) FROM generate_series(1, 100000000000) g(i), pg_catalog.pg_class",
     "counts 100,000,000,000 values"),
    ("SELECT count(*), version() FROM range(1, 100000000000) g(i)", "in RANGE(1, 100000000000)"),
    ("SELECT count(*) FROM generate_series(1, 10000) a, generate_series(1, 10000) b, "
     "pg_catalog.pg_class", "counts 100,000,000 values in its series together"),
    ("SELECT count(*) FROM generate_series(1, c.oid) a, pg_catalog.pg_class c",
     "a bound that is neither a constant nor an array's"),
    ("SELECT count(*), version() FROM generate_series(1, 10, 0) a", "a step that is not"),
])
def test_catalog_series_are_bounded_statically(replica_cursor, sql, why):
    from provsql_dp.interfaces.pgwire._catalog import is_catalog_query

    replica, cur = replica_cursor
    assert is_catalog_query(sql)
    with pytest.raises(provsql_dp.ProgrammingError, match="which the server's catalog does not "
                       "run: a catalog query counts with generate_series/range between constant "
                       "bounds") as e:
        replica.run(cur, sql)
    assert why in str(e.value)
    for ok in ["SELECT count(*), version() FROM generate_series(10000, 1, -1) a",
               "SELECT count(*) FROM pg_catalog.pg_index i, "
               "generate_series(1, array_upper(i.indkey, 1)) g",
               "SELECT * FROM generate_series(1, 2) g, pg_catalog.pg_type t LIMIT 1"]:
        assert replica.run(cur, ok)[1]


class _Invalidation:
    """DuckDB's invalidation of a database instance, simulated (DuckDB 2.0.0 gave no internal
    error cheaper than ``||`` past 4 GiB — 7 GB and 16 s — to force one in a test): once
    :meth:`arm`'s statement fails, every provsql_dp connection then open, and any opened while
    one of them stays open, fails with ``duckdb.FatalException`` — as DuckDB keeps the dead
    instance for a file while any connection holds it (measured: a new ``duckdb.connect`` of
    the file got it until the last old connection closed, then a fresh one)."""

    def __init__(self, monkeypatch):
        import weakref

        from provsql_dp.interfaces.dbapi.connection import Connection
        from provsql_dp.interfaces.dbapi.cursor import Cursor

        self.opened, self.dead = weakref.WeakSet(), weakref.WeakSet()
        self.trigger = None
        init, close, execute = Connection.__init__, Connection.close, Cursor.execute
        sim = self

        def _init(con, *a, **k):
            init(con, *a, **k)
            sim.opened.add(con)
            if any(not c._closed for c in sim.dead):
                sim.dead.add(con)

        def _execute(cur, sql, parameters=None):
            import duckdb

            if cur.connection in sim.dead:
                raise duckdb.FatalException("FATAL Error: Failed: database has been invalidated "
                                            "because of a previous fatal error (simulated)")
            if sim.trigger is not None and sim.trigger[0] in sql:
                charged, sim.trigger = sim.trigger[1], None
                if charged:
                    execute(cur, sql, parameters)
                for c in sim.opened:
                    sim.dead.add(c)
                raise duckdb.InternalException("INTERNAL Error: simulated assertion failure")
            return execute(cur, sql, parameters)

        monkeypatch.setattr(Connection, "__init__", _init)
        monkeypatch.setattr(Connection, "close", close)
        monkeypatch.setattr(Cursor, "execute", _execute)

    def arm(self, text: str, charged: bool) -> None:
        """Fail the next statement holding ``text``: after it ran (and charged), or before."""
        self.trigger = (text, charged)


def test_an_invalidated_database_is_reopened_for_every_session(tmp_path, monkeypatch):
    psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install '.[test]')")
    from pgwire_support import dsn, make_database, running_server, spent

    sim = _Invalidation(monkeypatch)
    path = str(tmp_path / "wire.duckdb")
    make_database(path)
    q = "SELECT COUNT(*) FROM emp WITH EPSILON {}"
    with running_server(path) as server, \
            psycopg.connect(dsn(server, "ann"), autocommit=True) as ann, \
            psycopg.connect(dsn(server, "bob"), autocommit=True) as bob:
        ann.execute(q.format(0.5)).fetchall()
        bob.execute("SET provsql_dp.interval_columns = off")
        sim.arm("EPSILON 0.25", charged=True)  # the charge committed, then DuckDB failed
        with pytest.raises(psycopg.Error, match="failed on an internal error and was reopened.*"
                           "charged before the failure stays spent"):
            ann.execute(q.format(0.25))
        assert spent(server.engine, "ann") == "3/4"  # kept, and counted once
        # every session goes on, on the reopened database, with its own settings
        assert len(bob.execute(q.format(0.5)).fetchall()[0]) == 1  # no interval columns
        assert ann.execute(q.format(0.5)).fetchall()
        sim.arm("EPSILON 0.125", charged=False)  # DuckDB failed before the charge
        with pytest.raises(psycopg.Error, match="was reopened"):
            ann.execute(q.format(0.125))
        assert spent(server.engine, "ann") == "5/4" and spent(server.engine, "bob") == "1/2"
        with psycopg.connect(dsn(server, "bob"), autocommit=True) as again:  # signs in anew
            assert again.execute("SELECT count(*) FROM pub").fetchall() == [(3000,)]


def test_an_invalidated_database_in_memory_is_refused_clearly(monkeypatch, caplog):
    from provsql_dp.interfaces.web.engine import Engine

    sim = _Invalidation(monkeypatch)
    engine = Engine(":memory:h147dead")
    try:
        engine.run("curator", "cu", "CREATE TABLE pub(x INT); INSERT INTO pub VALUES (1)")
        sim.arm("FROM pub", charged=False)
        for _ in range(2):  # the failing statement, then every later one
            with pytest.raises(provsql_dp.OperationalError, match=r"held in memory, cannot be "
                               r"reopened: the operator must restart the server"):
                engine.run("analyst", "ann", "SELECT x FROM pub")
        assert "an in-memory database cannot be reopened" in caplog.text
    finally:
        engine.close()


def test_an_invalidated_catalog_replica_is_built_anew(replica_cursor, monkeypatch):
    import duckdb

    replica, cur = replica_cursor
    first = replica._duck

    class Dead:  # a cursor of the replica DuckDB invalidated (its type cannot be patched)
        def execute(self, *a, **k):
            raise duckdb.FatalException("FATAL Error: Failed: database has been invalidated")

        def __getattr__(self, name):
            return getattr(cur, name)

    with pytest.raises(duckdb.FatalException):
        replica.run(Dead(), "SELECT relname FROM pg_catalog.pg_class")
    source = duckdb.connect()
    source.execute("CREATE TABLE emp(id INT PRIMARY KEY, name VARCHAR)")
    again = replica.cursor(source)
    assert replica._duck is not first
    assert replica.run(again, "SELECT relname FROM pg_catalog.pg_class WHERE relname = 'emp'"
                       )[1] == [("emp",)]


@pytest.mark.parametrize("sql, error, match", [
    ("SELECT COUNT(*) FROM emp WITH EPSILON 1e-99999", provsql_dp.ProgrammingError,
     r"epsilon must be a number within 10\^±4096, got '1e-99999'\. Nothing was charged"),
    ("SELECT COUNT(*) FROM emp WITH EPSILON 0.1 OPTIONS (raw = true, bound = 1e99999)",
     provsql_dp.ProgrammingError, r"option bound must be a number within 10\^±4096"),
    ("SELECT percentile_cont(1e400) WITHIN GROUP (ORDER BY id DESC) FROM emp WITH EPSILON 0.1",
     UnsupportedQueryError, r"takes a fraction q between 0 and 1, got 1e400"),
])
def test_huge_exponents_are_refused_before_they_are_computed(analyst, sql, error, match):
    """``Fraction("1e9999999")`` computes 10^9999999: 28 s of a core holding Python's lock (every
    session of a server stalled) for ``WITH EPSILON 1e-9999999`` (22.9 s measured), ``WHERE id >
    1e9999999`` (25.8 s), ``percentile_cont(1e9999999) WITHIN GROUP (ORDER BY x DESC)`` (46 s,
    then a raw OverflowError: an internal error on the wire, as ``1e400`` at once)."""
    cu, an = analyst
    before = cu.ledger.budget("ann")
    with pytest.raises(error, match=match):
        an.execute(sql)
    assert cu.ledger.budget("ann") == before
    # a bound past every column's values is read as no bound, not computed
    assert an.execute("SELECT COUNT(*) FROM pub WHERE i > 1e99999").fetchall() == [(0,)]


def test_literal_fraction_refuses_huge_exponents():
    from provsql_dp._numbers import literal_fraction, to_fraction

    for text in ("1e9999999", "1E-9999999", "-2.5e+5000", "1e00000000009999999"):
        with pytest.raises(ValueError, match="beyond 10"):
            literal_fraction(text)
    with pytest.raises(ValueError, match="is not a number"):
        to_fraction("1e-9999999")
    assert literal_fraction("1e4096") == 10 ** 4096


def test_a_step_of_a_huge_power_of_ten_is_not_computed():
    """``GROUP BY ROUND(x, -9999999)`` (x a bounded DOUBLE) had the private binder compute
    10^9999999 for its step: 12 s of a core holding Python's lock, minutes at -99999999, before
    the refusal (``key_domain._steps``). Steps coarser than 10^308 (past every double) are not
    read. Run in a child with a watchdog far above the milliseconds it takes."""
    import subprocess
    import sys

    code = ("import sqlglot\nfrom provsql_dp.sql.key_domain import _steps\n"
            "key = sqlglot.parse_one('ROUND(x, -99999999)', read='duckdb')\n"
            "print(_steps(key, 'x', 'DOUBLE', (0.0, 1000.0)))\n"
            "print(_steps(sqlglot.parse_one('ROUND(x, -3)', read='duckdb'), 'x', 'DOUBLE', "
            "(0.0, 1000.0)))")
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=60, check=True).stdout.split("\n")
    except subprocess.TimeoutExpired:
        pytest.fail("still computing 10^99999999 after 60 s")
    assert out[:2] == ["None", "[0.0, 1000.0]"]


def test_describe_counts_toward_the_analysts_concurrent_statements(tmp_path):
    """A Describe ran outside the engine's registry of statements: no ``--max-concurrent``, no
    time limit, no CancelRequest — and a catalog query's Describe runs it on the replica (a
    join of ``pg_attribute`` three times: 5 s of a core), so one analyst's sessions could each
    hold a core. It now counts as a statement of the analyst."""
    asyncpg = pytest.importorskip("asyncpg", reason="asyncpg is not installed (pip install '.[test]')")
    import asyncio
    import threading
    import time

    psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install '.[test]')")
    from pgwire_support import PASSWORDS, dsn, make_database, running_server

    path = str(tmp_path / "wire.duckdb")
    make_database(path)
    slow = "SELECT count(*) FROM pub a, pub b, pub c WHERE a.x * 3 + b.x * 5 + c.x * 7 = 1"
    with running_server(path, max_concurrent=1, statement_timeout=30) as server:
        errors = []

        def hold():
            with psycopg.connect(dsn(server, "ann"), autocommit=True) as c:
                try:
                    c.execute(slow)
                except psycopg.Error as e:
                    errors.append(e)

        holder = threading.Thread(target=hold, daemon=True)
        holder.start()
        for _ in range(600):  # until ann's slow statement runs (a watchdog, not a timing)
            if server.engine._running.get("ann"):
                break
            time.sleep(0.05)

        async def describe():
            c = await asyncpg.connect(host="127.0.0.1", port=server.port, user="ann",
                                      password=PASSWORDS["ann"], database="demo", ssl=False)
            try:
                with pytest.raises(asyncpg.PostgresError, match=r"already runs 1 statements at "
                                   r"once.*--max-concurrent 1"):
                    await c.prepare("SELECT count(*), version() FROM pg_catalog.pg_class")
            finally:
                server.engine.cancel("ann")
                await c.close()

        assert server.engine._running.get("ann"), errors
        asyncio.run(describe())
        holder.join(60)
        # bob is another analyst: his Describe runs
        async def bob():
            c = await asyncpg.connect(host="127.0.0.1", port=server.port, user="bob",
                                      password=PASSWORDS["bob"], database="demo", ssl=False)
            try:
                return [a.name for a in (await c.prepare("SELECT x FROM pub")).get_attributes()]
            finally:
                await c.close()

        assert asyncio.run(bob()) == ["x"]
