"""``EXPLAIN PRIVACY <query> WITH EPSILON ε ESTIMATE ERROR WITH EPSILON e [CONFIDENCE c]``: a
privately released, charged estimate of a recursive-mechanism release's error.

A recursive-mechanism query's error cannot be known from public information (its noise scale
``Δ̂/ε₂`` follows the data, :mod:`.explain_route`), so plain ``EXPLAIN PRIVACY`` says so and spends
nothing. This statement is the opt-in alternative: it **charges e** to the user's ledger (before
any protected row is read, like every release) and releases, per aggregate and group, the index
``j`` of ``Δ = θe^{jβ}`` that the release at ε would compute, with exact discrete Laplace noise at
e — ``e``-DP by the argument of :mod:`provsql_dp.mechanisms.recursive.error_estimate` (the release's own
Lemma 1/Lemma 4); e is split over the aggregates the recursive mechanism answers as the release
splits ε (equal shares per column, the two parts of an AVG or a signed SUM), then over the
groups (sequential composition — or the whole share per group when each participant's tuples
fall in one group: parallel composition). What is shown is post-processing of the released
indices and public parameters:

* ``expected_rmse``: a point estimate of the release's root-mean-square **noise**;
* ``alpha``: a bound on the release's noise ``|X̂ − X|`` with probability ≥ the confidence over
  this estimate and the release together;
* the note: the Δ estimate with its interval, and what cannot be estimated: the truncation
  ``truth − X ≥ 0`` (one-sided: the release never over-states X ≤ the truth) — at most what the
  ``2j`` most influential participants add (Chen & Zhou Lemma 8).

Several groups: the row shows the largest α and RMSE over them; every group's estimate is on
``cursor.privacy.estimates``. Refused, with nothing spent, when no aggregate of the query goes to
the recursive mechanism (the Laplace and Blowfish routes' errors are public: plain ``EXPLAIN
PRIVACY`` gives them), for R2T and quantiles (not covered), and for ``OPTIONS (max_groups …)``.
Estimates describe the data as they are now; the later release is charged its own ε.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE e(src INT, dst INT); INSERT INTO e VALUES (1,2),(2,3),(1,3)")
>>> _ = con.execute("PROTECT TABLE e BY (src, dst) AS node")
>>> _ = con.execute("SET PRIVACY BUDGET 2")
>>> cur = con.execute("EXPLAIN PRIVACY SELECT COUNT(*) FROM e a JOIN e b ON a.dst = b.src "
...                   "WITH EPSILON 1 ESTIMATE ERROR WITH EPSILON 0.25")
>>> row = cur.fetchall()[0]
>>> row[0], row[6] > 0, cur.privacy.mechanism, cur.privacy.epsilon, cur.privacy.remaining
('recursive', True, 'error-estimate', 0.25, 1.75)
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from .. import _deadline
from .._numbers import format_eps
from ..errors import CaptureTooLarge, ProgrammingError, SolverError, UnsupportedQueryError
from ..mechanisms.recursive import error_estimate as ee
from ..mechanisms.recursive._framework import resolve_params
from ..mechanisms.noise.safe_noise import plan_laplace
from ..provenance.backends import engine_of
from ..provenance.capture import capture, max_rows_of
from ..sql.post_split import split_post
from ..sql.public_values import public_values
from ..sql import dialect as d
from ..sql.plan import Aggregate, Aggregates
from . import aggregates_l1
from .centred_avg import centre_avg_sums
from .answer import LP_TIME_LIMIT, _group_mask, _restrict, mechanism_kwargs
from .explain_route import with_route
from .failures import MIN_EPSILON, release_failure
from .group_epsilon import l1_across_groups, one_group_per_participant
from .precheck import check_epsilon
from .release_info import PrivacyInfo
from .routing import DESC, Statement, before_charge, choose, decide

__all__ = ["estimate_error", "MECHANISM"]

#: the ledger's mechanism name of an error estimate
MECHANISM = "error-estimate"


def _refuse(why: str) -> ProgrammingError:
    return ProgrammingError(f"ESTIMATE ERROR is not available for this query: {why}; nothing "
                            "was spent")


def estimate_error(con, tree, text: str, rng=None):
    """Run ``EXPLAIN PRIVACY … ESTIMATE ERROR WITH EPSILON e``; returns (description, rows,
    PrivacyInfo). Everything is validated before the charge; the charge precedes any read."""
    rng = rng if rng is not None else getattr(con, "_rng", None)
    e = d.exact_number(tree.args["estimate"], "the estimate's epsilon")
    if not e >= MIN_EPSILON:
        raise ProgrammingError(f"the estimate's epsilon must be at least {MIN_EPSILON:g}")
    check_epsilon(e)  # finite, at most MAX_EPSILON (precheck): named before the charge
    conf = Fraction(95, 100)
    if tree.args.get("confidence") is not None:
        conf = d.exact_number(tree.args["confidence"], "the confidence")
        if not 0 < conf < 1:
            raise ProgrammingError("the confidence must be strictly between 0 and 1 (e.g. 0.95)")
    inner = tree.this
    if not isinstance(inner, d.PrivateQuery) or inner.args.get("epsilon") is None:
        raise ProgrammingError("ESTIMATE ERROR needs the release's ε: EXPLAIN PRIVACY <query> "
                               "WITH EPSILON ε ESTIMATE ERROR WITH EPSILON e")
    eps = d.exact_number(inner.args["epsilon"], "epsilon")
    if not eps >= MIN_EPSILON:
        raise ProgrammingError(f"epsilon must be at least {MIN_EPSILON:g}")
    check_epsilon(eps)
    options = d.mechanism_options(inner)
    options.pop("intervals", None)
    # the aggregates the statement releases (its ORDER BY, HAVING, LIMIT: post-processing)
    st = Statement(con, split_post(public_values(inner.this, con._catalog.con))[0], options)
    route = choose(st)  # the statement routes of the table, as the release tries them
    if route is not None and route.name == "quantile":
        raise _refuse("a quantile's error is public (plain EXPLAIN PRIVACY … WITH EPSILON gives it)")
    if route is not None and route.name in ("mixed", "variance"):
        raise _refuse("a quantile's or a variance's error is public (plain EXPLAIN PRIVACY … WITH "
                      "EPSILON gives it); estimate the other aggregates' errors without them")
    plan = st.plan
    if route is not None and route.name == "refused":
        if not isinstance(plan, (Aggregate, Aggregates)):
            raise UnsupportedQueryError("a private query must end in an aggregate; raw rows are "
                                        "never released")
        raise _refuse("the query reads no protected table")
    if route is not None:
        raise _refuse("it is answered under a Blowfish policy, whose error is public (plain "
                      "EXPLAIN PRIVACY … WITH EPSILON gives it)")
    options.pop("raw", None)  # post-processing: no effect on the release's noise
    if str(options.get("mechanism", "")).lower() == "r2t":
        raise _refuse("it covers the recursive mechanism, not R2T (whose stated error is "
                      "public: plain EXPLAIN PRIVACY)")
    if "max_groups" in options:
        raise _refuse("OPTIONS (max_groups …) truncates per participant; estimate without it")
    if isinstance(plan, Aggregates):  # ε split over the aggregates, or one ℓ1 bound across them
        decisions, part_eps = aggregates_l1.decide_all(con, plan, eps, options, decide,
                                                       mechanism_kwargs)
        shares = [p / Fraction(eps) for p in part_eps]
        centre_avg_sums(plan, decisions)  # as the release does: an AVG's SUM centred
        if decisions[0].memo.get("l1") is not None:
            raise _refuse("it does not cover several aggregates released together with one ℓ1 "
                          "bound (privacy.aggregates_l1) yet: estimate each aggregate in a "
                          "statement of its own")
    else:
        opts = options if plan.kind == "sum" else {k: v for k, v in options.items()
                                                   if k not in ("lower", "upper")}
        decisions, shares = [decide(con, plan, eps, opts)], [Fraction(1)]
    chosen = [i for i, dec in enumerate(decisions) if dec.path in ("recursive-lp", "single-owner")]
    if not chosen and any(dec.path in ("k-star", "k-triangle") for dec in decisions):
        raise _refuse("it does not cover k-star and k-triangle counts released with their "
                      "size-independent constructions yet (privacy.kstar_route)")
    if not chosen:
        raise _refuse("every aggregate is answered by the Laplace mechanism, whose error is "
                      "public (plain EXPLAIN PRIVACY … WITH EPSILON gives it)")
    if not any(decisions[i].groups for i in chosen):
        raise _refuse("the GROUP BY has no group (its public key table is empty): no release, "
                      "nothing to estimate")
    total = sum(shares[i] for i in chosen)
    jobs = [_job(decisions[i], e * shares[i] / total) for i in chosen]  # validates, reads nothing
    before_charge(st, [decisions[i] for i in chosen])
    # charged before any protected row is read: e never depends on the data
    charge = con._ledger.charge(con.user, e, text, MECHANISM)
    found, rows = {}, []
    try:  # the rows too: a failure after the charge is a PEP 249 error naming no data
        for i, job in zip(chosen, jobs):
            found[i] = _estimate(con, decisions[i], job, rng)
        for i, (dec, share) in enumerate(zip(decisions, shares)):
            if i in found:
                rows.append(with_route(_estimate_row(dec, found[i], eps * share, float(conf)),
                                       dec.path))
            else:  # the plain EXPLAIN PRIVACY row of its route
                rows.append(with_route(dec.route.explain(con, dec, eps * share, eps, conf, None),
                                       dec.path))
    except Exception as err:  # noqa: BLE001 - after the charge: nothing about the data may show
        raise release_failure(con, err) from (None if con.role == "analyst" else err)
    info = PrivacyInfo(mechanism=MECHANISM, epsilon=charge.epsilon, remaining=charge.remaining,
                       estimates=tuple(found[i] for i in chosen))
    return DESC, rows, info


def _job(dec, e_part: Fraction) -> tuple[float, float, object]:
    """(the release's ε per group, the estimate's ε per group, its parameters), validated."""
    n = len(dec.groups)
    l1 = l1_across_groups(dec)  # one Δ for the whole vector of groups: one estimate at e
    parallel = l1 or (dec.path == "single-owner" and bool(dec.plan.group_by)
                      and one_group_per_participant(dec.plan, dec.own))
    eps_g = dec.epsilon if parallel else dec.epsilon / n
    est_g = float(e_part) if parallel else float(e_part) / n
    half = 2 if dec.signed and not l1 else 1
    try:
        params = resolve_params(eps_g / half, dec.style, **dec.kwargs)
        plan_laplace(1, est_g / half, integer=True)
    except ValueError as err:
        raise ProgrammingError(f"ESTIMATE ERROR cannot be planned: {err}; nothing was spent") from err
    return eps_g, est_g, params


def _estimate(con, dec, job, rng) -> tuple:
    """One estimate per group (reads protected rows: after the charge)."""
    eps_g, est_g, _ = job
    try:
        kr, why = capture(engine_of(con), dec.plan, dec.bounds, max_rows=max_rows_of(con),
                           columns=dec.key_names), None
    except (CaptureTooLarge, _deadline.DeadlineExceeded) as e:  # every group gets the data-free index
        kr, why = None, str(e)
    if l1_across_groups(dec):
        return (_estimate_l1(con, dec, kr, why, eps_g, est_g, rng),)
    out = []
    for g in dec.groups:
        try:
            if kr is None:
                raise SolverError(why)
            with _deadline.deadline(_deadline.budget_of(con)):  # each group's whole estimate
                est = ee.estimate(_restrict(kr, dec.key_names, g), eps_g, est_g, dec.style, rng,
                                  signed=dec.signed, time_limit=LP_TIME_LIMIT, **dec.kwargs)
        except SolverError as e:  # the LP failed or timed out: a data-free index
            late = str(e) if isinstance(e, _deadline.DeadlineExceeded) else None
            con._catalog.record_incident(f"error estimate: {why or late or 'Δ search failed'} "
                                         f"({dec.plan.label!r}); released the index of j = 0")
            params = resolve_params(eps_g / (2 if dec.signed else 1), dec.style, **dec.kwargs)
            if dec.signed:
                est = ee.SignedNoiseEstimate(tuple(ee.release_index(0, est_g / 2, params, rng)
                                                   for _ in range(2)))
            else:
                est = ee.release_index(0, est_g, params, rng)
        out.append(est)
    return tuple(out)


def _estimate_l1(con, dec, kr, why, eps_g, est_g, rng):
    """The one estimate of a release with one ℓ1 bound across the groups (:mod:`.group_l1`):
    the index ``j`` of the participants' norms over every declared group (|weight| per tuple
    for a signed SUM, both parts in one norm), released at the whole ``e`` — one ``j`` moves by
    at most one between neighbours, as for a scalar release."""
    params = resolve_params(eps_g, dec.style, **dec.kwargs)
    j = 0
    if kr is not None:
        mask = np.zeros(len(kr), dtype=bool)
        for g in dec.groups:
            mask |= _group_mask(kr, dec.key_names, g)
        w = np.abs(np.asarray(kr.weights, dtype=np.float64))
        j = ee.delta_index(kr.restrict(mask), params, weights=w[mask])
    else:
        con._catalog.record_incident(f"error estimate: {why} ({dec.plan.label!r}); released "
                                     "the index of j = 0")
    return ee.release_index(j, est_g, params, rng)


def _estimate_row(dec, estimates, part_eps, conf: float) -> tuple:
    how = ("single-owner closed form" if dec.path == "single-owner"
           else "linear programs on HiGHS")
    alphas = [est.alpha(conf) for est in estimates]
    rmses = [est.rmse() for est in estimates]
    worst = max(range(len(estimates)), key=alphas.__getitem__)
    lo, hi = estimates[worst].delta_interval(conf)
    spent = sum(est.epsilon for est in estimates)
    where = f" (the largest over {len(estimates)} groups; each group on cursor.privacy.estimates)" \
        if len(estimates) > 1 else ""
    note = (f"{dec.plan.label}: PRIVATE ESTIMATE (charged ε = {spent:.4g}, released with discrete "
            f"Laplace noise; the release itself is charged its own ε){where}: Δ ≈ "
            f"{estimates[worst].delta_estimate:.4g}, between {lo:.4g} and {hi:.4g} at the "
            "confidence; α bounds the release's noise |release − X| with probability ≥ "
            "confidence over this estimate and the release together (a guarantee, wide when e "
            "is small beside ε); expected_rmse is a point estimate of the noise, and so is "
            f"{estimates[worst].typical_bound(conf):.4g}, the ± the release would state at the "
            "estimated Δ. Not estimated: the truncation truth − X ≥ 0 (X ≤ the truth "
            "always, so the release errs low), at most what the "
            f"{estimates[worst].truncation_participants(conf)} participants whose removal lowers "
            "the answer most contribute (Chen & Zhou Lemma 8)")
    return ("recursive", None, how, len(dec.groups), format_eps(part_eps), max(rmses),
            max(alphas), conf, note)
