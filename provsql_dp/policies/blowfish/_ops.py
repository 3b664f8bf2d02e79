"""Differentially private strategies on a 1-D vector, as matrix mechanisms ``A`` with exact error.

Each operator describes a strategy matrix ``A`` over a vector of length ``m`` (split into
independent blocks of ``B`` coordinates, padded with structural zeros): its L1 sensitivity
``Δ_A`` (under DP neighbours of that vector: one coordinate changes by one), how to turn a vector
``η`` of i.i.d. Laplace noise on the rows of ``A`` into the reconstructed noise ``A⁺η`` on the
vector, and the exact variance coefficient ``‖q A⁺‖²`` of any linear query ``q``.

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

import numpy as np
import scipy.sparse as sp

__all__ = ["Identity", "Hierarchical", "Privelet", "make_op"]


def _grouped_sq(rows, keys, vals, q):
    """Σ over groups (row, key) of (Σ vals)², per row."""
    if rows.size == 0:
        return np.zeros(q)
    comb = rows.astype(np.int64) * (int(keys.max()) + 1) + keys.astype(np.int64)
    uniq, inv = np.unique(comb, return_inverse=True)
    s = np.bincount(inv, weights=vals, minlength=uniq.size)
    r = uniq // (int(keys.max()) + 1)
    return np.bincount(r, weights=s * s, minlength=q)


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

    def sample(self, lead, scale, rng):
        """Noise on the answers of ``A`` mapped back to the data: ``A⁺·Lap(scale)``."""
        eta = rng.laplace(0.0, scale, size=tuple(lead) + (self.n_rows,))
        return self.pinv_apply(eta)

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

    def pinv_apply(self, eta):
        return eta

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
        self.lams = [(self.b ** (L - j + 1) - 1) / (self.b - 1) for j in range(L + 1)]
        self.sensitivity = L + 1
        self.n_rows = sum(self.m_pad // s for s in self.sizes)

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
        Wt = sp.coo_matrix(Wt)
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
        Wt = sp.coo_matrix(Wt)
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
