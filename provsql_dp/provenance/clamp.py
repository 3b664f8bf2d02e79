"""The values of a SUM clamped to bounds inside DuckDB, by a rule fixed in advance: every value
that feeds a release is finite and bounded before it leaves the engine (the side-channel rule).
"""

from __future__ import annotations

__all__ = ["clamp_sql", "clamped_sum_sql", "clamped_sum_query", "finite_sql", "sum_clamp",
           "DEFAULT_BOUNDS"]

#: the clamp of a SUM's values when no bounds are declared: every value that feeds a release is
#: finite and bounded before it leaves DuckDB, by a rule fixed in advance (the side-channel rule)
DEFAULT_BOUNDS = (-1e12, 1e12)


def sum_clamp(bounds, signed: bool) -> tuple[float, float]:
    """The interval a SUM's weight is clamped to: its ``bounds``, else :data:`DEFAULT_BOUNDS`
    — with the lower end raised to 0 when the SUM is released unsigned (one nonnegative part).
    An unsigned SUM without bounds is one whose terms the schema or the statement proves ≥ 0
    (:mod:`provsql_dp.sql._nonnegative`); the clamp enforces the proof, so that a case the
    proof missed changes the answer (its negative terms add 0) and never makes the release
    fail on a negative total after its charge, a failure that would tell a negative value is
    there (red team h63attack).

    >>> sum_clamp(None, True), sum_clamp(None, False)
    ((-1000000000000.0, 1000000000000.0), (0.0, 1000000000000.0))
    >>> sum_clamp((2, 9), False), sum_clamp((-1, 9), True)
    ((2, 9), (-1, 9))
    """
    lo, hi = bounds if bounds is not None else DEFAULT_BOUNDS
    return (lo, hi) if signed or lo >= 0 else (0.0, hi)


def clamp_sql(expr_sql: str, lower: float, upper: float) -> str:
    """A weight clamped to ``[lower, upper]`` as DuckDB SQL, by a rule fixed in advance: a finite
    value is clamped to the bounds; NaN, ±∞ and NULL become NULL (they add nothing). The
    finiteness test rides on the clamp's own comparisons (DuckDB orders NaN above every number),
    so a weight that may be non-finite (:func:`provsql_dp.sql.total.total_weight`) needs no
    second CASE around it: measured 20 % faster on a 10^7-row SUM. A CASE, not least/greatest:
    2.3× faster in DuckDB; the bounds are DOUBLE literals (a decimal literal makes DuckDB compare
    an INTEGER column as DECIMAL: 2× slower), and the value compared is the value returned (``x``
    cast to DOUBLE the same way on both sides), so the result lies in ``[lower, upper]`` exactly.

    >>> import duckdb
    >>> sql = clamp_sql("x", 0, 10)
    >>> duckdb.sql(f"SELECT {sql} FROM (VALUES (-5.0), (3.5), (1e300), ('nan'::DOUBLE), "
    ...            "('-inf'::DOUBLE), ('inf'::DOUBLE), (NULL)) t(x)").fetchall()
    [(0.0,), (3.5,), (10.0,), (None,), (None,), (None,), (None,)]
    """
    x = f"({expr_sql})"
    lo, hi = f"{float(lower)!r}::DOUBLE", f"{float(upper)!r}::DOUBLE"
    v = f"{x}::DOUBLE"
    return (f"CASE WHEN {v} > {hi} THEN (CASE WHEN {v} < 'inf'::DOUBLE THEN {hi} END) "
            f"WHEN {v} < {lo} THEN (CASE WHEN {v} > '-inf'::DOUBLE THEN {lo} END) ELSE {v} END")


def finite_sql(expr_sql: str) -> str:
    """DuckDB SQL true exactly when ``expr_sql`` is a finite number (false for NULL, NaN, ±∞:
    DuckDB orders NaN above every number, so ``NaN < inf`` is false).

    >>> import duckdb
    >>> duckdb.sql(f"SELECT {finite_sql('x')} FROM (VALUES (1.5), ('nan'::DOUBLE), "
    ...            "('inf'::DOUBLE), ('-inf'::DOUBLE), (NULL)) t(x)").fetchall()
    [(True,), (False,), (False,), (False,), (None,)]
    """
    v = f"({expr_sql})::DOUBLE"
    return f"({v} > '-inf'::DOUBLE AND {v} < 'inf'::DOUBLE)"


