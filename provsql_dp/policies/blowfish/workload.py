"""Workloads of linear counting queries: HIST, CDF (prefix), 1-D ranges, 2-D ranges, marginals.

Every workload knows its domain shape, its size ``q``, its exact answers on a histogram (fast,
without building a matrix) and its ``scipy.sparse`` matrix (``q × k``, columns in the row-major
order of the domain). Structured workloads let the strategies use closed forms; any dense or
sparse matrix is accepted through :class:`Matrix`.

>>> import numpy as np
>>> w = Ranges(6, [0, 2], [3, 2])
>>> w.answer(np.arange(6.)).tolist()
[6.0, 2.0]
>>> w.matrix().toarray().astype(int).tolist()
[[1, 1, 1, 1, 0, 0], [0, 0, 1, 0, 0, 0]]
>>> Rects((2, 3), [0], [1], [1], [2]).answer(np.arange(6.)).tolist()
[12.0]
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["Workload", "Matrix", "Ranges", "Histogram", "Prefix", "Rects", "Marginal",
           "as_workload", "random_ranges", "random_rects"]


class Workload:
    """Base class. ``shape`` is the domain shape, ``q`` the number of queries."""

    shape: tuple
    kind = "matrix"

    @property
    def k(self):
        return int(np.prod(self.shape))

    def matrix(self) -> sp.csr_matrix:  # pragma: no cover - abstract
        raise NotImplementedError

    def answer(self, x) -> np.ndarray:
        """Exact answers ``W·x``."""
        return np.asarray(self.matrix() @ np.asarray(x, dtype=float).ravel()).ravel()


class Matrix(Workload):
    """Any workload given as a ``q × k`` matrix (dense or sparse)."""

    kind = "matrix"

    def __init__(self, W, shape=None):
        W = sp.csr_matrix(W, dtype=float)
        self.W = W
        self.q = W.shape[0]
        self.shape = tuple(shape) if shape is not None else (W.shape[1],)
        if int(np.prod(self.shape)) != W.shape[1]:
            raise ValueError(f"workload has {W.shape[1]} columns but the domain shape "
                             f"{self.shape} has {int(np.prod(self.shape))} values")

    def matrix(self):
        return self.W


class Ranges(Workload):
    """1-D range counts ``x[lo] + … + x[hi]`` (inclusive bounds)."""

    kind = "ranges"

    def __init__(self, k, lo, hi):
        self.shape = (int(k),)
        self.lo = np.asarray(lo, dtype=np.int64).ravel()
        self.hi = np.asarray(hi, dtype=np.int64).ravel()
        if self.lo.shape != self.hi.shape:
            raise ValueError("lo and hi must have the same length")
        if self.lo.size and (self.lo.min() < 0 or self.hi.max() >= k or np.any(self.lo > self.hi)):
            raise ValueError(f"ranges need 0 <= lo <= hi <= {k - 1}")
        self.q = self.lo.size

    def matrix(self):
        lens = self.hi - self.lo + 1
        rows = np.repeat(np.arange(self.q), lens)
        starts = np.repeat(self.lo - np.r_[0, np.cumsum(lens)[:-1]], lens)
        cols = np.arange(lens.sum()) + starts
        return sp.csr_matrix((np.ones(cols.size), (rows, cols)), shape=(self.q, self.k))

    def answer(self, x):
        c = np.r_[0.0, np.cumsum(np.asarray(x, dtype=float).ravel())]
        return c[self.hi + 1] - c[self.lo]


class Histogram(Ranges):
    """HIST: every single count (the identity workload ``I_k``)."""

    kind = "histogram"

    def __init__(self, k):
        super().__init__(k, np.arange(k), np.arange(k))

    def matrix(self):
        return sp.identity(self.k, format="csr")


class Prefix(Ranges):
    """CDF: the cumulative histogram ``C_k`` (prefix counts ``x[0] + … + x[i]``)."""

    kind = "prefix"

    def __init__(self, k):
        super().__init__(k, np.zeros(k, dtype=np.int64), np.arange(k))


class Rects(Workload):
    """2-D range counts over rows ``r0..r1`` and columns ``c0..c1`` (inclusive)."""

    kind = "rects"

    def __init__(self, shape, r0, r1, c0, c1):
        self.shape = (int(shape[0]), int(shape[1]))
        self.r0, self.r1, self.c0, self.c1 = (np.asarray(a, dtype=np.int64).ravel()
                                              for a in (r0, r1, c0, c1))
        k1, k2 = self.shape
        if not (self.r0.size == self.r1.size == self.c0.size == self.c1.size):
            raise ValueError("r0, r1, c0, c1 must have the same length")
        if self.r0.size and (self.r0.min() < 0 or self.r1.max() >= k1 or np.any(self.r0 > self.r1)
                             or self.c0.min() < 0 or self.c1.max() >= k2
                             or np.any(self.c0 > self.c1)):
            raise ValueError(f"rectangles need 0 <= r0 <= r1 < {k1} and 0 <= c0 <= c1 < {k2}")
        self.q = self.r0.size

    def matrix(self):
        k1, k2 = self.shape
        rows, cols = [], []
        for i in range(self.q):
            rr, cc = np.meshgrid(np.arange(self.r0[i], self.r1[i] + 1),
                                 np.arange(self.c0[i], self.c1[i] + 1), indexing="ij")
            cols.append((rr * k2 + cc).ravel())
            rows.append(np.full(cols[-1].size, i))
        if not rows:
            return sp.csr_matrix((0, self.k))
        r, c = np.concatenate(rows), np.concatenate(cols)
        return sp.csr_matrix((np.ones(r.size), (r, c)), shape=(self.q, self.k))

    def answer(self, x):
        k1, k2 = self.shape
        X = np.asarray(x, dtype=float).reshape(k1, k2)
        S = np.zeros((k1 + 1, k2 + 1))
        S[1:, 1:] = X.cumsum(0).cumsum(1)
        return (S[self.r1 + 1, self.c1 + 1] - S[self.r0, self.c1 + 1]
                - S[self.r1 + 1, self.c0] + S[self.r0, self.c0])


class Marginal(Rects):
    """The 1-way marginal of a 2-D domain along ``axis`` (0: one count per row value)."""

    kind = "rects"

    def __init__(self, shape, axis=0):
        k1, k2 = int(shape[0]), int(shape[1])
        if axis == 0:
            super().__init__((k1, k2), np.arange(k1), np.arange(k1), np.zeros(k1), np.full(k1, k2 - 1))
        else:
            super().__init__((k1, k2), np.zeros(k2), np.full(k2, k1 - 1), np.arange(k2), np.arange(k2))
        self.axis = axis


def as_workload(W, shape=None) -> Workload:
    """Wrap a matrix (dense or sparse) or pass a :class:`Workload` through."""
    if isinstance(W, Workload):
        if shape is not None and tuple(shape) != W.shape and int(np.prod(shape)) != W.k:
            raise ValueError(f"workload domain {W.shape} does not match the policy's {tuple(shape)}")
        return W
    if not (sp.issparse(W) or isinstance(W, np.ndarray) or isinstance(W, (list, tuple))):
        raise ValueError("W must be a q × k matrix (numpy or scipy.sparse) or a Workload")
    W = sp.csr_matrix(W, dtype=float) if sp.issparse(W) else np.atleast_2d(np.asarray(W, dtype=float))
    return Matrix(W, shape)


def random_ranges(k, q, rng) -> Ranges:
    """``q`` uniformly random 1-D ranges (two uniform endpoints, sorted)."""
    a, b = rng.integers(0, k, q), rng.integers(0, k, q)
    return Ranges(k, np.minimum(a, b), np.maximum(a, b))


def random_rects(shape, q, rng) -> Rects:
    """``q`` uniformly random rectangles."""
    k1, k2 = shape
    a, b = rng.integers(0, k1, q), rng.integers(0, k1, q)
    c, d = rng.integers(0, k2, q), rng.integers(0, k2, q)
    return Rects(shape, np.minimum(a, b), np.maximum(a, b), np.minimum(c, d), np.maximum(c, d))
