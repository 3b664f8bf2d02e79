"""Per-owner totals pushed below the join (``provenance/owner_totals.py``) equal the general form
(aggregate the whole join's output by owner) on random databases: same groups, same releases under
the same generator; and the pushdown is taken only for the shape it is proved for."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import breadth
from hypothesis import strategies as st

from provsql_dp.privacy import fast_path
from provsql_dp.provenance import owner_totals
from provsql_dp.provenance.owner_totals import owner_totals_sql

QUERIES = [
    "SELECT COUNT(*) FROM people p JOIN visits v ON p.id = v.pid",
    "SELECT COUNT(*) FROM visits v JOIN people p ON v.pid = p.id WHERE p.age > 30 AND v.day < 3",
    "SELECT SUM(v.amount) FROM people p JOIN visits v ON p.id = v.pid OPTIONS (lower = 0, upper = 40)",
    "SELECT SUM(v.amount) FROM people p JOIN visits v ON p.id = v.pid",
    "SELECT p.city, COUNT(*) FROM people p JOIN visits v ON p.id = v.pid GROUP BY p.city",
    ("SELECT v.day, SUM(v.amount) FROM people p JOIN visits v ON p.id = v.pid GROUP BY v.day "
     "OPTIONS (lower = 0, upper = 30)"),
]


def _db(build, people, visits):
    """The shared people ⋈ visits database (``people_visits`` in tests/conftest.py): people
    numbered from 0, cities and days declared as group keys."""
    return build([(i, a, c) for i, (a, c) in enumerate(people)], visits,
                 declarations=("SET GROUP KEYS ON people (city) VALUES ('a', 'b', 'c')",
                               "SET GROUP KEYS ON visits (day) VALUES (0, 1, 2, 3, 4)"))


def _release(con, sql, seed):
    con._rng = np.random.default_rng(seed)
    cur = con.execute(sql.replace(" OPTIONS", " WITH EPSILON 1 OPTIONS") if "OPTIONS" in sql
                      else sql + " WITH EPSILON 1")
    return cur.fetchall(), cur.privacy


@breadth(4, 20,
         st.lists(st.tuples(st.integers(18, 60), st.sampled_from(["a", "b", "c", "d", None])),
                  max_size=12),
         st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 14)), st.integers(0, 5),
                            st.floats(-50, 80, allow_nan=False).map(lambda x: round(x, 2))),
                  max_size=40),
         st.sampled_from(QUERIES), st.integers(0, 2**32 - 1))
def test_pushed_down_totals_equal_the_general_form(people_visits, people, visits, sql, seed):
    con = _db(people_visits, people, visits)
    calls = []
    real = owner_totals._pushed_down
    with pytest.MonkeyPatch.context() as m:  # the SQL pushdown (not the dense bincount)
        m.setattr(fast_path, "dense_owner_totals", lambda *a, **k: None)
        m.setattr(owner_totals, "_pushed_down", lambda *a: calls.append(real(*a)) or calls[-1])
        fast_rows, fast = _release(con, sql, seed)
    assert calls and all(c is not None for c in calls)  # the pushdown was taken
    with pytest.MonkeyPatch.context() as m:
        m.setattr(fast_path, "dense_owner_totals", lambda *a, **k: None)
        m.setattr(owner_totals, "_pushed_down", lambda *a, **k: None)
        slow_rows, slow = _release(con, sql, seed)
    assert [r[:-1] for r in fast_rows] == [r[:-1] for r in slow_rows]
    for a, b, ra, rb in zip(fast_rows, slow_rows, fast.releases, slow.releases):
        assert ra.delta_hat == pytest.approx(rb.delta_hat, rel=1e-9)
        assert a[-1] == pytest.approx(b[-1], rel=1e-9, abs=1e-6)


def _plan_child(con, sql):
    return con.plan(sql).child


def test_the_pushdown_applies_only_to_the_proved_shape(people_visits):
    con = _db(people_visits, [(20, "a")], [(0, 1, 2.0)])
    con.execute("CREATE TABLE days(id INT PRIMARY KEY, name VARCHAR)")
    con.execute("CREATE TABLE visits2(pid BIGINT, day INT)")
    con.execute("PROTECT TABLE visits2 BY (pid) AS people")

    def pushed(sql, weight_ids=frozenset(), keys=()):
        child = _plan_child(con, sql)
        ids = dict(zip(child.names, child.ids))
        return owner_totals._pushed_down(child, [ids[k] for k in keys], "count(*) AS c0",
                                         {ids[w] for w in weight_ids}) is not None

    assert pushed("SELECT COUNT(*) FROM people p JOIN visits v ON p.id = v.pid")
    assert pushed("SELECT COUNT(*) FROM people p JOIN visits v ON p.id = v.pid", keys=("city",))
    # the weight reads the owner side: not pushed
    assert not pushed("SELECT COUNT(*) FROM people p JOIN visits v ON p.id = v.pid",
                      weight_ids=("age",))
    # a second conjunct filters the join: not pushed
    assert not pushed("SELECT COUNT(*) FROM people p JOIN visits v ON p.id = v.pid AND v.day = p.age")
    # different key types (INTEGER = BIGINT): an implicit cast could merge owners: not pushed
    assert not pushed("SELECT COUNT(*) FROM people p JOIN visits2 v ON p.id = v.pid")
    # the join is not on the owner's key: not pushed
    assert not pushed("SELECT COUNT(*) FROM people p JOIN days d ON p.age = d.id")
    assert "GROUP BY" in owner_totals_sql(_plan_child(con, "SELECT COUNT(*) FROM people"), 0, [],
                                          ["count(*)"], set())
