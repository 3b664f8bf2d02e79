"""Post-processing in SQL, evaluated on the released values (free: no ε is charged for it).

:func:`provsql_dp.sql.post_split.split_post` splits a private statement into the aggregates its
routes release and a :class:`~provsql_dp.sql.post_split.Post`: output columns computed from the
released keys and aggregates, ``HAVING``, ``ORDER BY``, ``LIMIT``/``OFFSET``. Here it is compiled
(:func:`compile_post`, before any charge: a refused expression spends nothing) like any analyst
expression — functions from the allow-list, evaluated totally (a failing row is NULL) — and run
(:func:`apply_post`) in a **separate in-memory DuckDB** that holds only the released rows:
nothing but released values and public keys can reach it. Ties of ``ORDER BY`` are broken by the
groups' public order, so the result is a function of the released values only.

Intervals (``cursor.privacy.intervals()``) follow each output column:

* a bare aggregate keeps its release (and its interval);
* a **monotone function of one aggregate** (``COUNT(*) * 2``, ``SUM(x) / 1000``, ``ROUND(…)``,
  ``- SUM(x)``: additions of constants, products and quotients by a nonzero constant, ROUND,
  FLOOR, CEIL, numeric CASTs) maps the interval's ends through the function (swapped when it
  decreases): it covers the function of the statistic the release's interval covers;
* anything else (``SUM(x) / COUNT(*)`` — a function of several releases — or a GROUP BY key)
  has no interval (NULL), and :meth:`PostRelease.covers` says why.

Division by a released zero (a noisy COUNT shown as 0) gives what DuckDB gives for the same
expression on the released numbers: ``/`` is IEEE 754 division (DuckDB's
``ieee_floating_point_ops``, pinned in the post-processing database so that no DuckDB default
can change it), so ``SUM(x) / COUNT(*)`` is ``inf`` or ``-inf`` by the sign of the released SUM,
and ``COUNT(*) / COUNT(*)`` is NaN — not PostgreSQL's error, nor the NULL of DuckDB before 2.0.
Where DuckDB raises (``//`` or an integer ``%`` by zero), the value is NULL: expressions are
evaluated totally. Either way the value is a function of the released numbers only.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE p(id INT PRIMARY KEY, k VARCHAR)")
>>> _ = con.execute("INSERT INTO p SELECT range, ['a','b','c'][range % 3 + 1] FROM range(300)")
>>> _ = con.execute("PROTECT TABLE p; SET GROUP KEYS ON p (k) VALUES ('a', 'b', 'c')")
>>> _ = con.execute("SET PRIVACY BUDGET 5")
>>> cur = con.execute("SELECT k, COUNT(*) * 2 AS twice FROM p GROUP BY k "
...                   "ORDER BY twice DESC LIMIT 2 WITH EPSILON 1")
>>> rows = cur.fetchall()
>>> len(rows), rows[0][1] >= rows[1][1], [c[0] for c in cur.description]
(2, True, ['k', 'twice'])
>>> lo, hi = cur.privacy.intervals()[0][0]
>>> lo <= rows[0][1] <= hi
True
"""

from __future__ import annotations

import datetime
import decimal
import re
import threading
from dataclasses import dataclass, replace

import duckdb
from sqlglot import exp

from ..errors import DataError, InternalError, ProgrammingError, UnsupportedQueryError
from ..sql.plan import Aggregate, Aggregates
from ..sql.post_split import Post
from ..sql.scope import Scope, Source
from ..sql.scalar import scalar_expression
from ..sql.size_model import RowBudget
from ..sql.total import make_total
from .intervals import covers, interval_of
from .key_types import one_table_key_types, plan_key_types, typed_keys

__all__ = ["CompiledPost", "compile_post", "prepare_post", "apply_post", "PostRelease",
           "explain_row"]

#: functions through which the interval of one release is carried (nondecreasing in their
#: first argument); ``+``/``-`` with constants, ``*``/``/`` by a nonzero constant are handled too
_MONOTONE = (exp.Round, exp.Floor, exp.Ceil, exp.Cast, exp.TryCast, exp.Paren)


@dataclass(frozen=True)
class CompiledPost:
    """The post-processing query over the table ``released``, and what it was compiled from."""

    post: Post
    sql: str
    types: dict


