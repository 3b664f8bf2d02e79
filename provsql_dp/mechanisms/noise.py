"""Noise sources. By default every draw comes from the operating system's entropy.

A seed can be fixed only from Python (tests pass a ``numpy.random.Generator``), never from SQL
(DESIGN §8). Continuous Laplace noise is used for real-valued releases; :func:`discrete_laplace`
samples the two-sided geometric distribution exactly, for integer-valued releases (Mironov 2012
shows why floating-point Laplace can leak on integer data).

>>> import numpy as np
>>> rng = np.random.default_rng(7)
>>> float(abs(laplace(1.0, rng=rng))) < 50
True
>>> isinstance(discrete_laplace(2.0, rng=rng), int)
True
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["system_rng", "resolve_rng", "laplace", "discrete_laplace"]


def system_rng() -> np.random.Generator:
    """A generator freshly seeded from OS entropy (``secrets``-grade seed material)."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence()))


def resolve_rng(rng: np.random.Generator | None) -> np.random.Generator:
    """``rng`` if given (tests only), else a fresh OS-entropy generator."""
    if rng is None:
        return system_rng()
    if not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a numpy.random.Generator (or None for OS entropy)")
    return rng


def laplace(scale: float, size=None, *, rng: np.random.Generator | None = None):
    """Laplace(0, scale) noise."""
    if not scale > 0 or not math.isfinite(scale):
        raise ValueError(f"Laplace scale must be positive and finite, got {scale!r}")
    return resolve_rng(rng).laplace(0.0, scale, size=size)


def discrete_laplace(scale: float, size=None, *, rng: np.random.Generator | None = None):
    """Two-sided geometric noise P(k) ∝ exp(-|k|/scale), sampled exactly as a difference of
    two geometric variables."""
    if not scale > 0 or not math.isfinite(scale):
        raise ValueError(f"discrete Laplace scale must be positive and finite, got {scale!r}")
    g = resolve_rng(rng)
    p = 1.0 - math.exp(-1.0 / scale)
    a = g.geometric(p, size=size) - 1
    b = g.geometric(p, size=size) - 1
    out = a - b
    return int(out) if size is None else out
