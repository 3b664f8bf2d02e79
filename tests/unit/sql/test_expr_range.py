"""The range :mod:`provsql_dp.sql.expr_range` proves contains every value DuckDB computes.

Random expressions over two bounded columns ``a`` ∈ [-5, 10], ``b`` ∈ [0.5, 3] (each clamped by
:func:`bounded_argument`, as the planner does), an unbounded column ``u``, a BOOLEAN ``f`` and a
string ``s``, evaluated in DuckDB over random rows (values inside and far outside the declared
bounds, NULLs, 0, NaN, ±∞): every non-NULL value that is not NaN lies in the proved range, and
a NaN only where the range says it may be (``Range.nan``). The draws include DuckDB 2.0's NaN
sources: ``0/0``, ``0·∞``, ``∞ − ∞``, ``sqrt``/``ln`` of a negative, NaN literals, and
``GREATEST(0, NaN)`` (NaN) against ``LEAST(NaN, 5)`` (5)."""

import math

import duckdb
import sqlglot
import pytest
from conftest import breadth
from hypothesis import example, strategies as st

from provsql_dp.sql.expr_range import bounded_argument, clamp_columns, expression_range

BOUNDS = {"a": (-5.0, 10.0), "b": (0.5, 3.0)}
TYPES = {"a": "DOUBLE", "b": "DOUBLE", "u": "DOUBLE", "f": "BOOLEAN", "s": "VARCHAR"}

LEAVES = ["a", "b", "u", "f", "NULL", "(s = 'x')", "(a > 2)", "TRUE", "0", "1", "-3", "2.5",
          "0.1", "-7.25", "100", "(u / u)", "(0.0 / 0.0)", "CAST('nan' AS DOUBLE)",
          "CAST('inf' AS DOUBLE)", "CAST('-inf' AS DOUBLE)", "1e308"]
UNARY = ["(- ({0}))", "IF(f, {0}, 3)", "ABS({0})", "CAST({0} AS INTEGER)", "FLOOR({0})",
         "(CASE WHEN f THEN {0} END)", "SQRT({0})", "LN({0})", "CAST({0} AS DOUBLE)",
         "GREATEST(0, {0})", "LEAST({0}, 5)"]
BINARY = ["({0} + {1})", "({0} - {1})", "({0} * {1})", "({0} / {1})", "LEAST({0}, {1})",
          "GREATEST({0}, {1})", "COALESCE({0}, {1})", "(CASE WHEN {0} > 1 THEN {1} ELSE 2 END)",
          "LEAST(GREATEST({0}, -1), {1})"]


