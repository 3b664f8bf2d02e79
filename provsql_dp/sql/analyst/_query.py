"""Compile one analyst query over public tables: resolve every name by scope, check it, emit ours.

A table reference resolves to the CTE visible in *its* scope (sqlglot's scope analysis,
:func:`sqlglot.optimizer.scope.traverse_scope`), else to a table of the catalog. Then:

* a CTE is renamed to a fresh name (``_pdp_cte_<n>``, no table's name), in its definition and in every reference
  resolved to it (the reference keeps its old name as its alias, so ``p.col`` still binds);
* a real table is checked (not protected, not the provsql_dp catalog, a table of the database)
  and replaced by its fully qualified, quoted name (``"memory"."main"."t" AS t``);
* a view is replaced by its own body, compiled the same way (recursively), as a subquery with
  the view's column names: DuckDB never expands a view we did not check;
* a table function, a file path, a user-defined function, or a scalar function off the
  allow-list of :mod:`provsql_dp.sql.functions` is refused.

Anything sqlglot's scope analysis does not reach counts as a real table (the conservative
side): whatever DuckDB's binder does with the emitted text, it can read only the tables we
checked, because a fresh CTE name is either the CTE we meant or no table at all.

>>> import duckdb
>>> from provsql_dp.sql.catalog import Catalog
>>> from provsql_dp.sql import dialect as d
>>> con = duckdb.connect()
>>> _ = con.execute("CREATE TABLE pub(a INT)")
>>> sql, _ = compile_query(Catalog(con), d.parse_one("WITH pub AS (SELECT 1 AS a) SELECT a FROM pub"))
>>> sql.startswith('WITH "_pdp_cte_'), '"memory"' in sql
(True, False)
>>> compile_query(Catalog(con), d.parse_one("SELECT a FROM pub"))[0]
'SELECT a FROM "memory"."main"."pub" AS pub'
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import Scope, traverse_scope

from ...errors import PrivacyError, ProgrammingError, UnsupportedQueryError
from ..catalog import SCHEMA, Catalog, TableInfo
from ..dialect import ProvDP
from ..functions import ALLOWED_FUNCTIONS, check_node, function_name
from ..size_model import ChainGrowth, _is_string_type, check_size
from ..view_names import find_in_view
from ._concat_bound import CONCATENATING, check_concatenations

__all__ = ["compile_query", "refuse", "MAX_VIEW_DEPTH"]

MAX_VIEW_DEPTH = 32
_FRESH = "_pdp_cte_"

# arguments of a table reference we emit again as they are; any other (time travel, samples,
# hints, …) is refused rather than passed on
_TABLE_ARGS = {"this", "db", "catalog", "alias", "pivots", "joins", "laterals"}

# syntax that is neither a function nor a leaf: checked through its parts
_STRUCTURE = (exp.Query, exp.Subquery, exp.From, exp.Join, exp.Where, exp.Group, exp.Having,
              exp.Qualify, exp.Order, exp.Ordered, exp.Limit, exp.Offset, exp.With, exp.CTE,
              exp.Table, exp.TableAlias, exp.Alias, exp.Distinct, exp.AggFunc, exp.Window,
              exp.WindowSpec, exp.Filter, exp.Tuple, exp.Pivot, exp.PivotAlias,
              exp.UnpivotColumns, exp.Lateral, exp.Exists, exp.Any, exp.All, exp.Cube,
              exp.Rollup, exp.GroupingSets, exp.Column, exp.Star, exp.Identifier, exp.Values,
              exp.Fetch, exp.Literal, exp.Null, exp.Boolean, exp.Paren, exp.DataType,
              exp.DataTypeParam, exp.Var)
# window functions that are not aggregates: they read only the rows of their partition
_WINDOW_ONLY = {"row_number", "ntile"}


def refuse(what: str) -> PrivacyError:
    """The refusal of a statement kind (the wording every analyst refusal shares)."""
    return PrivacyError(
        f"an analyst cannot run {what}: analysts get private answers only (… WITH EPSILON ε) "
        "and may read public tables"
    )


class _Compiler:
    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self.protected = {(p.schema.lower(), p.table.lower()) for p in catalog.list_protected()}
        self.fresh: set[str] = set()
        self._n = 0
        self.checked: set[tuple[str, str, str]] = set()
        self.infos: dict[tuple[str, str, str], TableInfo] = {}
        self.growth = 1  # the growth along relations of the last (outermost) query checked
        self._user_functions: set[str] | None = None

    # ------------------------------------------------------------------ names
    def query(self, tree: exp.Expression, depth: int = 0, home: tuple[str, str] | None = None):
        """Resolve, check and rewrite ``tree`` in place (``home``: a view's catalog and schema,
        where its unqualified names are looked up first)."""
        if depth > MAX_VIEW_DEPTH:
            raise PrivacyError("views are nested too deeply to be checked")
        if tree.find(exp.Command) is not None:
            raise refuse("this statement: a part of it is not SQL that can be checked")
        _lower_names(tree)
        targets = _cte_targets(tree)
        ctes = {id(c): self._fresh_name() for c in tree.find_all(exp.CTE)}
        for cte in list(tree.find_all(exp.CTE)):
            alias = cte.args.get("alias")
            cols = alias.args.get("columns") if alias is not None else None
            cte.set("alias", exp.TableAlias(this=exp.to_identifier(ctes[id(cte)], quoted=True),
                                            columns=cols))
        for t in list(tree.find_all(exp.Table)):
            if isinstance(t.parent, exp.DataType):
                continue
            cte = targets.get(id(t))
            if cte is not None and id(cte) in ctes:
                self._to_cte(t, ctes[id(cte)])
            else:
                self._to_table(t, depth, home)
        self._check_functions(tree)
        # bounded cost per row, before DuckDB binds (and folds) anything
        self.growth = _check_sizes(tree)
        return tree

    def _fresh_name(self) -> str:
        # deterministic (an error text must not differ between runs); never a table's name
        taken = self.catalog.cached(("analyst", "fresh names taken"), lambda: {
            r[0].lower() for r in self.catalog.con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE starts_with(lower(table_name), ?) "
                "UNION ALL SELECT view_name FROM duckdb_views() "
                "WHERE starts_with(lower(view_name), ?)", [_FRESH, _FRESH]).fetchall()})
        self._n += 1
        while f"{_FRESH}{self._n}" in taken:
            self._n += 1
        name = f"{_FRESH}{self._n}"
        self.fresh.add(name)
        return name

    def _to_cte(self, t: exp.Table, fresh: str) -> None:
        old = t.name
        t.set("this", exp.to_identifier(fresh, quoted=True))
        t.set("db", None)
        t.set("catalog", None)
        if not t.alias:
            t.set("alias", exp.TableAlias(this=exp.to_identifier(old)))

    def _to_table(self, t: exp.Table, depth: int, home) -> None:
        if not isinstance(t.this, exp.Identifier):
            raise PrivacyError(
                f"an analyst cannot use the table function {t.this.sql(dialect='duckdb')}: "
                "only tables of the database can be read")
        extra = sorted(k for k, v in t.args.items() if v and k not in _TABLE_ARGS)
        if extra:
            raise refuse(f"a table reference with {extra[0].upper()} ({t.sql(dialect='duckdb')})")
        parts = [p.name for p in t.parts]
        info = find_in_view(self.catalog, parts, home)
        if info is None:
            raise PrivacyError(
                f"an analyst can read only tables of the database; {'.'.join(parts)!r} is not one")
        if info.schema.lower() == SCHEMA.lower():
            raise PrivacyError("an analyst cannot read the provsql_dp catalog; use SHOW PRIVACY BUDGET")
        if (info.schema.lower(), info.name.lower()) in self.protected:
            raise PrivacyError(
                f"table {info.name!r} is protected: an analyst cannot read its rows. Ask an "
                "aggregate privately instead, e.g. SELECT COUNT(*) FROM … WITH EPSILON 0.1")
        alias = t.args.get("alias") or exp.TableAlias(this=exp.to_identifier(t.name))
        if info.view_sql is not None:
            body = self._view(info, depth)
            if not alias.args.get("columns"):
                alias = alias.copy()
                alias.set("columns", [exp.to_identifier(c, quoted=True) for c in info.columns])
            sub = exp.Subquery(this=body, alias=alias)
            for k in ("pivots", "joins", "laterals"):
                if t.args.get(k):
                    sub.set(k, t.args[k])
            t.replace(sub)
            return
        t.set("this", exp.to_identifier(info.name, quoted=True))
        t.set("db", exp.to_identifier(info.schema, quoted=True))
        t.set("catalog", exp.to_identifier(info.catalog, quoted=True))
        t.set("alias", alias)
        self.checked.add((info.catalog.lower(), info.schema.lower(), info.name.lower()))
        self.infos[(info.catalog.lower(), info.schema.lower(), info.name.lower())] = info

    def _view(self, info: TableInfo, depth: int) -> exp.Expression:
        try:
            view = sqlglot.parse_one(info.view_sql, read="duckdb")
        except SqlglotError:
            raise PrivacyError(
                f"view {info.name!r} could not be checked, so an analyst cannot read it") from None
        body = view.expression if isinstance(view, exp.Create) else view
        if not isinstance(body, exp.Query):
            raise PrivacyError(f"view {info.name!r} could not be checked, so an analyst cannot read it")
        return self.query(body, depth + 1, (info.catalog, info.schema))

    # ------------------------------------------------------------------ functions
    def _check_functions(self, tree: exp.Expression) -> None:
        calls = []
        for node in tree.walk():
            if isinstance(node, (exp.Placeholder, exp.Parameter)):
                raise ProgrammingError("a parameter placeholder was left unbound")
            if isinstance(node, (exp.Column, exp.Star)):
                continue
            if isinstance(node, exp.In) and node.args.get("query") is not None:
                continue  # x IN (subquery): the subquery is a query of its own
            if isinstance(node, _STRUCTURE) and not isinstance(node, exp.Func):
                continue
            calls.append((node, function_name(node)))
        hit = sorted({n for _, n in calls} & self.user_functions())
        if hit:  # a macro's body could read protected tables
            raise PrivacyError(
                f"an analyst cannot call the user-defined function {hit[0]}(): its body could "
                "read protected tables")
        for node, name in calls:
            if isinstance(node, _STRUCTURE):
                continue  # an aggregate or a window function: reads only its input rows
            if name in _WINDOW_ONLY and isinstance(node.parent, exp.Window):
                continue
            if name not in ALLOWED_FUNCTIONS:
                raise PrivacyError(
                    f"an analyst cannot call {name}(): a query over public tables may use only "
                    "aggregates and the scalar functions of the allow-list "
                    "(provsql_dp.sql.functions.ALLOWED_FUNCTIONS)")
            try:
                check_node(node)
            except UnsupportedQueryError as e:
                raise PrivacyError(
                    f"an analyst's query cannot use {str(e).replace(' is not supported in a private query', '')}"
                ) from None

    def user_functions(self) -> set[str]:
        """Names of user-defined functions and macros (lower case). A macro may shadow a
        built-in (``CREATE MACRO lower(x) AS (SELECT … FROM protected)``), so every call is
        checked against them, allow-listed names and aggregates too. Read once per statement
        and kept with the catalog's snapshot (a generation bump re-reads it)."""
        if self._user_functions is None:
            self._user_functions = self.catalog.cached(("analyst", "user functions"), lambda: {
                r[0].lower() for r in self.catalog.con.execute(
                    "SELECT function_name FROM duckdb_functions() WHERE NOT internal").fetchall()})
        return self._user_functions

    # ------------------------------------------------------------------ public sizes
    def table_rows(self, t: exp.Table) -> int:
        """The rows of a checked (public) table: public, counted."""
        bare = exp.Table(**{k: t.args[k].copy() for k in ("this", "db", "catalog") if t.args.get(k)})
        return self.catalog.con.execute(f"SELECT count(*) FROM {bare.sql(dialect='duckdb')}"
                                        ).fetchone()[0]

    def longest(self) -> int:
        """The longest value (bytes of its text) of a string-like column of a table read."""
        most = 0
        for info in self.infos.values():
            cols = [c for c, ty in zip(info.columns, info.types) if _is_string_type(ty)]
            if not cols or info.view_sql is not None:
                continue
            name = ".".join(exp.to_identifier(p, quoted=True).sql() for p in
                            (info.catalog, info.schema, info.name))
            parts = ", ".join(f"max(strlen(CAST({exp.to_identifier(c, quoted=True).sql()} AS "
                              "VARCHAR)))" for c in cols)
            got = self.catalog.con.execute(f"SELECT greatest({parts}, 0) FROM {name}").fetchone()[0]
            most = max(most, got or 0)
        return most

    # ------------------------------------------------------------------ the emitted text
    def verify(self, sql: str) -> None:
        """The text we emit, read back: every table it names is one we checked, fully
        qualified, or one of our fresh CTE names, and every function it calls is allowed."""
        try:
            back = sqlglot.parse(sql, read="duckdb")
        except SqlglotError as e:  # our own text: a bug, never the analyst's doing
            raise PrivacyError(f"the compiled statement could not be read back ({e})") from None
        for tree in filter(None, back):
            for t in tree.find_all(exp.Table):
                if isinstance(t.parent, exp.DataType):
                    continue
                if not isinstance(t.this, exp.Identifier):
                    raise PrivacyError("the compiled statement reads a table function")
                key = tuple(p.name.lower() for p in t.parts)
                if key in self.checked or (len(key) == 1 and t.name in self.fresh):
                    continue
                raise PrivacyError(f"the compiled statement names a table it did not check: {t.sql()}")
            self._check_functions(tree)


