"""The groups a public table's GROUP BY keys can take, narrowed by the statement's public conditions.

A GROUP BY key that is a column of a public table ranges over that table's distinct values
(:func:`provsql_dp.privacy.answer.group_domain`): a public set, every group released, empty or
not, each at its share of ε. When the statement also filters that table through other public
tables — TPC-H Q21 groups by ``s_name`` under ``s_nationkey = n_nationkey AND n_name = 'SAUDI
ARABIA'`` — every output row's key satisfies those conditions too, so the groups are the distinct
keys of the public tables joined and filtered by them: 411 suppliers instead of 10,000 at SF 1.
The set is still public — computed from public tables and the statement, never from a protected
row — and each group gets 24× more of ε.

:func:`distinct_sql` writes that query. It uses the conjuncts that hold on every row of the
aggregated relation (:func:`provsql_dp.sql.key_domain.conditions`: WHERE clauses, inner-join
conditions, through semi- and anti-joins' left sides) whose columns all belong to public scans
of the main join (never a subquery's), keeps those connected to the key's scan, and joins those
scans. Without any, it is the plain ``SELECT DISTINCT`` over the key's table.

>>> import duckdb
>>> from provsql_dp.sql.catalog import Catalog
>>> from provsql_dp.sql.dialect import parse_one
>>> from provsql_dp.sql.planner import plan_query
>>> con = duckdb.connect()
>>> _ = con.execute("CREATE TABLE n(nk INT, name TEXT); CREATE TABLE s(sk INT, nk INT, sname TEXT)")
>>> plan = plan_query(parse_one("SELECT s.sname, COUNT(*) FROM s JOIN n ON s.nk = n.nk "
...     "WHERE n.name = 'PERU' AND s.sk > 0 GROUP BY s.sname"), Catalog(con))
>>> scan = next(x for x in walk(plan.child) if isinstance(x, Scan) and x.table == "s")
>>> print(distinct_sql(plan.child, scan, ["sname"]))  # doctest: +ELLIPSIS
SELECT DISTINCT t0."sname" FROM "memory"."main"."s" AS t0, "memory"."main"."n" AS t1 WHERE ...
"""

from __future__ import annotations

from sqlglot import exp

from .key_domain import conditions
from .plan import AntiJoin, Distinct, Filter, Join, Node, Project, Scan, SemiJoin, walk

__all__ = ["distinct_sql"]


def distinct_sql(node: Node, scan: Scan, columns: list[str]) -> str:
    """``SELECT DISTINCT`` of ``scan``'s ``columns`` (a public scan under ``node``), joined with
    the public scans the statement's conditions tie it to and filtered by those conditions
    (module docstring); sorted, NULLs last."""
    owner = {i: s for s in _main_scans(node) if not s.slots for i in s.ids}
    conds = [k for k in conditions(node) if _usable(k, owner)]
    part = {id(scan)}
    grown = True
    while grown:  # the public scans connected to the key's through the conditions
        grown = False
        for k in conds:
            touched = {id(owner[c.name]) for c in k.find_all(exp.Column)}
            if touched & part and not touched <= part:
                part |= touched
                grown = True
    scans = [scan] + [s for s in dict.fromkeys(owner.values()) if id(s) in part and s is not scan]
    alias = {id(s): f"t{n}" for n, s in enumerate(scans)}
    used = [_render(k, owner, alias) for k in conds
            if {id(owner[c.name]) for c in k.find_all(exp.Column)} <= part]
    cols = ", ".join(f'{alias[id(scan)]}."{c}"' for c in columns)
    froms = ", ".join(f"{s.qualified} AS {alias[id(s)]}" for s in scans)
    where = f" WHERE {' AND '.join(used)}" if used else ""
    order = ", ".join(f"{j + 1} NULLS LAST" for j in range(len(columns)))
    return f"SELECT DISTINCT {cols} FROM {froms}{where} ORDER BY {order}"


def _main_scans(node: Node) -> list[Scan]:
    """The scans of the aggregated join itself (not those of a subquery's side)."""
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Scan):
            out.append(n)
        elif isinstance(n, (Project, Distinct, Filter)):
            stack.append(n.child)
        elif isinstance(n, Join):
            stack += [n.left, n.right]
        elif isinstance(n, (SemiJoin, AntiJoin)):
            stack.append(n.left)
    return out


def _usable(k: exp.Expression, owner: dict) -> bool:
    """A deterministic conjunct over columns of public main scans only (no subquery: one could
    read a protected table without naming a column; the planner refuses them there anyway)."""
    cols = list(k.find_all(exp.Column))
    if not cols or any(c.name not in owner for c in cols):
        return False
    if any(isinstance(n, (exp.Subquery, exp.Select, exp.Exists)) for n in k.walk()):
        return False
    return not any(isinstance(f, (exp.Rand, exp.Anonymous)) for f in k.walk()) and not any(
        isinstance(f, exp.Func) and f.sql_name().upper() in ("RANDOM", "UUID", "GEN_RANDOM_UUID")
        for f in k.walk())


def _render(k: exp.Expression, owner: dict, alias: dict) -> str:
    e = k.copy()
    for c in list(e.find_all(exp.Column)):
        s = owner[c.name]
        new = exp.column(s.columns[s.ids.index(c.name)], table=alias[id(s)], quoted=True)
        if c is e:
            e = new
        else:
            c.replace(new)
    return e.sql(dialect="duckdb")
