"""One statement charged once while its parts are released by their own routes: the parts'
charges are taken from the statement's ε, never beyond it.

A select list that mixes routes (``COUNT(*), AVG(c), STDDEV(c), MEDIAN(c)``,
:mod:`.mixed_route`) is released part by part, each by the route that answers it alone and at
its share of ε. Each route charges the ledger itself (:meth:`.ledger.Ledger.charge`), so
within :func:`sharing` the ledger hands each part's charge to the :class:`SharedCharge`: the
**first** part's charge records the whole statement's ε in the ledger, once (refused there:
nothing spent, nothing read); every part's share is then deducted from what the statement was
charged, and a part asking more than what is left is an internal error raised before it reads
(the split can never overspend). The charge-ahead path (:mod:`.charge_ahead`) stands aside
while sharing: the one charge is recorded before the first part reads.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE p(id INT PRIMARY KEY); PROTECT TABLE p; SET PRIVACY BUDGET 2")
>>> with sharing(con, Fraction(1), "SELECT …", "laplace+quantile") as shared:
...     a = con._ledger.charge(con.user, Fraction(1, 2), "SELECT …", "laplace")
...     b = con._ledger.charge(con.user, Fraction(1, 2), "SELECT …", "quantile")
>>> a is b, shared.left, con._ledger.remaining("default")
(True, Fraction(0, 1), Fraction(1, 1))
"""

from __future__ import annotations

import contextlib
import contextvars
from fractions import Fraction

from ..errors import InternalError

__all__ = ["SharedCharge", "sharing", "shared"]

_SHARED: contextvars.ContextVar = contextvars.ContextVar("provsql_dp_shared_charge", default=None)


class SharedCharge:
    """The statement's ε (exact), what its parts have not yet taken, and its one charge."""

    def __init__(self, user: str, epsilon, text: str, mechanism: str):
        self.user, self.text, self.mechanism = user, text, mechanism
        self.epsilon = Fraction(epsilon)
        self.left = self.epsilon
        self.charge = None

    def take(self, ledger, user: str, epsilon, cost) -> object:
        """A part's charge of ``epsilon`` (pure ε only): the statement's one charge."""
        share = Fraction(epsilon)
        if user != self.user or (cost is not None and cost.pure is False) or not (
                0 < share <= self.left):
            raise InternalError(
                f"a part of a mixed statement asked {epsilon} of what is left ({self.left}) of "
                f"its ε = {self.epsilon}: refused before it read anything")
        if self.charge is None:
            token = _SHARED.set(None)  # the one real charge, through the ledger's own path
            try:
                self.charge = ledger.charge(self.user, self.epsilon, self.text, self.mechanism)
            finally:
                _SHARED.reset(token)
        self.left -= share
        return self.charge


def shared() -> SharedCharge | None:
    """The :class:`SharedCharge` of the statement under way in this context, or None."""
    return _SHARED.get()


@contextlib.contextmanager
def sharing(con, epsilon, text: str, mechanism: str):
    """Within this block the ledger's charges of ``con.user`` are parts of one charge of
    ``epsilon`` (module docstring); yields the :class:`SharedCharge`."""
    if _SHARED.get() is not None:
        raise InternalError("a mixed statement's parts cannot themselves be mixed")
    share = SharedCharge(con.user, epsilon, text, mechanism)
    token = _SHARED.set(share)
    try:
        yield share
    finally:
        _SHARED.reset(token)
