"""Privacy budgets in three units, and how a statement's cost is debited from each.

The curator picks a user's unit when setting the budget:

==================================================  =============  ==============================
statement                                           unit           composes by
==================================================  =============  ==============================
``SET PRIVACY BUDGET 3 FOR USER 'a'``               ``epsilon``    ε adds (pure ε-DP)
``SET PRIVACY BUDGET EPSILON 3 DELTA 1e-6 …``       ``epsilon-     ε adds and δ adds (basic
                                                    delta``        composition of (ε, δ)-DP)
``SET PRIVACY BUDGET RHO 0.5 …``                    ``rho``        ρ adds (zero-concentrated DP)
==================================================  =============  ==============================

A statement asks ``WITH EPSILON ε`` (pure), ``WITH EPSILON ε DELTA δ`` or ``WITH RHO ρ``, and
:func:`debit` converts it into the budget's unit, exactly (every amount is a fraction):

* pure ε is debited as ε from an ε budget, as (ε, 0) from an (ε, δ) budget, and as
  ``ρ = ε²/2`` from a ρ budget (an ε-DP release is ε²/2-zCDP, Bun & Steinke 2016, Prop. 1.4);
* (ε, δ) is debited from an (ε, δ) budget only: approximate DP does not convert to pure DP or to
  zCDP;
* ρ is debited from a ρ budget only (a ρ budget that must end as (ε, δ) is displayed so:
  ``ρ → (ρ + 2√(ρ ln(1/δ)), δ)``, Bun & Steinke Prop. 1.3, :func:`equivalent`).

Every refusal here happens before anything is charged and names the fix. This follows OpenDP's
and Tumult's accounting: a budget is an immutable value of one privacy notion (Tumult's
``PureDPBudget`` / ``ApproxDPBudget`` / ``RhoZCDPBudget``), composition is addition within it,
and a pure-DP query converts into zCDP at ρ = ε²/2 (OpenDP's ``make_pureDP_to_zCDP``).

>>> debit(Cost(epsilon=Fraction(1, 2)), "rho", "ann")
(Fraction(1, 8), Fraction(0, 1))
>>> debit(Cost(epsilon=Fraction(1), delta=Fraction(1, 10**6)), "epsilon-delta", "ann")
(Fraction(1, 1), Fraction(1, 1000000))
>>> Cost(rho=Fraction(1, 100)).describe()
'ρ = 0.01'
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from .._numbers import format_eps
from ..errors import ProgrammingError

__all__ = ["UNITS", "Cost", "debit", "unit_name", "equivalent", "DISPLAY_DELTA", "budget_text"]

UNITS = ("epsilon", "epsilon-delta", "rho")
#: the δ at which a ρ budget is also shown as (ε, δ) by ``SHOW PRIVACY BUDGET``
DISPLAY_DELTA = Fraction(1, 10**6)


@dataclass(frozen=True)
class Cost:
    """What one statement asks: pure ``epsilon``, ``epsilon`` with ``delta`` > 0, or ``rho``."""

    epsilon: Fraction | None = None
    delta: Fraction = Fraction(0)
    rho: Fraction | None = None

    @property
    def kind(self) -> str:
        if self.rho is not None:
            return "rho"
        return "epsilon-delta" if self.delta else "epsilon"

    @property
    def pure(self) -> bool:
        return self.kind == "epsilon"

    def describe(self) -> str:
        if self.rho is not None:
            return f"ρ = {format_eps(self.rho)}"
        if self.delta:
            return f"ε = {format_eps(self.epsilon)}, δ = {_delta_text(self.delta)}"
        return f"ε = {format_eps(self.epsilon)}"


def unit_name(unit: str) -> str:
    """How a unit is named in messages."""
    return {"epsilon": "pure ε", "epsilon-delta": "(ε, δ)", "rho": "zCDP ρ"}[unit]


def debit(cost: Cost, unit: str, user: str) -> tuple[Fraction, Fraction]:
    """``(amount, δ)`` to debit from ``user``'s budget of ``unit`` for ``cost`` (the amount in
    the budget's unit: ε, or ρ), or a :class:`ProgrammingError` naming the fix."""
    kind = cost.kind
    if kind == "epsilon":
        if unit == "rho":
            return cost.epsilon * cost.epsilon / 2, Fraction(0)
        return cost.epsilon, Fraction(0)
    if kind == unit == "epsilon-delta":
        return cost.epsilon, cost.delta
    if kind == unit == "rho":
        return cost.rho, Fraction(0)
    if kind == "rho":
        fix = ("write WITH EPSILON ε DELTA δ instead (answered with Gaussian noise where it helps)"
               if unit == "epsilon-delta" else
               "write WITH EPSILON ε, or the curator sets a zCDP budget: SET PRIVACY BUDGET RHO ρ "
               f"FOR USER '{user}'")
        raise ProgrammingError(
            f"the budget of user {user!r} is in {unit_name(unit)}, which a zCDP cost (WITH RHO) "
            f"cannot be debited from; {fix}")
    fix = ("write WITH RHO ρ instead (Gaussian noise, composes in ρ)" if unit == "rho" else
           "write WITH EPSILON ε alone, or the curator sets an (ε, δ) budget: SET PRIVACY BUDGET "
           f"EPSILON ε DELTA δ FOR USER '{user}'")
    raise ProgrammingError(
        f"the budget of user {user!r} is in {unit_name(unit)}, which an (ε, δ) cost (WITH "
        f"EPSILON … DELTA …) cannot be debited from (approximate DP does not convert to "
        f"{'zCDP' if unit == 'rho' else 'pure ε-DP'}); {fix}")


