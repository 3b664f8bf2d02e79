"""The original, slow and obviously-correct discrete Laplace sampler (reference only).

A line-by-line transcription of Canonne, Kamath & Steinke (2020), Algorithms 1–2, vectorised over
numpy arrays with one uniform integer per coin. :mod:`provsql_dp.mechanisms.noise._dlap` is the fast
sampler every release uses; this module is kept so that tests can compare the two and
``benchmarks/noise.py`` can time the old path beside the new one. Nothing in a release calls it.

>>> import numpy as np
>>> k = reference_discrete_laplace(2, size=1000, rng=np.random.default_rng(0))
>>> k.dtype, abs(float(k.mean())) < 0.5
(dtype('int64'), True)
"""

from __future__ import annotations

import numpy as np

from ._dlap import _INT_LIMIT, MIN_POOL, _as_fraction, resolve_rng

def _bernoulli_exp_ratio(num: np.ndarray, den: int, rng: np.random.Generator) -> np.ndarray:
    """Independent ``Bernoulli(exp(−num[i]/den))`` for integers ``0 ≤ num[i] ≤ den`` (CKS Alg. 1).

    ``K ← 1; while Bernoulli(γ/K): K ← K + 1; return K odd`` has ``P[K odd] = exp(−γ)``.
    ``Bernoulli(num/(den·K))`` is drawn as ``Bernoulli(num/den) ∧ Bernoulli(1/K)`` — two uniform
    integers, no product that could overflow. All active entries share the same K, so each
    round is two vectorised draws over the entries still running.
    """
    num = np.asarray(num, dtype=np.int64)
    out = np.zeros(num.shape[0], dtype=bool)
    active = np.arange(num.shape[0])
    k = 1
    while active.size:
        if den == 1:  # num ∈ {0, 1}: Bernoulli(num/den) needs no randomness
            go = num[active] == 1
        else:
            go = rng.integers(0, den, size=active.size) < num[active]
        if k > 1:
            go &= rng.integers(0, k, size=active.size) == 0
        out[active[~go]] = bool(k % 2)
        active = active[go]
        k += 1
    return out


def _bernoulli_exp_one(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` independent ``Bernoulli(exp(−1))`` (CKS Alg. 1 with γ = 1)."""
    return _bernoulli_exp_ratio(np.ones(n, dtype=np.int64), 1, rng)


def _candidates(t: int, s: int, m: int, rng: np.random.Generator):
    """One round of CKS Alg. 2 on ``m`` candidates: (signed values, accepted mask)."""
    u = rng.integers(0, t, size=m) if t > 1 else np.zeros(m, dtype=np.int64)
    d = _bernoulli_exp_ratio(u, t, rng)  # accept U with probability exp(−U/t)
    v = np.zeros(m, dtype=np.int64)
    active = np.flatnonzero(d)
    while active.size:  # V ~ Geometric: count Bernoulli(exp(−1)) successes before a failure
        more = _bernoulli_exp_one(active.size, rng)
        active = active[more]
        v[active] += 1
    vmax = (_INT_LIMIT - t) // t
    if int(v.max(initial=0)) > vmax:
        raise OverflowError(
            "discrete Laplace draw beyond 2**62 (probability < 2**-700, independent of the data); "
            "nothing was released"
        )
    x = u + t * v  # ~ P[X = x] ∝ exp(−x/t) on the naturals, given d
    y = x // s  # ~ P[Y = y] ∝ exp(−y·s/t)
    sign = rng.integers(0, 2, size=m).astype(bool)
    ok = d & ~(sign & (y == 0))  # reject "−0" so that 0 is not counted twice
    return np.where(sign, -y, y), ok


def reference_discrete_laplace(scale, size=None, rng: np.random.Generator | None = None):
    """Exact discrete Laplace noise: ``P[K = k] = (1 − p)/(1 + p) · p**|k|``, ``p = exp(−1/scale)``.

    Canonne, Kamath & Steinke (2020), Algorithm 2, vectorised: candidates are drawn in pools of
    at least ``MIN_POOL`` and the first accepted ones are kept (candidates are i.i.d., so this
    selection is unbiased). Only integer arithmetic on uniform integers is used.

    Parameters
    ----------
    scale : int, Fraction or float
        λ > 0, taken exactly (a float is converted to its exact binary fraction); its numerator
        must be ≤ 2**53 (so a draw overflows int64 with probability < 2**-700) and its
        denominator ≤ 2**62.
    size : int or tuple of int, optional
        Shape of the result; ``None`` returns one Python ``int``.
    rng : numpy.random.Generator, optional
        Tests only; default :func:`release_rng`.

    Returns
    -------
    int or numpy.ndarray of int64
        Variance ``2p/(1 − p)**2`` (≈ 2λ² for large λ).

    Examples
    --------
    >>> import numpy as np
    >>> from fractions import Fraction
    >>> k = reference_discrete_laplace(Fraction(5, 2), size=100_000, rng=np.random.default_rng(0))
    >>> k.dtype, abs(float(k.mean())) < 0.05
    (dtype('int64'), True)
    >>> isinstance(reference_discrete_laplace(3, rng=np.random.default_rng(0)), int)
    True
    """
    lam = _as_fraction(scale)
    gen = resolve_rng(rng)
    t, s = lam.numerator, lam.denominator  # λ = t/s
    shape = () if size is None else ((size,) if np.ndim(size) == 0 else tuple(size))
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    out = np.empty(n, dtype=np.int64)
    filled = 0
    while filled < n:
        need = n - filled
        pool = max(MIN_POOL, need + need // 2 + need // 4)  # acceptance ≥ 0.6 once λ ≳ 1
        values, ok = _candidates(t, s, pool, gen)
        accepted = values[ok]
        take = min(need, accepted.size)
        out[filled:filled + take] = accepted[:take]
        filled += take
    if size is None:
        return int(out[0])
    return out.reshape(shape)
