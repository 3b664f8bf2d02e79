"""``OPTIONS (mechanism = 'r2t', max_contribution = GS, beta = β)``: R2T on the captured K-relation.

The user chooses R2T; nothing here looks at the data to choose it. ``max_contribution`` (GS) is a
public bound on one participant's contribution (default
:data:`~provsql_dp.mechanisms.r2t.race.DEFAULT_MAX_CONTRIBUTION`); with β it only sets the
thresholds ``τ = GS^{1/L}, …, GS`` (:func:`~provsql_dp.mechanisms.r2t.race.threshold_count`
picks ``L``) — privacy holds whatever it is. A SUM needs nonnegative declared
bounds (``lower ≥ 0``): R2T releases nonnegative sums. Every validation happens before the ledger
is charged; an LP that fails (time limit, solver status) is replaced by the data-independent
:func:`~provsql_dp.mechanisms.r2t.race.fallback`, and the incident is recorded for the curator.

>>> r2t_kwargs({"max_contribution": 64, "beta": 0.05}, "count", None)
{'max_contribution': 64.0, 'beta': 0.05}
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import _deadline
from ..errors import CaptureTooLarge, InterfaceError, ProgrammingError, SolverError
from ..mechanisms.r2t import race as r2t
from ..provenance.backends import engine_of
from ..provenance.capture import capture, max_rows_of
from ..provenance.owners import owners
from ..sql.expressions import option_text
from .release_info import PrivacyInfo

__all__ = ["R2T_OPTIONS", "r2t_kwargs", "release_r2t", "check_r2t_plan", "check_lp_gap", "declared_max_contribution",
           "with_declared_bound"]

R2T_OPTIONS = {
    "max_contribution": "with mechanism = 'r2t': a public bound GS on one participant's "
                        "contribution (default: what the declarations imply when each participant "
                        "owns a bounded number of rows, else "
                        f"2**{int(np.log2(r2t.DEFAULT_MAX_CONTRIBUTION))}); "
                        "R2T races L thresholds GS^(1/L), …, GS at ε/L each (L chosen from GS "
                        "and β to minimise the error bound, 8 at the default), so its error "
                        "grows like log(GS)·ln(log(GS)/β): declare the smallest public bound "
                        "you can",
    "beta": "with mechanism = 'r2t': the probability that the release exceeds the true answer "
            f"(default {r2t.DEFAULT_BETA})",
    "lp_gap": "with mechanism = 'r2t': a public tolerance γ ≥ 0 (default "
              f"{r2t.DEFAULT_LP_GAP:g}; 0: every LP exact); "
              "each truncation LP may then be solved approximately, within γ·τ below its "
              "optimum, and the noise is calibrated to (1 + γ)·τ: faster LPs with few "
              "participant rows and millions of join results, for a noise larger by 1 + γ",
}

#: seconds one truncation LP may run before the release falls back (a group's whole release,
#: every threshold's LP and its preparation, also within
#: the connection's ``release_time_limit``, :mod:`provsql_dp._deadline`)
LP_TIME_LIMIT = 120.0


def check_lp_gap(gap) -> float | None:
    """A connection's default ``lp_gap`` (``provsql_dp.connect(..., lp_gap=γ)``, ``provsql-dp
    shell|serve --lp-gap γ``): a finite ``γ ≥ 0`` as a float, or ``None`` for R2T's own default
    (public, like the option)."""
    if gap is None:
        return None
    if (isinstance(gap, (str, bool)) or not isinstance(gap, numbers.Real)
            or not (math.isfinite(gap) and gap >= 0)):
        raise InterfaceError(f"lp_gap must be a nonnegative finite number or None, got {gap!r}")
    return float(gap)


def r2t_kwargs(options: dict, kind: str, bounds, default_gap: float | None = None) -> dict:
    """Validate the R2T options of one aggregate (statement and declarations only);
    ``default_gap``, the connection's ``lp_gap``, applies when the statement gives none."""
    allowed = set(R2T_OPTIONS) | {"lower", "upper"}
    extra = sorted(set(options) - allowed)
    if extra:
        raise ProgrammingError(
            f"option {extra[0]} does not apply to mechanism = 'r2t'; its options are "
            + ", ".join(f"{k} ({v})" for k, v in R2T_OPTIONS.items()) + ", and lower/upper for a SUM")
    if kind == "sum" and (bounds is None or bounds[0] < 0):
        raise ProgrammingError(
            "mechanism = 'r2t' releases nonnegative sums: declare bounds with lower ≥ 0, "
            "OPTIONS (lower = 0, upper = …) or SET BOUNDS ON t (c) BETWEEN 0 AND b")
    kwargs = {}
    for key in R2T_OPTIONS:
        if key in options:
            v = options[key]
            bad = isinstance(v, (str, bool)) or not isinstance(v, numbers.Real)
            if bad or not (v >= 0 if key == "lp_gap" else v > 0):
                what = "a nonnegative" if key == "lp_gap" else "a positive"
                raise ProgrammingError(f"option {key} must be {what} number, got {option_text(v)}")
            kwargs[key] = float(v)
    if kwargs.get("max_contribution", 1.0) > 2.0 ** 64:
        raise ProgrammingError("option max_contribution must be at most 2**64")
    if not math.isfinite(kwargs.get("lp_gap", 0.0)):
        raise ProgrammingError("option lp_gap must be finite")
    if not kwargs.get("beta", 0.5) < 1:
        raise ProgrammingError("option beta must lie strictly between 0 and 1")
    if "lp_gap" not in kwargs and default_gap is not None:
        kwargs["lp_gap"] = float(default_gap)
    return kwargs


