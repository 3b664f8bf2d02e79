"""The Laplace mechanism for a statistic whose sensitivity follows from the declarations.

When every participant owns a publicly bounded number of tuples (one row per person, joined to
public tables on their keys) and each tuple's weight is bounded (1 for a count, the declared
clamp for a SUM), removing or adding one participant changes the sum by at most
``sensitivity = rows_per_owner × max(|lower|, |upper|)``: the global sensitivity. Then
``value + Lap(sensitivity / ε)`` is ε-differentially private (Dwork et al. 2006) and, for this
query class, no data-dependent mechanism does better in the worst case.

The noise is exact discrete Laplace on a public power-of-two grid
(:func:`provsql_dp.mechanisms.noise.safe_noise.plan_laplace`): the release is ``γ·(⌊value/γ⌋ + K)``
with ``K ~ DLap(λ)`` and ``γ``, ``λ`` fixed from (sensitivity, ε) alone, so no floating-point
artefact can leak the true value (Mironov 2012). Counts use the unit grid (an integer answer, the
discrete Laplace of scale ``sensitivity/ε`` exactly); a SUM uses ``γ ≤ 2**−20·min(Δ, Δ/ε)``,
which inflates the noise scale by at most ``1 + 2**−20``.

>>> import numpy as np
>>> rel = release(1000, sensitivity=1, epsilon=1.0, integer=True, rng=np.random.default_rng(3))
>>> isinstance(rel.value, int), rel.mechanism, rel.noise_scale, rel.grid
(True, 'laplace', 1.0, 1.0)
>>> bool(rel.noise_bound(0.95) >= 1.0 * np.log(20))
True
>>> s = release(12.5, sensitivity=100.0, epsilon=0.5, rng=np.random.default_rng(3))
>>> from provsql_dp.mechanisms.noise.safe_noise import on_grid
>>> on_grid(s.value, s.grid), s.grid == 2.0 ** -14
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._numbers import positive
from ..noise.sources import error_bound
from ..noise.safe_noise import LaplacePlan, plan_laplace
from ._release import GridRelease

__all__ = ["LaplaceRelease", "release", "release_many"]


@dataclass(frozen=True)
class LaplaceRelease(GridRelease):
    """One release of the Laplace mechanism: the noisy value and its public noise parameters
    (``plan``, ``grid``, ``covers``: :class:`~._release.GridRelease`)."""

    value: float
    epsilon: float
    sensitivity: float
    integer: bool = False
    mechanism: str = "laplace"
    changed: int = 1  # the most coordinates of its vector one participant can move

    def _plan(self) -> LaplacePlan:
        return plan_laplace(self.sensitivity, self.epsilon, integer=self.integer,
                            changed=self.changed)

    @property
    def noise_scale(self) -> float:
        """The scale ``γλ`` of the discrete Laplace noise actually added (``≥ sensitivity/ε``
        up to ``2**−20``; exactly ``sensitivity/ε`` for a count)."""
        return self.plan.noise_scale

    def noise_bound(self, p: float = 0.95) -> float:
        """A bound ``b`` with ``Pr[|value − true value| ≤ b] ≥ p``, exact for the discrete law:
        ``Pr[|K| > k] = 2α^{k+1}/(1 + α)`` with ``α = e^{−1/λ}``, in grid units ``γ``, plus the
        rounding of a real value down to the grid (< γ; none for a count on the unit grid)."""
        return error_bound(self.plan, p, integer=self.integer)


def release(value: float, *, sensitivity: float, epsilon: float, integer: bool = False,
            rng=None) -> LaplaceRelease:
    """``value + DLap`` on the public grid of ``plan_laplace(sensitivity, ε, integer=integer)``.

    ``integer`` values (counts) are released as Python ints. Raises ValueError on parameters the
    plan refuses (checked before any noise is drawn) and on NaN or infinite values.
    """
    eps = positive("epsilon", epsilon)
    sens = positive("sensitivity", sensitivity)
    plan = plan_laplace(sens, eps, integer=integer)
    if integer:
        noisy = int(plan.release(int(round(value)), rng=rng))
    else:
        noisy = plan.release(float(value), rng=rng)
    return LaplaceRelease(value=noisy, epsilon=eps, sensitivity=sens, integer=integer)


def release_many(values, *, sensitivity: float, epsilon: float, integer: bool = False,
                 rng=None, changed: int = 1) -> list[LaplaceRelease]:
    """:func:`release` of each value, drawn in one vector: ``sensitivity`` is the ℓ1 bound of
    the whole vector between neighbours, ``changed`` the most coordinates one participant can
    move (1 for groups a participant touches only one of: parallel composition, each released
    at the full ``epsilon``). The same law as one :func:`release` per value (i.i.d. noise on the
    same public grid); ``changed`` > 1 adds one grid step per coordinate to the grid indices'
    sensitivity (each moved coordinate may cross one more grid line), as
    :func:`~provsql_dp.mechanisms.noise.safe_noise.plan_laplace` says.

    >>> import numpy as np
    >>> rels = release_many([10, 20, 30], sensitivity=1, epsilon=1.0, integer=True,
    ...                     rng=np.random.default_rng(0))
    >>> [type(r.value).__name__ for r in rels], rels[0].epsilon
    (['int', 'int', 'int'], 1.0)
    """
    eps = positive("epsilon", epsilon)
    sens = positive("sensitivity", sensitivity)
    r = max(1, min(int(changed), len(values)))
    plan = plan_laplace(sens, eps, integer=integer, changed=r)
    x = np.asarray(values, dtype=np.float64)
    if integer:
        x = np.round(x)
    noisy = plan.release_array(x, rng=rng)
    out = noisy.astype(np.int64).tolist() if integer else noisy.tolist()
    return [LaplaceRelease(value=v, epsilon=eps, sensitivity=sens, integer=integer, changed=r)
            for v in out]
