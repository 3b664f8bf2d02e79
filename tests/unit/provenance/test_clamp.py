"""The clamped SUM as one aggregate (:func:`clamped_sum_sql`) against the obviously-correct CASE
per row (:func:`clamp_sql`) and against Python, on random values with NaN, ±∞, NULL and huge
magnitudes: same total, every term within the bounds."""

from __future__ import annotations

import math

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from provsql_dp.provenance.clamp import clamp_sql, clamped_sum_sql, finite_sql

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


@settings(max_examples=60, deadline=None)
@given(st.lists(VALUES, max_size=30), BOUNDS, st.integers(0, 29))
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
