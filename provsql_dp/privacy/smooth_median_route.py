"""``SELECT MEDIAN(c) FROM t WITH EPSILON ε DELTA δ′``: the smooth-sensitivity median under a
bounded δ-neighbourhood policy, (ε, δ′)-DP and exact.

Under ``CREATE POLICY p ON t (c) AS DELTA δ DOMAIN [lo, hi) WIDTH w BOUNDED`` the pure-ε route
(:mod:`.quantile_route`) adds discrete Laplace noise of scale δ/ε — the median's *global*
sensitivity. Where the data are dense around the median its *local* sensitivity is far smaller,
and Nissim, Raskhodnikova & Smith's smooth sensitivity lets the noise follow it: the release is
:func:`provsql_dp.policies.delta.median` with ``noise="smooth_laplace"`` — NRS07's Laplace
release (α = ε/2, β = ε/(2 ln(2/δ′))) on a public grid, the median's grid index plus exact
discrete Laplace noise of a data-dependent scale that is never shown (Fang & Chang §5.5.2 use
the smooth median under δ-neighbourhoods; the exactness argument is in that function's module).
Asking for ``DELTA δ′`` is what selects it: the choice never looks at the data. It is worse than
the pure-ε route when the values near the median are sparse (then S ≈ δ and the noise is about
twice the global one); ``EXPLAIN PRIVACY`` says both.

What it needs (else refused before any charge, naming the fix): a MEDIAN (the lower median of
the non-NULL values clamped to ``[lo, hi]``, NaN counting as ``hi``) of one column of a
row-per-participant table under a **BOUNDED** δ policy on that column alone; no WHERE, GROUP BY
or OPTIONS (the number of values must be the same on neighbours: a bounded policy moves values,
it never adds or removes a record); an (ε, δ) budget (``SET PRIVACY BUDGET EPSILON ε DELTA δ``).

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE trips(id INT PRIMARY KEY, km DOUBLE)")
>>> _ = con.execute("INSERT INTO trips SELECT i, 2 + (i % 1000) / 1000 FROM range(20000) t(i)")
>>> _ = con.execute("PROTECT TABLE trips; SET PRIVACY BUDGET EPSILON 5 DELTA 1e-5")
>>> _ = con.execute("CREATE POLICY near ON trips (km) AS DELTA 1 DOMAIN [0, 10) WIDTH 0.5 BOUNDED")
>>> cur = con.execute("SELECT MEDIAN(km) FROM trips WITH EPSILON 1 DELTA 1e-6")
>>> abs(cur.fetchone()[0] - 2.5) < 0.05, cur.privacy.mechanism    # δ/ε = 1 on the pure-ε route
(True, 'smooth-median')
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._numbers import format_eps
from ..errors import UnsupportedQueryError
from ..mechanisms.noise.safe_noise import plan_laplace
from ..mechanisms.noise.sources import tail_units
from ..mechanisms.subgraph.smooth import smooth_params
from ..policies.delta import median as delta_median
from ..policies.delta.smooth_median import smooth_laplace_plan
from ..policies.delta.sql import delta_policy
from ..provenance.backends import engine_of
from ..provenance.capture import q as quote
from . import quantile_route
from .accounting import Cost
from .no_data import from_no_data, read_or_nothing
from .policy_route import table_policies
from .release_info import PrivacyInfo

__all__ = ["applies", "release", "explain_row"]

ROUTE = "smooth-median"


@dataclass(frozen=True)
class SmoothMedianRelease:
    """A released smooth median. Its interval uses the *largest* noise the policy allows (the
    smooth sensitivity never exceeds ``min(δ, hi − lo)``, and the scale grows with it), so it
    is public and holds with probability ≥ p whatever the data; it is wider than the noise
    drawn wherever the data are dense."""

    value: float
    epsilon: float
    worst_units: object  # the discrete Laplace scale, in grid units, at the largest sensitivity
    grid: float
    mechanism: str = ROUTE
    covers: str = "the lower median of the non-NULL values clamped to the policy's domain"

    def noise_bound(self, p: float = 0.95) -> float:
        return self.grid * (tail_units(self.worst_units, p) + 1)  # + 1: the index rounding

    def interval(self, p: float = 0.95):
        b = self.noise_bound(p)
        return (self.value - b, self.value + b)


def _worst_units(pol, epsilon: float, dp_delta: float, grid: float):
    alpha, _ = smooth_params(epsilon, dp_delta)
    cap = min(float(pol.delta), float(pol.hi[0]) - float(pol.lo[0]))
    return plan_laplace(1, alpha / (cap / grid + 1.0), integer=True).noise_units


def applies(st, cost: Cost) -> bool:
    """A quantile statement asked with ``DELTA``: this route takes it or refuses it."""
    return cost.delta != 0 and cost.rho is None and quantile_route.is_quantile_query(st.query)


def _prepare(st):
    """(QuantileQuery, Policy) of a statement this route answers, or a refusal."""
    con = st.con
    if st.options:
        raise UnsupportedQueryError("the smooth-sensitivity median takes no OPTIONS (drop them)")
    qq = quantile_route.prepare(con, st.query, None)
    why = None
    if qq.statistic != "MEDIAN":
        why = f"{qq.statistic} is released in pure ε only (the smooth release is for MEDIAN)"
    elif qq.policy is None or not qq.neighbourhood.startswith("δ ="):
        why = ("it needs a BOUNDED δ policy on the column alone (CREATE POLICY p ON t (c) AS "
               "DELTA δ DOMAIN [lo, hi) WIDTH w BOUNDED)")
    elif qq.where_sql is not None or qq.group is not None:
        why = ("it takes no WHERE or GROUP BY: the number of values must be the same on "
               "neighbouring tables")
    if why:
        raise UnsupportedQueryError(f"WITH EPSILON ε DELTA δ on a quantile selects the "
                                    f"smooth-sensitivity median, and {why}; or write WITH "
                                    "EPSILON ε (pure ε). Nothing was charged")
    tp = next(p for p in table_policies(con, *_schema_table(con, st))
              if p.name == qq.policy)
    return qq, delta_policy(tp.graph, tp.domains)


def _schema_table(con, st):
    sel = quantile_route._select(st.query)
    t = (sel.args.get("from_") or sel.args.get("from")).this
    info = con.catalog.find_table([p for p in (t.catalog, t.db, t.name) if p])
    return info.schema, info.name


def _values_sql(qq) -> str:
    v = f"LEAST(GREATEST(CAST({quote(qq.column)} AS DOUBLE), {qq.lower!r}), {qq.upper!r})"
    return f"SELECT {v} AS __v FROM {qq.table_sql} WHERE {quote(qq.column)} IS NOT NULL ORDER BY 1"


def release(st, cost: Cost, text: str, rng=None):
    """Charge ``cost``, read the column, release: ``(desc, rows, PrivacyInfo)``."""
    con = st.con
    qq, pol = _prepare(st)
    eps, dp_delta = float(cost.epsilon), float(cost.delta)
    rng = rng if rng is not None else getattr(con, "_rng", None)
    # charged before the protected column is read: the cost never depends on the data
    charge = con._ledger.charge(con.user, cost.epsilon, text, ROUTE, cost=cost)
    read = read_or_nothing(con, lambda: engine_of(con).fetchnumpy(_values_sql(qq))[0]["__v"],
                           "the midpoint plus its smooth noise")  # past the budget: no rows
    x = np.asarray([] if read is None else read, dtype=float)
    if x.size == 0:  # no values here, hence none on any neighbour: the midpoint is the median
        x = np.array([(qq.lower + qq.upper) / 2])
    drawn = delta_median(x, pol, eps, rng=rng, noise="smooth_laplace", dp_delta=dp_delta)
    rel = SmoothMedianRelease(drawn.value, eps, _worst_units(pol, eps, dp_delta, drawn.grid),
                              drawn.grid)
    (rel,) = from_no_data((rel,), qq.lower, qq.upper, read is None)
    detail = (f"MEDIAN of {qq.column} clamped to [{qq.lower:g}, {qq.upper:g}] under "
              f"{qq.neighbourhood}: smooth sensitivity (β = {drawn.beta:.4g}), exact discrete "
              f"Laplace on the grid {rel.grid:g} with a data-dependent scale (not shown); "
              f"(ε = {format_eps(cost.epsilon)}, δ = {dp_delta:g})-DP")
    info = PrivacyInfo(mechanism=ROUTE, epsilon=charge.epsilon, remaining=charge.remaining,
                       releases=(rel,), policy=qq.policy, strategy=detail, routes=(ROUTE,))
    return [(qq.label, "DOUBLE")], [(rel.value,)], info


def explain_row(con, st, cost: Cost, conf: float) -> tuple:
    """The EXPLAIN PRIVACY row (mechanism, policy, strategy, queries, cost, rmse, α, conf, note):
    no error is stated in advance, since the noise scale is a function of the data."""
    qq, pol = _prepare(st)
    eps, dp_delta = float(cost.epsilon), float(cost.delta)
    grid, _ = smooth_laplace_plan(np.array([qq.lower]), pol, eps, dp_delta)
    worst = SmoothMedianRelease(0.0, eps, _worst_units(pol, eps, dp_delta, grid), grid)
    pure = 2 ** 0.5 * qq.sensitivity / eps
    note = (f"the noise follows the data's smooth sensitivity, at most δ = {float(pol.delta):g}: "
            f"α is the worst case (the pure-ε route's RMSE is {pure:.4g}); far less noise where "
            "the values near the median are dense, which cannot be stated in advance")
    return (ROUTE, qq.policy, f"smooth-sensitivity median on the grid {grid:g}", 1,
            cost.describe(), None, worst.noise_bound(conf), conf, note)
