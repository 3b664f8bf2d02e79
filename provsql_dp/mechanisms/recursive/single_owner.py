"""Closed-form recursive mechanism for single-owner K-relations: no LP, ``O(n log n)`` numpy.

Setting
-------
Every output tuple ``t`` is owned by exactly one participant ``o(t)``: its annotation is the single
monomial ``{o(t)}`` (Chen & Zhou §2.4; e.g. ``SELECT SUM(x) FROM t`` on a table protected row-by-
owner, no join between protected rows). With nonnegative weights ``q(t)`` only the per-participant
totals ``c_p = Σ_{t : o(t) = p} q(t) ≥ 0`` matter (DuckDB can compute them with ``GROUP BY owner``).
Optionally some tuples are public (annotation ``True``); their total weight is ``b`` (``public``).

Write ``n = |P|`` (participants that own nothing have ``c_p = 0``), ``s_0 ≤ s_1 ≤ … ≤ s_{n−1}``
for the sorted totals and ``n₀ = #{p : c_p = 0}``.

What the LP path computes here (read off :mod:`provsql_dp.mechanisms.recursive._lp`)
-------------------------------------------------------------------------
For ``R(t) = {{o}}`` the relaxation is ``φ_{R(t)}(f) = max(0, f_o − 1 + 1) = f_o``, the
φ-sensitivity is ``S_{R(t),p} = [p = o]`` and ``φ_True = 1``, ``S_{True,p} = 0``. ``o`` occurs in
the only monomial, so the load view of ``_lp.Structure.load_view`` *is* the structure, and the
code's corrected G coincides with eq. 19 as printed: ``load_p(f) = c_p f_p``. ``Structure``
drops weight-0 tuples and treats every participant without a positive-weight tuple as absent
(``n_absent``); those are exactly the ``p`` with ``c_p = 0``. Hence, with ``i`` real in ``[0, n]``:

* ``H_i = b + min { Σ_p c_p f_p : f ∈ [0,1]^P, Σ f = i }``                       (eq. 16)
* ``G_i = 2 min { max_p c_p f_p : f ∈ [0,1]^P, Σ f = i }``                      (eq. 19, factor 2)
* ``Δ = min { e^{jβ}θ : j ∈ ℕ, G_{n−j} ≤ e^{jβ}θ }``                            (eq. 11)
* ``X = min { H_i + (n − i) Δ̂ : i = 0 … n }``                                  (eq. 12)

The code's convention for absent participants, ``H_i(P) = H_{max(0, i−n₀)}(P_R)`` (and the same for
G), is what the formulas below give with the ``n₀`` zeros sorted first; Propositions 1–4 hold for
the full ``P``, zeros included, so no separate case is needed.

Proposition 1 (H: fractional knapsack). ``H_i = b + Σ_{k<⌊i⌋} s_k + (i − ⌊i⌋) s_{⌊i⌋}`` (the last
term is absent when ``i = n``). H is nondecreasing, convex and piecewise linear with slope
``s_k`` on ``[k, k+1]``: Lemma 10 holds with equality of slopes to the sorted totals.

*Proof.* The greedy ``f`` (1 on the ``⌊i⌋`` smallest, ``i − ⌊i⌋`` on the next) is feasible and
attains the value. Lower bound (``i < n``; ``i = n`` forces ``f = 1``): let ``λ = s_{⌊i⌋}``. For
feasible ``f``, ``Σ c_p f_p = λ Σ f_p + Σ_p (c_p − λ) f_p ≥ λ i − Σ_{c_p<λ} (λ − c_p)`` since
each term ``(c_p − λ) f_p`` with ``0 ≤ f_p ≤ 1`` is ``≥ min(0, c_p − λ)``. Let
``L = #{c_p < λ} ≤ ⌊i⌋``; the sorted totals at positions ``L … ⌊i⌋−1`` equal ``λ``, so the greedy
value is ``Σ_{c<λ} c + (⌊i⌋ − L)λ + (i − ⌊i⌋)λ = λ i − Σ_{c<λ}(λ − c)``: equal. ∎

Proposition 2 (G: water-filling). For ``w ≥ 0`` let ``S(w) = Σ_p min(1, w / c_p)`` (a term is 1
when ``c_p = 0``): continuous, nondecreasing, ``S(0) = n₀``, ``S(max c) = n``, and strictly
increasing on ``[0, max c]`` when ``max c > 0`` (the term of the largest total is ``w / max c``).
Then ``G_i = 0`` for ``i ≤ n₀`` and otherwise ``G_i = 2w*`` with ``S(w*) = i``. On
``[s'_{k−1}, s'_k]`` (``s'`` the ``m = n − n₀`` positive totals sorted, ``s'_{−1} = 0``)
``S(w) = n₀ + k + w R_k`` with ``R_k = Σ_{l≥k} 1/s'_l``, so
``w* = (i − n₀ − k)/R_k`` for the first ``k`` with ``n₀ + k + s'_k R_k ≥ i``.

*Proof.* ``i ≤ n₀``: spread ``i`` over the zeros, every load is 0. ``i > n₀``: if
``max_p c_p f_p ≤ w`` then ``f_p ≤ min(1, w/c_p)``, so ``i = Σ f ≤ S(w)`` and ``w ≥ w*``
(``S`` strictly increasing). Conversely ``f_p = min(1, w*/c_p)`` is feasible (``Σ f = S(w*) = i``)
with every load ``≤ w*``. ∎

Proposition 3 (the Δ predicate). For ``W ≥ 0`` and integer ``0 ≤ j ≤ n``,
``G_{n−j} ≤ 2W ⟺ J(W) ≤ j`` with ``J(W) = Σ_p max(0, 1 − W/c_p) = #{c_p > W} − W Σ_{c_p>W} 1/c_p``.

*Proof.* ``J(W) = n − S(W)``. If ``n − j ≤ n₀`` both sides hold (``G = 0``; ``S(W) ≥ n₀``).
Otherwise ``G_{n−j} ≤ 2W ⟺ w*(n−j) ≤ W ⟺ S(W) ≥ n − j`` by monotonicity of ``S``. ∎

This is the predicate the LP path evaluates (``_lp.Solver.j_value`` solves J as an LP and
``recursive._Run.delta`` tests ``J(τ_j/2) ≤ j``, ``τ_j = e^{jβ}θ``, with the relative slack
``_CMP_TOL``, plus the free greedy bound ``2 M[j] ≤ τ_j`` where ``M[j]`` is the ``(j+1)``-th largest
total). The thresholds ``W_j = τ_j/2`` increase with ``j`` and the search range is
``j ≤ hi = O(ln(G_n/θ)/β)``, capped at ``#{c_p > 0}``. :func:`delta` evaluates the predicate for
**every** ``j`` in the range at once: each total is bucketed between consecutive thresholds
(``⌈ln(2c/θ)/β⌉`` from a logarithm, then corrected exactly against the thresholds), a ``bincount``
of the counts and of ``1/c`` per bucket and a suffix cumulative sum give ``#{c > W_j}`` and
``Σ_{c>W_j} 1/c`` for all ``j``; the answer is the first ``j`` where either the J test or the greedy
test holds — the same ``j`` as the LP path's search, which finds the first ``j`` satisfying the
same monotone predicate (its probes and tangent cuts only decide *which* ``j`` it evaluates).
Cost ``O(n + hi)`` (one logarithm per total, typically one correction pass), no sort.

Proposition 4 (X: clamped sum). ``X = b + Σ_p min(c_p, Δ̂)``.

*Proof.* For integer ``i``, ``H_i + (n−i)Δ̂ − b = Σ_{k<i} s_k + Σ_{k≥i} Δ̂ ≥ Σ_k min(s_k, Δ̂)``,
with equality at ``i = #{c_p ≤ Δ̂}`` (the sorted ``s_k ≤ Δ̂`` exactly for ``k < i``). ∎

H is piecewise linear with integer breakpoints (Prop. 1), so the real-interval LP of eq. 20 has the
same minimum and the LP path's ``⌊i'⌋``/``⌈i'⌉`` step returns this value. A participant with
``c_p = 0`` adds ``min(0, Δ̂) = 0``: absent participants change neither X nor, by Prop. 3 (they
add nothing to J, to ``max c`` or to ``#{c > 0}``), Δ — the released distribution does not depend
on them, as the LP path guarantees.

Randomness
----------
:func:`release` validates, computes Δ = θe^{jβ}, then releases ``ĵ = j + DLap(1/ε₁)`` and
``X̂`` on the public grid of ``plan_laplace(Δ̂, ε₂)`` with the exact sampler of
:mod:`provsql_dp.mechanisms.noise.safe_noise`, drawing from the generator in that order, exactly as
:func:`provsql_dp.mechanisms.recursive.efficient.release` (both call
:func:`~provsql_dp.mechanisms.recursive.release.release_delta_hat` and
:func:`~provsql_dp.mechanisms.recursive.release.release_x`): with the same ``numpy.random.Generator``
state both return the same Δ̂ and the same X̂ up to the LP solver's tolerance in X (plus one grid
step ``γ ≈ 2**−20·Δ̂/ε₂`` if that tolerance moves ``X`` across a grid point).
:func:`release_signed` mirrors ``recursive.release_signed`` (positive part first).

This module charges no budget (the caller does, before calling :func:`release`), and every function
except :func:`release`/:func:`release_signed` returns private quantities: curator only.

Examples
--------
>>> import numpy as np
>>> c = np.array([0.0, 1.0, 3.0, 2.0])
>>> totals_H(c, [0, 1, 2, 2.5, 4])
array([0., 0., 1., 2., 6.])
>>> totals_G(c, 4), totals_G(c, 1), round(totals_G(c, 2), 6)
(6.0, 0.0, 1.090909)
>>> delta(c, theta=1.0, beta=0.5)
(2, 2.718281828459045)
>>> clamped_sum(c, 1.5)
4.0
>>> rel = release(c, epsilon=1.0, rng=np.random.default_rng(0))
>>> rel.mechanism, sorted(rel.params)
('recursive', ['beta', 'eps1', 'eps2', 'mu', 'privacy', 'theta'])
"""

