"""Group keys whose set of values the statement proves: a public domain for computed keys.

``GROUP BY EXTRACT(year FROM o_orderdate) … WHERE o_orderdate BETWEEN DATE '1995-01-01' AND
DATE '1996-12-31'`` (TPC-H Q8) has at most the groups 1995 and 1996 — whatever the data holds,
the statement says so. Such a set is public exactly as declared group keys are (it is computed
from the statement and the declarations, never from a row), so the groups are released the
pure-ε way: every group of the set, empty or not. :func:`proved_domain` computes it for one
GROUP BY key of a plan:

1. the key's **definition** over base columns (through projections, filters, joins, DISTINCT);
2. the **range of each base column** it reads, from the conditions that hold on every row —
   conjuncts ``c op K`` / ``K op c`` / ``c BETWEEN K1 AND K2`` / ``c IN (K, …)`` of the WHERE
   clauses and inner-join conditions on the way (``K`` constant: literals, casts, ``+ INTERVAL``;
   ``c`` possibly under a cast) — and from the column's declared bounds (``SET BOUNDS``);
3. the **values**:

   * a DATE or integer column: every day or integer of its range is a candidate; DuckDB (the
     private binder, no table) evaluates the key over the candidates that pass the column's own
     conditions — so any function of a date or integer is exact: ``EXTRACT``, ``date_trunc``,
     ``year``, ``FLOOR(n / 10)``, ``n % 7``; a bare bounded column too;
   * another numeric column (DOUBLE, DECIMAL): the key must be a step — ``FLOOR``/``CEIL``,
     ``ROUND(·, d)`` with ``d ≤ 0``, a cast to an integer type — of an argument whose range
     :func:`~provsql_dp.sql.expr_range.expression_range` bounds: its values are the steps in
     that range (a superset: a step no row reaches is an empty group, released as noise).

None when anything is unknown (the key is then refused as before, or answered by partition
selection). Privacy never rests on the proof: rows whose key falls outside the released groups
are dropped by every route (as for declared keys), so a wrong proof could only lose rows.
Declared bounds are declarations, not constraints: rows outside them are dropped the same way.

>>> import duckdb
>>> from provsql_dp.sql.catalog import Catalog
>>> from provsql_dp.sql.dialect import parse_one
>>> from provsql_dp.sql.planner import plan_query
>>> con = duckdb.connect()
>>> _ = con.execute("CREATE TABLE t(d DATE, x DOUBLE)")
>>> def domain(sql):
...     plan = plan_query(parse_one(sql), Catalog(con))
...     return proved_domain(Catalog(con), plan.child, plan.group_by[0])
>>> domain("SELECT year(d), COUNT(*) FROM t "
...        "WHERE d BETWEEN DATE '1995-01-01' AND DATE '1996-12-31' GROUP BY 1")
[1995, 1996]
>>> [str(v)[:7] for v in domain("SELECT date_trunc('month', d) AS m, COUNT(*) FROM t "
...     "WHERE d >= DATE '1994-11-15' AND d < DATE '1994-11-01' + INTERVAL '3' MONTH GROUP BY m")]
['1994-11', '1994-12', '1995-01']
>>> domain("SELECT FLOOR(x / 10), COUNT(*) FROM t WHERE x >= 0 AND x < 30 GROUP BY 1")
[0.0, 1.0, 2.0, 3.0]
>>> domain("SELECT year(d), COUNT(*) FROM t WHERE d > DATE '1995-01-01' GROUP BY 1") is None
True
"""

from __future__ import annotations

import contextvars
import datetime
import math
import re

import duckdb
from sqlglot import exp

from .catalog import Catalog
from .column_declarations import ColumnDeclarations
from .expr_range import Range, expression_range
from ._timestamp_grain import (grain, guards, is_timestamp, is_timestamptz, literal, reads_at_most,
                               starts_sql)
from ._typing import _BINDER