def _lower_names(tree: exp.Expression) -> None:
    """Table and CTE names are case-insensitive in DuckDB, quoted or not: compare them so."""
    for t in tree.find_all(exp.Table):
        for key in ("this", "db", "catalog"):
            ident = t.args.get(key)
            if isinstance(ident, exp.Identifier):
                ident.set("this", ident.name.lower())
    for cte in tree.find_all(exp.CTE):
        alias = cte.args.get("alias")
        if alias is not None and isinstance(alias.this, exp.Identifier):
            alias.this.set("this", alias.this.name.lower())


def _scope_roots(tree: exp.Expression) -> list[exp.Expression]:
    """The outermost queries of ``tree``: where scope analysis starts."""
    if isinstance(tree, exp.Query) and not isinstance(tree, exp.Pivot):
        return [tree]
    roots = []
    for q in tree.find_all(exp.Query):
        p = q.parent
        while p is not None and p is not tree and not isinstance(p, exp.Query):
            p = p.parent
        if p is None or p is tree:
            roots.append(q)
    return roots


def _cte_targets(tree: exp.Expression) -> dict[int, exp.CTE]:
    """id(table reference) → the CTE it resolves to in its scope (sqlglot's scope analysis)."""
    out: dict[int, exp.CTE] = {}
    for root in _scope_roots(tree):
        for scope in traverse_scope(root):
            for t in scope.tables:
                if t.args.get("db") or t.args.get("catalog"):
                    continue
                src = scope.sources.get(t.alias_or_name)
                cte = _cte_of(src, t.name) if isinstance(src, Scope) else None
                if cte is not None:
                    out[id(t)] = cte
    return out


