"""The median with smooth sensitivity under a δ-neighbourhood (Fang & Chang §5.5.2; Nissim,
Raskhodnikova & Smith 2007).

For sorted values ``x₁ ≤ … ≤ xₙ`` in ``[lo, hi]`` and the median rank ``m = ⌈n/2⌉`` (the lower
median), the largest local sensitivity among tables at most ``t`` changes away is (NRS07 §3.1)

    ``A⁽ᵗ⁾(x) = max_{0 ≤ s ≤ t+1} (x_{m+s} − x_{m+s−t−1})``,  with ``x_i = lo`` for ``i < 1`` and
    ``x_i = hi`` for ``i > n``.

Under a δ-neighbourhood one record moves by at most δ, and the median then moves by at most δ,
so ``min(δ, A⁽ᵗ⁾(x))`` bounds the local sensitivity at δ-distance ``t``. It inherits the step
property ``B_t(x) ≤ B_{t+1}(y)`` for δ-neighbours ``x, y`` (δ-neighbours are neighbours), hence

    ``S(x) = max_{t ≥ 0} e^{−tβ} · min(δ, A⁽ᵗ⁾(x))``

is a β-smooth upper bound on the local sensitivity under the δ-neighbourhood, never above δ —
the global sensitivity ``hi − lo`` of the standard neighbourhood is gone.

Two releases (``noise=``):

* ``"laplace"`` (default, floating-point safe): the median's *global* sensitivity under the
  δ-neighbourhood is ``min(δ, hi − lo)`` (one record moves by at most δ, so the median does), and
  ``median + Lap(that/ε)`` is released with exact discrete Laplace noise on the public grid of
  :func:`provsql_dp.mechanisms.noise.safe_noise.plan_laplace` — pure ε-DP, nothing data-dependent in
  the noise. It is the better choice when δ is small next to the spread of the data near the
  median.
* ``"smooth_laplace"`` (floating-point safe, **(ε, δ′)-DP** with ``dp_delta = δ′``): NRS07's
  Laplace release (their Lemma 2.9: ``α = ε/2``, ``β = ε/(2 ln(2/δ′))``) made exact. A public
  grid ``γ`` (:func:`~provsql_dp.mechanisms.noise.safe_noise.grid_for` of the global release's
  ``min(δ, hi − lo)`` and ε) fixes the output lattice; the median's grid index ``⌊med/γ⌋`` moves
  by at most ``LS/γ + 1`` between neighbours, so ``S/γ + 1`` (still β-smooth: adding a constant
  keeps ``S(x) ≤ e^β S(y)``) bounds it in grid units, and the release is
  ``γ·(⌊med/γ⌋ + K)``, K the exact discrete Laplace of scale ``(S/γ + 1)/α`` rounded up to a
  dyadic rational (a monotone function of S, so the dilation step of the proof holds; the
  discrete law's normaliser ratio is below the scale ratio, as the continuous one's equals it).
  The data-dependent scale is never released; every output lies on the public grid. The same
  construction as the k-star baseline's (:mod:`provsql_dp.mechanisms.subgraph.smooth`).
* ``"cauchy"``: ``median + (6·S/ε)·Z`` with ``Z`` standard Cauchy and ``β = ε/6`` (NRS07's
  admissible Cauchy noise, pure ε-DP). The noise scale depends on the data through ``S`` only,
  which is why it is smooth; the scale itself is not released. Much less noise when the data are
  dense around the median, but **not floating-point safe**: the noise is a continuous variable of
  a data-dependent scale, which no exact sampler on a data-independent grid can produce, so the
  low-order bits of the release may reveal the median (Mironov 2012). Curator experiments only;
  never reachable from SQL.

Bounded policies only (no sources): adding or removing a record shifts the median's rank.

>>> import numpy as np
>>> from provsql_dp.policies.delta import Policy, median, smooth_sensitivity
>>> x = np.linspace(0.4, 0.6, 101)
>>> round(smooth_sensitivity(x, Policy(1.0), beta=0.1), 4)     # δ = 1: the standard bound
0.0081
>>> float(smooth_sensitivity(x, Policy(0.001), beta=0.1))              # capped by δ
0.001
>>> r = median(x, Policy(0.001), 1.0, rng=np.random.default_rng(3))
>>> bool(abs(r.value - 0.5) < 0.05), r.noise, r.grid == 2.0 ** -30
(True, 'laplace', True)
>>> dense = np.linspace(0.4, 0.6, 10_001)                  # δ = 1: global sensitivity 1, yet
>>> r = median(dense, Policy(1.0), 1.0, rng=np.random.default_rng(3), noise="smooth_laplace",
...            dp_delta=1e-6)                                  # noise scale ≈ 4.4e-4 here
>>> bool(abs(r.value - 0.5) < 0.01), r.noise, r.dp_delta, bool(r.value / r.grid == r.value // r.grid)
(True, 'smooth_laplace', 1e-06, True)
>>> r = median(x, Policy(0.001), 1.0, rng=np.random.default_rng(3), noise="cauchy")
>>> bool(abs(r.value - 0.5) < 0.05), r.beta == 1 / 6
(True, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...mechanisms.noise.sources import resolve_rng
from ...mechanisms.noise.safe_noise import grid_for, plan_laplace
from ...mechanisms.subgraph.smooth import smooth_params
from .policy import Policy

__all__ = ["MedianRelease", "median", "smooth_sensitivity", "local_sensitivity_bound"]


def _padded(x, lo, hi):
    return np.r_[lo, np.sort(np.asarray(x, dtype=float)), hi]


def local_sensitivity_bound(x, policy: Policy, t: int) -> float:
    """``min(δ, A⁽ᵗ⁾(x))``: local sensitivity of the median at δ-distance ``t`` (bound)."""
    x = np.sort(np.asarray(x, dtype=float))
    n = x.size
    if n == 0:
        raise ValueError("the median of an empty table is undefined")
    lo, hi = float(policy.lo[0]), float(policy.hi[0])
    m = (n + 1) // 2
    s = np.arange(t + 2)
    up, dn = m + s, m + s - t - 1  # 1-based ranks

    def val(r):
        return np.where(r < 1, lo, np.where(r > n, hi, x[np.clip(r - 1, 0, n - 1)]))

    a = float(np.max(val(up) - val(dn)))
    return min(float(policy.delta), a)


def smooth_sensitivity(x, policy: Policy, beta: float) -> float:
    """``S(x) = max_t e^{−tβ} min(δ, A⁽ᵗ⁾(x))`` (exact: the scan stops once no later term can
    exceed the maximum found, since every term is at most ``δ e^{−tβ}``)."""
    if policy.dims != 1:
        raise ValueError("the median is for one numeric column")
    if not beta > 0:
        raise ValueError("beta must be positive")
    x = np.sort(policy.check_points(x))
    n = x.size
    if n == 0:
        raise ValueError("the median of an empty table is undefined")
    lo, hi = float(policy.lo[0]), float(policy.hi[0])
    d = float(policy.delta)
    pad = np.r_[np.full(n + 2, lo), x, np.full(n + 2, hi)]  # rank r (1-based) at index r + n + 1
    m = (n + 1) // 2
    best = 0.0
    t = 0
    while True:
        if d * math.exp(-t * beta) <= best:
            break
        s = np.arange(t + 2)
        up = np.clip(m + s, -n - 1, 2 * n + 2) + n + 1
        dn = np.clip(m + s - t - 1, -n - 1, 2 * n + 2) + n + 1
        a = min(d, float(np.max(pad[up] - pad[dn])))
        best = max(best, math.exp(-t * beta) * a)
        if a >= d or t > n + 1:  # saturated (or every later A is hi − lo ≥ the cap): stop
            break
        t += 1
    return best


@dataclass
class MedianRelease:
    """A noisy median. ``value`` is the release; the other fields are the mechanism's
    parameters (``beta`` for the smooth Cauchy release, else None; the noise family; ``grid``,
    the public grid of a ``"laplace"`` release, else NaN); the smooth release's data-dependent
    scale is kept private."""

    value: float
    epsilon: float
    beta: float | None
    noise: str = "cauchy"
    grid: float = float("nan")
    dp_delta: float | None = None  # δ′ of an (ε, δ′)-DP "smooth_laplace" release, else None


def median(points, policy: Policy, epsilon, rng=None, noise: str = "laplace",
           dp_delta: float | None = None) -> MedianRelease:
    """Release the (lower) median of one column with ε-DP under the δ-neighbourhood.

    Parameters
    ----------
    points : array_like
        Values inside the policy's box (``n ≥ 1``; the size is public under a bounded policy).
    policy : Policy
        A bounded 1-D δ-neighbourhood.
    epsilon : float
        Budget; the caller charges its ledger first.
    rng : numpy.random.Generator, optional
        Tests only.
    noise : {"laplace", "cauchy"}
        ``"laplace"`` (default): global sensitivity ``min(δ, hi − lo)``, exact discrete Laplace on
        a public grid (floating-point safe). ``"cauchy"``: smooth sensitivity with continuous
        Cauchy noise — not floating-point safe (module docstring). ``"smooth_laplace"``:
        smooth sensitivity with exact discrete Laplace on a public grid, (ε, ``dp_delta``)-DP.
    dp_delta : float, optional
        δ′ ∈ (0, 1) of the ``"smooth_laplace"`` release (the caller charges it with ε); only
        for that noise.
    """
    if not isinstance(policy, Policy) or policy.dims != 1:
        raise ValueError("median needs a 1-D provsql_dp.policies.delta.Policy")
    if not policy.bounded:
        raise ValueError("the smooth-sensitivity median needs a policy without sources (adding "
                         "or removing a record shifts the median's rank)")
    eps = float(epsilon)
    if not (eps > 0 and math.isfinite(eps)):
        raise ValueError(f"epsilon must be positive and finite, got {epsilon!r}")
    if noise not in ("laplace", "cauchy", "smooth_laplace"):
        raise ValueError(f"noise must be 'laplace', 'smooth_laplace' or 'cauchy', got {noise!r}")
    if (noise == "smooth_laplace") != (dp_delta is not None):
        raise ValueError("dp_delta is the δ′ of noise='smooth_laplace' and needed there only")
    x = np.sort(policy.check_points(points))
    if x.size == 0:
        raise ValueError("the median of an empty table is undefined")
    med = float(x[(x.size + 1) // 2 - 1])
    g = resolve_rng(rng)
    if noise == "laplace":
        sens = min(float(policy.delta), float(policy.hi[0]) - float(policy.lo[0]))
        plan = plan_laplace(sens, eps)
        return MedianRelease(plan.release(med, rng=g), eps, None, "laplace", plan.grid)
    if noise == "smooth_laplace":
        return _smooth_laplace(med, x, policy, eps, float(dp_delta), g)
    beta = eps / 6.0
    S = smooth_sensitivity(x, policy, beta)
    val = med + (6.0 * S / eps) * float(g.standard_cauchy())
    return MedianRelease(val, eps, beta)


def smooth_laplace_plan(x, policy: Policy, epsilon: float, dp_delta: float):
    """``(γ, plan)`` of the ``"smooth_laplace"`` release: the public grid and the exact discrete
    Laplace plan in grid units (its scale is data-dependent: never release it)."""
    alpha, beta = smooth_params(epsilon, dp_delta)
    grid = grid_for(min(float(policy.delta), float(policy.hi[0]) - float(policy.lo[0])), epsilon)
    units = smooth_sensitivity(x, policy, beta) / grid + 1.0  # + 1: the index rounding
    return grid, plan_laplace(1, alpha / units, integer=True)


def _smooth_laplace(med: float, x, policy: Policy, eps: float, dp_delta: float, rng):
    grid, plan = smooth_laplace_plan(x, policy, eps, dp_delta)
    index = math.floor(med / grid)
    value = grid * float(plan.release(index, rng=rng))
    return MedianRelease(value, eps, smooth_params(eps, dp_delta)[1], "smooth_laplace", grid,
                         dp_delta)
