"""The exact discrete Laplace sampler and the per-release generator behind
:mod:`provsql_dp.mechanisms.noise.safe_noise` (Canonne, Kamath & Steinke 2020, Algorithms 1–2: integer
coins only, vectorised over numpy arrays; see that module for the design and the privacy
statement).

>>> import numpy as np
>>> int(discrete_laplace(1, rng=np.random.default_rng(0))) in range(-50, 51)
True
"""

from __future__ import annotations

import math
import os
import secrets
import threading
from collections import OrderedDict
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
# Exact samplers (Canonne, Kamath & Steinke 2020), with one uniform integer per factorial chain
# --------------------------------------------------------------------------------------------

#: Alg. 1's coins ``Bernoulli(1/k)``, k = 1, 2, …, are drawn all at once: for ``u`` uniform on
#: ``[0, 20!)``, ``L = min{k : u ≥ 20!/k!}`` satisfies ``P[L > k] = 1/k!`` exactly for k ≤ 20
#: (k! divides 20!), which is the law of the first failing coin. 20! < 2**63.
_CHAIN = 20
_CHAIN_FACT = math.factorial(_CHAIN)
#: 20!/k! for k = 20, 19, …, 1 (ascending, for searchsorted).
_CHAIN_THRESHOLDS = np.array([_CHAIN_FACT // math.factorial(k) for k in range(_CHAIN, 0, -1)],
                             dtype=np.int64)


def _first_failing_inverse_factorial_coin(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` i.i.d. copies of ``L``, the index of the first failure among independent coins
    ``Bernoulli(1/k)``, k = 1, 2, … (so ``P[L > k] = 1/k!``, L ≥ 2), from one integer each.

    The coins with ``u ≥ 20!/k!`` have failed by k; ``searchsorted`` counts the thresholds above
    ``u``, i.e. the coins that succeeded. With probability ``1/20!`` per entry all twenty succeed
    and the chain continues coin by coin (exactly as CKS Alg. 1).
    """
    return _chain_length(rng.integers(0, _CHAIN_FACT, size=n, dtype=np.int64), rng)


def _continue_chains(at: np.ndarray, rng: np.random.Generator) -> list[int]:
    """L for the entries whose twenty first coins all succeeded (``u = 0``, probability
    ``1/20!`` each), in index order: coin by coin from ``Bernoulli(1/21)`` on."""
    out = []
    for _ in at:
        k = _CHAIN + 1
        while int(rng.integers(0, k)) == 0:
            k += 1
        out.append(k)
    return out


def _chain_length(u: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """L from the uniform integers ``u`` on ``[0, 20!)`` (continuing the chain when ``u = 0``)."""
    done = _CHAIN_THRESHOLDS.searchsorted(u, side="right")  # coins that succeeded, ≤ 20
    first = _CHAIN + 1 - done
    if not done.all():  # u = 0: probability 4·10**-19 per entry
        at = (done == 0).nonzero()[0]
        first[at] = _continue_chains(at, rng)
    return first


def _bernoulli_exp_ratio(num: np.ndarray, den: int, rng: np.random.Generator) -> np.ndarray:
    """Independent ``Bernoulli(exp(−num[i]/den))`` for integers ``0 ≤ num[i] ≤ den`` (CKS Alg. 1).

    Alg. 1 stops at the first K whose coin ``Bernoulli(γ/K) = Bernoulli(γ) ∧ Bernoulli(1/K)``
    fails and returns ``K odd`` (``P[K odd] = exp(−γ)``). The two coin sequences are independent,
    so ``K = min(L, M)`` with L the first failing ``Bernoulli(1/k)`` (one integer, see
    :func:`_first_failing_inverse_factorial_coin`) and M the first failing ``Bernoulli(num/den)``
    (one uniform integer per coin, drawn only while ``k < L``).
    """
    num = np.asarray(num, dtype=np.int64)
    u = rng.integers(0, _CHAIN_FACT, size=num.shape[0], dtype=np.int64)  # the 1/k chain
    if den == 1:  # num ∈ {0, 1}: Bernoulli(num/den) needs no randomness
        coin = num == 1
    else:
        coin = rng.integers(0, den, size=num.shape[0]) < num
    out = ~coin  # K = 1 (odd) where the first coin fails; K = 2 (even) if it succeeds and L = 2
    running = (coin & (u < _CHAIN_FACT // 2)).nonzero()[0]  # L ≥ 3: still running at k = 2
    if running.size == 0:
        return out
    stop = _chain_length(u[running], rng)  # L, becomes K
    if den > 1:  # (den = 1: every running coin num/den is 1, so M = ∞ and K = L)
        sub = num[running]
        active = np.arange(running.size)
        k = 2
        while active.size:  # invariant: every active entry has k < L and no failed coin yet
            coin = rng.integers(0, den, size=active.size) < sub[active]
            stop[active[~coin]] = k  # M = k < L
            active = active[coin]
            k += 1
            active = active[stop[active] > k]  # L = k: K = L, already recorded
    out[running] = (stop & 1).astype(bool)
    return out


#: up to this many coins, :func:`_bernoulli_exp_one` reads L's parity by one ``searchsorted``
#: (fewer array operations); above it by three comparisons (a binary search per entry is slower
#: on large arrays: 1.4× at 2048 coins, 2× at 10^4; the two are even near 800)
_SEARCH_MAX = 768
#: ``_ODD_DONE[d]``: ``L = 21 − d`` odd, for ``d`` = the coins that succeeded (d = 0: L > 20,
#: overwritten by the chain's continuation)
_ODD_DONE = (_CHAIN + 1 - np.arange(_CHAIN + 1)) % 2 == 1


def _bernoulli_exp_one(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` independent ``Bernoulli(exp(−1))``: CKS Alg. 1 with γ = 1 is ``L odd`` (one integer).

    Same integer and thresholds as :func:`_first_failing_inverse_factorial_coin`, reading only
    the parity: L = 2 (``u ≥ 20!/2``), 3 (``20!/6 ≤ u < 20!/2``), 4 (``20!/24 ≤ u < 20!/6``) are
    decided by comparisons, the rest (probability 1/24) by the full chain. Up to
    :data:`_SEARCH_MAX` entries (the geometric's rounds), one ``searchsorted`` over the twenty
    thresholds and a table lookup give the same parities in fewer array operations.
    """
    u = rng.integers(0, _CHAIN_FACT, size=n, dtype=np.int64)
    if n <= _SEARCH_MAX:
        done = _CHAIN_THRESHOLDS.searchsorted(u, side="right")  # L = 21 − done
        odd = _ODD_DONE[done]
        if not done.all():  # u = 0: probability 4·10**-19 per entry
            at = (done == 0).nonzero()[0]
            odd[at] = [k % 2 == 1 for k in _continue_chains(at, rng)]
        return odd
    odd = (u < _CHAIN_FACT // 2) & (u >= _CHAIN_FACT // 6)  # L = 3
    rest = (u < _CHAIN_FACT // 24).nonzero()[0]  # L ≥ 5
    if rest.size:
        odd[rest] = (_chain_length(u[rest], rng) & 1).astype(bool)
    return odd


def _geometric_exp_one(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` i.i.d. V with ``P[V ≥ v] = exp(−v)``: ``Bernoulli(exp(−1))`` successes before a failure.

    Round r draws one coin for each entry whose r first coins all succeeded (in index order);
    V counts the rounds an entry survives (one ``bincount`` at the end, not an update per round).
    """
    active = _bernoulli_exp_one(n, rng).nonzero()[0]
    survived = [active]
    while active.size:
        active = active[_bernoulli_exp_one(active.size, rng)]
        survived.append(active)
    if len(survived) == 1:  # no coin succeeded
        return np.zeros(n, dtype=np.int64)
    return np.bincount(np.concatenate(survived), minlength=n).astype(np.int64, copy=False)


def _as_fraction(scale) -> Fraction:
    if isinstance(scale, bool):
        raise TypeError("scale must be a number")
    if type(scale) is Fraction:  # already exact (a plan's noise units): no copy
        frac = scale
    elif isinstance(scale, (int, Rational)):
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


def _acceptance(t: int, s: int) -> float:
    """Expected fraction of accepted candidates (pool sizing only; the law does not use it)."""
    d = 1.0 if t == 1 else -math.expm1(-1.0) / (t * -math.expm1(-1.0 / t))
    return d * (1.0 - 0.5 * -math.expm1(-s / t))


def _candidates(t: int, s: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """One round of CKS Alg. 2 on ``m`` i.i.d. candidates; returns the accepted values in order.

    ``w`` uniform on ``[0, 2t)`` gives the sign (``w ≥ t``) and ``U = w mod t``, independent and
    uniform. U is kept with probability ``exp(−U/t)``; then ``X = U + t·V`` has
    ``P[X = x] ∝ exp(−x/t)``, ``Y = ⌊X/s⌋`` has ``P[Y = y] ∝ exp(−y·s/t)``, and "−0" is rejected
    so that 0 is not counted twice.
    """
    w = rng.integers(0, 2 * t, size=m, dtype=np.int64)
    neg = w >= t
    u = w - t * neg
    keep = np.flatnonzero(_bernoulli_exp_ratio(u, t, rng))
    v = _geometric_exp_one(keep.size, rng)
    vmax = (_INT_LIMIT - t) // t
    if int(v.max(initial=0)) > vmax:
        raise OverflowError(
            "discrete Laplace draw beyond 2**62 (probability < 2**-700, independent of the data); "
            "nothing was released"
        )
    x = u[keep] + t * v
    y = x // s if s > 1 else x
    neg = neg[keep]
    ok = ~(neg & (y == 0))
    return np.where(neg, -y, y)[ok]


def _draw(t: int, s: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` i.i.d. ``DLap(t/s)`` integers, from pools of at least ``MIN_POOL`` candidates.

    Candidates are i.i.d. and accepted independently, so keeping the first accepted ones is
    unbiased. Pools are sized for the expected acceptance plus a margin; a short pool is topped up.
    """
    out = np.empty(n, dtype=np.int64)
    rate = _acceptance(t, s)
    filled = 0
    while filled < n:
        need = n - filled
        pool = max(MIN_POOL, math.ceil(need / rate + 6 * math.sqrt(need) + 16))
        accepted = _candidates(t, s, pool, rng)
        take = min(need, accepted.size)
        out[filled:filled + take] = accepted[:take]
        filled += take
    return out


# --------------------------------------------------------------------------------------------
# Pre-drawn noise for small OS-entropy draws (scalar releases)
# --------------------------------------------------------------------------------------------

#: Draws of at most this many values with ``rng=None`` come from a per-scale pool of i.i.d.
#: draws instead of a fresh generator and a ``MIN_POOL`` candidate pool each.
POOL_TAKE_MAX = 1024
#: Largest pool refill (one fresh :func:`release_rng` each). A scale's first fill is
#: ``_FIRST_FILL`` values (what one ``MIN_POOL`` candidate round gives anyway, so a one-off,
#: data-dependent scale costs no more than a direct draw); each refill is 4× the previous.
POOL_SIZE = 16384
_FIRST_FILL = 512
#: scales kept (least recently used dropped): at most 16 MiB of int64, a pool growing past
#: ``_FIRST_FILL`` values only when refilled. The recursive mechanism's X is drawn at a scale
#: set by the released Δ̂ (a lattice point): ~90 scales over 1000 repeats of one unbounded SUM,
#: which 32 pools kept refilling (530 fills) and 128 keep (84, each scale's first)
_POOLS_MAX = 128


class _NoisePool:
    """Pre-drawn i.i.d. ``DLap(t/s)`` values; each is handed out once, then zeroed."""

    __slots__ = ("t", "s", "buf", "pos", "fill")

    def __init__(self, t: int, s: int):
        self.t, self.s = t, s
        self.buf = np.empty(0, dtype=np.int64)
        self.pos = 0
        self.fill = _FIRST_FILL

    def take(self, n: int) -> np.ndarray:
        if self.pos + n > self.buf.size:  # the unused rest is dropped (i.i.d.: no bias)
            self.buf = _draw(self.t, self.s, max(n, self.fill), release_rng())
            self.pos = 0
            self.fill = min(POOL_SIZE, 4 * self.fill)
        out = self.buf[self.pos:self.pos + n].copy()
        self.buf[self.pos:self.pos + n] = 0
        self.pos += n
        return out


_pools: OrderedDict = OrderedDict()
_pools_lock = threading.Lock()


def _forget_pools() -> None:
    """Drop every pre-drawn value (a forked child must never reuse its parent's noise)."""
    global _pools_lock
    _pools.clear()
    _pools_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pools)


def _pooled(t: int, s: int, n: int) -> np.ndarray:
    with _pools_lock:
        pool = _pools.get((t, s))
        if pool is None:
            pool = _pools[(t, s)] = _NoisePool(t, s)
            if len(_pools) > _POOLS_MAX:
                _pools.popitem(last=False)
        else:
            _pools.move_to_end((t, s))
        return pool.take(n)


def discrete_laplace(scale, size=None, rng: np.random.Generator | None = None):
    """Exact discrete Laplace noise: ``P[K = k] = (1 − p)/(1 + p) · p**|k|``, ``p = exp(−1/scale)``.

    Canonne, Kamath & Steinke (2020), Algorithm 2, vectorised: candidates are drawn in pools of
    at least ``MIN_POOL`` and the first accepted ones are kept (candidates are i.i.d., so this
    selection is unbiased). Only integer arithmetic on uniform integers is used; Algorithm 1's
    ``Bernoulli(1/k)`` chain costs one integer (:func:`_first_failing_inverse_factorial_coin`).

    Parameters
    ----------
    scale : int, Fraction or float
        λ > 0, taken exactly (a float is converted to its exact binary fraction); its numerator
        must be ≤ 2**53 (so a draw overflows int64 with probability < 2**-700) and its
        denominator ≤ 2**62.
    size : int or tuple of int, optional
        Shape of the result; ``None`` returns one Python ``int``.
    rng : numpy.random.Generator, optional
        Tests only. Default: a fresh :func:`release_rng`, or for at most ``POOL_TAKE_MAX``
        values the per-scale pool of pre-drawn i.i.d. values (each handed out once).

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
    t, s = lam.numerator, lam.denominator  # λ = t/s
    shape = () if size is None else ((size,) if np.ndim(size) == 0 else tuple(size))
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if rng is None and n <= POOL_TAKE_MAX:
        out = _pooled(t, s, n)
    else:
        out = _draw(t, s, n, resolve_rng(rng))
    if size is None:
        return int(out[0])
    return out.reshape(shape)