from __future__ import annotations

import math
from types import MappingProxyType
from typing import Any

import numpy as np

from ..._numbers import positive
from ._framework import _CMP_TOL, resolve_params, threshold
from ..noise.sources import scalar_draws
from .release import Release, release_delta_hat, release_x

__all__ = [
    "clamped_sum",
    "delta",
    "is_single_owner",
    "owner_totals",
    "release",
    "release_signed",
    "totals_G",
    "totals_H",
]


# ---------------------------------------------------------------------- validation
def _totals(c) -> np.ndarray:
    """``c`` as a 1-D float64 array of nonnegative finite totals (ValueError otherwise)."""
    arr = np.asarray(c, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"per-participant totals must be a 1-D array, got shape {arr.shape}")
    if arr.size:
        lo, hi = float(arr.min()), float(arr.max())  # NaN propagates into both
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ValueError("per-participant totals must be finite")
        if lo < 0:
            raise ValueError(
                "the recursive mechanism needs nonnegative totals; for a signed SUM release the "
                "positive and negative parts separately (release_signed)"
            )
        if not math.isfinite(2.0 * hi):
            raise ValueError("per-participant totals are too large (2·max overflows)")
    return arr


def _counts(counts, c: np.ndarray) -> np.ndarray | None:
    """Multiplicities of the totals ``c`` (``c[k]`` stands for ``counts[k]`` participants), as
    a float64 array of nonnegative whole numbers, or None (each total one participant)."""
    if counts is None:
        return None
    m = np.asarray(counts, dtype=np.float64)
    if m.shape != c.shape:
        raise ValueError(f"counts must have the shape of the totals {c.shape}, got {m.shape}")
    if m.size and not (np.all(m >= 0) and np.all(m == np.floor(m)) and np.isfinite(m.sum())):
        raise ValueError("counts must be nonnegative whole numbers")
    return m