#: the session's TimeZone while a statement's key is analysed (None: the binder's own); every
#: constant, grain start and key value is computed under it
_ZONE: contextvars.ContextVar[str | None] = contextvars.ContextVar("key_domain_zone", default=None)


def _run(sql: str) -> list:
    zone = _ZONE.get()
    return _BINDER.run(sql) if zone is None else _BINDER.run_in_zone(sql, zone)
from .plan import AntiJoin, Distinct, Filter, Join, Node, Project, Scan, SemiJoin, walk

__all__ = ["proved_domain", "conditions", "unproved_hint", "MAX_GROUPS"]

#: the most groups a proved domain may have (more: not used — each group costs a share of ε)
MAX_GROUPS = 10_000
#: the most candidate values (days, integers, their products) evaluated to find it
MAX_CANDIDATES = 1_000_000
#: the coarsest ROUND(x, -d) read as steps (a DOUBLE's largest finite value is ~1.8e308)
_MAX_DIGITS = 308

_INT = re.compile(r"^(U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?|INT[1248]|LONG|SHORT)$")
_CMP = {exp.GT: ">", exp.GTE: ">=", exp.LT: "<", exp.LTE: "<=", exp.EQ: "="}
_FLIP = {">": "<", ">=": "<=", "<": ">", "<=": ">=", "=": "="}
#: what a constant bound may be built of (evaluated in the private binder, no table)
_CONSTANT = (exp.Literal, exp.Cast, exp.TryCast, exp.DataType, exp.DataTypeParam, exp.Interval,
             exp.Var, exp.Add, exp.Sub, exp.Neg, exp.Paren, exp.Case, exp.If, exp.Between,
             exp.Null, exp.Boolean, exp.Identifier, exp.And, exp.GTE, exp.LTE, exp.Mul, exp.Div)


def proved_domain(catalog: Catalog, node: Node, key_id: str) -> list | None:
    """The sorted values the GROUP BY key ``key_id`` (an output column of ``node``) can take
    on any row, proved from the statement and the declarations, or None (module docstring)."""
    key = _definition(node, key_id)
    if key is None:
        return None
    cols = sorted({c.name for c in key.find_all(exp.Column)})
    scans = {i: (n, c, t) for n in walk(node) if isinstance(n, Scan)
             for c, i, t in zip(n.columns, n.ids, n.types or ("",) * len(n.ids))}
    if not cols or any(c not in scans for c in cols):
        return None
    # a TIMESTAMPTZ's calendar fields, a zoneless TIMESTAMPTZ literal and a cast of a DATE to
    # one are read in the session's zone: everything below runs in it, read now (plan time)
    zone = catalog.con.execute("SELECT current_setting('TimeZone')").fetchall()[0][0]
    token = _ZONE.set(zone)
    try:
        return _proved(catalog, node, key, cols, scans)
    finally:
        _ZONE.reset(token)


def _proved(catalog: Catalog, node: Node, key, cols, scans) -> list | None:
    """:func:`proved_domain` once the key, its columns and their scans are known."""
    conds = conditions(node)
    declared = ColumnDeclarations(catalog)
    ranges, own = {}, {}
    for c in cols:
        scan, column, typ = scans[c]
        own[c] = [k for k in conds if {x.name for x in k.find_all(exp.Column)} == {c}]
        bounds = [b for k in own[c] for b in _bounds(k, c, typ)]
        decl = declared.bounds(scan.schema, scan.table, column)
        if decl is not None:
            bounds += [(">=", _cast_const(decl[0], typ)), ("<=", _cast_const(decl[1], typ))]
        ranges[c] = _interval(bounds)
    try:
        listed = _listed(key)
        if listed is not None:  # a CASE of constants, a predicate: whatever the columns
            return listed
        if all(_kind(scans[c][2]) in ("date", "int", "timestamp", "timestamptz") for c in cols):
            return _enumerate(key, cols, {c: scans[c][2] for c in cols}, ranges, own)
        if len(cols) == 1 and _kind(scans[cols[0]][2]) == "number":
            return _through_steps(key, cols[0], scans[cols[0]][2], ranges[cols[0]])
    except (duckdb.Error, ArithmeticError, ValueError, OverflowError):
        return None
    return None


