"""``EXPLAIN PRIVACY`` rows of the aggregate routes (laplace, single-owner, k-star,
k-triangle, recursive-lp; r2t's are in :mod:`.explain_r2t`) and their ex-ante accuracy.

The route of each aggregate is chosen by :func:`provsql_dp.privacy.routing.decide` — from the
plan, the options and the declarations only, never from the data — the same choice the release
makes, so ``EXPLAIN PRIVACY`` names exactly the route the release takes (column ``route``).
Accuracy before the release, from public information only:

* **laplace**: the noise is ``DLap`` on the public grid of ``plan_laplace(sensitivity, ε)`` with
  the sensitivity read from the declarations (rows per owner × the largest |bound|), so the
  two-sided α at the confidence is exact (:func:`provsql_dp.mechanisms.noise.sources.error_bound`), for
  the exact COUNT or the SUM of values clamped to the bounds; ``WITH ACCURACY α`` finds the
  smallest ε (three significant digits, rounded up) whose α is within the target;
* **recursive** (single-owner closed form, k-star and k-triangle constructions, or LPs) and
  **r2t**: the noise scale ``Δ̂/ε₂`` and the truncation depend on the data, so no error can be
  stated in advance: the row says so and ``WITH ACCURACY`` is refused before anything is spent
  (the released interval, one-sided, is honest after the fact: :mod:`.intervals`). For the
  recursive mechanism, ``… WITH EPSILON ε ESTIMATE ERROR WITH EPSILON e`` releases a charged
  private estimate instead (:mod:`.error_estimate`).

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE p(id INT PRIMARY KEY, age INT); PROTECT TABLE p")
>>> row = con.execute("EXPLAIN PRIVACY SELECT COUNT(*) FROM p WITH EPSILON 1").fetchall()[0]
>>> row[0], row[2], row[6], row[8]
('laplace', 'sensitivity 1, discrete Laplace on the unit grid', 3.0, 'laplace')
>>> row = con.execute("EXPLAIN PRIVACY SELECT COUNT(*) FROM p WITH ACCURACY 10").fetchall()[0]
>>> row[4], row[6] <= 10
('0.3', True)
"""

from __future__ import annotations

import math
from fractions import Fraction

from .._numbers import format_eps
from .._numbers import round_up_decimal as _round_up
from ..errors import ProgrammingError
from ..mechanisms.noise.sources import error_bound
from ..mechanisms.noise.safe_noise import plan_laplace
from ..sql import dialect as d
from ..sql.plan import Aggregates
from .centred_avg import centre_avg_sums, centred_sensitivity
from . import aggregates_l1, group_l1
from .answer import mechanism_kwargs
from .explain_recursive import CLOSED_FORM_NOTE, recursive_note
from .group_epsilon import l1_across_groups
from .kstar_route import kstar_note

__all__ = ["explain_rows", "with_route", "laplace_row", "recursive_row", "laplace_alpha",
           "laplace_epsilon_for", "shown"]

_RECURSIVE_NOTE = ("answered by the recursive mechanism ({how}): its noise scale Δ̂/ε₂ and its "
                   "truncation depend on the data, so no error or accuracy-first ε can be given in "
                   "advance; {interval}; a private estimate of the noise, charged e, is available: add ESTIMATE "
                   "ERROR WITH EPSILON e after WITH EPSILON ε; ")


def laplace_alpha(sensitivity: float, eps: float, conf: float, integer: bool) -> float:
    """The exact two-sided α at ``conf`` of a Laplace-route release (public)."""
    return error_bound(plan_laplace(sensitivity, eps, integer=integer), conf, integer=integer)


def laplace_variance(sensitivity: float, eps: float, integer: bool) -> float:
    """The exact variance of the discrete noise ``γK``, ``K ~ DLap(λ)``: ``2γ²a/(1 − a)²``,
    ``a = e^{−1/λ}`` (plus nothing for the grid rounding of an integer count)."""
    plan = plan_laplace(sensitivity, eps, integer=integer)
    a = math.exp(-1.0 / float(plan.noise_units))
    return 2.0 * plan.grid ** 2 * a / (1.0 - a) ** 2


def laplace_epsilon_for(sensitivity: float, alpha: float, conf: float, integer: bool) -> Fraction:
    """The smallest three-significant-digit ε whose :func:`laplace_alpha` is at most ``alpha``."""
    eps = _round_up(sensitivity * math.log(1.0 / (1.0 - conf)) / alpha)
    for _ in range(200):  # the grid rounding adds at most a step: a few increments at most
        if laplace_alpha(sensitivity, float(eps), conf, integer) <= alpha:
            return eps
        eps = _round_up(float(eps) * 1.01)
    raise ProgrammingError(f"no ε reaches the accuracy α = {alpha:g} for this query; ask for a "
                           "larger α")


def _sensitivity(dec) -> tuple[float, bool]:
    own = dec.own
    if dec.plan.kind == "count":
        return float(own.rows_per_owner), True
    if dec.memo.get("centre") is not None:  # an AVG's centred sum (:mod:`.centred_avg`)
        return centred_sensitivity(own.rows_per_owner, dec.bounds), False
    lower, upper = dec.bounds
    return float(own.rows_per_owner) * max(abs(float(lower)), abs(float(upper))), False


def with_route(row, name: str) -> tuple:
    """An ``EXPLAIN PRIVACY`` row with its route's name inserted before the note (the last
    column stays the note)."""
    row = tuple(row)
    return row[:8] + (name,) + row[8:]


