"""Red team h143red: the analyst boundary on the code of session 15 (the wire server's catalog
replica, list parameters, key types, extended protocol), attacked as an analyst would.

Finding 1 — string growth compounded along relations. The size model capped every expression at
16 bytes per byte it reads, but a column of a CTE, a subquery or a view counted as a fresh read
(``L``): each CTE of ``s || s || s || s`` over the one before grew a value 4 times more, and
twenty of them over a public table (any analyst, any endpoint) reached DuckDB's 4 GiB string
limit: an INTERNAL error, after which DuckDB invalidates the database — every session of the
server, curator included, failed until a restart. On the private path the same chain over a
protected column made the running time (and that crash) depend on one person's value length.
Now the product of the growth of every select list is capped at 16 too
(``size_model.ChainGrowth``), on the public path (``analyst._query._check_sizes``) and in the
private planner (``Planner._project``).

Finding 1b — the same limit through ``string_agg``: its value holds every row of its group
(``string_agg`` of a cross join of public tables reaches 4 GiB less a byte, refused there by
DuckDB as it should), and ``||`` of it past the limit is the same internal error. A statement
with a row-concatenating aggregate (``string_agg``, ``list``) now grows strings only inside the
aggregate's argument (``analyst._query._no_growth_of_row_concatenations``).

Finding 2 — the wire server's ``SET``/``SHOW`` recognisers (``pgwire._execute._SET``/``_SHOW``)
backtracked in cubic time: ``SHOW a`` followed by 4,000 spaces and ``!`` held a server thread
(and a core) for 71 s, 64 KiB of spaces for days, before any size limit or statement timeout
applied. They now match the statement stripped of its end, linearly.

Finding 3 — the catalog replica ran any scalar function of DuckDB. It holds no rows, but
``SELECT repeat('x', 1000000) FROM generate_series(1, 1500) WHERE version() IS NOT NULL``, one
catalog query of any analyst, took the server to 3 GB (DuckDB's memory limit does not cover
string building; ``repeat('x', 4294967295)`` is 4 GiB at once, then copied into Python), and a
chain of ``||`` CTEs reaches DuckDB's 4 GiB string limit, an internal error that invalidates the
replica every session reads until the schema changes. A catalog query now calls only the
functions drivers use (``pgwire._catalog_functions``), concatenates at most 8 times (never
beside ``string_agg``), does not
recurse, and answers at most 1,000,000 rows (fetched at once before: 3,000,000 rows of
``generate_series`` were 280 MB of Python tuples).

Finding 4 — parameters were not counted by ``max_statement_bytes``: bound as literals into the
tree, a wire Bind of a 300,000-number list for ``x = ANY($1)`` held the server 17 s and ~360 MB
before the row-work refusal (wire messages may be 64 MiB). They now count, as the literals they
are bound as — for a catalog query too, whose parameters the replica binds (a 60 MB ``$1``
through eight ``||`` would be 15 GB there).

Attacks that held (tried on this code, nothing to fix):

* catalog replica settings: ``current_setting('secret_directory'|'home_directory'|
  'temp_directory'|'allowed_directories')`` are NULL, ``pg_settings`` names no path,
  ``getenv`` does not exist there, ``reltuples`` are 0 (the replica has no rows);
* catalog table functions beyond the drivers' (``read_csv``, ``enable_logging``,
  ``duckdb_settings``, ``query_table``) refused or sent down the analyst path (refused there);
* analyst public path: ``repeat()``, ``range()``, ``generate_series()``, ``txid_current()``,
  ``pg_sleep()``, ``array_to_string()``, ``histogram()`` refused by name; ``SELECT * FROM
  'pub.csv'`` refused (not a table of the database);
* statement kinds of an analyst on the wire: PRAGMA, CALL, COPY, ATTACH, PREPARE/EXECUTE, LOAD,
  INSTALL, CHECKPOINT, VACUUM, EXPORT DATABASE, LISTEN/NOTIFY, ``SET threads`` refused (42501);
  ``SET search_path``/``TimeZone``, ``RESET ALL``, ``DEALLOCATE`` acknowledged and never sent to
  DuckDB; ``EXPLAIN``/``SUMMARIZE``/``FROM`` of a protected table refused; ``EXPLAIN ANALYZE``
  over a public table shows the total time only;
* extended protocol: a portal runs (and charges) once, whether Described, Executed, Executed
  again after completion or suspended by ``max_rows`` (``_session._ensure_run`` caches its
  outcome); each Bind of a prepared private query is its own release and its own charge;
* ``GROUP BY`` key types (``privacy.key_types.typed_keys``): typed from the plan, else from the
  released (post-processed) rows only — a function of what is released, nothing more;
* array parameters (``x = ANY(%s)``): a list changes only the IN list (a public constant), a
  list elsewhere is refused by its number, NULLs inside are SQL NULLs; 10,000 values answer;
* the ReDoS scan of every ``re`` pattern of the package (AST-collected, 68, against prefixes of
  every statement kind × repeated units): only the wire's ``_SET``/``_SHOW`` (finding 2), and
  ``_LAST`` (quadratic) by reading.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import provsql_dp
from provsql_dp.errors import UnsupportedQueryError

sys.path.insert(0, str(Path(__file__).parent))
from conftest import analyst_beside_curator  # noqa: E402
from pgwire_support import dsn, make_database, running_server  # noqa: E402


def _chain(levels: int, source: str, k: int = 4) -> str:
    """``WITH a0 AS (SELECT s FROM source), a1 AS (SELECT s || s … FROM a0), …``."""
    ctes = [f"a0 AS (SELECT s FROM {source})"]
    ctes += [f"a{i} AS (SELECT {' || '.join(['s'] * k)} AS s FROM a{i - 1})"
             for i in range(1, levels + 1)]
    return "WITH " + ", ".join(ctes)


@pytest.fixture
def analyst():
    yield from analyst_beside_curator(":memory:h143chain", (
        "CREATE TABLE pub(s VARCHAR); INSERT INTO pub VALUES ('abcd')"))


@pytest.mark.parametrize("sql", [
    _chain(3, "pub") + " SELECT length(s) FROM a3",
    _chain(3, "emp") + " SELECT COUNT(*) FROM a3 WHERE length(s) > 10 WITH EPSILON 0.1",
    "SELECT COUNT(*) FROM (SELECT s || s || s || s AS s FROM (SELECT s || s || s || s AS s FROM "
    "(SELECT s || s || s || s AS s FROM emp) x) y) z WHERE length(s) > 10 WITH EPSILON 0.1",
])
def test_growth_compounded_along_relations_is_refused(analyst, sql):
    cu, an = analyst
    before = cu.ledger.budget("ann")
    with pytest.raises(UnsupportedQueryError, match=r"already grew 16 times: values of this "
                       r"statement can reach 64 bytes per byte read .* left\(…, n\)"):
        an.execute(sql)
    assert cu.ledger.budget("ann") == before  # nothing charged
    assert an.execute("SELECT s FROM pub").fetchall() == [("abcd",)]


def test_growth_within_the_cap_along_relations_still_runs(analyst):
    cu, an = analyst
    assert an.execute(_chain(2, "pub") + " SELECT length(s) FROM a2").fetchall() == [(64,)]
    assert an.execute(_chain(2, "emp") + " SELECT COUNT(*) FROM a2 WHERE length(s) > 10 "
                      "WITH EPSILON 0.1").fetchall()
    # a select list under a ceiling does not count: left(…, n) is at most 4n bytes
    sql = ("WITH b AS (SELECT left(s || s || s || s, 8) AS s FROM pub), "
           "c AS (SELECT s || s || s || s AS s FROM b), d AS (SELECT s || s || s || s AS s FROM c) "
           "SELECT length(s) FROM d")
    assert an.execute(sql).fetchall() == [(128,)]


def _run_in_child(code: str, timeout: float = 120) -> str:
    """Run ``code`` in a fresh interpreter and return its output: a hang fails the test (a
    watchdog far above the milliseconds the code takes, not a timing assertion)."""
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running after {timeout} s (catastrophic backtracking)")
    return out.stdout


@pytest.mark.parametrize("stmt", [
    "SHOW a" + " " * 20_000 + "!",
    "SET a = " + " " * 20_000 + "x;x",
    "SET PRIVACY BUDGET" + " " * 20_000 + "!",
    "SHOW " + " " * 20_000 + ";x",
])
def test_set_and_show_are_recognised_in_linear_time(stmt):
    code = ("from provsql_dp.interfaces.pgwire._execute import _client_statement\n"
            f"_client_statement({stmt!r}); print('read')")
    assert _run_in_child(code).strip() == "read"


@pytest.mark.parametrize("stmt, expected", [
    ("SET extra_float_digits = 3", ("SET", "extra_float_digits", "3")),
    ("set application_name to 'psql';", ("SET", "application_name", "'psql'")),
    ("SET SESSION time zone 'UTC' ;", ("SET", "time zone", "'UTC'")),
    ("SET LOCAL statement_timeout TO '5s'", ("SET", "statement_timeout", "'5s'")),
    ("SET datestyle ISO", ("SET", "datestyle", "ISO")),
    ("SHOW transaction isolation level;", ("SHOW", "transaction isolation level", None)),
    ("  SHOW  server_version  ", ("SHOW", "server_version", None)),
    ("SHOW provsql_dp.role", ("SHOW", "provsql_dp.role", None)),
])
def test_set_and_show_still_read_drivers_statements(stmt, expected):
    from provsql_dp.interfaces.pgwire._execute import _client_statement

    assert _client_statement(stmt) == expected


def test_parameters_count_toward_the_statement_size_limit(analyst):
    cu, an = analyst
    before = cu.ledger.budget("ann")
    for sql, params in [("SELECT COUNT(*) FROM pub WHERE s = ANY(?)", [[str(i) for i in range(20_000)]]),
                        ("SELECT COUNT(*) FROM emp WHERE id = ANY(?) WITH EPSILON 0.1",
                         [list(range(20_000))]),
                        ("SELECT COUNT(*) FROM pub WHERE s = ?", ["x" * 70_000])]:
        with pytest.raises(provsql_dp.ProgrammingError, match=r"parameters are .* bytes .*"
                           r"\(max_statement_bytes = 65,536\).*Nothing was charged"):
            an.execute(sql, params)
    assert cu.ledger.budget("ann") == before
    assert an.execute("SELECT COUNT(*) FROM pub WHERE s = ANY(?)",
                      [["abcd"] + [str(i) for i in range(1000)]]).fetchall() == [(1,)]
    # the curator's statements are not limited
    assert cu.execute("SELECT COUNT(*) FROM pub WHERE s = ?", ["x" * 70_000]).fetchall() == [(0,)]


@pytest.fixture
def replica_cursor():
    import duckdb

    from provsql_dp.interfaces.pgwire._catalog import Replica

    source = duckdb.connect()
    source.execute("CREATE TABLE emp(id INT PRIMARY KEY, name VARCHAR)")
    replica = Replica()
    cur = replica.cursor(source)
    yield replica, cur
    cur.close()


_CHAIN = ("WITH a0 AS (SELECT relname AS s FROM pg_catalog.pg_class), " + ", ".join(
    f"a{i} AS (SELECT s || s || s || s AS s FROM a{i - 1})" for i in range(1, 7))
    + " SELECT length(s) FROM a6")


@pytest.mark.parametrize("sql, why", [
    ("SELECT repeat('x', 1000000) FROM generate_series(1, 100) g(i) "
     "WHERE version() IS NOT NULL", "calls repeat()"),
    ("SELECT length(repeat('x', 100000000)), version()", "calls repeat()"),
    ("SELECT lpad('x', 10000000, 'y'), version()", "calls pad()"),
    ("SELECT range(10000000), version()", "calls range()"),
    ("SELECT printf('%10000000d', 1), version()", "calls printf()"),
    (_CHAIN, "concatenates more than 8 times"),
    ("SELECT length(s || s) FROM (SELECT string_agg(t.typname, '') AS s "
     "FROM generate_series(1, 100) g(i), pg_catalog.pg_type t) x", "beside string_agg"),
    ("WITH RECURSIVE r(s) AS (SELECT 'x' UNION ALL SELECT s || s FROM r WHERE length(s) < 1e9) "
     "SELECT max(length(s)) FROM r, pg_catalog.pg_namespace", "is recursive"),
])
def test_the_catalog_replica_builds_no_unbounded_value(replica_cursor, sql, why):
    from provsql_dp.interfaces.pgwire._catalog import is_catalog_query

    replica, cur = replica_cursor
    assert is_catalog_query(sql)
    with pytest.raises(provsql_dp.ProgrammingError, match="which the server's catalog does not run"
                       ) as e:
        replica.run(cur, sql)
    assert why in str(e.value)
    _, rows = replica.run(cur, "SELECT relname FROM pg_catalog.pg_class WHERE relname = 'emp'")
    assert rows == [("emp",)]


def test_a_catalog_query_answers_a_bounded_number_of_rows(replica_cursor, monkeypatch):
    from provsql_dp.interfaces.pgwire import _catalog

    replica, cur = replica_cursor
    monkeypatch.setattr(_catalog, "MAX_CATALOG_ROWS", 1000)
    sql = "SELECT i FROM generate_series(1, 5000) g(i) WHERE version() IS NOT NULL"
    with pytest.raises(provsql_dp.ProgrammingError, match="more than 1,000 rows.*narrow it"):
        replica.run(cur, sql)
    assert len(replica.run(cur, sql.replace("5000", "1000"))[1]) == 1000


@pytest.mark.parametrize("sql", [
    "WITH a AS (SELECT string_agg(p.s, '') AS s FROM pub p, pub q) SELECT length(s || s) FROM a",
    "SELECT length(upper(string_agg(s, ','))) FROM pub",
    "WITH a AS (SELECT list(s) AS l FROM pub) SELECT length(CAST(l AS VARCHAR) || 'x') FROM a",
])
def test_growing_a_row_concatenation_is_refused(analyst, sql):
    cu, an = analyst
    with pytest.raises(UnsupportedQueryError, match=r"grows a string in a statement with "
                       r"string_agg/list.*inside the aggregate"):
        an.execute(sql)
    assert an.execute("SELECT string_agg(s || '!', ',') FROM pub").fetchall() == [("abcd!",)]
    assert an.execute("SELECT string_agg(upper(s), ','), list(s) FROM pub").fetchall() \
        == [("ABCD", ["abcd"])]


def test_a_catalog_querys_parameters_count_toward_the_size_limit(tmp_path):
    psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install '.[test]')")
    path = str(tmp_path / "wire.duckdb")
    make_database(path)
    with running_server(path) as server, psycopg.connect(dsn(server, "ann"), autocommit=True) as c:
        sql = "SELECT length(%s || %s), version()"
        with pytest.raises(psycopg.Error, match=r"parameters are .*max_statement_bytes"):
            c.execute(sql, ["x" * 70_000, "y"])
        assert c.execute(sql, ["x" * 1000, "y"]).fetchall()[0][0] == 1001
