"""The size model (``provsql_dp.sql.size_model``): its bounds are sound (DuckDB never produces a
longer value than the model says, checked on random strings), every allow-listed function has a
rule, growth beyond the caps is refused at plan time (the issue's nested ``replace``), an explicit
``left(…, n)`` makes it acceptable, and a statement's expressions share one per-row budget."""

from __future__ import annotations

import duckdb
import pytest
import sqlglot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from provsql_dp.errors import UnsupportedQueryError
from provsql_dp.sql.functions import ALLOWED_FUNCTIONS
from provsql_dp.sql.size_model import (
    MAX_CONSTANT_BYTES,
    MAX_GROWTH,
    MAX_ROW_GROWTH,
    RowBudget,
    check_size,
    output_size,
    row_cost,
)
from provsql_dp.sql.total import make_total

TYPES = {"s": "VARCHAR", "t": "VARCHAR", "i": "INTEGER", "h": "HUGEINT", "x": "DOUBLE",
         "d": "DATE", "ts": "TIMESTAMP", "b": "BOOLEAN", "dec": "DECIMAL(38,10)"}


def parse(sql: str):
    return sqlglot.parse_one(sql, read="duckdb")


#: one expression per allow-listed name (a new function needs a sample here, and a size rule)
SAMPLES = {
    "%": "i % 3", "*": "i * 2", "+": "i + 1", "-": "i - 1", "/": "x / 2", "//": "i // 2",
    "<": "i < 1", "<=": "i <= 1", "<>": "s <> t", "=": "s = t", ">": "x > 1", ">=": "x >= 1",
    "abs": "abs(i)", "acos": "acos(x)", "and": "b AND i > 0", "ascii": "ascii(s)",
    "asin": "asin(x)", "atan": "atan(x)", "atan2": "atan2(x, x)", "between": "i BETWEEN 1 AND 2",
    "case": "CASE WHEN b THEN s ELSE t END", "cast": "CAST(i AS VARCHAR)", "cbrt": "cbrt(x)",
    "ceil": "ceil(x)", "century": "century(d)", "coalesce": "coalesce(s, t, 'z')",
    "concat": "concat(s, i, t)", "concat_ws": "concat_ws('--', s, t, s)",
    "contains": "contains(s, 'a')", "cos": "cos(x)", "date_diff": "date_diff('day', d, d)",
    "date_part": "date_part('year', d)", "date_sub": "date_sub('day', d, d)",
    "date_trunc": "date_trunc('month', ts)", "day": "day(d)", "dayname": "dayname(d)",
    "dayofweek": "dayofweek(d)", "dayofyear": "dayofyear(d)", "decade": "decade(d)",
    "degrees": "degrees(x)", "ends_with": "ends_with(s, 'a')", "epoch": "epoch(ts)",
    "epoch_ms": "epoch_ms(ts)", "epoch_us": "epoch_us(ts)", "era": "era(d)",
    "escape": "s LIKE 'a!%' ESCAPE '!'", "exp": "exp(x)", "extract": "extract(year FROM d)",
    "floor": "floor(x)", "glob": "s GLOB 'a*'", "greatest": "greatest(s, t)", "hash": "hash(s)",
    "hour": "hour(ts)", "ilike": "s ILIKE 'a%'", "in": "s IN ('a', t)",
    "interval": "ts + INTERVAL 1 DAY", "is": "s IS NULL", "is distinct from": "s IS DISTINCT FROM t",
    "is not distinct from": "s IS NOT DISTINCT FROM t", "isfinite": "isfinite(x)",
    "isinf": "isinf(x)", "isnan": "isnan(x)", "isodow": "isodow(d)", "last_day": "last_day(d)",
    "least": "least(s, t)", "left": "left(s, 3)", "length": "length(s)", "like": "s LIKE '%a%'",
    "ln": "ln(x)", "log": "log(x)", "lower": "lower(s)", "ltrim": "ltrim(s)", "md5": "md5(s)",
    "millennium": "millennium(d)", "minute": "minute(ts)", "month": "month(d)",
    "monthname": "monthname(d)", "not": "NOT b", "nullif": "nullif(s, t)", "or": "b OR b",
    "pi": "pi()", "power": "pow(x, 2)", "prefix": "prefix(s, 'a')", "quarter": "quarter(d)",
    "radians": "radians(x)", "regexp_extract": "regexp_extract(s, 'a+')",
    "regexp_full_match": "regexp_full_match(s, 'a.*')", "regexp_matches": "regexp_matches(s, 'a')",
    "regexp_replace": "regexp_replace(s, 'a', 'bb', 'g')", "replace": "replace(s, 'a', 'bcd')",
    "reverse": "reverse(s)", "right": "right(s, 2)", "round": "round(x, 2)", "rtrim": "rtrim(s)",
    "second": "second(ts)", "sign": "sign(x)", "similar to": "s SIMILAR TO 'a.*'", "sin": "sin(x)",
    "split_part": "split_part(s, ',', 2)", "sqrt": "sqrt(x)", "starts_with": "starts_with(s, 'a')",
    "strftime": "strftime(ts, '%Y-%m-%d %A')", "strlen": "strlen(s)", "strpos": "strpos(s, 'a')",
    "strptime": "strptime(s, '%Y')", "substring": "substring(s, 2, 3)", "suffix": "suffix(s, 'a')",
    "tan": "tan(x)", "trim": "trim(s)", "trunc": "trunc(x)", "try_cast": "TRY_CAST(s AS INT)",
    "try_strptime": "try_strptime(s, '%Y')", "upper": "upper(s)", "week": "week(d)",
    "weekofyear": "weekofyear(d)", "year": "year(d)", "yearweek": "yearweek(d)", "||": "s || t",
}