def _public(b) -> float:
    v = float(b)
    if not (math.isfinite(v) and v >= 0):
        raise ValueError(f"public must be a nonnegative finite total, got {b!r}")
    return v


def _indices(i, n: int) -> np.ndarray:
    try:
        arr = np.asarray(i, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"i must be real numbers in [0, |P|], got {i!r}") from None
    if not np.all((arr >= 0) & (arr <= n)):  # also rejects NaN
        raise ValueError(f"i must lie in [0, |P|] = [0, {n}], got {i!r}")
    return arr


def _out(values: np.ndarray, like: np.ndarray):
    return float(values) if like.ndim == 0 else values


# ---------------------------------------------------------------------- H and G
def totals_H(c, i, *, public: float = 0.0):
    """``H_i`` of eq. 16 for single-owner totals (Proposition 1); ``i`` real, scalar or array.

    ``H_i = public + (sum of the ⌊i⌋ smallest totals) + (i − ⌊i⌋)·(the next one)``.
    ``len(c)`` is ``|P|``: give absent participants as zeros to index ``i`` like the LP path.
    Private.

    >>> totals_H([5.0, 1.0, 2.0], 1.5, public=10.0)
    12.0
    """
    c = _totals(c)
    b = _public(public)
    n = len(c)
    i_arr = _indices(i, n)
    s = np.sort(c)
    prefix = np.concatenate([[0.0], np.cumsum(s)])
    k = np.minimum(np.floor(i_arr).astype(np.int64), n)
    frac = i_arr - k
    nxt = s[np.minimum(k, n - 1)] if n else np.zeros_like(i_arr)
    h = b + prefix[k] + np.where(frac > 0, frac * nxt, 0.0)
    return _out(h, i_arr)


