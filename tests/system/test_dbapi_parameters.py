"""Parameters in private queries (bound as literals before planning), injection attempts, type
errors, and ``executemany`` (issue 13, item 5)."""

from __future__ import annotations

import datetime
import decimal
from fractions import Fraction

import pytest
from conftest import breadth
from hypothesis import given
from hypothesis import strategies as st
from sqlglot import exp

import provsql_dp
from provsql_dp.interfaces.dbapi.parameters import bind, number_qmarks
from provsql_dp.sql import dialect as d
from provsql_dp.sql.plan import explain
from provsql_dp.sql.planner import plan_query

INJECTIONS = [
    "a' OR '1'='1",
    "a'; DROP TABLE emp; --",
    "a') UNION ALL SELECT id, dept, salary FROM emp --",
    "a' WITH EPSILON 100 --",
    "?", "$1", ":d", "'", "''", "\\'", "a\nb", "a\x00b", "é ' ü", "*/ SELECT 1 /*",
]


def _db(budget=10):
    con = provsql_dp.connect()
    con.execute("CREATE TABLE emp(id INT PRIMARY KEY, dept VARCHAR, salary DOUBLE, hired DATE)")
    con.execute("INSERT INTO emp SELECT range, CASE WHEN range % 2 = 0 THEN 'a' ELSE 'b' END, "
                "(range * 37) % 1000, DATE '2020-01-01' + range::INT FROM range(400)")
    con.execute(f"PROTECT TABLE emp; SET PRIVACY BUDGET {budget}; "
                "SET BOUNDS ON emp (salary) BETWEEN 0 AND 1000")
    return con


def _state(con):
    return (con._ledger.remaining(con.user), len(con._ledger.entries(con.user)),
            con._duck.execute("SELECT COUNT(*), SUM(salary) FROM emp").fetchone())


def _plan_text(con, sql):
    tree = d.parse_one(sql)
    return explain(plan_query(tree.this if isinstance(tree, d.PrivateQuery) else tree, con._catalog))


def test_positional_named_and_numbered_parameters():
    con = _db()
    q = "SELECT COUNT(*) FROM emp WHERE dept = {} AND salary < {} WITH EPSILON 0.5"
    for sql, params in [(q.format("?", "?"), ["a", 500]),
                        (q.format("$1", "$2"), ("a", 500.0)),
                        (q.format("$d", "$s"), {"d": "a", "s": 500}),
                        (q.format(":d", ":s"), {"d": "a", "s": decimal.Decimal("500")})]:
        cur = con.execute(sql, params)
        assert cur.privacy is not None and len(cur.fetchall()) == 1
    assert con._ledger.remaining(con.user) == 8
    entry = con._ledger.entries(con.user)[-1]
    assert "parameters: {'d': 'a'" in entry.statement  # the ledger records the values


def test_binding_gives_the_plan_of_the_typed_literal():
    con = _db()
    typed = ("SELECT COUNT(*) FROM emp WHERE dept = 'a' AND salary < 500 AND hired >= "
             "CAST('2020-03-01' AS DATE) WITH EPSILON 1")
    tree = d.parse_one(number_qmarks("SELECT COUNT(*) FROM emp WHERE dept = ? AND salary < ? "
                                     "AND hired >= ? WITH EPSILON 1"))
    bound = bind(tree.this, ["a", 500, datetime.date(2020, 3, 1)])
    assert explain(plan_query(bound, con._catalog)) == _plan_text(con, typed)


@breadth(30, 150, st.text(max_size=40))
def test_a_string_parameter_is_one_literal_whatever_it_holds(s):
    tree = d.parse_one(number_qmarks("SELECT COUNT(*) FROM emp WHERE dept = ? WITH EPSILON 1"))
    bound = bind(tree.this, [s])
    strings = [lit.this for lit in bound.find_all(exp.Literal) if lit.is_string]
    assert strings == [s]
    # the generated SQL reads back as the same tree: the value cannot close the literal
    again = d.parse_one(bound.sql(dialect="duckdb"))
    assert [lit.this for lit in again.find_all(exp.Literal) if lit.is_string] == [s]
    assert len(list(again.find_all(exp.Table))) == 1 and isinstance(again, exp.Select)


@pytest.mark.parametrize("evil", INJECTIONS)
def test_injection_attempts_are_values(evil):
    con = _db()
    before = _state(con)
    cur = con.execute("SELECT COUNT(*) FROM emp WHERE dept = ? WITH EPSILON 0.5", [evil])
    assert cur.privacy is not None and cur.privacy.epsilon == 0.5  # not the ε of the injection
    after = _state(con)
    assert after[2] == before[2]  # the table is intact
    assert after[0] == before[0] - Fraction(1, 2)
    assert after[1] == before[1] + 1
    # the plan is that of the literal typed with its quotes doubled
    typed = "SELECT COUNT(*) FROM emp WHERE dept = '" + evil.replace("'", "''") + "' WITH EPSILON 1"
    if "\x00" not in evil:
        tree = d.parse_one(number_qmarks("SELECT COUNT(*) FROM emp WHERE dept = ? WITH EPSILON 1"))
        assert explain(plan_query(bind(tree.this, [evil]), con._catalog)) == _plan_text(con, typed)


