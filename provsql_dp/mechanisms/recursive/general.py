"""The general (inefficient) recursive mechanism of Chen & Zhou §4.2, eqs. 13–14.

For any monotonic query ``q`` on a sensitive database — given as a Python function from a world
(a frozenset of contributing participants) to a nonnegative number — it enumerates every subset
of participants:

* ``H_i = min_{|P'| = i} q(P')``                                   (eq. 13)
* ``G_i = min_{|P'| = i} GS̃_q(P')``, ``GS̃_q(P') = max_{P'' ⊆ P'} LS̃_q(P'')``   (eq. 14)
* ``LS̃_q(P'') = max_{p ∈ P''} q(P'') − q(P'' − {p})``               (Def. 9)

``G`` is a 1-bounding sequence of ``H`` (Theorem 2). The cost is ``O(2^|P| |P|)``, so inputs are
limited to :data:`MAX_PARTICIPANTS` participants: this module is a test oracle for the efficient
mechanism and a tool for tiny custom monotonic queries.

Examples
--------
>>> import numpy as np
>>> people = ["a", "b", "c"]
>>> def pairs(world):                      # number of pairs of present people
...     k = len(world)
...     return k * (k - 1) / 2
>>> H, G = sequences(pairs, people)
>>> H.tolist(), G.tolist()
([0.0, 0.0, 1.0, 3.0], [0.0, 0.0, 1.0, 2.0])
>>> rel = release(pairs, people, epsilon=1.0, rng=np.random.default_rng(0))
>>> rel.mechanism
'general'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from provsql_dp.mechanisms.recursive._framework import delta_search, resolve_params
from provsql_dp.mechanisms.noise.sources import resolve_rng
from provsql_dp.mechanisms.recursive.release import Release, release_delta_hat, release_x
from provsql_dp.provenance.krelation import KRelation

__all__ = ["MAX_PARTICIPANTS", "sequences", "krelation_sequences", "release", "x_value"]

#: enumerating 2^|P| worlds beyond this is refused
MAX_PARTICIPANTS = 16


def _popcounts(n: int) -> np.ndarray:
    masks = np.arange(1 << n, dtype=np.int64)
    counts = np.zeros(1 << n, dtype=np.int64)
    for b in range(n):
        counts += (masks >> b) & 1
    return counts


def _from_values(values: np.ndarray, n: int, tol: float = 1e-9) -> tuple[np.ndarray, np.ndarray]:
    """H and G (eqs. 13–14) from ``q`` evaluated on every subset (indexed by bitmask)."""
    if abs(values[0]) > tol:
        raise ValueError("a monotonic query must be 0 on the empty world (Chen & Zhou Def. 8)")
    masks = np.arange(1 << n, dtype=np.int64)
    ls = np.zeros(1 << n)
    for b in range(n):
        has = (masks >> b) & 1 == 1
        drop = values[has] - values[masks[has] ^ (1 << b)]
        if np.any(drop < -tol):
            raise ValueError("the query is not monotonic: removing a participant increased it")
        ls[has] = np.maximum(ls[has], drop)
    gs = ls.copy()
    for b in range(n):  # max over all subsets, one bit at a time
        has = (masks >> b) & 1 == 1
        gs[has] = np.maximum(gs[has], gs[masks[has] ^ (1 << b)])
    counts = _popcounts(n)
    h = np.full(n + 1, np.inf)
    g = np.full(n + 1, np.inf)
    np.minimum.at(h, counts, values)
    np.minimum.at(g, counts, gs)
    return h, g


def sequences(
    query: Callable[[frozenset], float], participants: Sequence[Any]
) -> tuple[np.ndarray, np.ndarray]:
    """``(H, G)`` of eqs. 13–14, each of length ``|P| + 1``, for a monotonic ``query``."""
    plist = list(participants)
    n = len(plist)
    if n > MAX_PARTICIPANTS:
        raise ValueError(
            f"the general mechanism enumerates 2^|P| worlds; {n} participants is more than "
            f"{MAX_PARTICIPANTS}. Use the efficient mechanism (recursive.release) instead."
        )
    values = np.empty(1 << n)
    for mask in range(1 << n):
        world = frozenset(p for b, p in enumerate(plist) if mask >> b & 1)
        v = float(query(world))
        if not math.isfinite(v) or v < 0:
            raise ValueError(f"the query must return a nonnegative finite number, got {v!r}")
        values[mask] = v
    return _from_values(values, n)


def krelation_sequences(kr: KRelation) -> tuple[np.ndarray, np.ndarray]:
    """``(H, G)`` of eqs. 13–14 for the linear query ``Σ_{t present} q(t)`` of a K-relation."""
    n = kr.n_participants
    if n > MAX_PARTICIPANTS:
        raise ValueError(f"at most {MAX_PARTICIPANTS} participants, got {n}")
    if np.any(kr.weights < 0):
        raise ValueError("weights must be nonnegative")
    values = np.empty(1 << n)
    alive = np.zeros(n, dtype=bool)
    for mask in range(1 << n):
        for b in range(n):
            alive[b] = mask >> b & 1
        values[mask] = float(kr.weights[kr.mask_for(alive)].sum())
    if values[0] > 0:
        raise ValueError("tuples annotated True make the query nonzero on the empty world")
    return _from_values(values, n)


def x_value(h: np.ndarray, delta_hat: float) -> float:
    """``X = min_i H_i + (|P| − i) Δ̂`` (eq. 12) over a whole H sequence (private)."""
    n = len(h) - 1
    return float(np.min(h + (n - np.arange(n + 1)) * delta_hat))


def release(
    query: Callable[[frozenset], float],
    participants: Sequence[Any],
    epsilon: float = 0.5,
    privacy: str | None = "node",
    rng: np.random.Generator | None = None,
    **params: Any,
) -> Release:
    """Release a monotonic query with the general recursive mechanism (ε-DP, Theorem 1, g = 1).

    Parameters are those of :func:`provsql_dp.mechanisms.recursive.efficient.release` (θ, β, μ, ε₁, ε₂),
    and so is the noise: ``ĵ`` and ``X̂`` are released with exact discrete Laplace noise, ``X̂`` on
    the public grid :attr:`Release.grid` of ``plan_laplace(Δ̂, ε₂)``.
    The released ``X̂`` under-estimates ``q(P)`` by a data-dependent truncation bias (Lemma 8).
    """
    p = resolve_params(epsilon, privacy, **params)
    h, g = sequences(query, participants)
    n = len(h) - 1
    j, _ = delta_search(lambda j: float(g[n - j]), float(g[n]), n, p["theta"], p["beta"])
    gen = resolve_rng(rng)
    delta_hat = release_delta_hat(j, p, gen)
    x = x_value(h, delta_hat)
    value = release_x(x, delta_hat, p["eps2"], gen)
    return Release(
        value=float(value), epsilon=float(p["eps1"] + p["eps2"]), delta_hat=float(delta_hat),
        params=p, mechanism="general",
    )
