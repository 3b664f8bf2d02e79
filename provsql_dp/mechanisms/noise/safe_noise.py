r"""Floating-point-safe Laplace releases: exact discrete Laplace noise on a public power-of-two grid.

Why
---
Textbook Laplace noise in floating point, ``x + scale * log(u)``, is not differentially private:
the set of doubles ``x + noise`` can reach depends on ``x``, so the low-order bits of a release
can reveal the true value exactly (Mironov 2012). Mironov's *snapping mechanism* fixes it at a
cost in ε that depends on a clamp bound and needs a correctly-rounded logarithm. This module takes
the other route the literature offers: the noise is an **exact discrete Laplace** variable, drawn
with integer arithmetic only, added to the value rounded to a **grid fixed from public quantities
alone**. Every released number is then a deterministic function of an integer whose distribution
we know exactly, and the privacy analysis is exact.

The mechanism
-------------
For public ``sensitivity`` Δ, budget ε, and (for vector releases) a public bound ``changed`` = r
on the number of coordinates that differ between neighbours, :func:`plan_laplace` fixes

* a grid ``γ = 2**k`` (the *grid rule* below), a function of (Δ, ε, r, ``integer``) only;
* the index sensitivity ``c = ⌈Δ/γ⌉ + r − 1`` (``c = ⌊Δ⌋`` for integer data on the unit grid);
* the noise scale in grid units ``λ = t/s ≥ c/ε``, an exact rational (rounded *up* to a dyadic
  ``t/2**j`` with ``t < 2**53`` when ``c/ε`` has no such small representation).

and a release of ``x`` is ::

    m = ⌊x/γ⌋   (exact: γ is a power of two)        K ~ DLap(λ),  P[K = k] ∝ exp(−|k|/λ)
    release = float(γ · (m + K))                      (one correct rounding of an exact integer)

**Grid rule.** ``γ = 2**k`` with ``k`` the largest integer such that
``2**k ≤ min(Δ/r, Δ/ε) · 2**−GRID_BITS`` (``GRID_BITS = 20``), raised if needed to
``k ≥ MIN_GRID_EXPONENT`` (so ``MAX_ABS_VALUE/γ ≤ 2**104``, see *limits*) and to
``2**k ≥ (Δ/ε) · 2**−50`` (so the noise fits in 64-bit integers), and to ``k ≥ 0`` when
``integer=True`` (values are integers, so the unit grid loses nothing). The grid never looks at
the value: it is ``2**−20`` of the noise scale or of the per-coordinate sensitivity, whichever is
smaller, so it is invisible next to the noise and the rounding cost below is ≤ 2**−20.

Privacy cost statement
----------------------
Let ``x, x'`` be the (vector) values on neighbouring databases, ``‖x − x'‖₁ ≤ Δ`` with at most r
coordinates different. For each coordinate ``⌊a⌋ − ⌊b⌋ < a − b + 1``, so the grid indices satisfy
``‖m − m'‖₁ ≤ ⌈Δ/γ⌉ + r − 1 = c`` (for integer data on the unit grid, ``m = x`` and
``‖m − m'‖₁ ≤ ⌊Δ⌋``). Adding i.i.d. ``DLap(λ)`` noise to ``m`` gives a privacy loss of at most
``‖m − m'‖₁/λ ≤ c/λ =: ε_spent ≤ ε``, and the released doubles are post-processing of ``m + K``.
So the release is **ε-differentially private with the ε the caller charges — rounding costs no
privacy**. Its price is accuracy only: the noise scale is ``γλ = inflation · Δ/ε`` with
``inflation ≤ (1 + rγ/Δ)(1 + 2**−50)`` (≤ 1 + 2**−20 + 2**−50 under the default rule whenever
no floor binds; :attr:`LaplacePlan.inflation` reports the exact figure), and flooring adds a bias
in ``(−γ, 0]`` (≤ 2**−20 of the noise scale). ``plan.epsilon_spent`` is the exact rational c/λ.

Three residual caveats, stated rather than hidden:

* The guarantee is about the float64 value the caller passes. If the caller computes it in
  floating point (e.g. a sum in data-dependent order), its sensitivity must be bounded for the
  computed value, not the mathematical one (Casacuberta et al. 2022); callers clamp first.
* Noise is held in int64. A draw whose magnitude would reach ``2**62`` grid units raises
  :class:`OverflowError` instead; this has probability below ``2**−700`` per sample, does not
  depend on the data, and formally turns pure ε-DP into (ε, n·2**−700)-DP.
* Timing (Jin et al. 2022): the sampler's loops run vectorised over a pool of at least
  ``MIN_POOL`` i.i.d. candidates, so the number of iterations is a maximum over the pool and
  depends on the released sample only when that sample happens to be the pool's extreme. A
  scalar (or ≤ ``POOL_TAKE_MAX``-value) release with OS entropy takes pre-drawn values from a
  per-scale pool of up to ``POOL_SIZE`` i.i.d. draws (see *Randomness*), so it costs a few
  microseconds, and the release that empties a pool also pays for a refill whose duration is
  a function of the whole new pool. This blurs the timing channel of geometric samplers; it does
  not make the sampler constant-time.

Sampler
-------
:func:`discrete_laplace` implements Canonne, Kamath & Steinke (2020), Algorithm 2, with their
Algorithm 1 for ``Bernoulli(exp(−U/t))`` and ``Bernoulli(exp(−1))``. Every coin is a uniform
integer from :meth:`numpy.random.Generator.integers` (unbiased: Lemire's rejection method) compared
with an integer, e.g. ``Bernoulli(U/(t·K)) = Bernoulli(U/t) ∧ Bernoulli(1/K)``; the chain of
coins ``Bernoulli(1/k)``, k = 1, 2, …, is read off one uniform integer on ``[0, 20!)`` (its first
failure L has ``P[L > k] = 1/k!`` exactly), and the sign and ``U`` come from one integer on
``[0, 2t)``. No floating-point number is involved, so the pmf is exactly
``(1 − p)/(1 + p) · p**|k|`` with ``p = exp(−1/λ)``. All loops are over numpy arrays; their length
is a bounded rejection count, not the sample size. The original transcription of the paper is
kept as ``_dlap_reference`` (tests compare the two; ``benchmarks/noise.py`` times them).

Randomness
----------
With ``rng=None`` every release draws from :func:`release_rng`: a fresh
:class:`numpy.random.Philox` generator keyed by 32 bytes of OS entropy (:func:`secrets.token_bytes`
: 16 for the 128-bit key, 16 for the counter's start). Philox is counter-based (Salmon et al.
2011): its whole state is (key, counter), it passes BigCrush, and keying a fresh one costs
microseconds, so releases share no generator state and one release's noise says nothing about
another's. (Philox is a strong statistical generator, not a certified CSPRNG; an analyst would have
to recover a 128-bit key from noisy, rounded, rejection-filtered outputs of a single release.)
Draws of at most ``POOL_TAKE_MAX`` values with ``rng=None`` (scalar releases) are taken from a
per-scale pool of values drawn at once from one fresh :func:`release_rng` (512 on a scale's first
use, then 4× more per refill up to ``POOL_SIZE``): the values
are i.i.d., each is handed to exactly one release and then zeroed, so releases still get
independent noise; a forked child drops every pool (``os.register_at_fork``) and never reuses its
parent's values. A ``numpy.random.Generator`` can be passed as ``rng=`` — from Python, for tests
only (it bypasses the pools); nothing in SQL reaches it.

Data-dependent scales
---------------------
A scale that is itself a released value — the recursive mechanism's Δ̂, released under ε₁ — is
public once released, so ``plan_laplace(Δ̂, ε₂)`` (grid included) is post-processing of that
release. Build Δ̂ from the *released* number only (``Δ̂ = exp(release)``, not ``Δ·exp(noise)``,
whose float product would leak Δ's low bits), and pass ``at_least_min_scale(Δ̂, ε₂)``: raising a
sensitivity only adds noise, so it is always safe, and it keeps the plan inside the limits.

Limits
------
``plan_laplace`` raises :class:`ValueError`, before anything is charged, unless Δ and ε are
positive and finite, ``ε ≥ MIN_EPSILON``, ``MIN_SCALE ≤ Δ/ε ≤ MAX_SCALE`` and the noise fits
(``λ ≤ 2**52``). Releases raise :class:`ValueError` on NaN or ±inf (callers clamp beforehand) and
clamp finite values to ``±MAX_ABS_VALUE`` (= 2**60 ≈ 1.15e18; clamping is 1-Lipschitz, so it
costs no privacy). Values up to 1e15 are released exactly as described, on any admissible grid.

Examples
--------
>>> import numpy as np
>>> from provsql_dp.mechanisms.noise.safe_noise import plan_laplace, laplace_release, on_grid
>>> plan = plan_laplace(sensitivity=1.0, epsilon=0.5)     # check before charging the ledger
>>> plan.grid == 2.0 ** -20                                # min(Δ, Δ/ε) · 2**-20
True
>>> plan.index_sensitivity, plan.epsilon_spent <= 0.5, plan.inflation < 1 + 2 ** -19
(1048576, True, True)
>>> y = plan.release(3.14159, rng=np.random.default_rng(1))   # rng: tests only
>>> on_grid(y, plan.grid)
True
>>> count = laplace_release(42, sensitivity=1, epsilon=1.0, integer=True)   # OS entropy
>>> float(count).is_integer()
True

References
----------
.. [1] I. Mironov, "On significance of the least significant bits for differential privacy",
   CCS 2012.
.. [2] C. Canonne, G. Kamath, T. Steinke, "The discrete Gaussian for differential privacy",
   NeurIPS 2020 (arXiv:2004.00010), Algorithms 1 and 2.
.. [3] J. Salmon, M. Moraes, R. Dror, D. Shaw, "Parallel random numbers: as easy as 1, 2, 3",
   SC 2011 (Philox).
.. [4] J. Jin, E. McMurtry, B. Rubinstein, O. Ohrimenko, "Are we there yet? Timing and
   floating-point attacks on differential privacy systems", IEEE S&P 2022.
.. [5] S. Casacuberta, M. Shoemate, S. Vadhan, C. Wagaman, "Widespread underestimation of
   sensitivity in differentially private libraries and how to fix it", CCS 2022.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

__all__ = [
    "GRID_BITS",
    "MAX_ABS_VALUE",
    "MAX_NOISE_UNITS",
    "MAX_SCALE",
    "MIN_EPSILON",
    "MIN_GRID_EXPONENT",
    "MIN_POOL",
    "MIN_SCALE",
    "POOL_SIZE",
    "POOL_TAKE_MAX",
    "LaplacePlan",
    "at_least_min_scale",
    "discrete_laplace",
    "grid_for",
    "laplace_release",
    "laplace_release_array",
    "on_grid",
    "plan_laplace",
    "release_on_grid",
    "release_one_on_grid",
    "release_rng",
    "resolve_rng",
]

#: The grid is 2**-GRID_BITS of min(noise scale, per-coordinate sensitivity), rounded down to a
#: power of two: the rounding inflates the noise scale by at most 2**-GRID_BITS.
from ._dlap import (  # noqa: E402  (the sampler, re-exported)
    _DYADIC_BITS,
    _INT_LIMIT,
    _LIMB,
    _LIMB_BITS,
    GRID_BITS,
    MAX_ABS_VALUE,
    MAX_NOISE_UNITS,
    MAX_SCALE,
    MIN_EPSILON,
    MIN_GRID_EXPONENT,
    MIN_POOL,
    MIN_SCALE,
    POOL_SIZE,
    POOL_TAKE_MAX,
    discrete_laplace,
    release_rng,
    resolve_rng,
)

# --------------------------------------------------------------------------------------------
# Plans and releases
# --------------------------------------------------------------------------------------------


def _pow2_floor_exponent(v: float) -> int:
    """Largest k with 2**k ≤ v (v > 0 finite), exactly."""
    _, exp = math.frexp(v)  # v = mant·2**exp, mant ∈ [0.5, 1)
    return exp - 1


def _pow2_ceil_exponent(v: float) -> int:
    """Smallest k with 2**k ≥ v (v > 0 finite), exactly."""
    mant, exp = math.frexp(v)
    return exp - 1 if mant == 0.5 else exp


def _dyadic_ceiling(lam: Fraction) -> Fraction:
    """``lam`` itself if its terms are small, else the least ``t/2**j ≥ lam`` with ``t < 2**53``."""
    if lam.numerator <= 2**_DYADIC_BITS and lam.denominator <= _INT_LIMIT:
        return lam
    e = lam.numerator.bit_length() - lam.denominator.bit_length()  # lam ∈ [2**(e−1), 2**(e+1))
    j = min(max(0, _DYADIC_BITS - 2 - e), 61)  # denominator ≤ 2**61; a tiny lam rounds up further
    t = -((-lam.numerator << j) // lam.denominator)  # ⌈lam·2**j⌉
    return Fraction(t, 1 << j)


def _check_positive(name: str, v) -> float:
    if isinstance(v, bool):
        raise TypeError(f"{name} must be a number")
    v = float(v)
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be positive and finite, got {v!r}")
    return v


@dataclass(frozen=True)
class LaplacePlan:
    """Everything a release needs, fixed from public parameters before any data is touched.

    Build with :func:`plan_laplace` (which validates); then :meth:`release` /
    :meth:`release_array`. See the module docstring for the privacy statement.

    Attributes
    ----------
    sensitivity, epsilon : float
        Δ (ℓ₁ over at most ``changed`` coordinates) and the ε charged.
    integer : bool
        The values are integers (counts); then the grid is at least 1.
    changed : int
        Public bound r on the number of coordinates neighbours can change.
    grid_exponent : int
        The grid is ``γ = 2**grid_exponent``.
    index_sensitivity : int
        ``c``: ℓ₁ sensitivity of the grid indices ``⌊x/γ⌋``.
    noise_units : Fraction
        ``λ ≥ c/ε``: the discrete Laplace scale in grid units.
    """

    sensitivity: float
    epsilon: float
    integer: bool
    changed: int
    grid_exponent: int
    index_sensitivity: int
    noise_units: Fraction

    @property
    def grid(self) -> float:
        """γ, a power of two."""
        return math.ldexp(1.0, self.grid_exponent)

    @property
    def epsilon_spent(self) -> Fraction:
        """The exact privacy loss bound ``c/λ`` (≤ ``epsilon`` as a rational)."""
        return Fraction(self.index_sensitivity) / self.noise_units

    @property
    def noise_scale(self) -> float:
        """The Laplace scale actually used, in value units: ``γ·λ``."""
        return math.ldexp(float(self.noise_units), self.grid_exponent)

    @property
    def inflation(self) -> float:
        """``noise_scale / (Δ/ε)``: the accuracy price of exactness.

        ≥ 1, except for integer data on the unit grid with a fractional Δ, whose sensitivity
        is really ``⌊Δ⌋`` (then the ratio is ``⌊Δ⌋/Δ`` up to the dyadic rounding).
        """
        exact = Fraction(self.noise_units) * Fraction(2) ** self.grid_exponent
        return float(exact * Fraction(self.epsilon) / Fraction(self.sensitivity))

    @property
    def noise_variance(self) -> float:
        """Exact variance of the released noise: ``γ²·2p/(1 − p)²``, ``p = exp(−1/λ)``."""
        p = math.exp(-1.0 / float(self.noise_units))
        return math.ldexp(2.0 * p / (-math.expm1(-1.0 / float(self.noise_units))) ** 2,
                          2 * self.grid_exponent)

    def release_array(self, values, rng: np.random.Generator | None = None) -> np.ndarray:
        """Release every coordinate of ``values`` (one mechanism; ``changed`` bounds them all).

        Returns float64 values on the grid: ``γ·(⌊x/γ⌋ + K)`` correctly rounded, K i.i.d.
        ``DLap(λ)``. Raises ValueError on NaN/inf; clamps to ``±MAX_ABS_VALUE``.
        """
        return release_on_grid(values, self.grid_exponent, rng,
                               lambda n, g: discrete_laplace(self.noise_units, size=n, rng=g))

    def release(self, value, rng: np.random.Generator | None = None) -> float:
        """Release one value: ``γ·(⌊value/γ⌋ + K)`` as a float (see :meth:`release_array`).

        The same arithmetic as :meth:`release_array` on Python integers (exact), without the
        array set-up: ``float(m + K)`` is the one correct rounding, the product by γ is exact.
        """
        return release_one_on_grid(value, self.grid_exponent, rng,
                                   lambda g: discrete_laplace(self.noise_units, rng=g))


def release_on_grid(values, k: int, rng, draw) -> np.ndarray:
    """``γ·(⌊x/γ⌋ + K)`` for every coordinate of ``values``, γ = 2**k, exactly: K is the int64
    vector ``draw(n, rng)`` (any exact integer noise: discrete Laplace, discrete Gaussian).

    Raises ValueError on NaN/inf; clamps to ``±MAX_ABS_VALUE``; the result is one correct
    rounding of the exact integer ``⌊x/γ⌋ + K``, times γ (exact).
    """
    x = np.array(values, dtype=np.float64)  # a copy: the caller's array is not touched
    shape = x.shape
    x = x.reshape(-1)
    if not np.all(np.isfinite(x)):
        raise ValueError("cannot release NaN or infinite values: clamp them to declared bounds first")
    _check_rng(rng)
    gamma = math.ldexp(1.0, k)
    np.clip(x, -MAX_ABS_VALUE, MAX_ABS_VALUE, out=x)
    # |x| < γ: the index is 0 or −1; set those values so that no operation below sees a
    # subnormal (exact, and avoids subnormal-arithmetic timing).
    small = np.abs(x) < gamma
    x[small] = np.where(x[small] < 0, -0.5 * gamma, 0.0)
    m = np.floor(np.ldexp(x, -k))  # exact: |m| ≤ 2**104, integer-valued
    # Two limbs: m = h·2**52 + l with 0 ≤ l < 2**52 (both steps exact in float64).
    h = np.floor(np.ldexp(m, -_LIMB_BITS))
    lo = (m - np.ldexp(h, _LIMB_BITS)).astype(np.int64)
    noise = np.asarray(draw(x.size, rng), dtype=np.int64)  # |noise| < 2**62
    j = lo + noise  # |j| < 2**63: exact int64
    h = h + (j >> _LIMB_BITS).astype(np.float64)  # |h| < 2**53: exact
    lo = (j & (_LIMB - 1)).astype(np.float64)  # exact, < 2**52
    n = np.ldexp(h, _LIMB_BITS) + lo  # the exact integer m + K, rounded once
    return np.ldexp(n, k).reshape(shape)  # times γ: exact


def release_one_on_grid(value, k: int, rng, draw) -> float:
    """One value: ``γ·(⌊value/γ⌋ + K)`` with K = ``draw(rng)`` (see :func:`release_on_grid`).

    The same arithmetic on Python integers (exact), without the array set-up: ``float(m + K)``
    is the one correct rounding, the product by γ is exact.
    """
    if np.ndim(value) != 0:
        raise ValueError("release() takes one value; use release_array() for arrays")
    x = float(value)
    if not math.isfinite(x):
        raise ValueError("cannot release NaN or infinite values: clamp them to declared bounds first")
    _check_rng(rng)
    x = min(max(x, -MAX_ABS_VALUE), MAX_ABS_VALUE)
    if abs(x) < math.ldexp(1.0, k):
        m = -1 if x < 0 else 0  # as release_on_grid: no subnormal arithmetic
    else:
        m = math.floor(math.ldexp(x, -k))  # exact: x/γ is a float with no rounding
    return math.ldexp(float(m + int(draw(rng))), k)


def _check_rng(rng) -> None:
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a numpy.random.Generator (tests only) or None for OS entropy")


def plan_laplace(sensitivity, epsilon, *, integer: bool = False, changed: int = 1) -> LaplacePlan:
    """Fix the grid and the exact noise for an ε-DP Laplace release; validate the parameters.

    Call it before charging the ledger: it raises only on the public parameters.

    Parameters
    ----------
    sensitivity : float
        Δ, the ℓ₁ sensitivity of the value (vector) to release. May be a *released* quantity
        (e.g. the recursive mechanism's Δ̂); see :func:`at_least_min_scale`.
    epsilon : float
        The ε charged; ``plan.epsilon_spent ≤ epsilon`` exactly.
    integer : bool
        The values are integers (e.g. counts). Then the grid is ≥ 1; on the unit grid
        the rounding is the identity and ``c = ⌊Δ⌋``: no rounding cost at all.
    changed : int
        Public bound on how many coordinates differ between neighbours (1 for a scalar). Each
        changed coordinate can move its grid index by one extra unit.

    Raises
    ------
    ValueError
        Δ or ε not positive and finite, ``ε < MIN_EPSILON``, ``Δ/ε`` outside
        ``[MIN_SCALE, MAX_SCALE]``, or the noise would exceed ``MAX_NOISE_UNITS`` grid units.

    Examples
    --------
    >>> p = plan_laplace(1, 0.5, integer=True)
    >>> p.grid, p.index_sensitivity, p.noise_units, p.epsilon_spent
    (1.0, 1, Fraction(2, 1), Fraction(1, 2))
    >>> q = plan_laplace(3.0, 0.1)      # λ = c/ε rounded up to a dyadic rational
    >>> q.epsilon_spent <= Fraction(0.1) and q.inflation - 1 < 2 ** -20
    True
    """
    delta = _check_positive("sensitivity", sensitivity)
    eps = _check_positive("epsilon", epsilon)
    if isinstance(changed, bool) or not isinstance(changed, (int, np.integer)) or changed < 1:
        raise ValueError(f"changed must be a positive integer, got {changed!r}")
    r = int(changed)
    if eps < MIN_EPSILON:
        raise ValueError(f"epsilon {eps!r} is below MIN_EPSILON = 2**-40")
    scale = delta / eps
    if not (MIN_SCALE <= scale <= MAX_SCALE):
        raise ValueError(
            f"noise scale Δ/ε = {scale!r} is outside [MIN_SCALE, MAX_SCALE] = [2**-24, 2**64]"
        )
    # Grid rule: public quantities only.
    k = _pow2_floor_exponent(min(delta / r, scale)) - GRID_BITS
    k = max(k, MIN_GRID_EXPONENT, _pow2_ceil_exponent(scale) - 50)
    if integer:
        k = max(k, 0)
    # Index sensitivity and exact noise.
    fd = Fraction(delta)
    if integer and k == 0:
        c = max(1, math.floor(fd))
    else:
        c = math.ceil(fd / Fraction(2) ** k) + r - 1
    lam = _dyadic_ceiling(Fraction(c) / Fraction(eps))
    if lam > MAX_NOISE_UNITS:
        raise ValueError(
            f"the noise would span {float(lam):.3g} grid units (> 2**52): too many changed "
            f"coordinates ({r}) for ε = {eps!r}"
        )
    return LaplacePlan(delta, eps, bool(integer), r, k, c, lam)


def grid_for(sensitivity, epsilon, *, integer: bool = False, changed: int = 1) -> float:
    """The grid γ of :func:`plan_laplace` (a power of two; a function of public values only).

    >>> grid_for(1.0, 1.0), grid_for(1024.0, 0.25), grid_for(5, 1.0, integer=True)
    (9.5367431640625e-07, 0.0009765625, 1.0)
    """
    return plan_laplace(sensitivity, epsilon, integer=integer, changed=changed).grid


def on_grid(x, grid: float):
    """Whether ``x`` (scalar or array) is a finite integer multiple of the power of two ``grid``.

    >>> on_grid(0.75, 0.25), on_grid(0.8, 0.25), on_grid([1.0, 1.5], 0.5).tolist()
    (True, False, [True, True])
    """
    grid = float(grid)
    mant, _ = math.frexp(grid)
    if not (grid > 0 and math.isfinite(grid) and mant == 0.5):
        raise ValueError(f"grid must be a positive power of two, got {grid!r}")
    arr = np.asarray(x, dtype=np.float64)
    q = arr / grid  # exact for a power of two unless it underflows, which only 0 survives
    ok = np.isfinite(q) & (q == np.floor(q)) & ((arr == 0) | (q != 0))
    return bool(ok) if ok.ndim == 0 else ok


def at_least_min_scale(sensitivity, epsilon) -> float:
    """``max(Δ, MIN_SCALE·ε)``: raise a (released) sensitivity into the admissible range.

    Raising a sensitivity only adds noise, so this is always privacy-safe; use it for scales
    that are themselves released values (the recursive mechanism's Δ̂), which may be tiny.

    >>> at_least_min_scale(1e-12, 1.0) == 2.0 ** -24
    True
    """
    delta = float(sensitivity)
    eps = _check_positive("epsilon", epsilon)
    if not (math.isfinite(delta) and delta >= 0):
        raise ValueError(f"sensitivity must be finite and nonnegative, got {delta!r}")
    floor = MIN_SCALE * eps
    return max(delta, floor)


def laplace_release(value, sensitivity, epsilon, *, integer: bool = False,
                    rng: np.random.Generator | None = None) -> float:
    """ε-DP release of one number: exact discrete Laplace on the public grid.

    ``plan_laplace(sensitivity, epsilon, integer=integer).release(value, rng)``.

    >>> import numpy as np
    >>> y = laplace_release(1e15, 1.0, 1.0, rng=np.random.default_rng(3))
    >>> on_grid(y, grid_for(1.0, 1.0)) and abs(y - 1e15) < 100
    True
    """
    return plan_laplace(sensitivity, epsilon, integer=integer).release(value, rng=rng)


def laplace_release_array(values, sensitivity, epsilon, *, integer: bool = False,
                          changed: int | None = None,
                          rng: np.random.Generator | None = None) -> np.ndarray:
    """ε-DP release of a vector with ℓ₁ sensitivity Δ (e.g. Blowfish / histogram cells).

    ``changed`` bounds how many coordinates neighbours differ in; the default, the number of
    coordinates, is always safe. Integer data on the unit grid pays nothing for it.

    >>> import numpy as np
    >>> y = laplace_release_array([3, 0, 7], 2, 1.0, integer=True, rng=np.random.default_rng(0))
    >>> y.dtype, bool(np.all(y == np.round(y)))
    (dtype('float64'), True)
    """
    arr = np.asarray(values, dtype=np.float64)
    r = max(1, arr.size) if changed is None else changed
    plan = plan_laplace(sensitivity, epsilon, integer=integer, changed=r)
    return plan.release_array(arr, rng=rng)
