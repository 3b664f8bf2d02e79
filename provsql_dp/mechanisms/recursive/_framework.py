"""The recursive-mechanism framework of Chen & Zhou §4.1, shared by the efficient and the general
mechanism: parameter defaults, the Δ search (eq. 11), the noise steps and Theorem 1's bound.

Private: everything here except :func:`resolve_params` handles private quantities.

>>> p = resolve_params(0.5, "node")
>>> (p["theta"], p["beta"], p["mu"], p["eps1"], p["eps2"])
(1.0, 0.1, 1.0, 0.25, 0.25)
>>> delta_search(lambda j: [10.0, 5.0, 1.0][j], g_top=10.0, n=2, theta=1.0, beta=1.0)
(2, 7.38905609893065)
>>> resolve_params(50.0, "node")["beta"]  # β = ε/5 is capped at BETA_CAP
1.0
>>> threshold(1, 1.0, 800.0)  # e^{800} overflows: +inf, never an exception
inf
"""

from __future__ import annotations

import math
from types import MappingProxyType
from typing import Callable

from ..._numbers import positive
from ..noise.safe_noise import MIN_EPSILON, MIN_SCALE

__all__ = [
    "resolve_params", "delta_search", "accuracy_bound", "threshold", "DEFAULT_MU", "BETA_CAP",
    "MAX_EPS1", "BETA_RANGE", "check_beta", "MU_FLOOR", "mu_cap", "check_mu",
]

#: the paper's μ for node-style and edge-style privacy (Chen & Zhou §6.1)
DEFAULT_MU = {"node": 1.0, "edge": 0.5}

#: relative slack when comparing an LP value with a threshold e^{jβ}θ
_CMP_TOL = 1e-9

#: the largest *default* β. The paper's β = ε/5 (Chen & Zhou §6.1) keeps the failure probability
#: e^{−με₁/β} of Lemma 6 constant, but it also makes the thresholds θe^{jβ} of eq. 11 a factor
#: e^{β} apart: Δ then overshoots G by up to e^{ε/5}, so the noise Δ̂/ε₂ grows with ε past
#: ε = 5 (at ε = 50, Δ = e^{10} for a count of 5 rows per participant) and the thresholds
#: overflow (β ≥ 710). Past ε = 5 the default keeps β = 1: Δ stays within a factor e of the
#: smallest admissible threshold, the failure probability keeps falling (μ ε₁/β grows with ε) and
#: only ε₁, ε₂ grow, so a larger ε gives a less noisy release. An explicit ``beta`` in a statement's
#: OPTIONS must lie in ``(0, BETA_CAP]`` too (:func:`check_beta`, before anything is charged):
#: every β > 0 is private, but past the cap each unit of the index noise multiplies Δ̂ by e^β and
#: Lemma 6's failure probability e^{−με₁/β} grows, so a larger β only makes the answer worse —
#: at β = 10¹⁵ the thresholds overflow and the answer is noise of scale e^700 (Theorem 1's second
#: term, the only one a larger β shrinks, is already at most ⌈ln(Δ*/θ)⌉·G at β = 1).
BETA_CAP = 1.0

#: the explicit β :func:`resolve_params` accepts: from the smallest number the SQL options take
#: (``privacy.answer.OPTION_RANGE``; a tiny β is private and only lengthens the Δ search) up to
#: :data:`BETA_CAP`
BETA_RANGE = (1e-9, BETA_CAP)

def check_beta(beta: float) -> float:
    """An explicit β, refused (ValueError naming it and the range) outside :data:`BETA_RANGE`.

    >>> check_beta(0.5)
    0.5
    >>> check_beta(1e15)
    Traceback (most recent call last):
    ...
    ValueError: beta = 1e+15 is outside the recursive mechanism's range [1e-09, 1]: past 1 (BETA_CAP) a larger β only adds noise (Δ̂ overshoots Δ by up to e^β); use a β in that range or leave it out (default min(ε/5, 1))
    """
    value = float(positive("beta", beta))
    if not BETA_RANGE[0] <= value <= BETA_RANGE[1]:
        raise ValueError(
            f"beta = {value:.4g} is outside the recursive mechanism's range "
            f"[{BETA_RANGE[0]:g}, {BETA_RANGE[1]:g}]: past {BETA_CAP:g} (BETA_CAP) a larger β only "
            "adds noise (Δ̂ overshoots Δ by up to e^β); use a β in that range or leave it out "
            f"(default min(ε/5, {BETA_CAP:g}))")
    return value


