"""``SELECT MEDIAN(c) | QUANTILE_CONT(c, q) | QUANTILE_DISC(c, q) FROM t WITH EPSILON ε``: one
quantile of one numeric column of a row-per-participant protected table.

What it needs (declarations, read before any protected row):

* a **δ-neighbourhood policy on the column alone**, ``CREATE POLICY p ON t (c) AS DELTA δ
  DOMAIN [lo, hi) WIDTH w BOUNDED`` — a record moves by at most δ, so the quantile does: noise of
  scale ``δ/ε`` (Fang & Chang §5.5.2, the floating-point-safe release of
  :func:`provsql_dp.policies.delta.median`); values are clamped to ``[lo, hi]``;
* or **bounds**, ``SET BOUNDS ON t (c) BETWEEN lo AND hi`` — any record may be added, removed or
  replaced. The value itself could then move by the whole interval, so it is not noised: a point
  of a public grid of :data:`~provsql_dp.mechanisms.global_sensitivity.quantile_grid.GRID_STEPS`
  steps between the bounds is *selected* by its rank (report-noisy-max with exact discrete
  Laplace noise on integer rank scores, the exponential-mechanism family:
  :mod:`provsql_dp.mechanisms.global_sensitivity.quantile_grid`) — one DuckDB aggregate counts
  the values per grid bin. Its interval is the declared bounds; its error, in ranks, is in the
  release's strategy text. (A δ policy with SOURCES is unbounded, records appear: the quantile
  then uses the bounds, or the policy's domain when no bounds are declared; so does a δ policy
  whose WHERE reads the quantile's column.)

Without either the statement is refused, naming both declarations; nothing is charged.

``WHERE cond`` filters the rows in the same DuckDB aggregate, evaluated totally
(:func:`provsql_dp.sql.total.make_total`: a row on which the condition would fail counts as
not selected). Under a δ policy a condition that does not read the quantile's column keeps a
record's membership when the record moves, so the sensitivity stays δ; a condition that reads
it lets a δ-move carry a record in or out of the filter, so the sensitivity is the whole domain
``hi − lo`` (said in the release's neighbourhood). Under bounds the sensitivity is ``hi − lo``
either way.

``SELECT g, MEDIAN(c) FROM t [WHERE …] GROUP BY g`` releases one quantile per **declared** group
key of ``g`` (``SET GROUP KEYS ON t (g) …``; keys with no row get the midpoint plus noise, rows
with other keys are not read). The table is row-per-participant and ``g`` a column of the row,
so a participant's row is in exactly one group: a neighbour (one record added, removed, or moved
by δ in ``c``) changes one group's quantile, and the groups compose in parallel — every group at
ε, ε charged once. Grouping by the quantile's own column, by an expression, or without declared
keys is refused. No join, ``DISTINCT``, ``HAVING``, ``ORDER BY``, ``LIMIT`` or ``OPTIONS``.

The ledger is charged before the one DuckDB aggregate reads the column; noise comes from
:func:`provsql_dp.mechanisms.global_sensitivity.quantile.release_quantile` (exact discrete Laplace). The smooth-
sensitivity Cauchy median is not reachable from SQL.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE trips(id INT PRIMARY KEY, km DOUBLE)")
>>> _ = con.execute("INSERT INTO trips SELECT i, (i % 50) / 10 FROM range(1000) t(i)")
>>> _ = con.execute("PROTECT TABLE trips")
>>> _ = con.execute("SET PRIVACY BUDGET 5")
>>> _ = con.execute("CREATE POLICY near ON trips (km) AS DELTA 0.01 DOMAIN [0, 10) WIDTH 0.5 BOUNDED")
>>> cur = con.execute("SELECT MEDIAN(km) AS m FROM trips WITH EPSILON 1")
>>> abs(cur.fetchone()[0] - 2.45) < 0.2, cur.privacy.mechanism
(True, 'quantile')
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from sqlglot import exp

from .._numbers import format_eps
from ..errors import ProgrammingError, UnsupportedQueryError
from ..mechanisms.global_sensitivity.quantile import quantile_sensitivity, release_quantile
from ..mechanisms.global_sensitivity.quantile_grid import GRID_STEPS, GridQuantileRelease, \
    rank_fraction, release_from_counts
from ..mechanisms.noise.safe_noise import plan_laplace
from ..mechanisms.noise.sources import error_bound
from ..policies.delta.sql import delta_policy
from ..provenance.backends import engine_of
from ..provenance.capture import q as quote
from ..sql import dialect as d
from ..sql.catalog import _INTEGER_TYPES
from ..sql.column_declarations import ColumnDeclarations
from ..sql._not_null import collated_columns
from ..sql.public_values import written_as
from ..sql.total import make_total
from ._single_table import key_filter, rows_sql, select_of
from .no_data import from_no_data, read_or_nothing
from .policy_route import row_per_participant, table_policies
from .release_info import PrivacyInfo

__all__ = [
    "QuantileQuery",
    "accuracy_epsilon",
    "answer",
    "explain",
    "is_quantile_query",
    "prepare",
]

_AGGS = (exp.Median, exp.PercentileCont, exp.PercentileDisc, exp.Quantile)
_NUMERIC = set(_INTEGER_TYPES) | {"FLOAT", "REAL", "FLOAT4", "DOUBLE", "FLOAT8"}


@dataclass(frozen=True)
class QuantileQuery:
    """A decided quantile release: everything public, nothing read from the rows."""

    statistic: str        # MEDIAN, QUANTILE_CONT or QUANTILE_DISC
    q: float
    table_sql: str
    column: str
    label: str
    lower: float
    upper: float
    sensitivity: float
    neighbourhood: str    # "δ = 0.01 (policy near)" or "bounds"
    policy: str | None
    where_sql: str | None = None    # the total WHERE condition (unqualified columns)
    group: str | None = None        # the GROUP BY column
    group_label: str | None = None
    group_type: str | None = None
    keys: tuple = ()                # the declared keys, in order
    written: str | None = None      # "MIN(c)" when asked so (..sql.public_values)

    def said(self) -> str:
        """What is released, in words: a MIN/MAX says which quantile stands for it."""
        q = '' if self.statistic == 'MEDIAN' else f' q = {self.q:g}'
        return (f"{self.written} released as a DP estimate of the{q} quantile (not the exact "
                f"extreme): {self.statistic}{q}" if self.written else f"{self.statistic}{q}")

    @property
    def grid(self) -> bool:
        """Whether the release selects a grid point by rank (the sensitivity is the whole
        interval) rather than adding Laplace noise of scale δ/ε (a bounded δ policy)."""
        return not self.neighbourhood.startswith("δ")

    def grid_sql(self) -> str:
        """Per group, the number of clamped values in each grid bin ``k`` (the smallest ``k``
        with ``x ≤ lo + k·(hi − lo)/G``; NaN counts as ``hi``, as in DuckDB's quantiles)."""
        lo, hi, g = self.lower, self.upper, GRID_STEPS
        v = (f"LEAST(GREATEST(CAST({quote(self.column)} AS DOUBLE), {lo!r}), {hi!r})")
        pos = f"(({v} - {lo!r}) / {hi - lo!r} * {g})"
        b = f"CAST(LEAST(GREATEST(CEIL({pos}), 0), {g}) AS BIGINT)"
        gcol, where = rows_sql(self)
        return (f"SELECT {gcol}{b} AS __b, count(*) AS __n, count_if({pos} = CEIL({pos})) AS "
                f"__e FROM {self.table_sql} WHERE {where} GROUP BY ALL")

    def sql(self) -> str:
        fn = "quantile_disc" if self.statistic == "QUANTILE_DISC" else "quantile_cont"
        v = (f"LEAST(GREATEST(CAST({quote(self.column)} AS DOUBLE), {self.lower!r}), "
             f"{self.upper!r})")
        conds = [f"({self.where_sql})"] if self.where_sql else []
        if self.group is None:
            where = f" WHERE {' AND '.join(conds)}" if conds else ""
            return f"SELECT {fn}({v}, {self.q!r}) AS __v FROM {self.table_sql}{where}"
        conds.append(key_filter(self.group, self.group_type, self.keys))
        return (f"SELECT {quote(self.group)} AS __g, {fn}({v}, {self.q!r}) AS __v FROM "
                f"{self.table_sql} WHERE {' AND '.join(conds)} GROUP BY 1")


_DESC = [("mechanism", "VARCHAR"), ("policy", "VARCHAR"), ("strategy", "VARCHAR"),
         ("queries", "INTEGER"), ("epsilon", "VARCHAR"), ("expected_rmse", "DOUBLE"),
         ("alpha", "DOUBLE"), ("confidence", "DOUBLE"), ("note", "VARCHAR")]


def _select(tree):
    return select_of(tree)  # the FILTER (WHERE …) of the one quantile becomes a WHERE


def is_quantile_query(tree) -> bool:
    """Whether ``tree`` (the query of a private statement) uses a quantile aggregate anywhere."""
    return isinstance(tree, exp.Expression) and tree.find(*_AGGS) is not None


def _statistic(node) -> tuple[str, float]:
    if isinstance(node, exp.Median):
        return "MEDIAN", 0.5
    name = "QUANTILE_CONT" if isinstance(node, exp.PercentileCont) else "QUANTILE_DISC"
    qn = node.args.get("quantile") if isinstance(node, exp.Quantile) else node.expression
    if not (isinstance(qn, exp.Literal) and not qn.is_string):
        raise ProgrammingError(f"{name} needs a numeric literal q between 0 and 1 as its second "
                               f"argument, e.g. {name}(col, 0.9)")
    qv = float(qn.this)
    if not 0 <= qv <= 1:
        raise ProgrammingError(f"{name}: q = {qn.this} is outside [0, 1]")
    try:
        rank_fraction(qv)  # the grid selection reads q as an exact fraction
    except ValueError as e:
        raise ProgrammingError(f"{name}: {e}") from None
    return name, qv


def prepare(con, tree, options=None) -> QuantileQuery:
    """Check the statement and the declarations; raise a refusal (nothing charged) or return the
    decided release. A quantile written ``MIN(c)``/``MAX(c)`` is refused in those words."""
    try:
        return _prepare(con, tree, options)
    except (ProgrammingError, UnsupportedQueryError) as err:
        node = tree.find(*_AGGS) if isinstance(tree, exp.Expression) else None
        if node is None or written_as(node) is None:
            raise
        written = written_as(node)
        side = "low" if written.upper().startswith("MIN") else "high"
        raise type(err)(f"{written} is released as {node.sql(dialect='duckdb')}, a DP estimate "
                        f"of a {side} quantile (not the exact extreme): {err}") from err


def _prepare(con, tree, options=None) -> QuantileQuery:
    sel = _select(tree)
    shape = ("a private quantile is SELECT MEDIAN(col) | QUANTILE_CONT(col, q) | "
             "QUANTILE_DISC(col, q) FROM table, on one protected table")
    if not isinstance(sel, exp.Select) or not 1 <= len(sel.expressions) <= 2:
        raise UnsupportedQueryError(f"{shape}, alone in the select list (with its GROUP BY "
                                    "column when grouped)")
    aggs = [i for i in sel.expressions if isinstance(i.unalias(), _AGGS)]
    if len(aggs) != 1 or (len(sel.expressions) == 2 and sel.args.get("group") is None):
        raise UnsupportedQueryError(f"{shape}; a quantile inside an expression, or beside "
                                    "anything but its GROUP BY column, is not supported")
    item = aggs[0]
    agg = item.unalias()
    for key, what in (("having", "HAVING"), ("joins", "a join"), ("distinct", "DISTINCT"),
                      ("order", "ORDER BY"), ("limit", "LIMIT"), ("with", "WITH")):
        if sel.args.get(key):
            raise UnsupportedQueryError(f"{shape}; {what} is not supported with a quantile")
    if options:
        raise ProgrammingError("OPTIONS apply to the recursive mechanism only; a quantile takes "
                               "none (drop OPTIONS)")
    statistic, qv = _statistic(agg)
    from_ = sel.args.get("from_") or sel.args.get("from")
    if from_ is None or not isinstance(from_.this, exp.Table):
        raise UnsupportedQueryError(f"{shape}: it reads one table directly")
    t = from_.this
    info = con.catalog.find_table([p for p in (t.catalog, t.db, t.name) if p])
    if info is None:
        raise ProgrammingError(f"table {t.name!r} does not exist")
    prot = con.catalog.protection(info.schema, info.name)
    ok, why = row_per_participant(con, info, prot)
    if not ok:
        raise UnsupportedQueryError(f"{statistic} cannot be released: {why}")
    col_node = agg.this
    lower = {c.lower(): c for c in info.columns}
    if not isinstance(col_node, exp.Column) or col_node.name.lower() not in lower:
        raise UnsupportedQueryError(f"{statistic} takes a column of {info.name!r}, not "
                                    f"{col_node.sql(dialect='duckdb')}")
    col = lower[col_node.name.lower()]
    ctype = info.types[info.columns.index(col)].upper()
    if ctype not in _NUMERIC and not ctype.startswith("DECIMAL"):
        raise UnsupportedQueryError(f"{statistic}({col}): {col!r} is {ctype}, not a number")
    label = item.alias_or_name if isinstance(item, exp.Alias) else \
        f"{statistic.lower()}({col})"
    table_sql = ".".join(quote(p) for p in (info.catalog, info.schema, info.name) if p)
    types = dict(zip(info.columns, info.types))
    where_sql, reads_col = _where(sel, lower, types, col)
    grouping = _grouping(con, sel, item, info, lower, types, col, statistic)
    pols = [tp for tp in table_policies(con, info.schema, info.name)
            if tp.graph.get("kind") == "DELTA" and [c.lower() for c in tp.columns] == [col.lower()]]
    bounds = ColumnDeclarations(con._catalog).bounds(info.schema, info.name, col)
    extra = dict(where_sql=where_sql, written=written_as(agg), **grouping)
    if pols and pols[0].bounded:
        tp = pols[0]
        pol = delta_policy(tp.graph, tp.domains)
        lo, hi = float(pol.lo[0]), float(pol.hi[0])
        delta = float(pol.delta)
        if reads_col:  # a δ-move can carry a record across the filter: the whole domain
            return QuantileQuery(statistic, qv, table_sql, col, label, lo, hi,
                                 quantile_sensitivity(lo, hi),
                                 f"domain of policy {tp.name} (the WHERE reads {col}, so a "
                                 f"δ-move can take a record in or out of the filter)", tp.name,
                                 **extra)
        return QuantileQuery(statistic, qv, table_sql, col, label, lo, hi,
                             quantile_sensitivity(lo, hi, delta=delta),
                             f"δ = {delta:g} (policy {tp.name}, BOUNDED)", tp.name, **extra)
    if bounds is not None:
        lo, hi = bounds
        if not hi > lo:
            raise ProgrammingError(f"the declared bounds of {info.name}.{col} are empty "
                                   f"([{lo:g}, {hi:g}]); declare lower < upper")
        return QuantileQuery(statistic, qv, table_sql, col, label, lo, hi,
                             quantile_sensitivity(lo, hi), "bounds (SET BOUNDS)", None, **extra)
    if pols:  # an unbounded δ policy: records appear and disappear, the rank moves
        tp = pols[0]
        pol = delta_policy(tp.graph, tp.domains)
        lo, hi = float(pol.lo[0]), float(pol.hi[0])
        return QuantileQuery(statistic, qv, table_sql, col, label, lo, hi,
                             quantile_sensitivity(lo, hi),
                             f"domain of policy {tp.name} (UNBOUNDED: records appear, so the "
                             "whole domain is the sensitivity)", tp.name, **extra)
    raise ProgrammingError(
        f"{statistic}({col}) over {info.name!r} needs a declared range for {col!r}: "
        f"CREATE POLICY p ON {info.name} ({col}) AS DELTA δ DOMAIN [lo, hi) WIDTH w BOUNDED "
        f"(records move by at most δ: noise of scale δ/ε) or SET BOUNDS ON {info.name} ({col}) "
        "BETWEEN lo AND hi (noise of scale (hi − lo)/ε). Nothing was charged")


def _where(sel, lower, types, col):
    """The WHERE condition made total over unqualified columns, and whether it reads ``col``."""
    where = sel.args.get("where")
    if where is None:
        return None, False
    cond = where.this.copy()
    for c in list(cond.find_all(exp.Column)):
        if c.name.lower() not in lower:
            raise UnsupportedQueryError(f"the WHERE of a quantile names {c.sql(dialect='duckdb')}"
                                        ", which is not a column of the table")
        c.replace(exp.column(lower[c.name.lower()], quoted=True))
    if cond.find(exp.Subquery, exp.Select) is not None:
        raise UnsupportedQueryError("the WHERE of a quantile reads the table's own columns only "
                                    "(no subquery)")
    total = make_total(cond, types, predicate=True)
    reads = any(c.name.lower() == col.lower() for c in cond.find_all(exp.Column))
    return total.sql(dialect="duckdb"), reads


def _grouping(con, sel, item, info, lower, types, col, statistic) -> dict:
    """The GROUP BY column and its declared keys (public), or {} when not grouped."""
    group = sel.args.get("group")
    if group is None:
        return {}
    gks = group.expressions
    others = [i for i in sel.expressions if i is not item]
    if len(gks) != 1 or not isinstance(gks[0], exp.Column) or \
            gks[0].name.lower() not in lower:
        raise UnsupportedQueryError(f"{statistic} with GROUP BY takes one column of "
                                    f"{info.name!r} as the group")
    g = lower[gks[0].name.lower()]
    if g in collated_columns(con._catalog, info):  # red team h75cache-2
        raise UnsupportedQueryError(f"{statistic} GROUP BY {g}: {g} compares under a collation, "
                                    "so a group's key would be one of its rows' spellings. "
                                    "Nothing was charged")
    if len(others) > 1 or others and (not isinstance(others[0].unalias(), exp.Column) or
                                      others[0].unalias().name.lower() != g.lower()):
        raise UnsupportedQueryError(f"with GROUP BY {g}, the select list is {g} and the "
                                    f"{statistic} (or the {statistic} alone). Nothing was "
                                    "charged")
    if g.lower() == col.lower():
        raise UnsupportedQueryError(f"{statistic}({col}) GROUP BY {col}: grouping by "
                                    f"{statistic}'s own column releases a function of each "
                                    f"group's key alone; ask COUNT(*) … GROUP BY {col} "
                                    "instead. Nothing was charged")
    decls = ColumnDeclarations(con._catalog)
    decl = decls.group_keys(info.schema, info.name, g)
    if decl is None:
        raise ProgrammingError(
            f"GROUP BY {g} needs public group keys: SET GROUP KEYS ON {info.name} ({g}) VALUES "
            f"(…) or FROM a public table (column). Nothing was charged")
    keys = tuple(decls.key_values(decl, types[g]))
    if not keys:
        raise ProgrammingError(f"no group keys are declared for {info.name}.{g}; nothing to "
                               "release. Nothing was charged")
    return dict(group=g, group_label=others[0].alias_or_name if others else g,
                group_type=types[g], keys=keys)


def answer(con, tree, epsilon, text: str, options=None, rng=None):
    """Charge, read, release: (description, rows, PrivacyInfo)."""
    qq = prepare(con, tree, options)
    eps = float(epsilon)
    if qq.grid:
        return _answer_grid(con, qq, epsilon, text, rng)
    plan_laplace(qq.sensitivity, eps)  # validates the public parameters before the charge
    rng = rng if rng is not None else getattr(con, "_rng", None)
    # charged before the protected column is read: the ε charged never depends on the data
    charge = con._ledger.charge(con.user, epsilon, text, "quantile")
    # past the budget or out of memory: no rows, every group the midpoint plus its noise
    read = read_or_nothing(con, lambda: engine_of(con).fetchnumpy(qq.sql())[0],
                           "every quantile the midpoint plus its noise")
    found = [None] * (1 if qq.group is None else len(qq.keys))
    if read is not None:
        vals = read["__v"]
        mask = np.ma.getmaskarray(vals)
        exact = [None if mask[i] else float(vals[i]) for i in range(len(vals))]  # NULL: no rows
        if qq.group is None:
            found = [exact[0] if exact else None]
        else:
            by_key = {k: e for k, e in zip(list(np.asarray(read["__g"], dtype=object)), exact)}
            found = [by_key.get(k) for k in qq.keys]
    mid = (qq.lower + qq.upper) / 2
    rels = from_no_data((release_quantile(mid if v is None or math.isnan(v) else v, qq.lower,
                                          qq.upper, qq.sensitivity, eps, rng=rng,
                                          statistic=qq.statistic,
                                          neighbourhood=qq.neighbourhood) for v in found),
                        qq.lower, qq.upper, read is None)
    detail = (f"{qq.said()} of "
              f"{qq.column} clamped to [{qq.lower:g}, {qq.upper:g}], sensitivity "
              f"{qq.sensitivity:.6g} under {qq.neighbourhood}; exact discrete Laplace, scale "
              f"{rels[0].noise_scale:.6g}")
    if qq.group is not None:
        detail += (f"; one release per declared key of {qq.group} ({len(qq.keys)}), parallel "
                   "composition (a participant's row is in one group)")
    info = PrivacyInfo(mechanism="quantile", epsilon=charge.epsilon, remaining=charge.remaining,
                       releases=rels, policy=qq.policy, strategy=detail,
                       expected_mse=float(2 * rels[0].noise_scale ** 2), mse_is_upper_bound=True)
    if qq.group is None:
        return [(qq.label, "DOUBLE")], [(rels[0].value,)], info
    return ([(qq.group_label, qq.group_type), (qq.label, "DOUBLE")],
            [(k, r.value) for k, r in zip(qq.keys, rels)], info)


def _answer_grid(con, qq, epsilon, text, rng):
    """The grid selection (:mod:`..mechanisms.global_sensitivity.quantile_grid`): charge, count
    the values per grid bin in one DuckDB aggregate, select one grid point per group."""
    rank_fraction(qq.q)  # refuses a q with too many decimals before the charge
    rng = rng if rng is not None else getattr(con, "_rng", None)
    charge = con._ledger.charge(con.user, epsilon, text, "quantile")
    # past the budget or out of memory: no rows, every grid point scores alike (a draw from
    # the declared bounds, whose interval is the bounds as ever)
    rows = read_or_nothing(con, lambda: engine_of(con).fetchall(qq.grid_sql()),
                           "grid points drawn from equal scores") or []
    groups = [()] if qq.group is None else [(k,) for k in qq.keys]
    counts = {g: np.zeros((2, GRID_STEPS + 1), dtype=np.int64) for g in groups}
    for r in rows:
        key = () if qq.group is None else (r[0],)
        if key in counts:
            counts[key][:, int(r[-3])] += (int(r[-2]), int(r[-1]))
    rels = tuple(release_from_counts(counts[g][0], counts[g][1], qq.q, qq.lower, qq.upper,
                                     epsilon, rng=rng, statistic=qq.statistic)
                 for g in groups)
    info = PrivacyInfo(mechanism="quantile", epsilon=charge.epsilon, remaining=charge.remaining,
                       releases=rels, policy=qq.policy, strategy=_grid_detail(qq, rels[0]))
    if qq.group is None:
        return [(qq.label, "DOUBLE")], [(rels[0].value,)], info
    return ([(qq.group_label, qq.group_type), (qq.label, "DOUBLE")],
            [(k, r.value) for k, r in zip(qq.keys, rels)], info)


def _grid_detail(qq, rel: GridQuantileRelease, p: float = 0.95) -> str:
    text = (f"{qq.said()} of "
            f"{qq.column} clamped to [{qq.lower:g}, {qq.upper:g}] under {qq.neighbourhood}: a "
            f"point of the grid of {GRID_STEPS} steps of {rel.grid:.6g} selected by rank "
            f"(report-noisy-max, exact discrete Laplace of scale {float(rel.noise_units):.6g} on "
            f"integer scores, ε = {rel.epsilon:g}); with probability {p:g} its rank is within "
            f"{rel.rank_error(p):.6g} of the best grid point's; interval: the declared bounds")
    if qq.group is not None:
        text += (f"; one selection per declared key of {qq.group} ({len(qq.keys)}), parallel "
                 "composition (a participant's row is in one group)")
    return text


def accuracy_epsilon(con, tree, alpha, confidence=0.95) -> Fraction:
    """The ε at which the quantile's noise stays within ``α`` with probability ``confidence``:
    Laplace(b): ``P(|L| > α) = e^{−α/b}``, so ``ε = Δ·ln(1/(1 − c))/α``, raised by 1 % for the
    exact sampler's grid and rounded up to three significant digits. Public: reads no data."""
    qq = prepare(con, tree)
    if qq.grid:
        raise ProgrammingError(
            f"WITH ACCURACY cannot be met for {qq.statistic}({qq.column}) under {qq.neighbourhood}"
            ": the grid selection's error is in ranks, and turning it into a value needs the "
            "data's density. Give WITH EPSILON ε (EXPLAIN PRIVACY shows the rank error)")
    a, c = float(alpha), float(confidence)
    if not (a > 0 and 0 < c < 1):
        raise ProgrammingError("WITH ACCURACY needs α > 0 and a confidence strictly between 0 "
                               "and 1")
    eps = qq.sensitivity * math.log(1 / (1 - c)) / a * 1.01
    unit = Fraction(10) ** (math.floor(math.log10(eps)) - 2)
    return Fraction(math.ceil(Fraction(eps) / unit)) * unit


def explain(con, tree, epsilon=None, accuracy=None, confidence=None, options=None):
    """``EXPLAIN PRIVACY`` of a quantile: the release's Δ, noise and error bound at ``epsilon``,
    or the ε for ``accuracy``; the columns of :func:`provsql_dp.privacy.policy_statements.
    explain_privacy`; ``options`` refused as the release refuses them. Reads no data, charges
    nothing."""
    qq = prepare(con, tree, options)
    conf = 0.95 if confidence is None else float(d.exact_number(confidence, "the confidence"))
    if not 0 < conf < 1:
        raise ProgrammingError("the confidence must be strictly between 0 and 1 (e.g. 0.95)")
    note = "α: P(|error| ≤ α) ≥ confidence (exact discrete Laplace quantile)"
    if epsilon is None:
        epsilon = accuracy_epsilon(con, tree, d.exact_number(accuracy, "the accuracy α"), conf)
        note = f"run the query WITH EPSILON {format_eps(epsilon)}; " + note
    if qq.grid:
        rel = GridQuantileRelease(qq.lower, float(epsilon), qq.lower, qq.upper, GRID_STEPS,
                                  rank_fraction(qq.q), qq.statistic)
        return _DESC, [("quantile", qq.policy, _grid_detail(qq, rel, conf),
                        1 if qq.group is None else len(qq.keys), format_eps(epsilon), None,
                        (qq.upper - qq.lower) / 2, conf,
                        f"α: the declared bounds' half-width (the interval is the bounds); the "
                        f"released grid point's rank is within {rel.rank_error(conf):.6g} of the "
                        f"best grid point's with probability {conf:g}")]
    plan = plan_laplace(qq.sensitivity, float(epsilon))
    alpha = float(min(error_bound(plan, conf), qq.upper - qq.lower))
    detail = (f"{qq.statistic} of {qq.column} clamped to [{qq.lower:g}, {qq.upper:g}], sensitivity "
              f"{qq.sensitivity:.6g} under {qq.neighbourhood}")
    return _DESC, [("quantile", qq.policy, detail, 1 if qq.group is None else len(qq.keys),
                   format_eps(epsilon),
                   math.sqrt(plan.noise_variance), alpha, conf, note)]