def totals_G(c, i):
    """``G_i`` of eq. 19 (with its factor 2) for single-owner totals (Proposition 2): water-filling.

    ``G_i = 2w`` with ``Σ_p min(1, w/c_p) = i`` (participants with ``c_p = 0`` count 1 at any
    ``w``), ``0`` when ``i`` does not exceed the number of zero totals. Private.

    >>> totals_G([1.0, 1.0], 1.0), totals_G([1.0, 3.0], 2.0)
    (1.0, 6.0)
    """
    c = _totals(c)
    n = len(c)
    i_arr = _indices(i, n)
    s = np.sort(c)
    n0 = int(np.searchsorted(s, 0.0, side="right"))
    pos = s[n0:]
    m = len(pos)
    r = np.atleast_1d(i_arr - n0)
    g = np.zeros(r.shape)
    act = r > 0
    if m and act.any():
        rec = 1.0 / pos
        suffix = np.cumsum(rec[::-1])[::-1]  # R_k = Σ_{l ≥ k} 1/s'_l
        right = np.arange(m) + pos * suffix  # S − n₀ at the right end s'_k of piece k
        k = np.minimum(np.searchsorted(right, r[act], side="left"), m - 1)
        w = (r[act] - k) / suffix[k]
        g[act] = 2.0 * np.minimum(w, pos[k])  # clip rounding above the piece's right end
    return _out(g.reshape(i_arr.shape), i_arr)


# ---------------------------------------------------------------------- Δ (eq. 11)
def _count_below(thr: np.ndarray, x: np.ndarray, est: np.ndarray) -> np.ndarray:
    """``#{t : thr[t] < x}`` for each ``x``, from an integer estimate, corrected exactly.

    ``thr`` is nondecreasing. The result ``k`` is characterised by ``thr[k−1] < x ≤ thr[k]`` (with
    the obvious conventions at the ends); entries violating it move by one step per pass, and
    only the entries that moved are checked again (the estimates are off by at most one or two).
    """
    L = len(thr)
    pad = np.concatenate([[-np.inf], thr, [np.inf]])  # pad[k] = thr[k−1], pad[k+1] = thr[k]
    k = np.clip(est, 0, L).astype(np.int64)
    up = pad[k + 1] < x
    down = pad[k] >= x
    sub = np.flatnonzero(up | down)
    while sub.size:
        k[sub] += up[sub].astype(np.int64) - down[sub]
        ks, xs = k[sub], x[sub]
        up_s = pad[ks + 1] < xs
        down_s = pad[ks] >= xs
        keep = up_s | down_s
        sub = sub[keep]
        up[sub], down[sub] = up_s[keep], down_s[keep]
    return k


def _suffix_above(idx: np.ndarray, weights: np.ndarray | None, L: int) -> np.ndarray:
    """``out[t] = Σ_{e : idx[e] > t} weights[e]`` for ``t = 0 … L−1``."""
    hist = np.bincount(idx, weights=weights, minlength=L + 1).astype(np.float64)
    suf = np.cumsum(hist[::-1])[::-1]
    return suf[1 : L + 1]