def clamped_sum_sql(expr_sql: str, lower: float, upper: float) -> tuple[str, str]:
    """``(aggregate, row filter)``: the SUM of ``expr_sql`` clamped to ``[lower, upper]`` as one
    DuckDB aggregate expression, over the rows the filter keeps — the same total as
    ``sum(clamp_sql(expr_sql, lower, upper))`` (non-finite values and NULL add nothing), in about
    half the time of its CASE on 10^7 rows.

    The filter keeps the rows whose value is finite (:func:`finite_sql`); over them the total is
    ``Σ_{lower ≤ x ≤ upper} x + upper·#{x > upper} + lower·#{x < lower}``: each row adds its own
    value when it lies within the bounds, else the bound it crosses — the clamp, term by term. The
    in-bounds part is ``sum(x * (lower <= x AND x <= upper)::DOUBLE)``: ``x·1 = x`` and
    ``x·0 = ±0`` exactly for a finite ``x`` (hence the filter: ``∞·0`` is NaN), so every term
    that reaches a sum lies within the bounds and one row moves the total by at most
    ``max(|lower|, |upper|)``, the sensitivity. Only the order in which the (bounded) terms are
    added differs from the CASE. A term whose bound is 0 is left out (it adds 0). The bounds are
    DOUBLE literals (see :func:`clamp_sql`). The filter belongs to the whole query: use it only
    where every other aggregate of that query counts the same finite-valued rows (an AVG's SUM
    and COUNT, :func:`provsql_dp.sql.planner`).

    >>> import duckdb
    >>> agg, keep = clamped_sum_sql("x", 0, 10)
    >>> duckdb.sql(f"SELECT {agg} FROM (VALUES (-5.0), (3.5), (1e300), ('nan'::DOUBLE), "
    ...            f"('-inf'::DOUBLE), ('inf'::DOUBLE), (NULL)) t(x) WHERE {keep}").fetchall()
    [(13.5,)]
    >>> duckdb.sql(f"SELECT {agg} FROM (VALUES (1.0)) t(x) WHERE false").fetchall()
    [(0.0,)]
    """
    v = f"({expr_sql})::DOUBLE"
    lo, hi = f"{float(lower)!r}::DOUBLE", f"{float(upper)!r}::DOUBLE"
    terms = [f"coalesce(sum({v} * ({v} >= {lo} AND {v} <= {hi})::DOUBLE), 0.0)"]
    if float(upper) != 0.0:
        terms.append(f"{hi} * coalesce(count_if({v} > {hi}), 0)::DOUBLE")
    if float(lower) != 0.0:
        terms.append(f"{lo} * coalesce(count_if({v} < {lo}), 0)::DOUBLE")
    return "(" + " + ".join(terms) + ")", finite_sql(expr_sql)


def clamped_sum_query(child_sql: str, expr_sql: str, lower: float, upper: float,
                      keys: list[str], with_count: bool) -> str:
    """``SELECT keys…, total[, count] FROM (child_sql) … GROUP BY keys…``: per group, the SUM of
    ``expr_sql`` clamped to ``[lower, upper]`` over the rows whose value is finite (the total of
    :func:`clamped_sum_sql`) and, with ``with_count``, the number of those rows (a group
    without them is absent; so is, without a count and with ``lower = 0``, a group whose finite
    values all lie below 0: its total is 0) — in fewer operations per row than :func:`clamped_sum_sql`'s aggregate.

    The finite rows are split by a row filter on the value itself, which DuckDB pushes into the
    scan (and drops for the row groups whose statistics decide it): the rows ``x ≥ lower`` add
    ``x·[x ≤ upper] + upper·#{x > upper}``, the rows ``x < lower`` add ``lower`` each — every
    term a value of the clamp, as in :func:`clamped_sum_sql` (``x·1 = x``, ``x·0 = ±0`` for a
    finite ``x``), so one row moves a total by at most ``max(|lower|, |upper|)``; only the order
    of the additions differs. The two parts are added per group. The part below ``lower`` is
    left out when it adds nothing: ``lower = 0`` and no count. Measured on 10^7 rows (values
    within ``[lower, upper]`` or above, 2 cores): 2.0× a plain ``AVG`` against 2.3× for the one
    aggregate; a column whose values fall below ``lower`` throughout costs a second scan. The
    bounds are DOUBLE literals (see :func:`clamp_sql`); ``keys`` are SQL expressions over the
    child's columns (already quoted).

    >>> import duckdb
    >>> t = ("SELECT * FROM (VALUES (-5.0, 'a'), (3.5, 'a'), (1e300, 'b'), ('nan'::DOUBLE, 'b'), "
    ...      "('-inf'::DOUBLE, 'a'), ('inf'::DOUBLE, 'a'), (NULL, 'b')) v(x, g)")
    >>> duckdb.sql(clamped_sum_query(t, "x", 0, 10, [], True)).fetchall()
    [(13.5, 3)]
    >>> duckdb.sql(clamped_sum_query(t, "x", -1, 10, ["g"], True) + " ORDER BY 1").fetchall()
    [('a', 2.5, 2), ('b', 10.0, 1)]
    >>> duckdb.sql(clamped_sum_query(t + " WHERE false", "x", 0, 10, [], False)).fetchall()
    [(0.0,)]
    """
    v = f"({expr_sql})::DOUBLE"
    lo, hi = f"{float(lower)!r}::DOUBLE", f"{float(upper)!r}::DOUBLE"
    above = [f"coalesce(sum({v} * ({v} <= {hi})::DOUBLE), 0.0)"]
    if float(upper) != 0.0:
        above.append(f"{hi} * coalesce(count_if({v} > {hi}), 0)::DOUBLE")
    parts = [(" + ".join(above), f"{v} >= {lo} AND {v} < 'inf'::DOUBLE")]
    if float(lower) != 0.0 or with_count:
        parts.append((f"{lo} * count(*)::DOUBLE", f"{v} < {lo} AND {v} > '-inf'::DOUBLE"))
    by = f" GROUP BY {', '.join(keys)}" if keys else ""
    names = [f"k{j}" for j in range(len(keys))]
    sel = [f"{k} AS {n}" for k, n in zip(keys, names)]
    branches = " UNION ALL ".join(
        f"SELECT {', '.join(sel + [f'{total} AS s', 'count(*) AS c'])} FROM ({child_sql}) AS t "
        f"WHERE {keep}{by}" for total, keep in parts)
    out = names + ["sum(s)"] + (["sum(c)"] if with_count else [])
    outer_by = f" GROUP BY {', '.join(names)}" if names else ""
    return f"SELECT {', '.join(out)} FROM ({branches}) AS u{outer_by}"