def test_every_allow_listed_function_has_a_sample_and_a_size():
    assert set(SAMPLES) == set(ALLOWED_FUNCTIONS), set(ALLOWED_FUNCTIONS) ^ set(SAMPLES)
    for name, sql in SAMPLES.items():
        size = check_size(parse(sql), TYPES)
        assert size.within(MAX_ROW_GROWTH, 1 << 20), name


@pytest.mark.parametrize("sql, per_input, constant, ceiling", [
    ("s", 1, 0, None),
    ("'abc'", 0, 3, 3),
    ("s || t || 'xy'", 2, 2, None),
    ("upper(lower(s))", 2.25, 0, None),
    ("replace(s, 'a', 'bcd')", 3, 0, None),
    ("replace(s, 'ab', 'c')", 1, 0, None),
    ("replace(s, t, 'abcd')", 4, 0, None),  # from is at least one byte where it matches
    ("replace(s, '', 'abcd')", 1, 0, None),  # an empty from changes nothing
    ("regexp_replace(s, 'a*', 'xy', 'g')", 3, 2, None),
    ("regexp_replace(s, '(a)', '\\1\\1')", 3, 0, None),
    ("left(s || s, 10)", 2, 0, 40),
    ("substring(s, 1, 5)", 1, 0, 20),
    ("CAST(h AS VARCHAR)", 0, 96, 96),
    ("CASE WHEN b THEN s || s ELSE 'abcdef' END", 2, 6, None),
    ("concat_ws('--', s, t, s)", 3, 4, None),
])
def test_rules(sql, per_input, constant, ceiling):
    size = output_size(parse(sql), TYPES)
    assert float(size.per_input) == per_input and size.constant == constant and size.ceiling == ceiling


# ------------------------------------------------------------------ soundness, against DuckDB

STRING_EXPRESSIONS = (
    "s", "s || t", "upper(s)", "lower(s)", "upper(lower(s || t))", "reverse(s)", "trim(s)",
    "replace(s, 'a', 'bcd')", "replace(s, t, 'xyz')", "replace(s, 'é', 'ÉÉÉ')",
    "regexp_replace(s, 'a*', 'xy', 'g')", "regexp_replace(s, '(.)', '\\1\\1', 'g')",
    "regexp_replace(s, '', '\\0z', 'g')", "left(s, 3)", "right(s || t, 4)", "substring(s, 2, 2)",
    "split_part(s, 'a', 2)", "regexp_extract(s, 'a+')", "concat(s, i, x, d)",
    "concat_ws(s, t, t)", "CAST(x AS VARCHAR)", "CAST(d AS VARCHAR)", "CAST(h AS VARCHAR)",
    "md5(s)", "strftime(ts, '%c %A %B %Z')", "dayname(d)", "coalesce(s, CAST(i AS VARCHAR))",
    "CASE WHEN i > 0 THEN replace(s, 'a', 'aaaa') ELSE t END",
)


@pytest.fixture(scope="module")
def duck():
    return duckdb.connect()


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=(HealthCheck.too_slow,))
@given(s=st.text(alphabet=st.sampled_from("aAbé,ßɐ ẞ\u0130x"), max_size=40),
       t=st.text(alphabet=st.sampled_from("aé,"), min_size=1, max_size=6),
       expr=st.sampled_from(STRING_EXPRESSIONS))
