"""Red team h73attack, findings 1 and 2: what a release may run out of, and the one analyst
statement that missed the checks before its charge.

Finding 2. How much memory a DuckDB step of a release needs depends on the data beyond its size:
a join's hash table holds the matching rows, a ``DISTINCT`` the distinct keys. Under a memory
limit (the guard rails' ``memory_limit``, or a curator's ``SET GLOBAL memory_limit`` /
``temp_directory = ''`` in a process an analyst connection shares), the same statement over two
tables of the same size answered on one and failed after its charge on the other: "the private
query failed while it read protected data" exactly when the joined column had many distinct
values. A step that runs out of memory now ends like one past the release's time budget
(``_deadline.ResourceExhausted``): the data-independent fallback, same shape and ε. DuckDB's own
``max_execution_time`` (which interrupted a release's reads after the charge as their running
time decided) is refused before the charge, like the settings of h63attack-3.

Finding 1. ``KMEANS`` is the one analyst statement that charges the ledger outside the cursor's
private-query path: it skipped the session-settings check, and a failure after its charge
reached the analyst raw — DuckDB's or Python's own exception and text, not PEP 249, and not
recorded for the curator. Now checked before the charge, and failed like every release.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import provsql_dp
from provsql_dp.privacy import kmeans_statement
from provsql_dp.privacy.failures import ANALYST_FAILURE

_names = itertools.count()
N = 300_000


def _database(distinct: bool, *settings):
    """A curator's connection and an analyst's in the same process (they share DuckDB's
    configuration): t has N rows; x is one value, or N distinct ones."""
    name = f":memory:h73resources_{next(_names)}"
    cur = provsql_dp.connect(name)
    cur.autocommit = True
    cur.execute("CREATE TABLE t(id INT PRIMARY KEY, x VARCHAR, v DOUBLE, w DOUBLE)")
    x = "md5(range::VARCHAR)" if distinct else "'same'"
    cur.execute(f"INSERT INTO t SELECT range, {x}, range % 100, range % 7 FROM range({N})")
    cur.execute("PROTECT TABLE t; SET PRIVACY BUDGET 100 FOR USER 'ann'; SET PRIVACY BUDGET 100")
    cur.execute("SET BOUNDS ON t (v) BETWEEN 0 AND 100; SET BOUNDS ON t (w) BETWEEN 0 AND 10")
    for s in settings:
        cur.execute(s)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an analyst sharing the curator's configuration
        analyst = provsql_dp.connect(name, role="analyst", user="ann")
    return cur, analyst


def _outcome(con, sql, user="ann"):
    con._rng = np.random.default_rng(1)
    before = con.ledger.remaining(user)
    try:
        con.execute(sql).fetchall()
        seen = ("answer",)
    except provsql_dp.Error as e:
        seen = (type(e).__name__, str(e))
    return seen, before - con.ledger.remaining(user)


LOW_MEMORY = ("SET GLOBAL memory_limit = '40MB'",
              "SET GLOBAL temp_directory = ''")
JOINS = ("SELECT COUNT(*) FROM t a JOIN t b ON a.x = b.x WITH EPSILON 1",
         "SELECT COUNT(*) FROM (SELECT DISTINCT x FROM t) WITH EPSILON 1")


@pytest.mark.parametrize("sql", JOINS)
def test_running_out_of_memory_does_not_tell_the_data(sql):
    seen = []
    for distinct in (False, True):
        cur, analyst = _database(distinct, *LOW_MEMORY)
        try:
            seen.append(_outcome(analyst, sql))
        finally:
            analyst.close()
            cur.execute("RESET GLOBAL memory_limit")
            cur.close()
    assert seen[0] == seen[1] == (("answer",), 1), seen


def test_an_out_of_memory_read_is_the_fallback_and_an_incident():
    cur, analyst = _database(True, *LOW_MEMORY)
    try:
        assert _outcome(cur, JOINS[0], "default") == (("answer",), 1)  # the curator's too
        said = [r[0] for r in cur.execute("SELECT what FROM _provsql_dp.incidents").fetchall()]
        assert any("ran out of memory" in w and "fallback" in w for w in said), said
    finally:
        analyst.close()
        cur.execute("RESET GLOBAL memory_limit")
        cur.close()


@pytest.mark.parametrize("statement", [JOINS[0], "SELECT SUM(v) FROM t WITH EPSILON 1",
                                       "KMEANS CLUSTERS 2 OF (v, w) FROM t WITH EPSILON 1"])
def test_max_execution_time_is_refused_before_the_charge(statement):
    cur, analyst = _database(False, "SET GLOBAL max_execution_time = 2000")
    try:
        for con, user in ((analyst, "ann"), (cur, "default")):
            seen, spent = _outcome(con, statement, user)
            assert spent == 0 and seen[0] == "OperationalError", seen
            assert "max_execution_time" in seen[1] and "Nothing was charged" in seen[1]
        cur.execute("RESET GLOBAL max_execution_time")
        assert _outcome(analyst, statement) == (("answer",), 1)
    finally:
        analyst.close()
        cur.close()


def test_kmeans_checks_the_session_settings_before_its_charge():
    cur, analyst = _database(False, "SET GLOBAL integer_division = true")
    try:
        seen, spent = _outcome(analyst, "KMEANS CLUSTERS 2 OF (v, w) FROM t WITH EPSILON 1")
        assert spent == 0 and "integer_division" in seen[1]
    finally:
        analyst.close()
        cur.execute("RESET GLOBAL integer_division")
        cur.close()


def test_a_kmeans_failure_after_its_charge_is_the_fixed_failure(monkeypatch):
    def failing(X, *args, **kwargs):
        raise ValueError(f"no convergence near {X[0].tolist()}")  # a message that quotes data

    monkeypatch.setattr(kmeans_statement, "kmeans", failing)
    cur, analyst = _database(False)
    try:
        seen, spent = _outcome(analyst, "KMEANS CLUSTERS 2 OF (v, w) FROM t WITH EPSILON 1")
        assert seen == ("DataError", ANALYST_FAILURE) and spent == 1
        with pytest.raises(provsql_dp.Error, match="no convergence"):  # the curator's own
            cur.execute("KMEANS CLUSTERS 2 OF (v, w) FROM t WITH EPSILON 1")
        said = [r[0] for r in cur.execute("SELECT what FROM _provsql_dp.incidents").fetchall()]
        assert any("no convergence" in w for w in said)
    finally:
        analyst.close()
        cur.close()
