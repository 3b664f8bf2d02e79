"""The plan-level proof of privacy/aggregates_l1.py: :func:`shape` combines a statement's
aggregates only when they read the same rows with the same GROUP BY, and the combined plan
carries each aggregate's weight and filter."""

from __future__ import annotations

import provsql_dp
from provsql_dp.privacy.aggregates_l1 import shape
from provsql_dp.sql import dialect as d
from provsql_dp.sql.plan import Aggregates, Filter, walk
from provsql_dp.sql.planner import plan_query


def _con():
    con = provsql_dp.connect()
    con.execute("CREATE TABLE p(id INT PRIMARY KEY, home INT); PROTECT TABLE p")
    con.execute("CREATE TABLE o(pid INT REFERENCES p(id), m VARCHAR, v DOUBLE, u BOOLEAN)")
    con.execute("PROTECT TABLE o BY (pid) REFERENCES p")
    con.execute("SET GROUP KEYS ON o (m) VALUES ('a', 'b')")
    return con


def _plan(con, sql):
    return plan_query(d.parse_one(sql), con.catalog)


def test_the_same_rows_combine_with_each_aggregates_weight_and_filter():
    con = _con()
    plan = _plan(con, "SELECT m, COUNT(*) FILTER (WHERE u), SUM(v), COUNT(v) FROM o GROUP BY m")
    j = shape(plan)
    assert j is not None and j.own is not None
    assert j.plan.group_by == plan.parts[0].group_by
    assert [w is None for w in j.weights] == [True, False, True]
    assert [w is None for w in j.wheres] == [False, True, False]  # COUNT(v): v IS NOT NULL
    assert not any(isinstance(n, Filter) for n in walk(j.plan.child))  # filters are columns now
    ids = set(j.plan.child.ids)
    assert all({c.name for c in w.find_all(type(w))} <= ids for w in j.wheres if w is not None)


def test_the_statements_where_stays_below_the_aggregates_own_filters():
    """Only the filters an aggregate has alone become its FILTER; the WHERE every aggregate
    reads stays in the combined rows (peeled, a WHERE over a join would become a cross join)."""
    con = _con()
    plan = _plan(con, "SELECT m, COUNT(*) FILTER (WHERE u), COUNT(*) FROM o JOIN p "
                      "ON o.pid = p.id WHERE v > 1 AND home = 2 GROUP BY m")
    j = shape(plan)
    assert j is not None and [w is None for w in j.wheres] == [False, True]
    assert j.plan.child.child is plan.parts[1].child.child  # the WHERE's rows, unchanged


def test_near_misses_are_not_combined():
    con = _con()
    a = _plan(con, "SELECT m, COUNT(*), SUM(v) FROM o GROUP BY m")
    c = _plan(con, "SELECT home, COUNT(*), SUM(v) FROM o JOIN p ON o.pid = p.id GROUP BY home")
    e = _plan(con, "SELECT m, COUNT(*), SUM(v) FROM o JOIN p ON o.pid = p.id GROUP BY m")
    assert shape(a) is not None and shape(c) is not None and shape(e) is not None
    # other rows, other keys: not provably one participant's vector
    assert shape(Aggregates((a.parts[0], e.parts[1]), a.columns)) is None
    assert shape(Aggregates((e.parts[0], c.parts[1]), a.columns)) is None
    assert shape(_plan(con, "SELECT m, AVG(v), COUNT(*) FROM o GROUP BY m")) is None