def _released_types(post: Post, plan, key_types: dict | None = None) -> dict:
    """Column → DuckDB type of the ``released`` table: the keys' types ``key_types`` (the
    policy route's labels, :func:`prepare_post`; without a plan,
    :func:`.key_types.one_table_key_types`), else from the plan
    (:func:`.key_types.plan_key_types`), COUNT BIGINT, every other aggregate DOUBLE."""
    first = plan.parts[0] if isinstance(plan, Aggregates) else plan
    types = dict(key_types or {})
    if isinstance(first, Aggregate):
        for i, t in enumerate(plan_key_types(plan)):
            types.setdefault(f"__k{i}", t or "VARCHAR")
        kinds = ([first.kind] if isinstance(plan, Aggregate)
                 else [c.kind if c.kind == "avg" else plan.parts[c.parts[0]].kind
                       for c in plan.columns])
    else:
        kinds = []
    for i in range(len(post.keys)):
        types.setdefault(f"__k{i}", "VARCHAR")
    for j in range(len(post.aggregates)):
        # without a plan (a mixed list, .mixed_route): a COUNT is released a whole number
        kind = kinds[j] if j < len(kinds) else (
            "count" if isinstance(post.aggregates[j], exp.Count) else "")
        types[f"__a{j}"] = "BIGINT" if kind == "count" else "DOUBLE"
    return types


def compile_post(post: Post, plan, key_types: dict | None = None) -> CompiledPost:
    """Compile ``post`` for the release of ``plan`` (the core statement's plan; without one,
    the keys typed ``key_types``): every expression checked against the allow-list and made
    total, and the query bound once on an empty table — so a refusal happens here, before the
    ledger is charged."""
    types = _released_types(post, plan, key_types)
    names = tuple(types)
    scope = Scope([Source("released", names, names)])
    budget = RowBudget()

    def total(e: exp.Expression, where: str, predicate: bool = False) -> str:
        try:
            checked = scalar_expression(e, scope, where)
            return make_total(checked, types, predicate=predicate,
                              budget=budget).sql(dialect="duckdb")
        except (UnsupportedQueryError, ProgrammingError) as err:  # in the analyst's words
            raise type(err)(_analyst_words(str(err), post)) from err

    cols = [f"{total(e, 'the select list')} AS __o{j}" for j, (_, e) in enumerate(post.outputs)]
    sql = f"SELECT __row, {', '.join(cols)} FROM released"
    if post.having is not None:
        sql += f" WHERE {total(post.having, 'HAVING', predicate=True)}"
    order = []
    for e, desc, nulls_first in post.order:
        nulls = "" if nulls_first is None else (" NULLS FIRST" if nulls_first else " NULLS LAST")
        order.append(f"{total(e, 'ORDER BY')}{' DESC' if desc else ''}{nulls}")
    sql += f" ORDER BY {', '.join(order + ['__row'])}"
    if post.limit is not None:
        sql += f" LIMIT {int(post.limit)}"
    if post.offset:
        sql += f" OFFSET {int(post.offset)}"
    compiled = CompiledPost(post, sql, types)
    _run(compiled, [])  # binds on an empty table: a type error is refused before any charge
    return compiled


def prepare_post(st, route, post: Post | None) -> CompiledPost | None:
    """``post`` compiled for the statement ``st`` (a routing ``Statement`` of the core query)
    whose route is ``route``; None without post-processing. A quantile route's plan is not
    built (its aggregate is no COUNT or SUM), nor a variance route's: their values are typed
    DOUBLE. The policy route's keys are typed as its answer describes them
    (:func:`.key_types.typed_keys` over its public labels: a bin's lower edge 2.5 of an INTEGER
    column is a DOUBLE). A projection of the statement as written (``post.as_written``: a
    GROUP BY key left out) refuses nothing here: a plan the planner refuses (``MEDIAN`` under
    ``DELTA``, ``MIN``) is left to the release, which refuses it in its own words, as without
    the projection."""
    if post is None:
        return None
    plan = None
    if route is None or route.name not in ("mixed", "quantile", "variance", "refused"):
        try:
            plan = st.plan
        except (UnsupportedQueryError, ProgrammingError):
            if not post.as_written:
                raise
    if plan is None:
        return compile_post(post, plan, one_table_key_types(st.con, st.query))
    if route is not None and route.name == "policy":  # keys: its bins' labels, public already
        prep = st.policy
        labels = typed_keys(plan, prep.desc, prep.labels)[:len(plan_key_types(plan))]
        return compile_post(post, plan, {f"__k{i}": t for i, (_, t) in enumerate(labels)})
    return compile_post(post, plan)


def _analyst_words(message: str, post: Post) -> str:
    """``message`` with the released columns ``__k{i}``/``__a{j}`` named as the analyst wrote
    them (the GROUP BY key, the aggregate)."""
    names = {f"__k{i}": k.sql(dialect="duckdb") for i, k in enumerate(post.keys)}
    names.update({f"__a{j}": a.sql(dialect="duckdb") for j, a in enumerate(post.aggregates)})
    return re.sub(r"\b__[ka]\d+\b", lambda m: names.get(m.group(0), m.group(0)), message)


