"""Single-owner recursive mechanism over many groups with ONE ℓ1 bound: no ε split.

Setting
-------
A ``GROUP BY`` over a public list of ``G`` groups on the single-owner route (every tuple has one
owner, :mod:`.single_owner`), where one participant's tuples may fall in many groups (TPC-H Q21:
a customer's orders reach many suppliers). Participant ``p`` contributes a vector
``c_p ∈ ℝ^{G·k}_{≥0}``: its total in each group, for each of ``k`` nonnegative parts (``k = 1``;
``k = 2`` for a signed SUM, the positive and the negative part of each tuple's value, as
:func:`.single_owner.release_signed` splits them). The former route released each group with
the scalar mechanism at ``ε/G`` (``ε/2G`` per signed part).

What is released
----------------
With ``t_p = ‖c_p‖₁`` (the participant's total over every group and part):

1. ``Δ = θe^{jβ}`` with ``j`` the scalar single-owner closed form's
   (:func:`.single_owner.delta`) **of the totals t_p**, and ``Δ̂ = θe^{μ+βĵ}``,
   ``ĵ = j + DLap(1/ε₁)`` (:func:`.release.release_delta_hat`, the same draw).
2. Each participant's vector scaled into the ℓ1 ball of radius Δ̂:
   ``c̃_p = c_p · min(1, Δ̂/t_p)`` (for ``G·k = 1`` this is ``min(c_p, Δ̂)``, Proposition 4 of
   :mod:`.single_owner`: the scalar route's X), and ``X = Σ_p c̃_p ∈ ℝ^{G·k}``.
3. ``X̂ = X + noise``: every coordinate gets i.i.d. discrete Laplace noise on the public grid of
   ``plan_laplace(Δ̂, ε₂, changed = G·k)`` (:mod:`~provsql_dp.mechanisms.noise.safe_noise`): the
   ℓ1 sensitivity is Δ̂ over at most ``G·k`` moved coordinates. A group's answer is its
   coordinate (signed: positive minus negative part).

Privacy (ε = ε₁ + ε₂, add/remove one participant)
-------------------------------------------------
*Step 1 is ε₁-DP.* ``j`` is computed from the multiset ``{t_p}`` exactly as the scalar
mechanism computes it from its per-participant totals. In the single-owner setting removing
participant ``q`` removes its tuples and nothing else, so the multiset loses ``t_q`` and keeps
every other total: exactly the neighbouring relation of the scalar mechanism, whose proof
(Chen & Zhou Lemma 4: ``j`` moves by at most one between neighbours) gives that ``ĵ`` is ε₁-DP.
Tuples of undeclared groups are dropped before anything (a filter on public keys: a function
of the participant's own tuples), as on the scalar route.

*Step 3 is ε₂-DP given Δ̂.* Fix the released ``Δ̂``. ``X(D) − X(D − q) = c̃_q`` (the other
participants' scaled vectors depend on their own tuples and Δ̂ only), and
``‖c̃_q‖₁ = t_q · min(1, Δ̂/t_q) = min(t_q, Δ̂) ≤ Δ̂``. A vector of ℓ1 sensitivity Δ̂ with at
most ``G·k`` coordinates moved is released ε₂-DP by the exact sampler's plan with that
``changed`` (each moved coordinate may cross one more grid line; ``plan_laplace`` charges
``⌈Δ̂/γ⌉ + G·k − 1`` index units). Sequential composition: ε₁ + ε₂ = ε for the whole vector —
one charge, every group released at the statement's ε, not ε/G.

*Signed values* are the ``k = 2`` vector: the ℓ1 norm covers both parts, so one Δ̂ and one ε
cover both (the scalar route halves ε instead).

*Interval.* ``X_g ≤`` the true group total (scaling by ``min(1, ·) ≤ 1`` only lowers a
nonnegative vector), so each nonnegative group's interval is one-sided from below, as the
scalar route's; signed groups get none.

*Floating point.* ``X`` is a floating-point sum, as the scalar route's ``Σ min(c, Δ̂)``.

Why it is better
----------------
Splitting ε over G groups is the ℓ∞ × G bound; the ℓ1 ball is never larger (``‖c‖₁ ≤ G‖c‖∞``),
and a participant in one or a few groups uses its budget there only. The choice between this
and the split is made by :mod:`provsql_dp.privacy.group_l1` from the plan (public), never the data.

Examples
--------
>>> import numpy as np
>>> owner = np.array([0, 0, 1, 2])        # participant of each (group, owner) total
>>> group = np.array([0, 1, 1, 2])
>>> vals = np.array([[3.0], [1.0], [2.0], [8.0]])
>>> owner_norms(owner, vals, 3).tolist()
[4.0, 2.0, 8.0]
>>> scaled_sums(owner, group, vals, 3, 2.0).tolist()   # rows scaled by min(1, 2/t_p)
[[1.5], [2.5], [2.0]]
>>> rels = release_groups(owner, group, vals, 3, 1.0, rng=np.random.default_rng(0))
>>> len(rels), rels[0].mechanism, rels[0].changed, rels[0].epsilon
(3, 'recursive', 3, 1.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from ..noise.safe_noise import MIN_SCALE, LaplacePlan, at_least_min_scale, plan_laplace
from ..noise.sources import resolve_rng
from ._framework import resolve_params
from .release import Release, release_delta_hat
from .single_owner import delta

__all__ = ["GroupRelease", "check_vector_plan", "group_releases", "owner_norms", "release_matrix",
           "release_rows", "release_groups", "scaled_sums", "x_plan_groups"]


@dataclass(frozen=True)
class GroupRelease(Release):
    """One group's coordinate of a :func:`release_groups` vector: a :class:`Release` whose
    public plan has ``changed`` coordinates (every group's plan is the same)."""

    changed: int = 1

    @property
    def plan(self) -> LaplacePlan:
        if self.parts:
            raise AttributeError("a signed release has one plan per part; see .parts")
        return x_plan_groups(self.delta_hat, self.params["eps2"], self.changed)


def x_plan_groups(delta_hat: float, eps2: float, changed: int) -> LaplacePlan:
    """The public plan of the vector ``X``: ℓ1 sensitivity Δ̂ over ``changed`` coordinates.

    >>> x_plan_groups(2.0, 0.5, 4).index_sensitivity > x_plan_groups(2.0, 0.5, 1).index_sensitivity
    True
    """
    return plan_laplace(at_least_min_scale(delta_hat, eps2), eps2, changed=int(changed))


def check_vector_plan(eps2: float, changed: int) -> None:
    """Raise ValueError when no Δ̂ could be released on the vector's plan at ε₂ over ``changed``
    coordinates (public: the grid rule bounds the noise's grid units by a function of ε₂ and
    ``changed`` alone; Δ̂ lies in ``[MIN_SCALE·ε₂, 2**63·ε₂]``, :func:`.release.capped_delta_hat`,
    and both ends are tried).

    >>> check_vector_plan(1.0, 400)
    >>> check_vector_plan(2.0 ** -36, 10 ** 6)
    Traceback (most recent call last):
    ...
    ValueError: the noise would span 6.87e+16 grid units (> 2**52): too many changed coordinates (1000000) for ε = 1.4551915228366852e-11
    """
    for d in (MIN_SCALE * eps2, math.ldexp(eps2, 63)):
        plan_laplace(at_least_min_scale(d, eps2), eps2, changed=int(changed))


def _check(owner, group, values, n_groups: int):
    owner = np.asarray(owner, dtype=np.int64)
    group = np.asarray(group, dtype=np.int64)
    vals = np.asarray(values, dtype=np.float64)
    if vals.ndim == 1:
        vals = vals[:, None]
    if vals.ndim != 2 or owner.shape != (len(vals),) or group.shape != (len(vals),):
        raise ValueError("owner, group and values must have one entry (row) per (group, owner)")
    if vals.size and not (np.all(np.isfinite(vals)) and vals.min() >= 0):
        raise ValueError("the parts of a single-owner group release must be nonnegative and finite")
    if group.size and (group.min() < 0 or group.max() >= n_groups):
        raise ValueError(f"group indices must lie in [0, {n_groups})")
    if owner.size and owner.min() < 0:
        raise ValueError("owner indices must be nonnegative")
    return owner, group, vals


def owner_norms(owner, values, n_owners: int | None = None) -> np.ndarray:
    """``t_p = ‖c_p‖₁``: each participant's total over every group and part. Private."""
    owner = np.asarray(owner, dtype=np.int64)
    vals = np.asarray(values, dtype=np.float64)
    norms = vals.sum(axis=1) if vals.ndim > 1 else vals
    return np.bincount(owner, weights=norms, minlength=n_owners or 0)


def scaled_sums(owner, group, values, n_groups: int, delta_hat: float) -> np.ndarray:
    """``X = Σ_p c_p·min(1, Δ̂/t_p)`` as a ``(G, k)`` array. Private."""
    owner, group, vals = _check(owner, group, values, n_groups)
    return _scaled(group, vals, owner_norms(owner, vals)[owner], n_groups, delta_hat)


def _scaled(group, vals, row_norms, n_groups: int, delta_hat: float) -> np.ndarray:
    factor = np.ones(len(vals))
    big = row_norms > delta_hat
    factor[big] = delta_hat / row_norms[big]
    scaled = vals * factor[:, None]
    return np.stack([np.bincount(group, weights=scaled[:, j], minlength=n_groups)
                     for j in range(vals.shape[1])], axis=1)


def release_groups(owner, group, values, n_groups: int, epsilon: float,
                   privacy: str | None = "node", rng: np.random.Generator | None = None,
                   **kwargs) -> list[Release]:
    """Release every group's total with one ℓ1 bound (module docstring), ε-DP in all.

    ``owner``/``group``: each row's participant (any nonnegative integer id) and group index in
    ``range(n_groups)``; ``values``: the row's nonnegative parts, shape ``(rows,)`` or
    ``(rows, k)`` (``k = 2``: positive and negative part of a signed SUM; the group's value is
    their difference). ``kwargs``: θ, β, μ, ε₁, ε₂ as for :func:`.single_owner.release`.
    Draws ĵ, then the ``G·k`` coordinates in one vector (group-major). Returns one
    :class:`GroupRelease` per group (signed: with its two parts), each ``epsilon`` = ε, the
    whole vector's charge.
    """
    owner, group, vals = _check(owner, group, values, n_groups)
    t = owner_norms(owner, vals)
    return release_rows(t, group, vals, t[owner], n_groups, epsilon, privacy, rng, **kwargs)


def _checked_rows(norms, group, values, row_norms, n_groups: int):
    group = np.asarray(group, dtype=np.int64)
    vals = np.asarray(values, dtype=np.float64)
    if vals.ndim == 1:
        vals = vals[:, None]
    _check(np.zeros(len(group), dtype=np.int64), group, vals, n_groups)
    t = np.asarray(norms, dtype=np.float64)
    rt = np.asarray(row_norms, dtype=np.float64)
    if rt.shape != (len(vals),) or t.ndim != 1:
        raise ValueError("norms must be 1-D and row_norms one per row")
    if not (np.all(np.isfinite(t)) and np.all(t >= 0)):
        raise ValueError("per-participant norms must be nonnegative and finite")
    return group, vals, t, rt


def release_matrix(norms, group, values, row_norms, n_groups: int, epsilon: float,
                   privacy: str | None = "node", rng: np.random.Generator | None = None,
                   **kwargs):
    """The whole noisy vector of :func:`release_rows` as a ``(G, k)`` array (its columns: the
    ``k`` nonnegative coordinates of each group, in the order of ``values``' columns), with
    ``Δ̂``, the resolved parameters and the number of coordinates ``changed = G·k`` of its
    plan: ``(noisy, delta_hat, params, changed)``. Same draws as :func:`release_rows`.

    >>> import numpy as np
    >>> x, dh, prm, changed = release_matrix([4.0, 2.0], [0, 1, 1], [[3.0, 1.0], [1.0, 0.0],
    ...     [2.0, 0.0]], [4.0, 4.0, 2.0], 2, 1.0, rng=np.random.default_rng(5))
    >>> x.shape, changed, dh > 0
    ((2, 2), 4, True)
    """
    group, vals, t, rt = _checked_rows(norms, group, values, row_norms, n_groups)
    params = resolve_params(epsilon, privacy, **kwargs)
    k = vals.shape[1]
    j, _ = delta(t[t > 0], params["theta"], params["beta"])
    gen = resolve_rng(rng)
    delta_hat = release_delta_hat(j, params, gen)
    x = _scaled(group, vals, rt, n_groups, delta_hat)
    changed = max(1, n_groups * k)
    noisy = x_plan_groups(delta_hat, params["eps2"], changed).release_array(
        x.reshape(-1), rng=gen).reshape(n_groups, k)
    return noisy, float(delta_hat), params, changed


def release_rows(norms, group, values, row_norms, n_groups: int, epsilon: float,
                 privacy: str | None = "node", rng: np.random.Generator | None = None,
                 **kwargs) -> list[Release]:
    """:func:`release_groups` from what an engine's window functions give: ``norms`` holds each
    participant's ``t_p`` once (in any order), and each (group, owner) row carries its group,
    its parts ``values`` and its owner's norm ``row_norms`` — no participant ids needed. The
    same draws and values as :func:`release_groups` on the same rows.

    >>> import numpy as np
    >>> a = release_rows([4.0, 2.0], [0, 1, 1], [3.0, 1.0, 2.0], [4.0, 4.0, 2.0], 2, 1.0,
    ...                  rng=np.random.default_rng(5))
    >>> b = release_groups([0, 0, 1], [0, 1, 1], [3.0, 1.0, 2.0], 2, 1.0,
    ...                    rng=np.random.default_rng(5))
    >>> [r.value for r in a] == [r.value for r in b]
    True
    """
    group, vals, t, rt = _checked_rows(norms, group, values, row_norms, n_groups)
    k = vals.shape[1]
    out = release_matrix(t, group, vals, rt, n_groups, epsilon, privacy, rng, **kwargs)
    return group_releases(*out, [tuple(range(k))])[0]


def group_releases(noisy, delta_hat: float, params, changed: int, cols) -> list[list[Release]]:
    """The :class:`GroupRelease` of each group for each aggregate of a :func:`release_matrix`
    vector: ``cols[a]`` lists aggregate ``a``'s columns of ``noisy`` — one, or two (the positive
    and negative parts of a signed SUM: the value is their difference). Each release's ``epsilon``
    is the whole vector's charge ε₁ + ε₂.

    >>> import numpy as np
    >>> rels = group_releases(np.array([[3.0, 1.0, 0.5]]), 2.0, {"eps1": 0.5, "eps2": 0.5}, 3,
    ...                       [(0,), (1, 2)])
    >>> [(r[0].value, r[0].mechanism, r[0].epsilon) for r in rels]
    [(3.0, 'recursive', 1.0), (0.5, 'recursive-signed', 1.0)]
    """
    eps = float(params["eps1"] + params["eps2"])

    def one(v, mech="recursive", parts=(), prm=params):
        return GroupRelease(value=float(v), epsilon=eps, delta_hat=float(delta_hat),
                            params=prm, mechanism=mech, parts=parts, changed=changed)
    signed = MappingProxyType({**params, "split": "one ℓ1 bound over both parts, no ε split"})
    out = []
    for c in cols:
        if len(c) == 1:
            out.append([one(noisy[g, c[0]]) for g in range(len(noisy))])
        else:
            pos, neg = c
            out.append([one(noisy[g, pos] - noisy[g, neg], "recursive-signed",
                            (one(noisy[g, pos]), one(noisy[g, neg])), signed)
                        for g in range(len(noisy))])
    return out
