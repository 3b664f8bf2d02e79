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
>>> reads_clock(parse_one("SELECT COUNT(*) FROM t WHERE d < NOW()"))
True
"""

from __future__ import annotations

from sqlglot import exp

__all__ = ["public_values", "reads_clock"]

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
    """The one expression of a ``SELECT expr`` that reads nothing, or None."""
    if not isinstance(sel, exp.Select) or len(sel.expressions) != 1:
        return None
    if any(sel.args.get(k) for k in sel.args if k != "expressions"):
        return None  # FROM, WHERE, GROUP BY, LIMIT, DISTINCT, WITH, …: not a bare constant
    expr = sel.expressions[0].unalias()
    if any(isinstance(n, (exp.Column, exp.Star, exp.Query, exp.Subquery, exp.AggFunc,
                          exp.Window, exp.Placeholder, exp.Parameter)) for n in expr.walk()):
        return None
    return expr


def _clock_values(duck) -> dict[str, exp.Expression]:
    """The statement's date and instant, read once on its connection, as literals."""
    day, instant = duck.execute(
        "SELECT strftime(current_date, '%Y-%m-%d'), CAST(current_timestamp AS VARCHAR)").fetchone()
    return {"date": exp.cast(exp.Literal.string(day), exp.DataType.build("DATE")),
            "timestamp": exp.cast(exp.Literal.string(instant),
                                  exp.DataType.build("TIMESTAMPTZ"))}


def public_values(tree: exp.Expression, duck) -> exp.Expression:
    """``tree`` with its constant scalar subqueries, clock reads and ``APPROX_COUNT_DISTINCT``
    rewritten (module docstring); ``duck`` is the DuckDB connection whose clock the statement
    reads (only read when it does). ``tree`` itself is left as it was."""
    clock: dict = {}

    def rewrite(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Subquery) and not node.alias and not isinstance(
                node.parent, (exp.From, exp.Join, exp.In, exp.Exists)):
            const = _constant(node.this)
            if const is not None:
                return exp.Paren(this=const.copy())
        kind = _clock_kind(node)
        if kind is not None:
            if not clock:
                clock.update(_clock_values(duck))
            return clock[kind].copy()
        if isinstance(node, exp.ApproxDistinct) and node.args.get("accuracy") is None:
            if isinstance(node.parent, exp.Select) and node.arg_key == "expressions":
                # a select-list item keeps its name: approx_count_distinct(c)
                return exp.alias_(_count_distinct(node), node.sql(dialect="duckdb").lower(),
                                  quoted=True)
            return _count_distinct(node)
        return node

    return tree.copy().transform(rewrite, copy=False)


def _count_distinct(node: exp.ApproxDistinct) -> exp.Expression:
    return exp.Count(this=exp.Distinct(expressions=[node.this.copy()]))