_SCRATCH: list = []
_SCRATCH_LOCK = threading.Lock()


def _scratch():
    """A cursor of the process's post-processing database: in memory, one thread, no external
    access, holding no table but each run's own TEMP table (a cursor is a connection of its
    own, so concurrent runs do not see each other's). Nothing but released rows enters it."""
    with _SCRATCH_LOCK:
        if not _SCRATCH:
            _SCRATCH.append(duckdb.connect(config={"threads": 1, "enable_external_access": False,
                                                   "autoinstall_known_extensions": False,
                                                   "autoload_known_extensions": False,
                                                   "ieee_floating_point_ops": True}))
        return _SCRATCH[0].cursor()


def _run(c: CompiledPost, rows: list[tuple], time_zone: str | None = None
         ) -> tuple[list[tuple], list[str]]:
    con = _scratch()
    try:
        if time_zone:  # the session's: a TIMESTAMPTZ key is read, computed on and shown in it
            con.execute("SET SESSION TimeZone = '" + time_zone.replace("'", "''") + "'")
        cols = ", ".join(f'"{n}" {t}' for n, t in c.types.items())
        con.execute(f"CREATE TEMP TABLE released(__row BIGINT{', ' if cols else ''}{cols})")
        if rows:
            marks = ", ".join("?" for _ in range(len(c.types) + 1))
            con.executemany(f"INSERT INTO released VALUES ({marks})",
                            [(i,) + tuple(_plain(v) for v in r) for i, r in enumerate(rows)])
        cur = con.execute(c.sql)
        return cur.fetchall(), [str(d[1]) for d in cur.description]
    except duckdb.Error as e:  # a bug of ours: the expressions were made total
        raise InternalError(f"post-processing of the released values failed: {e}") from e
    finally:
        con.close()


def _plain(v):
    if isinstance(v, (int, float, str, bool, datetime.date, datetime.datetime, decimal.Decimal,
                      datetime.time)) or v is None:
        return v
    item = getattr(v, "item", None)  # numpy scalars
    return item() if callable(item) else v


@dataclass(frozen=True)
class PostRelease:
    """The release behind one post-processed output cell: ``base`` the aggregate's release it
    is a function of (None: of several, or of none), ``function`` the expression over ``__a``
    (None: the bare aggregate), ``direction`` +1/−1 when that function is monotone."""

    value: object
    base: object | None
    function: str | None
    direction: int | None
    what: str
    mechanism: str = "post-processing"

    @property
    def epsilon(self) -> float:
        return float(getattr(self.base, "epsilon", 0.0) or 0.0)

    @property
    def covers(self) -> str:
        if self.direction is None:
            return f"nothing: {self.what} gets no interval"
        return (f"{covers(self.base)}, through the monotone {self.what} (its interval's ends "
                "mapped by the same function)")

    def interval(self, p: float = 0.95):
        if self.direction is None:
            return (None, None)
        lo, hi = interval_of(self.base, p)
        ends = [None if x is None else _eval(self.function, x) for x in (lo, hi)]
        if self.direction < 0:
            ends = ends[::-1]
        return tuple(ends)

    def noise_bound(self, p: float = 0.95):
        """The largest distance from the value to its interval's ends (None: no interval)."""
        lo, hi = self.interval(p)
        if lo is None or hi is None or self.value is None:
            return None
        return float(max(abs(float(self.value) - lo), abs(hi - float(self.value))))


def _eval(function: str, x: float) -> float | None:
    con = _scratch()
    try:
        v = con.execute(f"SELECT ({function}) FROM (SELECT CAST(? AS DOUBLE) AS __a0)", [x]).fetchone()[0]
    finally:
        con.close()
    return None if v is None else float(v)


def _monotone(e: exp.Expression) -> int | None:
    """+1 (nondecreasing) or −1 (nonincreasing) when ``e`` is a monotone function of its one
    column ``__a{j}``; None otherwise."""
    if isinstance(e, exp.Column):
        return 1
    if isinstance(e, exp.Neg):
        d = _monotone(e.this)
        return None if d is None else -d
    if isinstance(e, _MONOTONE):
        if isinstance(e, (exp.Cast, exp.TryCast)) and not e.to.is_type(*exp.DataType.NUMERIC_TYPES):
            return None
        return _monotone(e.this)
    if isinstance(e, (exp.Add, exp.Sub, exp.Mul, exp.Div)):
        a, b = e.this, e.expression
        a_const, b_const = _constant(a), _constant(b)
        if a_const is None and b_const is None:
            return None
        if isinstance(e, (exp.Add, exp.Sub)):
            if b_const is not None:
                return _monotone(a)
            d = _monotone(b)
            return None if d is None else (d if isinstance(e, exp.Add) else -d)
        if isinstance(e, exp.Mul):
            c, other = (a_const, b) if a_const is not None else (b_const, a)
            d = _monotone(other)
            return None if d is None or c == 0 else d * (1 if c > 0 else -1)
        if b_const is not None and b_const != 0:  # x / c
            d = _monotone(a)
            return None if d is None else d * (1 if b_const > 0 else -1)
    return None


