"""DuckDB's ``SEMI JOIN`` and ``ANTI JOIN`` in FROM, planned as the semi-join and anti-join
nodes of ``EXISTS`` / ``NOT EXISTS`` (:mod:`.semijoin`), under exactly the same conditions.

``FROM a SEMI JOIN b ON c`` keeps each row of ``a`` (everything joined before it) that has a row
of ``b`` with ``c`` TRUE, once, and outputs ``a``'s columns only: it is ``FROM a WHERE EXISTS
(SELECT 1 FROM b WHERE c)``, a :class:`~provsql_dp.sql.plan.SemiJoin` on ``c``. ``ANTI JOIN``
keeps the rows with no such match (a NULL comparison matches nothing, as in ``NOT EXISTS`` —
not ``NOT IN``'s blocking NULL): an :class:`~provsql_dp.sql.plan.AntiJoin` on ``c``, admitted
only when owner-local (:func:`~provsql_dp.sql.owner_fd.inner_owners_local`: every row it can
match is public or owned only by the outer row's owners; the module docstring of
:mod:`.owner_fd` proves such an anti-join is a filter of the outer row evaluated on the whole
database). Anything else is refused as ``NOT EXISTS`` is, saying why. ``b``'s columns are
visible in ``ON`` only, as in DuckDB.

``LEFT SEMI JOIN`` and ``LEFT ANTI JOIN`` (Spark SQL's spelling, which sqlglot parses) are
refused as DuckDB's parser refuses them, with a message naming the DuckDB spelling: a statement
must not be accepted when a table is protected and rejected by DuckDB when none is (a statement
over public tables only is run by DuckDB as written).

The condition is made total and checked against the allow-list like any join condition; its
columns resolve as in a join (ambiguous names are refused), not as in a subquery (where an inner
name would shadow an outer one). Its conjuncts over the right side alone filter that side first,
as the WHERE of an ``EXISTS`` subquery does (the same plan, so the same capture and speed).

>>> import duckdb
>>> from provsql_dp.sql.catalog import Catalog
>>> from provsql_dp.sql.dialect import parse_one
>>> from provsql_dp.sql.planner import plan_query
>>> from provsql_dp.sql.plan import explain
>>> con = duckdb.connect()
>>> _ = con.execute("CREATE TABLE t(a INT, b INT); CREATE TABLE s(c INT)")
>>> print(explain(plan_query(parse_one(
...     "SELECT COUNT(*) FROM t SEMI JOIN s ON t.a = s.c WHERE b > 0"), Catalog(con))))
Aggregate COUNT weight=1
  Project [v0→v0, v1→v1]
    Filter v1 > 0
      SemiJoin ON v0 = v2
        Scan main.t [a→v0, b→v1]
        Scan main.s [c→v2]
"""

from __future__ import annotations

from sqlglot import exp

from ..errors import ProgrammingError
from .owner_fd import inner_owners_local
from .plan import AntiJoin, Filter, Node, Scan, SemiJoin, walk
from .scalar import scalar_expression
from .scope import NON_MONOTONE, Scope, refuse
from .total import make_total
from ._conjuncts import conjuncts

__all__ = ["plan_from_semijoin", "is_from_semijoin"]

_NOT_LOCAL = ("ANTI JOIN is answered only when every row it can match is public or belongs to "
              "the outer row's participant (as NOT EXISTS): put in ON an equality on a column "
              "that determines the owner (the participant's key, or a key its rows reference: "
              "l3.l_orderkey = l1.l_orderkey)")


def is_from_semijoin(j: exp.Join) -> bool:
    """``j`` is ``[LEFT] SEMI JOIN`` or ``[LEFT] ANTI JOIN`` (planned here)."""
    kind = (j.args.get("kind") or "").upper()
    side = (j.args.get("side") or "").upper()
    return kind in ("SEMI", "ANTI") and side in ("", "LEFT")


def plan_from_semijoin(planner, left: Node, scope: Scope, j: exp.Join, env: dict) -> Node:
    """``left ⋉ j`` (SEMI) or ``left ▷ j`` (ANTI); ``scope`` (the left's) is left unchanged:
    the right's columns are not visible after the join."""
    kind = (j.args.get("kind") or "").upper()
    if (j.args.get("side") or "").upper() == "LEFT":
        raise ProgrammingError(f"LEFT {kind} JOIN is not DuckDB SQL (it is Spark SQL's spelling; "
                               f"DuckDB's parser rejects it): write {kind} JOIN … ON <condition>")
    if j.args.get("method") or isinstance(j.this, exp.Lateral) or j.args.get("lateral"):
        raise refuse(f"{(j.args.get('method') or 'LATERAL').upper()} {kind} JOIN",
                     hint=f"write {kind} JOIN … ON <condition>")
    right, src = planner._source(j.this, env)
    if j.args.get("using"):
        left_scope, right_scope = Scope(list(scope.sources), dict(scope.using)), Scope([src])
        parts = []
        for ident in j.args["using"]:
            name = ident.name if isinstance(ident, exp.Expression) else str(ident)
            parts.append(exp.EQ(this=exp.column(left_scope.resolve(exp.column(name))),
                                expression=exp.column(right_scope.resolve(exp.column(name)))))
        cond = make_total(exp.and_(*parts), planner.types, predicate=True,
                          budget=planner.row_budget)
    elif j.args.get("on") is not None:
        # as EXISTS plans its WHERE: conjuncts over the right side alone filter it first
        on_scope = Scope(list(scope.sources) + [src], dict(scope.using))
        mine, rest = [], []
        for conj in conjuncts(j.args["on"]):
            ids = {c.name for c in scalar_expression(conj, on_scope, "a join condition")
                   .find_all(exp.Column)}
            (mine if ids and ids <= set(right.ids) else rest).append(conj)
        if mine:
            right = Filter(right, planner._scalar(exp.and_(*mine), on_scope, "a join condition"))
        cond = (planner._scalar(exp.and_(*rest), on_scope, "a join condition") if rest
                else exp.true())
    else:
        raise ProgrammingError(f"{kind} JOIN needs a condition: {kind} JOIN t ON … or USING (…)")
    local = inner_owners_local(left, right, cond)
    if kind == "ANTI":
        if not local:
            raise refuse("ANTI JOIN", NON_MONOTONE, _NOT_LOCAL)
        return AntiJoin(left, right, cond)
    return SemiJoin(left, right, cond, local=local and _protected(right))


def _protected(node: Node) -> bool:
    return any(isinstance(n, Scan) and n.slots for n in walk(node))
