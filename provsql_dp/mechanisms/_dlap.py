"""The exact discrete Laplace sampler and the per-release generator behind
:mod:`provsql_dp.mechanisms.safe_noise` (Canonne, Kamath & Steinke 2020, Algorithms 1–2: integer
coins only, vectorised over numpy arrays; see that module for the design and the privacy
statement).

>>> import numpy as np
>>> int(discrete_laplace(1, rng=np.random.default_rng(0))) in range(-50, 51)
True
"""

from __future__ import annotations

import math
import secrets
from fractions import Fraction
from numbers import Rational

import numpy as np

GRID_BITS = 20
#: Finite values are clamped to ±MAX_ABS_VALUE (2**60 ≈ 1.15e18) before rounding.
MAX_ABS_VALUE = 2.0**60
#: Smallest grid exponent: MAX_ABS_VALUE / 2**MIN_GRID_EXPONENT = 2**104, the range of the exact
#: two-limb integer arithmetic used to add the noise.
MIN_GRID_EXPONENT = -44
#: Admissible noise scales Δ/ε (below MIN_SCALE the grid floor would inflate the noise).
MIN_SCALE = 2.0**-24
MAX_SCALE = 2.0**64
#: Smallest admissible ε.
MIN_EPSILON = 2.0**-40
#: Largest noise scale in grid units (λ); keeps every intermediate inside int64.
MAX_NOISE_UNITS = 2**52
#: Every draw runs over at least this many i.i.d. candidates (blurs the timing channel).
MIN_POOL = 1024

_LIMB_BITS = 52
_LIMB = 2**_LIMB_BITS
_INT_LIMIT = 2**62  # |noise| and every intermediate of the sampler stay below this
_DYADIC_BITS = 53  # numerator bound when λ is rounded up to a dyadic rational


# --------------------------------------------------------------------------------------------
# Randomness
# --------------------------------------------------------------------------------------------


def release_rng() -> np.random.Generator:
    """A fresh generator for one release: Philox keyed by 32 bytes of OS entropy.

    16 bytes form the 128-bit key, 16 the start of the counter. No state is shared between
    calls, so releases are independent.

    >>> a, b = release_rng(), release_rng()
    >>> int(a.integers(0, 2**62)) != int(b.integers(0, 2**62))   # fails with prob. 2**-62
    True
    """
    seed = secrets.token_bytes(32)
    key = int.from_bytes(seed[:16], "little")
    counter = int.from_bytes(seed[16:], "little")
    return np.random.Generator(np.random.Philox(key=key, counter=counter))


def resolve_rng(rng: np.random.Generator | None) -> np.random.Generator:
    """``rng`` if given (tests only), else a fresh :func:`release_rng`."""
    if rng is None:
        return release_rng()
    if not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a numpy.random.Generator (tests only) or None for OS entropy")
    return rng


# --------------------------------------------------------------------------------------------
# Exact samplers (Canonne, Kamath & Steinke 2020)
# --------------------------------------------------------------------------------------------


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


def _as_fraction(scale) -> Fraction:
    if isinstance(scale, bool):
        raise TypeError("scale must be a number")
    if isinstance(scale, (int, Rational)):
        frac = Fraction(scale)
    elif isinstance(scale, (float, np.floating)):
        if not math.isfinite(scale):
            raise ValueError(f"discrete Laplace scale must be finite, got {scale!r}")
        frac = Fraction(float(scale))
    else:
        raise TypeError(f"scale must be an int, float or Fraction, got {type(scale).__name__}")
    if frac <= 0:
        raise ValueError(f"discrete Laplace scale must be positive, got {scale!r}")
    if frac.numerator > 2**_DYADIC_BITS or frac.denominator > _INT_LIMIT:
        raise ValueError(
            f"scale {frac} is not representable exactly in 64-bit arithmetic: numerator must be "
            f"≤ 2**53 and denominator ≤ 2**62 (plan_laplace rounds scales up to such fractions)"
        )
    return frac


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


def discrete_laplace(scale, size=None, rng: np.random.Generator | None = None):
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
    >>> k = discrete_laplace(Fraction(5, 2), size=100_000, rng=np.random.default_rng(0))
    >>> k.dtype, abs(float(k.mean())) < 0.05
    (dtype('int64'), True)
    >>> isinstance(discrete_laplace(3, rng=np.random.default_rng(0)), int)
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