#: a key that is one of these is TRUE or FALSE (or NULL) on every row: its groups are the two
_PREDICATES = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Between, exp.In, exp.Is,
               exp.Like, exp.ILike, exp.And, exp.Or, exp.Not, exp.NullSafeEQ, exp.NullSafeNEQ,
               exp.Exists)


def _listed(key: exp.Expression) -> list | None:
    """The values of a key the statement lists whatever the rows: a predicate's ``[False,
    True]``, or the results of a ``CASE`` whose every result (each ``THEN``, the ``ELSE``) is a
    constant, typed as DuckDB types the ``CASE`` (the type of the ``CASE`` with every condition
    made FALSE, read by the private binder, then every result cast to it in one query: linear in
    the branches, at most :data:`MAX_GROUPS` of them). NULL is not a group:
    a row whose key is NULL (no ``ELSE``, a predicate over a NULL) is dropped, as a row outside
    declared group keys is. None for any other key.

    >>> from sqlglot import parse_one
    >>> _listed(parse_one("CASE WHEN x > 4000 THEN 'heavy' WHEN x > 3000 THEN 'mid' ELSE 'light' END"))
    ['heavy', 'light', 'mid']
    >>> [str(v) for v in _listed(parse_one("CASE WHEN x > 1 THEN 1 ELSE 2.5 END"))]  # DECIMAL
    ['1.0', '2.5']
    >>> _listed(parse_one("x > 4000")), _listed(parse_one("CASE WHEN x THEN 'y' END"))
    ([False, True], ['y'])
    >>> _listed(parse_one("CASE WHEN x > 1 THEN x ELSE 0 END")) is None  # a column's value
    True
    """
    while isinstance(key, exp.Paren):
        key = key.this
    if isinstance(key, _PREDICATES):
        return [False, True]
    if not isinstance(key, exp.Case):
        return None
    ifs = key.args.get("ifs") or []
    results = [i.args.get("true") for i in ifs] + [key.args.get("default")]
    if not ifs or not all(r is None or _constant(r) for r in results):
        return None
    if len(results) > MAX_GROUPS:
        return None
    never = exp.Case(ifs=[exp.If(this=exp.false(), true=i.args["true"].copy()) for i in ifs],
                     default=None if results[-1] is None else results[-1].copy())
    typ = _run(f"SELECT typeof({never.sql(dialect='duckdb')})")[0][0]
    casts = ", ".join(f"CAST({r.sql(dialect='duckdb')} AS {typ})" for r in results if r is not None)
    values = {v for v in _run(f"SELECT [{casts}]")[0][0] if v is not None}
    return sorted(values) or None  # only NULL: no group (refused as before)


def _constant(e: exp.Expression) -> bool:
    """Made of literals, casts and arithmetic only, as a constant bound is (:data:`_CONSTANT`;
    a type the binder lacks is refused there)."""
    return all(isinstance(n, _CONSTANT) for n in e.walk())


#: the way to groups nobody declared, appended to a GROUP BY's refusal under pure ε: partition
#: selection (``privacy.partition_selection``) answers the same statement with DELTA
SELECTION_HINT = (". Or, with an (ε, δ) budget, add DELTA δ (WITH EPSILON ε DELTA δ): partition "
                  "selection then releases the groups whose noisy count of participants clears a "
                  "threshold, and no others")


