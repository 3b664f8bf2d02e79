"""From a sqlglot syntax tree to a plan of positive relational algebra (``plan``).

One pure entry point, :func:`plan_query`, reads the tree top to bottom: WITH, FROM and joins,
WHERE, GROUP BY, the select list, DISTINCT, set operations, and finally a top-level linear
aggregate. Every construct outside positive relational algebra is refused with an
:class:`~provsql_dp.errors.UnsupportedQueryError` that names it and says why — non-monotone
constructs could make a private answer's sensitivity bound wrong, so they are never approximated.

>>> import duckdb
>>> from provsql_dp.sql.catalog import Catalog
>>> from provsql_dp.sql.dialect import parse_one
>>> con = duckdb.connect()
>>> _ = con.execute("CREATE TABLE t(a INT, b INT)")
>>> node = plan_query(parse_one("SELECT DISTINCT a FROM t WHERE b > 1"), Catalog(con))
>>> from provsql_dp.sql.plan import explain
>>> print(explain(node))
Distinct
  Project [v0→v2]
    Filter v1 > 1
      Scan main.t [a→v0, b→v1]
"""

from __future__ import annotations

import itertools

import sqlglot
from sqlglot import exp

from ..errors import ProgrammingError, UnsupportedQueryError
from ._aggregate_hooks import bounded_argument, column_bounds, split_filter
from ._names import alias_columns, analyst_names, output_name
from ._set_types import unify_branches
from .catalog import SCHEMA, Catalog
from .foreign_owners import scan_owners
from .functions import refuse_shadowed_builtins
from .plan import (Aggregate, AggregateColumn, Aggregates, Distinct, Filter, Join, Node, OneRow,
                   Project, Scan, Union)
from .scalar import scalar_expression
from .grouped import plan_grouped
from .semijoin import plan_where
from .from_semijoin import is_from_semijoin, plan_from_semijoin
from ._not_null import collated_columns, not_null_columns
from .values import plan_values
from .view_names import find_in_view
from .size_model import ChainGrowth, RowBudget
from .scope import NON_MONOTONE, NOT_YET, Scope, Source, refuse
from ._typing import finite_predicate
from .total import expression_types, make_total, total_weight

__all__ = ["plan_query", "Planner", "is_aggregate_query"]

_MAX_VIEW_DEPTH = 32

#: where an expression is a condition (its result must be BOOLEAN; NULL counts as false)
_PREDICATES = {"WHERE", "a join condition", "FILTER (WHERE …)"}


def plan_query(tree: exp.Expression, catalog: Catalog) -> Node:
    """Plan a query (a SELECT or set operation, optionally ending in a linear aggregate)."""
    return Planner(catalog).plan(tree)


def is_aggregate_query(tree: exp.Expression) -> bool:
    """Whether the top-level select list holds an aggregate (COUNT, SUM, …) outside a window."""
    return isinstance(tree, exp.Select) and any(
        _has_plain_aggregate(e) for e in tree.expressions
    )


def _has_plain_aggregate(e: exp.Expression) -> bool:
    return any(a.find_ancestor(exp.Window) is None for a in e.find_all(exp.AggFunc))


