"""The entry points: :func:`answer`, :func:`expected_error`, :func:`answer_with_accuracy`."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..._numbers import positive
from ...errors import DeclarationError
from . import accuracy as _acc
from ._ops import SafeNoise
from ._plan import NOISE_INFLATION
from .policy import Policy
from .strategies import STRATEGIES, best_plan, plans
from .workload import Workload, as_workload

__all__ = ["Answer", "answer", "expected_error", "compare_strategies", "answer_with_accuracy",
           "epsilon_for_accuracy"]


@dataclass
class Answer:
    """A noisy release.

    Attributes
    ----------
    values : numpy.ndarray
        Noisy answers, one per query.
    epsilon : float
        Budget this release costs (the caller charges the ledger).
    strategy : str
        Strategy name (see :mod:`provsql_dp.policies.blowfish.strategies`).
    detail : str
        The variant used (tree, stretch, branching …).
    expected_mse : float
        Mean over queries of the expected squared error (data independent).
    variances : numpy.ndarray
        Expected squared error of each query.
    mse_is_upper_bound : bool
        True for the data-dependent ``ordered`` strategy (the variance of its unconstrained
        estimate; consistency never increases the CDF error).
    simultaneous : SimultaneousBound or None
        For the ``ordered`` strategy: the honest per-query error bound through its isotonic
        consistency (:mod:`.consistency`); :meth:`alpha` uses it with the plan drawn.
    noise_only : bool
        True for ``dawa``/``dp_dawa``: ``variances`` are those of the noise given the released
        partition; the bias of spreading each bucket uniformly is data dependent and not in them.
    noise_plans : tuple of LaplacePlan
        The public plans of the exact discrete Laplace noise drawn (grids, scales; see
        :mod:`provsql_dp.policies.blowfish.strategies`).

    The variances are those of Laplace noise of scale ``NOISE_INFLATION·Δ/ε`` per strategy row
    (or the largest ``LaplacePlan.inflation`` of the plans drawn, if larger; ``γλ ≤ (1 + 2**−20)
    (1 + 2**−50)·Δ/ε`` under the grid rule): a discrete Laplace ``γ·DLap(λ)`` has no more variance than the
    continuous Laplace of scale ``γλ``, and no larger moment generating function
    (``(cosh a − 1)/(cosh a − cosh s) ≤ a²/(a² − s²)`` for ``|s| < a = 1/λ``), so the reported
    variances and the Chebyshev/Chernoff bounds of :mod:`.accuracy` computed from them are upper
    bounds for the exact noise. On integer histograms (every SQL release) the rows are integers
    that ``γ ≤ 1`` divides, so rounding to the grid is exact; on a non-integer histogram it biases
    each row by less than ``γ ≤ 2**−20·Δ/ε``: at most ``rows·2**−40`` relative to the variance.
    """

    values: np.ndarray
    epsilon: float
    strategy: str
    detail: str
    expected_mse: float
    variances: np.ndarray = field(repr=False)
    policy: Policy = field(repr=False, default=None)
    mse_is_upper_bound: bool = False
    noise_plans: tuple = field(repr=False, default=())
    simultaneous: object = field(repr=False, default=None)
    noise_only: bool = False

    def alpha(self, beta=0.05, simultaneous=False):
        """Per-query error bound α: ``P(|error| ≥ α) ≤ β`` (all queries at once if
        ``simultaneous``). For the ``ordered`` strategy the bound through its consistency step,
        which holds for all queries at once anyway (:mod:`.consistency`)."""
        if self.simultaneous is not None:
            return self.simultaneous.alphas(self.epsilon, 1 - beta, plan=self.noise_plans[0])
        return _acc.alphas(self.variances, beta, simultaneous)

    def to_dict(self):
        """Metadata for a cursor (no values)."""
        return {"strategy": self.strategy, "detail": self.detail, "epsilon": self.epsilon,
                "expected_mse": self.expected_mse, "mse_is_upper_bound": self.mse_is_upper_bound,
                "noise_only": self.noise_only}


def _policy(pol):
    if isinstance(pol, Policy):
        return pol
    if isinstance(pol, (dict, str)):
        return Policy.from_dict(pol)
    raise DeclarationError("policy must be a provsql_dp.policies.blowfish.Policy (or its to_dict())")


def _epsilon(eps) -> float:
    return positive("epsilon", eps)


def _data(x, k):
    x = np.asarray(x, dtype=float).ravel()
    if x.size != k:
        raise ValueError(f"x has {x.size} counts but the policy's domain has {k} values")
    if not np.all(np.isfinite(x)) or np.any(x < 0):
        raise ValueError("x must be a histogram of non-negative finite counts")
    return x


def _workload(W, pol: Policy) -> Workload:
    w = as_workload(W, pol.shape)
    if w.k != pol.k:
        raise ValueError(f"the workload has {w.k} columns but the policy's domain has {pol.k} "
                         "values; build W over the policy's domain (row-major for 2-D)")
    if len(pol.shape) == 2 and len(w.shape) == 1:
        w.shape = pol.shape
    return w


def answer(W, x, pol, epsilon, strategy=None, rng=None) -> Answer:
    """Answer the workload ``W`` on the histogram ``x`` under ``(ε, G)``-Blowfish privacy.

    Parameters
    ----------
    W : array_like, scipy.sparse matrix or Workload
        ``q × k`` queries (columns in the policy's value order, row-major for 2-D).
    x : array_like
        The histogram (``k`` non-negative counts). Bounded policies treat ``sum(x)`` as public.
    pol : Policy or dict
        The policy graph (or its :meth:`Policy.to_dict`).
    epsilon : float
        Budget; the caller charges its ledger before calling.
    strategy : str, optional
        One of :data:`~provsql_dp.policies.blowfish.strategies.STRATEGIES`; default: least expected error.
    rng : numpy.random.Generator, optional
        Tests only; default a fresh per-release generator from OS entropy. Every noisy number is
        drawn by the exact discrete Laplace sampler (see ``strategies``, "Floating-point safety").

    Returns
    -------
    Answer

    Examples
    --------
    >>> import numpy as np
    >>> from provsql_dp import blowfish as bf
    >>> x = np.array([5, 0, 3, 2, 7, 1])
    >>> ans = bf.answer(bf.Prefix(6), x, bf.Policy.line(6), 1.0, rng=np.random.default_rng(0))
    >>> ans.strategy, round(ans.expected_mse, 3)
    ('ordered', 1.667)
    >>> float(ans.values[-1])          # the total is public under a bounded policy
    18.0
    """
    pol = _policy(pol)
    eps = _epsilon(epsilon)
    w = _workload(W, pol)
    xx = _data(x, pol.k)
    plan = best_plan(w, pol, strategy)
    noise = SafeNoise(rng)  # one generator for the whole release (OS entropy unless a test)
    out = plan.run(xx, None, eps, noise)
    detail = plan.detail
    if plan.dependent:  # dawa: the noise variances follow from the released partition
        out, var, how = out
        var = np.asarray(var, dtype=float) * NOISE_INFLATION ** 2
        detail = f"{detail}: {how}"
    else:
        var = plan.variances(eps)
    vals = np.asarray(out, dtype=float).ravel()
    # the plans' noise scale γλ is at most NOISE_INFLATION·Δ/ε (already in the variances); if a
    # plan ever reports more, scale up so that the variances stay upper bounds for the exact noise
    infl = max([NOISE_INFLATION] + [float(p.inflation) for p in noise.plans])
    var = var * (infl / NOISE_INFLATION) ** 2
    return Answer(vals, eps, plan.name, detail, float(np.mean(var)) if var.size else 0.0,
                  var, pol, plan.upper_bound, tuple(noise.plans), noise_only=plan.dependent,
                  simultaneous=plan.simultaneous)


def expected_error(W, pol, epsilon, strategy=None):
    """``(strategy, detail, expected MSE per query)`` without touching any data or budget."""
    pol = _policy(pol)
    eps = _epsilon(epsilon)
    plan = best_plan(_workload(W, pol), pol, strategy)
    if plan.dependent:
        raise ValueError(f"strategy {strategy!r} is data dependent: its error is known only after "
                         "the release (Answer.variances, noise only)")
    return plan.name, plan.detail, plan.expected_mse(eps)


def compare_strategies(W, pol, epsilon):
    """Best variant of every applicable strategy: ``{name: (detail, expected MSE)}``."""
    pol = _policy(pol)
    eps = _epsilon(epsilon)
    w = _workload(W, pol)
    out = {}
    for p in plans(w, pol):
        if p.name not in out or p.expected_mse(eps) < out[p.name][1]:
            out[p.name] = (p.detail, p.expected_mse(eps))
    return {n: out[n] for n in STRATEGIES if n in out}


def epsilon_for_accuracy(W, pol, alpha, beta=0.05, simultaneous=False, strategy=None):
    """Accuracy first (Liu et al. §3): the smallest ε (and strategy) such that every query is
    within ``alpha`` of the truth with probability ``1 − beta``.

    >>> from provsql_dp import blowfish as bf
    >>> eps, name = bf.epsilon_for_accuracy(bf.Prefix(100), bf.Policy.line(100), alpha=50, beta=0.05)
    >>> name, round(eps, 3)
    ('laplace', 0.117)
    """
    pol = _policy(pol)
    w = _workload(W, pol)
    cands = plans(w, pol, None if strategy is None else (strategy,))
    cands = [p for p in cands if (p.name != "ordered" or strategy == "ordered")
             and not p.dependent]
    if not cands:
        raise ValueError(f"no strategy {'named ' + repr(strategy) + ' ' if strategy else ''}"
                         f"applies to this workload under {pol!r}")
    best = min(cands, key=lambda p: p.epsilon_for_alpha(alpha, beta, simultaneous))
    return best.epsilon_for_alpha(alpha, beta, simultaneous), best.name


def answer_with_accuracy(W, x, pol, alpha, beta=0.05, simultaneous=False, max_epsilon=None,
                         strategy=None, rng=None) -> Answer:
    """Spend the smallest ε meeting (α, β) (see :func:`epsilon_for_accuracy`) and answer.

    Raises ``ValueError`` (spending nothing) when that ε exceeds ``max_epsilon``.
    """
    eps, name = epsilon_for_accuracy(W, pol, alpha, beta, simultaneous, strategy)
    if eps == 0:
        eps = 1e-12
    if max_epsilon is not None and eps > max_epsilon:
        raise ValueError(f"meeting alpha={alpha} with beta={beta} needs epsilon={eps:.4g}, more "
                         f"than max_epsilon={max_epsilon}; relax alpha or beta, or coarsen the "
                         "workload")
    return answer(W, x, pol, eps, strategy=name, rng=rng)
