"""Certified bounds on the Δ-search LP ``J(W)`` without any LP: the diagonal certificate.

Private: computes functions of the private data; reached only through
:mod:`provsql_dp.mechanisms.recursive._delta_lp`.

The first probe of a large Δ search (TPC-H Q21 at SF 1: 8,868 heavy suppliers, 1.51 M order
columns) was decided by PDLP on the cold cut pool — ``A g ≥ Q − W`` with one row per heavy
participant ``p`` (its cut at ``g = 0``: ``A_{p,p'} = Σ_{t ∋ p} q_t c_{t,p} k_{m*(t),p'}``,
``Q_p = Σ_{t ∋ p} q_t c_{t,p}``), ``0 ≤ g ≤ 1`` — whose certified bound (498) was an order of
magnitude above the probe (44): most of the release's time bought a decision a far cheaper
certificate gives. Here two certificates are computed in numpy, from the structure's arrays
only (no matrix is formed):

* **lower** — the Lagrangian dual function of the cold pool (a relaxation of ``J``: every cut
  is implied by the loads, :mod:`._j_cuts`) at multipliers ``α·π`` with the *diagonal* direction
  ``π_p = mult_p / Q_p`` (the price that pays for ``g_p`` in ``p``'s own row):
  ``ℓ(α) = α Σ_p π_p (Q_p − W) − Σ_c max(0, α (Aᵀπ)_c − mult_c)``. Weak duality makes
  ``ℓ(α) ≤ J(W)`` for **every** ``α ≥ 0`` (:func:`._certify.lagrangian_lower`'s argument: the
  variables are boxed, no dual feasibility is needed); ``ℓ`` is concave and piecewise linear in
  ``α`` with breakpoints ``mult_c / (Aᵀπ)_c``, so its maximum is found exactly by one sort. It is
  affine in ``W`` with slope ``−α Σ π``: the tangent cut the Δ search keeps is valid everywhere.
* **upper** — ``g_p = 1 − (1 − 10⁻⁹) W / Q_p`` on the heavy participants (0 elsewhere): on
  one-monomial structures with distinct members its loads are ``≤ Q_p (1 − g_p) < W``; whatever
  the structure, the loads are recomputed exactly and the bound is ``Σ mult·g`` only when every
  one is ``≤ W`` (else ``+∞``: no bound, the caller goes on as before).

The caller decides a probe ``J(W) ≤ j`` from these bounds only when they settle it (``U ≤ j``
or ``L > j``), exactly as the exact value would, and otherwise solves as before; **Δ is
therefore unchanged**, and with it Δ̂ and the release (bit-identical under a seed; the tests
pin it). Measured on Q21 at SF 1 (``L`` = 498.3 at the probe ``j = 44``, as PDLP certified): one bincount pass over
the incidences and one sort of the columns' breakpoints instead of the cold cut matrix and PDLP
(see ``benchmarks/issue29_q21_measured.md``).

Examples
--------
>>> import numpy as np
>>> from provsql_dp.provenance.krelation import KRelation
>>> from provsql_dp.mechanisms.recursive._structure import Structure
>>> kr = KRelation.from_annotations(
...     rows=[(1,), (2,), (3,)],
...     annotations=[[{("v", "a"), ("v", "b")}], [{("v", "a"), ("v", "c")}], [{("v", "a"), ("v", "d")}]])
>>> slope, lower, upper = diagonal_bounds(Structure(kr).load_view(), 1.0)
>>> round(lower, 6), round(upper, 6), slope < 0  # J(1) = 2/3 (g_a = 2/3)
(0.666667, 0.666667, True)
"""

from __future__ import annotations

import numpy as np

from ._kelley import tight_monomials

__all__ = ["diagonal_bounds", "diagonal_lower", "line_max"]

#: relative guard against floating-point summation error (bincount sums millions of terms in
#: order: n·u ≈ 1e-10 for n = 10^6 in the worst case; this is ten times that)
_GUARD = 1e-9


