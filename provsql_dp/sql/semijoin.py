"""WHERE clauses with subqueries: ``IN (subquery)`` and ``EXISTS (subquery)`` planned as
semi-joins (:class:`~provsql_dp.sql.plan.SemiJoin`).

A semi-join keeps each row of its left side that has a match, once: the provenance of the row is
its own annotation AND the OR of its matches' annotations — the existence of a match, a positive
Boolean formula (Chen & Zhou §2.4). Rewriting ``IN`` as a join would be wrong for a count: a join
keeps one row per match, a semi-join one row per left row.

* ``x IN (SELECT y FROM … WHERE …)``, ``(a, b) IN (SELECT c, d …)`` and ``EXISTS (SELECT … FROM
  … WHERE …)`` are conjuncts of WHERE (joined to the rest by AND); the subquery may refer to the
  enclosing query's columns (a correlated subquery: its conditions on them become the
  semi-join's condition) and may itself hold such conditions (nested ``IN``, TPC-H Q20).
* A subquery with DISTINCT, UNION, GROUP BY (no aggregate) is planned on its own (it cannot refer
  to the enclosing query); one that does (``EXISTS (SELECT 1 FROM people q WHERE q.code = p.code
  GROUP BY q.code HAVING …)``) is refused naming the clause and the uncorrelated ``IN`` to write.
* ``NOT EXISTS`` is an anti-join (:class:`~provsql_dp.sql.plan.AntiJoin`), admitted only when
  every row it can match is public or owned only by the outer row's owners (TPC-H Q21's
  ``l3.l_orderkey = l1.l_orderkey``; :mod:`provsql_dp.sql.owner_fd` says why that is safe). An
  ``EXISTS``/``IN`` of that kind is marked ``local``: a filter that keeps one owner per row.
* ``x NOT IN (SELECT y … WHERE w)`` is the anti-join on ``w AND (x = y) IS NOT FALSE`` (a NULL
  comparison blocks, as in SQL), owner-local by ``w`` alone (a NULL ``y`` of anyone's row
  blocks too).
* Any other ``NOT IN``, ``NOT EXISTS`` (and ``EXCEPT``) are refused: they are not monotone — a
  participant joining the database can remove rows from the answer — so no sensitivity bound
  holds.

>>> import duckdb
>>> from provsql_dp.sql.catalog import Catalog
>>> from provsql_dp.sql.dialect import parse_one
>>> from provsql_dp.sql.planner import plan_query
>>> from provsql_dp.sql.plan import explain
>>> con = duckdb.connect()
>>> _ = con.execute("CREATE TABLE t(a INT, b INT); CREATE TABLE s(c INT)")
>>> print(explain(plan_query(parse_one(
...     "SELECT COUNT(*) FROM t WHERE b > 0 AND a IN (SELECT c FROM s)"), Catalog(con))))
Aggregate COUNT weight=1
  Project [v0→v0, v1→v1]
    SemiJoin ON v0 = v2
      Filter v1 > 0
        Scan main.t [a→v0, b→v1]
      Scan main.s [c→v2]
"""

from __future__ import annotations

from sqlglot import exp

from ..errors import ProgrammingError, UnsupportedQueryError
from ._names import analyst_names
from .owner_fd import inner_owners_local
from .plan import AntiJoin, Filter, Scan, SemiJoin, walk
from .scalar import scalar_expression
from .aggregate_comparison import aggregate_comparison_refusal
from .scope import NON_MONOTONE, NOT_YET, Scope, refuse
from .total import make_total
from ._conjuncts import conjuncts

__all__ = ["plan_where", "ChainedScope"]


class ChainedScope(Scope):
    """The scope of a subquery: its own FROM first, then the enclosing query's (``outer``)."""

    def __init__(self, inner: Scope, outer: Scope):
        super().__init__(list(inner.sources) + list(outer.sources), dict(inner.using))
        self.inner, self.outer = inner, outer

    def resolve(self, col: exp.Column) -> str:
        if _knows(self.inner, col):
            return self.inner.resolve(col)
        return self.outer.resolve(col)

    def star(self, table: str | None = None):
        return self.inner.star(table)


