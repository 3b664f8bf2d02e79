"""Private statements beyond pure ε: ``WITH EPSILON ε DELTA δ`` and ``WITH RHO ρ``.

Which statement gets what (decided from the statement, the plan and the declarations only):

* **a GROUP BY whose groups are not public** (a protected column without declared keys, or an
  expression of one — ``ROUND(x, -1)``, ``FLOOR(x / w)``, ``date_trunc(…)``) with ``DELTA δ``:
  private partition selection (:mod:`.partition_selection`);
* **a COUNT or a bounded SUM on the Laplace route** (each participant owns a bounded number k
  of tuples of bounded weight, groups public): ``WITH RHO ρ`` adds the exact discrete Gaussian
  of ℓ₂ sensitivity ``k·max|bound|`` (1 per row for a count) at ρ-zCDP
  (:mod:`provsql_dp.mechanisms.global_sensitivity.gaussian`); ``WITH EPSILON ε DELTA δ`` takes
  whichever of Laplace at ε (ε-DP, δ not spent) and the Gaussian at ``ρ(ε, δ)`` (the largest ρ
  with ``ρ + 2√(ρ ln(1/δ)) ≤ ε``) has the smaller variance, and charges what it used;
* **a MEDIAN under a bounded δ policy** with ``DELTA δ′``: the smooth-sensitivity median
  (:mod:`.smooth_median_route`);
* everything else is refused with the reason, before anything is charged: its mechanisms are
  calibrated in pure ε (write ``WITH EPSILON ε``, which a ρ budget debits as ε²/2).

The ledger debits the cost in the unit of the user's budget (:mod:`.accounting`).

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE p(id INT PRIMARY KEY, age INT)")
>>> _ = con.execute("INSERT INTO p SELECT range, range % 90 FROM range(1000)")
>>> _ = con.execute("PROTECT TABLE p; SET PRIVACY BUDGET RHO 0.5")
>>> cur = con.execute("SELECT COUNT(*) FROM p WHERE age > 40 WITH RHO 0.01")
>>> cur.privacy.mechanism, cur.privacy.routes, str(cur.privacy.remaining)
('gaussian', ('gaussian',), '0.49')
>>> con.execute("EXPLAIN PRIVACY SELECT COUNT(*) FROM p WITH RHO 0.01").fetchall()[0][:5]
('gaussian', None, 'ℓ₂ sensitivity 1, discrete Gaussian σ = 7.071 on the unit grid', 1, 'ρ = 0.01')
"""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

import numpy as np

from .._numbers import format_eps
from ..errors import ProgrammingError, UnsupportedQueryError
from ..mechanisms.global_sensitivity import gaussian
from ..mechanisms.noise.discrete_gaussian import epsilon_of, plan_gaussian, rho_for
from ..mechanisms.noise.safe_noise import plan_laplace
from ..sql import dialect as d
from ..sql.expressions import in_double_range
from ..sql.plan import Aggregate
from ..sql.public_statement import split_private
from . import smooth_median_route
from .accounting import Cost
from .fast_path import NoRows, _kept_laplace_sql, _true_values
from .no_data import from_no_data, total_range
from .precheck import check_epsilon
from .release_info import PrivacyInfo
from .centred_avg import centred_sensitivity

__all__ = ["cost_of", "release", "explain", "gaussian_choice", "no_mixed"]


#: the largest ρ a statement may name: ρ = ε²/2 at the largest ε (precheck.MAX_EPSILON)
_MAX_RHO = 5e29


