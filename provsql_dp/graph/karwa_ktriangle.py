"""Karwa et al.'s own k-triangle mechanism (edge privacy, (ε, δ)-DP): a benchmark baseline.

Source: Karwa, Raskhodnikova, Smith & Yaroslavtsev, "Private Analysis of Graph Structure",
PVLDB 4(11):1146–1157, 2011, §4 — **Algorithm 1** with Lemma 4.1 (the local sensitivity) and
Lemma 4.2 (a bound on the local sensitivity of the local sensitivity); Chen & Zhou §6.1 compares
against it ("the k-triangle mechanism of [7] ... achieves only (ε, δ)-differential privacy").
:mod:`provsql_dp.mechanisms.subgraph.smooth` has a smooth-sensitivity k-triangle release derived
before this paper was readable here; this module is the paper's mechanism.

With ``a_ij`` the common neighbours of ``i`` and ``j`` and ``x_ij`` the adjacency:

* Lemma 4.1: ``LS(G) = max_{i≠j} C(a_ij, k) + Σ_{ℓ ∈ N_ij} [C(a_iℓ − x_ij, k−1) + C(a_ℓj − x_ij, k−1)]``
  (:func:`ktriangle_local_sensitivity`, exact; brute-force tested);
* Lemma 4.2: ``LS'(G) ≤ B(a_max)`` with ``B(a) = 3·C(a, k−1) + a·C(a, k−2)``;
* Algorithm 1 (:func:`karwa_ktriangle_release`), ``ε' = ε/3``, ``δ' = δ/3``:
  ``ã = a_max + Lap(1/ε') + ln(1/δ')/ε'``;
  ``L̃S = LS + Lap(B(ã)/ε') + ln(1/δ')·B(ã)/ε'``; release ``(f + Lap(L̃S/ε'), L̃S)``.
  Theorem 4.3: (ε, δ)-DP for ``ε ∈ (0, (3/2)·ln(3/2)]`` and ``δ ∈ (0, 1)``.

Deviations, all monotone post-processing of released values that only raise a bound (so Lemma
4.4's premise "the bound is ≥ LS with probability ≥ 1 − δ₂" and the differential privacy of the
bound are kept): ``B`` is evaluated at ``⌈max(ã, 0)⌉`` with integer binomials (the paper's ``B``
at a real ``ã`` is a polynomial that is not monotone below ``k − 2``); ``B`` and ``L̃S`` are
floored at 1 (a Laplace scale must be positive; the paper's algorithm is undefined when they are
not). Noise: every Laplace draw is the exact discrete Laplace of
:func:`provsql_dp.mechanisms.noise.safe_noise.plan_laplace` on integers (``a_max``, ``LS`` and the count
are integer-valued functions, so a real bound ``s`` on their change bounds it by ``⌊s⌋``).

Examples
--------
>>> import numpy as np
>>> src, dst = np.array([0, 0, 1, 0, 1]), np.array([1, 2, 2, 3, 3])   # K4 minus the edge 23
>>> ktriangle_local_sensitivity(src, dst, 4, 2)
5
>>> value, ls_bound = karwa_ktriangle_release(src, dst, 4, 2, epsilon=0.5, delta=0.1,
...                                           rng=np.random.default_rng(0))
>>> bool(np.isfinite(value)) and ls_bound >= 1
True
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from ..mechanisms.subgraph.smooth import ktriangle_count
from ..mechanisms.noise.sources import resolve_rng
from ..mechanisms.noise.safe_noise import plan_laplace

__all__ = ["ktriangle_local_sensitivity", "ktriangle_stats", "karwa_b", "karwa_ktriangle_release",
           "MAX_EPSILON"]

#: Theorem 4.3's range: Algorithm 1 is (ε, δ)-DP for ε ≤ (3/2)·ln(3/2) ≈ 0.608.
MAX_EPSILON = 1.5 * math.log(1.5)


def _adjacency(src, dst, n: int) -> sp.csr_matrix:
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    if len(src) and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= n):
        raise ValueError(f"node ids must lie in [0, {n})")
    keep = src != dst
    src, dst = src[keep], dst[keep]
    a = sp.coo_matrix((np.ones(2 * len(src)), (np.concatenate([src, dst]),
                                                np.concatenate([dst, src]))), shape=(n, n)).tocsr()
    a.data[:] = 1.0  # merge duplicates
    return a


def _comb_data(m: sp.csr_matrix, r: int, shift: int = 0) -> sp.csr_matrix:
    """``m`` with every stored value ``v`` replaced by ``C(v − shift, r)`` (0 below 0)."""
    out = m.copy()
    vals = np.rint(out.data).astype(np.int64) - shift
    uniq, inv = np.unique(vals, return_inverse=True)
    table = np.array([math.comb(int(v), r) if v >= 0 else 0 for v in uniq.tolist()],
                     dtype=np.float64)
    if table.size and table.max() >= 2.0**53:
        raise ValueError("binomial terms beyond 2**53: the float64 sums would not be exact")
    out.data = table[inv]
    return out


def ktriangle_local_sensitivity(src, dst, n: int, k: int) -> int:
    """Lemma 4.1's local sensitivity of the k-triangle count under edge privacy (exact).

    Sparse products: with ``A`` the adjacency, ``T = A²`` (``a_ij``) and ``W_s`` the edges
    weighted by ``C(a_iℓ − s, k−1)``, the sum over ``ℓ ∈ N_ij`` is ``(W_s A + A W_s)_ij`` with
    ``s = x_ij``.
    """
    if isinstance(k, bool) or int(k) != k or k < 2:
        raise ValueError(f"k-triangles need an integer k >= 2, got {k!r}")
    k = int(k)
    adj = _adjacency(src, dst, n)
    t = (adj @ adj).tocsr()
    t.setdiag(0)
    t.eliminate_zeros()
    if t.nnz == 0:
        return 0
    on_edges = t.multiply(adj).tocsr()  # a_iℓ on the edges with a common neighbour
    best = 0.0
    base = _comb_data(t, k)
    for shift, mask_edges in ((0, False), (1, True)):
        w = _comb_data(on_edges, k - 1, shift)
        total = (base + w @ adj + adj @ w).tocsr()
        total.setdiag(0)
        part = total.multiply(adj) if mask_edges else total - total.multiply(adj)
        part = sp.csr_matrix(part)
        if part.nnz:
            best = max(best, float(part.data.max()))
    return int(best)


def karwa_b(a: float, k: int) -> int:
    """``B(a) = 3·C(a, k−1) + a·C(a, k−2)`` (Lemma 4.2) at ``⌈max(a, 0)⌉`` (integer binomials:
    nondecreasing in ``a``, never below the paper's value at an integer ``a ≥ ã``).

    >>> karwa_b(5, 2), karwa_b(4.2, 2), karwa_b(-3.0, 3)
    (20, 20, 0)
    """
    m = math.ceil(max(float(a), 0.0))
    return 3 * math.comb(m, k - 1) + m * math.comb(m, k - 2)


def ktriangle_stats(src, dst, n: int, k: int) -> tuple[int, int, int]:
    """``(a_max, LS, count)``: what :func:`karwa_ktriangle_release` reads from the graph (exact)."""
    adj = _adjacency(src, dst, n)
    t = (adj @ adj).tocsr()
    t.setdiag(0)
    t.eliminate_zeros()
    a_max = int(t.data.max()) if t.nnz else 0
    return a_max, ktriangle_local_sensitivity(src, dst, n, k), int(ktriangle_count(src, dst, n, k))


def karwa_ktriangle_release(src, dst, n: int, k: int, *, epsilon: float, delta: float, rng=None,
                            stats: tuple[int, int, int] | None = None) -> tuple[float, float]:
    """Algorithm 1 of Karwa et al. (module docstring): ``(f + Lap(L̃S/ε'), L̃S)``, **(ε, δ)-DP**
    under edge privacy for ``ε ≤ MAX_EPSILON``. ``stats = (a_max, LS, count)`` may be passed to
    reuse them across releases (they are computed exactly otherwise).

    Raises ``ValueError`` for ε outside ``(0, MAX_EPSILON]``, δ outside ``(0, 1)`` or ``k < 2``.
    """
    if not (isinstance(epsilon, (int, float)) and 0 < epsilon <= MAX_EPSILON):
        raise ValueError(f"Karwa et al.'s Algorithm 1 is (ε, δ)-DP for ε in (0, {MAX_EPSILON:.4f}] "
                         f"(their Theorem 4.3), got {epsilon!r}")
    if not (isinstance(delta, (int, float)) and 0 < delta < 1):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    if isinstance(k, bool) or int(k) != k or k < 2:
        raise ValueError(f"k-triangles need an integer k >= 2, got {k!r}")
    eps1, d1 = epsilon / 3.0, delta / 3.0
    shift = math.log(1.0 / d1) / eps1
    a_max, ls, count = stats if stats is not None else ktriangle_stats(src, dst, n, int(k))
    gen = resolve_rng(rng)
    a_tilde = plan_laplace(1, eps1, integer=True).release(int(a_max), rng=gen) + shift
    b = max(karwa_b(a_tilde, int(k)), 1)
    ls_tilde = plan_laplace(b, eps1, integer=True).release(int(ls), rng=gen) + shift * b
    scale = max(float(ls_tilde), 1.0)
    value = plan_laplace(scale, eps1, integer=True).release(int(count), rng=gen)
    return float(value), float(ls_tilde)