def search_range(g_top: float, n_positive: int, theta: float, beta: float):
    """The start of the single-owner Δ search (:func:`delta`, ``buckets.delta_buckets``), from
    ``G_|P| = g_top`` and the number of positive totals: ``(j, None)`` when that decides ``j``
    (``Δ = θe^{jβ}``), else ``(hi, (js, w, gb))`` — the candidates ``j = 1 … hi−1`` (``hi`` is
    feasible), their thresholds ``W_j = τ_j/2`` and the greedy test's, kept monotone.

    >>> search_range(0.5, 1, 1.0, 0.5), search_range(1e9, 1, 1.0, 0.5)
    ((0, None), (1, None))
    >>> hi, (js, w, gb) = search_range(6.0, 4, 1.0, 0.5)
    >>> hi, js.tolist()
    (4, [1.0, 2.0, 3.0])
    """
    if g_top <= theta * (1 + _CMP_TOL) + _CMP_TOL:  # G_|P| ≤ τ_0 = θ
        return 0, None
    # the search range of the LP path: the first j whose threshold reaches G_|P| is feasible
    hi = max(1, math.ceil(math.log(g_top / theta) / beta))
    while hi > 1 and threshold(hi - 1, theta, beta) >= g_top:  # +inf past e^709: never raises
        hi -= 1
    while threshold(hi, theta, beta) < g_top:
        hi += 1
    hi = min(hi, n_positive)  # G_{|P|-j} = 0 once every positive total is out
    if hi <= 1:
        return hi, None
    js = np.arange(1, hi, dtype=np.float64)  # candidates j = 1 … hi−1 (hi is feasible)
    taus = np.exp(js * beta) * theta  # finite: τ_j < G_|P| for j < hi
    w = np.maximum.accumulate(taus / 2)  # thresholds W_j = τ_j/2 (kept monotone)
    gb = np.maximum.accumulate((taus * (1 + _CMP_TOL) + _CMP_TOL) / 2)  # greedy: 2 M[j] ≤ τ_j
    return hi, (js, w, gb)


def first_feasible(hi: int, js, w, n_above, r_above, n_above_g, theta: float,
                   beta: float) -> tuple[int, float]:
    """The end of the Δ search: ``(j, θe^{jβ})`` for the first candidate ``j`` of
    :func:`search_range` whose ``J(W_j) = Σ_{c > W_j} (1 − W_j/c)`` (``n_above − W·r_above``) or
    greedy count ``n_above_g`` is at most ``j``, else ``hi``."""
    j_val = n_above - w * r_above  # J(W_j) = Σ_{c > W_j} (1 − W_j / c)
    ok = (j_val <= js * (1 + _CMP_TOL) + _CMP_TOL) | (n_above_g <= js)
    first = np.flatnonzero(ok)
    j = int(js[first[0]]) if first.size else hi
    return j, threshold(j, theta, beta)


def delta(c, theta: float = 1.0, beta: float = 0.1, *, counts=None) -> tuple[int, float]:
    """Δ of eq. 11 for single-owner totals: ``(j, Δ)`` with ``Δ = e^{jβ}θ`` (Proposition 3).

    ``counts`` (optional) gives the multiplicity of each total: ``c = [1, 5], counts = [3, 1]``
    is the four participants ``[1, 1, 1, 5]`` (every quantity of Proposition 3 is a sum over
    participants, so a histogram of the totals is enough — DuckDB sends a few thousand rows
    instead of one per participant).

    ``j`` is the smallest integer with ``G_{|P|−j} ≤ e^{jβ}θ``, evaluated for every candidate
    ``j`` at once with the same tests and the same relative slack as the LP path
    (``recursive._Run.delta``). ``O(n + j_max)`` where ``j_max = O(ln(2 max c/θ)/β)``. Private.

    >>> delta([0.0, 1.0, 3.0, 2.0], theta=1.0, beta=0.5)
    (2, 2.718281828459045)
    >>> delta([0.2, 0.4], theta=1.0, beta=0.5)
    (0, 1.0)
    >>> delta([1.0, 1.0, 3.0], theta=1.0, beta=0.5) == delta([1.0, 3.0], 1.0, 0.5, counts=[2, 1])
    True
    """
    c = _totals(c)
    m = _counts(counts, c)
    if m is not None:
        keep = m > 0
        c, m = c[keep], m[keep]
    theta = positive("theta", theta)
    beta = positive("beta", beta)
    positive_n = int(np.count_nonzero(c)) if m is None else int(m[c > 0].sum())
    hi, cand = search_range(2.0 * float(c.max()) if c.size else 0.0, positive_n, theta, beta)
    if cand is None:
        return hi, threshold(hi, theta, beta)
    js, w, gb = cand
    L = len(js)
    above = c > w[0]
    big = c[above]  # only these exceed any threshold
    mult = None if m is None else m[above]
    if big.size:
        est = np.log(big * (2.0 / theta))
        est *= 1.0 / beta
        np.ceil(est, out=est)
        est -= 1.0  # ≈ #{j ≥ 1 : τ_j/2 < c}, finite: c > W_1 > 0
        idx = _count_below(w, big, est)
        idx_g = _count_below(gb, big, idx)  # gb ≥ w: differs only within the slack
        n_above = _suffix_above(idx, mult, L)
        r_above = _suffix_above(idx, 1.0 / big if mult is None else mult / big, L)
        n_above_g = _suffix_above(idx_g, mult, L)
    else:
        n_above = r_above = n_above_g = np.zeros(L)
    return first_feasible(hi, js, w, n_above, r_above, n_above_g, theta, beta)


