"""The rows of a plan as one flat ``FROM table WHERE …``, when the plan is that simple: the
aggregate of a fast path then reads the table as plain DuckDB would.

:func:`provsql_dp.provenance.capture.compile_node` gives each plan node a subquery of its own
(``SELECT … FROM (SELECT * FROM (SELECT "id" AS v0, … FROM t) AS f WHERE …) AS p``), which
DuckDB does not fold away: each layer stays a projection over every row that passes the filter
(measured on 10^7 rows, a ``COUNT(*) … WHERE`` that keeps 60 % of them: three layers cost about
10 % more than the plain query, ~1 ms). A chain of filters and column-only projections over one
base table is the table's rows under the conjunction of the filters: :func:`flat_rows` gives that
conjunction with every plan id replaced by the table column it names (by name, so a column
dropped in the meantime fails to bind as it would in the layered query), and the column of each
id of the chain's top. Anything else (a join, a projection computing a value, a table read
through its owners' join, a predicate with a subquery) gives None: the caller compiles the plan.

>>> from sqlglot import exp, parse_one
>>> from provsql_dp.sql.plan import Filter, Project, Scan
>>> scan = Scan("people", "main", ("id", "v1"), ("v0", "v1"), ("id", "v1"), catalog="memory")
>>> plan = Project(Filter(scan, parse_one("v1 > 5 OR v0 IS NULL")),
...                (exp.column("v1"), exp.column("v0")), ("v2", "v3"), ("a", "b"))
>>> flat = flat_rows(plan)
>>> flat.from_where
'"memory"."main"."people" WHERE ("v1" > 5 OR "id" IS NULL)'
>>> flat.columns["v2"], flat.columns["v3"]
('v1', 'id')
>>> flat_rows(Filter(scan, parse_one("v0 IN (SELECT 1)"))) is None
True
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from ..sql.plan import Filter, Node, Project, Scan

__all__ = ["FlatRows", "flat_rows"]


@dataclass(frozen=True)
class FlatRows:
    """``SELECT … FROM {from_where}`` reads the rows; ``columns`` maps each plan id of the
    chain's top to the name of its column."""

    from_where: str
    columns: dict


def flat_rows(node: Node) -> FlatRows | None:
    """The rows of ``node`` as one ``FROM … WHERE``, or None (see the module docstring)."""
    predicates = []
    chain = []
    while isinstance(node, (Filter, Project)):
        chain.append(node)
        node = node.child
    if not isinstance(node, Scan) or node.source is not None:
        return None
    columns = dict(zip(node.ids, node.columns))
    for n in reversed(chain):  # bottom-up: each node's expressions are over its child's ids
        if isinstance(n, Filter):
            pred = _substituted(n.predicate, columns)
            if pred is None:
                return None
            predicates.append(f"({pred})")
        else:
            if not all(isinstance(e, exp.Column) and not e.table and e.name in columns
                       for e in n.exprs):
                return None
            columns = {i: columns[e.name] for e, i in zip(n.exprs, n.ids)}
    where = f" WHERE {' AND '.join(predicates)}" if predicates else ""
    return FlatRows(node.from_sql + where, columns)


def _substituted(e: exp.Expression, columns: dict) -> str | None:
    if e.find(exp.Query, exp.Subquery) is not None:
        return None
    refs = list(e.find_all(exp.Column))
    if any(c.table or c.name not in columns for c in refs):
        return None
    out = e.transform(lambda n: exp.column(columns[n.name], quoted=True)
                      if isinstance(n, exp.Column) else n)
    return out.sql(dialect="duckdb")
