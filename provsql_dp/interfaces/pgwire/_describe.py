"""Describe of a prepared statement: its parameter types and its columns, without running it.

asyncpg (like pgx, Npgsql and psql's ``\\gdesc``) prepares a statement, Describes it, and decodes
the rows of every later Execute by the RowDescription it got there. The description is made
here from the statement alone, as the statement's own path would answer it — never by running
it: nothing is charged, nothing is written to the audit log but a refusal, and no text an
analyst wrote reaches DuckDB.

* the wire's own statements (``SHOW LAST RELEASE``, a client setting's ``SHOW``): their fixed
  columns; ``SET``, transaction control: no rows (NoData);
* the privacy statements (``SHOW PRIVACY BUDGET``, ``SHOW PROTECTED``, ``SHOW AUDIT LOG``,
  ``KMEANS``, …): the columns their runs build rows with
  (:mod:`provsql_dp.interfaces.dbapi.statement_columns`); one that answers a status line
  (``PROTECT``, ``SET PRIVACY BUDGET``): NoData, as PostgreSQL describes such statements, its
  line sent as a notice by an Execute that decodes by this Describe;
* a catalog query: run on the schema replica, which holds no row, parameters NULL;
* an analyst's public query: compiled as it runs (:func:`provsql_dp.privacy.roles.compile_analyst`,
  placeholders bound as NULL, a list of ``x = ANY($n)`` as ``[NULL]``), then DuckDB describes
  *our* emitted text (``DESCRIBE <emitted>``: bound, not run); a curator's query is described by
  DuckDB as it runs, with NULL parameters;
* a private query: its columns are a function of its route and plan (:func:`private_columns`):
  each route's own (:mod:`provsql_dp.privacy.route_columns`: the aggregate routes' GROUP BY keys
  typed as :mod:`provsql_dp.privacy.key_types` types them, a COUNT ``BIGINT``, other aggregates
  ``DOUBLE``; quantiles, variances, ``COUNT(DISTINCT …)``, policy histograms, δ and ρ costs as
  those routes release them), the post-processing's output columns typed by binding its query on
  an empty ``released`` table (:func:`provsql_dp.privacy.post_sql.compile_post`, as before any
  charge), and the interval columns ``<col>_low``/``<col>_high`` the session adds. Where they are
  known only from the released values (a raw COUNT in pure ε, a GROUP BY key the plan cannot
  type, a statement that cannot be planned without its parameters), NoData with ``private`` set
  and the reason: an Execute of it by a client that did not Describe the portal either (asyncpg:
  it would reject the rows, the ε spent) is refused before it runs (:func:`check_described`).

Before such an Execute, a statement whose columns follow the schema, the declarations or the
settings (a public query: DuckDB's ``DESCRIBE`` of the text described, ~0.3 ms; a private one:
described again) is refused when they changed since its Describe (:class:`Stale`, PostgreSQL's
"cached plan must not change result type": asyncpg then prepares it again).

A parameter is described by the type the client gave at Parse; else, where it is compared with a
column (``c = $1``, ``c BETWEEN $1 AND $2``, ``c IN ($1)``), by that column's type (its array's
for ``c = ANY($1)``), when the server reads that type's binary format (``time``,
``timestamptz`` and ``interval`` included: :mod:`._temporal`); else as ``text``. Bind then reads
the parameter by the described type.

>>> from sqlglot import exp
>>> tree = d.parse_one("SELECT 1 FROM t WHERE a = $1 AND b = ANY($2) AND c <> ALL($3) AND $4 > 0")
>>> marks = sorted(tree.find_all(exp.Placeholder), key=lambda m: int(m.name))
>>> [(compared_column(m).name if compared_column(m) else None, in_any(m)) for m in marks]
[('a', False), ('b', True), ('c', True), (None, False)]
"""

from __future__ import annotations

import contextlib
import decimal
import logging
import re
from dataclasses import dataclass

import duckdb
from sqlglot import exp
from sqlglot.errors import ParseError