def _constant(e: exp.Expression) -> float | None:
    if isinstance(e, exp.Paren):
        return _constant(e.this)
    if isinstance(e, exp.Neg):
        c = _constant(e.this)
        return None if c is None else -c
    if isinstance(e, exp.Literal) and not e.is_string:
        try:
            return float(e.this)
        except ValueError:
            return None
    return None


def apply_post(compiled: CompiledPost, desc: list, rows: list[tuple], info,
               time_zone: str | None = None):
    """``(desc, rows, info)`` of the statement after its post-processing: the output columns in
    the select list's order, the HAVING groups, ordered and windowed. ``info.releases`` follow
    the rows; ``info.columns`` and ``value_names`` name the output columns from the first one
    computed from an aggregate (the columns whose intervals :meth:`PrivacyInfo.intervals`
    gives)."""
    post = compiled.post
    n_k, n_a = len(post.keys), len(post.aggregates)
    if any(len(r) != n_k + n_a for r in rows):
        raise InternalError("post-processing: the release's rows do not have the core layout")
    per_row = [tuple(r) if info.columns else (r,) for r in info.releases]
    if len(per_row) != len(rows):
        raise DataError("post-processing: one release per released row is needed")
    out, out_types = _run(compiled, rows, time_zone)
    names = [n for n, _ in post.outputs]
    sources = [post.sources(j) for j in range(len(names))]
    first = next((j for j, s in enumerate(sources) if s), len(names) - 1)
    new_rows, new_rels = [], []
    for r in out:
        i, values = r[0], r[1:]
        rels = []
        for j in range(first, len(names)):
            rels.append(_release_of(post, j, sources[j], values[j], per_row[i]))
        new_rows.append(tuple(values))
        new_rels.append(tuple(rels) if len(rels) > 1 else rels[0])
    new_desc = list(zip(names, out_types[1:]))
    cols = tuple(names[first:]) if len(names) - first > 1 else ()
    public = tuple(j - first for j in range(first, len(names)) if not sources[j])
    return new_desc, new_rows, replace(info, releases=tuple(new_rels), columns=cols,
                                       value_names=tuple(names[first:]), public_columns=public)


def _release_of(post: Post, j: int, sources: set, value, rels: tuple):
    e = post.outputs[j][1]
    if isinstance(e, exp.Column) and e.name.startswith("__a"):
        return rels[int(e.name[3:])]
    if not sources:
        return PostRelease(value, None, None, None, "a GROUP BY key (public, not released)")
    if len(sources) > 1:
        return PostRelease(value, None, None, None,
                           f"{post.outputs[j][0]}, a function of {len(sources)} separately "
                           "released aggregates (each charged its share of ε)")
    (a,) = sources
    direction = _monotone(e)
    if direction is None or any(c.name.startswith("__k") for c in e.find_all(exp.Column)):
        return PostRelease(value, rels[a], None, None,
                           f"{post.outputs[j][0]}, not a monotone function of its aggregate")
    fn = e.transform(lambda n: exp.column("__a0") if isinstance(n, exp.Column) else n)
    return PostRelease(value, rels[a], fn.sql(dialect="duckdb"), direction,
                       f"function {post.outputs[j][0]}")


def explain_row(post: Post, desc: list) -> tuple:
    """The ``EXPLAIN PRIVACY`` row of the post-processing: no ε, route ``post-processing``."""
    several = any(len(post.sources(j)) > 1 for j in range(len(post.outputs)))
    note = (f"applied to the released values after their release, free (post-processing): "
            f"{post.describe()}")
    if several:
        note += ("; a column computed from several aggregates combines separate releases, each "
                 "charged an equal share of ε (sequential composition), and gets no interval")
    row = [None] * len(desc)
    names = [c[0] for c in desc]
    row[names.index("mechanism")] = "post-processing"
    row[names.index("epsilon")] = "0"
    row[names.index("route")] = "post-processing"
    row[names.index("note")] = note
    return tuple(row)