def line_max(b: float, a: np.ndarray, cost: np.ndarray) -> float:
    """``argmax_{α ≥ 0} α b − Σ_c max(0, α a_c − cost_c)`` for ``a ≥ 0``, ``cost ≥ 0``.

    The function is concave and piecewise linear; its right derivative after the breakpoints
    ``cost_c / a_c`` (sorted) passed so far is ``b − Σ a_c`` over them: the maximum is at the
    first breakpoint where that derivative is no longer positive (0 when ``b ≤ 0``). When it
    stays positive (``b > Σ a``: unbounded), the last breakpoint — any ``α`` gives a valid bound;
    on J's cold pool this never happens (``g = 1`` satisfies every cut, so ``Σ_c a_c ≥ b``).

    >>> line_max(3.0, np.array([1.0, 1.0, 2.0]), np.array([1.0, 2.0, 2.0]))
    1.0
    """
    if b <= 0:
        return 0.0
    pos = a > 0
    if not pos.any():
        return float("inf")  # unbounded: only happens with no columns, never with heavy rows
    brk = cost[pos] / a[pos]
    order = np.argsort(brk, kind="stable")
    slope_after = b - np.cumsum(a[pos][order])
    k = int(np.argmax(slope_after <= 0)) if (slope_after <= 0).any() else len(order) - 1
    return float(brk[order][k])


def diagonal_lower(view, cap: float) -> tuple[float, float]:
    """``(ℓ, s)``: a certified lower bound of ``J(cap)`` and its slope in ``W`` (module doc)."""
    v, cap = view, float(cap)
    mult = np.asarray(v.mult, dtype=np.float64)
    heavy = v.deg > cap
    if not heavy.any():
        return 0.0, 0.0
    # the cold cuts' incidences (every tuple has φ = 1 at g = 0) of the heavy participants
    inc = np.flatnonzero(heavy[v.var_part])
    w_inc = v.q[v.var_tuple[inc]] * v.var_coef[inc]
    q_row = np.bincount(v.var_part[inc], weights=w_inc, minlength=v.n)  # Q_p (0 if light)
    pi = np.zeros(v.n)
    pi[heavy] = mult[heavy] / q_row[heavy]
    # Aᵀπ: each tuple's priced incidences spread over its monomial m*(t) at g = 0
    z = np.bincount(v.var_tuple[inc], weights=pi[v.var_part[inc]] * w_inc, minlength=v.n_tuples)
    if v.n_mono == v.n_tuples:  # one monomial per tuple: every entry
        ent_w = z[v.mono_tuple[v.ent_mono]] * v.ent_coef
        at_pi = np.bincount(v.ent_part, weights=ent_w, minlength=v.n)
    else:  # the monomial cuts_at takes at g = 0 (the first of each tuple's ties)
        m_star, _ = tight_monomials(v, np.zeros(v.n))
        mono_tuple = v.mono_tuple[v.ent_mono]
        e = np.flatnonzero(m_star[mono_tuple] == v.ent_mono)
        at_pi = np.bincount(v.ent_part[e], weights=z[mono_tuple[e]] * v.ent_coef[e], minlength=v.n)
    rhs = q_row[heavy] - cap
    b = float(np.dot(pi[heavy], rhs))
    alpha = line_max(b, at_pi, mult)
    if not np.isfinite(alpha) or alpha <= 0:
        return 0.0, 0.0
    over = np.maximum(alpha * at_pi - mult, 0.0)
    value = alpha * b - float(over.sum())
    value -= _GUARD * (alpha * float(np.abs(pi[heavy] * rhs).sum()) + float(over.sum())) + 1e-300
    return max(value, 0.0), -alpha * float(pi[heavy].sum())


def diagonal_upper(view, cap: float) -> float:
    """A certified upper bound of ``J(cap)``: the diagonal point, its loads recomputed exactly."""
    v, cap = view, float(cap)
    heavy = v.deg > cap
    g = np.zeros(v.n)
    # a relative margin of 1e-9 on the load keeps rounding of the recomputed sums below W
    # (without it, on Q7, the point was over W by an ulp and got no bound)
    g[heavy] = np.minimum(1.0, 1.0 - (cap / v.deg[heavy]) * (1.0 - _GUARD))
    if not (v.loads(g) > cap).any():
        return float(np.dot(v.mult, g))
    return float("inf")  # no bound: primal_upper's repairs cost several load passes per probe


def diagonal_bounds(view, cap: float, decided=None) -> tuple[float, float, float]:
    """``(slope, lower, upper)`` of the diagonal certificates at ``W = cap``; with ``decided``
    (a predicate on ``lower``), the upper bound is not computed (``inf``) once the lower bound
    alone settles the caller's question."""
    lower, slope = diagonal_lower(view, cap)
    if decided is not None and decided(lower):
        return slope, lower, float("inf")
    return slope, lower, diagonal_upper(view, cap)