from ..._duckdb_errors import translate
from ...errors import Error, InternalError, NotSupportedError, UnsupportedQueryError
from ...privacy import gaussian_route, routing
from ...privacy.limits import check_statement
from ...privacy.post_sql import _run as _bind_post, prepare_post
from ...privacy.postprocess import raw_option
from ...privacy.route_columns import route_columns
from ...privacy.roles import compile_analyst
from ...sql import dialect as d
from ...sql.policy_grammar import KMeans
from ...sql.public_statement import split_private
from ..dbapi.cursor import Cursor
from ..dbapi.home_catalog import as_curator
from ..dbapi.interval_columns import coverage_of, option_coverage
from ..dbapi.statement_columns import result_columns
from ..dbapi.parameters import _all_of, _as_list, any_as_in, number_qmarks
from ..dbapi.statements import (epsilon_clause, has_epsilon_clause, is_privacy_statement,
                                looks_like_query, refuse_hidden_statements, statement_kind,
                                syntax_error)
from . import _execute as ex
from ._catalog import is_catalog_query, names_the_catalog
from ._types import _ARRAYS, type_oid

__all__ = ["Description", "describe_statement", "compared_column", "in_any", "list_oids",
           "bind_oids", "as_described", "check_described", "placeholders"]

#: parameter OIDs whose binary format Bind reads (``_types.decode_param``): a parameter is
#: described by its column's type only when it is one of these (else ``text``)
PARAM_OIDS = {16, 17, 20, 21, 23, 25, 700, 701, 1082, 1083, 1114, 1184, 1186, 1700, 2950}
_DESCRIBE = [("column_name", "VARCHAR"), ("column_type", "VARCHAR"), ("null", "VARCHAR"),
             ("key", "VARCHAR"), ("default", "VARCHAR"), ("extra", "VARCHAR")]


@dataclass
class Description:
    """A statement's Describe: its parameters' OIDs, its columns ``(name, DuckDB type)`` (None:
    NoData), ``private`` (a release whose columns were not described: :func:`check_described`),
    ``why`` (the reason it was not described), ``recheck`` (columns that follow the schema, the
    declarations or the settings: described again before an Execute, :class:`Stale` when they
    changed) and ``status`` (a privacy statement described NoData whose run answers a status
    line: sent as a notice)."""

    params: list[int]
    columns: list[tuple[str, str]] | None
    private: bool = False
    why: str = ""
    recheck: bool = False
    status: bool = False
    emitted: tuple | None = None  # a public query's (text, parameters) DuckDB described


def compared_column(mark: exp.Expression) -> exp.Column | None:
    """The column a placeholder is compared with (``c = $1``, ``$1 < c``, ``c BETWEEN $1 AND
    …``, ``c IN ($1, …)``, ``c = ANY($1)``), or None."""
    node, child = mark.parent, mark
    while isinstance(node, (exp.Paren, exp.Any)) or _all_of(node) is not None:
        node, child = node.parent, node
    if isinstance(node, (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)):
        other = node.expression if node.this is child else node.this
        return other if isinstance(other, exp.Column) else None
    if isinstance(node, (exp.Between, exp.In)) and node.this is not child:
        return node.this if isinstance(node.this, exp.Column) else None
    return None


def in_any(mark: exp.Expression) -> bool:
    """Whether a placeholder is the list of ``x = ANY(mark)`` or ``x <> ALL(mark)`` (PostgreSQL
    infers an array there)."""
    return _as_list(mark)


def _column_types(con, tree: exp.Expression) -> dict:
    """(alias or table name, column) → DuckDB type, and column → type where one table has it."""
    out, bare = {}, {}
    for t in tree.find_all(exp.Table):
        if not isinstance(t.this, exp.Identifier):
            continue
        info = con._catalog.find_table([p.name for p in t.parts])
        if info is None:
            continue
        for c, ty in zip(info.columns, info.types):
            for name in {t.alias_or_name.lower(), t.name.lower()}:
                out[(name, c.lower())] = str(ty)
            bare.setdefault(c.lower(), set()).add(str(ty))
    out.update({(None, c): next(iter(ts)) for c, ts in bare.items() if len(ts) == 1})
    return out