def _cte_of(scope: Scope, name: str) -> exp.CTE | None:
    """The CTE whose body (or, for a recursive CTE, whose base case) is ``scope``'s expression,
    if it is named ``name``."""
    if not scope.is_cte:
        return None
    node = scope.expression
    for _ in range(2):  # the body, or the base case of a recursive CTE's UNION
        node = node.parent
        if isinstance(node, exp.CTE):
            return node if node.alias == name else None
        if not isinstance(node, exp.SetOperation):
            return None
    return None


def compile_query(catalog: Catalog, tree: exp.Expression) -> tuple[str, _Compiler]:
    """The DuckDB text of the analyst query ``tree`` (changed in place), resolved, checked and
    emitted by us (see the module docstring); raises :class:`PrivacyError` on anything an
    analyst may not read."""
    c = _Compiler(catalog)
    c.query(tree)
    check_concatenations(tree, c.table_rows, c.longest, c.growth)
    sql = tree.sql(dialect=ProvDP, comments=False)  # DuckDB's text, a PIVOT's source qualified
    c.verify(sql)
    return sql, c


def _check_sizes(tree: exp.Expression):
    """Every scalar expression of ``tree`` within the caps of :mod:`provsql_dp.sql.size_model`
    (refused otherwise, naming it): a public statement's cost per row is bounded at plan time
    too, so a statement cannot hold the engine for minutes by growing strings (the caps are the
    private path's); returns the growth along relations (``ChainGrowth.product``). Column types
    are not looked up: every column counts as a string read (the model's conservative side). A
    subquery inside an expression is a query of its own, checked where
    :func:`exp.Expression.walk` reaches its SELECT; here it stands for one value.

    >>> check_size  # doctest: +ELLIPSIS
    <function check_size at ...>
    >>> _check_sizes(sqlglot.parse_one("SELECT upper(s) FROM t WHERE s IN (SELECT s FROM u)"))
    Fraction(3, 2)
    >>> _check_sizes(sqlglot.parse_one("SELECT replace(replace(s, 'a', 'aaaaaaaaaa'), 'a', 'aaaaaaaaaa') FROM t"))
    Traceback (most recent call last):
    ...
    provsql_dp.errors.UnsupportedQueryError: the expression ...
    """
    lists: dict[int, list] = {}  # each select list's values, for the growth along relations
    for node in tree.walk():
        parent = node.parent
        if parent is None or isinstance(node, _STRUCTURE) and not isinstance(node, exp.Func):
            continue
        if not (isinstance(parent, _STRUCTURE) and not isinstance(parent, exp.Func)):
            continue  # not a root: checked as part of its root
        root = _values_per_row(node.copy())
        for sub in list(root.find_all(exp.Subquery, exp.Select, exp.Exists)):
            if sub is root:
                break
            sub.replace(exp.null())
        if isinstance(root, (exp.Subquery, exp.Select, exp.Exists)):
            continue
        check_size(root, {})
        item = parent if isinstance(parent, exp.Alias) else node
        if isinstance(item.parent, exp.Select) and item.arg_key == "expressions":
            lists.setdefault(id(item.parent), []).append(root)
    chain = ChainGrowth()  # a CTE's grown values are read as L again by the next (size_model)
    for roots in lists.values():
        chain.add(roots, {})
    _no_growth_of_row_concatenations(tree)
    return chain.product