def converted_spending(unit: str, new_unit: str, spent: Fraction, spent_delta: Fraction,
                       user: str) -> tuple[Fraction, Fraction]:
    """What was spent, in ``new_unit`` when the curator changes a budget's unit — exactly, or
    refused: pure ε spent converts to (ε, 0) and to ρ = ε²/2 (the composition of pure-ε charges
    totalling ε is ε-DP); nothing converts out of ρ, nor out of (ε, δ) once δ was spent."""
    if unit == new_unit or (spent == 0 and spent_delta == 0):
        return spent, spent_delta
    if unit == "epsilon" and new_unit == "epsilon-delta":
        return spent, Fraction(0)
    if unit == "epsilon" and new_unit == "rho":
        return spent * spent / 2, Fraction(0)
    if unit == "epsilon-delta" and spent_delta == 0:
        return converted_spending("epsilon", new_unit, spent, Fraction(0), user)
    raise ProgrammingError(
        f"user {user!r} has already spent {budget_text(unit, spent, spent_delta)} in "
        f"{unit_name(unit)}, which does not convert to {unit_name(new_unit)}; keep the unit "
        f"(SET PRIVACY BUDGET … in {unit_name(unit)}) or give the analyst a new user")


def budget_text(unit: str, amount: Fraction, delta: Fraction = Fraction(0)) -> str:
    """``'ε = 1'``, ``'ε = 1, δ = 1e-06'``, ``'ρ = 0.5'``.

    >>> budget_text("epsilon-delta", Fraction(1), Fraction(1, 10**6))
    'ε = 1, δ = 0.000001'
    """
    if unit == "rho":
        return f"ρ = {format_eps(amount)}"
    if unit == "epsilon-delta":
        return f"ε = {format_eps(amount)}, δ = {_delta_text(delta)}"
    return f"ε = {format_eps(amount)}"


def equivalent(unit: str, amount: Fraction, delta: Fraction = Fraction(0)) -> str:
    """The (ε, δ) an amount of the unit guarantees, for display: ρ at δ = 1e-6 by
    ``ε = ρ + 2√(ρ ln(1/δ))``; pure ε and (ε, δ) as they are.

    >>> equivalent("rho", Fraction(1, 2))
    '(ε = 5.757, δ = 0.000001)'
    """
    if unit == "rho":
        from ..mechanisms.noise.discrete_gaussian import epsilon_of

        return f"(ε = {epsilon_of(amount, DISPLAY_DELTA):.4g}, δ = {_delta_text(DISPLAY_DELTA)})"
    return f"(ε = {format_eps(amount)}, δ = {_delta_text(delta)})"


def _delta_text(delta: Fraction) -> str:
    if delta == 0:
        return "0"
    text = format_eps(delta)
    return f"{float(delta):.6g}" if len(text) > 8 else text