def _param_oids(con, tree, declared: list[int], n: int) -> list[int]:
    """Each parameter's OID: the client's, else its compared column's (see the module)."""
    oids = [declared[i] if i < len(declared) else 0 for i in range(n)]
    if tree is None or all(oids):
        return [o or 25 for o in oids]
    types = None
    for m in tree.find_all(exp.Placeholder):
        k = int(m.name) - 1 if str(m.name).isdigit() else -1
        if not 0 <= k < n or oids[k]:
            continue
        if isinstance(m.parent, exp.Cast):  # $1::INT, $1::oid[] (asyncpg's introspection)
            to = m.parent.to.sql(dialect="postgres").lower()
            oid = {"oid": 26, "oid[]": 1028}.get(to) or type_oid(m.parent.to.sql(dialect="duckdb"))
            oids[k] = oid if oid in PARAM_OIDS or oid in (26, 1028) or oid in _ARRAYS.values() else 0
            continue
        col = compared_column(m)
        if col is None:
            continue
        types = _column_types(con, tree) if types is None else types
        ty = types.get((col.table.lower() or None, col.name.lower()))
        oid = type_oid(ty) if ty else 0
        if oid in PARAM_OIDS:
            oids[k] = _ARRAYS[oid] if in_any(m) else oid
    return [o or 25 for o in oids]


def list_oids(con, sql: str) -> dict[int, int]:
    """The array OID of each parameter (index from 0) that is the list of ``x = ANY($k)``:
    its column's array type, else ``text[]`` — PostgreSQL's inference of an untyped parameter
    there (psycopg sends a list of strings so: OID 0, ``{a,b}``)."""
    try:
        tree = d.parse_one(number_qmarks(sql))
    except (ParseError, Error):
        return {}
    out, types = {}, None
    for m in tree.find_all(exp.Placeholder):
        if not (str(m.name).isdigit() and in_any(m)):
            continue
        col = compared_column(m)
        types = _column_types(con, tree) if types is None and col is not None else types
        oid = type_oid(types.get((col.table.lower() or None, col.name.lower()), "VARCHAR")) \
            if col is not None else 25
        out[int(m.name) - 1] = _ARRAYS[oid] if oid in PARAM_OIDS else 1009
    return out


def _nulls(tree: exp.Expression) -> exp.Expression:
    """``tree`` with each placeholder NULL (the list of ``x = ANY($n)``: ``[NULL]``, as ``x IN
    (NULL)``): the statement's shape, without values."""
    for m in list(tree.find_all(exp.Placeholder)):
        m.replace(exp.Array(expressions=[exp.Null()]) if in_any(m) else exp.Null())
    return any_as_in(tree)


def describe_statement(session, sql: str, declared: list[int], n: int) -> Description:
    """The Describe of prepared statement ``sql`` (``n`` parameters; ``declared``: the OIDs the
    client gave at Parse). Raises the statement's refusal where its path would refuse it."""
    con = session.con
    if not sql.strip():
        return Description([], None)
    if ex.is_jit(sql):  # asyncpg's, around its type introspection
        return Description(_param_oids(con, None, declared, n), ex.jit_outcome(sql, [None] * n).columns)
    if ex._TYPEINFO.match(sql):  # asyncpg's type introspection: $1 the OIDs it looks up
        return Description([declared[0] if declared and declared[0] else 1028][:n],
                           list(ex.TYPEINFO_COLUMNS))
    kind, name, _ = ex._client_statement(sql) or ("", "", None)
    if kind == "LAST":
        return Description(_param_oids(con, None, declared, n), ex._last_release(None).columns)
    if kind == "SHOW" and name.lower() in (*ex.CLIENT_SETTINGS, ex._INTERVALS, ex._ROLE):
        return Description(_param_oids(con, None, declared, n),
                           [(name.lower().replace(" ", "_"), "VARCHAR")])
    if kind == "SET" and not is_privacy_statement(sql) or ex._SAVEPOINT.match(sql) or \
            ex._TX.match(sql) or ex._NOOP.match(sql):
        return Description(_param_oids(con, None, declared, n), None)
    check_statement(con, sql)  # an analyst's size and depth limits, before any parse
    # as a statement: within the analyst's --max-concurrent, stopped by the time limit and a
    # CancelRequest (a catalog query's Describe runs it on the replica: up to 10 s of a core,
    # uncapped by any number of sessions before; red team h147)
    engine = getattr(session.server, "engine", None)  # (None: a session without a server)
    running = contextlib.nullcontext() if engine is None else engine.running(
        session.role, session.user, con, session.statement_timeout, sql)
    with running, con._catalog.snapshot():  # one read of the schema and declarations
        return _described(session, sql, declared, n)


