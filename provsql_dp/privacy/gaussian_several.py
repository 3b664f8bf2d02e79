"""Several aggregates (or an AVG) in one select list under ``WITH RHO ρ`` or ``WITH EPSILON ε
DELTA δ``: every part on the Laplace route, the cost shared as :func:`.answer.answer_several`
shares ε (each column an equal share, an AVG's share split between its SUM and its COUNT).

Under ρ every part gets the discrete Gaussian at its share of ρ (ρ adds up). Under (ε, δ) the
statement takes whichever has the smaller total variance: Laplace at the shares of ε (charged
ε, δ not spent) or the Gaussian at the shares of ``ρ(ε, δ)`` (charged (ε, δ)) — with several
parts the Gaussian can win, since the shares of ρ shrink the noise's sd only by their square
root.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE p(id INT PRIMARY KEY, age INT)")
>>> _ = con.execute("INSERT INTO p SELECT range, range % 90 FROM range(1000)")
>>> _ = con.execute("PROTECT TABLE p; SET PRIVACY BUDGET RHO 1; SET BOUNDS ON p (age) BETWEEN 0 AND 100")
>>> cur = con.execute("SELECT AVG(age), COUNT(*) FROM p WITH RHO 0.5")
>>> cur.privacy.mechanism, cur.privacy.columns, 40 < cur.fetchone()[0] < 50
('gaussian', ('AVG(age)', 'COUNT(*)'), True)
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..errors import ProgrammingError
from ..mechanisms.global_sensitivity import gaussian, laplace
from ..mechanisms.noise.discrete_gaussian import plan_gaussian, rho_for
from ..mechanisms.noise.safe_noise import plan_laplace
from .accounting import Cost
from .answer import sum_bounds
from .fast_path import NoRows, _kept_laplace_sql, _true_values
from .no_data import from_no_data, total_range
from .release_info import PrivacyInfo, column_rows
from .centred_avg import centre_avg_sums, column_bounds

__all__ = ["release_several", "explain_several"]


def _shares(plan) -> list[Fraction]:
    shares = [Fraction(0)] * len(plan.parts)
    for col in plan.columns:
        for i in col.parts:
            shares[i] = Fraction(1, len(plan.columns) * len(col.parts))
    return shares


def _plans(cost: Cost, sens, shares):
    """``(name, plans, charged cost)``: per part, the plan of the cheaper mechanism."""
    try:
        rho = cost.rho if cost.rho is not None else rho_for(cost.epsilon, cost.delta)
        g = [plan_gaussian(s, rho * sh, integer=i, changed=c) for (s, i, c), sh in zip(sens, shares)]
        if cost.rho is not None:
            return "gaussian", g, cost
        lap = [plan_laplace(s, float(cost.epsilon * sh), integer=i, changed=c)
               for (s, i, c), sh in zip(sens, shares)]
    except ValueError as e:
        raise ProgrammingError(f"cannot release at {cost.describe()}: {e}") from e
    if sum(p.noise_variance for p in lap) <= sum(p.noise_variance for p in g):
        return "laplace", lap, Cost(epsilon=cost.epsilon)
    return "gaussian", g, cost


def release_several(st, cost: Cost, text: str, decide_one, sensitivity, rng):
    """Release the ``Aggregates`` plan of ``st`` at ``cost``: ``(desc, rows, info)`` before
    post-processing. ``decide_one(part, options)`` is the part's Laplace-route decision (or a
    refusal), ``sensitivity(dec)`` its ``(Δ, integer, changed)``."""
    from . import routing

    con, plan = st.con, st.plan
    options = {k: v for k, v in st.options.items() if k != "raw"}
    col_bounds = column_bounds(plan, sum_bounds(options))  # an AVG's refused
    decisions = [decide_one(part, options if part.kind == "sum" else
                            {k: v for k, v in options.items() if k not in ("lower", "upper")})
                 for part in plan.parts]
    centres = centre_avg_sums(plan, decisions)  # an AVG's SUM part centred, as on the ε route
    sens = [sensitivity(d) for d in decisions]
    shares = _shares(plan)
    name, plans, charged = _plans(cost, sens, shares)
    routing.before_charge(st, decisions)
    charge = con._ledger.charge(con.user, charged.epsilon, text, name, cost=charged)
    per_part = []
    for dec, p, (s, integer, changed), sh in zip(decisions, plans, sens, shares):
        m = dec.memo.get("centre")
        sql, _ = _kept_laplace_sql(con, dec.plan, dec.bounds, with_count=m is not None)
        true, *count = _true_values(con, sql, 1 + (m is not None))
        late = isinstance(true, NoRows)  # read past the budget: 0 and the whole range (.no_data)
        if m is not None:  # Σ (clamp(x) − m) = SUM − m·COUNT (:mod:`.centred_avg`)
            true = {k: v - m * count[0].get(k, 0) for k, v in true.items()}
        x = np.asarray([float(true.get(tuple(g), 0)) for g in dec.groups], dtype=np.float64)
        noisy = p.release_array(np.round(x) if integer else x, rng=rng)
        vals = noisy.astype(np.int64).tolist() if integer else noisy.tolist()
        if name == "gaussian":
            rels = [gaussian.GaussianRelease(v, p.rho, s, integer, changed) for v in vals]
        else:
            e = float(charged.epsilon * sh)
            rels = [laplace.LaplaceRelease(v, e, s, integer) for v in vals]
        rels = from_no_data(rels, *total_range(dec.plan.kind, None if m is not None else
                                               dec.bounds), late)
        per_part.append(list(zip(vals, rels)))
    rows, releases = column_rows(plan, decisions[0].groups, col_bounds,
                                 lambda i, gi: per_part[i][gi], centres)
    desc = [(n, "VARCHAR") for n in decisions[0].key_names]
    for col in plan.columns:
        kind = "count" if col.kind != "avg" and plan.parts[col.parts[0]].kind == "count" else None
        desc.append((col.label, "BIGINT" if kind else "DOUBLE"))
    info = PrivacyInfo(mechanism=name, epsilon=charge.epsilon, remaining=charge.remaining,
                       releases=tuple(releases), columns=tuple(c.label for c in plan.columns),
                       routes=tuple(name for _ in plan.parts))
    return desc, rows, info


def explain_several(st, cost: Cost, decide_one, sensitivity, conf: float) -> list[tuple]:
    """``EXPLAIN PRIVACY`` rows of an ``Aggregates`` plan: one per part (without the route)."""
    plan = st.plan
    options = {k: v for k, v in st.options.items() if k != "raw"}
    decisions = [decide_one(part, options if part.kind == "sum" else
                            {k: v for k, v in options.items() if k not in ("lower", "upper")})
                 for part in plan.parts]
    centre_avg_sums(plan, decisions)
    sens = [sensitivity(d) for d in decisions]
    name, plans, charged = _plans(cost, sens, _shares(plan))
    rows = []
    for dec, p, (s, integer, _) in zip(decisions, plans, sens):
        noise = (f"discrete Gaussian σ = {p.sigma:.4g}" if name == "gaussian"
                 else f"discrete Laplace scale {p.noise_scale:.4g}")
        rows.append((name, None, f"sensitivity {s:g}, {noise}", len(dec.groups), cost.describe(),
                     float(np.sqrt(p.noise_variance)), None, conf,
                     f"{dec.plan.label}: its share of the statement's {charged.describe()}"))
    return rows
