"""Every route ends past its budget the same way (h74fallback): a release whose DuckDB read runs
past ``release_seconds`` / ``release_time_limit``, or out of memory, answers with its
data-independent fallback (:mod:`provsql_dp.privacy.no_data`) — the same columns, rows, mechanism
and ε as a release from the data, the incident recorded for the curator, an interval that is the
statistic's whole range (so it covers the truth) — on the quantile, smooth-median, variance,
``COUNT(DISTINCT …)``, partition-selection, Blowfish / δ-strategy and ``KMEANS`` routes, which
failed with the analyst's fixed message after their charge before. The fallback reads nothing:
on two databases that differ in one participant it is the same, value for value."""

from __future__ import annotations

import math
import warnings
from contextlib import contextmanager

import numpy as np
import pytest

import provsql_dp
from provsql_dp import _deadline
from provsql_dp.provenance.backends import duckdb as duckdb_backend

PURE, APPROX = "SET PRIVACY BUDGET 100", "SET PRIVACY BUDGET EPSILON 100 DELTA 1e-3"
RHO = "SET PRIVACY BUDGET RHO 100"
Y_DELTA = "CREATE POLICY near ON p (y) AS DELTA 0.01 DOMAIN [0, 1) WIDTH 0.1 BOUNDED"
DAY_LINE = "CREATE POLICY l ON p (day) AS LINE DOMAIN [0, 10) WIDTH 1 BOUNDED"
XY_DELTA = ("CREATE POLICY near ON p (x, y) AS DELTA 0.01 METRIC L1 DOMAIN [0, 10) WIDTH 1, "
            "[0, 1) WIDTH 0.1 BOUNDED")
COUNTS = (0, None)  # a count's whole range

#: (name, budget, setup, statement, the fallback's interval per released row)
CASES = [
    ("quantile-grid", PURE, None, "SELECT MEDIAN(x) FROM p WITH EPSILON 1", [(0, 10)]),
    ("quantile-grid-grouped", PURE, None,
     "SELECT g, QUANTILE_CONT(x, 0.9) FROM p GROUP BY g WITH EPSILON 1", [(0, 10)] * 4),
    ("quantile-laplace", PURE, Y_DELTA, "SELECT MEDIAN(y) FROM p WITH EPSILON 1", [(0, 1)]),
    ("smooth-median", APPROX, Y_DELTA, "SELECT MEDIAN(y) FROM p WITH EPSILON 1 DELTA 1e-6",
     [(0, 1)]),
    ("variance", PURE, None, "SELECT VAR_POP(x) FROM p WITH EPSILON 1", [(0, 25)]),
    ("stddev-grouped", PURE, None, "SELECT g, STDDEV_SAMP(x) FROM p GROUP BY g WITH EPSILON 1",
     [(0, math.sqrt(50))] * 4),
    ("distinct", PURE, None, "SELECT COUNT(DISTINCT s) FROM p WITH EPSILON 1", [(0, 3)]),
    ("partition-selection", APPROX, None,
     "SELECT day, COUNT(*) FROM p GROUP BY day WITH EPSILON 1 DELTA 1e-6", []),
    ("blowfish-histogram", PURE, DAY_LINE,
     "SELECT day, COUNT(*) FROM p GROUP BY day WITH EPSILON 1", [COUNTS] * 10),
    ("count-ranges", PURE, DAY_LINE, "COUNT RANGES (day < 5, day >= 5) FROM p WITH EPSILON 1",
     [COUNTS] * 2),
    ("count-cumulative", PURE, DAY_LINE, "COUNT CUMULATIVE day FROM p WITH EPSILON 1",
     [COUNTS] * 10),
    ("delta-cumulative", PURE, Y_DELTA, "COUNT RANGES (y >= 0 AND y < 0.5) FROM p WITH "
     "EPSILON 1 OPTIONS (strategy = 'cumulative')", [COUNTS]),
    ("delta-sorted-points", PURE, Y_DELTA, "COUNT RANGES (y >= 0 AND y < 0.5) FROM p WITH "
     "EPSILON 1 OPTIONS (strategy = 'sorted_points')", [COUNTS]),
    ("delta-shifted-histograms", PURE, XY_DELTA, "COUNT RANGES (x >= 1 AND x < 5 AND y >= 0 AND "
     "y < 0.5) FROM p WITH EPSILON 1 OPTIONS (strategy = 'shifted_histograms')", [COUNTS]),
    ("laplace-count", PURE, None, "SELECT COUNT(*) FROM p WITH EPSILON 1", [COUNTS]),
    ("laplace-sum-grouped", PURE, None, "SELECT g, SUM(x) FROM p GROUP BY g WITH EPSILON 1",
     [(0, None)] * 4),
    ("laplace-avg", PURE, None, "SELECT AVG(x) FROM p WITH EPSILON 1", [(0, 10)]),
    ("gaussian-count", RHO, None, "SELECT COUNT(*) FROM p WITH RHO 0.5", [COUNTS]),
    ("gaussian-avg-count", RHO, None, "SELECT AVG(x), COUNT(*) FROM p WITH RHO 0.5",
     [((0, 10), COUNTS)]),
    ("kmeans-bounds", PURE, None, "KMEANS CLUSTERS 2 OF (x, y) FROM p ITERATIONS 2 WITH EPSILON 1",
     None),
    ("kmeans-policy", PURE, XY_DELTA,
     "KMEANS CLUSTERS 2 OF (x, y) FROM p ITERATIONS 2 WITH EPSILON 1", None),
]
IDS = [c[0] for c in CASES]