def test_bounds_hold_in_duckdb(duck, s, t, expr):
    row = ("SELECT ? AS s, ? AS t, 2147483647 AS i, CAST('-170141183460469231731687303715884105727' "
           "AS HUGEINT) AS h, -1.2345678901234567e-300 AS x, DATE '-5877641-06-25' AS d, "
           "TIMESTAMP '2000-09-30 12:00:00' AS ts")
    (got,) = duck.execute(f"SELECT strlen({expr}) FROM ({row})", [s, t]).fetchone()
    longest = max(len(s.encode()), len(t.encode()))
    bound = output_size(parse(expr), TYPES).bound(longest)
    assert got is None or got <= bound, (expr, s, t, got, bound)


# ------------------------------------------------------------------ the caps

def nested_replace(levels: int, inner: str = "s") -> str:
    e = inner
    for _ in range(levels):
        e = f"replace({e}, 'x', 'xxxxxxxxxx')"
    return e


def test_the_issues_nested_replace_is_refused_before_it_runs():
    sql = f"length(CASE WHEN i = 1 THEN {nested_replace(7, 's || ' + repr('x' * 10))} ELSE '' END) > 0"
    with pytest.raises(UnsupportedQueryError, match="up to 100 bytes per byte it reads"):
        make_total(parse(sql), TYPES)


def test_one_level_within_the_cap_is_accepted():
    make_total(parse(f"length({nested_replace(1)}) > 0"), TYPES)


def test_left_caps_each_growing_step():
    capped = "replace(left(replace(left(s, 100), 'x', 'xxxxxxxxxx'), 1000), 'x', 'xxxxxxxxxx')"
    make_total(parse(f"length({capped}) > 0"), TYPES)
    # a cap after the growth is too late: the argument of left is computed in full first
    with pytest.raises(UnsupportedQueryError):
        make_total(parse(f"length(left({nested_replace(2)}, 10)) > 0"), TYPES)


def test_constant_growth_is_capped_too():
    big = nested_replace(5, repr("x" * 10))  # 10^6 bytes whatever the row
    with pytest.raises(UnsupportedQueryError, match=f"at most {MAX_CONSTANT_BYTES} are accepted"):
        check_size(parse(f"s || {big}"), TYPES)


def test_growth_cap_is_per_node_and_budget_per_statement():
    e = parse(" || ".join(["s"] * MAX_GROWTH))
    check_size(e, TYPES)  # 16 copies: at the cap
    with pytest.raises(UnsupportedQueryError, match="bytes per byte"):
        check_size(parse(" || ".join(["s"] * (MAX_GROWTH + 1))), TYPES)
    budget = RowBudget()
    for _ in range(MAX_ROW_GROWTH // int(row_cost(e, TYPES).per_input)):
        budget.add(row_cost(e, TYPES))
    with pytest.raises(UnsupportedQueryError, match="too much work per row"):
        for _ in range(4):
            budget.add(row_cost(e, TYPES))


def test_a_node_without_a_rule_is_refused():
    with pytest.raises(UnsupportedQueryError, match="has no size model"):
        check_size(parse("repeat(s, 3)"), TYPES)


def test_planner_shares_one_budget_per_statement():
    from provsql_dp.sql.catalog import Catalog
    from provsql_dp.sql.planner import plan_query

    con = duckdb.connect()
    con.execute("CREATE TABLE t(s VARCHAR, i INT)")
    wide = " || ".join(["s"] * 8)
    one = f"length({wide}) > 0"
    plan_query(parse(f"SELECT COUNT(*) FROM t WHERE {one}"), Catalog(con))
    many = " AND ".join([one] * 12)  # each ~25 bytes per byte: together beyond 256
    with pytest.raises(UnsupportedQueryError, match="too much work per row"):
        plan_query(parse(f"SELECT COUNT(*) FROM t WHERE {many}"), Catalog(con))


def test_growth_is_refused_before_duckdb_binds_it(monkeypatch):
    """DuckDB folds constants while binding: ten nested replaces of a literal would make it build
    10^11 bytes at plan time. The size check comes first, so the binder never sees them."""
    from provsql_dp.sql import total

    def binder_reached(*args, **kwargs):
        raise AssertionError("the expression reached DuckDB's binder before its size was checked")

    monkeypatch.setattr(total._BINDER, "types", binder_reached)
    monkeypatch.setattr(total._BINDER, "run", binder_reached)
    growing = nested_replace(10, repr("x" * 10))
    with pytest.raises(UnsupportedQueryError, match="bytes whatever it reads"):
        make_total(parse(f"length(CASE WHEN i = 1 THEN {growing} ELSE '' END) > 0"), TYPES)
