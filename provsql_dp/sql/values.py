"""Constants as public relations: ``VALUES`` lists and ``SELECT`` without ``FROM``.

A ``SELECT`` without ``FROM`` projects its constants from :class:`~provsql_dp.sql.plan.OneRow`
(one row, no column, annotated True); a ``VALUES`` list is the bag union of one such projection
per row, its columns named ``col0, col1, …`` as DuckDB names them (or by the alias list). Both
are public: their rows are annotated True, like a public table's.

>>> import duckdb
>>> from provsql_dp.sql.catalog import Catalog
>>> from provsql_dp.sql.dialect import parse_one
>>> from provsql_dp.sql.planner import plan_query
>>> from provsql_dp.sql.plan import explain
>>> print(explain(plan_query(parse_one("SELECT x FROM (VALUES (1), (2)) AS v(x)"),
...                          Catalog(duckdb.connect()))))
Project [v2→v3]
  Union ALL [v2]
    Project [1→v0]
      OneRow
    Project [2→v1]
      OneRow
"""

from __future__ import annotations

from sqlglot import exp

from ..errors import ProgrammingError
from ._set_types import unify_branches
from .plan import OneRow, Union
from .scope import Scope, refuse

__all__ = ["plan_values", "MAX_VALUES_ROWS"]

#: rows a VALUES list in a private query may have (each is a branch of a union)
MAX_VALUES_ROWS = 1000


def plan_values(planner, values: exp.Values):
    """The plan of a ``VALUES`` list: a union of one-row projections of its constants."""
    rows = values.expressions
    if len(rows) > MAX_VALUES_ROWS:
        raise refuse(f"a VALUES list of {len(rows)} rows",
                     f"a private query takes at most {MAX_VALUES_ROWS}",
                     "put the constants in a table")
    branches = []
    for row in rows:
        items = row.expressions if isinstance(row, exp.Tuple) else [row]
        if branches and len(items) != len(branches[0].ids):
            raise ProgrammingError("every row of a VALUES list needs the same number of values")
        exprs = [planner._scalar(e, Scope(), "VALUES") for e in items]
        ids = [planner.new_id() for _ in exprs]
        names = [f"col{j}" for j in range(len(exprs))]
        branches.append(planner._project(OneRow(), exprs, ids, names))
    if len(branches) == 1:
        return branches[0]
    branches, types = unify_branches(planner, branches, "VALUES")
    first = branches[0]
    node = Union(tuple(branches), tuple(planner.new_id() for _ in first.ids), first.names)
    planner.types.update(zip(node.ids, types))
    return node
