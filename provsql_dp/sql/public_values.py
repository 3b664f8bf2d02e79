"""Public values in a private statement, as SmartNoise / Tumult / psql users write them, made
what the private compiler already answers — before the statement is split or planned.

* **A scalar subquery of constants** — ``(SELECT 4000)``, ``(SELECT 2 * 3)``: one row of one
  column that reads no table, no column and no subquery. It is its expression, a public
  constant; it is replaced by it (in parentheses), and the expression is then judged as any
  other (the allow-list of :mod:`.total`). A subquery that reads a table keeps its refusal.
* **The statement's clock** — ``CURRENT_DATE``, ``TODAY()``, ``CURRENT_TIMESTAMP``, ``NOW()``,
  ``GET_CURRENT_TIMESTAMP()``: public values that depend on no row. They are read **once**, on
  the statement's DuckDB connection (its time zone), before anything is planned or charged, and
  written into the statement as literals, so that every read of the release (a route may read
  several times) compares with the same instant, and no row can change what is read. A
  statement with the clock is never planned from the cache of its text (the literal changes).
* **``MIN(c)`` / ``MAX(c)``** of a column, items of the statement's select list: the exact
  extreme of a column is one participant's value (no noise hides it, and the 0th/100th quantile
  of a rank-selection lands on the bound whatever the data), so they are released as a DP
  estimate of a *low / high quantile* instead — ``QUANTILE_CONT(c, 0.01)`` /
  ``QUANTILE_CONT(c, 0.99)`` (:data:`MIN_RANK`, :data:`MAX_RANK`), by the quantile route (its
  declared range, its interval the bounds, its strategy text naming the rank), under the
  name the analyst wrote. Not the exact minimum or maximum.
* **``APPROX_COUNT_DISTINCT(c)``** is ``COUNT(DISTINCT c)`` (its route, its accuracy: an exact
  count of distinct values, then noise — never DuckDB's HyperLogLog sketch, whose error would
  depend on the rows), under its own name.

>>> import duckdb
>>> from provsql_dp.sql.dialect import parse_one
>>> tree = parse_one("SELECT COUNT(*) FROM t WHERE x > (SELECT 2 * 3) AND y < (SELECT MAX(z) FROM u)")
>>> public_values(tree, duckdb.connect()).sql(dialect="duckdb")
'SELECT COUNT(*) FROM t WHERE x > (2 * 3) AND y < (SELECT MAX(z) FROM u)'
>>> public_values(parse_one("SELECT APPROX_COUNT_DISTINCT(c) FROM t"), None).sql()
'SELECT COUNT(DISTINCT c) AS "approx_count_distinct(c)" FROM t'
>>> public_values(parse_one("SELECT MIN(x), MAX(x) AS hi FROM t"), None).sql()
'SELECT PERCENTILE_CONT(x, 0.01) AS "min(x)", PERCENTILE_CONT(x, 0.99) AS hi FROM t'
>>> reads_clock(parse_one("SELECT COUNT(*) FROM t WHERE d < NOW()"))
True
"""

from __future__ import annotations

from sqlglot import exp

__all__ = ["public_values", "reads_clock", "MIN_RANK", "MAX_RANK", "WRITTEN", "written_as"]

_CLOCK_NAMES = {"NOW", "GET_CURRENT_TIMESTAMP", "TODAY"}


def _clock_kind(node: exp.Expression) -> str | None:
    """``'date'`` / ``'timestamp'`` for a read of the statement's clock, else None."""
    if isinstance(node, exp.CurrentDate):
        return "date"
    if isinstance(node, exp.CurrentTimestamp):
        return "timestamp"
    if isinstance(node, exp.Anonymous) and str(node.this).upper() in _CLOCK_NAMES \
            and not node.expressions:
        return "date" if str(node.this).upper() == "TODAY" else "timestamp"
    return None


def reads_clock(tree: exp.Expression) -> bool:
    """Whether ``tree`` reads the statement's clock (then its plan is not kept by its text)."""
    return any(_clock_kind(n) is not None for n in tree.walk())


def _constant(sel: exp.Expression) -> exp.Expression | None:
    """The one expression of a ``SELECT expr`` (or of a parenthesis, a subquery folded) that
    reads nothing, or None."""
    if isinstance(sel, exp.Paren):
        expr = sel
    elif not isinstance(sel, exp.Select) or len(sel.expressions) != 1 or any(
            sel.args.get(k) for k in sel.args if k != "expressions"):
        return None  # FROM, WHERE, GROUP BY, LIMIT, DISTINCT, WITH, …: not a bare constant
    else:
        expr = sel.expressions[0].unalias()
    if any(isinstance(n, (exp.Column, exp.Star, exp.Query, exp.Subquery, exp.AggFunc,
                          exp.Window, exp.Placeholder, exp.Parameter)) for n in expr.walk()):
        return None
    return expr