def _described(session, sql: str, declared: list[int], n: int) -> Description:
    con = session.con
    if names_the_catalog(sql) and is_catalog_query(sql):
        params = _param_oids(con, None, declared, n)
        for k in re.findall(r"\$(\d+)\s*::\s*oid\s*\[\]", sql, re.I):  # asyncpg's introspection
            if 0 < int(k) <= n and not (declared[int(k) - 1:int(k)] or [0])[0]:
                params[int(k) - 1] = 1028
        return Description(params, _catalog(session, sql, n))
    ours = is_privacy_statement(sql) or has_epsilon_clause(sql, con._kept_tokens)
    try:
        tree = d.parse_one(number_qmarks(sql) if n else sql)
    except ParseError as e:
        if ours:
            raise syntax_error(e) from e  # as its run would
        if con.role == "analyst":
            compile_analyst(con, sql, None)  # refuses it, in the words of its run
        return Description(_param_oids(con, None, declared, n), None)
    params = _param_oids(con, tree, declared, n)
    if isinstance(tree, d.PrivateQuery):
        return _private(con, tree, params, n)
    if isinstance(tree, d.PRIVACY_STATEMENTS):
        if con.role == "analyst":
            compile_analyst(con, sql, tree)  # refused at Describe as at its run (SHOW AUDIT LOG)
        cols = result_columns(con, tree)
        return Description(params, cols, recheck=isinstance(tree, KMeans), status=cols is None)
    bound = _nulls(tree.copy())
    if isinstance(tree, exp.Query) and con.default_epsilon is not None and \
            Cursor(con)._touches_protected(bound):
        return _private(con, d.PrivateQuery(this=tree), params, n, default=True)
    if con.role == "analyst":
        compiled = compile_analyst(con, sql, bound)
        if compiled.rows is not None:
            return Description(params, list(compiled.description))
        if compiled.kind in ("query", "PIVOT"):
            cols = _duck_describe(con, compiled.sql, None)
            return Description(params, cols, recheck=cols is not None, emitted=(compiled.sql, None))
        if compiled.kind == "DESCRIBE":
            return Description(params, list(_DESCRIBE))
        return Description(params, None, False, f"{compiled.kind}'s columns are known when it runs")
    if statement_kind(sql) == "query" and looks_like_query(sql) or sql.lstrip().upper().startswith(
            ("VALUES", "TABLE", "(", "PIVOT", "UNPIVOT")):
        refuse_hidden_statements(con._duck, sql)  # DuckDB reads one statement, as provsql_dp
        nulls = [None] * n if n else None
        cols = _duck_describe(con, sql, nulls)
        return Description(params, cols, recheck=cols is not None, emitted=(sql, nulls))
    return Description(params, None)


