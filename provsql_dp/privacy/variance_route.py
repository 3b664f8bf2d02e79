"""``SELECT VARIANCE(c) | VAR_SAMP(c) | VAR_POP(c) | STDDEV(c) | STDDEV_SAMP(c) | STDDEV_POP(c)
FROM t [WHERE …] [GROUP BY g] WITH EPSILON ε``: the variance or standard deviation of one
bounded column of a row-per-participant protected table.

It needs declared bounds on the column (``SET BOUNDS ON t (c) BETWEEN lo AND hi``, as a bounded
SUM or AVG does) and is refused without them, nothing charged. One DuckDB aggregate computes the
count, the centred sum and the centred sum of squares of the clamped values (per declared key of
``g`` when grouped, parallel composition as for a quantile); they are released with exact
discrete Laplace noise at ε/4, ε/4 and ε/2 and combined (post-processing) by
:mod:`provsql_dp.mechanisms.global_sensitivity.variance`, which also gives the honest interval.
``WHERE`` is evaluated totally (:func:`provsql_dp.sql.total.make_total`).

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE p(id INT PRIMARY KEY, x DOUBLE)")
>>> _ = con.execute("INSERT INTO p SELECT i, i % 10 FROM range(1000) t(i)")
>>> _ = con.execute("PROTECT TABLE p; SET PRIVACY BUDGET 5")
>>> _ = con.execute("SET BOUNDS ON p (x) BETWEEN 0 AND 10")
>>> import numpy as np; con._rng = np.random.default_rng(0)  # tests only: a fixed seed
>>> cur = con.execute("SELECT STDDEV_POP(x) AS s FROM p WITH EPSILON 1")
>>> abs(cur.fetchone()[0] - 2.87) < 0.5, cur.privacy.routes
(True, ('variance',))
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sqlglot import exp

from .._numbers import format_eps
from ..errors import ProgrammingError, UnsupportedQueryError
from ..mechanisms.global_sensitivity.variance import SPLIT, STATISTICS, release_many_variances
from ..provenance.backends import engine_of
from ..provenance.capture import q as quote
from ..sql.column_declarations import ColumnDeclarations
from ._single_table import one_table, rows_sql, select_of
from .quantile_route import _grouping, _NUMERIC, _where
from .no_data import from_no_data, read_or_nothing
from .release_info import PrivacyInfo

__all__ = ["VarianceQuery", "is_variance_query", "prepare", "answer", "explain"]

_AGGS = {exp.Variance: "VAR_SAMP", exp.VariancePop: "VAR_POP", exp.Stddev: "STDDEV_SAMP",
         exp.StddevSamp: "STDDEV_SAMP", exp.StddevPop: "STDDEV_POP"}


def is_variance_query(tree) -> bool:
    """Whether ``tree`` uses a variance or standard-deviation aggregate anywhere."""
    return isinstance(tree, exp.Expression) and tree.find(*_AGGS) is not None


@dataclass(frozen=True)
class VarianceQuery:
    """A decided release: public parts only."""

    statistic: str
    column: str
    label: str
    table_sql: str
    lower: float
    upper: float
    where_sql: str | None = None
    group: str | None = None
    group_label: str | None = None
    group_type: str | None = None
    keys: tuple = ()

    def sql(self) -> str:
        lo, hi = self.lower, self.upper
        mid = (lo + hi) / 2
        y = (f"(LEAST(GREATEST(CAST({quote(self.column)} AS DOUBLE), {lo!r}), {hi!r}) - "
             f"{mid!r})")
        gcol, where = rows_sql(self)
        return (f"SELECT {gcol}count(*) AS __n, coalesce(sum({y}), 0) AS __s, "
                f"coalesce(sum({y} * {y}), 0) AS __q FROM {self.table_sql} "
                f"WHERE {where} GROUP BY ALL")


def prepare(con, tree, options=None) -> VarianceQuery:
    """Check the statement and the declarations (reads no row): the decided release, or a
    refusal that charges nothing."""
    sel = select_of(tree)
    shape = ("a private variance is SELECT VAR_SAMP(col) | VAR_POP(col) | STDDEV_SAMP(col) | "
             "STDDEV_POP(col) FROM table [WHERE …] [GROUP BY key]")
    if not isinstance(sel, exp.Select) or not 1 <= len(sel.expressions) <= 2:
        raise UnsupportedQueryError(f"{shape}, alone in the select list (with its GROUP BY "
                                    "column when grouped)")
    aggs = [i for i in sel.expressions if isinstance(i.unalias(), tuple(_AGGS))]
    if len(aggs) != 1 or (len(sel.expressions) == 2 and sel.args.get("group") is None):
        raise UnsupportedQueryError(f"{shape}; a variance inside an expression, or beside "
                                    "anything but its GROUP BY column, is not supported")
    for key, what in (("having", "HAVING"), ("distinct", "DISTINCT"), ("order", "ORDER BY"),
                      ("limit", "LIMIT"), ("with", "WITH")):
        if sel.args.get(key):
            raise UnsupportedQueryError(f"{shape}; {what} is not supported with a variance")
    if options:
        raise ProgrammingError("a variance takes no OPTIONS (drop OPTIONS)")
    item = aggs[0]
    agg = item.unalias()
    statistic = _AGGS[type(agg)]
    t = one_table(con, sel, statistic)
    arg = agg.this
    col = t.column(arg.name) if isinstance(arg, exp.Column) else None
    if col is None:
        raise UnsupportedQueryError(f"{statistic} takes a column of {t.info.name!r}, not "
                                    f"{arg.sql(dialect='duckdb')}")
    ctype = t.types[col].upper()
    if ctype not in _NUMERIC and not ctype.startswith("DECIMAL"):
        raise UnsupportedQueryError(f"{statistic}({col}): {col!r} is {ctype}, not a number")
    bounds = ColumnDeclarations(con._catalog).bounds(t.info.schema, t.info.name, col)
    if bounds is None:
        raise ProgrammingError(
            f"{statistic}({col}) needs declared bounds: SET BOUNDS ON {t.info.name} ({col}) "
            "BETWEEN lo AND hi (values are clamped to them; the count, sum and sum of squares "
            "then have a known sensitivity). Nothing was charged")
    lo, hi = map(float, bounds)
    if not hi > lo:
        raise ProgrammingError(f"the declared bounds of {t.info.name}.{col} are empty; declare "
                               "lower < upper")
    label = item.alias if isinstance(item, exp.Alias) else f"{statistic.lower()}({col})"
    where_sql, _ = _where(sel, t.lower, t.types, col)
    grouping = _grouping(con, sel, item, t.info, t.lower, t.types, col, statistic)
    return VarianceQuery(statistic, col, label, t.table_sql, lo, hi, where_sql, **grouping)


def _detail(vq: VarianceQuery, epsilon) -> str:
    h = (vq.upper - vq.lower) / 2
    shares = ", ".join(f"{name} at ε·{share}" for name, share in
                       zip(("count (Δ 1)", f"centred sum (Δ {h:g})",
                            f"centred sum of squares (Δ {h * h:g})"), SPLIT))
    text = (f"{vq.statistic} of {vq.column} clamped to [{vq.lower:g}, {vq.upper:g}] from a noisy "
            f"{shares} (ε = {format_eps(epsilon)}; exact discrete Laplace), clamped to "
            f"[0, {h * h:g}] (post-processing)")
    if vq.group is not None:
        text += (f"; one release per declared key of {vq.group} ({len(vq.keys)}), parallel "
                 "composition")
    return text


def answer(con, tree, epsilon, text: str, options=None, rng=None):
    """Charge, read, release: ``(description, rows, PrivacyInfo)``."""
    vq = prepare(con, tree, options)
    rng = rng if rng is not None else getattr(con, "_rng", None)
    charge = con._ledger.charge(con.user, epsilon, text, "variance")
    # past the budget or out of memory: no rows, every group's (n, S, Q) = (0, 0, 0) with the
    # noise it would have (the parts' public centre), the interval the statistic's whole range
    rows = read_or_nothing(con, lambda: engine_of(con).fetchall(vq.sql()),
                           "every variance from a count, sum and sum of squares of 0")
    groups = [()] if vq.group is None else [(k,) for k in vq.keys]
    found = {(() if vq.group is None else (r[0],)): tuple(r[-3:]) for r in rows or ()}
    parts = [tuple(float(v or 0) for v in found.get(g, (0, 0, 0))) for g in groups]
    rels = from_no_data(release_many_variances(parts, vq.lower, vq.upper, epsilon, vq.statistic,
                                               rng=rng), 0.0, _largest(vq), rows is None)
    info = PrivacyInfo(mechanism="variance", epsilon=charge.epsilon, remaining=charge.remaining,
                       releases=tuple(rels), strategy=_detail(vq, epsilon))
    if vq.group is None:
        return [(vq.label, "DOUBLE")], [(rels[0].value,)], info
    return ([(vq.group_label, vq.group_type), (vq.label, "DOUBLE")],
            [(k, r.value) for k, r in zip(vq.keys, rels)], info)


def _largest(vq: VarianceQuery) -> float:
    """The largest value the statistic takes on values in ``[lower, upper]``: ``h²`` for
    VAR_POP, ``2h²`` for VAR_SAMP (two values at the ends), their roots for a STDDEV."""
    sample, root = STATISTICS[vq.statistic]
    top = ((vq.upper - vq.lower) / 2) ** 2 * (2 if sample else 1)
    return top ** 0.5 if root else top


def explain(con, tree, epsilon, options=None, confidence=0.95) -> list:
    """``EXPLAIN PRIVACY`` rows (the route table's columns without ``route``): reads no row."""
    vq = prepare(con, tree, options)
    if epsilon is None:
        raise ProgrammingError(f"WITH ACCURACY cannot be met for {vq.statistic}: its error "
                               "depends on the count it divides by; give WITH EPSILON ε")
    h2 = ((vq.upper - vq.lower) / 2) ** 2
    rmse_q = float(np.sqrt(2) * h2 / float(epsilon * SPLIT[2]))
    return [("variance", None, _detail(vq, epsilon), 1 if vq.group is None else len(vq.keys),
             format_eps(epsilon), None, None, float(confidence),
             f"the interval covers the true {vq.statistic} of the clamped values with the "
             f"confidence (union bound over the three noisy parts); the noise of the sum of "
             f"squares alone has sd {rmse_q:.6g}, divided by the count")]
