r"""The exact discrete Gaussian (Canonne, Kamath & Steinke 2020, Algorithm 3) on a public grid.

Why
---
Under zero-concentrated DP (ρ-zCDP) or (ε, δ)-DP, many releases on one budget compose far better
with Gaussian noise than with Laplace noise: ρ adds up, so k releases at ρ/k each have noise
``σ = Δ₂·√(k/(2ρ))`` — growing like √k, where pure-ε Laplace noise grows like k. Floating-point
Gaussian noise leaks like floating-point Laplace noise (Mironov 2012), so, as
:mod:`.safe_noise` does for Laplace, the noise here is an **exact discrete Gaussian** integer
drawn with integer arithmetic only, added to the value rounded to a **public power-of-two grid**.

The mechanism
-------------
For a public ℓ₂ sensitivity Δ₂, a zCDP parameter ρ (an exact rational) and a public bound r on
the coordinates neighbours change, :func:`plan_gaussian` fixes, from those alone,

* a grid ``γ = 2**k``: ``k`` is the largest integer with ``2**k ≤ min(Δ₂/r, σ*)·2**−20``
  (``σ* = Δ₂/√(2ρ)``, the ideal noise), raised to ``2**k ≥ σ*·2**−SIGMA_BITS`` so that the noise
  spans at most ~``2**SIGMA_BITS`` grid units (every intermediate of the sampler then fits in
  int64), to ``MIN_GRID_EXPONENT``, and to ``k ≥ 0`` for integer data;
* the squared index sensitivity ``c2``: ``⌊Δ₂²⌋`` for integer data on the unit grid (an integer
  vector's squared norm is an integer), else ``c²`` with ``c = ⌈Δ₂/γ⌉`` for one coordinate and
  ``c = ⌈Δ₂/γ⌉ + ⌈√r⌉`` for r (each floored coordinate moves by less than ``|x − x'|/γ + 1``);
* the noise variance in grid units, the integer ``A = ⌈c2/(2ρ)⌉``.

A release of ``x`` is ``float(γ·(⌊x/γ⌋ + K))`` with K i.i.d. ``N_ℤ(0, A)``, the discrete Gaussian
``P[K = k] ∝ exp(−k²/(2A))``.

Privacy cost statement
----------------------
The grid indices of neighbours differ by at most ``√c2`` in ℓ₂, and adding i.i.d. ``N_ℤ(0, σ²)``
to an integer vector of ℓ₂ sensitivity Δ is ``Δ²/(2σ²)``-zCDP (CKS Theorem 14), so the release
is ``ρ_spent = c2/(2A) ≤ ρ``-zCDP exactly (:attr:`GaussianPlan.rho_spent`), and for every δ > 0
``(ρ + 2√(ρ·ln(1/δ)), δ)``-DP (Bun & Steinke 2016, Proposition 1.3). Rounding costs accuracy
only: the noise's standard deviation is ``inflation·σ*`` with ``inflation ≤ 1 + γ/Δ₂`` (about
``1 + 2**−13/√(2ρ)`` when the σ-bits floor binds; exactly 1 for counts on the unit grid); the
caveats of :mod:`.safe_noise` (clamping to ``±MAX_ABS_VALUE``, a 2**−700 overflow, timing) apply
unchanged.

Sampler
-------
CKS Algorithm 3: ``t = ⌊σ⌋ + 1``; draw ``Y ~ DLap(t)`` (the exact sampler of :mod:`._dlap`) and
keep it with probability ``exp(−(|Y| − σ²/t)²/(2σ²))``. With ``σ² = A`` an integer the exponent
is the rational ``num/den = (|Y|·t − A)²/(2·A·t²)``; writing ``num = q·den + r`` the coin is
``Bernoulli(exp(−1))^q ∧ Bernoulli(exp(−r/den))``: the first is ``V ≥ q`` for V the geometric
count of ``Bernoulli(exp(−1))`` successes (one draw of ``_geometric_exp_one``), the second CKS
Algorithm 1 (``_bernoulli_exp_ratio``) — integers only, vectorised over pools of at least
``MIN_POOL`` i.i.d. candidates. ``reference_discrete_gaussian`` is the slow transcription, one
candidate at a time with Python integers, that tests compare the fast one against.

>>> import numpy as np
>>> from fractions import Fraction
>>> plan = plan_gaussian(1, Fraction(1, 2), integer=True)     # σ² = 1/(2ρ) = 1 on the unit grid
>>> plan.grid, plan.sigma2_units, plan.rho_spent
(1.0, 1, Fraction(1, 2))
>>> k = discrete_gaussian(4, size=20_000, rng=np.random.default_rng(0))
>>> abs(float(k.var()) - 4) < 0.2, k.dtype
(True, dtype('int64'))

References
----------
.. [1] C. Canonne, G. Kamath, T. Steinke, "The discrete Gaussian for differential privacy",
   NeurIPS 2020 (arXiv:2004.00010), Algorithm 3 and Theorem 14.
.. [2] M. Bun, T. Steinke, "Concentrated differential privacy: simplifications, extensions, and
   lower bounds", TCC 2016.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ._dlap import (
    MIN_GRID_EXPONENT,
    MIN_POOL,
    _bernoulli_exp_ratio,
    _draw,
    _geometric_exp_one,
    resolve_rng,
)
from .safe_noise import GRID_BITS, _check_positive, _pow2_ceil_exponent, _pow2_floor_exponent
from .safe_noise import release_on_grid, release_one_on_grid

__all__ = ["GaussianPlan", "plan_gaussian", "discrete_gaussian", "reference_discrete_gaussian",
           "SIGMA_BITS", "MIN_RHO", "rho_for", "epsilon_of"]

#: The noise spans at most about 2**SIGMA_BITS grid units, so that ``2·A·t² < 2**62``.
SIGMA_BITS = 13
#: Smallest admissible ρ per release (below it even one grid unit of sensitivity overflows A).
MIN_RHO = Fraction(1, 2**24)
_DEN_LIMIT = 2**62


def _as_variance(sigma2) -> int:
    if isinstance(sigma2, bool) or not isinstance(sigma2, (int, np.integer)) or sigma2 < 1:
        raise ValueError(f"the discrete Gaussian's variance parameter must be a positive integer "
                         f"(grid units), got {sigma2!r}")
    a = int(sigma2)
    t = math.isqrt(a) + 1
    if 2 * a * t * t >= _DEN_LIMIT:
        raise ValueError(f"σ² = {a} grid units is too large for exact 64-bit arithmetic "
                         f"(2·σ²·t² must stay below 2**62); plan_gaussian picks a coarser grid")
    return a


def _round(a: int, t: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """One round of CKS Alg. 3 on ``m`` i.i.d. candidates; the accepted values, in order."""
    y = _draw(t, 1, m, rng)  # DLap(t)
    den = 2 * a * t * t
    num = (np.abs(y).astype(object) * t - a) ** 2  # exact Python integers
    q = num // den
    r = (num - q * den).astype(np.int64)  # 0 ≤ r < den < 2**62
    q = np.minimum(q, 2**40).astype(np.int64)  # V ≥ 2**40 has probability exp(−2**40)
    ok = np.ones(m, dtype=bool)
    need = np.flatnonzero(q > 0)
    if need.size:
        ok[need] = _geometric_exp_one(need.size, rng) >= q[need]
    keep = np.flatnonzero(ok)
    keep = keep[_bernoulli_exp_ratio(r[keep], den, rng)]
    return y[keep]


def discrete_gaussian(sigma2, size=None, rng: np.random.Generator | None = None):
    """Exact discrete Gaussian noise ``P[K = k] ∝ exp(−k²/(2σ²))`` for an integer σ² ≥ 1.

    Parameters
    ----------
    sigma2 : int
        σ² (the variance parameter; the variance itself is slightly below σ², CKS Cor. 9).
    size : int, optional
        Number of values; None returns one Python ``int``.
    rng : numpy.random.Generator, optional
        Tests only; default a fresh :func:`~._dlap.release_rng` (OS entropy).

    >>> import numpy as np
    >>> isinstance(discrete_gaussian(9, rng=np.random.default_rng(1)), int)
    True
    """
    a = _as_variance(sigma2)
    t = math.isqrt(a) + 1
    n = 1 if size is None else int(size)
    gen = resolve_rng(rng)
    out = np.empty(n, dtype=np.int64)
    filled = 0
    while filled < n:
        need = n - filled
        pool = max(MIN_POOL, math.ceil(need / 0.45 + 6 * math.sqrt(need) + 16))
        got = _round(a, t, pool, gen)
        take = min(need, got.size)
        out[filled:filled + take] = got[:take]
        filled += take
    return int(out[0]) if size is None else out


def reference_discrete_gaussian(sigma2, size: int, rng: np.random.Generator) -> np.ndarray:
    """CKS Algorithm 3 transcribed line by line, one candidate at a time, Python integers
    throughout (slow; tests only). Bernoulli(exp(−γ)) for γ = num/den is CKS Algorithm 1 run
    ``⌊γ⌋`` times with γ = 1 and once with ``γ − ⌊γ⌋``, each coin ``Bernoulli(num/(den·k))`` a
    uniform integer below ``den·k`` compared with ``num``.

    >>> import numpy as np
    >>> reference_discrete_gaussian(4, 5, np.random.default_rng(0)).shape
    (5,)
    """
    a = int(sigma2)
    t = math.isqrt(a) + 1

    def uniform(k: int) -> int:  # uniform integer in [0, k), k < 2**124
        if k <= 2**62:
            return int(rng.integers(0, k))
        while True:  # two 62-bit limbs, by rejection
            u = (int(rng.integers(0, 2**62)) << 62) | int(rng.integers(0, 2**62))
            if u < (2**124 // k) * k:
                return u % k

    def bern_exp(num: int, den: int) -> bool:  # Bernoulli(exp(−num/den)), 0 ≤ num ≤ den
        k = 1
        while uniform(den * k) < num:
            k += 1
        return k % 2 == 1

    def bern_exp_any(num: int, den: int) -> bool:
        q, r = divmod(num, den)
        for _ in range(q):
            if not bern_exp(1, 1):
                return False
        return bern_exp(r, den)

    def dlap(scale: int) -> int:  # CKS Algorithm 2 with s = 1
        while True:
            u = uniform(scale)
            if not bern_exp(u, scale):
                continue
            v = 0
            while bern_exp(1, 1):
                v += 1
            x = u + scale * v
            negative = uniform(2) == 1
            if negative and x == 0:
                continue
            return -x if negative else x

    out = []
    while len(out) < size:
        y = dlap(t)
        if bern_exp_any((abs(y) * t - a) ** 2, 2 * a * t * t):
            out.append(y)
    return np.array(out, dtype=np.int64)


@dataclass(frozen=True)
class GaussianPlan:
    """Everything a Gaussian release needs, fixed from public parameters (see the module's
    docstring); build with :func:`plan_gaussian`."""

    sensitivity: float  # Δ₂
    rho: Fraction
    integer: bool
    changed: int
    grid_exponent: int
    index_sensitivity2: int  # c2: bound on the squared ℓ₂ distance of the grid indices
    sigma2_units: int  # A: the discrete Gaussian's σ² in grid units

    @property
    def grid(self) -> float:
        return math.ldexp(1.0, self.grid_exponent)

    @property
    def rho_spent(self) -> Fraction:
        """The exact zCDP cost ``c2/(2A)`` (≤ ``rho``)."""
        return Fraction(self.index_sensitivity2, 2 * self.sigma2_units)

    @property
    def sigma(self) -> float:
        """The noise's σ parameter in value units: ``γ·√A``."""
        return math.ldexp(math.sqrt(self.sigma2_units), self.grid_exponent)

    @property
    def noise_scale(self) -> float:
        """Same as :attr:`sigma` (the name the Laplace plan's readers use)."""
        return self.sigma

    @property
    def inflation(self) -> float:
        """``σ / (Δ₂/√(2ρ))``: the accuracy price of the grid (1 for counts on the unit grid)."""
        return self.sigma / (self.sensitivity / math.sqrt(2 * float(self.rho)))

    @property
    def noise_variance(self) -> float:
        """An upper bound on the noise's variance, ``γ²·A`` (CKS Proposition 19: the discrete
        Gaussian's variance is below σ²)."""
        return math.ldexp(float(self.sigma2_units), 2 * self.grid_exponent)

    def release_array(self, values, rng: np.random.Generator | None = None) -> np.ndarray:
        return release_on_grid(values, self.grid_exponent, rng,
                               lambda n, g: discrete_gaussian(self.sigma2_units, size=n, rng=g))

    def release(self, value, rng: np.random.Generator | None = None) -> float:
        return release_one_on_grid(value, self.grid_exponent, rng,
                                   lambda g: discrete_gaussian(self.sigma2_units, rng=g))