#: the smallest explicit μ (the SQL options' smallest number): every μ > 0 is private
MU_FLOOR = 1e-9
#: ``ln 2^53``: a failure probability ½e^{−x} below 2^−53 is below a double's resolution
_NEGLIGIBLE = 53 * math.log(2)


def mu_cap(eps1: float, beta: float) -> float:
    """The largest explicit μ: ``max(1, ln(2^53)·β/ε₁)`` (at most 700).

    μ only trades two terms of Theorem 1 (Chen & Zhou §4.1): Δ̂ = e^{μ+Y}Δ with Y ~ Lap(β/ε₁),
    so Lemma 6's failure probability P[Δ̂ < Δ] ≤ ½e^{−με₁/β} falls with μ while the noise
    scale Δ̂/ε₂ (Theorem 1's first term, e^{2μ}Δ*c/ε₂) grows by e^μ. Past
    ``μ* = ln(2^53)·β/ε₁`` the failure probability is below 2^−53 — no double can tell it from
    0 — so a larger μ buys nothing and multiplies the noise by e^{μ−μ*} (at μ = 10¹⁵, Δ̂ is
    infinite). The cap is never below the paper's own choices (μ = 1 node, 0.5 edge; §6.1), and
    e^μ stays finite (700). Public: it reads the statement's ε₁ and β only.

    >>> round(mu_cap(0.25, 0.1), 2)   # ε = 0.5, the default β = ε/5
    14.69
    >>> mu_cap(5.0, 1e-3)             # a tiny β: the paper's μ = 1 stays allowed
    1.0
    """
    return min(700.0, max(1.0, _NEGLIGIBLE * beta / eps1))


def check_mu(params) -> float:
    """An explicit μ of resolved parameters (:func:`resolve_params`), refused (ValueError naming
    it and the range) outside ``[MU_FLOOR, mu_cap(ε₁, β)]``.

    >>> check_mu(resolve_params(1.0, "node", mu=1e15))
    Traceback (most recent call last):
    ...
    ValueError: mu = 1e+15 is outside the recursive mechanism's range [1e-09, 14.7] at this ε₁ = 0.5 and β = 0.2: past ln(2^53)·β/ε₁ the failure probability ½e^(−με₁/β) of Lemma 6 is below 2^-53 and a larger μ only multiplies the noise by e^μ; use a μ in that range or leave it out (default 1 for node privacy, 0.5 for edge)
    """
    mu, eps1, beta = float(params["mu"]), float(params["eps1"]), float(params["beta"])
    cap = mu_cap(eps1, beta)
    if not MU_FLOOR <= mu <= cap:
        raise ValueError(
            f"mu = {mu:.4g} is outside the recursive mechanism's range [{MU_FLOOR:g}, {cap:.3g}] "
            f"at this ε₁ = {eps1:.4g} and β = {beta:.4g}: past ln(2^53)·β/ε₁ the failure "
            "probability ½e^(−με₁/β) of Lemma 6 is below 2^-53 and a larger μ only multiplies "
            "the noise by e^μ; use a μ in that range or leave it out (default 1 for node "
            "privacy, 0.5 for edge)")
    return mu


#: the largest ε₁: Δ̂'s index is released with ``plan_laplace(1, ε₁, integer=True)``, whose scale
#: 1/ε₁ may not fall below ``MIN_SCALE = 2**−24``. Larger ε are refused before any charge (at
#: ε₁ = 2**24 the index noise is 0 with probability 1 − 2e^{−16777216}: no privacy left to tune).
MAX_EPS1 = 1.0 / MIN_SCALE

#: e^x overflows a double past this
_EXP_MAX = 709.0


def threshold(j: float, theta: float, beta: float) -> float:
    """``θ·e^{jβ}`` (eq. 11's thresholds), ``+inf`` once ``e^{jβ}`` overflows a double.

    Every finite G satisfies an infinite threshold, so a search reaching one stops there; the
    released Δ̂ is capped (:func:`.release.release_delta_hat`).

    >>> threshold(2, 1.0, 0.5) == math.exp(1.0), threshold(10**6, 1.0, 1.0)
    (True, inf)
    """
    e = j * beta
    return math.exp(e) * theta if e <= _EXP_MAX else math.inf