def unproved_hint(node: Node, key_id: str) -> str:
    """Advice for a computed key no domain is proved for (appended to the refusal), or "".
    DuckDB's ``//`` is integer division of integers only: on DOUBLE or DECIMAL it divides
    exactly (``5.5 // 2`` is 2.75), so ``x // w`` takes every value of ``x / w`` — no finite
    set of groups contains them; ``FLOOR(x / w)`` is the step.

    >>> import duckdb
    >>> from provsql_dp.sql.catalog import Catalog
    >>> from provsql_dp.sql.dialect import parse_one
    >>> from provsql_dp.sql.planner import plan_query
    >>> con = duckdb.connect()
    >>> _ = con.execute("CREATE TABLE t(x DOUBLE)")
    >>> plan = plan_query(parse_one("SELECT x // 10, COUNT(*) FROM t GROUP BY 1"), Catalog(con))
    >>> unproved_hint(plan.child, plan.group_by[0])[:40]
    '; DuckDB divides DOUBLE and DECIMAL exac'
    """
    key = _definition(node, key_id)
    if key is None:
        return ""
    types = {i: t for n in walk(node) if isinstance(n, Scan)
             for i, t in zip(n.ids, n.types or ("",) * len(n.ids))}
    for div in key.find_all(exp.IntDiv):
        if any(_kind(types.get(c.name, "")) == "number" for c in div.find_all(exp.Column)):
            return ("; DuckDB divides DOUBLE and DECIMAL exactly with // (5.5 // 2 is 2.75), so "
                    "x // w over them is no step with a finite set of values: write FLOOR(x / w) "
                    "under a WHERE that bounds x (// over INTEGER columns is a step)")
    return ""


def _definition(node: Node, cid: str) -> exp.Expression | None:
    """The expression ``node``'s output column ``cid`` computes, over scan column ids."""
    if isinstance(node, Scan):
        return exp.column(cid) if cid in node.ids else None
    if isinstance(node, Project):
        if cid not in node.ids:
            return None
        e = node.exprs[node.ids.index(cid)].copy()
        for col in list(e.find_all(exp.Column)):
            inner = _definition(node.child, col.name)
            if inner is None:
                return None
            if col is e:
                return inner
            col.replace(inner)
        return e
    if isinstance(node, (Filter, Distinct)):
        return _definition(node.child, cid)
    if isinstance(node, SemiJoin):
        return _definition(node.left, cid)
    if isinstance(node, Join):
        return _definition(node.left, cid) or _definition(node.right, cid)
    return None  # a union or a grouped filter: several sources, not analysed


def conditions(node: Node) -> list[exp.Expression]:
    """The conjuncts that hold on every row of ``node``, over scan column ids."""
    out: list[exp.Expression] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, (Project, Distinct)):
            stack.append(n.child)
        elif isinstance(n, Filter):
            out += _over_scans(n.predicate, n.child)
            stack.append(n.child)
        elif isinstance(n, Join):
            if n.condition is not None:
                out += _over_scans(n.condition, n)
            stack += [n.left, n.right]
        elif isinstance(n, SemiJoin):  # a condition over the left columns alone holds too
            if n.condition is not None:
                out += _over_scans(n.condition, Join(n.left, n.right, None))
            stack.append(n.left)
        elif isinstance(n, AntiJoin):  # its rows are left rows: the left's conditions hold
            stack.append(n.left)
    return out


def _over_scans(pred: exp.Expression, below: Node) -> list[exp.Expression]:
    out = []
    for conj in (pred.flatten() if isinstance(pred, exp.And) else [pred]):
        conj = conj.unnest() if isinstance(conj, exp.Paren) else conj
        if isinstance(conj, exp.And):
            out += _over_scans(conj, below)
            continue
        e = conj.copy()
        ok = True
        for col in list(e.find_all(exp.Column)):
            d = _definition(below, col.name)
            if d is None:
                ok = False
                break
            if col is e:
                e = d
            else:
                col.replace(d)
        if ok:
            out.append(e)
    return out


def _is_col(e: exp.Expression, c: str) -> bool:
    while isinstance(e, (exp.Cast, exp.TryCast, exp.Paren)):
        e = e.this
    return isinstance(e, exp.Column) and e.name == c


