"""Exact rational arithmetic for the noise-only Blowfish releases (the ``grid_*`` strategies).

A ``grid_*`` strategy answers ``W·(x + P_G·A⁺K)`` for integer discrete Laplace noise ``K``
(:mod:`provsql_dp.policies.blowfish.grid_plans`). ``A⁺K`` has a small common denominator (a power
of two for Privelet, ``B·lcm(λ_j)`` for a hierarchical tree), so the whole answer is computed
exactly — Python integers in object arrays, ``x`` taken as its exact binary fractions — and each
answer is rounded to float once. The released float is then a deterministic function of the
exact rational ``W·(x + P_G·A⁺K)``, whose distribution is that of the mechanism: no
floating-point artefact of the data's magnitude reaches the low bits (Mironov 2012).

The cost is Python-integer arithmetic over the cells of the grid (vectorised object arrays, no
Python loop per row of the data).

>>> import numpy as np
>>> num, den = exact_rationals([0.5, 1.25])
>>> num.tolist(), den
([2, 5], 4)
>>> round_exact(np.array([1, 2], dtype=object), 3).tolist()     # 1/3, 2/3 rounded once
[0.3333333333333333, 0.6666666666666666]
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

__all__ = ["as_objects", "exact_rationals", "zeros_obj", "round_exact", "obj_matvec",
           "exact_field", "exact_rect_answers", "exact_matrix_answers", "int64_counts",
           "rect_sums", "combine_exact"]


def exact_rationals(x) -> tuple[np.ndarray, int]:
    """``(num, den)`` with ``x = num/den`` exactly: Python-int numerators (object array) over one
    power-of-two denominator (1 for integer-valued ``x``)."""
    x = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(x)):
        raise ValueError("values must be finite")
    if np.all(x == np.floor(x)):
        return np.array([int(v) for v in x.ravel()], dtype=object).reshape(x.shape), 1
    pairs = [float(v).as_integer_ratio() for v in x.ravel()]
    den = max(d for _, d in pairs)
    num = np.array([n * (den // d) for n, d in pairs], dtype=object).reshape(x.shape)
    return num, den


def as_objects(a) -> np.ndarray:
    """An object array of Python ints (exact arithmetic at any magnitude)."""
    a = np.asarray(a)
    return np.array([int(v) for v in a.ravel()], dtype=object).reshape(a.shape)


def zeros_obj(shape):
    out = np.empty(shape, dtype=object)
    out[...] = 0
    return out


def round_exact(nums, den) -> np.ndarray:
    """``num/den`` for Python ints, each correctly rounded once (int true division)."""
    return np.array([int(n) / den for n in np.asarray(nums, dtype=object).ravel()], dtype=float)


def obj_matvec(M, v) -> np.ndarray:
    """``M·v`` exactly, for a sparse ``M`` with integer entries and integer ``v`` (Python ints)."""
    M = sp.csr_matrix(M)
    data = np.array([int(d) for d in M.data], dtype=object)
    if not np.array_equal(np.asarray(data, dtype=float), M.data):
        raise ValueError("an exact strategy needs integer coefficients")
    vv = np.array([int(a) for a in np.asarray(v).ravel()], dtype=object)
    prod = data * vv[M.indices] if M.nnz else np.zeros(0, dtype=object)
    out = zeros_obj(M.shape[0])
    rows = np.repeat(np.arange(M.shape[0]), np.diff(M.indptr))
    np.add.at(out, rows, prod)
    return out


def exact_field(x, field, den):
    """``x + field/den`` as ``(numerators, denominator)``: ``x`` exactly as rationals."""
    xn, xd = exact_rationals(np.asarray(x, dtype=float).reshape(np.shape(field)))
    d = den * xd // math.gcd(den, xd)
    return xn * (d // xd) + np.asarray(field, dtype=object) * (d // den), d


def exact_rect_answers(w, x, field, den):
    """The rectangles of ``w`` summed over ``x + field/den`` exactly, each rounded once."""
    num, d = exact_field(x, field, den)
    k1, k2 = num.shape
    S = zeros_obj((k1 + 1, k2 + 1))
    S[1:, 1:] = num.cumsum(0).cumsum(1)
    tot = S[w.r1 + 1, w.c1 + 1] - S[w.r0, w.c1 + 1] - S[w.r1 + 1, w.c0] + S[w.r0, w.c0]
    return round_exact(tot, d)


def exact_matrix_answers(W, x, field, den):
    """``W·(x + field/den)`` exactly (``W``'s float entries as exact binary fractions), each
    answer rounded once."""
    W = sp.csr_matrix(W)
    num, d = exact_field(np.asarray(x, dtype=float).ravel(), np.asarray(field).ravel(), den)
    wn, wd = exact_rationals(W.data)
    prod = wn * num[W.indices] if W.nnz else np.zeros(0, dtype=object)
    out = zeros_obj(W.shape[0])
    np.add.at(out, np.repeat(np.arange(W.shape[0]), np.diff(W.indptr)), prod)
    return round_exact(out, d * wd)


def int64_counts(x) -> np.ndarray | None:
    """``x`` as int64 when it is integer-valued with ``Σ|x| < 2**61`` (so every partial sum is
    exact in int64), else None.

    >>> int64_counts([1.0, 2.0]).tolist(), int64_counts([0.5]) is None
    ([1, 2], True)
    """
    x = np.asarray(x, dtype=float)
    if not (np.all(np.isfinite(x)) and np.all(x == np.floor(x))):
        return None
    if float(np.abs(x).sum()) >= 2.0 ** 61:
        return None
    return x.astype(np.int64)


def rect_sums(field, w) -> np.ndarray:
    """The sums of ``field`` (2-D; int64 or object) over the rectangles of ``w`` via 2-D prefix
    sums: ring operations only, so exact modulo 2**64 in int64 (exact when the results fit)."""
    k1, k2 = field.shape
    S = np.zeros((k1 + 1, k2 + 1), dtype=field.dtype)
    if field.dtype == object:
        S[...] = 0
    S[1:, 1:] = field.cumsum(0).cumsum(1)
    return S[w.r1 + 1, w.c1 + 1] - S[w.r0, w.c1 + 1] - S[w.r1 + 1, w.c0] + S[w.r0, w.c0]


def combine_exact(a, num, den) -> np.ndarray:
    """``a + num/den`` per entry (integers; ``den`` a Python int), each correctly rounded once.

    >>> combine_exact(np.array([3]), np.array([1]), 3).tolist()
    [3.3333333333333335]
    """
    d = int(den)
    return np.array([(ai * d + ni) / d for ai, ni in zip(np.asarray(a).tolist(),
                                                          np.asarray(num).tolist())], dtype=float)