@pytest.mark.parametrize("params, message", [
    ([], "has 1 parameter placeholder, but 0 parameters were given"),
    (["a", "b"], "but 2 parameters were given"),
    ([["a"]], "is a list: a list is bound only as the list of x = ANY"),
    ([{"a": 1}], "type dict"),
    ([object()], "type object"),
    ([float("nan")], "only finite"),
    ([float("inf")], "only finite"),
    ([decimal.Decimal("NaN")], "only finite"),
    ([b"a"], "type bytes"),
    ({"d": "a"}, "pass a sequence"),
    ("a", "must be a sequence"),
    (42, "must be a sequence"),
])
def test_bad_parameters_are_refused_and_spend_nothing(params, message):
    con = _db()
    before = _state(con)
    with pytest.raises(provsql_dp.ProgrammingError, match=message):
        con.execute("SELECT COUNT(*) FROM emp WHERE dept = ? WITH EPSILON 0.5", params)
    assert _state(con) == before


@pytest.mark.parametrize("sql, params, message", [
    ("SELECT COUNT(*) FROM emp WHERE dept = $d WITH EPSILON 0.5", {}, "no value for parameter d"),
    ("SELECT COUNT(*) FROM emp WHERE dept = $d WITH EPSILON 0.5", {"d": "a", "e": 1},
     "e not used"),
    ("SELECT COUNT(*) FROM emp WHERE dept = $d AND salary < ? WITH EPSILON 0.5", ["a", 1],
     "cannot mix"),
    ("SELECT COUNT(*) FROM emp WHERE dept = $2 WITH EPSILON 0.5", ["a", "b"], "from \\$1 without gaps"),
    ("SELECT COUNT(*) FROM emp WHERE dept = ? WITH EPSILON 0.5", None, "no parameters were given"),
    ("SET PRIVACY BUDGET 100", [1], "take no parameters"),
    ("SELECT COUNT(*) FROM emp WHERE dept = ? WITH EPSILON ?", ["a", 1], "ε cannot be a parameter"),
])
def test_bad_named_parameters_are_refused_and_spend_nothing(sql, params, message):
    con = _db()
    before = _state(con)
    with pytest.raises(provsql_dp.ProgrammingError, match=message):
        con.execute(sql, params)
    assert _state(con) == before


def test_parameters_with_a_session_default_epsilon():
    con = _db()
    con.execute("SET PRIVACY EPSILON 0.25")
    cur = con.execute("SELECT COUNT(*) FROM emp WHERE dept = ?", ["b"])
    assert cur.privacy is not None and cur.privacy.epsilon == 0.25
    cur = con.execute("SELECT ? AS x", [3])  # not over protected data: DuckDB binds it
    assert cur.privacy is None and cur.fetchall() == [(3,)]


def test_a_question_mark_in_a_string_is_not_a_placeholder():
    con = _db()
    cur = con.execute("SELECT COUNT(*) FROM emp WHERE dept <> '?' AND dept = ? WITH EPSILON 0.5",
                      ["a"])
    assert cur.privacy is not None


def test_analyst_parameters(tmp_path):
    db = str(tmp_path / "p.duckdb")
    con = provsql_dp.connect(db)
    con.execute("CREATE TABLE emp(id INT PRIMARY KEY, dept VARCHAR)")
    con.execute("INSERT INTO emp SELECT range, 'a' FROM range(50)")
    con.execute("PROTECT TABLE emp; SET PRIVACY BUDGET 1 FOR USER 'ann'")
    con.commit()
    con.close()
    an = provsql_dp.connect(db, role="analyst", user="ann")
    cur = an.execute("SELECT COUNT(*) FROM emp WHERE dept = :d WITH EPSILON 0.5", {"d": "a"})
    assert cur.privacy.remaining == 0.5
    with pytest.raises(provsql_dp.PrivacyError, match="protected"):
        an.execute("SELECT * FROM emp WHERE dept = ?", ["a"])
    assert an.ledger.remaining() == Fraction(1, 2)


# ---------------------------------------------------------------------------------- executemany
def test_connection_executemany_dml():
    con = provsql_dp.connect()
    con.execute("CREATE TABLE t(a INT, b VARCHAR)")
    cur = con.executemany("INSERT INTO t VALUES (?, ?)", [(1, "x"), (2, "y'); DROP TABLE t; --")])
    assert cur.rowcount == 2
    assert con.execute("SELECT * FROM t ORDER BY a").fetchall() == [
        (1, "x"), (2, "y'); DROP TABLE t; --")]


def test_executemany_private_charges_per_statement_and_stops_at_the_first_refusal():
    con = _db(budget=1)
    with pytest.raises(provsql_dp.BudgetExceededError):
        con.executemany("SELECT COUNT(*) FROM emp WHERE dept = ? WITH EPSILON 0.4",
                        [["a"], ["b"], ["a"], ["b"]])
    entries = con._ledger.entries(con.user)
    assert len(entries) == 2  # the first two stand, charged; the third is refused, the fourth never runs
    assert con._ledger.remaining(con.user) == Fraction(1, 5)
    assert ["'a'" in e.statement for e in entries] == [True, False]


def test_executemany_private_on_a_cursor_keeps_the_last_privacy():
    con = _db()
    cur = con.cursor().executemany("SELECT COUNT(*) FROM emp WHERE dept = ? WITH EPSILON 0.5",
                                   [["a"], ["b"]])
    assert cur.privacy is not None and cur.privacy.remaining == 9.0
    assert len(cur.fetchall()) == 1