def _knows(scope: Scope, col: exp.Column) -> bool:
    if col.table:
        return any(s.alias.lower() == col.table.lower() for s in scope.sources)
    name = col.name.lower()
    return name in scope.using or any(n.lower() == name for s in scope.sources for n in s.names)


def _subquery_of(e: exp.Expression):
    """``(kind, left expressions, query)`` when ``e`` is ``… IN (subquery)`` or ``EXISTS``."""
    query = _in_query(e)
    if query is not None:
        left = e.this.expressions if isinstance(e.this, exp.Tuple) else [e.this]
        return "IN", left, query
    if isinstance(e, exp.Exists):
        return "EXISTS", [], e.this
    return None


def _in_query(e: exp.Expression):
    """The query of ``… IN (subquery)``, or the VALUES list of ``… IN (VALUES (1), (2))``: a
    public relation (:mod:`.values`), semi-joined like a subquery; else None."""
    if not isinstance(e, exp.In):
        return None
    if e.args.get("query") is not None:
        return e.args["query"]
    items = e.expressions
    return items[0] if len(items) == 1 and isinstance(items[0], exp.Values) else None


def _values_refusal(conj: exp.Expression) -> UnsupportedQueryError | None:
    """The refusal of ``x IN (VALUES …)`` inside OR (or NOT, or a comparison) when it is the
    condition's only subquery: by its name, with the list to write instead, built from the
    analyst's own column and first values (``g IN (1, 2)``, ``(g, d) IN ((1, 'a'))``).

    >>> from provsql_dp.sql.dialect import parse_one
    >>> print(_values_refusal(parse_one("SELECT 1 WHERE g IN (VALUES (1), (2)) OR d = 0")
    ...                       .args["where"].this))
    IN (VALUES …) inside OR is not supported in a private query: it is a semi-join, answered only as a condition of WHERE joined to the others by AND; inside OR, list the values instead: g IN (1, 2)
    """
    if any(isinstance(n, (exp.Subquery, exp.Select, exp.Exists)) for n in conj.walk()):
        return None
    found = next((n for n in conj.walk() if _in_query(n) is not None), None)
    if found is None:
        return None
    between = list(_up_to(found, conj))
    where = "OR" if any(isinstance(p, exp.Or) for p in between) else \
        "NOT" if any(isinstance(p, exp.Not) for p in between) else "an expression"
    rows = [r.expressions[0] if len(r.expressions) == 1 else r
            for r in _in_query(found).expressions]
    listed = ", ".join(r.sql(dialect="duckdb") for r in rows[:3]) + (", …" if len(rows) > 3 else "")
    left = found.this.sql(dialect="duckdb")
    left = left if len(left) <= 40 else "x"
    return UnsupportedQueryError(
        f"IN (VALUES …) inside {where} is not supported in a private query: it is a semi-join, "
        f"answered only as a condition of WHERE joined to the others by AND; inside {where}, "
        f"list the values instead: {left} IN ({listed[:120]})")


def _up_to(node: exp.Expression, top: exp.Expression):
    """The ancestors of ``node`` up to ``top`` (included)."""
    p = node.parent
    while p is not None:
        yield p
        if p is top:
            return
        p = p.parent


def _has_subquery(e: exp.Expression) -> bool:
    return any(isinstance(n, (exp.Subquery, exp.Select, exp.Exists)) or _in_query(n) is not None
               for n in e.walk())


def _negated(e: exp.Expression):
    """``("NOT EXISTS", [], query)`` for ``NOT EXISTS (subquery)`` and ``("NOT IN", left,
    query)`` for ``… NOT IN (subquery)`` (anti-joins, admitted when owner-local:
    :func:`_semijoin`); any other negation of a subquery is refused."""
    inner = e
    while isinstance(inner, (exp.Not, exp.Paren)):
        inner = inner.this
    sub = _subquery_of(inner)
    if not isinstance(e, exp.Not) or sub is None:
        return None
    body = e.this
    while isinstance(body, exp.Paren):
        body = body.this
    if body is inner:
        return f"NOT {sub[0]}", sub[1], sub[2]
    raise refuse(f"NOT {sub[0]} (subquery)", NON_MONOTONE)