#: the nodes that grow a string (size_model's rules beyond 1 byte per byte read)
_GROWING = (exp.DPipe, exp.Concat, exp.ConcatWs, exp.Upper, exp.Lower, exp.Replace,
            exp.RegexpReplace)


def _no_growth_of_row_concatenations(tree: exp.Expression) -> None:
    """Refuse growing a string anywhere but inside a row-concatenating aggregate's own argument
    when the statement has one: ``string_agg`` builds one value from every row, up to DuckDB's
    4 GiB limit (refused there), and ``||`` of such a value past it is an internal error of
    DuckDB, which invalidates the database for every session (red team h143). The size model
    bounds values per row; this value grows with the number of rows.

    >>> _no_growth_of_row_concatenations(sqlglot.parse_one("SELECT string_agg(s || '!', ',') FROM t"))
    >>> _no_growth_of_row_concatenations(sqlglot.parse_one(
    ...     "WITH a AS (SELECT string_agg(s, '') AS s FROM t) SELECT s || s FROM a"))
    Traceback (most recent call last):
    ...
    provsql_dp.errors.UnsupportedQueryError: s || s grows a string in a statement with string_agg/list, ...
    """
    if tree.find(*CONCATENATING) is None:
        return
    # a list's text is longer than the list
    lists = tree.find(exp.ArrayAgg, exp.ArrayUniqueAgg) is not None
    for node in tree.find_all(*_GROWING, exp.Cast, exp.TryCast):
        if isinstance(node, (exp.Cast, exp.TryCast)) and not (
                lists and node.to.this in (exp.DataType.Type.VARCHAR, exp.DataType.Type.TEXT)):
            continue
        if node.find_ancestor(*CONCATENATING) is None:
            raise UnsupportedQueryError(
                f"{node.sql(dialect='duckdb')[:200]} grows a string in a statement with "
                "string_agg/list, whose value holds every row of its group (up to DuckDB's 4 GiB "
                "limit, which growing it further would pass inside DuckDB): grow the values "
                "inside the aggregate (string_agg(s || '!', ',')), or in a statement of its own")


def _values_per_row(root: exp.Expression) -> exp.Expression:
    """``root`` with each aggregate or window function standing for its argument (its value's
    size is at most its argument's, per row; a count or a row number is a number)."""
    for node in list(root.find_all(exp.Func)):
        if not isinstance(node, exp.AggFunc) and function_name(node) not in _WINDOW_ONLY:
            continue
        arg = node.this if isinstance(node, exp.AggFunc) else None
        value = (arg.copy() if isinstance(arg, exp.Expression) and not isinstance(arg, exp.Star)
                 else exp.Literal.number(0))
        target = node.parent if isinstance(node.parent, exp.Window) else node  # f(…) OVER (…)
        if node is root or target is root:
            return value
        target.replace(value)
    return root
