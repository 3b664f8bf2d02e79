"""A Blowfish strategy prepared for one (workload, policy), and what every strategy module shares.

>>> import numpy as np
>>> p = Plan("laplace", "laplace on path", np.array([2.0, 4.0]), lambda x, e, eps, noise: x)
>>> p.unit_mse, round(p.expected_mse(0.5), 3)
(3.0, 12.0)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import accuracy as _acc
from ._ops import as_noise
from .policy import Policy
from .workload import Matrix, Ranges, Rects, Workload

__all__ = ["Plan", "BRANCHINGS", "MAX_NNZ", "NOISE_INFLATION", "dp_factor", "matrix_ok"]

#: The exact noise of a Blowfish release has scale ``γλ ≤ (1 + 2**−20)(1 + 2**−50)·Δ/ε`` per
#: strategy row (the grid rule of ``mechanisms.noise.safe_noise``, unless one of its floors binds,
#: which for these sensitivities ``Δ ≥ 1`` needs ``ε < r·2**−30``); its variance and moment generating function are at most those of a
#: Laplace variable of that scale. Stated variances (and the (α, β) bounds and accuracy-first
#: budgets derived from them) use Laplace of scale ``NOISE_INFLATION·Δ/ε``, so they bound the
#: exact noise; ``_engine.answer`` raises them further if a plan ever reports a larger inflation.
NOISE_INFLATION = 1.0 + 2.0 ** -19

BRANCHINGS = (2, 4, 8, 16)
#: never build a workload matrix with more non-zeros than this
MAX_NNZ = 30_000_000


@dataclass
class Plan:
    """A strategy prepared for one (workload, policy): its exact per-query variance at ε = 1
    and a sampler. Variances scale as ``1/ε²``."""

    name: str
    detail: str
    unit_var: np.ndarray
    _run: object = field(repr=False)
    upper_bound: bool = False
    #: a nonlinear consistency step (the ordered strategy): the honest per-query error bound
    #: (:class:`~.consistency.SimultaneousBound`), which replaces the variance-based α
    simultaneous: object = field(default=None, repr=False)
    #: data dependent (``dawa``): ``unit_var`` is unknown before the release, the sampler
    #: returns ``(values, noise variances at ε, detail)``, and the plan is chosen only by name
    dependent: bool = False

    @property
    def unit_mse(self) -> float:
        return float(np.mean(self.unit_var)) if self.unit_var.size else 0.0

    @property
    def unit_var_bound(self) -> np.ndarray:
        """``unit_var · NOISE_INFLATION²``: per-query variance bounds at ε = 1 for the exact noise."""
        return self.unit_var * NOISE_INFLATION ** 2

    def variances(self, epsilon):
        """Per-query noise variance bounds at ``epsilon`` (``unit_var_bound / ε²``)."""
        return self.unit_var_bound / epsilon ** 2

    def expected_mse(self, epsilon):
        """Mean of :meth:`variances` (an upper bound for the exact noise)."""
        return self.unit_mse * NOISE_INFLATION ** 2 / epsilon ** 2

    def alphas(self, epsilon, beta=0.05):
        """Per-query α with ``P(|error| ≥ α) ≤ β`` at ``epsilon``: Chebyshev/Chernoff on the
        variance for the linear strategies (:mod:`.accuracy`), the simultaneous bound through
        the consistency step for the ordered one (:mod:`.consistency`)."""
        if self.simultaneous is not None:
            return self.simultaneous.alphas(epsilon, 1 - beta)
        return _acc.alphas(self.variances(epsilon), beta)

    def epsilon_for_alpha(self, alpha, beta=0.05, simultaneous=False):
        """The smallest ε (a float; the ordered strategy's is a 3-digit decimal) whose every
        query's α at confidence ``1 − β`` is within ``alpha`` (all at once if ``simultaneous``;
        the ordered strategy's bound always is)."""
        if self.simultaneous is not None:
            return float(self.simultaneous.epsilon_for(alpha, 1 - beta))
        return _acc.epsilon_for_alpha(self.unit_var_bound, alpha, beta, simultaneous)

    def run(self, x, exact, epsilon, rng):
        """Noisy answers for ``x`` (``exact`` is unused); ``rng``: a SafeNoise, a Generator or None."""
        return self._run(x, exact, epsilon, as_noise(rng))


def dp_factor(policy: Policy) -> int:
    """ε/f for DP baselines: 1 when the policy is unbounded DP itself, else 2."""
    if not policy.bounded and policy.n_value_edges() == 0:
        return 1
    return 2


def matrix_ok(w: Workload) -> bool:
    if isinstance(w, Matrix):
        return True
    if isinstance(w, Ranges):
        return int((w.hi - w.lo + 1).sum()) <= MAX_NNZ
    if isinstance(w, Rects):
        return int(((w.r1 - w.r0 + 1) * (w.c1 - w.c0 + 1)).sum()) <= MAX_NNZ
    return True
