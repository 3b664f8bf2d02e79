"""The clamped SUM as one aggregate (:func:`clamped_sum_sql`) and as a query split at the lower
bound (:func:`clamped_sum_query`) against the obviously-correct CASE per row (:func:`clamp_sql`)
and against Python, on random values with NaN, ±∞, NULL and huge magnitudes: same total, same
count of finite values, every term within the bounds."""

from __future__ import annotations

import math

import duckdb
import pytest
from conftest import breadth
from hypothesis import given, settings
from hypothesis import strategies as st

from provsql_dp.provenance.clamp import (
    clamp_sql,
    clamped_sum_query,
    clamped_sum_sql,
    finite_sql,
)

VALUES = st.one_of(
    st.none(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-1e6, max_value=1e6),
    st.sampled_from([0.0, -0.0, 1e300, -1e300, 5e-324]),
)
BOUNDS = st.tuples(st.floats(-1e6, 1e6), st.floats(-1e6, 1e6)).filter(lambda b: b[0] < b[1]) | \
    st.sampled_from([(0.0, 100000.0), (-1.0, 0.0), (0.0, 1.0)])


def _table(values):
    con = duckdb.connect()
    con.execute("CREATE TABLE t(i INTEGER, x DOUBLE)")
    if values:
        con.executemany("INSERT INTO t VALUES (?, ?)", list(enumerate(values)))
    return con


def _clamp(v, lo, hi):
    if v is None or not math.isfinite(v):
        return 0.0
    return min(max(v, lo), hi)


@settings(max_examples=150, deadline=None)
@given(st.lists(VALUES, max_size=40), BOUNDS)
@pytest.mark.slow  # 3-10 s (random or brute-force cases): CI's second step
def test_one_aggregate_equals_the_case_per_row(values, bounds):
    lo, hi = bounds
    con = _table(values)
    agg, keep = clamped_sum_sql("x", lo, hi)
    fast = con.execute(f"SELECT {agg} FROM t WHERE {keep}").fetchone()[0]
    slow = con.execute(f"SELECT coalesce(sum({clamp_sql('x', lo, hi)}), 0.0) FROM t").fetchone()[0]
    exact = math.fsum(_clamp(v, lo, hi) for v in values)
    assert math.isfinite(fast)
    scale = max(abs(lo), abs(hi)) * max(len(values), 1)
    assert fast == pytest.approx(slow, rel=1e-12, abs=1e-12 * scale)
    assert fast == pytest.approx(exact, rel=1e-12, abs=1e-12 * scale)


@breadth(12, 60, st.lists(VALUES, max_size=30), BOUNDS, st.integers(0, 29))
def test_one_row_moves_the_total_by_at_most_the_sensitivity(values, bounds, drop):
    """Removing any one row changes the released total by at most max(|lo|, |hi|) (up to the
    rounding of a sum of bounded terms)."""
    lo, hi = bounds
    if not values:
        return
    drop %= len(values)
    agg, keep = clamped_sum_sql("x", lo, hi)
    full = _table(values).execute(f"SELECT {agg} FROM t WHERE {keep}").fetchone()[0]
    rest = _table(values[:drop] + values[drop + 1:]).execute(
        f"SELECT {agg} FROM t WHERE {keep}").fetchone()[0]
    sens = max(abs(lo), abs(hi))
    assert abs(full - rest) <= sens * (1 + 1e-9) + 1e-9 * sens * len(values)


def test_grouped_total_and_finite_filter():
    con = _table([1.0, 2e5, float("nan"), None, float("-inf"), -3.0, 7.0])
    con.execute("ALTER TABLE t ADD COLUMN g INTEGER")
    con.execute("UPDATE t SET g = i % 2")
    agg, keep = clamped_sum_sql("x", -1.0, 10.0)
    rows = con.execute(f"SELECT g, {agg}, count(*) FROM t WHERE {keep} GROUP BY g ORDER BY g")
    # g=0: 1.0, NaN(dropped), -inf(dropped), 7.0 -> 8.0 over 2 finite rows; g=1: 2e5 -> 10, -3 -> -1
    assert rows.fetchall() == [(0, 8.0, 2), (1, 9.0, 2)]
    assert con.execute(f"SELECT count(*) FROM t WHERE {finite_sql('x')}").fetchone()[0] == 4


