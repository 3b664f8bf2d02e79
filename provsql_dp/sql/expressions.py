"""The expression classes of our core privacy statements and the private-query clause.

They are sqlglot expressions produced by :class:`provsql_dp.sql.dialect.ProvDP`'s parser
(grammar: ``grammar/provsql_dp.ebnf``); the policy statements have theirs in
:mod:`provsql_dp.sql.policy_grammar`.

>>> from sqlglot import exp
>>> exact_number(exp.Literal.number("0.001"), "epsilon")
Fraction(1, 1000)
"""

from __future__ import annotations

from fractions import Fraction

from sqlglot import exp
from sqlglot.errors import ParseError

from .._numbers import MAX_EXPONENT, literal_fraction
from ..errors import ProgrammingError

__all__ = [
    "Protect", "Unprotect", "ShowProtected", "SetPrivacyBudget", "ShowPrivacyBudget",
    "SetPrivacyEpsilon", "PrivateQuery", "mechanism_options", "exact_number", "in_double_range",
    "SetBounds", "DropBounds", "ShowBounds", "SetGroupKeys", "DropGroupKeys", "ShowGroupKeys",
    "COLUMN_DECLARATIONS",
]


class Protect(exp.Expression):
    """``PROTECT TABLE t [BY (c, ...)] [REFERENCES r [(k, ...)]] [AS domain]``."""

    arg_types = {"this": True, "expressions": False, "domain": False, "references": False}


class Unprotect(exp.Expression):
    """``UNPROTECT TABLE t``."""

    arg_types = {"this": True}


class ShowProtected(exp.Expression):
    """``SHOW PROTECTED [TABLES]``."""

    arg_types: dict = {}


class SetPrivacyBudget(exp.Expression):
    """``SET PRIVACY BUDGET ε [FOR USER 'name']`` (pure ε), ``SET PRIVACY BUDGET EPSILON ε
    DELTA δ …`` (an (ε, δ) budget) or ``SET PRIVACY BUDGET RHO ρ …`` (a zCDP budget)."""

    arg_types = {"epsilon": False, "delta": False, "rho": False, "user": False}


class ShowPrivacyBudget(exp.Expression):
    """``SHOW PRIVACY BUDGET [FOR USER 'name']``."""

    arg_types = {"user": False}


class SetPrivacyEpsilon(exp.Expression):
    """``SET PRIVACY EPSILON ε``: the session's default ε for private queries."""

    arg_types = {"epsilon": True}


class PrivateQuery(exp.Expression):
    """``<query> WITH EPSILON ε [DELTA δ] [OPTIONS (name = value, …)]``: a query released
    privately at ε (at (ε, δ) with DELTA); ``<query> WITH RHO ρ [OPTIONS …]`` at ρ-zCDP;
    or ``<query> WITH ACCURACY α [CONFIDENCE c]`` (accuracy first, Liu et al.): released at the
    smallest ε meeting α, then ``epsilon`` is absent and ``accuracy`` (and ``confidence``) set."""

    arg_types = {"this": True, "epsilon": False, "options": False, "accuracy": False,
                 "confidence": False, "delta": False, "rho": False}


class SetBounds(exp.Expression):
    """``SET BOUNDS ON t (c) BETWEEN lower AND upper``: the range of one value of a numeric
    column; a SUM of the bare column is clamped to it (``lower``/``upper`` signed literals)."""

    arg_types = {"this": True, "column": True, "lower": True, "upper": True}


class DropBounds(exp.Expression):
    """``DROP BOUNDS ON t (c)``."""

    arg_types = {"this": True, "column": True}


class ShowBounds(exp.Expression):
    """``SHOW BOUNDS [ON t]``."""

    arg_types = {"table": False}


class SetGroupKeys(exp.Expression):
    """``SET GROUP KEYS ON t (c) VALUES (v, …)`` or ``… FROM s (d)``: the public set of groups
    of a ``GROUP BY c`` (explicit ``expressions``, or the column ``source_column`` of the
    public table ``source``, read at query time)."""

    arg_types = {"this": True, "column": True, "expressions": False, "source": False,
                 "source_column": False}


class DropGroupKeys(exp.Expression):
    """``DROP GROUP KEYS ON t (c)``."""

    arg_types = {"this": True, "column": True}


class ShowGroupKeys(exp.Expression):
    """``SHOW GROUP KEYS [ON t]``."""

    arg_types = {"table": False}


COLUMN_DECLARATIONS = (SetBounds, DropBounds, ShowBounds, SetGroupKeys, DropGroupKeys,
                       ShowGroupKeys)


def mechanism_options(tree: PrivateQuery) -> dict:
    """The OPTIONS of a private query as a dict of exact numbers (Fraction), strings or booleans
    (``raw = true``)."""
    opts = tree.args.get("options")
    out: dict = {}
    for pair in opts.expressions if opts is not None else []:
        name = pair.this.name.lower()
        if name in out:
            raise ParseError(f"option {name} is given twice")
        value = pair.expression
        if isinstance(value, exp.Boolean):
            out[name] = bool(value.this)
        else:
            out[name] = value.this if value.is_string else in_double_range(
                exact_number(value, f"option {name}"), f"option {name}")
    return out


def option_text(value) -> str:
    """An option's value as the analyst wrote it, for an error message.

    >>> from fractions import Fraction
    >>> option_text(Fraction(-1, 2)), option_text(Fraction(3)), option_text("lp")
    ('-0.5', '3', "'lp'")
    """
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Fraction):
        return str(value.numerator) if value.denominator == 1 else f"{float(value):g}"
    return str(value)


def exact_number(node: exp.Expression, what: str) -> Fraction:
    """The exact value of a numeric literal (no float rounding), e.g. ``0.001`` → 1/1000; a
    negated literal (``-5``, from a signed option) is negative."""
    if isinstance(node, exp.Neg):
        return -exact_number(node.this, what)
    if not isinstance(node, exp.Literal) or node.is_string:
        raise ParseError(f"{what} must be a number, got {node.sql() if node else 'nothing'}")
    try:
        return literal_fraction(node.this)
    except ValueError:  # past 10^±4096 (the tokenizer only produces valid numbers)
        raise ProgrammingError(f"{what} must be a number within 10^±{MAX_EXPONENT}, got "
                               f"{node.this[:40]!r}. Nothing was charged") from None


def in_double_range(value: Fraction, what: str) -> Fraction:
    """``value`` (from :func:`exact_number`) when a double holds it with room for arithmetic
    (0, or a magnitude in [1e-300, 1e300]), else a ``ProgrammingError`` naming it: an option of
    1e400 passed the checks made on the exact value and overflowed after them (red team
    h85attack-4).

    >>> in_double_range(Fraction(10) ** 400, "option upper")
    Traceback (most recent call last):
    ...
    provsql_dp.errors.ProgrammingError: option upper is beyond what a double holds (every mechanism computes in floating point): write a number between 1e-300 and 1e300 in magnitude. Nothing was charged
    """
    if value and not _TINY <= abs(value) <= _HUGE:
        raise ProgrammingError(
            f"{what} is beyond what a double holds (every mechanism computes in floating "
            "point): write a number between 1e-300 and 1e300 in magnitude. Nothing was charged")
    return value


#: the magnitudes a number of a statement may have (0 aside): a double holds them, with room
#: for the arithmetic of ε, δ, bounds and options (1e400 overflowed to inf, 1e-400 underflowed
#: to 0, after the checks made on the exact value had passed)
_TINY, _HUGE = Fraction(1, 10 ** 300), Fraction(10 ** 300)