def shown(eps) -> str | None:
    """The ε column of a row: the statement's ε, exactly (None when not given)."""
    return None if eps is None else format_eps(eps)


def explain_rows(con, plan, eps, tree, options: dict, decide):
    """The rows of ``EXPLAIN PRIVACY`` (one per released aggregate, with its route) for a
    statement no statement route takes. ``eps`` is the ε asked (or None), ``tree`` the EXPLAIN
    PRIVACY node (accuracy, confidence), ``decide`` :func:`provsql_dp.privacy.routing.decide`."""
    conf = Fraction(95, 100)
    if tree.args.get("confidence") is not None:
        conf = d.exact_number(tree.args["confidence"], "the confidence")
        if not 0 < conf < 1:
            raise ProgrammingError("the confidence must be strictly between 0 and 1 (e.g. 0.95)")
    alpha_goal = None
    if eps is None and tree.args.get("accuracy") is not None:
        alpha_goal = float(d.exact_number(tree.args["accuracy"], "the accuracy α"))
        if alpha_goal <= 0:
            raise ProgrammingError("the accuracy α must be positive")
    eps_probe = Fraction(1, 2) if eps is None else Fraction(eps)
    if isinstance(plan, Aggregates):  # as the release does: ε split or one ℓ1 bound, AVG centred
        decisions, part_eps = aggregates_l1.decide_all(con, plan, eps_probe, options, decide,
                                                       mechanism_kwargs)
        shares = [e / eps_probe for e in part_eps]
        centre_avg_sums(plan, decisions)
    else:
        opts = options if plan.kind == "sum" else {k: v for k, v in options.items()
                                                   if k not in ("lower", "upper")}
        decisions, shares = [decide(con, plan, eps_probe, opts)], [Fraction(1)]
    if alpha_goal is not None:
        if any(dec.path != "laplace" for dec in decisions):
            eps = None  # cannot be known in advance: accuracy_epsilon refuses, nothing spent
        else:
            need = max(laplace_epsilon_for(*_sensitivity(dec)[:1], alpha_goal, float(conf),
                                           _sensitivity(dec)[1]) / share
                       for dec, share in zip(decisions, shares))
            eps = need if need.denominator in (1, 2, 4, 5, 8, 10) else _round_up(float(need))
    return [with_route(dec.route.explain(con, dec, None if eps is None else Fraction(eps) * share,
                                         eps, conf, alpha_goal), dec.path)
            for dec, share in zip(decisions, shares)]


def laplace_row(con, dec, part_eps, eps, conf, alpha_goal):
    """The row of route laplace: the exact α of the discrete noise at ``part_eps``."""
    label = dec.plan.label
    shown_eps = shown(eps)
    sens, integer = _sensitivity(dec)
    what = ("the exact count" if integer
            else f"the SUM of (the values clamped to the declared bounds − {dec.memo['centre']:g})"
            if dec.memo.get("centre") is not None
            else "the SUM of the values clamped to the declared bounds")
    strategy = (f"sensitivity {sens:g}, discrete Laplace on the unit grid" if integer
                else f"sensitivity {sens:g}, discrete Laplace on a power-of-two grid")
    if part_eps is None:
        return ("laplace", None, strategy, len(dec.groups), None, None, None, float(conf),
                f"{label}: no ε given")
    e = float(part_eps)
    alpha = laplace_alpha(sens, e, float(conf), integer)
    rmse = math.sqrt(laplace_variance(sens, e, integer))
    note = (f"{label}: α per group, P(|release − {what}| ≤ α) ≥ confidence (exact for the "
            "discrete noise; every group at this ε, a participant is in one group)")
    if alpha_goal is not None:
        note = f"run the query WITH EPSILON {shown_eps}; " + note
    return ("laplace", None, strategy, len(dec.groups), shown_eps, rmse, alpha, float(conf), note)


def recursive_row(con, dec, part_eps, eps, conf, alpha_goal):
    """The row of routes single-owner, k-star, k-triangle and recursive-lp: no error in
    advance; the cost note (the curator's sizes read the data: not for an accuracy refusal)."""
    l1 = dec.memo.get("l1") is not None or l1_across_groups(dec)
    how = (aggregates_l1.strategy(dec) or group_l1.STRATEGY.format(g=len(dec.groups)) if l1
           else "single-owner closed form: every tuple has one owner" if dec.path == "single-owner"
           else dec.star.how if dec.star is not None
           else "linear programs on HiGHS")
    if dec.memo.get("centre") is not None:  # an AVG's SUM on the single-owner route (centred_avg)
        how += f"; the AVG's SUM released as Σ (x − {dec.memo['centre']:g}), signed"
    elif getattr(dec, "signed", False) and not l1:  # terms may be negative (answer.as_recursive)
        how += "; signed: a positive and a negative part, each at ε/2"
    interval = ("a signed SUM gets no interval (its two truncations are unbounded)"
                if getattr(dec, "signed", False) else
                "the released interval (one-sided, from below) is honest after the fact")
    note = _RECURSIVE_NOTE.format(how=how, interval=interval)
    if alpha_goal is None:
        note += (kstar_note(con, dec.star) if dec.star is not None
                 else CLOSED_FORM_NOTE if dec.path == "single-owner"
                 else recursive_note(con, dec.plan, part_eps))
    else:
        note = note.rstrip("; ")
    return ("recursive", None, how, len(dec.groups), shown(eps), None, None, None,
            f"{dec.plan.label}: {note}")
