"""A static bound on what an analyst's row-concatenating aggregates can build (red team h147).

``string_agg``, ``list``/``array_agg``, ``array_unique_agg`` and the top-n forms (``max(s, n)``,
``arg_max(s, i, n)``) hold every row of their group in one value. The size model
(:mod:`provsql_dp.sql.size_model`) bounds values per row; this value grows with the number of
rows, which a cross join of public tables multiplies: ``string_agg`` over ``pub a, pub b, pub c``
built up to DuckDB's 4 GiB string limit in one query (memory taken from every other session of
the server). A window form is worse: ``list(s) OVER ()`` gives *each* row a list of every row,
so one public table of 20,000 rows held the process at 8.9 GB for 100 s.

Before the statement runs, each such aggregate's value is bounded by

    (rows feeding its group) × (bytes one row adds) [× the rows of its SELECT, for a window]
    [× the copies the statement makes of each row of its SELECT: the rows of the other
      sources it is joined with, of the query it is an expression of (a subquery), …]

where the rows of a relation are the product of its sources' row counts (public tables: their
counts are public; a join counts as a cross join, a ``LIMIT n`` as ``n``, a ``UNION`` as the sum,
an aggregate without ``GROUP BY`` as one row) and a row adds at most its value — every column
read counts as the longest value of the tables read (measured), grown as the statement's select
lists grow it (``size_model.ChainGrowth``) — its separator and 16 bytes. The sum over the
statement must be within :data:`MAX_CONCATENATED_BYTES`, else it is refused before it runs,
naming the limit and the way out (narrow the rows in a subquery with ``LIMIT``). Rows that cannot
be bounded (``UNNEST``, a recursive CTE) beside such an aggregate are refused the same way.

>>> import sqlglot
>>> t = sqlglot.parse_one("SELECT string_agg(a.s, ',') FROM pub a, pub b", read="duckdb")
>>> concatenated_bytes(t, lambda table: 1000, longest=10)
113000000
>>> w = sqlglot.parse_one("SELECT list(s) OVER () FROM (SELECT s FROM pub LIMIT 100) x", read="duckdb")
>>> concatenated_bytes(w, lambda table: 10**6, longest=10)
1120000
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from ...errors import UnsupportedQueryError
from ..size_model import output_size

__all__ = ["MAX_CONCATENATED_BYTES", "CONCATENATING", "concatenated_bytes", "check_concatenations"]

#: the most bytes a statement's row-concatenating aggregates may build together (256 MiB)
MAX_CONCATENATED_BYTES = 256 * 1024 * 1024
#: aggregates whose value holds every row of its group (the top-n forms when given their n)
CONCATENATING = (exp.GroupConcat, exp.ArrayAgg, exp.ArrayUniqueAgg)
_TOP_N = (exp.Max, exp.Min, exp.ArgMax, exp.ArgMin)
_ELEMENT_BYTES = 16  # a list element's own bytes beside its value
_FIXED_TEXT = 96  # a fixed-width value's text (size_model.FIXED_TEXT_BYTES)


class _Unbounded(Exception):
    def __init__(self, what: str):
        self.what = what


def concatenating(tree: exp.Expression) -> list[exp.Expression]:
    """The row-concatenating aggregates of ``tree``."""
    return [n for n in tree.find_all(*CONCATENATING, *_TOP_N)
            if isinstance(n, CONCATENATING) or n.args.get("count") is not None]


def concatenated_bytes(tree: exp.Expression, table_rows: Callable[[exp.Table], int],
                       longest: int, growth=1) -> int:
    """The bound (module docstring) on the bytes ``tree``'s concatenating aggregates build;
    ``table_rows`` counts a real table's rows, ``longest`` is the longest value read (bytes),
    ``growth`` the statement's growth along relations. Raises :class:`_Unbounded`."""
    rows = _Rows(tree, table_rows)
    per_read = max(longest, _FIXED_TEXT) * growth
    total = 0
    for agg in concatenating(tree):
        select = agg.parent  # the query it aggregates the rows of: the nearest SELECT or PIVOT
        while select is not None and not isinstance(select, (exp.Select, exp.Pivot)):
            select = select.parent
        if select is None:
            raise _Unbounded(agg.sql(dialect="duckdb")[:80])
        if isinstance(select, exp.Pivot):  # PIVOT … USING list(x): the rows it pivots
            n = rows.source(select.this if select.this is not None else select.parent)
        else:
            n = rows.feeding(select)
        size = output_size(agg.this, {}) if isinstance(agg.this, exp.Expression) else None
        per_row = (size.bound(per_read) if size is not None else per_read) + _ELEMENT_BYTES
        sep = agg.args.get("separator")
        if isinstance(sep, exp.Expression):
            per_row += output_size(sep, {}).bound(per_read)
        value = n * per_row
        if isinstance(agg.parent, exp.Window):
            value *= n
        total += value * rows.carried(select)
    return total