def plan_where(planner, where: exp.Expression, node, scope: Scope, env: dict, *,
               local: set | None = None):
    """``(node, correlated)``: ``node`` filtered by the conjuncts of ``where`` and semi-joined
    with its subqueries, and the conjuncts (over plan ids) that refer to an enclosing query's
    columns — only possible when ``scope`` is a :class:`ChainedScope` (``local``: the ids of
    the subquery's own FROM)."""
    plain, subs, correlated = [], [], []
    for conj in conjuncts(where):
        sub = _negated(conj) or _subquery_of(conj)
        if sub is not None:
            subs.append(sub)
        elif _has_subquery(conj):
            raise aggregate_comparison_refusal(conj) or _values_refusal(conj) or refuse(f"a subquery in {conj.sql(dialect='duckdb')}", NOT_YET,
                         "IN (subquery) and EXISTS (subquery) are answered as conditions of WHERE "
                         "joined to the others by AND (not inside OR, CASE or a comparison)")
        else:
            plain.append(conj)
    ids = set(node.ids) if local is None else local
    mine = []
    for conj in plain:
        e = scalar_expression(conj, scope, "WHERE")
        if {c.name for c in e.find_all(exp.Column)} <= ids:
            mine.append(e)
        else:
            correlated.append(e)
    if mine:
        node = Filter(node, _total(planner, exp.and_(*mine), scope))
    for kind, left, query in subs:
        node, more = _semijoin(planner, kind, left, query, node, scope, env, ids)
        if more:
            raise refuse("a subquery referring to a query two levels out", NOT_YET,
                         "refer only to the columns of the query just outside the subquery")
    return node, correlated


def _total(planner, e: exp.Expression, scope: Scope) -> exp.Expression:
    """``e`` made total as a condition; an error names columns as the analyst wrote them."""
    try:
        return make_total(e, planner.types, predicate=True, budget=planner.row_budget)
    except (UnsupportedQueryError, ProgrammingError) as err:
        raise type(err)(analyst_names(str(err), scope)) from err


def _semijoin(planner, kind, left, query, node, scope, env, outer_ids):
    """``node ⋉ query``; the conditions that refer to a query further out are returned."""
    q = query.this if isinstance(query, exp.Subquery) else query
    if isinstance(query, exp.Subquery):
        planner._check_modifiers(query, top=False)
    if isinstance(q, exp.Select) and any(a.find_ancestor(exp.Window) is None
                                         for e in q.expressions for a in e.find_all(exp.AggFunc)):
        raise refuse(f"an aggregate in an {kind} subquery", NON_MONOTONE)
    # DISTINCT changes nothing under a semi-join (duplicates of a match OR their annotations)
    simple = isinstance(q, exp.Select) and not any(
        q.args.get(k) for k in ("group", "having", "qualify", "windows", "with_", "with")) and (
        q.args.get("distinct") is None or q.args["distinct"].args.get("on") is None)
    if simple:
        planner._check_modifiers(q, top=False)
        planner._check_select_clauses(q)
        right, inner = planner._from(q, env)
        chained = ChainedScope(inner, scope)
        right_ids = set(right.ids)
        corr = []
        if q.args.get("where") is not None:
            right, corr = plan_where(planner, q.args["where"].this, right, chained, env,
                                     local=right_ids)
        values = [] if not kind.endswith("IN") else _select_values(q, chained)
        named = chained
    else:
        try:
            right = planner._plan_query(query, env)
        except ProgrammingError as err:  # planned on its own, it cannot see the enclosing query
            outer = _outer_reference(q, scope, str(err))
            if outer is None:
                raise
            raise _correlated_refusal(kind, q, outer) from err
        corr, values = [], [exp.column(i) for i in right.ids]
        named = scope
    parts, equal = list(corr), []
    if kind.endswith("IN"):
        if len(values) != len(left):
            raise ProgrammingError(f"IN compares {len(left)} value(s) with a subquery of "
                                   f"{len(values)} column(s)")
        for a, b in zip(left, values):
            equal.append(exp.EQ(this=scalar_expression(a, scope, "IN (…)"), expression=b))
    if kind == "IN":
        parts += equal
    both = outer_ids | set(right.ids)
    cond, further = [], []
    for p in parts:
        (cond if {c.name for c in p.find_all(exp.Column)} <= both else further).append(p)
    condition = _total(planner, exp.and_(*cond), named) if cond else exp.true()
    # every match public or the outer row's owners' own: a filter (sql.owner_fd), decided from
    # the plan alone; an anti-join is admitted only so
    local = inner_owners_local(node, right, condition)
    if kind.startswith("NOT"):
        if not local:
            raise refuse(f"{kind} (subquery)", NON_MONOTONE, _NOT_LOCAL)
        if kind == "NOT IN":  # a row whose comparison is TRUE or NULL blocks (SQL's NOT IN)
            blocks = exp.Not(this=exp.Is(this=exp.paren(exp.and_(*equal)), expression=exp.false()))
            condition = _total(planner, exp.and_(*cond, blocks), named)
        return AntiJoin(node, right, condition), further
    return SemiJoin(node, right, condition, local=local and _protected(right)), further