def _bounds(conj: exp.Expression, c: str, typ: str) -> list[tuple[str, object]]:
    """``(op, value)`` bounds on column ``c`` a conjunct states (value in ``c``'s type, the
    bound made inclusive-or-wider by the cast), or none."""
    if isinstance(conj, exp.Between) and _is_col(conj.this, c):
        lo, hi = _const(conj.args["low"], typ), _const(conj.args["high"], typ)
        return [b for b in ((">=", lo), ("<=", hi)) if b[1] is not None]
    if isinstance(conj, exp.In) and _is_col(conj.this, c) and conj.expressions:
        vals = [_const(v, typ) for v in conj.expressions]
        return [] if None in vals else [(">=", min(vals)), ("<=", max(vals))]
    op = _CMP.get(type(conj))
    if op is None:
        return []
    left, right = conj.this, conj.expression
    if not _is_col(left, c):
        left, right, op = right, left, _FLIP[op]
    if not _is_col(left, c):
        return []
    v = _const(right, typ)
    if v is None:
        return []
    if op == "=":
        return [(">=", v), ("<=", v)]
    return [(">=" if op.startswith(">") else "<=", v)]  # strict: the wider bound (a superset)


def _const(e: exp.Expression, typ: str):
    """A constant expression's value cast to ``typ`` (the private binder; nothing read), or
    None when it is not a constant made of literals, casts and interval arithmetic."""
    if any(not isinstance(n, _CONSTANT) for n in e.walk()):
        return None
    return _cast_const(e.sql(dialect="duckdb"), typ, raw=True)


def _cast_const(value, typ: str, raw: bool = False):
    text = value if raw else (f"'{value}'" if isinstance(value, str) else repr(float(value)))
    try:
        rows = _run(f"SELECT TRY_CAST(({text}) AS {typ})")
    except duckdb.Error:
        return None
    return rows[0][0] if rows and rows[0][0] is not None else None


def _interval(bounds) -> tuple | None:
    lo = [v for op, v in bounds if op == ">="] + [v for op, v in bounds if op == ">"]
    hi = [v for op, v in bounds if op == "<="] + [v for op, v in bounds if op == "<"]
    if not lo or not hi:
        return None
    try:
        return max(lo), min(hi)
    except TypeError:  # bounds of mixed kinds (a timestamp beside a date): not analysed
        return None


def _kind(typ: str) -> str:
    t = (typ or "").upper()
    if t == "DATE":
        return "date"
    if is_timestamp(t):
        return "timestamp"
    if is_timestamptz(t):
        return "timestamptz"
    if _INT.match(t):
        return "int"
    if t in ("DOUBLE", "FLOAT", "REAL") or t.startswith("DECIMAL") or t.startswith("NUMERIC"):
        return "number"
    return "other"


