"""``GROUP BY … HAVING`` below the top of a private query (a derived table, an ``IN``
subquery such as TPC-H Q18's ``o_orderkey IN (SELECT l_orderkey FROM lineitem GROUP BY
l_orderkey HAVING SUM(l_quantity) > 300)``), planned as a
:class:`~provsql_dp.sql.plan.GroupFilter`.

Whether a group passes its HAVING depends on all of its rows together, so a group's existence
is not in general a positive formula of its rows' annotations (a participant leaving can make a
``SUM(x) < 10`` group appear). It is one — exactly — in two cases, the only two admitted:

* the rows are **public** (no protected table below): every group is annotated True;
* the GROUP BY keys **determine every participant** of a group's rows
  (:func:`provsql_dp.sql.owner_fd.keys_determine_owners`: a protected slot's key columns are
  among the keys, directly, through equalities of the query's conditions and declared keys, or
  — a table owned along a foreign key — its referencing columns are, as Q18's ``l_orderkey``
  for ``lineitem BY (l_orderkey) REFERENCES orders``): a group then holds all the rows of one
  conjunction of participants m, and exists — with the aggregates DuckDB computes on the whole
  database — exactly in the worlds that contain m. Its annotation is m.

Anything else is refused, saying so. Only the keys can be selected (as with GROUP BY without
aggregates): an aggregate value below the top would leave positive relational algebra.

>>> import duckdb
>>> from provsql_dp.sql.catalog import Catalog
>>> from provsql_dp.sql.dialect import parse_one
>>> from provsql_dp.sql.planner import plan_query
>>> from provsql_dp.sql.plan import explain
>>> con = duckdb.connect()
>>> _ = con.execute("CREATE TABLE l(k INT, q INT)")
>>> print(explain(plan_query(parse_one(
...     "SELECT k FROM l GROUP BY k HAVING SUM(q) > 300"), Catalog(con))))
GroupFilter [v0→v2] HAVING SUM(TRY_CAST(v1 AS DOUBLE)) > 300
  Scan main.l [k→v0, q→v1]
"""

from __future__ import annotations

from sqlglot import exp

from ._names import output_name
from ._typing import expression_types
from .owner_fd import keys_determine_owners
from .plan import GroupFilter, Scan, walk
from .scope import NON_MONOTONE, Scope, refuse
from .semijoin import plan_where
from .total import make_total

__all__ = ["plan_grouped"]

_AGGREGATES = (exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max)


def plan_grouped(planner, sel: exp.Select, env: dict) -> GroupFilter:
    """The :class:`GroupFilter` of ``SELECT keys FROM … [WHERE …] GROUP BY keys HAVING …``."""
    if sel.args.get("qualify") is not None or sel.args.get("windows"):
        raise refuse("window functions", NON_MONOTONE)
    if sel.args.get("distinct") is not None and sel.args["distinct"].args.get("on") is not None:
        raise refuse("DISTINCT ON", NON_MONOTONE)
    node, scope = planner._from(sel, env)
    if sel.args.get("where") is not None:
        node = plan_where(planner, sel.args["where"].this, node, scope, env)[0]
    keys = [planner._scalar(k, scope, "GROUP BY") for k in planner._group_keys(sel, scope)]
    by_sql = {k.sql(dialect="duckdb") for k in keys}
    exprs, names = [], []
    for item in sel.expressions:
        body = item.unalias() if isinstance(item, exp.Alias) else item
        if isinstance(body, exp.Star) or body.find(exp.AggFunc) is not None:
            raise refuse(f"the select item {item.sql(dialect='duckdb')} with GROUP BY … HAVING "
                         "below the top", NON_MONOTONE,
                         "select only the grouping keys (an aggregate can be released only by "
                         "the final COUNT or SUM)")
        e = planner._scalar(body, scope, "the select list")
        if e.sql(dialect="duckdb") not in by_sql:
            raise refuse(f"the select item {item.sql(dialect='duckdb')} with GROUP BY",
                         hint="select only the grouping keys")
        exprs.append(e)
        names.append(output_name(item))
    if _protected(node) and not keys_determine_owners(node, keys):
        raise refuse("GROUP BY … HAVING over groups that hold several participants' rows",
                     "whether such a group passes depends on several participants' rows "
                     "together, which no positive provenance formula states",
                     "group by the participant's key (each group then belongs to one "
                     "participant) or filter the rows in WHERE")
    having = _having(planner, sel.args["having"].this, scope)
    ids = tuple(planner.new_id() for _ in exprs)
    planner.types.update(zip(ids, expression_types(exprs, planner.types)))
    return GroupFilter(node, tuple(exprs), ids, tuple(names), having, tuple(keys))


def _having(planner, e: exp.Expression, scope: Scope) -> exp.Expression:
    """HAVING over the child's ids: every aggregate's argument made total, SUM and AVG computed
    in DOUBLE (never an overflow), the predicate made total around them."""
    aggs: list[exp.Expression] = []
    types: dict[str, str] = {}

    def swap(n: exp.Expression) -> exp.Expression:
        if isinstance(n, exp.AggFunc):
            if not isinstance(n, _AGGREGATES) or isinstance(n.this, exp.Distinct):
                raise refuse(f"the aggregate {n.sql(dialect='duckdb')} in HAVING",
                             hint="use COUNT, SUM, AVG, MIN or MAX")
            name = f"__hagg{len(aggs)}"
            arg = n.this
            if isinstance(n, exp.Count) and (arg is None or isinstance(arg, exp.Star)):
                aggs.append(exp.Count(this=exp.Star()))
                types[name] = "BIGINT"
            else:
                a = planner._scalar(arg, scope, "HAVING")
                if isinstance(n, (exp.Sum, exp.Avg)):
                    a = exp.TryCast(this=a, to=exp.DataType.build("DOUBLE"))
                    types[name] = "DOUBLE"
                elif isinstance(n, exp.Count):
                    types[name] = "BIGINT"
                else:
                    types[name] = expression_types([a], planner.types)[0]
                aggs.append(type(n)(this=a))
            return exp.column(name)
        if isinstance(n, exp.Column) and not n.name.startswith("__hagg"):
            return exp.column(scope.resolve(n))
        return n

    pred = e.copy().transform(swap)
    total = make_total(pred, {**planner.types, **types}, predicate=True, budget=planner.row_budget)
    return total.transform(lambda n: aggs[int(n.name[6:])].copy() if isinstance(n, exp.Column)
                           and n.name.startswith("__hagg") else n)


def _protected(node) -> bool:
    return any(isinstance(n, Scan) and n.slots for n in walk(node))