def database(budget, setup, *, one_more=False, memory=False, name=":memory:"):
    """200 participants (one more: a 201st, far from the others); bounds and keys declared."""
    con = provsql_dp.connect(name)
    if memory:
        con.execute("SET temp_directory = ''")  # nothing spills: out of memory is an error
    con.execute("CREATE TABLE p(id INT PRIMARY KEY, x DOUBLE, y DOUBLE, g VARCHAR, s VARCHAR, "
                "day INT)")
    con.execute("INSERT INTO p SELECT i, (i % 50) / 10, (i % 7) / 7, ['a', 'b', 'c'][i % 3 + 1], "
                "['u', 'v'][i % 2 + 1], i % 10 FROM range(200) t(i)")
    if one_more:
        con.execute("INSERT INTO p VALUES (200, 9.9, 0.99, 'a', 'w', 9)")
    con.execute(f"PROTECT TABLE p; {budget}; SET BOUNDS ON p (x) BETWEEN 0 AND 10; "
                "SET BOUNDS ON p (y) BETWEEN 0 AND 1; "
                "SET GROUP KEYS ON p (g) VALUES ('a', 'b', 'c', 'd'); "
                "SET GROUP KEYS ON p (s) VALUES ('u', 'v', 'w')")
    if setup:
        con.execute(setup)
    con._rng = np.random.default_rng(7)
    return con


def outcome(con, sql, values=True) -> tuple:
    """What an analyst sees: columns, rows (their values when ``values``, else their types),
    mechanism, ε charged and left, and the intervals."""
    before = con.ledger.remaining("default")
    cur = con.execute(sql)
    rows = cur.fetchall()
    info = cur.privacy
    seen = rows if values else [tuple(type(v).__name__ for v in r) for r in rows]
    ivs = None if info is None else [tuple(iv) for iv in info.intervals(0.95)]
    return ([c[:2] for c in cur.description], len(rows), seen,
            None if info is None else info.mechanism, before - con.ledger.remaining("default"),
            ivs if values else None)


def incidents(con) -> list[str]:
    return [r[0] for r in con._duck.execute("SELECT what FROM _provsql_dp.incidents").fetchall()]


HUNGRY = "SELECT count(*) FROM (SELECT DISTINCT md5(range::VARCHAR) FROM range(2000000))"


@pytest.fixture
def starved(monkeypatch):
    """Every DuckDB read of a release needs more memory than ``memory_limit`` allows (a hash
    table of 2·10⁶ strings): DuckDB's own out-of-memory error, inside the release's step."""
    monkeypatch.setattr(duckdb_backend, "reading", _reading_that_runs(HUNGRY))


def _reading_that_runs(sql):
    """``_deadline.reading`` that runs ``sql`` inside each read of a release (under its clock
    and its memory errors), before the read itself."""
    real = _deadline.reading

    @contextmanager
    def reading(duck, where="the reading of the protected rows"):
        with real(duck, where):
            duck.execute(sql).fetchall()
            yield

    return reading


