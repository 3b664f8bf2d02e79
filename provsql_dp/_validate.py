"""Argument checks shared by the mechanisms.

>>> positive("epsilon", "0.5")
0.5
>>> positive("theta", 0)
Traceback (most recent call last):
  ...
ValueError: theta must be positive and finite, got 0
"""

from __future__ import annotations

import math

__all__ = ["positive"]


def positive(name: str, value) -> float:
    """``value`` as a float, which must be positive and finite (ValueError naming ``name``)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive number, got {value!r}") from None
    if not (v > 0 and math.isfinite(v)):
        raise ValueError(f"{name} must be positive and finite, got {value!r}")
    return v