def cost_of(tree) -> Cost | None:
    """The cost of a parsed ``PrivateQuery`` with ``DELTA`` or ``RHO`` (None for pure ε or
    accuracy-first), validated: ε > 0, 0 < δ < 1, ρ > 0.

    >>> cost_of(d.parse_one("SELECT 1 WITH RHO 0.25")).describe()
    'ρ = 0.25'
    """
    if not isinstance(tree, d.PrivateQuery):
        return None
    if tree.args.get("rho") is not None:
        rho = d.exact_number(tree.args["rho"], "rho")
        if rho <= 0:
            raise ProgrammingError("rho must be positive")
        if rho > _MAX_RHO:  # 1e400 overflowed after this check (h85attack-4)
            raise ProgrammingError(f"rho must be at most {_MAX_RHO:g} (ε = 10^15 as ρ = ε²/2). "
                                   "Nothing was charged")
        return Cost(rho=rho)
    if tree.args.get("delta") is None:
        return None
    eps = d.exact_number(tree.args["epsilon"], "epsilon")
    delta = d.exact_number(tree.args["delta"], "delta")
    check_epsilon(eps)  # positive, at most 1e15 (1e300 failed after the checks: h85attack-4)
    # exactly, and as the mechanisms read it: 0.99…9 rounds to 1, 1e-320 overflows (h85attack-4)
    if not 0 < delta < 1 or not 0 < float(in_double_range(delta, "delta")) < 1:
        raise ProgrammingError("delta must lie strictly between 0 and 1 (typically below "
                               "1/number of participants, e.g. 1e-6)")
    return Cost(epsilon=eps, delta=delta)


def _is_partition_selection(st) -> bool:
    from .partition_selection import needs_selection, refuse_several

    refuse_several(st.con, st.plan)  # a ratio of two aggregates over selected groups: refused
    return isinstance(st.plan, Aggregate) and needs_selection(st.con, st.plan)


def _refuse(why: str, cost: Cost):
    clause = "WITH RHO" if cost.rho is not None else "WITH EPSILON … DELTA"
    raise UnsupportedQueryError(
        f"{clause} is answered for a COUNT or a bounded SUM on the Laplace route (each "
        "participant owns a bounded number of tuples) and, with DELTA, for a GROUP BY without "
        f"declared keys (partition selection); {why}. Write WITH EPSILON ε instead")


def _no_quantile(st, cost: Cost) -> None:
    from . import quantile_route

    if quantile_route.is_quantile_query(st.query):
        _refuse("a quantile is released by its own pure-ε mechanism", cost)


def no_mixed(st, cost: Cost) -> None:
    """A variance, or a quantile beside other aggregates (.mixed_route): pure ε only (refused
    before the post-processing is compiled, which would refuse their plan in other words)."""
    from . import mixed_route, variance_route

    if variance_route.is_variance_query(st.query) or mixed_route.applies(st):
        _refuse("a variance, or a quantile beside other aggregates, is released by pure-ε "
                "mechanisms", cost)


def _decision(st, cost: Cost):
    """The Laplace-route decision of the statement's one aggregate, or a refusal."""
    from . import routing

    if routing.choose(st) is not None:  # refused (raw rows, nothing protected) or a policy
        if not routing._releasable(st.plan):
            routing._refuse(st)
        _refuse("a query under a Blowfish or δ policy is released in pure ε", cost)
    options = {k: v for k, v in st.options.items() if k != "raw"}
    return _decide_one(st, cost, st.plan, options)


def _decide_one(st, cost: Cost, plan, options: dict):
    from . import routing

    dec = routing.decide(st.con, plan, float(cost.epsilon or 1), options)
    if dec.path != "laplace":
        _refuse(f"{plan.label} takes route {dec.path}, calibrated in pure ε", cost)
    return dec


def _sensitivity(dec) -> tuple[float, bool, int]:
    """ℓ₂ sensitivity, integer, coordinates changed: a participant's k tuples change at most k
    groups, by at most k·max|bound| in ℓ₁, hence in ℓ₂."""
    k = int(dec.own.rows_per_owner)
    changed = max(1, min(k, len(dec.groups)))
    if dec.plan.kind == "count":
        return float(k), True, changed
    if dec.memo.get("centre") is not None:  # an AVG's centred sum: ℓ₁ ≤ k·(U − L)/2
        return centred_sensitivity(k, dec.bounds), False, changed
    lower, upper = dec.bounds
    return k * max(abs(float(lower)), abs(float(upper))), False, changed