def resolve_params(
    epsilon: float,
    privacy: str | None = "node",
    *,
    theta: float = 1.0,
    beta: float | None = None,
    mu: float | None = None,
    eps1: float | None = None,
    eps2: float | None = None,
) -> MappingProxyType:
    """Fill in the paper's defaults (θ = 1, β = min(ε/5, :data:`BETA_CAP`), μ by privacy,
    ε₁ = ε₂ = ε/2) and validate.

    ``privacy`` only selects the default μ (1 for ``"node"``, 0.5 for ``"edge"``). If only one of
    ``eps1``/``eps2`` is given the other is ``epsilon`` minus it; if both are given they must add
    up to ``epsilon``. Any ``beta > 0`` is taken (the thresholds saturate, :func:`threshold`);
    statements and ``graph.count`` refuse one outside :data:`BETA_RANGE` first (:func:`check_beta`).
    ε₁ and ε₂ must lie in ``[MIN_EPSILON, MAX_EPS1]`` (the exact sampler's
    range): a ValueError otherwise, raised before anything is charged.

    >>> resolve_params(4e7, "edge")
    Traceback (most recent call last):
    ...
    ValueError: eps1 = 2e+07 (the part of epsilon that releases the noisy scale) exceeds the recursive mechanism's maximum 2**24 = 1.678e+07: its noise would fall below the exact sampler's smallest scale, i.e. no privacy at all; use epsilon below 3.355e+07
    """
    eps = positive("epsilon", epsilon)
    if privacy is not None:
        key = str(privacy).lower()
        if key not in DEFAULT_MU:
            raise ValueError(f"privacy must be 'node' or 'edge', got {privacy!r}")
        privacy = key
    if mu is None:
        if privacy is None:
            raise ValueError("give privacy='node' or 'edge', or an explicit mu")
        mu = DEFAULT_MU[privacy]
    mu = positive("mu", mu)
    theta = positive("theta", theta)
    beta = positive("beta", min(eps / 5, BETA_CAP) if beta is None else beta)
    if eps1 is None and eps2 is None:
        eps1 = eps2 = eps / 2
    elif eps1 is None:
        eps1 = eps - positive("eps2", eps2)
    elif eps2 is None:
        eps2 = eps - positive("eps1", eps1)
    eps1 = positive("eps1", eps1)
    eps2 = positive("eps2", eps2)
    if abs(eps1 + eps2 - eps) > 1e-12 * max(1.0, eps):
        raise ValueError(f"eps1 + eps2 must equal epsilon ({eps1} + {eps2} != {eps})")
    if eps1 > MAX_EPS1:
        raise ValueError(
            f"eps1 = {eps1:.4g} (the part of epsilon that releases the noisy scale) exceeds the "
            f"recursive mechanism's maximum 2**24 = {MAX_EPS1:.4g}: its noise would fall below "
            "the exact sampler's smallest scale, i.e. no privacy at all; use epsilon below "
            f"{MAX_EPS1 * eps / eps1:.4g}"
        )
    for name, value in (("eps1", eps1), ("eps2", eps2)):
        if value < MIN_EPSILON:
            raise ValueError(f"{name} = {value:.4g} is below the smallest epsilon the exact "
                             "sampler takes (2**-40); use a larger epsilon")
    return MappingProxyType(
        {"theta": theta, "beta": beta, "mu": mu, "eps1": eps1, "eps2": eps2, "privacy": privacy}
    )


def delta_search(
    g_at: Callable[[int], float], g_top: float, n: int, theta: float, beta: float
) -> tuple[int, float]:
    """Δ = min{e^{jβ}θ : G_{|P|−j} ≤ e^{jβ}θ} (eq. 11) by binary search on j (§5.3).

    ``g_at(j)`` returns ``G_{|P|−j}``, nonincreasing in ``j`` and 0 for ``j ≥ n``; ``g_top`` is
    ``G_{|P|}``. Only ``O(log(ln(G_|P|/θ)/β))`` entries of G are evaluated. Returns ``(j, Δ)``.
    """

    def ok(value: float, j: int) -> bool:
        t = threshold(j, theta, beta)
        return value <= t * (1 + _CMP_TOL) + _CMP_TOL

    if ok(g_top, 0):
        return 0, theta
    # the first j whose threshold reaches G_|P| satisfies the predicate, G being nonincreasing
    hi = max(1, math.ceil(math.log(g_top / theta) / beta)) if g_top > 0 else 1
    while threshold(hi - 1, theta, beta) >= g_top and hi > 1:
        hi -= 1
    while threshold(hi, theta, beta) < g_top:
        hi += 1
    hi = min(hi, max(n, 1))
    lo = 0  # predicate false at lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(g_at(mid), mid):
            hi = mid
        else:
            lo = mid
    return hi, threshold(hi, theta, beta)