def plan_gaussian(sensitivity, rho, *, integer: bool = False, changed: int = 1) -> GaussianPlan:
    """Fix the grid and the exact discrete Gaussian of a ρ-zCDP release; validate the
    parameters (raises ValueError only on public ones: call it before charging).

    >>> from fractions import Fraction
    >>> p = plan_gaussian(2.0, Fraction(1, 100))
    >>> p.rho_spent <= Fraction(1, 100), p.inflation < 1.01
    (True, True)
    >>> plan_gaussian(1, Fraction(1, 8), integer=True, changed=4).index_sensitivity2
    1
    """
    delta = _check_positive("sensitivity", sensitivity)
    rho = Fraction(rho)
    if rho < MIN_RHO:
        raise ValueError(f"rho {float(rho)!r} is below the smallest admissible ρ, 2**-24")
    if isinstance(changed, bool) or not isinstance(changed, (int, np.integer)) or changed < 1:
        raise ValueError(f"changed must be a positive integer, got {changed!r}")
    r = int(changed)
    ideal = delta / math.sqrt(2 * float(rho))
    k = _pow2_floor_exponent(min(delta / r, ideal)) - GRID_BITS
    k = max(k, MIN_GRID_EXPONENT, _pow2_ceil_exponent(ideal) - SIGMA_BITS)
    if integer:
        k = max(k, 0)
    fd = Fraction(delta)
    if integer and k == 0:
        c2 = max(1, math.floor(fd * fd))
    else:
        c = math.ceil(fd / Fraction(2) ** k)
        if r > 1:
            c += math.isqrt(r - 1) + 1  # ⌈√r⌉
        c2 = c * c
    a = math.ceil(Fraction(c2) / (2 * rho))
    _as_variance(a)
    return GaussianPlan(delta, rho, bool(integer), r, k, c2, a)


