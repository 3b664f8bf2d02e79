"""One call for range counts under a δ-neighbourhood: publish the default strategy, answer.

1-D: C_{n,δ} (:func:`~provsql_dp.policies.delta.cumulative`); 2-D: shifted histograms
(:func:`~provsql_dp.policies.delta.shifted_histograms`). Both are data independent in everything but the
counts themselves, and report the noise variance of every answer (that of Laplace noise of the
stated scale: an upper bound for the exact discrete Laplace noise they release).

>>> import numpy as np
>>> from provsql_dp.policies.delta import Policy, range_count
>>> rng = np.random.default_rng(2)
>>> pts = rng.uniform(0, 1, size=(5000, 2))
>>> ans = range_count(pts, Policy(0.01, dims=2), 1.0, [[0.1, 0.4, 0.2, 0.6]], rng=rng)
>>> truth = np.sum((pts[:, 0] >= 0.1) & (pts[:, 0] < 0.4) & (pts[:, 1] >= 0.2) & (pts[:, 1] < 0.6))
>>> ans.strategy, bool(abs(ans.values[0] - truth) < 4 * ans.variances[0] ** 0.5)
('shifted_histograms', True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .histograms import shifted_histograms
from .policy import Policy
from .spatial1d import cumulative

__all__ = ["RangeAnswer", "range_count"]


@dataclass
class RangeAnswer:
    """Noisy range counts with their exact noise variances (bias of partly covered cells
    excluded)."""

    values: np.ndarray
    variances: np.ndarray
    epsilon: float
    strategy: str
    detail: str


def range_count(points, policy: Policy, epsilon, ranges, rng=None, **options) -> RangeAnswer:
    """Answer range counts over ``points`` with ε-DP under the δ-neighbourhood ``policy``.

    ``ranges`` is a list of ``(lo, hi)`` (1-D, half-open ``[lo, hi)``) or of
    ``(x0, x1, y0, y1)`` (2-D, ``[x0, x1) × [y0, y1)``). ``options`` go to the strategy
    (``cells=`` in 1-D, ``bin_width=`` in 2-D — choose them without looking at the data).
    The caller charges its ledger for ``epsilon`` first.
    """
    if not isinstance(policy, Policy):
        raise TypeError("policy must be a provsql_dp.policies.delta.Policy")
    r = np.asarray(ranges, dtype=float)
    if policy.dims == 1:
        r = r.reshape(-1, 2)
        rel = cumulative(points, policy, epsilon, rng=rng, **options)
        return RangeAnswer(rel.range_count(r[:, 0], r[:, 1]), rel.variance(r[:, 0], r[:, 1]),
                           rel.epsilon, "cumulative", rel.detail)
    r = r.reshape(-1, 4)
    rel = shifted_histograms(points, policy, epsilon, rng=rng, **options)
    args = (r[:, 0], r[:, 1], r[:, 2], r[:, 3])
    return RangeAnswer(rel.range_count(*args), rel.variance(*args), rel.epsilon,
                       "shifted_histograms", rel.detail)