def accuracy_bound(
    g_top: float, *, theta: float, beta: float, mu: float, eps1: float, eps2: float, c: float,
    g: int = 2, scale: float = 1.0,
) -> tuple[float, float]:
    """Theorem 1: ``|X̂ − q(supp R)| ≤ bound`` with probability at least ``prob``.

    ``bound = e^{2μ} Δ* c / ε₂ + g ⌈ln(Δ*/θ)/β⌉ G_|P|`` with ``Δ* = max{θ, e^β G_|P|}``, and
    ``prob = 1 − e^{−μ ε₁/β} − e^{−c}``. ``g`` is 2 for the efficient mechanism (Theorem 4), 1 for
    the general one (Theorem 2).

    ``scale = s > 1`` when only ``s·G`` is proved g-bounding (the k-triangle constructions, whose
    G_|P| still bounds H's fall from the top: ``H_|P| − H_i ≤ (|P| − i)·G_|P|``): Lemma 8 then
    needs ``Δ̂ ≥ sΔ`` instead of ``Δ̂ ≥ Δ``, which fails with probability
    ``½e^{−(μ − ln s)ε₁/β}`` (Lemma 6's argument), so ``prob = 1 − ½e^{−μ ε₁/β} −
    ½e^{−(μ − ln s)ε₁/β} − e^{−c}`` (vacuous unless ``μ > ln s``); ``s = 1`` is the formula above.
    Both ``½`` are the continuous Laplace's tails; ``Δ̂`` is released with discrete Laplace noise
    on the index (:func:`.release.release_delta_hat`), whose tails ``Pr[K ≥ m] = e^{−ε₁m}/(1 +
    e^{−ε₁})`` are heavier, so ``½`` is replaced by ``1/(1 + e^{−ε₁})`` (at ``s = 1`` this is
    slightly more conservative than the paper's ``e^{−μ ε₁/β}``). The ``e^{−c}`` of ``X̂``'s noise
    is the continuous tail (the discrete law on the release grid has tail at most
    ``2e^{−c}/(1 + e^{−1/λ})`` with ``λ`` the grid noise scale, and rounding adds one grid step).
    A vacuous ``prob`` is returned as ``0.0``: the theorem guarantees nothing at these parameters
    (the k-triangle constructions at the default μ).

    >>> b1, p1 = accuracy_bound(10.0, theta=1.0, beta=0.1, mu=1.0, eps1=0.5, eps2=0.5, c=3.0)
    >>> b2, p2 = accuracy_bound(10.0, theta=1.0, beta=0.1, mu=1.0, eps1=0.5, eps2=0.5, c=3.0,
    ...                         scale=1.5)
    >>> b1 == b2 and p2 < p1
    True
    >>> accuracy_bound(10.0, theta=1.0, beta=0.1, mu=0.5, eps1=0.25, eps2=0.25, c=3.0,
    ...                scale=10 / 3)[1]  # μ < ln s: nothing guaranteed
    0.0
    """
    if scale < 1:
        raise ValueError(f"scale must be at least 1, got {scale!r}")
    d_star = max(theta, threshold(1, g_top, beta)) if g_top > 0 else theta
    if math.isinf(d_star):  # e^β G_|P| overflows: the theorem bounds nothing
        bound = math.inf
    else:
        bound = threshold(2, 1.0, mu) * d_star * c / eps2 + g * math.ceil(
            math.log(d_star / theta) / beta
        ) * g_top
    half = 1.0 / (1.0 + math.exp(-eps1))  # the discrete Laplace tail factor of Δ̂ (not ½)
    prob = (1.0 - half * math.exp(-mu * eps1 / beta)
            - half * math.exp(-(mu - math.log(scale)) * eps1 / beta) - math.exp(-c))
    return bound, max(0.0, prob)

