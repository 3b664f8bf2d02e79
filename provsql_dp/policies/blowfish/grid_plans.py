"""The 2-D Blowfish strategies: grids ``Gᶿ`` (Haney et al. §5.4) and the 2-D DP baselines.

* ``grid_laplace`` — Laplace on every edge of the grid ``G¹`` (any workload matrix);
* ``grid_hierarchical`` / ``grid_privelet`` — each rectangle as ±4 ranges along the lines of
  edges of ``G¹``, answered by a 1-D strategy per line (Haney et al. Thm 5.4); ``Gᶿ`` through
  ``G¹`` at stretch ``ℓ = θ`` (Lemma 4.5);
* ``dp_laplace`` / ``dp_hierarchical`` / ``dp_privelet`` — the tensor product of the 1-D
  strategies on the cell counts, at ``ε/2`` for a bounded policy.

Floating-point safety. A neighbour under a grid policy is a path in a graph with cycles, so no
fixed transform of ``x`` has the stated sensitivity: the ``grid_*`` strategies are computed in
their noise-only form ``W·(x + P_G·A⁺K)`` with ``K`` integer discrete Laplace of scale ``ℓΔ_A/ε``
(``SafeNoise.integers``), **exactly** in rationals (:mod:`._exact`), each answer rounded once.
Privacy: a neighbour is ``x' = x + P_G·e`` with ``e`` an integer edge vector of L1 weight ≤ ℓ, and
``A⁺A = I``, so ``x' + P_G·A⁺K = x + P_G·A⁺(K + A·e)``: an integer shift of ``K`` of L1 weight
``≤ ℓΔ_A``, whose probability ratio under ``DLap(ℓΔ_A/ε)`` is at most ``e^ε``. The ``dp_*``
baselines release the rows ``A₁·X·A₂ᵀ`` on the public grid of ``plan_laplace`` and post-process.

>>> import numpy as np
>>> from provsql_dp.policies.blowfish import Policy, random_rects
>>> pol = Policy.grid(4, 4)
>>> w = random_rects((4, 4), 3, np.random.default_rng(0))
>>> [p.name for p in grid_plans(w, pol, ("grid_laplace", "dp_laplace"))]
['grid_laplace', 'dp_laplace']
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from ._exact import (
    combine_exact,
    exact_matrix_answers,
    exact_rect_answers,
    int64_counts,
    obj_matvec,
    rect_sums,
    zeros_obj,
)
from ._ops import Hierarchical, Identity, Privelet, changed_rows
from ._plan import BRANCHINGS, Plan, dp_factor, matrix_ok
from .policy import Policy
from .workload import Rects, Workload

__all__ = ["grid_plans", "line_noise_answers"]


def _grid_ell(policy: Policy):
    """Stretch of the policy's value edges inside the grid G¹ on the same shape (None: n/a)."""
    if policy.kind == "grid":
        return int(policy.theta)
    if policy.kind == "product" and len(policy.factors) == 2:
        ths = []
        for f in policy.factors:
            if f.kind not in ("line", "threshold"):
                return None
            ths.append(int(f.theta))
        return max(ths)
    return None


def _source_counter(policy, shape):
    """Function (r0, r1, c0, c1) → number of ⊥-neighbours inside each rectangle."""
    k1, k2 = shape
    S = np.zeros((k1 + 1, k2 + 1))
    ind = np.zeros(k1 * k2)
    ind[policy.bottom_neighbours()] = 1
    S[1:, 1:] = ind.reshape(k1, k2).cumsum(0).cumsum(1)
    return lambda r0, r1, c0, c1: (S[r1 + 1, c1 + 1] - S[r0, c1 + 1] - S[r1 + 1, c0] + S[r0, c0])


def _rect_prefix(field):
    k1, k2 = field.shape
    S = np.zeros((k1 + 1, k2 + 1))
    S[1:, 1:] = field.cumsum(0).cumsum(1)
    return S


