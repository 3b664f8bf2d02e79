"""The per-owner totals added up by numpy.bincount (``privacy/dense_totals.py``) equal DuckDB's
GROUP BY (the SQL path of ``release_single_owner``) on random databases — dense and sparse keys,
NULL keys, visits of no one, filters on both sides, COUNT and (signed) SUM: same releases under
the same generator; and the dense path is taken exactly where it applies."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from provsql_dp.privacy import dense_totals, fast_path

@pytest.fixture(autouse=True)
def _owner_totals_path(monkeypatch):
    """An unbounded SUM on DuckDB now keeps its per-owner totals in the engine
    (:mod:`provsql_dp.privacy.engine_buckets`); the dense path tested here is the COUNT's, and the
    SUM's when the bucket parameters do not apply: taken for every query here."""
    monkeypatch.setattr(fast_path, "bucket_params", lambda *a, **k: None)


QUERIES = [
    ("SELECT COUNT(*) FROM people p JOIN visits v ON p.id = v.pid", True),
    ("SELECT COUNT(*) FROM visits v JOIN people p ON v.pid = p.id WHERE p.age > 30 AND v.day < 3",
     True),
    ("SELECT SUM(v.amount) FROM people p JOIN visits v ON p.id = v.pid OPTIONS (lower = 0, upper = 40)",
     True),
    ("SELECT SUM(v.amount) FROM people p JOIN visits v ON p.id = v.pid", True),  # signed
    ("SELECT p.city, COUNT(*) FROM people p JOIN visits v ON p.id = v.pid GROUP BY p.city", False),
    ("SELECT COUNT(*) FROM visits", False),  # no join: DuckDB's GROUP BY
]


def _db(build, ids, people, visits):
    """The shared people ⋈ visits database (``people_visits`` in tests/conftest.py) with BIGINT
    keys ``ids``."""
    return build([(i, a, c) for i, (a, c) in zip(ids, people)], visits,
                 people_columns="id BIGINT PRIMARY KEY, age INT, city VARCHAR",
                 visits_columns="pid BIGINT, day INT, amount DOUBLE",
                 declarations=("SET GROUP KEYS ON people (city) VALUES ('a', 'b', 'c')",))


def _release(con, sql, seed):
    con._rng = np.random.default_rng(seed)
    cur = con.execute(sql.replace(" OPTIONS", " WITH EPSILON 1 OPTIONS") if "OPTIONS" in sql
                      else sql + " WITH EPSILON 1")
    return cur.fetchall(), cur.privacy


@settings(max_examples=40, deadline=None)
@given(st.data(), st.sampled_from(QUERIES), st.integers(0, 2**32 - 1),
       st.sampled_from([0, -7, 2**40, -(2**62)]), st.sampled_from([1, 3, 10**9]))
@pytest.mark.slow  # 4-10 s (a rate or brute-force check): CI's second step
def test_dense_totals_equal_duckdb_group_by(people_visits, data, query, seed, offset, stride):
    """Keys ``offset + stride·k``: dense (stride 1, 3) or sparse (10^9: the SQL path)."""
    sql, applies = query
    n = data.draw(st.integers(0, 12))
    people = data.draw(st.lists(st.tuples(st.integers(18, 60),
                                          st.sampled_from(["a", "b", "c", "d", None])),
                                min_size=n, max_size=n))
    ids = [offset + stride * k for k in range(n)]
    pid = st.one_of(st.none(), st.integers(0, n + 3).map(lambda k: offset + stride * k))
    visits = data.draw(st.lists(st.tuples(pid, st.integers(0, 5),
                                          st.floats(-50, 80, allow_nan=False)), max_size=40))
    con = _db(people_visits, ids, people, visits)
    taken = []
    real = fast_path.dense_owner_totals
    with pytest.MonkeyPatch.context() as m:
        m.setattr(fast_path, "dense_owner_totals",
                  lambda *a, **k: taken.append(real(*a, **k)) or taken[-1])
        fast_rows, fast = _release(con, sql, seed)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(fast_path, "dense_owner_totals", lambda *a, **k: None)
        slow_rows, slow = _release(con, sql, seed)
    dense = bool(taken) and taken[-1] is not None
    if applies and stride < 10**9:
        assert dense  # dense keys: numpy adds up (keys 10^9 apart may go either way)
    if not applies:
        assert not dense
    assert [r[:-1] for r in fast_rows] == [r[:-1] for r in slow_rows]
    for a, b, ra, rb in zip(fast_rows, slow_rows, fast.releases, slow.releases):
        assert ra.delta_hat == pytest.approx(rb.delta_hat, rel=1e-12)
        assert a[-1] == pytest.approx(b[-1], rel=1e-9, abs=1e-6)


def test_sparse_keys_fall_back_and_the_span_bound_is_the_documented_one(people_visits):
    con = _db(people_visits, [0, 10**12], [(20, "a"), (30, "b")], [(0, 1, 1.0), (10**12, 1, 1.0)])
    calls = []
    real = fast_path.dense_owner_totals
    with pytest.MonkeyPatch.context() as m:
        m.setattr(fast_path, "dense_owner_totals", lambda *a, **k: calls.append(real(*a, **k)))
        _release(con, "SELECT COUNT(*) FROM people p JOIN visits v ON p.id = v.pid", 1)
    assert calls == [None]
    assert dense_totals.MAX_SPAN * 2 + (1 << 20) < 10**12


@pytest.mark.parametrize("kind, ids", [("TINYINT", [-100, -3, 0, 5, 120]),
                                       ("SMALLINT", [-30000, 0, 29999]),
                                       ("UBIGINT", [2**64 - 2**19, 2**64 - 9, 2**64 - 1])])
def test_small_and_unsigned_key_types_equal_duckdb(people_visits, kind, ids):
    visits = [[ids[k % len(ids)], float(k % 7)] for k in range(3 * len(ids) + 1)] + [[None, 1.0]]
    con = people_visits([(i, 30) for i in ids], visits,
                        people_columns=f"id {kind} PRIMARY KEY, age INT",
                        visits_columns=f"pid {kind}, amount DOUBLE")
    for sql in ("SELECT COUNT(*) FROM people p JOIN visits v ON p.id = v.pid",
                "SELECT SUM(v.amount) FROM people p JOIN visits v ON p.id = v.pid "
                "OPTIONS (lower = 0, upper = 5)"):
        taken = []
        real = fast_path.dense_owner_totals
        with pytest.MonkeyPatch.context() as m:
            m.setattr(fast_path, "dense_owner_totals",
                      lambda *a, **k: taken.append(real(*a, **k)) or taken[-1])
            fast_rows, fast = _release(con, sql, 5)
        with pytest.MonkeyPatch.context() as m:
            m.setattr(fast_path, "dense_owner_totals", lambda *a, **k: None)
            slow_rows, slow = _release(con, sql, 5)
        assert taken and taken[-1] is not None  # dense: span within 2^20
        assert fast.releases[0].delta_hat == slow.releases[0].delta_hat
        assert fast_rows[0][-1] == pytest.approx(slow_rows[0][-1], rel=1e-12, abs=1e-9)