def _enumerate(key, cols, types, ranges, own) -> list | None:
    """Every value of ``key`` over the days / integers of its columns' ranges that pass each
    column's own conditions (DuckDB evaluates both; no table is read). A TIMESTAMP column
    contributes the starts of the grain the key reads it at (:mod:`._timestamp_grain`), filtered
    by its conditions of that grain or a coarser one only."""
    sources, total = [], 1
    for c in cols:
        r = ranges[c]
        if r is None:
            return None
        lo, hi = r
        conds = own[c]
        if _kind(types[c]) in ("timestamp", "timestamptz"):
            if not isinstance(lo, datetime.datetime) or not isinstance(hi, datetime.datetime):
                return None
            key = _unguarded(key, c, types[c], lo, hi)
            g = None if key is None else grain(key, c)
            if g is None:
                return None
            count, rng = starts_sql(c, g, lo, hi, types[c])
            n = _run(count)[0][0] if lo <= hi else 0
            conds = [k for k in (_unguarded(k, c, types[c], lo, hi) for k in conds)
                     if k is not None and reads_at_most(k, c, g)]
        elif _kind(types[c]) == "date":
            if not isinstance(lo, datetime.date) or not isinstance(hi, datetime.date):
                return None
            n = (hi - lo).days + 1
            rng = (f"SELECT CAST(range AS DATE) AS \"{c}\" FROM range(DATE '{lo.isoformat()}', "
                   f"DATE '{hi.isoformat()}' + INTERVAL 1 DAY, INTERVAL 1 DAY)")
        else:
            n = int(hi) - int(lo) + 1
            rng = (f"SELECT CAST(range AS {types[c]}) AS \"{c}\" "
                   f"FROM range({int(lo)}, {int(hi) + 1})")
        if n <= 0:
            return []
        total *= n
        if total > MAX_CANDIDATES:
            return None
        where = " AND ".join(f"({k.sql(dialect='duckdb')})" for k in conds) or "TRUE"
        sources.append(f"(SELECT * FROM ({rng}) WHERE {where})")
    rows = _run(
        f"SELECT DISTINCT k FROM (SELECT {key.sql(dialect='duckdb')} AS k FROM "
        f"{', '.join(sources)}) WHERE k IS NOT NULL ORDER BY k LIMIT {MAX_GROUPS + 1}")
    return None if len(rows) > MAX_GROUPS else [r[0] for r in rows]


def _unguarded(key, c, typ, lo, hi):
    """``key`` with its totality guards on TIMESTAMP ``c`` replaced by ``c``, when each guard is
    the identity on ``[date_trunc('year', lo), hi]`` (every row in range and every start of any
    grain), else None."""
    key = key.copy()
    for case in guards(key, c):
        cond = case.args["ifs"][0].this
        low, high = (f"TRY_CAST(({cond.args[k].sql(dialect='duckdb')}) AS {typ})"
                     for k in ("low", "high"))
        inside = _run(f"SELECT {low} <= date_trunc('year', {literal(lo, typ)}) "
                      f"AND {literal(hi, typ)} <= {high}")[0][0]
        if inside is not True or any(not isinstance(n, _CONSTANT) for n in cond.args["low"].walk()) \
                or any(not isinstance(n, _CONSTANT) for n in cond.args["high"].walk()):
            return None
        case.replace(exp.column(c))
    return key


def _through_steps(key, c, typ, r) -> list | None:
    """:func:`_steps` of ``key``, or of the outermost step inside it that holds every column
    it reads: then ``key``'s values are its outer part's over those steps (``FLOOR(x / 500) *
    500``, ``ROUND(x, -1) / 10 + 1``), each step's value put through it by the binder — the
    same function of the same steps, so the same set (a NULL left out, as a NULL key is)."""
    if not isinstance(key, (exp.Floor, exp.Ceil, exp.Round)) and not _to_int(key):
        for node in key.walk():
            if node is not key and (isinstance(node, (exp.Floor, exp.Ceil, exp.Round))
                                    or _to_int(node)):
                if len(list(key.find_all(exp.Column))) != len(list(node.find_all(exp.Column))):
                    return None  # a column outside the step: not a function of it
                return _outer(key, node, _steps(node, c, typ, r, relation=True))
    return _steps(key, c, typ, r)


def _outer(key, node, relation: str | None) -> list | None:
    """The values of ``key`` over the rows ``k`` of ``relation`` taken by its part ``node``."""
    if relation is None:
        return None
    hole = exp.column("__step")
    node.replace(hole)
    try:
        outer = key.sql(dialect="duckdb") if hole is not key else None
    finally:
        hole.replace(node)
    rows = _run(f"SELECT DISTINCT {outer} AS k FROM ({relation}) AS s(__step) ORDER BY k")
    return [r[0] for r in rows if r[0] is not None]