def _grid_line_plans(w: Rects, policy, op_kind):
    ell = _grid_ell(policy)
    if ell is None:
        return []
    k1, k2 = w.shape
    out = []
    bs = BRANCHINGS if op_kind == "hierarchical" else (2,)
    r0, r1, c0, c1 = w.r0, w.r1, w.c0, w.c1
    hasL, hasR, hasT, hasB = c0 > 0, c1 < k2 - 1, r0 > 0, r1 < k1 - 1
    count_src = _source_counter(policy, w.shape) if not policy.bounded else None
    for b in bs:
        mk = {"identity": lambda m: Identity(m), "hierarchical": lambda m: Hierarchical(m, b),
              "privelet": lambda m: Privelet(m)}[op_kind]
        opH, opV = mk(k1), mk(k2)  # H lines run over rows (length k1), V lines over columns
        d = max(opH.sensitivity, opV.sensitivity)
        s = ell * d
        vr = opH.range_coeffs(r0, r1)
        vc = opV.range_coeffs(c0, c1)
        uv = 2.0 * s * s * (vr * (hasL.astype(float) + hasR) + vc * (hasT.astype(float) + hasB))
        if count_src is not None:
            uv = uv + 2.0 * ell * ell * count_src(r0, r1, c0, c1)

        def run(x, exact, eps, noise, opH=opH, opV=opV, s=s):
            # exact noise-only: integer K per line (h lines first), then per ⊥-edge
            kh = noise.integers((k2 - 1, opH.n_rows), s, eps) if k2 > 1 else None
            kv = noise.integers((k1 - 1, opV.n_rows), s, eps) if k1 > 1 else None
            src = None if policy.bounded else policy.bottom_neighbours()
            ksrc = None if src is None else noise.integers(src.size, ell, eps)
            return line_noise_answers(w, x, (opH, kh), (opV, kv), src, ksrc)

        name = "grid_" + {"identity": "laplace"}.get(op_kind, op_kind)
        det = f"{name}: ±4 line ranges on the edges of G¹ (ℓ={ell}"
        det += (f", b={b})" if op_kind == "hierarchical" else ")")
        out.append(Plan(name, det, uv, run))
    return out