def test_bound_terms_that_are_zero_are_left_out():
    agg, _ = clamped_sum_sql("x", 0, 5)
    assert agg.count("count_if") == 1
    agg, _ = clamped_sum_sql("x", -2, 5)
    assert agg.count("count_if") == 2


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(VALUES, st.sampled_from(["a", "b", None])), max_size=40), BOUNDS,
       st.booleans(), st.booleans())
@pytest.mark.slow  # 3-10 s (random or brute-force cases): CI's second step
def test_split_query_equals_the_case_per_row(rows, bounds, grouped, with_count):
    """Per group: the total of the CASE per row and Python's, and the number of finite values."""
    lo, hi = bounds
    con = duckdb.connect()
    con.execute("CREATE TABLE t(x DOUBLE, g VARCHAR)")
    if rows:
        con.executemany("INSERT INTO t VALUES (?, ?)", rows)
    keys = ['"g"'] if grouped else []
    got = con.execute(clamped_sum_query("SELECT * FROM t", "x", lo, hi, keys, with_count)).fetchall()
    by = " GROUP BY g" if grouped else ""
    slow = con.execute(f"SELECT {'g, ' if grouped else ''}coalesce(sum({clamp_sql('x', lo, hi)}), "
                       f"0.0), count({clamp_sql('x', lo, hi)}) FROM t{by}").fetchall()
    want = {r[:-2]: r[-2:] for r in slow if not grouped or r[-1] > 0}
    got = {r[:len(keys)]: r[len(keys):] for r in got}
    assert set(got) <= set(want)
    scale = max(abs(lo), abs(hi)) * max(len(rows), 1)
    for key, (total, count) in want.items():
        if key not in got:  # only the part below a lower bound of 0 (total 0) was left out
            assert grouped and not with_count and lo == 0 and total == 0
            continue
        assert len(got[key]) == 1 + with_count
        assert math.isfinite(got[key][0])
        assert got[key][0] == pytest.approx(total, rel=1e-12, abs=1e-12 * scale)
        exact = math.fsum(_clamp(v, lo, hi) for v, g in rows if not grouped or (g,) == key)
        assert got[key][0] == pytest.approx(exact, rel=1e-12, abs=1e-12 * scale)
        if with_count:
            assert got[key][1] == count


@breadth(12, 60, st.lists(VALUES, max_size=30), BOUNDS, st.integers(0, 29))
def test_split_query_one_row_moves_the_total_by_at_most_the_sensitivity(values, bounds, drop):
    lo, hi = bounds
    if not values:
        return
    drop %= len(values)
    sql = clamped_sum_query("SELECT * FROM t", "x", lo, hi, [], True)
    full = _table(values).execute(sql).fetchone()
    rest = _table(values[:drop] + values[drop + 1:]).execute(sql).fetchone()
    sens = max(abs(lo), abs(hi))
    assert abs(full[0] - rest[0]) <= sens * (1 + 1e-9) + 1e-9 * sens * len(values)
    assert full[1] - rest[1] in (0, 1)


def test_split_query_leaves_out_the_part_below_a_zero_lower_bound_without_a_count():
    assert clamped_sum_query("SELECT 1 AS x", "x", 0, 5, [], False).count("UNION ALL") == 0
    assert clamped_sum_query("SELECT 1 AS x", "x", 0, 5, [], True).count("UNION ALL") == 1
    assert clamped_sum_query("SELECT 1 AS x", "x", -1, 5, [], False).count("UNION ALL") == 1