def declared_max_contribution(plan, bounds) -> float | None:
    """The bound on one participant's contribution that the declarations imply, or None.

    When every participant owns at most ``rows_per_owner`` tuples
    (:func:`~provsql_dp.provenance.owners.owners`: one row per participant, public tables joined
    on declared keys) and each tuple adds at most 1 (a COUNT) or ``upper`` (a SUM clamped to
    its declared bounds), a participant contributes at most their product: a public GS, from the
    plan and the declarations only. (Privacy never depends on GS; a GS below the largest
    contribution would only truncate.)

    >>> from provsql_dp.sql.plan import Aggregate, Scan, Slot
    >>> people = Scan("people", "main", ("id",), ("v0",), ("id",),
    ...               (Slot("people", "column", "id"),), unique_keys=(("id",),))
    >>> declared_max_contribution(Aggregate(people, "count"), None)
    1.0
    >>> declared_max_contribution(Aggregate(people, "sum"), (0.0, 40.0))
    40.0
    """
    own = owners(plan.child)
    if own is None or own.rows_per_owner is None:
        return None
    per_row = 1.0 if plan.kind == "count" else (float(bounds[1]) if bounds else None)
    if per_row is None or not (math.isfinite(per_row) and per_row > 0):
        return None
    return float(own.rows_per_owner) * per_row


def with_declared_bound(plan, bounds, kwargs: dict) -> dict:
    """``kwargs`` with ``max_contribution`` from the declarations when the statement gives none
    and the declarations bound it (:func:`declared_max_contribution`); otherwise unchanged."""
    if "max_contribution" in kwargs:
        return kwargs
    gs = declared_max_contribution(plan, bounds)
    return kwargs if gs is None else {**kwargs, "max_contribution": gs}


def check_r2t_plan(d) -> None:
    """Refuse, before the charge, an R2T release whose public plan (thresholds, noise scales,
    shifts: from ε, ``max_contribution``, β and γ alone) cannot be made —
    ``max_contribution = 1e-8`` (a noise scale below 2^-24), β = 1e-320 (an infinite shift), a
    COUNT at ε = 10⁻⁶ with ``max_contribution = 1e15``. Such a statement was charged, then
    failed "while it read protected data" (red team h85attack-5). ``d``: the aggregate's
    :class:`~provsql_dp.privacy.answer.Decision`."""
    kwargs = with_declared_bound(d.plan, d.bounds, d.kwargs)
    eps = float(d.epsilon) / max(1, len(d.groups))  # each group's, as release_r2t spends it
    try:
        r2t.fallback(eps, rng=None, **kwargs)  # the plan only: no noise drawn, no data
    except (ValueError, ArithmeticError) as e:
        raise ProgrammingError(
            f"R2T cannot plan this release (ε = {eps:g} per group, max_contribution = "
            f"{kwargs.get('max_contribution', r2t.DEFAULT_MAX_CONTRIBUTION):g}, β = "
            f"{kwargs.get('beta', r2t.DEFAULT_BETA):g}): {e}. Choose a max_contribution and β "
            "nearer 1, or another ε. Nothing was charged") from e


def release_r2t(con, plan, eps_total: float, groups, key_names, bounds, kwargs: dict, charge_fn,
                rng, restrict_group):
    """One R2T release per group (ε split equally); returns (description, rows, PrivacyInfo)."""
    eps = eps_total / max(1, len(groups))  # no group: nothing released
    kwargs = with_declared_bound(plan, bounds, kwargs)
    charge = charge_fn()
    try:
        kr, why = capture(engine_of(con), plan, bounds, max_rows=max_rows_of(con),
                           columns=key_names), None
    except (CaptureTooLarge, _deadline.DeadlineExceeded) as e:  # every group reads no data
        kr, why = None, str(e)
    releases, rows = [], []
    for g in groups:
        try:
            if kr is None:
                raise SolverError(why)
            with _deadline.deadline(_deadline.budget_of(con)):  # each group's whole release
                rel = r2t.release(restrict_group(kr, g), eps, rng=rng, time_limit=LP_TIME_LIMIT,
                                  **kwargs)
        except SolverError as e:  # the LP's status or time limit (a number: the statement fails)
            late = str(e) if isinstance(e, _deadline.DeadlineExceeded) else None
            con._catalog.record_incident(f"{why or late or 'R2T truncation LP failed'} "
                                         f"({plan.label!r}); released the data-independent fallback")
            rel = r2t.fallback(eps, rng=rng, **kwargs)
        releases.append(rel)
        rows.append(tuple(g) + (rel.value,))
    desc = [(n, "VARCHAR") for n in key_names] + [(plan.label, "DOUBLE")]
    info = PrivacyInfo(mechanism="r2t", epsilon=charge.epsilon, remaining=charge.remaining,
                       releases=tuple(releases))
    return desc, rows, info