_NOT_LOCAL = ("NOT EXISTS and NOT IN are answered only when every row the subquery can match is "
              "public or belongs to the outer row's participant: correlate it in its WHERE on a "
              "column that determines the owner (the participant's key, or a key its rows "
              "reference: l3.l_orderkey = l1.l_orderkey)")


def _outer_reference(q: exp.Expression, scope: Scope, err: str) -> str | None:
    """A column of ``q`` that names the enclosing query (``p.code``), as written, or None: the
    error ``q`` raised, planned on its own, came from something else."""
    inner = {t.alias_or_name.lower() for t in q.find_all(exp.Table, exp.Subquery, exp.CTE)}
    for col in q.find_all(exp.Column):
        if col.table and col.table.lower() in inner:
            continue
        named = repr(col.table) if col.table else repr(col.name)
        if _knows(scope, col) and named in err:
            return col.sql(dialect="duckdb")
    return None


def _correlated_refusal(kind: str, q: exp.Expression, outer: str) -> UnsupportedQueryError:
    if isinstance(q, exp.Select):
        clauses = [w for k, w in (("group", "GROUP BY"), ("having", "HAVING"),
                                  ("qualify", "QUALIFY"), ("windows", "WINDOW"), ("with_", "WITH"),
                                  ("with", "WITH")) if q.args.get(k)]
        if q.args.get("distinct") is not None and q.args["distinct"].args.get("on") is not None:
            clauses.append("DISTINCT ON")
    else:
        clauses = [type(q).__name__.upper()]
    what = " / ".join(dict.fromkeys(clauses)) or "its clauses"
    example = " GROUP BY <key> HAVING …" if "GROUP BY" in clauses else ""
    return refuse(
        f"a correlated {kind} subquery with {what} (it refers to {outer})", NOT_YET,
        f"such a subquery is planned on its own and cannot see the enclosing query's columns. "
        f"Compare the outer column with the subquery's key, uncorrelated, instead: "
        f"{outer} IN (SELECT <key> FROM …{example}), or keep the correlation in a subquery "
        f"without {what}")


def _protected(node) -> bool:
    return any(isinstance(n, Scan) and n.slots for n in walk(node))


def _select_values(q: exp.Select, scope: Scope) -> list[exp.Expression]:
    """The select list of an IN subquery, over plan ids (inlined into the semi-join's
    condition: the subquery's rows are not projected)."""
    out = []
    for item in q.expressions:
        if isinstance(item, exp.Star) or (isinstance(item, exp.Column)
                                          and isinstance(item.this, exp.Star)):
            _, ids = scope.star(None if isinstance(item, exp.Star) else item.table)
            out += [exp.column(i) for i in ids]
            continue
        body = item.unalias() if isinstance(item, exp.Alias) else item
        out.append(scalar_expression(body, scope, "the select list of an IN subquery"))
    return out
