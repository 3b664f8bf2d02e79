"""``capture(..., columns=...)`` keeps only some output columns (a release keeps its GROUP BY keys,
none without GROUP BY) and gives the same K-relation otherwise: the same weights, annotations and
participants, and the same released values under one seed as the capture of every column."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import breadth
from hypothesis import Phase, settings, strategies as st
from test_engine_ids import QUERIES, _db

import provsql_dp
from provsql_dp.mechanisms.recursive import efficient as rm
from provsql_dp.provenance.capture import capture


def _content(kr):
    """The K-relation as a multiset of (weight, annotation): what every mechanism reads."""
    return sorted((float(w), sorted(map(sorted, kr.annotation(i))))
                  for i, w in enumerate(kr.weights))


_node = st.integers(-3, 6)
_name = st.sampled_from(["a", "b", "cc", "d'q"])


@breadth(3, 15, settings=dict(phases=[Phase.explicit, Phase.generate]),
         edges=st.lists(st.tuples(_node, _node, st.one_of(st.none(), st.integers(0, 5))),
                        max_size=8),
         items=st.lists(st.tuples(_name, _node), max_size=5),
         visits=st.lists(st.tuples(_node, _name), max_size=5), qi=st.integers(0, len(QUERIES) - 1),
         keep_first=st.booleans())
def test_fewer_columns_same_k_relation(edges, items, visits, qi, keep_first):
    con = _db(edges, items, visits)
    plan = con.plan(QUERIES[qi])
    full = capture(con._duck, plan)
    keep = full.columns[:1] if keep_first else ()
    lean = capture(con._duck, plan, columns=keep)
    assert lean.columns == tuple(keep)
    assert _content(lean) == _content(full)
    assert lean.participant_list == full.participant_list
    if keep:  # the kept column beside each tuple's annotation, as in the full capture
        pairs = lambda kr: sorted((repr(r[0]), float(w), sorted(map(sorted, kr.annotation(i))))  # noqa: E731
                                  for i, (r, w) in enumerate(zip(kr.rows, kr.weights)))
        assert pairs(lean) == pairs(full)


def test_an_unknown_column_is_named():
    con = _db([(1, 2, 3)], [], [])
    with pytest.raises(ValueError, match="no output column 'nope'"):
        capture(con._duck, con.plan(QUERIES[0]), columns=("nope",))


def test_same_release_under_one_seed_as_the_capture_of_every_column():
    """Two-owner joins (TPC-H Q7's shape: a SUM over rows owned by a supplier and a customer) with
    text columns the release never reads: the values released with the same seed are equal."""
    con = provsql_dp.connect(":memory:")
    rng = np.random.default_rng(7)
    con.execute("CREATE TABLE supplier(s_key INT PRIMARY KEY, s_name VARCHAR)")
    con.execute("CREATE TABLE customer(c_key INT PRIMARY KEY, c_name VARCHAR)")
    con.execute("CREATE TABLE line(s_key INT, c_key INT, price DOUBLE, note VARCHAR)")
    con.executemany("INSERT INTO supplier VALUES (?, ?)", [(i, f"s{i}") for i in range(12)])
    con.executemany("INSERT INTO customer VALUES (?, ?)", [(i, f"c{i}") for i in range(30)])
    rows = [(int(rng.integers(12)), int(rng.integers(30)), float(rng.integers(1, 50)), "x" * 20)
            for _ in range(300)]
    con.executemany("INSERT INTO line VALUES (?, ?, ?, ?)", rows)
    con.execute("PROTECT TABLE supplier BY (s_key) AS supplier")
    con.execute("PROTECT TABLE customer BY (c_key) AS customer")
    con.execute("SET BOUNDS ON line (price) BETWEEN 0 AND 50")
    for sql in ("SELECT SUM(price) FROM supplier s, line l, customer c "
                "WHERE s.s_key = l.s_key AND c.c_key = l.c_key",
                "SELECT COUNT(*) FROM supplier s, line l, customer c "
                "WHERE s.s_key = l.s_key AND c.c_key = l.c_key AND l.price > 10"):
        full, lean = con.provenance(sql), con.provenance(sql, columns=())
        assert len(full.columns) > 0 and lean.columns == ()
        assert _content(lean) == _content(full)
        for seed in range(3):
            a = rm.release(full, 0.8, "node", np.random.default_rng(seed))
            b = rm.release(lean, 0.8, "node", np.random.default_rng(seed))
            assert (a.value, a.delta_hat) == (b.value, b.delta_hat)