def _depth(node: exp.Expression) -> int:
    n = 0
    while node.parent is not None:
        node, n = node.parent, n + 1
    return n


def _clock_values(duck) -> dict[str, exp.Expression]:
    """The statement's date and instant, read once on its connection, as literals."""
    day, instant = duck.execute(
        "SELECT strftime(current_date, '%Y-%m-%d'), CAST(current_timestamp AS VARCHAR)").fetchone()
    return {"date": exp.cast(exp.Literal.string(day), exp.DataType.build("DATE")),
            "timestamp": exp.cast(exp.Literal.string(instant),
                                  exp.DataType.build("TIMESTAMPTZ"))}


#: the nodes :func:`public_values` may rewrite (a statement without any is left as it is)
_REWRITTEN = (exp.Subquery, exp.CurrentDate, exp.CurrentTimestamp, exp.Anonymous, exp.Min,
              exp.Max, exp.ApproxDistinct)


def public_values(tree: exp.Expression, duck) -> exp.Expression:
    """``tree`` with its constant scalar subqueries, clock reads and ``APPROX_COUNT_DISTINCT``
    rewritten (module docstring); ``duck`` is the DuckDB connection whose clock the statement
    reads (only read when it does). ``tree`` itself is left as it was (returned as it is when
    it holds nothing to rewrite)."""
    if not any(isinstance(n, _REWRITTEN) for n in tree.walk()):
        return tree  # the common statement: nothing to rewrite, no copy (~0.2 ms)
    clock: dict = {}

    def rewrite(node: exp.Expression) -> exp.Expression:
        kind = _clock_kind(node)
        if kind is not None:
            if not clock:
                clock.update(_clock_values(duck))
            return clock[kind].copy()
        extreme = _extreme(node, root)
        if extreme is not None:
            return extreme
        if isinstance(node, exp.ApproxDistinct) and node.args.get("accuracy") is None:
            if isinstance(node.parent, exp.Select) and node.arg_key == "expressions":
                # a select-list item keeps its name: approx_count_distinct(c)
                return exp.alias_(_count_distinct(node), node.sql(dialect="duckdb").lower(),
                                  quoted=True)
            return _count_distinct(node)
        return node

    root = tree.copy()
    # the innermost first: (SELECT (SELECT 4)) is a constant once (SELECT 4) is 4
    subs = sorted(root.find_all(exp.Subquery), key=lambda n: -_depth(n))
    for node in subs:
        if not node.alias and not isinstance(node.parent, (exp.From, exp.Join, exp.In,
                                                           exp.Exists, exp.Any, exp.All)):
            const = _constant(node.this)
            if const is not None:
                folded = exp.Paren(this=const.copy())
                if node is root:
                    root = folded
                else:
                    node.replace(folded)
    return root.transform(rewrite, copy=False)


#: the ranks at which ``MIN(c)`` / ``MAX(c)`` of the select list are released (module docstring)
MIN_RANK, MAX_RANK = "0.01", "0.99"
#: the ``meta`` key of such a quantile: the aggregate as the analyst wrote it
WRITTEN = "provsql_dp_written"


def _extreme(node: exp.Expression, root: exp.Expression) -> exp.Expression | None:
    """``MIN(c)`` / ``MAX(c)`` of a column, an item of the statement's own select list, as
    ``QUANTILE_CONT(c, 0.01)`` / ``QUANTILE_CONT(c, 0.99)`` under its own name; else None."""
    if not isinstance(node, (exp.Min, exp.Max)) or not isinstance(node.this, exp.Column) \
            or node.expressions or node.args.get("expression") is not None:
        return None
    item = node.parent if isinstance(node.parent, exp.Alias) else node
    if item.parent is not root or item.arg_key != "expressions" or not isinstance(root,
                                                                                  exp.Select):
        return None
    q = MIN_RANK if isinstance(node, exp.Min) else MAX_RANK
    quantile = exp.PercentileCont(this=node.this.copy(), expression=exp.Literal.number(q))
    quantile.meta[WRITTEN] = node.sql(dialect="duckdb")  # named in the route's words
    if item is node:
        return exp.alias_(quantile, node.sql(dialect="duckdb").lower(), quoted=True)
    return quantile


def written_as(node: exp.Expression) -> str | None:
    """``'MIN(x)'`` for the quantile a ``MIN(x)`` was made into (:func:`_extreme`), else None."""
    return node.meta.get(WRITTEN)


def _count_distinct(node: exp.ApproxDistinct) -> exp.Expression:
    return exp.Count(this=exp.Distinct(expressions=[node.this.copy()]))
