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

Finding 2 — the wire server's ``SET``/``SHOW`` recognisers (``pgwire._execute._SET``/``_SHOW``)
backtracked in cubic time: ``SHOW a`` followed by 4,000 spaces and ``!`` held a server thread
(and a core) for 71 s, 64 KiB of spaces for days, before any size limit or statement timeout
applied. They now match the statement stripped of its end, linearly.

Attacks that held (tried on this code, nothing to fix):

* catalog replica settings: ``current_setting('secret_directory'|'home_directory'|
  'temp_directory'|'allowed_directories')`` are NULL, ``pg_settings`` names no path,
  ``getenv`` does not exist there, ``reltuples`` are 0 (the replica has no rows);
* catalog table functions beyond the drivers' (``read_csv``, ``enable_logging``,
  ``duckdb_settings``, ``query_table``) refused or sent down the analyst path (refused there);
* analyst public path: ``repeat()``, ``range()``, ``generate_series()`` refused by name.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

import provsql_dp
from provsql_dp.errors import UnsupportedQueryError


def _chain(levels: int, source: str, k: int = 4) -> str:
    """``WITH a0 AS (SELECT s FROM source), a1 AS (SELECT s || s … FROM a0), …``."""
    ctes = [f"a0 AS (SELECT s FROM {source})"]
    ctes += [f"a{i} AS (SELECT {' || '.join(['s'] * k)} AS s FROM a{i - 1})"
             for i in range(1, levels + 1)]
    return "WITH " + ", ".join(ctes)


@pytest.fixture
def analyst():
    name = ":memory:h143chain"
    cu = provsql_dp.connect(name)
    cu.execute("CREATE TABLE emp(id INT PRIMARY KEY, s VARCHAR); "
               "INSERT INTO emp SELECT range, 'abcd' FROM range(50); "
               "CREATE TABLE pub(s VARCHAR); INSERT INTO pub VALUES ('abcd')")
    cu.execute("PROTECT TABLE emp")
    cu.execute("SET PRIVACY BUDGET 10 FOR USER 'ann'")
    cu.commit()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an analyst sharing the curator's process
        an = provsql_dp.connect(name, role="analyst", user="ann")
    yield cu, an
    an.close()
    cu.close()


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