def _duck_describe(con, sql: str, parameters) -> list[tuple[str, str]] | None:
    """DuckDB's ``DESCRIBE`` of a query (bound, not run): ``(name, type)`` per column. An
    analyst's (our emitted text) that DuckDB refuses is refused in the words of its run; a
    curator's text DuckDB cannot describe (``WITH … INSERT``) is left to its run: None."""
    try:
        rows = as_curator(con, sql, lambda: con._duck.execute("DESCRIBE " + sql, parameters).fetchall())
    except duckdb.Error as e:
        if con.role == "analyst":
            raise translate(e) from None
        return None
    return [(r[0], r[1]) for r in rows]


def _catalog(session, sql: str, n: int):
    """A catalog query's columns: run on the schema replica (no rows), parameters NULL."""
    replica = session.server.replica
    cur = replica.cursor(session.con._duck)
    try:
        desc, _ = replica.run(cur, sql, [None] * n if n else None)
    except (duckdb.Error, Error):
        return None  # the run says why, in the catalog path's words
    finally:
        cur.close()
    return [(c[0], c[1]) for c in desc] if desc else None


def _private(con, tree, params, n: int, default: bool = False) -> Description:
    """A private query's Description (see :func:`private_columns`); a refusal decided from the
    statement is raised, unless the statement has parameters (described without values: the
    refusal is left to the run, which has them)."""
    try:
        cols, why = private_columns(con, tree, default)
    except Error:
        if n:
            return Description(params, None, True, "it could not be planned without its "
                               "parameters: write their values into the statement")
        raise
    return Description(params, cols, cols is None, why, recheck=cols is not None)


def private_columns(con, tree, default: bool = False):
    """``(columns, why)``: the columns a private query releases, route by route
    (:func:`provsql_dp.privacy.route_columns.route_columns`), then its post-processing's and the
    interval columns (None and the reason where they are known only from the released values)."""
    cost = gaussian_route.cost_of(tree)
    options = {} if default else dict(epsilon_clause(tree)[1])
    coverage = option_coverage(options.pop("intervals", None), coverage_of(con.interval_columns))
    raw = raw_option(options.get("raw"), getattr(con, "raw", False))
    query = _nulls(tree.this.copy())
    with con._catalog.snapshot():
        core, post = split_private(con._catalog, query)
        st = routing.Statement(con, core, options, planner=lambda: con._catalog.cached(
            ("plan", core.sql(dialect="duckdb")), lambda: routing.plan_query(core, con._catalog)))
        route = None if cost is not None else routing.choose(st)  # as the release chooses it
        if route is not None and route.name == "refused":
            routing._refuse(st)
        prepared = prepare_post(st, route, post)
        found = route_columns(st, route, cost, raw) if prepared is None else None
    if isinstance(found, str):
        return None, found
    if prepared is None:
        cols, k = found
        desc, values, public = cols[:len(cols) - k], cols[len(cols) - k:], set()
    else:
        p = prepared.post
        _, types = _bind_post(prepared, [])
        names = [nm for nm, _ in p.outputs]
        sources = [p.sources(j) for j in range(len(names))]
        k = next((j for j, s in enumerate(sources) if s), len(names) - 1)
        desc = list(zip(names, types[1:]))[:k]
        values = list(zip(names, types[1:]))[k:]
        public = {j - k for j in range(k, len(names)) if not sources[j]}
    for j, (name, ty) in enumerate(values):
        desc.append((name, ty))
        if coverage is not None and j not in public:
            desc += [(f"{name}_low", "DOUBLE"), (f"{name}_high", "DOUBLE")]
    return desc, ""


class Stale(NotSupportedError):
    """A private statement's columns changed since its Describe (a setting, the schema or the
    declarations): PostgreSQL's "cached plan must not change result type", whose routine asyncpg
    reads to prepare the statement again."""

    routine = "RevalidateCachedQuery"