def rho_for(epsilon, delta) -> Fraction:
    """The largest dyadic ρ (denominator 2**48) with ``ρ + 2√(ρ·ln(1/δ)) ≤ ε`` (Bun–Steinke
    Prop. 1.3, with a float safety margin): a ρ-zCDP release is then (ε, δ)-DP.

    >>> r = rho_for(1, Fraction(1, 10**6))
    >>> 0.0174 < float(r) < 0.01748
    True
    """
    eps, d = float(epsilon), float(delta)
    if not (eps > 0 and 0 < d < 1):
        raise ValueError("(ε, δ) needs ε > 0 and 0 < δ < 1")
    log = math.log(1 / d)
    rho = (math.sqrt(log + eps) - math.sqrt(log)) ** 2 * (1 - 1e-9)
    out = Fraction(math.floor(rho * 2**48), 2**48)
    while float(out) + 2 * math.sqrt(float(out) * log) > eps * (1 - 1e-12):
        out = out * Fraction(999_999, 1_000_000)  # pragma: no cover - the margin above suffices
    return out


def epsilon_of(rho, delta) -> float:
    """``ρ + 2√(ρ·ln(1/δ))``: the ε at δ of a ρ-zCDP release (Bun–Steinke Prop. 1.3).

    >>> round(epsilon_of(Fraction(1, 2), Fraction(1, 10**6)), 3)
    5.757
    """
    rho, d = float(rho), float(delta)
    return rho + 2 * math.sqrt(rho * math.log(1 / d))
