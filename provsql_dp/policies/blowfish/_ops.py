"""Differentially private strategies on a 1-D vector, as matrix mechanisms ``A`` with exact error.

Each operator describes a strategy matrix ``A`` over a vector of length ``m`` (split into
independent blocks of ``B`` coordinates, padded with structural zeros): its L1 sensitivity
``Δ_A`` (under DP neighbours of that vector: one coordinate changes by one), how to compute the
strategy rows ``A·v`` (:meth:`apply`), how to map noisy rows back to the vector by least squares
(:meth:`pinv_apply`, ``A⁺``; exactly, as rationals, by :meth:`pinv_exact`), and the exact variance
coefficient ``‖q A⁺‖²`` of any linear query ``q``.

Releases (:meth:`_Op.release`) go through the floating-point-safe sampler of
:mod:`provsql_dp.mechanisms.noise.safe_noise`: the rows ``A·v`` are released with exact discrete Laplace
noise on a public grid (:class:`SafeNoise`), then ``A⁺`` is applied — post-processing of the
released rows. ``A`` has integer entries and a neighbour moves ``v`` by ±1 in at most ``Δ_A``
rows' worth of coordinates, so at most ``⌊Δ⌋`` rows change (the plan's public ``changed``).

* :class:`Identity` — the Laplace mechanism.
* :class:`Hierarchical` — a ``b``-ary tree of interval counts per block with least-squares
  consistency (Hay et al. 2010). ``AᵀA = Σ_j λ_j D_j`` where ``D_j`` are the orthogonal
  projectors onto "constant on level-j blocks, orthogonal to level j−1", so
  ``(AᵀA)⁻¹ = Σ_j D_j / λ_j`` is applied in ``O(m log m)`` and the variance of a query is
  ``Σ_j (‖Q_j q‖² − ‖Q_{j−1} q‖²) / λ_j`` with ``Q_j`` the level-j block averaging.
* :class:`Privelet` — the Haar wavelet strategy (Xiao et al. 2010): block totals and, for every
  dyadic node, left half minus right half, uniform noise ``(1 + log₂ B)/ε``; the rows are
  orthogonal so ``A⁺ = Aᵀ diag(1/‖a_i‖²)``.

>>> import numpy as np
>>> op = Hierarchical(8, b=2)
>>> op.sensitivity
4
>>> q = np.zeros(8); q[2:7] = 1
>>> round(float(op.query_coeffs_dense(q[None, :])[0]), 4)   # ‖q A⁺‖² of the range [2, 6]
1.1429
>>> float(Identity(8).query_coeffs_dense(q[None, :])[0])
5.0
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from ...mechanisms.noise.sources import resolve_rng
from ...mechanisms.noise.safe_noise import discrete_laplace, plan_laplace
from ._exact import as_objects

__all__ = ["Identity", "Hierarchical", "Privelet", "make_op", "SafeNoise", "as_noise",
           "changed_rows", "release_on", "public_part", "noise_slots"]


def changed_rows(sensitivity, n_rows) -> int:
    """Public bound on the rows of an integer strategy that one neighbour changes: ``⌊Δ⌋``.

    Every strategy here has integer entries and a neighbour moves each affected coordinate of
    the transformed vector by exactly ±1, so each changed row moves by a nonzero integer and the
    L1 bound Δ caps their number.
    """
    return int(max(1, min(math.floor(float(sensitivity)), max(1, int(n_rows)))))


class SafeNoise:
    """The noise of one Blowfish release: every noisy number comes from the exact discrete
    Laplace sampler of :mod:`provsql_dp.mechanisms.noise.safe_noise`, with one generator (``rng`` for
    tests, else a fresh per-release Philox from OS entropy). ``plans`` records the public
    :class:`~provsql_dp.mechanisms.noise.safe_noise.LaplacePlan` of every draw (grids, scales).
    """

    def __init__(self, rng=None):
        self.rng = resolve_rng(rng)
        self.plans = []

    def release(self, values, sensitivity, epsilon, changed=None) -> np.ndarray:
        """``values`` (any shape) released on the grid of ``plan_laplace(Δ, ε, changed=r)``:
        ε-DP when neighbours move ``values`` by at most Δ in L1 over at most ``changed`` entries
        (default: all of them)."""
        v = np.asarray(values, dtype=float)
        r = max(1, v.size) if changed is None else int(changed)
        plan = plan_laplace(sensitivity, epsilon, changed=max(1, min(r, max(1, v.size))))
        self.plans.append(plan)
        return plan.release_array(v, rng=self.rng)

    def integers(self, shape, sensitivity, epsilon) -> np.ndarray:
        """Exact ``DLap(Δ/ε)`` integers (int64) of the given shape, for an integer sensitivity Δ:
        the noise of ``plan_laplace(Δ, ε, integer=True)`` on the unit grid, whose ``λ ≥ Δ/ε``.

        For mechanisms whose output is an exact rational function of the data plus these
        integers (see ``strategies``' grid plans): shifting the noise by an integer vector of L1
        weight ``Σ|d_i|/λ_i ≤ 1`` costs ε exactly, as for continuous Laplace.
        """
        plan = plan_laplace(sensitivity, epsilon, integer=True)
        if plan.grid != 1.0 or plan.index_sensitivity != float(sensitivity):
            raise ValueError(f"ε = {epsilon!r} is too small for exact integer noise of "
                             f"sensitivity {sensitivity!r} (the grid would exceed 1)")
        self.plans.append(plan)
        size = tuple(int(d) for d in np.atleast_1d(shape))
        return discrete_laplace(plan.noise_units, size=size, rng=self.rng)


def as_noise(rng) -> SafeNoise:
    """``rng`` itself if it is a :class:`SafeNoise`, else one around the generator (or None)."""
    return rng if isinstance(rng, SafeNoise) else SafeNoise(rng)


def _ints(k, dtype):
    """``k`` as Python ints (``dtype=object``) or int64 (ring arithmetic mod 2**64: exact when
    the caller has bounded the final values, see ``_Op.pinv_exact``)."""
    return as_objects(k) if dtype is object else np.asarray(k, dtype=np.int64)


def _zeros(shape, dtype):
    out = np.zeros(shape, dtype=dtype)
    if dtype is object:
        out[...] = 0
    return out


def _grouped_sq(rows, keys, vals, q):
    """Σ over groups (row, key) of (Σ vals)², per row.

    Entries in row-major order with non-decreasing keys within a row (what :func:`_row_major`
    gives) form each group as one run: summed by ``np.add.reduceat`` in linear time. Any other
    order is grouped by a sort.

    >>> _grouped_sq(np.array([0, 0, 0, 1]), np.array([0, 0, 1, 0]), np.array([1., 2., 4., 5.]), 2)
    array([25., 25.])
    """
    if rows.size == 0:
        return np.zeros(q)
    comb = rows.astype(np.int64) * (int(keys.max()) + 1) + keys.astype(np.int64)
    if comb.size < 2 or bool(np.all(comb[1:] >= comb[:-1])):
        starts = np.flatnonzero(np.r_[True, comb[1:] != comb[:-1]])
        s = np.add.reduceat(np.asarray(vals, dtype=float), starts)
        return np.bincount(rows[starts], weights=s * s, minlength=q)
    uniq, inv = np.unique(comb, return_inverse=True)
    s = np.bincount(inv, weights=vals, minlength=uniq.size)
    r = uniq // (int(keys.max()) + 1)
    return np.bincount(r, weights=s * s, minlength=q)


def _row_major(Wt):
    """``Wt`` as a COO matrix in row-major order, columns sorted within each row."""
    c = sp.csr_matrix(Wt, copy=True)
    c.sum_duplicates()
    c.sort_indices()
    return c.tocoo()


def _range_block_sq(lo, hi, s):
    """Σ over blocks of size ``s`` of (overlap of [lo, hi] with the block)² / s."""
    lo = np.asarray(lo, dtype=np.int64)
    hi = np.asarray(hi, dtype=np.int64)
    blo, bhi = lo // s, hi // s
    same = blo == bhi
    ov = (hi - lo + 1).astype(float)
    ovl = ((blo + 1) * s - lo).astype(float)
    ovr = (hi - bhi * s + 1).astype(float)
    mid = np.maximum(bhi - blo - 1, 0).astype(float)
    out = np.where(same, ov * ov / s, (ovl * ovl + ovr * ovr) / s + mid * s)
    return np.where(hi < lo, 0.0, out)


class _Op:
    name = "op"
    m: int
    B: int
    m_pad: int

    def _pad(self, z):
        return z[..., : self.m]

    def _padded(self, v):
        """``v`` (last axis ``m`` or ``m_pad``) with structural zeros up to ``m_pad``."""
        v = np.asarray(v)
        if v.shape[-1] == self.m_pad:
            return v
        out = np.zeros(v.shape[:-1] + (self.m_pad,), dtype=v.dtype)
        out[..., : v.shape[-1]] = v
        return out

    def release(self, v, sensitivity, epsilon, noise):
        """``A⁺(A·v + η)`` over the last axis of ``v``, the rows ``A·v`` released through
        ``noise`` (:class:`SafeNoise`) at L1 sensitivity ``sensitivity``; ``A⁺`` is then
        post-processing. In exact arithmetic this is ``v + A⁺η``: the error is that of the
        noise-only strategy, and its variance coefficients (:meth:`query_coeffs`) still apply."""
        rows = self.apply(v)
        noisy = noise.release(rows, sensitivity, epsilon,
                              changed=changed_rows(sensitivity, rows.size))
        return self.pinv_apply(noisy)

    def pinv_exact(self, k, dtype=object):
        """``A⁺k = num/den`` exactly, for integer ``k`` (last axis: the rows of ``A``).

        Returns ``(num, den)`` with ``den = self.exact_den`` (a Python int, independent of
        ``k``) and integer numerators with ``|num| ≤ exact_gain·den·max|k|``. ``dtype=object``
        computes in Python ints; ``dtype=np.int64`` uses only ring operations (+, −, × by
        constants), so it is exact modulo 2**64 — exact whenever the caller's final values are
        known to lie in int64 (``grid_plans`` checks this from the bound before choosing it).
        """
        raise NotImplementedError

    def query_coeffs_dense(self, Q):
        """``‖q A⁺‖²`` for each row of a dense array ``Q`` (tests and small cases)."""
        return self.query_coeffs(sp.csr_matrix(np.asarray(Q, dtype=float)))

    def matrix(self):
        """The strategy matrix ``A`` over the padded vector (``m_pad`` columns; padding
        coordinates are structural zeros). Dense; small ``m`` only, for tests."""
        raise NotImplementedError


class Identity(_Op):
    """The Laplace mechanism on every coordinate: ``A = I``, ``Δ_A = 1``."""

    name = "identity"

    def __init__(self, m):
        self.m = self.B = self.m_pad = int(m)
        self.sensitivity = 1
        self.n_rows = self.m

    def apply(self, v):
        return np.asarray(v, dtype=float)

    def pinv_apply(self, eta):
        return eta

    exact_den = 1
    exact_gain = 1

    def pinv_exact(self, k, dtype=object):
        """``A⁺k = num/den`` exactly for integer ``k`` (see :meth:`_Op.pinv_exact`)."""
        return _ints(k, dtype), 1

    def query_coeffs(self, Wt):
        Wt = sp.csr_matrix(Wt)
        return np.asarray(Wt.multiply(Wt).sum(axis=1)).ravel()

    def range_coeffs(self, lo, hi):
        return np.maximum(np.asarray(hi) - np.asarray(lo) + 1, 0).astype(float)

    def matrix(self):
        return np.eye(self.m)


class Hierarchical(_Op):
    """Blocks of ``B = b^L`` coordinates, each a complete ``b``-ary tree of counts.

    Parameters
    ----------
    m : int
        Vector length.
    b : int
        Branching factor.
    block : int, optional
        Coordinates per tree (rounded up to a power of ``b``); default: one tree over all of ``m``.
    """

    name = "hierarchical"

    def __init__(self, m, b=2, block=None):
        self.m, self.b = int(m), int(b)
        span = self.m if block is None else int(block)
        L = 0
        while self.b ** L < span:
            L += 1
        self.L = L
        self.B = self.b ** L
        self.m_pad = -(-self.m // self.B) * self.B
        self.sizes = [self.b ** (L - j) for j in range(L + 1)]  # level j block size
        self.int_lams = [(self.b ** (L - j + 1) - 1) // (self.b - 1) for j in range(L + 1)]
        self.lams = [float(lam) for lam in self.int_lams]
        self.sensitivity = L + 1
        self.n_rows = sum(self.m_pad // s for s in self.sizes)

    def apply(self, v):
        """The interval counts of every level (root level first), blocks in order."""
        v = self._padded(np.asarray(v, dtype=float))
        lead = v.shape[:-1]
        return np.concatenate([v.reshape(lead + (self.m_pad // s, s)).sum(axis=-1)
                               for s in self.sizes], axis=-1)

    @property
    def exact_den(self) -> int:
        """``B·lcm(λ_j)``: the denominator of :meth:`pinv_exact`."""
        return self.B * self._lcm

    @property
    def _lcm(self) -> int:
        lcm = 1
        for lam in self.int_lams:
            lcm = lcm * lam // math.gcd(lcm, lam)
        return lcm

    @property
    def exact_gain(self) -> int:
        """``|num| ≤ 4(L+1)·den·max|k|``: ``|v| ≤ (L+1)‖k‖∞``, ``|cur_j| ≤ B(L+1)‖k‖∞`` and
        ``Σ_j 1/λ_j < 2``."""
        return 4 * (self.L + 1)

    def pinv_exact(self, k, dtype=object):
        """``A⁺k = num/den`` exactly for integer ``k``: ``den = B·lcm(λ_j)`` (see
        :meth:`_Op.pinv_exact`)."""
        k = _ints(k, dtype)
        lead = k.shape[:-1]
        v = _zeros(lead + (self.m_pad,), dtype)
        off = 0
        for s in self.sizes:
            nb = self.m_pad // s
            v = v + np.repeat(k[..., off:off + nb], s, axis=-1)
            off += nb
        lcm = self._lcm
        den = self.B * lcm
        num = _zeros(lead + (self.m_pad,), dtype)
        prev = num.copy()
        for s, lam in zip(self.sizes, self.int_lams):
            sums = v.reshape(lead + (self.m_pad // s, s)).sum(axis=-1)
            cur = np.repeat(sums, s, axis=-1) * (self.B // s)  # B × block mean, exact
            num = num + (cur - prev) * (lcm // lam)
            prev = cur
        return self._pad(num), den

    def pinv_apply(self, eta):
        lead = eta.shape[:-1]
        v = np.zeros(lead + (self.m_pad,))
        off = 0
        for s in self.sizes:
            nb = self.m_pad // s
            v += np.repeat(eta[..., off:off + nb], s, axis=-1)
            off += nb
        z = np.zeros_like(v)
        prev = np.zeros_like(v)
        for s, lam in zip(self.sizes, self.lams):
            cur = np.repeat(v.reshape(lead + (self.m_pad // s, s)).mean(axis=-1), s, axis=-1)
            z += (cur - prev) / lam
            prev = cur
        return self._pad(z)

    def query_coeffs(self, Wt):
        Wt = _row_major(Wt)
        q = Wt.shape[0]
        out = np.zeros(q)
        prev = np.zeros(q)
        for s, lam in zip(self.sizes, self.lams):
            cur = _grouped_sq(Wt.row, Wt.col // s, Wt.data, q) / s
            out += (cur - prev) / lam
            prev = cur
        return out

    def range_coeffs(self, lo, hi):
        out = 0.0
        prev = 0.0
        for s, lam in zip(self.sizes, self.lams):
            cur = _range_block_sq(lo, hi, s)
            out = out + (cur - prev) / lam
            prev = cur
        return np.asarray(out, dtype=float)

    def matrix(self):
        rows = []
        for s in self.sizes:
            for blk in range(self.m_pad // s):
                r = np.zeros(self.m_pad)
                r[blk * s:(blk + 1) * s] = 1
                rows.append(r)
        return np.array(rows)


class Privelet(_Op):
    """Haar wavelet strategy per block of ``B = 2^L`` coordinates (Privelet, Xiao et al. 2010)."""

    name = "privelet"

    def __init__(self, m, block=None):
        self.m = int(m)
        span = self.m if block is None else int(block)
        L = 0
        while 2 ** L < span:
            L += 1
        self.L = L
        self.B = 2 ** L
        self.m_pad = -(-self.m // self.B) * self.B
        self.sensitivity = L + 1
        self.n_rows = self.m_pad

    def apply(self, v):
        """Block totals, then for every dyadic node (coarse first) left half minus right half."""
        v = self._padded(np.asarray(v, dtype=float))
        lead = v.shape[:-1]
        out = [v.reshape(lead + (self.m_pad // self.B, self.B)).sum(axis=-1)]
        for j in range(self.L):
            s = 2 ** (self.L - j)
            r = v.reshape(lead + (self.m_pad // s, s))
            out.append(r[..., : s // 2].sum(axis=-1) - r[..., s // 2:].sum(axis=-1))
        return np.concatenate(out, axis=-1)

    @property
    def exact_den(self) -> int:
        """``B``: the denominator of :meth:`pinv_exact`."""
        return self.B

    #: ``|num| ≤ (1 + Σ_j B/2^(L−j))·max|k| < 2·den·max|k|``
    exact_gain = 2

    def pinv_exact(self, k, dtype=object):
        """``A⁺k = num/den`` exactly for integer ``k``: ``den = B`` (see :meth:`_Op.pinv_exact`)."""
        k = _ints(k, dtype)
        lead = k.shape[:-1]
        nb = self.m_pad // self.B
        num = np.repeat(k[..., :nb], self.B, axis=-1)
        off = nb
        for j in range(self.L):
            s = 2 ** (self.L - j)
            nn = self.m_pad // s
            c = k[..., off:off + nn] * (self.B // s)
            off += nn
            pat = np.array([1] * (s // 2) + [-1] * (s // 2), dtype=dtype)
            num = num + (c[..., :, None] * pat).reshape(lead + (self.m_pad,))
        return self._pad(num), self.B

    def pinv_apply(self, eta):
        lead = eta.shape[:-1]
        nb = self.m_pad // self.B
        z = np.repeat(eta[..., :nb] / self.B, self.B, axis=-1)
        off = nb
        for j in range(self.L):
            s = 2 ** (self.L - j)
            nn = self.m_pad // s
            c = eta[..., off:off + nn] / s
            off += nn
            pat = np.concatenate([np.ones(s // 2), -np.ones(s // 2)])
            z = z + (c[..., :, None] * pat).reshape(lead + (self.m_pad,))
        return self._pad(z)

    def query_coeffs(self, Wt):
        Wt = _row_major(Wt)
        q = Wt.shape[0]
        out = _grouped_sq(Wt.row, Wt.col // self.B, Wt.data, q) / self.B ** 2
        for j in range(self.L):
            s = 2 ** (self.L - j)
            sign = np.where((Wt.col % s) < s // 2, 1.0, -1.0)
            out += _grouped_sq(Wt.row, Wt.col // s, Wt.data * sign, q) / (s * s)
        return out

    def range_coeffs(self, lo, hi):
        lo = np.asarray(lo, dtype=np.int64)
        hi = np.asarray(hi, dtype=np.int64)
        out = _range_block_sq(lo, hi, self.B) / self.B
        for j in range(self.L):
            s = 2 ** (self.L - j)
            h = s // 2
            for node, keep in ((lo // s, np.ones(lo.shape, bool)), (hi // s, lo // s != hi // s)):
                t = node * s
                ovl = np.clip(np.minimum(hi, t + h - 1) - np.maximum(lo, t) + 1, 0, None)
                ovr = np.clip(np.minimum(hi, t + s - 1) - np.maximum(lo, t + h) + 1, 0, None)
                d = (ovl - ovr).astype(float)
                out = out + np.where(keep, d * d / (s * s), 0.0)
        return np.where(hi < lo, 0.0, out)

    def matrix(self):
        rows = []
        for blk in range(self.m_pad // self.B):
            r = np.zeros(self.m_pad)
            r[blk * self.B:(blk + 1) * self.B] = 1
            rows.append(r)
        for j in range(self.L):
            s = 2 ** (self.L - j)
            for node in range(self.m_pad // s):
                r = np.zeros(self.m_pad)
                r[node * s:node * s + s // 2] = 1
                r[node * s + s // 2:(node + 1) * s] = -1
                rows.append(r)
        return np.array(rows)


def make_op(kind, m, *, b=2, block=None):
    """Build an operator by name: ``identity``, ``hierarchical`` or ``privelet``."""
    if kind == "identity":
        return Identity(m)
    if kind == "hierarchical":
        return Hierarchical(m, b=b, block=block)
    if kind == "privelet":
        return Privelet(m, block=block)
    raise ValueError(f"unknown operator {kind!r}")


# ---------------------------------------------------------------------------- releases
def release_on(op, v, sensitivity, eps, noise, remap=None):
    """``A⁺(A·v + η)`` for the slots ``v`` (placed at ``remap`` on the operator's coordinates)."""
    if remap is None:
        vv = v
    else:
        vv = np.zeros(op.m)
        vv[remap] = v
    z = op.release(vv, sensitivity, eps, noise)
    if remap is None:
        return z[: v.size]
    return z[remap]


def public_part(w, tree, xt):
    """``Σ_r W[:, r]·x_T[r]`` over the value roots ``r`` of the tree: the part of ``W·x`` carried
    by public slots (a bounded policy's component totals; the ⊥ root has no column). Zero when
    no value is a root."""
    roots = tree.roots
    roots = roots[roots < tree.k]
    if roots.size == 0:
        return 0.0
    u = np.zeros(tree.k)
    u[roots] = xt[roots]
    return w.answer(u)


def noise_slots(tree, xt, n):
    """The transformed vector on the first ``n`` slots with the root slots zeroed: the data the
    strategy rows are computed from (roots carry no noise and have zero columns in ``W_T``)."""
    v = np.array(xt[:n], dtype=float)
    v[tree.parent[:n] < 0] = 0.0
    return v