def _steps(key, c, typ, r, relation: bool = False) -> list | str | None:
    """The steps a step function of one DOUBLE/DECIMAL column takes over its range (the SQL of
    the relation of them, one column ``k``, with ``relation``)."""
    if r is None:
        return None
    top = key
    while isinstance(top, (exp.Paren, exp.Cast, exp.TryCast)) and not _to_int(top):
        top = top.this
    if isinstance(top, (exp.Floor, exp.Ceil)) and top.args.get("decimals") is None or _to_int(top):
        step = 1
    elif isinstance(top, exp.Round):
        d = top.args.get("decimals")
        d = 0 if d is None else _int_literal(d)
        if d is None or d > 0 or d < -_MAX_DIGITS:  # 10^9999999 took Python 12 s (h147)
            return None
        step = 10 ** (-d)
    else:
        return None
    lo, hi = float(r[0]), float(r[1])
    if _monotone(top.this, c):  # the step's ends are the key's values at the column's ends
        ends = _run(f"SELECT CAST(({top.this.sql(dialect='duckdb')}) AS DOUBLE) FROM "
                           f"(SELECT CAST({lo!r} AS {typ}) AS \"{c}\" UNION ALL "
                           f"SELECT CAST({hi!r} AS {typ}))")
        if any(e[0] is None for e in ends):
            return None
        arg = Range(min(e[0] for e in ends), max(e[0] for e in ends))
    else:
        arg = expression_range(top.this, lambda n: (lo, hi) if n == c else None)
    if arg is None or not arg.finite or arg.nan:  # a NaN key is in no list of steps
        return None
    first, last = math.floor(arg.lo / step), math.ceil(arg.hi / step)
    if isinstance(top, exp.Floor):
        last = math.floor(arg.hi)
    elif isinstance(top, exp.Ceil):
        first = math.ceil(arg.lo)
    if last - first + 1 > MAX_GROUPS:
        return None
    typ_key = _run(f"SELECT typeof({key.sql(dialect='duckdb')}) FROM "
                          f"(SELECT NULL::{typ} AS \"{c}\")")[0][0]
    values = (f"SELECT DISTINCT CAST(range * {step} AS {typ_key}) AS k "
              f"FROM range({first}, {last + 1})")
    if relation:
        return values
    return [r[0] for r in _run(values + " ORDER BY k")]


def _monotone(e: exp.Expression, c: str) -> bool:
    """``e`` reads ``c`` once, through sums, products and quotients by constants and casts to
    numbers: monotone in ``c``, so its range is spanned by its values at ``c``'s ends. Not
    ``10 / x`` (``c`` divides: over ``[-1, 1]`` the ends give ±10, ``x = 0.01`` gives 1000).

    >>> import sqlglot
    >>> [_monotone(sqlglot.parse_one(t, read="duckdb"), "x") for t in ("(x + 1) / 10", "10 / x")]
    [True, False]
    """
    cols = list(e.find_all(exp.Column))
    if any(isinstance(d, exp.Div) and any(True for _ in d.expression.find_all(exp.Column))
           for d in e.find_all(exp.Div)):
        return False
    return len(cols) == 1 and cols[0].name == c and all(
        isinstance(n, (exp.Column, exp.Identifier, exp.Literal, exp.Add, exp.Sub, exp.Mul,
                       exp.Div, exp.Neg, exp.Paren, exp.DataType, exp.DataTypeParam)) or isinstance(
            n, (exp.Cast, exp.TryCast)) and _kind(n.to.sql(dialect="duckdb")) in ("int", "number")
        for n in e.walk())


def _to_int(e: exp.Expression) -> bool:
    return isinstance(e, (exp.Cast, exp.TryCast)) and _kind(e.to.sql(dialect="duckdb")) == "int"


def _int_literal(e: exp.Expression) -> int | None:
    neg = isinstance(e, exp.Neg)
    e = e.this if neg else e
    if isinstance(e, exp.Literal) and not e.is_string and re.fullmatch(r"\d+", e.this):
        return -int(e.this) if neg else int(e.this)
    return None