# ---------------------------------------------------------------------- X (eq. 12)
def clamped_sum(c, delta_hat: float, *, public: float = 0.0, counts=None) -> float:
    """X of eq. 12 for single-owner totals: ``public + Σ_p min(c_p, Δ̂)`` (Proposition 4). Private.
    ``counts``: multiplicities of the totals, as for :func:`delta`.

    >>> clamped_sum([0.5, 4.0, 2.0], 1.0, public=3.0)
    5.5
    >>> clamped_sum([0.5, 4.0], 1.0, public=3.0, counts=[1, 2])
    5.5
    """
    c = _totals(c)
    m = _counts(counts, c)
    d = float(delta_hat)
    if not d >= 0:
        raise ValueError(f"delta_hat must be nonnegative, got {delta_hat!r}")
    clamped = np.minimum(c, d)
    return _public(public) + float(clamped.sum() if m is None else clamped @ m)


# ---------------------------------------------------------------------- the mechanism
def release(
    c,
    epsilon: float = 0.5,
    privacy: str | None = "node",
    rng: np.random.Generator | None = None,
    *,
    theta: float = 1.0,
    beta: float | None = None,
    mu: float | None = None,
    eps1: float | None = None,
    eps2: float | None = None,
    public: float = 0.0,
    counts=None,
) -> Release:
    """Release ``public + Σ_p c_p`` with the recursive mechanism, ε-DP, in closed form.

    The same mechanism, parameters and noise draws as
    :func:`provsql_dp.mechanisms.recursive.efficient.release` on the equivalent single-owner K-relation
    (see the module docstring), without any LP: ``O(n)`` after validation.

    Parameters
    ----------
    c : array_like
        1-D nonnegative finite per-participant totals ``c_p = Σ_{t owned by p} q(t)``. Absent
        participants may be given as zeros or left out: the result does not depend on them.
    epsilon, privacy, rng, theta, beta, mu, eps1, eps2
        As for :func:`provsql_dp.mechanisms.recursive.efficient.release` (defaults θ = 1,
        β = min(ε/5, 1), μ by privacy, ε₁ = ε₂ = ε/2). ``rng`` is for tests only; by default
        noise comes from OS entropy.
    public : float
        Total weight of public tuples (annotation ``True``): added to every H and to X, to no G.
    counts : array_like, optional
        Multiplicities of the totals (``c`` a histogram of the per-participant totals): the
        same Δ and the same X, up to floating-point rounding in the sum.

    Returns
    -------
    Release
        ``value`` = X̂, ``delta_hat`` = Δ̂, ``mechanism = "recursive"``. X under-estimates the
        true answer by the truncation bias ``Σ_p max(0, c_p − Δ̂)`` (Lemma 8), never published.

    Examples
    --------
    >>> import numpy as np
    >>> rel = release(np.array([1.0, 2.0, 40.0]), epsilon=1.0, rng=np.random.default_rng(0))
    >>> rel.params["beta"], rel.epsilon
    (0.2, 1.0)
    """
    params = resolve_params(epsilon, privacy, theta=theta, beta=beta, mu=mu, eps1=eps1, eps2=eps2)
    c = _totals(c)
    b = _public(public)
    j, _ = delta(c, params["theta"], params["beta"], counts=counts)
    gen = scalar_draws(rng)  # OS entropy: each draw from its scale's pool of pre-drawn values
    delta_hat = release_delta_hat(j, params, gen)
    x = clamped_sum(c, delta_hat, public=b, counts=counts)
    value = release_x(x, delta_hat, params["eps2"], gen)
    return Release(
        value=float(value),
        epsilon=float(params["eps1"] + params["eps2"]),
        delta_hat=float(delta_hat),
        params=params,
        mechanism="recursive",
    )


