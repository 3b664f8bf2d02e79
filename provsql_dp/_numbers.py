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
import re
from fractions import Fraction

__all__ = ["positive", "to_fraction", "literal_fraction", "format_eps", "round_up_decimal",
           "MAX_EXPONENT"]

#: the largest power of ten a number's text may carry to be read exactly (a DOUBLE reaches
#: 1e308, a DECIMAL 1e38): ``Fraction("1e9999999")`` computes 10^9999999 — 28 s of one core
#: holding Python's lock, so every session of a server stalled on a 40-byte private statement
#: (``WHERE id > 1e9999999``, ``WITH EPSILON 1e-9999999``: red team h147)
MAX_EXPONENT = 4096
_EXPONENT = re.compile(r"[eE]\s*([+-]?\d+)")


def literal_fraction(text: str) -> Fraction:
    """The exact value of a number's text, refused (ValueError) past 10^±:data:`MAX_EXPONENT`
    instead of computed.

    >>> literal_fraction("2.5e-3"), literal_fraction("-7")
    (Fraction(1, 400), Fraction(-7, 1))
    >>> literal_fraction("1e9999999")
    Traceback (most recent call last):
      ...
    ValueError: 1e9999999 is beyond 10^±4096, past any number a column holds
    """
    m = _EXPONENT.search(str(text))
    if m is not None:
        if len(m.group(1).lstrip("+-0")) > 6 or abs(int(m.group(1))) > MAX_EXPONENT:
            raise ValueError(f"{str(text).strip()[:40]} is beyond 10^±{MAX_EXPONENT}, past any "
                             "number a column holds")
    return Fraction(text)


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
            f = literal_fraction(x.strip())
        except ValueError as e:
            raise ValueError(f"{x!r} is not a number") from e
    else:
        raise ValueError(f"a privacy budget must be a number, got {type(x).__name__}")
    return f


#: the longest plain decimal (digits and point) format_eps prints; longer ones are written in
#: scientific notation (``1e300``, not its 301 digits)
_PLAIN = 24
#: the most significant digits an exact scientific rendering, or a fraction's two parts, carry;
#: beyond, the value is shown to 17 significant digits after an ``≈`` (never a rounded value
#: shown as if exact)
_DIGITS = 24


def format_eps(f: Fraction | float) -> str:
    """A readable exact rendering: a short decimal when exact, else the fraction. A float (such
    as ``cursor.privacy.remaining``) is first read as the nearest fraction of denominator at
    most 10⁹ (``PrivacyInfo.remaining_exact`` holds the ledger's exact value). A decimal too long
    to read is written in scientific notation, exactly; a value with too many digits for that
    (or a fraction of huge parts) is shown to 17 significant digits after ``≈``.

    >>> format_eps(Fraction(1, 4)), format_eps(Fraction(1, 3)), format_eps(Fraction(10) ** 300)
    ('0.25', '1/3', '1e300')
    >>> format_eps(Fraction(15, 10 ** 30)), format_eps(Fraction(-123, 10 ** 40))
    ('1.5e-29', '-1.23e-38')
    >>> format_eps(Fraction(1e300))  # the double nearest 10**300, exactly: 300 digits
    '≈1.0000000000000001e300'
    >>> format_eps(Fraction(10) ** 300 - Fraction(1, 3))
    '≈1e300'
    """
    if not isinstance(f, Fraction):
        f = Fraction(f).limit_denominator(10**9)
    sign, f = ("-" if f < 0 else ""), abs(f)
    plain = _plain(f)
    if plain is not None and len(plain) <= _PLAIN:
        return sign + plain
    if plain is None:
        text = f"{f.numerator}/{f.denominator}"
        if len(text) <= 2 * _DIGITS:
            return sign + text
        return "≈" + sign + _scientific(f, 17)
    exact = _scientific(f, None)
    if len(exact.split("e")[0].replace(".", "")) <= _DIGITS:
        return sign + exact
    return "≈" + sign + _scientific(f, 17)


def _plain(f: Fraction) -> str | None:
    """``f`` (≥ 0) as a plain decimal, or None when it has no finite one."""
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
    if d != 1:
        return None
    digits = max(twos, fives)
    s = f"{f.numerator * 10**digits // f.denominator}".rjust(digits + 1, "0")
    return s[:-digits] + "." + s[-digits:]


def _scientific(f: Fraction, digits: int | None) -> str:
    """``f`` (> 0) as ``d.ddde±k``: exact (``digits`` None: ``f`` must be a finite decimal), or
    rounded to ``digits`` significant digits (half-even), trailing zeros dropped."""
    k = len(str(f.numerator)) - len(str(f.denominator))  # f lies in [10^(k-1), 10^(k+1))
    if f >= Fraction(10) ** k:
        k += 1
    k -= 1  # 10^k <= f < 10^(k+1)
    scaled = f / Fraction(10) ** k  # in [1, 10)
    if digits is None:
        mant = _plain(scaled)
    else:
        n = round(scaled * 10 ** (digits - 1))
        if n == 10 ** digits:  # rounded up to 10: one more power of ten
            n, k = 10 ** (digits - 1), k + 1
        mant = str(n)
        mant = mant[0] + "." + mant[1:]
    mant = mant.rstrip("0").rstrip(".") if "." in mant else mant
    return mant if k == 0 else f"{mant}e{k}"


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
