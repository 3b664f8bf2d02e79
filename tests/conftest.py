"""Shared test configuration: where the real data sets live.

The graphs and histograms of ``../shared/data`` (beside the repository) are large and not shipped;
tests that need them are skipped when they are absent. ``PROVSQL_DP_SHARED_DATA`` points
elsewhere. The ProvSQL conformance cases are small and vendored under ``tests/data``.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TEST_DATA = REPO / "tests" / "data"


def shared_data() -> Path:
    """The shared data directory (may not exist)."""
    env = os.environ.get("PROVSQL_DP_SHARED_DATA")
    if env:
        return Path(env)
    for candidate in (REPO.parent / "shared" / "data", Path("/work/shared/data")):
        if candidate.is_dir():
            return candidate
    return REPO.parent / "shared" / "data"


# ---------------------------------------------------------------------- Apache Spark
import shutil  # noqa: E402

import pytest  # noqa: E402


def _spark_missing() -> str | None:
    """Why the Spark tests cannot run here, or None."""
    try:
        import pyarrow  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError as e:
        return f"the Spark extra is not installed ({e.name}): pip install '.[spark]'"
    java_home = os.environ.get("JAVA_HOME")
    if not shutil.which("java") and not (java_home and Path(java_home, "bin", "java").exists()):
        return "no Java runtime (java not on PATH, JAVA_HOME unset): Spark needs Java 17 or later"
    return None


@pytest.fixture(scope="session")
def spark():
    """One local Spark session (``local[2]``) for the whole test session; skipped, with the
    reason, when pyspark or Java is absent."""
    reason = _spark_missing()
    if reason:
        pytest.skip(reason)
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("provsql_dp-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "1")
               .config("spark.default.parallelism", "2")
               .config("spark.driver.memory", "1g")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(autouse=True)
def _spark_ansi_kept(request):
    """The shared Spark session's ANSI mode after a test is what it was before it: put back,
    so that no test's outcome depends on the order the tests ran in (a test that set it and
    failed before its own restore changed every later one); only for tests using ``spark``."""
    if "spark" not in request.fixturenames:
        yield
        return
    session = request.getfixturevalue("spark")
    before = session.conf.get("spark.sql.ansi.enabled")
    yield
    if session.conf.get("spark.sql.ansi.enabled") != before:
        session.conf.set("spark.sql.ansi.enabled", before)


# ---------------------------------------------------------------------- rows in one statement
def insert_rows(duck, table: str, rows) -> None:
    """``rows`` (sequences in column order) into ``table`` of the DuckDB connection ``duck`` by
    INSERTs of a thousand rows each, the values bound as parameters as ``executemany`` binds
    them (several times faster than its one statement a row)::

        >>> import duckdb
        >>> duck = duckdb.connect()
        >>> _ = duck.execute("CREATE TABLE t(k INT, x DOUBLE)")
        >>> insert_rows(duck, "t", [(1, -0.0), (2, None)])
        >>> duck.execute("SELECT * FROM t").fetchall()
        [(1, -0.0), (2, None)]
    """
    rows = [list(r) for r in rows]
    for start in range(0, len(rows), 1000):
        part = rows[start:start + 1000]
        marks = ", ".join("(" + ", ".join("?" * len(part[0])) + ")" for _ in part)
        duck.execute(f"INSERT INTO {table} VALUES {marks}", [v for r in part for v in r])


# ---------------------------------------------------------------------- people ⋈ visits
def _build_people_visits(people, visits, *, people_columns="id INT PRIMARY KEY, age INT, city VARCHAR",
                         visits_columns="pid INT, day INT, amount DOUBLE", path=":memory:",
                         raw=False, budget="1e9", declarations=(), before_protect=()):
    """A provsql_dp connection holding ``people`` (one row per participant, key ``id``) and
    ``visits`` (rows owned through ``pid``), both protected, with a privacy budget: the database
    of the single-owner tests. ``people`` and ``visits`` are row tuples in column order;
    ``before_protect`` are statements run after the inserts (more tables or rows), before the
    declarations; ``declarations`` run last."""
    import provsql_dp

    con = provsql_dp.connect(path, raw=raw)
    con.execute(f"CREATE TABLE people({people_columns})")
    con.execute(f"CREATE TABLE visits({visits_columns})")
    for table, rows in (("people", people), ("visits", visits)):
        insert_rows(con._duck, table, rows)
    for stmt in before_protect:
        con.execute(stmt)
    con.execute("PROTECT TABLE people")
    con.execute("PROTECT TABLE visits BY (pid) AS people")
    con.execute(f"SET PRIVACY BUDGET {budget}")
    for stmt in declarations:
        con.execute(stmt)
    return con


@pytest.fixture(scope="session")
def people_visits():
    """Builds the people ⋈ visits database of the single-owner tests (see
    :func:`_build_people_visits` for the arguments); session-scoped, so hypothesis tests may
    use it."""
    return _build_people_visits


# ---------------------------------------------------------------------- private statements
@pytest.fixture
def plans(monkeypatch):
    """The statements planned, by their SQL (a kept plan is not planned again)."""
    from provsql_dp.interfaces.dbapi import cursor as cursor_mod

    made = []
    real = cursor_mod.plan_query

    def counting(tree, catalog):
        made.append(tree.sql())
        return real(tree, catalog)

    monkeypatch.setattr(cursor_mod, "plan_query", counting)
    return made


def mechanism_outcome(con, sql: str, user: str = "default", seed: int = 3):
    """What ``sql WITH EPSILON 1`` shows on ``con`` (``("answer", mechanism)``, or the error's
    class and text) and the ε it charged ``user``, its noise seeded: what two neighbouring
    databases must give alike."""
    import numpy as np

    import provsql_dp

    before = con.ledger.remaining(user)
    con._rng = np.random.default_rng(seed)
    try:
        cur = con.execute(f"{sql} WITH EPSILON 1")
        cur.fetchall()
        seen = ("answer", cur.privacy.mechanism)
    except provsql_dp.Error as e:
        seen = (type(e).__name__, str(e))
    return seen, before - con.ledger.remaining(user)


def declared_state(con) -> tuple:
    """The tables and views, every declaration and the ledger of ``con``'s database, as rows to
    compare before and after a refused statement (which must leave them exactly as they were)."""
    return (con.execute("SELECT database_name, schema_name, table_name, sql FROM duckdb_tables() "
                        "WHERE schema_name <> '_provsql_dp' ORDER BY ALL").fetchall(),
            con.execute("SELECT view_name, sql FROM duckdb_views() WHERE NOT internal "
                        "ORDER BY ALL").fetchall(),
            [con.execute(s).fetchall() for s in ("SHOW PROTECTED", "SHOW BOUNDS",
                                                 "SHOW GROUP KEYS", "SHOW POLICIES")],
            con.execute("SELECT * FROM _provsql_dp.ledger ORDER BY id").fetchall(),
            con.execute("SELECT * FROM _provsql_dp.budget ORDER BY ALL").fetchall())


# ---------------------------------------------------------------------- hypothesis breadth
def breadth(quick: int, full: int, *positional, settings: dict | None = None, **strategies):
    """A hypothesis property test run twice: ``[quick]`` draws ``quick`` examples in the default
    step, ``[full]`` (marked slow: CI's second step) draws ``full``, the breadth it had. It
    replaces ``@settings(max_examples=full, ...)`` and ``@given(**strategies)``; ``settings``
    are the other settings (default: no deadline, the too_slow health check off); ``@example``s
    below it run in both. The test's other arguments are pytest fixtures or parameters, as with
    ``@given`` (whose positional strategies, ``positional`` here, draw the last arguments)::

        @breadth(4, 20, seed=st.integers(0, 2**31))
        def test_sorted_is_idempotent(seed):
            xs = random.Random(seed).sample(range(99), 9)
            assert sorted(sorted(xs)) == sorted(xs)
    """
    import inspect

    from hypothesis import HealthCheck, example, given
    from hypothesis import settings as hypothesis_settings

    opts = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow], **(settings or {})}

    def decorate(body):
        names = list(inspect.signature(body).parameters)
        drawn_by = {**dict(zip(names[len(names) - len(positional):], positional)), **strategies}
        fixtures = [p for name, p in inspect.signature(body).parameters.items()
                    if name not in drawn_by]
        explicit = [{**dict(zip(names[len(names) - len(e.args):], e.args)), **e.kwargs}
                    for e in getattr(body, "hypothesis_explicit_examples", [])]

        def test(examples, **kwargs):
            def drawn(**values):
                body(**values, **kwargs)

            # the example database and the report name the body, not this wrapper
            drawn.__name__ = drawn.__qualname__ = body.__qualname__
            drawn.__module__ = body.__module__
            run = given(**drawn_by)(drawn)
            for values in explicit:
                run = example(**values)(run)
            hypothesis_settings(max_examples=examples, **opts)(run)()

        for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
            setattr(test, attr, getattr(body, attr))
        test.__signature__ = inspect.Signature(
            [inspect.Parameter("examples", inspect.Parameter.POSITIONAL_OR_KEYWORD), *fixtures])
        return pytest.mark.parametrize("examples", [
            pytest.param(quick, id="quick"),
            pytest.param(full, id="full", marks=pytest.mark.slow)])(test)

    return decorate


def analyst_beside_curator(name: str, tables: str):
    """A fixture's body (``yield from``): in-memory database ``name`` with ``emp(id, s)`` (50 rows,
    protected), ``tables`` (the curator's SQL), ann's budget 10; yields (curator, analyst ann)."""
    import warnings

    import provsql_dp

    cu = provsql_dp.connect(name)
    cu.execute("CREATE TABLE emp(id INT PRIMARY KEY, s VARCHAR); "
               "INSERT INTO emp SELECT range, 'abcd' FROM range(50); " + tables)
    cu.execute("PROTECT TABLE emp")
    cu.execute("SET PRIVACY BUDGET 10 FOR USER 'ann'")
    cu.commit()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an analyst sharing the curator's process
        an = provsql_dp.connect(name, role="analyst", user="ann")
    yield cu, an
    an.close()
    cu.close()