def release_signed(
    c_pos,
    c_neg,
    epsilon: float = 0.5,
    privacy: str | None = "node",
    rng: np.random.Generator | None = None,
    *,
    public_pos: float = 0.0,
    public_neg: float = 0.0,
    counts=None,
    **kwargs: Any,
) -> Release:
    """A signed SUM as two nonnegative parts at ε/2 each, like ``recursive.release_signed``.

    ``c_pos[p] = Σ_{t owned by p} max(0, q(t))`` and ``c_neg[p] = Σ_{t owned by p} max(0, −q(t))``
    (per tuple, **not** ``max(0, Σ q)`` per owner: the parts are the positive and negative
    sub-queries of Chen & Zhou §3.2). The positive part is released first, from the same generator.

    >>> import numpy as np
    >>> rel = release_signed([3.0, 0.0], [0.0, 1.0], epsilon=1.0, rng=np.random.default_rng(0))
    >>> rel.mechanism, [p.epsilon for p in rel.parts]
    ('recursive-signed', [0.5, 0.5])
    """
    for key in ("eps1", "eps2"):
        if kwargs.get(key) is not None:
            raise ValueError(
                "release_signed splits epsilon itself; pass eps1/eps2 to release() per part"
            )
    half = float(epsilon) / 2
    gen = scalar_draws(rng)  # OS entropy: each draw from its scale's pool of pre-drawn values
    c_pos, c_neg = _totals(c_pos), _totals(c_neg)
    pos = release(c_pos, half, privacy, gen, public=public_pos, counts=counts, **kwargs)
    neg = release(c_neg, half, privacy, gen, public=public_neg, counts=counts, **kwargs)
    params = dict(pos.params)
    params["split"] = "half the budget to each of the positive and negative parts"
    return Release(
        value=pos.value - neg.value,
        epsilon=pos.epsilon + neg.epsilon,
        delta_hat=max(pos.delta_hat, neg.delta_hat),
        params=MappingProxyType(params),
        mechanism="recursive-signed",
        parts=(pos, neg),
    )


# ---------------------------------------------------------------------- from a K-relation
def is_single_owner(kr) -> bool:
    """True when every tuple of ``kr`` has one monomial with at most one participant.

    (An empty monomial is a public tuple, annotated ``True``.)
    """
    return bool(
        np.all(np.diff(np.asarray(kr.tuple_ptr)) == 1)
        and np.all(np.diff(np.asarray(kr.mono_ptr)) <= 1)
    )


def owner_totals(kr, weights=None) -> tuple[np.ndarray, float]:
    """``(c, public)`` of a single-owner K-relation: per-participant totals and the public total.

    ``c`` is indexed like ``kr.participant_list`` (length ``|P|``, zeros for participants that own
    nothing); ``public`` sums the weights of tuples annotated ``True``. Raises ValueError if some
    tuple is not single-owner or a weight is negative or not finite. Private.

    >>> from provsql_dp.provenance.krelation import KRelation
    >>> kr = KRelation.from_annotations(
    ...     [(1,), (2,), (3,)], [[{("p", 1)}], [{("p", 2)}], [{("p", 1)}]],
    ...     weights=[1.0, 2.0, 4.0], participants=[("p", 3)])
    >>> c, b = owner_totals(kr)
    >>> c.tolist(), b
    ([5.0, 2.0, 0.0], 0.0)
    """
    if not is_single_owner(kr):
        raise ValueError(
            "not a single-owner K-relation: some tuple has several monomials or a monomial with "
            "several participants (use recursive.release)"
        )
    w = np.asarray(kr.weights if weights is None else weights, dtype=np.float64)
    if w.shape != (len(kr.weights),):
        raise ValueError("one weight per tuple is required")
    if not np.all(np.isfinite(w)):
        raise ValueError("weights must be finite")
    if np.any(w < 0):
        raise ValueError("the recursive mechanism needs nonnegative weights q(t)")
    mono_ptr = np.asarray(kr.mono_ptr, dtype=np.int64)
    owned = np.diff(mono_ptr) == 1  # per monomial = per tuple here
    owner = np.asarray(kr.mono_part, dtype=np.int64)  # one entry per owned tuple, in order
    c = np.bincount(owner, weights=w[owned], minlength=len(kr.participant_list))
    return c.astype(np.float64), float(w[~owned].sum())
