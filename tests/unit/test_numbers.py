"""``format_eps`` (``provsql_dp/_numbers.py``): readable, and exact unless marked ``≈``."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from provsql_dp._numbers import format_eps


def test_a_huge_or_tiny_exact_decimal_is_written_in_scientific_notation():
    assert format_eps(Fraction(10) ** 300) == "1e300"  # not 301 digits (red team h86)
    assert format_eps(Fraction(25, 10 ** 301)) == "2.5e-300"
    assert format_eps(Fraction(10) ** 23) == "100000000000000000000000"  # 24 digits: plain
    assert format_eps(Fraction(10) ** 24) == "1e24"
    assert format_eps(Fraction(-7) * 10 ** 40) == "-7e40"
    assert format_eps(Fraction(1, 400)) == "0.0025" and format_eps(0) == "0"


def test_what_cannot_be_shown_exactly_in_a_readable_length_is_marked():
    assert format_eps(Fraction(1e300)) == "≈1.0000000000000001e300"
    assert format_eps(Fraction(10) ** 300 - 1) == "≈1e300"
    assert format_eps(Fraction(1, 3 * 10 ** 50)) == "≈3.3333333333333333e-51"
    assert format_eps(Fraction(10 ** 30 + 1, 3 * 10 ** 29)) == "≈3.3333333333333333"
    assert format_eps(Fraction(10 ** 17 - 1, 10 ** 17) * 10 ** 40) == "9.9999999999999999e39"


@settings(deadline=None)  # no timed assertion: the machine's load decides the time
@given(st.integers(-10 ** 30, 10 ** 30), st.integers(0, 400), st.integers(1, 12))
def test_an_unmarked_rendering_is_the_value_and_is_short(n, tens, den):
    f = Fraction(n, 10 ** tens * den)
    text = format_eps(f)
    assert len(text) <= 50
    if not text.startswith(("≈", "-≈")):
        assert Fraction(text) == f
    else:  # 17 significant digits: within half a unit of the 17th
        shown = Fraction(text.lstrip("≈-"))
        assert abs(shown - abs(f)) <= abs(f) / 10 ** 16