def line_noise_answers(w: Rects, x, h, v, src=None, ksrc=None) -> np.ndarray:
    """``W·(x + F/D)`` for the rectangles of ``w``, exactly, each answer rounded once.

    ``F/D`` is the cell field of the line noises: ``h = (opH, K_h)`` with ``K_h[j]`` the integer
    noise of the line of horizontal edges between columns ``j`` and ``j+1`` (``A⁺K`` added at
    column ``j``, subtracted at ``j+1``), ``v`` likewise for vertical edges, plus ``ksrc`` at the
    source cells ``src`` (⊥-edges). ``K = None`` for an absent family.

    Exactness at engine speed: a rectangle's sum of ``F`` telescopes to ≤ 4 line-range sums (and
    its sources), so ``|Σ_rect F| ≤ 4·max(k₁, k₂)·gain·D·max|K| + #src·D·max|K_src|``. When that
    bound and ``Σ|x|`` fit in int64 and ``x`` is integer-valued (always for SQL counts), ``F`` and
    the rectangle sums are computed in int64 — ring operations only, exact modulo 2**64, hence
    exact — and ``a_q + num_q/D`` is formed per query in Python ints. Otherwise every step runs on
    Python ints (:func:`._exact.exact_rect_answers`). The choice depends on the noise and on
    whether ``x`` holds integers, never on the noisy answers.
    """
    k1, k2 = w.shape
    fams = [(kind, op, kk) for kind, (op, kk) in (("h", h), ("v", v)) if kk is not None]
    den = 1
    for _, op, _ in fams:
        den = den * op.exact_den // math.gcd(den, op.exact_den)
    bound = 0
    for _, op, kk in fams:
        kmax = int(np.abs(kk).max()) if kk.size else 0
        bound = max(bound, 4 * max(k1, k2) * op.exact_gain * den * kmax)
    if ksrc is not None and ksrc.size:
        bound += int(src.size) * den * int(np.abs(ksrc).max())
    xi = int64_counts(x)
    fast = xi is not None and den < 2 ** 62 and bound < 2 ** 62
    dtype = np.int64 if fast else object
    field = zeros_obj((k1, k2)) if not fast else np.zeros((k1, k2), dtype=np.int64)
    for kind, op, kk in fams:
        num, d = op.pinv_exact(kk, dtype)
        z = num * (den // d)
        if kind == "h":  # +z at (i, j), −z at (i, j+1)
            field[:, :-1] += z.T
            field[:, 1:] -= z.T
        else:  # +z at (i, j), −z at (i+1, j)
            field[:-1, :] += z
            field[1:, :] -= z
    if ksrc is not None:  # ⊥-edges of the sources: +K at the source cell
        flat = field.reshape(-1)
        if fast:
            flat[src] += np.asarray(ksrc, dtype=np.int64) * den
        else:
            flat[src] += np.array([int(t) * den for t in ksrc], dtype=object)
    if not fast:
        return exact_rect_answers(w, x, field, den)
    a = rect_sums(xi.reshape(k1, k2), w)
    return combine_exact(a, rect_sums(field, w), den)


def _grid_incidence(policy, shape):
    k1, k2 = shape
    idx = np.arange(k1 * k2).reshape(k1, k2)
    u = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    v = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    e = np.arange(u.size)
    rows = [u, v]
    cols = [e, e]
    data = [np.ones(u.size), -np.ones(u.size)]
    if not policy.bounded:
        b = policy.bottom_neighbours()
        rows.append(b)
        cols.append(u.size + np.arange(b.size))
        data.append(np.ones(b.size))
        ne = u.size + b.size
    else:
        ne = u.size
    return sp.csr_matrix((np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(k1 * k2, ne))


def _grid_laplace_matrix_plan(w, policy):
    ell = _grid_ell(policy)
    if ell is None or not matrix_ok(w):
        return []
    inc = _grid_incidence(policy, policy.shape)
    WG = (w.matrix() @ inc).tocsr()
    uv = 2.0 * ell * ell * np.asarray(WG.multiply(WG).sum(axis=1)).ravel()

    def run(x, exact, eps, noise):
        # exact noise-only: W·(x + P_G·K), K integer DLap(ℓ/ε) per edge, exact, rounded once
        k_edges = noise.integers(inc.shape[1], ell, eps)
        field = obj_matvec(inc, k_edges)
        return exact_matrix_answers(w.matrix(), x, field, 1)

    return [Plan("grid_laplace", f"grid_laplace: Laplace on every edge of G¹ (ℓ={ell})", uv, run)]


def _dp2_plans(w: Rects, policy, op_kind):
    f = dp_factor(policy)
    k1, k2 = w.shape
    out = []
    bs = BRANCHINGS if op_kind == "hierarchical" else (2,)
    for b in bs:
        mk = {"identity": lambda m: Identity(m), "hierarchical": lambda m: Hierarchical(m, b),
              "privelet": lambda m: Privelet(m)}[op_kind]
        o1, o2 = mk(k1), mk(k2)
        s = f * o1.sensitivity * o2.sensitivity
        uv = 2.0 * s * s * o1.range_coeffs(w.r0, w.r1) * o2.range_coeffs(w.c0, w.c1)

        def run(x, exact, eps, noise, o1=o1, o2=o2, s=s):
            X = np.asarray(x, dtype=float).reshape(k1, k2)
            rows = o1.apply(o2.apply(X).T).T  # A₁·X·A₂ᵀ, (o1.n_rows, o2.n_rows)
            y = noise.release(rows, s, eps, changed=changed_rows(s, rows.size))
            z = o2.pinv_apply(y)
            z = o1.pinv_apply(z.T).T  # A₁⁺·Y·A₂⁺ᵀ: post-processing
            S = _rect_prefix(z)
            return (S[w.r1 + 1, w.c1 + 1] - S[w.r0, w.c1 + 1] - S[w.r1 + 1, w.c0]
                    + S[w.r0, w.c0])

        name = "dp_" + {"identity": "laplace"}.get(op_kind, op_kind)
        det = f"{name} at ε/{f} (2-D tensor" + (f", b={b})" if op_kind == "hierarchical" else ")")
        out.append(Plan(name, det, uv, run))
    return out


def grid_plans(w: Workload, policy: Policy, names) -> list:
    """Every applicable 2-D plan (all variants) for the given strategy names (``dp_laplace`` on
    a non-rectangle workload is the 1-D plan on the cells: see ``strategies.plans``)."""
    out = []
    for name in names:
        if name in ("grid_hierarchical", "grid_privelet", "grid_laplace"):
            kind = {"grid_laplace": "identity"}.get(name, name[5:])
            if isinstance(w, Rects):
                out += _grid_line_plans(w, policy, kind)
            elif name == "grid_laplace":
                out += _grid_laplace_matrix_plan(w, policy)
        elif name.startswith("dp_"):
            kind = {"dp_laplace": "identity"}.get(name, name[3:])
            if isinstance(w, Rects):
                out += _dp2_plans(w, policy, kind)
    return out
