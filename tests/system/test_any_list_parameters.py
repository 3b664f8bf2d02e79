"""``x = ANY(?)`` with a list — PostgreSQL's idiom, which psycopg users write — in private and
analysts' public queries: the list is bound as literals and planned as ``x IN (…)``, its equal
(an empty list: false); a list anywhere else is refused by the parameter's number, and a refusal
charges nothing."""

from __future__ import annotations

import warnings

import pytest

import provsql_dp
from provsql_dp.errors import ProgrammingError


@pytest.fixture
def cons():
    name = ":memory:any_list_parameters"
    cur = provsql_dp.connect(name)
    cur.autocommit = True
    cur.execute("CREATE TABLE t(id INT PRIMARY KEY, g INT, s VARCHAR)")
    cur.execute("INSERT INTO t SELECT i, i % 5, 'v' || (i % 3) FROM range(1000) r(i)")
    cur.execute("CREATE TABLE pub(x INT)")
    cur.execute("INSERT INTO pub VALUES (1), (2), (3)")
    cur.execute("PROTECT TABLE t; SET PRIVACY BUDGET 100 FOR USER 'ann'")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        an = provsql_dp.connect(name, role="analyst", user="ann")
    yield cur, an
    an.close()
    cur.close()


@pytest.mark.parametrize("sql, params, same", [
    ("SELECT COUNT(*) FROM t WHERE g = ANY(?) WITH EPSILON 1", [[1, 2]], "g IN (1, 2)"),
    ("SELECT COUNT(*) FROM t WHERE g = ANY($1) WITH EPSILON 1", [(1, 2)], "g IN (1, 2)"),
    ("SELECT COUNT(*) FROM t WHERE s = ANY(:v) WITH EPSILON 1", {"v": ["v1", None]},
     "s IN ('v1', NULL)"),
    ("SELECT COUNT(*) FROM t WHERE g = ANY([1, 2]) WITH EPSILON 1", None, "g IN (1, 2)"),
    ("SELECT COUNT(*) FROM t WHERE g = ANY(ARRAY[1, 2]) WITH EPSILON 1", None, "g IN (1, 2)"),
])
def test_any_of_a_list_is_planned_as_in(cons, sql, params, same):
    _, an = cons
    cur = an.execute(sql, params)
    (n,), = cur.fetchall()
    assert cur.privacy.routes == an.execute(
        f"SELECT COUNT(*) FROM t WHERE {same} WITH EPSILON 1").privacy.routes
    assert abs(n - 400 if "g" in same else n - 333) < 60
    assert an.ledger.remaining("ann") == 98


def test_any_of_an_empty_list_is_false(cons):
    _, an = cons
    (n,), = an.execute("SELECT COUNT(*) FROM t WHERE g = ANY(?) WITH EPSILON 1", [[]]).fetchall()
    assert abs(n) < 30  # the true count is 0


def test_an_analysts_public_query_takes_a_list(cons):
    cur, an = cons
    q = "SELECT x FROM pub WHERE x = ANY(?) ORDER BY x"
    assert an.execute(q, [[1, 3]]).fetchall() == [(1,), (3,)]
    assert cur.execute(q, [[1, 3]]).fetchall() == [(1,), (3,)]  # the curator's: DuckDB's ANY


@pytest.mark.parametrize("sql, params", [
    ("SELECT COUNT(*) FROM t WHERE g > ? WITH EPSILON 1", [[1, 2]]),
    ("SELECT COUNT(*) FROM t WHERE g = ANY(?) WITH EPSILON 1", [[[1], [2]]]),
    ("SELECT COUNT(*) FROM t WHERE g IN (?) WITH EPSILON 1", [[1, 2]]),
])
def test_a_list_elsewhere_is_refused_and_charges_nothing(cons, sql, params):
    _, an = cons
    with pytest.raises(ProgrammingError, match=r"parameter \$1 is a list: a list is bound only "
                                               r"as the list of x = ANY\(\?\)"):
        an.execute(sql, params)
    assert an.ledger.remaining("ann") == 100


def test_a_session_default_epsilon_takes_any_of_a_list_written_out(cons):
    """Under ``SET PRIVACY EPSILON`` (no clause) ``x = ANY([…])`` is planned as ``IN`` too."""
    _, an = cons
    an.execute("SET PRIVACY EPSILON 1")
    (n,), = an.execute("SELECT COUNT(*) FROM t WHERE g = ANY([1, 2])").fetchall()
    assert abs(n - 400) < 60 and an.ledger.remaining("ann") == 99