@st.composite
def exprs(draw, depth=3):
    """A random expression text over the columns of ``r`` (at most ``depth`` levels deep)."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(LEAVES))
    if draw(st.booleans()):
        return draw(st.sampled_from(UNARY)).format(draw(exprs(depth - 1)))
    return draw(st.sampled_from(BINARY)).format(draw(exprs(depth - 1)), draw(exprs(depth - 1)))


_CON = duckdb.connect()
_CON.execute("CREATE TABLE r(a DOUBLE, b DOUBLE, u DOUBLE, f BOOLEAN, s VARCHAR)")
_CON.execute("""INSERT INTO r SELECT
    CASE WHEN i % 11 = 0 THEN NULL ELSE ((i * 7919) % 4001) / 100.0 - 20 END,
    CASE WHEN i % 13 = 0 THEN NULL ELSE ((i * 104729) % 1001) / 100.0 - 3 END,
    ((i * 31) % 2001) / 10.0 - 100,
    CASE WHEN i % 7 = 0 THEN NULL ELSE i % 2 = 0 END,
    CASE WHEN i % 3 = 0 THEN 'x' ELSE 'y' END
  FROM range(400) t(i)
  UNION ALL SELECT -5, 0.5, 0, true, 'x' UNION ALL SELECT 10, 3, 0, false, 'y'
  UNION ALL SELECT 'nan'::DOUBLE, 'inf'::DOUBLE, 1, true, 'x'
  UNION ALL SELECT '-inf'::DOUBLE, 'nan'::DOUBLE, 2, false, 'y'
  UNION ALL SELECT 1, 1, '-inf'::DOUBLE, true, 'x' UNION ALL SELECT 1, 1, 'inf'::DOUBLE, true, 'y'
  UNION ALL SELECT 1, 1, 'nan'::DOUBLE, false, 'x'""")


@breadth(60, 300, exprs())
@example("GREATEST(0, (u / u))")          # NaN where u = 0: [0, ∞) but may be NaN
@example("GREATEST(0, (a * CAST('inf' AS DOUBLE)))")   # 0·∞
@example("GREATEST(-1, (CAST('inf' AS DOUBLE) - CAST('inf' AS DOUBLE)))")
@example("GREATEST(0, SQRT((a - 20)))")   # sqrt of a negative
@example("LEAST(GREATEST((u / u), 0), 1)")  # LEAST drops the NaN: [0, 1], never NaN
@example("(LEAST(u, 5) + ABS(LEAST(u, 5)))")  # −∞ + ∞ at u = −∞
@example("(LEAST(u, 5) - LEAST(u, 5))")       # −∞ − (−∞)
@example("((a - 1) * LEAST(u, 5))")           # 0 inside one range, −∞ at the other's end
def test_proved_range_contains_every_value(text):
    tree = sqlglot.parse_one(text, read="duckdb")
    _, bounds = bounded_argument(tree, BOUNDS.get, TYPES.get)
    clamped = clamp_columns(tree, BOUNDS.get)
    r = expression_range(clamped, BOUNDS.get, TYPES.get)
    if r is None or r.lo > r.hi:
        return
    sql = clamped.sql(dialect="duckdb")
    try:
        rows = _CON.execute(f"SELECT TRY_CAST(({sql}) AS DOUBLE) FROM r").fetchall()
    except duckdb.Error:  # a failing row is NULL in the planner's total form; nothing to check
        return
    for (v,) in rows:
        if v is None:
            continue
        if isinstance(v, float) and math.isnan(v):  # a NaN only where the range says so
            assert r.nan and bounds is None, (text, sql, r, v)
            continue
        assert r.lo <= v <= r.hi, (text, sql, r, v)
        if bounds is not None:  # what the planner takes as the SUM's bounds
            assert bounds[0] <= v <= bounds[1], (text, sql, bounds, v)


def test_shapes_the_issue_names():
    def rng(text):
        return bounded_argument(sqlglot.parse_one(text, read="duckdb"), BOUNDS.get, TYPES.get)[1]
    assert rng("CASE WHEN s = 'male' THEN 1 ELSE 0 END") == (0.0, 1.0)
    assert rng("CAST(s = 'x' AS INTEGER)") == (0.0, 1.0)
    assert rng("LEAST(GREATEST(u, 0), 100)") == (0.0, 100.0)
    lo, hi = rng("a * b")
    assert lo <= -15 and hi >= 30 and hi < 30.001
    assert rng("u + 1") is None          # an unbounded column: nothing proved
    assert rng("a") is None              # a bare column keeps the planner's declared bounds
    assert rng("a / (b - 1)") is None    # a divisor that can be 0
    assert rng("CASE WHEN f THEN 2 END") == (1.5, 2.5)  # a constant: a unit-wide range


def test_a_range_that_starts_at_zero_stays_nonnegative():
    """TPC-H's revenue ``l_extendedprice * (1 - l_discount)``: an end at exactly 0 is not widened
    below it (rounding keeps the sign), so the SUM is released unsigned, not in two halves."""
    bounds = {"p": (0, 105000), "d": (0, 0.1)}
    r = expression_range(sqlglot.parse_one("p * (1 - d)", read="duckdb"), bounds.get)
    assert r.lo == 0.0 and 105000 <= r.hi < 105000.001
    r = expression_range(sqlglot.parse_one("-(p * (1 - d))", read="duckdb"), bounds.get)
    assert r.hi == 0.0
    r = expression_range(sqlglot.parse_one("p * (d - 0.05)", read="duckdb"), bounds.get)
    assert r.lo < 0 < r.hi  # a product that changes sign stays signed


@pytest.mark.parametrize("text, nan", [
    ("GREATEST(0, u / u)", True), ("GREATEST(0, u)", True), ("LEAST(u / u, 5)", False),
    ("LEAST(GREATEST(u / u, 0), 1)", False), ("a * b", False), ("a / (b - 1)", True),
    ("CAST(a / (b - 1) AS INTEGER)", False), ("ABS(a / (b - 1))", True),
])
def test_a_range_says_whether_it_may_be_nan(text, nan):
    """What DuckDB 2.0 does: ``0/0`` is NaN, ``GREATEST(0, NaN)`` NaN, ``LEAST(NaN, 5)`` 5, a
    cast of NaN to an integer fails (NULL in the planner's total form)."""
    con = duckdb.connect()
    assert con.execute("SELECT 0.0 / 0.0, GREATEST(0, 'nan'::DOUBLE), LEAST('nan'::DOUBLE, 5), "
                       "0 * 'inf'::DOUBLE, 'inf'::DOUBLE - 'inf'::DOUBLE, sqrt(-1.0)"
                       ).fetchall()[0][2] == 5.0
    tree = clamp_columns(sqlglot.parse_one(text, read="duckdb"), BOUNDS.get)
    r = expression_range(tree, BOUNDS.get, TYPES.get)
    assert r is not None and r.nan is nan, r
    if nan:  # never a SUM's bounds
        assert bounded_argument(sqlglot.parse_one(text, read="duckdb"), BOUNDS.get)[1] is None