def check_described(session, portal) -> None:
    """Before the Execute of a portal whose client decodes by its statement's Describe (it did
    not describe the portal): a statement whose columns follow the schema, the declarations or
    the settings (a private release, a public query) is run only if its columns are still those
    described (else :class:`Stale`), and a private one described NoData is refused — the client
    would reject its rows after the charge."""
    told = portal.described  # None once the client described the portal (that ran it)
    if told is None or portal.outcome is not None:
        return
    if told.recheck:
        now = _columns_now(session, portal.sql, told)
        if now != told.columns:
            raise Stale("cached plan must not change result type: this statement's columns are "
                        f"now {[c for c, _ in now or ()]} (a setting, the schema or the "
                        "declarations changed since it was prepared); prepare it again")
        return
    if not told.private:
        return
    raise UnsupportedQueryError(
        f"this private statement's columns could not be described before it runs ({told.why}), "
        "and this client decodes the rows by the statement's description: it was not run and "
        "nothing was charged. Or run it through a client that describes the portal after Bind "
        "(psql, psycopg and JDBC do)")


def _columns_now(session, sql: str, told: Description):
    """A described statement's columns now: a public query's by DuckDB's ``DESCRIBE`` of the text
    described (ours: compiled at its Describe; bound, not run), else described again in full."""
    if told.emitted is not None:
        try:
            return _duck_describe(session.con, *told.emitted)
        except Error:
            pass  # the text no longer binds: its statement's own refusal, by a full Describe
    return describe_statement(session, sql, told.params, len(told.params)).columns


log = logging.getLogger("provsql_dp.pgwire")


def placeholders(sql: str) -> int:
    """The highest ``$n`` of a statement's text (0: none)."""
    return max((int(n) for n in re.findall(r"\$(\d+)", sql)), default=0)


def bind_oids(session, name: str, sql: str, declared: list[int], raw: list[tuple]) -> list[int]:
    """The OID Bind reads each parameter by (``raw``: its bytes and format code): the client's
    (Parse), else the one the statement's Describe told it, else for an untyped ``{…}`` in text
    that is the list of ``x = ANY($k)`` an array (:func:`list_oids`), else 0 (text)."""
    told = session.descriptions.get(name)
    oids = [(declared[i] if i < len(declared) else 0) or
            (told.params[i] if told is not None and i < len(told.params) else 0)
            for i in range(len(raw))]
    if any(not o and fmt == 0 and data is not None and data.lstrip()[:1] == b"{"
           for o, (data, fmt) in zip(oids, raw)):
        check_statement(session.con, sql)  # an analyst's size and depth limits, before the parse
        lists = list_oids(session.con, sql)
        oids = [o or (lists.get(i, 0) if fmt == 0 and data is not None else 0)
                for i, (o, (data, fmt)) in enumerate(zip(oids, raw))]
    return oids


def _as(v, oid: int):
    """A released value as the type described (int ↔ float ↔ numeric, anything → text)."""
    if v is None:
        return None
    if oid in (20, 21, 23) and not isinstance(v, bool) and float(v) == int(v):
        return int(v)
    if oid in (700, 701) and not isinstance(v, bool):
        return float(v)
    if oid == 1700 and not isinstance(v, bool):
        return decimal.Decimal(str(v))
    if oid == 25:
        return v if isinstance(v, str) else str(v)
    raise InternalError(f"a value of type {type(v).__name__} cannot be sent as type {oid}")


def as_described(columns, rows: list[tuple], told: Description | None):
    """``(oids, rows)`` to send: the outcome's own types, or — when the client decodes by the
    statement's Describe ``told`` — its types, the values converted where the run typed a column
    otherwise (logged: the description and the run should agree)."""
    oids = [type_oid(t) for _, t in columns]
    if told is None or told.columns is None:
        return oids, rows
    want = [type_oid(t) for _, t in told.columns]
    if len(want) != len(oids):
        raise InternalError(f"the statement was described with {len(want)} columns and its run "
                            f"made {len(oids)}: run it through a client that describes the portal")
    if want == oids:
        return oids, rows
    log.warning("described types %s, run types %s: values converted", want, oids)
    moved = [j for j, (a, b) in enumerate(zip(want, oids)) if a != b]
    out = []
    for row in rows:
        row = list(row)
        for j in moved:
            row[j] = _as(row[j], want[j])
        out.append(tuple(row))
    return want, out