class Planner:
    """Turns one query's syntax tree into a plan; holds the id counter and the CTE environment."""

    def __init__(self, catalog: Catalog):
        refuse_shadowed_builtins(catalog)  # decided from the schema alone, before any charge
        self.catalog = catalog
        self._ids = itertools.count()
        self._views: list[tuple[str, str]] = []  # the (database, schema) of each view entered
        self._tables: dict[tuple[str, ...], object] = {}
        self._protected = {
            (p.schema.lower(), p.table.lower()): p for p in catalog.list_protected()
        }
        #: the DuckDB type of every plan id: total evaluation (``total.make_total``) is typed
        self.types: dict[str, str] = {}
        #: the statement's work per row, bounded by the size model (``size_model.RowBudget``)
        self.row_budget = RowBudget()
        self.chain = ChainGrowth()  # values grown along CTEs, subqueries and views (size_model)

    def _project(self, child: Node, exprs, ids, names) -> Project:
        """A Project node, recording the types of the columns it computes."""
        exprs, ids = tuple(exprs), tuple(ids)
        if exprs:
            self.chain.add(exprs, self.types, names)
            self.types.update(zip(ids, expression_types(exprs, self.types)))
        return Project(child, exprs, ids, tuple(names))

    def _scalar(self, e: exp.Expression, scope: Scope, where: str) -> exp.Expression:
        """An analyst's expression over plan ids, rewritten so that it cannot fail on any row
        (a failing row behaves as NULL) and checked against the allow-list of functions."""
        rewritten = scalar_expression(e, scope, where)
        try:
            return make_total(rewritten, self.types, predicate=where in _PREDICATES,
                              budget=self.row_budget)
        except (UnsupportedQueryError, ProgrammingError) as err:  # in the analyst's names
            raise type(err)(analyst_names(str(err), scope)) from err

    def _find_table(self, parts: list[str]):  # in a view: its own schema first (view_names)
        key = (*self._views[-1:], *(p.lower() for p in parts))
        if key not in self._tables:
            self._tables[key] = find_in_view(self.catalog, parts, key[0] if self._views else None)
        return self._tables[key]

    def new_id(self) -> str:
        return f"v{next(self._ids)}"

    # ------------------------------------------------------------------ entry points
    def plan(self, tree: exp.Expression) -> Node:
        while isinstance(tree, exp.Subquery) and not tree.alias and not any(
            tree.args.get(k) for k in ("limit", "offset", "order")
        ):
            tree = tree.this  # (SELECT …) at the top is just the query
        if isinstance(tree, exp.Select) and is_aggregate_query(tree):
            return self._plan_aggregate(tree, {})
        if not isinstance(tree, exp.Query):
            raise refuse(f"the statement {type(tree).__name__.upper()}",
                         "only SELECT queries can be answered privately")
        self._check_modifiers(tree, top=True)
        return self._plan_query(tree, {}, top=True)

    # ------------------------------------------------------------------ queries
    def _plan_query(self, q: exp.Expression, env: dict, top: bool = False) -> Node:
        if isinstance(q, exp.Subquery):
            self._check_modifiers(q, top=False)
            return self._plan_query(q.this, env)
        if not top:
            self._check_modifiers(q, top=False)
        env = self._with(q, env)
        if isinstance(q, exp.Select):
            if is_aggregate_query(q):
                raise refuse("an aggregate below the top of the query", NON_MONOTONE,
                             "Only one final COUNT or SUM over the whole query is supported")
            return self._plan_select(q, env)
        if isinstance(q, exp.Except):
            raise refuse("EXCEPT", NON_MONOTONE)
        if isinstance(q, exp.Union):
            left = self._plan_query(q.this, env)
            right = self._plan_query(q.expression, env)
            self._check_arity("UNION", left, right)
            # branches of different types are converted by our plan (TRY_CAST), never by DuckDB
            (left, right), types = unify_branches(self, [left, right], "UNION")
            node: Node = Union((left, right), tuple(self.new_id() for _ in left.ids), left.names)
            self.types.update(zip(node.ids, types))
            return Distinct(node) if q.args.get("distinct") else node
        if isinstance(q, exp.Intersect):
            if not q.args.get("distinct"):
                raise refuse("INTERSECT ALL", "bag intersection keeps min(m, n) copies, which is not a join",
                             "Use INTERSECT (set semantics)")
            left = self._plan_query(q.this, env)
            right = self._plan_query(q.expression, env)
            self._check_arity("INTERSECT", left, right)
            (left, right), _ = unify_branches(self, [left, right], "INTERSECT")
            cond = exp.and_(*[
                exp.NullSafeEQ(this=exp.column(a), expression=exp.column(b))
                for a, b in zip(left.ids, right.ids)
            ])
            joined = Join(left, right, cond)
            ids = tuple(self.new_id() for _ in left.ids)
            proj = self._project(joined, tuple(exp.column(i) for i in left.ids), ids, left.names)
            return Distinct(proj)
        if isinstance(q, exp.Values):
            return plan_values(self, q)
        raise refuse(f"the query form {type(q).__name__.upper()}")

    def _check_arity(self, op: str, left: Node, right: Node) -> None:
        if len(left.ids) != len(right.ids):
            raise ProgrammingError(
                f"{op} needs both sides to have the same number of columns ({len(left.ids)} vs {len(right.ids)})"
            )

    def _check_modifiers(self, q: exp.Expression, top: bool) -> None:
        if q.args.get("limit") or q.args.get("offset") or q.args.get("fetch"):
            raise refuse("LIMIT/OFFSET", NON_MONOTONE)
        if q.args.get("order") and not top:
            raise refuse("ORDER BY below the top of the query", NOT_YET,
                         "Order only the final result (it does not change a count or sum)")

    def _with(self, q: exp.Expression, env: dict) -> dict:
        with_ = q.args.get("with_") or q.args.get("with")
        if not with_:
            return env
        if with_.args.get("recursive"):
            raise refuse("WITH RECURSIVE", "a recursive query is not positive relational algebra")
        env = dict(env)
        for cte in with_.expressions:
            name = cte.alias_or_name.lower()
            env[name] = (cte.this, dict(env), alias_columns(cte.args.get("alias")))
        return env

    # ------------------------------------------------------------------ SELECT
    def _from(self, sel: exp.Select, env: dict) -> tuple[Node | None, Scope]:
        scope = Scope()
        from_ = sel.args.get("from_") or sel.args.get("from")
        if from_ is None:  # constants: projected from one public row (sql.values)
            return OneRow(), scope
        node, src = self._source(from_.this, env)
        scope.add(src)
        for j in sel.args.get("joins") or []:
            node = self._join(node, scope, j, env)
        return node, scope

    def _join(self, left: Node, scope: Scope, j: exp.Join, env: dict) -> Node:
        side = (j.args.get("side") or "").upper()
        kind = (j.args.get("kind") or "").upper()
        method = (j.args.get("method") or "").upper()
        if is_from_semijoin(j):  # as EXISTS / NOT EXISTS (sql.from_semijoin)
            return plan_from_semijoin(self, left, scope, j, env)
        if side in ("LEFT", "RIGHT", "FULL"):
            raise refuse(f"{side} OUTER JOIN", NON_MONOTONE, "Use an inner join")
        if kind in ("SEMI", "ANTI", "ASOF", "POSITIONAL"):
            reason = NON_MONOTONE if kind == "ANTI" else NOT_YET
            raise refuse(f"{kind} JOIN", reason)
        if kind not in ("", "INNER", "CROSS"):
            raise refuse(f"{kind} JOIN")
        if method:
            raise refuse(f"{method} JOIN", hint="write the join condition with ON or USING")
        if isinstance(j.this, exp.Lateral) or j.args.get("lateral"):
            raise refuse("LATERAL")
        right, src = self._source(j.this, env)
        if kind == "CROSS" and (j.args.get("on") or j.args.get("using")):
            raise ProgrammingError("CROSS JOIN takes no ON or USING clause")
        cond = None
        if j.args.get("using"):
            left_scope = Scope(list(scope.sources), dict(scope.using))
            right_scope = Scope([src])
            parts = []
            for ident in j.args["using"]:
                name = ident.name if isinstance(ident, exp.Expression) else str(ident)
                lid = left_scope.resolve(exp.column(name))
                rid = right_scope.resolve(exp.column(name))
                parts.append(exp.EQ(this=exp.column(lid), expression=exp.column(rid)))
                scope.using[name.lower()] = lid
                src.hidden.add(rid)
            scope.add(src)  # the equalities may compare two types: made total like any other
            cond = make_total(exp.and_(*parts), self.types, predicate=True, budget=self.row_budget)
        else:
            scope.add(src)
            if j.args.get("on") is not None:
                cond = self._scalar(j.args["on"], scope, "a join condition")
        return Join(left, right, cond)

    def _source(self, t: exp.Expression, env: dict) -> tuple[Node, Source]:
        alias_cols = alias_columns(t.args.get("alias"))
        if isinstance(t, exp.Subquery):
            node = self._plan_query(t, env)
            alias = t.alias or "unnamed_subquery"
            return node, self._rename(node, alias, alias_cols)
        if isinstance(t, exp.Table):
            if not isinstance(t.this, exp.Identifier):
                raise refuse(f"the table function {t.this.sql(dialect='duckdb')}",
                             hint="load the data into a table first")
            parts = [p.name for p in t.parts]
            alias = t.alias or parts[-1]
            if len(parts) == 1 and parts[0].lower() in env:
                body, cte_env, cte_cols = env[parts[0].lower()]
                node = self._plan_query(body, cte_env)
                return node, self._rename(node, alias, alias_cols or cte_cols)
            info = self._find_table(parts)
            if info is None:
                raise ProgrammingError(
                    f"table {'.'.join(parts)!r} does not exist (check the name, or create it first)"
                )
            if info.schema == SCHEMA:
                raise refuse("reading the provsql_dp catalog tables in a private query")
            if info.view_sql is not None:
                return self._view(info, alias, alias_cols)
            prot = self._protected.get((info.schema.lower(), info.name.lower()))
            ids = tuple(self.new_id() for _ in info.columns)
            names = info.columns
            if alias_cols:
                names = alias_cols + info.columns[len(alias_cols):]
            slots, source, ref = scan_owners(self.catalog, prot)  # along foreign keys, if any
            scan = Scan(
                table=info.name, schema=info.schema, catalog=info.catalog,
                columns=info.columns,
                ids=ids,
                names=names,
                slots=slots, types=info.types, source=source, owner_ref=ref,
                unique_keys=self.catalog.unique_keys(info),
                not_null=not_null_columns(self.catalog, info),
                collated=collated_columns(self.catalog, info),
            )
            self.types.update(zip(ids, info.types))
            return scan, Source(alias, names, ids)
        if isinstance(t, exp.Lateral):
            raise refuse("LATERAL")
        if isinstance(t, exp.Values):
            node = plan_values(self, t)
            return node, self._rename(node, t.alias or "valueslist", alias_cols)
        if isinstance(t, exp.Unnest):
            raise refuse("UNNEST")
        raise refuse(f"the FROM item {t.sql(dialect='duckdb')}")

    def _view(self, info, alias: str, alias_cols: tuple[str, ...]) -> tuple[Node, Source]:
        """A view is planned from its definition, so provenance flows through it."""
        if len(self._views) > _MAX_VIEW_DEPTH:
            raise refuse(f"view {info.name!r}", "views are nested too deeply")
        try:
            tree = sqlglot.parse_one(info.view_sql, read="duckdb")
        except sqlglot.errors.ParseError as e:
            raise refuse(f"view {info.name!r}", f"its definition could not be parsed ({e})") from e
        body = tree.expression if isinstance(tree, exp.Create) else tree
        view_cols = ()
        if isinstance(tree, exp.Create) and isinstance(tree.this, exp.Schema):
            view_cols = tuple(c.name for c in tree.this.expressions)
        self._views.append((info.catalog, info.schema))
        try:
            node = self._plan_query(body, {})
        finally:
            self._views.pop()
        return node, self._rename(node, alias, alias_cols or view_cols or info.columns)

    def _rename(self, node: Node, alias: str, cols: tuple[str, ...]) -> Source:
        names = node.names
        if cols:
            if len(cols) > len(names):
                raise ProgrammingError(
                    f"{alias!r} has {len(names)} columns but {len(cols)} column aliases were given"
                )
            names = tuple(cols) + tuple(names[len(cols):])
        return Source(alias, tuple(names), node.ids)

    def _plan_select(self, sel: exp.Select, env: dict) -> Node:
        if sel.args.get("having") is not None and sel.args.get("group") is not None:
            return plan_grouped(self, sel, env)  # GROUP BY … HAVING below the top (sql.grouped)
        self._check_select_clauses(sel)
        node, scope = self._from(sel, env)
        if sel.args.get("where") is not None:  # IN / EXISTS: semi-joins (sql.semijoin)
            node = plan_where(self, sel.args["where"].this, node, scope, env)[0]
        if sel.args.get("group") is not None:
            return self._group_as_distinct(sel, node, scope)
        exprs, ids, names = self._select_list(sel, scope)
        node = self._project(node, exprs, ids, names)
        distinct = sel.args.get("distinct")
        if distinct is not None:
            if distinct.args.get("on") is not None:
                raise refuse("DISTINCT ON", NON_MONOTONE)
            node = Distinct(node)
        return node

    def _check_select_clauses(self, sel: exp.Select) -> None:
        if sel.args.get("having") is not None:
            raise refuse("HAVING", NON_MONOTONE)
        if sel.args.get("qualify") is not None:
            raise refuse("QUALIFY", NON_MONOTONE)
        if sel.args.get("windows"):
            raise refuse("window functions", NON_MONOTONE)
        for e in sel.expressions:
            if isinstance(e, exp.Star) and (e.args.get("except") or e.args.get("replace") or e.args.get("rename")):
                raise refuse("SELECT * EXCLUDE/REPLACE/RENAME")

    def _select_list(self, sel: exp.Select, scope: Scope):
        exprs, ids, names = [], [], []
        for item in sel.expressions:
            if isinstance(item, exp.Star):
                n, i = scope.star()
            elif isinstance(item, exp.Column) and isinstance(item.this, exp.Star):
                n, i = scope.star(item.table)
            else:
                e = self._scalar(item.unalias() if isinstance(item, exp.Alias) else item, scope,
                               "the select list")
                exprs.append(e)
                ids.append(self.new_id())
                names.append(output_name(item))
                continue
            for name, cid in zip(n, i):
                exprs.append(exp.column(cid))
                ids.append(self.new_id())
                names.append(name)
        if not exprs:
            raise ProgrammingError("the select list is empty")
        return tuple(exprs), tuple(ids), tuple(names)

    def _group_keys(self, sel: exp.Select, scope: Scope):
        """The GROUP BY keys as (expression over ids, name); aliases and positions allowed."""
        group = sel.args["group"]
        if (
            group.args.get("rollup") or group.args.get("cube") or group.args.get("grouping_sets")
            or any(isinstance(g, (exp.Rollup, exp.Cube, exp.GroupingSets)) for g in group.expressions)
        ):
            raise refuse("ROLLUP/CUBE/GROUPING SETS")
        if group.args.get("all") or not group.expressions:
            raise refuse("GROUP BY ALL", hint="list the grouping columns")
        aliases = {
            item.alias.lower(): item.unalias() for item in sel.expressions if isinstance(item, exp.Alias)
        }
        keys = []
        for g in group.expressions:
            src = g
            if isinstance(g, exp.Literal) and not g.is_string:
                pos = int(g.this)
                if not 1 <= pos <= len(sel.expressions):
                    raise ProgrammingError(f"GROUP BY position {pos} is out of range")
                src = sel.expressions[pos - 1].unalias()
            elif isinstance(g, exp.Column) and not g.table and g.name.lower() in aliases:
                try:
                    scope.resolve(g)
                except ProgrammingError:
                    src = aliases[g.name.lower()]
            keys.append(src)
        return keys

    def _group_as_distinct(self, sel: exp.Select, node: Node, scope: Scope) -> Node:
        """``GROUP BY`` without aggregates: one tuple per group (duplicate elimination on the
        keys), then the select list computed from the keys."""
        keys = self._group_keys(sel, scope)
        key_exprs = [self._scalar(k, scope, "GROUP BY") for k in keys]
        key_ids = tuple(self.new_id() for _ in keys)
        groups = Distinct(self._project(node, tuple(key_exprs), key_ids, tuple(output_name(k) for k in keys)))
        by_sql = {e.sql(dialect="duckdb"): i for e, i in zip(key_exprs, key_ids)}
        exprs, ids, names = [], [], []
        for item in sel.expressions:
            if isinstance(item, exp.Star) or (isinstance(item, exp.Column) and isinstance(item.this, exp.Star)):
                raise refuse("SELECT * with GROUP BY", hint="select the grouping expressions")
            body = self._scalar(item.unalias() if isinstance(item, exp.Alias) else item, scope,
                              "the select list")

            def over_keys(n: exp.Expression) -> exp.Expression:
                key = by_sql.get(n.sql(dialect="duckdb"))
                return exp.column(key) if key is not None else n

            body = body.transform(over_keys)
            if any(c.name not in key_ids for c in body.find_all(exp.Column)):
                raise refuse(
                    f"the select item {item.sql(dialect='duckdb')} with GROUP BY",
                    hint="select only expressions of the grouping keys, or use SELECT DISTINCT",
                )
            exprs.append(body)
            ids.append(self.new_id())
            names.append(output_name(item))
        return self._project(groups, tuple(exprs), tuple(ids), tuple(names))

    # ------------------------------------------------------------------ the final aggregate
    def _plan_aggregate(self, sel: exp.Select, env: dict) -> Aggregate | Aggregates:
        self._check_modifiers(sel, top=True)
        env = self._with(sel, env)
        self._check_select_clauses(sel)
        if sel.args.get("distinct") is not None:
            raise refuse("SELECT DISTINCT with an aggregate")
        node, scope = self._from(sel, env)
        if sel.args.get("where") is not None:
            node = plan_where(self, sel.args["where"].this, node, scope, env)[0]
        for e in sel.expressions:
            if e.find(exp.Window) is not None:
                raise refuse("window functions", NON_MONOTONE)
        aggs = [e for e in sel.expressions if e.find(exp.AggFunc) is not None]
        for item in aggs:
            self._check_aggregate(split_filter(item.unalias())[0])
        keys = self._group_keys(sel, scope) if sel.args.get("group") is not None else []
        key_sql = [k.sql(dialect="duckdb").lower() for k in keys]
        for item in sel.expressions:
            if any(item is a for a in aggs):
                continue
            body = item.unalias() if isinstance(item, exp.Alias) else item
            if body.sql(dialect="duckdb").lower() not in key_sql:
                raise refuse(f"the select item {item.sql(dialect='duckdb')} next to an aggregate",
                             hint="select only GROUP BY keys and COUNT, SUM or AVG aggregates")
        parts, columns = [], []
        for item in aggs:
            agg = item.unalias() if isinstance(item, exp.Alias) else item
            label = item.alias if isinstance(item, exp.Alias) else agg.sql(dialect="duckdb")
            agg, cond = split_filter(agg)  # FILTER (WHERE c): this aggregate's rows only
            rows = node if cond is None else Filter(node, self._scalar(cond, scope, "FILTER (WHERE …)"))
            if isinstance(agg, exp.Avg):
                # AVG(x) = SUM(x) / COUNT(x) over the finite x, each with half of the column's ε
                count = exp.Count(this=agg.this.copy())
                start = len(parts)
                parts.append(self._one_aggregate(exp.Sum(this=agg.this.copy()), f"SUM for {label}",
                                                 rows, scope, keys))
                parts.append(self._one_aggregate(count, f"COUNT for {label}", rows, scope, keys,
                                                 finite=True))
                columns.append(AggregateColumn(label, "avg", (start, start + 1)))
            else:
                columns.append(AggregateColumn(label, agg.key, (len(parts),)))
                parts.append(self._one_aggregate(agg, label, rows, scope, keys))
        if len(parts) == 1:
            return parts[0]
        return Aggregates(tuple(parts), tuple(columns))

    def _check_aggregate(self, agg: exp.Expression) -> None:
        if not isinstance(agg, (exp.Count, exp.Sum, exp.Avg)):
            if isinstance(agg, exp.AggFunc):
                raise refuse(f"the aggregate {agg.sql(dialect='duckdb')}",
                             "only linear aggregates (COUNT, SUM) and AVG (a SUM over a COUNT) "
                             "have a sensitivity the mechanisms bound")
            raise refuse(f"the expression {agg.sql(dialect='duckdb')} around an aggregate",
                         hint="select the bare COUNT, SUM or AVG and transform the released value yourself")
        if isinstance(agg, (exp.Sum, exp.Avg)) and isinstance(agg.this, exp.Distinct):
            name = "SUM" if isinstance(agg, exp.Sum) else "AVG"
            raise refuse(f"{name}(DISTINCT …)", hint=f"use {name} over a SELECT DISTINCT subquery")

    def _one_aggregate(self, agg: exp.Expression, label: str, node: Node, scope: Scope,
                       keys: list, finite: bool = False) -> Aggregate:
        """One COUNT or SUM over ``node``, grouped by ``keys``: its own plan. ``finite`` (an AVG's
        COUNT(x)): count the rows whose x, read as its SUM reads it, is finite (those it adds)."""
        key_exprs = [self._scalar(k, scope, "GROUP BY") for k in keys]
        key_ids = tuple(self.new_id() for _ in keys)
        key_names = tuple(output_name(k) for k in keys)
        arg = agg.this
        distinct = isinstance(arg, exp.Distinct)
        if isinstance(agg, exp.Count):
            if distinct:
                cols = [self._scalar(e, scope, "COUNT(DISTINCT …)") for e in arg.expressions]
                ids = tuple(self.new_id() for _ in cols)
                names = tuple(output_name(e) for e in arg.expressions)
                proj = self._project(node, tuple(key_exprs) + tuple(cols), key_ids + ids, key_names + names)
                nonnull = exp.and_(*[exp.Not(this=exp.Is(this=exp.column(i), expression=exp.Null())) for i in ids])
                return Aggregate(Distinct(Filter(proj, nonnull)), "count", None, key_ids, label)
            star_names, star_ids = scope.star()
            child = self._project(node, tuple(key_exprs) + tuple(exp.column(i) for i in star_ids),
                                  key_ids + star_ids, key_names + star_names)
            if arg is None or isinstance(arg, exp.Star):
                return Aggregate(child, "count", None, key_ids, label)
            if finite:  # the argument as its SUM reads it: declared-bounds columns clamped
                weight = total_weight(bounded_argument(scalar_expression(arg, scope, "SUM(…)"), lambda c: column_bounds(
                    self.catalog, node, c), self.types.get)[0], self.types, self.row_budget)
                filtered = Filter(node, finite_predicate(weight))
            else:
                col = self._scalar(arg, scope, "COUNT(…)")
                filtered = Filter(node, exp.Not(this=exp.Is(this=col, expression=exp.Null())))
            child = self._project(filtered, child.exprs, child.ids, child.names)
            return Aggregate(child, "count", None, key_ids, label)
        # SUM; an argument that is no bare column may have a range the statement proves
        raw, proved = bounded_argument(scalar_expression(arg, scope, "SUM(…)"), lambda c: column_bounds(self.catalog, node, c), self.types.get)
        weight = total_weight(raw, self.types, self.row_budget)
        star_names, star_ids = scope.star()
        wid = self.new_id()
        bounds = column_bounds(self.catalog, Project(node, (raw,), (wid,), ("__weight",)), wid) or proved  # bare column
        child = self._project(
            node,
            tuple(key_exprs) + tuple(exp.column(i) for i in star_ids) + (weight,),
            key_ids + star_ids + (wid,),
            key_names + star_names + ("__weight",),
        )
        return Aggregate(child, "sum", exp.column(wid), key_ids, label, bounds)

