"""Exact numbers and argument checks shared by every stage: ε values as fractions, their
readable rendering, and positive-number validation.

>>> positive("epsilon", "0.5")
0.5
>>> positive("theta", 0)
Traceback (most recent call last):
  ...
ValueError: theta must be positive and finite, got 0
"""

from __future__ import annotations

import math
from fractions import Fraction

__all__ = ["positive", "to_fraction", "format_eps", "round_up_decimal"]


def positive(name: str, value) -> float:
    """``value`` as a float, which must be positive and finite (ValueError naming ``name``)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive number, got {value!r}") from None
    if not (v > 0 and math.isfinite(v)):
        raise ValueError(f"{name} must be positive and finite, got {value!r}")
    return v


def to_fraction(x) -> Fraction:
    """An exact budget value from a Fraction, int, decimal string or float (via its shortest repr).

    >>> to_fraction(0.1) == Fraction(1, 10), to_fraction("1e-3")
    (True, Fraction(1, 1000))
    """
    if isinstance(x, Fraction):
        f = x
    elif isinstance(x, bool):
        raise ValueError("a privacy budget must be a number")
    elif isinstance(x, int):
        f = Fraction(x)
    elif isinstance(x, float):
        f = Fraction(repr(x))
    elif isinstance(x, str):
        try:
            f = Fraction(x.strip())
        except ValueError as e:
            raise ValueError(f"{x!r} is not a number") from e
    else:
        raise ValueError(f"a privacy budget must be a number, got {type(x).__name__}")
    return f


def format_eps(f: Fraction | float) -> str:
    """A readable exact rendering: a short decimal when exact, else the fraction. A float (such
    as ``cursor.privacy.remaining``) is first read as the nearest fraction of denominator at
    most 10⁹ (``PrivacyInfo.remaining_exact`` holds the ledger's exact value)."""
    if not isinstance(f, Fraction):
        f = Fraction(f).limit_denominator(10**9)
    if f.denominator == 1:
        return str(f.numerator)
    d = f.denominator
    twos = fives = 0
    while d % 2 == 0:
        d //= 2
        twos += 1
    while d % 5 == 0:
        d //= 5
        fives += 1
    if d == 1:
        digits = max(twos, fives)
        s = f"{f.numerator * 10**digits // f.denominator}"
        neg = s.startswith("-")
        s = s.lstrip("-").rjust(digits + 1, "0")
        out = s[:-digits] + "." + s[-digits:]
        return ("-" if neg else "") + out
    return f"{f.numerator}/{f.denominator}"


def round_up_decimal(x: float) -> Fraction:
    """The smallest 3-significant-digit decimal ≥ x (an exact ε to spend).

    >>> round_up_decimal(0.29957), round_up_decimal(0)
    (Fraction(3, 10), Fraction(1, 1000000))
    """
    if x <= 0:
        return Fraction(1, 10 ** 6)
    exp10 = math.floor(math.log10(x)) - 2
    unit = Fraction(10) ** exp10
    return Fraction(math.ceil(Fraction(x) / unit)) * unit