class _Rows:
    """Upper bounds on the rows of each relation of a compiled tree."""

    def __init__(self, tree: exp.Expression, table_rows):
        self.table_rows = table_rows
        self.tree = tree
        self.ctes = {c.alias_or_name: c for c in tree.find_all(exp.CTE)}
        self.busy: set[str] = set()
        self.depth = 0

    def feeding(self, select: exp.Select, but=None) -> int:
        """The rows of ``select``'s FROM and joins (before any grouping or filter), but the
        source ``but``."""
        n = 1
        src = select.args.get("from_") or select.args.get("from")
        for s in ([src.this] if src is not None else []) + [j.this for j in
                                                            select.args.get("joins") or []]:
            n *= 1 if s is but else self.source(s)
        for lat in select.args.get("laterals") or []:
            raise _Unbounded(f"the lateral view {lat.sql(dialect='duckdb')[:80]}")
        return n

    def query(self, q: exp.Expression) -> int:
        if isinstance(q, exp.Subquery):
            n = self.query(q.this)
        elif isinstance(q, exp.Select):
            n = self.feeding(q)
            aggregated = any(a.find_ancestor(exp.Select) is q and
                             not isinstance(a.parent, exp.Window)
                             for a in q.find_all(exp.AggFunc))
            if aggregated and not q.args.get("group"):
                n = 1
        elif isinstance(q, exp.SetOperation):
            n = self.query(q.this) + self.query(q.expression)
        elif isinstance(q, exp.Values):
            n = len(q.expressions)
        else:
            raise _Unbounded(q.sql(dialect="duckdb")[:80])
        limit = q.args.get("limit")
        if isinstance(limit, exp.Limit) and isinstance(limit.expression, exp.Literal) \
                and limit.expression.is_int:
            n = min(n, int(limit.expression.this))
        return n

    def source(self, src: exp.Expression) -> int:
        if isinstance(src, exp.Table) and isinstance(src.this, exp.Identifier):
            cte = None if src.args.get("db") else self.ctes.get(src.name)
            if cte is None:
                return self.table_rows(src)
            if cte.alias_or_name in self.busy:
                raise _Unbounded(f"the recursive CTE {src.name}")
            self.busy.add(cte.alias_or_name)
            try:
                return self.query(cte.this)
            finally:
                self.busy.discard(cte.alias_or_name)
        if isinstance(src, (exp.Subquery, exp.Values)):
            return self.query(src)
        raise _Unbounded(src.sql(dialect="duckdb")[:80])

    def carried(self, node: exp.Expression) -> int:
        """How many copies of each row of the relation ``node`` (a query, a PIVOT) the
        statement makes: as a source, the rows of its query's other sources (a join repeats
        it) times that query's own copies; as an expression (a scalar subquery, ``IN``), the
        rows of the query it is evaluated for; as a CTE, the sum over its references."""
        self.depth += 1
        if self.depth > 64:
            raise _Unbounded("relations nested this deeply")
        try:
            parent = node.parent
            while parent is not None:
                if isinstance(parent, exp.Lateral):  # runs once per row of the query it joins
                    raise _Unbounded(f"the lateral join {parent.sql(dialect='duckdb')[:80]}")
                if isinstance(parent, (exp.From, exp.Join)) and isinstance(parent.parent, exp.Select):
                    owner = parent.parent
                    return self.feeding(owner, but=parent.this) * self.carried(owner)
                if isinstance(parent, exp.CTE):
                    name = parent.alias_or_name
                    return sum(self.carried(t) for t in self.tree.find_all(exp.Table)
                               if t.name == name and not t.args.get("db"))
                if isinstance(parent, exp.Select):
                    return self.feeding(parent) * self.carried(parent)
                parent = parent.parent
            return 1
        finally:
            self.depth -= 1


def check_concatenations(tree: exp.Expression, table_rows, longest: Callable[[], int],
                         growth=1) -> None:
    """Refuse ``tree`` when its concatenating aggregates can build more than
    :data:`MAX_CONCATENATED_BYTES` (module docstring); ``longest`` is called only when it has
    one. Decided from the statement and the public tables' sizes, before anything runs."""
    aggs = concatenating(tree)
    if not aggs:
        return
    name = aggs[0].sql(dialect="duckdb")[:120]
    try:
        total = concatenated_bytes(tree, table_rows, longest(), growth)
    except _Unbounded as e:
        raise UnsupportedQueryError(
            f"{name} holds every row of its group, and the rows of {e.what} have no bound known "
            "before the statement runs: concatenate rows of tables (or of a subquery with "
            "LIMIT n) only") from None
    if total > MAX_CONCATENATED_BYTES:
        raise UnsupportedQueryError(
            f"{name} holds every row of its group: over the rows this statement can feed it (a "
            "join counted as every pair, a window as every row's own value) its values can reach "
            f"{total:,} bytes, more than the {MAX_CONCATENATED_BYTES:,} accepted (so that one "
            "statement cannot take the server's memory from other sessions); narrow the rows in "
            "a subquery with LIMIT n, or aggregate without string_agg/list")