def _late(name, budget, setup, sql, *, one_more=False, memory=False):
    con = database(budget, setup, one_more=one_more, memory=memory)
    if memory:
        con.execute("SET memory_limit = '32MB'")
    else:
        con.release_seconds = 1e-9  # over before the read starts
    try:
        return outcome(con, sql), incidents(con)
    finally:
        if memory:
            con.execute("RESET memory_limit")


def _check(name, budget, setup, sql, ranges, memory):
    normal = outcome(database(budget, setup), sql, values=False)
    late, said = _late(name, budget, setup, sql, memory=memory)
    neighbour, _ = _late(name, budget, setup, sql, one_more=True, memory=memory)
    assert late == neighbour  # reads nothing: the same release, value for value
    desc, n, rows, mech, spent, ivs = late
    if name == "partition-selection":  # an empty table selects no group: the same columns
        assert (desc, mech, spent) == (normal[0], normal[3], normal[4]) and n == 0
    else:
        assert (desc, n, [tuple(type(v).__name__ for v in r) for r in rows], mech, spent) == \
            normal[:5]
    assert spent == (0.5 if budget == RHO else 1)
    if ranges is not None:
        # the whole range (per column, or one column's): covers the truth always
        assert ivs == [r if isinstance(r[0], tuple) else (r,) for r in ranges]
    what = "ran out of memory" if memory else "time budget of 1e-09 s"
    assert any(what in w and "data-independent fallback" in w for w in said), said


@pytest.mark.parametrize("name,budget,setup,sql,ranges", CASES, ids=IDS)
def test_past_the_budget_every_route_releases_its_fallback(name, budget, setup, sql, ranges):
    _check(name, budget, setup, sql, ranges, memory=False)


#: the out-of-memory cases run by default (each takes about a second: the rest are slow)
QUICK = {"quantile-laplace", "variance", "kmeans-bounds"}


@pytest.mark.parametrize("name,budget,setup,sql,ranges", [
    pytest.param(*c, id=c[0], marks=() if c[0] in QUICK else pytest.mark.slow) for c in CASES])
def test_out_of_memory_every_route_releases_its_fallback(starved, name, budget, setup, sql,
                                                         ranges):
    _check(name, budget, setup, sql, ranges, memory=True)



def test_an_analyst_gets_the_fallback_not_the_failure():
    """Before, an analyst past the budget got the fixed failure (DataError) after the charge."""
    cur = database(PURE, None, name=":memory:h74fallback_analyst")
    cur.execute("SET PRIVACY BUDGET 10 FOR USER 'ann'")
    cur.commit()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an analyst sharing the curator's process
        ann = provsql_dp.connect(":memory:h74fallback_analyst", role="analyst", user="ann")
    try:
        ann.release_seconds = 1e-9
        for sql in ("SELECT MEDIAN(x) FROM p WITH EPSILON 1",
                    "SELECT g, VAR_SAMP(x) FROM p GROUP BY g WITH EPSILON 1",
                    "KMEANS CLUSTERS 2 OF (x, y) FROM p WITH EPSILON 1"):
            assert len(ann.execute(sql).fetchall()) >= 1
        assert ann.ledger.remaining("ann") == 7
    finally:
        ann.close()
        cur.close()


#: a step of many minutes that yields no row (test_release_interrupt's): cut off by the watcher
SLOW = ("SELECT count(*) FROM range(200000) a(x) JOIN range(200000) b(y) "
        "ON (a.x * b.y + a.x) % 1000003 = 1000004")


@pytest.mark.parametrize("sql", ["SELECT g, VAR_POP(x) FROM p GROUP BY g WITH EPSILON 1",
                                 "SELECT QUANTILE_DISC(x, 0.25) FROM p WITH EPSILON 1"])
def test_a_read_interrupted_at_release_time_limit_releases_the_fallback(monkeypatch, sql):
    """``release_time_limit`` bounds each read: one still running then is interrupted (not
    awaited) and the route answers with its fallback."""
    normal = outcome(database(PURE, None), sql, values=False)
    monkeypatch.setattr(duckdb_backend, "reading", _reading_that_runs(SLOW))
    con = database(PURE, None)
    con.release_time_limit = 0.2
    late = outcome(con, sql)
    assert late[:2] == normal[:2] and late[3:5] == normal[3:5]
    assert all(iv == ((0, 25 if "VAR" in sql else 10),) for iv in late[5])
    assert any("time budget of 0.2 s" in w for w in incidents(con))