def gaussian_choice(cost: Cost, sens: float, integer: bool, changed: int):
    """``(plan, charged cost)``: the Gaussian plan at the cost's ρ, or — for (ε, δ) when
    Laplace at ε has the smaller variance — the Laplace plan at ε, charged as pure ε."""
    rho = cost.rho if cost.rho is not None else rho_for(cost.epsilon, cost.delta)
    try:
        g = plan_gaussian(sens, rho, integer=integer, changed=changed)
        if cost.rho is not None:
            return g, cost
        lap = plan_laplace(sens, float(cost.epsilon), integer=integer, changed=changed)
    except ValueError as e:
        raise ProgrammingError(f"cannot release at {cost.describe()}: {e}") from e
    if lap.noise_variance <= g.noise_variance:
        return lap, Cost(epsilon=cost.epsilon)
    return g, cost


def release(st, cost: Cost, text: str, *, raw: bool = False, rng=None):
    """Release ``st`` at ``cost`` (see the module docstring): ``(desc, rows, PrivacyInfo)``."""
    from . import routing
    from .postprocess import raw_option

    con = st.con
    rng = rng if rng is not None else getattr(con, "_rng", None)
    options = dict(st.options)
    keep_raw = raw_option(options.pop("raw", None), raw)
    no_mixed(st, cost)
    if smooth_median_route.applies(st, cost):  # its intervals named after its column
        desc, rows, info = smooth_median_route.release(st, cost, text, rng)
        return desc, rows, replace(info, value_names=(desc[-1][0],))
    _no_quantile(st, cost)
    if _is_partition_selection(st):
        from . import partition_selection

        desc, rows, info, final = partition_selection.release(con, st.plan, cost, text,
                                                              options, rng)
        return routing._served(st.plan, desc, rows, replace(info, routes=("partition-selection",)),
                               keep_raw or final)
    if not isinstance(st.plan, Aggregate):
        if routing.choose(st) is not None and not routing._releasable(st.plan):
            routing._refuse(st)
        if routing.choose(st) is not None:
            _refuse("a query under a Blowfish or δ policy is released in pure ε", cost)
        from .gaussian_several import release_several

        desc, rows, info = release_several(
            st, cost, text, lambda part, opts: _decide_one(st, cost, part, opts), _sensitivity,
            rng)
        return routing._served(st.plan, desc, rows, info, keep_raw)
    dec = _decision(st, cost)
    sens, integer, changed = _sensitivity(dec)
    plan, charged = gaussian_choice(cost, sens, integer, changed)
    routing.before_charge(st, [dec])
    name = "gaussian" if charged.pure is False else "laplace"
    charge = con._ledger.charge(con.user, charged.epsilon, text, name, cost=charged)
    sql, _ = _kept_laplace_sql(con, dec.plan, dec.bounds, with_count=False)
    true = _true_values(con, sql, 1)[0]
    values = [true.get(tuple(g), 0) for g in dec.groups]
    if name == "gaussian":
        releases = gaussian.release_many(values, sensitivity=sens, rho=plan.rho, integer=integer,
                                         changed=changed, rng=rng)
    else:
        from ..mechanisms.global_sensitivity import laplace

        # the plan chosen (its grid indices allow ``changed`` coordinates to move), drawn here
        x = np.round(np.asarray(values, dtype=np.float64)) if integer else values
        noisy = plan.release_array(x, rng=rng)
        eps = float(charged.epsilon)
        releases = [laplace.LaplaceRelease(value=v, epsilon=eps, sensitivity=sens, integer=integer)
                    for v in (noisy.astype(np.int64).tolist() if integer else noisy.tolist())]
    # a read past the budget (NoRows): the release of 0, its interval the whole range (.no_data)
    releases = from_no_data(releases, *total_range(dec.plan.kind, dec.bounds),
                            isinstance(true, NoRows))
    rows = [tuple(g) + (r.value,) for g, r in zip(dec.groups, releases)]
    desc = [(n, "VARCHAR") for n in dec.key_names] + [(dec.plan.label,
                                                       "BIGINT" if integer else "DOUBLE")]
    info = PrivacyInfo(mechanism=name, epsilon=charge.epsilon, remaining=charge.remaining,
                       releases=tuple(releases), routes=(name,))
    return routing._served(st.plan, desc, rows, info, keep_raw)


