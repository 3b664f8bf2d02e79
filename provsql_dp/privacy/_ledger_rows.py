"""The ledger's records (:class:`Charge`, :class:`Known`, :class:`BudgetRow`), its messages, and
the one read of a budget's spending: the budget row's folded spending plus the user's ledger rows
numbered after its fold (:func:`spending`; the argument is in :mod:`.ledger`'s docstring).

>>> rows = [("u", "2/1", "1/2", "epsilon", "0/1", "0/1", 3, "1/4", "0/1", 4),
...         ("u", "2/1", "1/2", "epsilon", "0/1", "0/1", 3, "1/8", "0/1", 5),
...         ("v", "1/1", "0/1", "rho", "0/1", "0/1", 0, None, None, None)]
>>> s = spending(rows)
>>> s["u"].spent, s["u"].last, s["v"].spent, s["v"].last
(Fraction(7, 8), 5, Fraction(0, 1), 0)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction
from typing import NamedTuple

import duckdb

from .._numbers import format_eps, to_fraction
from ..sql.catalog import SCHEMA
from .accounting import budget_text

#: a ledger row that is no charge: a budget change taking its charge number (:mod:`.ledger`),
#: ε and δ zero, no audit id (the audit log does not list it)
BUDGET_SET = "(budget set)"

#: every budget row with its user's ledger rows numbered after the row's fold (none: one row of
#: NULLs); a row without a charge number (older versions) counts as folded (charge number 0)
STATE_SQL = (
    f"SELECT b.user_name, b.total, b.spent, b.unit, b.total_delta, b.spent_delta, "
    f"coalesce(b.charge_no, 0), l.epsilon, l.delta, l.charge_no FROM {SCHEMA}.budget b "
    f"LEFT JOIN {SCHEMA}.ledger l ON l.user_name = b.user_name "
    f"AND l.charge_no > coalesce(b.charge_no, 0)")


class State(NamedTuple):
    """A budget as one read of :data:`STATE_SQL` sees it: the row's fields as stored (texts),
    its fold, and what its ledger rows after the fold add (``tail``, ``tail_delta``) up to the
    user's last charge number ``last``."""

    total: str
    spent_row: str
    unit: str
    total_delta: str
    spent_delta_row: str
    fold: int
    tail: Fraction
    tail_delta: Fraction
    last: int

    @property
    def spent(self) -> Fraction:
        return Fraction(self.spent_row) + self.tail

    @property
    def spent_delta(self) -> Fraction:
        return Fraction(self.spent_delta_row or 0) + self.tail_delta


def spending(rows) -> dict[str, State]:
    """{user: :class:`State`} of rows of :data:`STATE_SQL`."""
    out: dict[str, State] = {}
    for user, total, spent, unit, td, sd, fold, eps, delta, no in rows:
        st = out.get(user) or State(total, spent, unit or "epsilon", td or "0/1", sd or "0/1",
                                    int(fold), Fraction(0), Fraction(0), int(fold))
        if no is not None:
            st = st._replace(tail=st.tail + Fraction(eps), tail_delta=st.tail_delta
                             + Fraction(delta or 0), last=max(st.last, int(no)))
        out[user] = st
    return out


@dataclass(frozen=True)
class Charge:
    """One recorded charge."""

    id: int
    at: datetime
    user: str
    statement: str | None
    mechanism: str
    epsilon: Fraction  # the amount debited, in ``unit`` (ε, or ρ for a zCDP budget)
    remaining: Fraction
    unit: str = "epsilon"
    delta: Fraction = Fraction(0)


class Known(NamedTuple):
    """A budget as this ledger left it at its last charge, numbered ``last``: the row's
    fractions as stored (``'3/10'``), its fold, the δ of that charge, and what remained after
    it (``left``, ``left_delta``: the total less the spending, the rows after the fold
    included): what :meth:`.Ledger._charge_known` checks and writes against."""

    unit: str
    total: str
    spent: str
    total_delta: str
    spent_delta: str
    delta: Fraction
    fold: int
    last: int
    left: Fraction
    left_delta: Fraction


class BudgetRow(tuple):
    """``(user, total, spent)`` of one budget, with its ``unit``: ``'epsilon'``,
    ``'epsilon-delta'`` (total and spent are the ε part) or ``'rho'`` (they are ρ).

    >>> row = BudgetRow("zed", Fraction(1, 2), Fraction(0), "rho")
    >>> user, total, spent = row
    >>> row.unit, row
    ('rho', ('zed', Fraction(1, 2), Fraction(0, 1), unit='rho'))
    """

    def __new__(cls, user: str, total: Fraction, spent: Fraction, unit: str = "epsilon"):
        row = super().__new__(cls, (user, total, spent))
        row.unit = unit
        return row

    def __getnewargs__(self):
        return (*self, self.unit)

    def __repr__(self) -> str:
        return f"({self[0]!r}, {self[1]!r}, {self[2]!r}, unit={self.unit!r})"


def enc(f: Fraction) -> str:
    return f"{f.numerator}/{f.denominator}"


def positive(epsilon) -> Fraction:
    eps = to_fraction(epsilon)
    if eps <= 0:
        raise ValueError(f"epsilon must be positive, got {format_eps(eps)}")
    return eps


def rollback(cur) -> None:
    try:
        cur.execute("ROLLBACK")
    except duckdb.Error:
        pass


def close(cur) -> None:
    try:
        cur.close()
    except duckdb.Error:
        pass


def no_budget(user: str) -> str:
    return (
        f"no privacy budget is set for user {user!r}, so nothing can be released; the curator "
        f"sets one with SET PRIVACY BUDGET <epsilon> FOR USER '{user}'"
    )


def exceeded(user: str, need, total, spent, unit: str = "epsilon") -> str:
    """``need``, ``total``, ``spent``: (amount, δ) pairs in ``unit`` (or plain ε amounts)."""
    need, total, spent = (x if isinstance(x, tuple) else (x, Fraction(0))
                          for x in (need, total, spent))
    left = (total[0] - spent[0], total[1] - spent[1])
    if unit == "epsilon":
        return (
            f"privacy budget exceeded for user {user!r}: the release needs ε = "
            f"{format_eps(need[0])} but only {format_eps(left[0])} of {format_eps(total[0])} "
            f"remains; nothing was spent. "
            f"The curator can raise the total with SET PRIVACY BUDGET … FOR USER '{user}'"
        )
    return (
        f"privacy budget exceeded for user {user!r}: the release needs "
        f"{budget_text(unit, *need)} but only {budget_text(unit, *left)} of "
        f"{budget_text(unit, *total)} remains; nothing was spent. "
        f"The curator can raise the total with SET PRIVACY BUDGET … FOR USER '{user}'"
    )
