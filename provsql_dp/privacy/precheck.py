"""Checks made before the ledger is charged: everything the statement alone decides (issue 26).

A statement that fails whatever the data must be refused before ε is spent, with a message that
names the problem — never charged first and then reported as a failure "while it read protected
data". The planner already decides the types (:mod:`provsql_dp.sql._set_types`), the totality of
every expression (:mod:`provsql_dp.sql.total`) and its cost per row
(:mod:`provsql_dp.sql.size_model`); this module holds the rest, in one place:

* :func:`check_epsilon` — ε is positive, finite as a float (``WITH EPSILON 1e999`` is refused,
  not "charged"), and at least the smallest ε a release accepts;
* :func:`check_decision` — a decided release's noise-grid range: on the Laplace path the noise
  scale Δ/ε (Δ from the SUM's bounds, or 1 row per participant for a COUNT) must lie within
  ``[MIN_SCALE, MAX_SCALE]`` of :mod:`provsql_dp.mechanisms.noise.safe_noise` (tiny or huge bounds);
* :func:`charge_watch` and :func:`as_charged` — a failure inside a release tells an analyst that
  its ε was charged only when the ledger recorded the charge;
* :func:`checked_accuracy` — a ``WITH ACCURACY α [CONFIDENCE c]`` whose ε cannot be computed
  (α of 1e-320 or 1e999, a confidence that rounds to 1) is a
  :class:`~provsql_dp.errors.ProgrammingError` naming it, never a ``ValueError`` or
  ``ZeroDivisionError`` (HTTP 500 in the explorer).

Every refusal here ends with "Nothing was charged", and is true.

>>> from fractions import Fraction
>>> check_epsilon(Fraction(1, 2))
>>> check_epsilon(Fraction(10) ** 999)
Traceback (most recent call last):
...
provsql_dp.errors.ProgrammingError: epsilon 1e+999 is too large to be used (it must be a finite number, at most 1e+15). Nothing was charged
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from decimal import Decimal
from fractions import Fraction

from .. import _progress
from ..errors import DataError, Error, ProgrammingError
from ..mechanisms.noise.safe_noise import MAX_SCALE, MIN_SCALE
from ..provenance.owners import owners
from .failures import ANALYST_FAILURE, MIN_EPSILON
from .group_epsilon import check_plannable
from .r2t_release import check_r2t_plan

__all__ = ["MAX_EPSILON", "MIN_EPSILON", "check_decision", "check_epsilon", "checked_accuracy",
           "charge_watch", "as_charged"]

#: the largest ε a statement may name (a budget is a number; ε beyond this is a typo)
MAX_EPSILON = 1e15
_NOTHING = "Nothing was charged"


def _show(x: Fraction) -> str:
    """A number as the analyst wrote it, roughly (``1e+999`` and ``1e-320`` too)."""
    v = Decimal(x.numerator) / Decimal(x.denominator)
    if v != 0 and (abs(v) >= Decimal("1e16") or abs(v) < Decimal("1e-300")):
        return format(Decimal(format(v, ".6g")).normalize(), "g").replace("E", "e")
    return f"{float(x):g}"


def check_epsilon(epsilon) -> None:
    """Refuse an ε that no release can use (decided from the statement alone)."""
    if epsilon is None or epsilon <= 0:
        raise ProgrammingError(f"epsilon must be positive. {_NOTHING}")
    if Fraction(epsilon) > MAX_EPSILON:
        raise ProgrammingError(
            f"epsilon {_show(Fraction(epsilon))} is too large to be used (it must be a finite "
            f"number, at most {MAX_EPSILON:g}). {_NOTHING}")
    if epsilon < MIN_EPSILON:
        raise ProgrammingError(
            f"epsilon {float(epsilon):g} is below the smallest ε a release accepts "
            f"({MIN_EPSILON:g}): its noise would drown any answer, and the mechanisms' work "
            f"grows without bound as ε shrinks. {_NOTHING}")


#: the routes of the recursive mechanism (:mod:`.group_epsilon`)
RECURSIVE_ROUTES = ("single-owner", "recursive-lp", "k-star", "k-triangle")


def check_decision(d):
    """Refuse a decided release (``privacy.answer._Decision``) whose noise cannot be drawn, for a
    reason the statement and the declarations decide; returns ``d``."""
    if d.path == "laplace":
        own = d.own if d.own is not None else owners(d.plan.child)
        rows = float(own.rows_per_owner or 1)
        if d.plan.kind == "count":
            sens, what = rows, "a COUNT's sensitivity"
        else:
            lo, hi = d.bounds
            sens = rows * max(abs(float(lo)), abs(float(hi)))
            what = f"the SUM's bounds [{float(lo):g}, {float(hi):g}]"
        _scale(sens, float(d.epsilon), what)
    elif d.path in RECURSIVE_ROUTES:  # its parameters at each group's ε (group_epsilon)
        check_plannable(d)
    elif d.path == "r2t":  # its public plan (h85attack-5)
        check_r2t_plan(d)
    return d


def _scale(sens: float, eps: float, what: str) -> None:
    if sens <= 0:
        raise ProgrammingError(
            f"{what} give a sensitivity of 0, so there is nothing to release: a bound must be "
            f"nonzero. {_NOTHING}")
    scale = sens / eps
    if not MIN_SCALE <= scale <= MAX_SCALE:
        side = "small" if scale < MIN_SCALE else "large"
        raise ProgrammingError(
            f"the noise scale Δ/ε = {scale:g} (from {what} and ε = {eps:g}) is too {side}: it "
            f"must lie between 2^-24 and 2^64; "
            + ("lower ε" if side == "small" else "raise ε")
            + ("" if what.startswith("a COUNT") else
               (" or widen the bounds" if side == "small" else " or narrow the bounds"))
            + f". {_NOTHING}")


def checked_accuracy(alpha, confidence, compute):
    """``compute()`` (the ε or the rows of an accuracy request), with ``alpha`` and
    ``confidence`` (Fractions, confidence may be None) validated first and every numeric failure
    of the computation turned into a :class:`~provsql_dp.errors.ProgrammingError` naming them.

    >>> checked_accuracy(Fraction(1), Fraction(1) - Fraction(1, 10**20), lambda: 1)
    Traceback (most recent call last):
    ...
    provsql_dp.errors.ProgrammingError: the confidence 1 is too close to 1 to be used: give one below 0.999999. Nothing was charged
    """
    if alpha is not None:
        if alpha <= 0:
            raise ProgrammingError(f"the accuracy α must be positive. {_NOTHING}")
        a = _finite(alpha)
        if a is None or a > MAX_EPSILON * 1e15 or a < 1e-300:
            raise ProgrammingError(
                f"the accuracy α = {_show(Fraction(alpha))} is out of range: give a positive "
                f"number between 1e-300 and 1e30. {_NOTHING}")
    if confidence is not None:
        if not 0 < confidence < 1:
            raise ProgrammingError(
                f"the confidence must be strictly between 0 and 1 (e.g. 0.95). {_NOTHING}")
        if float(1 - confidence) < 1e-6 or float(confidence) < 1e-6:
            raise ProgrammingError(
                f"the confidence {float(confidence):g} is too close to "
                f"{'1' if confidence > Fraction(1, 2) else '0'} to be used: give one "
                f"{'below 0.999999' if confidence > Fraction(1, 2) else 'above 0.000001'}. {_NOTHING}")
    try:
        return compute()
    except (ValueError, ZeroDivisionError, OverflowError, FloatingPointError) as err:
        if alpha is None:
            raise ProgrammingError(
                f"the privacy explanation cannot be computed for this ε ({err}); give an ε between "
                f"{MIN_EPSILON:g} and {MAX_EPSILON:g}. {_NOTHING}") from err
        raise ProgrammingError(
            f"no release reaches WITH ACCURACY {_show(Fraction(alpha))} ({err}); choose a larger α "
            f"or a lower confidence, or give WITH EPSILON ε. {_NOTHING}") from err


def _finite(x) -> float | None:
    try:
        v = float(x)
    except OverflowError:
        return None
    return v if math.isfinite(v) else None


#: the analyst's message for a release that failed before its charge was recorded
ANALYST_FAILURE_UNCHARGED = ANALYST_FAILURE.replace("The ε of the statement was charged.",
                                                    "Nothing was charged.")


class _Watch:
    charged = False


@contextmanager
def charge_watch():
    """Record whether the ledger charged a release inside the block (the ledger reports
    :data:`provsql_dp._progress.CHARGED`); reports still reach the listener outside it.

    >>> from provsql_dp._progress import CHARGED, report
    >>> with charge_watch() as w:
    ...     report(CHARGED, public=True)
    >>> w.charged
    True
    """
    outer = _progress._current.get()
    watch = _Watch()

    def listen(phase, done, total, public):
        if phase == _progress.CHARGED:
            watch.charged = True
        if outer is not None:
            outer.callback(phase, done, total, public)

    with _progress.listening(listen, interruptible=outer is not None and outer.interruptible):
        yield watch


def as_charged(err: Error, watch: _Watch) -> Error:
    """``err``, or — when it tells an analyst that ε was charged and nothing was — the same
    failure saying that nothing was charged."""
    if not watch.charged and isinstance(err, DataError) and str(err) == ANALYST_FAILURE:
        return DataError(ANALYST_FAILURE_UNCHARGED)
    return err