def explain(con, tree, conf: float = 0.95) -> list[tuple]:
    """``EXPLAIN PRIVACY <query> WITH RHO ρ | WITH EPSILON ε DELTA δ``: one row per release (the
    unit and the noise in the columns strategy, epsilon and note; the route last but one), and
    the row of the post-processing (ORDER BY, HAVING, LIMIT, arithmetic over the released
    aggregates) split off and compiled exactly as the release does it (the cursor's
    ``_private_release``), so EXPLAIN refuses what the release refuses and no more."""
    from . import routing
    from .explain_route import with_route
    from .post_sql import explain_row as post_row, prepare_post

    inner = tree.this
    cost = cost_of(inner)
    options = d.mechanism_options(inner)
    options.pop("intervals", None)
    core, post = split_private(con.catalog, inner.this)  # afterwards, free: as the release
    st = routing.Statement(con, core, options)
    no_mixed(st, cost)
    post = prepare_post(st, None, post)
    extra = [post_row(post.post, routing.DESC)] if post is not None else []
    return [*_explain_rows(con, st, cost, options, conf), *extra]


def _explain_rows(con, st, cost: Cost, options: dict, conf: float) -> list[tuple]:
    """The rows of :func:`explain` for the core statement (its post-processing split off)."""
    from . import routing
    from .explain_route import with_route

    no_mixed(st, cost)
    if smooth_median_route.applies(st, cost):
        return [with_route(smooth_median_route.explain_row(con, st, cost, conf),
                           smooth_median_route.ROUTE)]
    _no_quantile(st, cost)
    if _is_partition_selection(st):
        from . import partition_selection

        return [with_route(partition_selection.explain_row(con, st.plan, cost, options),
                           "partition-selection")]
    if not isinstance(st.plan, Aggregate) and routing.choose(st) is None:
        from .gaussian_several import explain_several

        rows = explain_several(st, cost, lambda part, opts: _decide_one(st, cost, part, opts),
                               _sensitivity, conf)
        return [with_route(r, r[0]) for r in rows]
    dec = _decision(st, cost)
    sens, integer, changed = _sensitivity(dec)
    plan, charged = gaussian_choice(cost, sens, integer, changed)
    grid = "on the unit grid" if integer and plan.grid == 1 else "on a power-of-two grid"
    rmse = math.sqrt(plan.noise_variance)
    if charged.pure:
        strategy = f"ℓ₁ sensitivity {sens:g}, discrete Laplace scale {plan.noise_scale:.4g} {grid}"
        note = (f"{dec.plan.label}: Laplace at ε = {format_eps(charged.epsilon)} has a smaller "
                f"variance than the Gaussian at this (ε, δ): charged ε = "
                f"{format_eps(charged.epsilon)}, δ not spent")
        alpha = None
    else:
        strategy = f"ℓ₂ sensitivity {sens:g}, discrete Gaussian σ = {plan.sigma:.4g} {grid}"
        rel = gaussian.GaussianRelease(0, plan.rho, sens, integer, changed)
        alpha = rel.noise_bound(conf)
        eq = (f"(ε = {epsilon_of(plan.rho, Fraction(1, 10**6)):.4g}, δ = 1e-6)"
              if cost.rho is not None else f"(ε, δ) via ρ = {float(plan.rho):.4g}")
        note = (f"{dec.plan.label}: ρ-zCDP with ρ = {float(plan.rho_spent):.4g} ≤ "
                f"{float(plan.rho):.4g} {eq}; α per group, P(|release − truth| ≤ α) ≥ "
                "confidence (exact for the discrete noise)")
    row = ("gaussian" if not charged.pure else "laplace", None, strategy, len(dec.groups),
           cost.describe(), rmse, alpha, conf, note)
    return [with_route(row, "gaussian" if not charged.pure else "laplace")]
