r"""Histograms under a Blowfish policy with publicly known counts (He et al. §3, §4 and §8).

A *count constraint* makes a count public: the number of records whose value lies in a group of
values (a total, the cells of a marginal, any declared group). With constraints ``Q``, two
databases are neighbours (He et al. Def. 4.1) when both satisfy ``Q``, they differ in at least
one secret pair (an edge of the policy graph, ⊥ included), and no database satisfying ``Q``
differs from the first in a strictly smaller set of secret pairs, or in the same set with
strictly fewer changed records. Neighbours may therefore differ in several records: a record
leaving a group must be compensated by another entering it.

Sensitivity of the histogram (:func:`histogram_sensitivity`)
-----------------------------------------------------------
Groups are disjoint. Let ``H`` be the multigraph whose vertices are the groups plus one *free*
vertex (values in no group, and ⊥), with one edge per changed record (from its old group to its
new one). Neighbours preserve every group's count, so their changes form a union of cycles in
``H``; if they formed two or more (or revisited a vertex), applying one of those cycles alone
would give a database satisfying ``Q`` with a strictly smaller set of secret pairs or the same
set and fewer changes — so a neighbour's changes are **one simple cycle**: at most one record
per group vertex. Around the cycle, each vertex receives one record (at some value) and loses
one (at some value); the histogram moves by 2 at that vertex when the two values differ, which
needs a group of two values or more (on the free vertex: 2 with two free values, 1 with one free
value and ⊥, whose records are not counted). Hence, with ``c(g) = 2`` for a group of ≥ 2 values
and 0 for a single value (a single-value group's count is its histogram cell: public),

* ``S = s₁`` — one record moving inside a vertex (2, or 1 to or from ⊥; 0 if no secret pair lies
  inside a vertex) — when no secret pair joins two different vertices of ``H``: every neighbour
  is then one such move (e.g. a ``PARTITION`` policy whose cells are the groups);
* otherwise ``S ≤ max(s₁, Σ_v c(v))``: the longest cycle passes every vertex once. The bound is
  attained when the secret graph is complete (DP with a known marginal over cells of several
  values: ``S = 2·(number of marginal cells)``); for sparse graphs a neighbour may compensate a
  secret move by moves that are not secrets, so the bound is kept.
  ``tests/unit/policies/blowfish/test_constraints.py`` checks it by brute force over every pair
  of neighbouring databases on tiny domains.

With a BOUNDED policy the free vertex's count is implied (n minus the known counts), which the
same cycle argument covers. ``S = 0`` (every count public) releases the histogram as it is.

Known totals are **published**: the release is projected onto them (least squares: each group's
noisy cells are shifted equally so that they sum to its known count), which is free
post-processing of public numbers and lowers each cell's variance by the factor ``1 − 1/|g|``.

>>> import numpy as np
>>> from provsql_dp.policies.blowfish.policy import Policy
>>> histogram_sensitivity(Policy.full(6), [[0, 1, 2], [3, 4, 5]])      # a known marginal of 2
4
>>> histogram_sensitivity(Policy.full(6), [[0, 1, 2, 3, 4, 5]])        # the total: bounded DP
2
>>> histogram_sensitivity(Policy.line(6, bounded=False), [[0, 1], [2, 3]])   # 4, 5 free
6
>>> rel = release_histogram(np.array([3, 0, 1, 2, 2, 0]), Policy.full(6), [[0, 1, 2], [3, 4, 5]],
...                         1.0, rng=np.random.default_rng(0))
>>> rel.sensitivity, [round(float(v), 6) for v in (rel.values[:3].sum(), rel.values[3:].sum())]
(4, [4.0, 4.0])
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._ops import SafeNoise
from ._plan import NOISE_INFLATION, Plan
from .policy import Policy

__all__ = ["check_groups", "histogram_sensitivity", "ConstrainedRelease", "release_histogram",
           "marginal_groups", "known_counts_plan"]


def check_groups(groups, k: int) -> list:
    """Groups as sorted lists of value indices in ``[0, k)``, disjoint and non-empty."""
    out, seen = [], np.zeros(k, dtype=bool)
    for g in groups:
        g = sorted({int(v) for v in g})
        if not g:
            raise ValueError("a group of known counts is empty")
        if g[0] < 0 or g[-1] >= k:
            raise ValueError(f"a group of known counts names value {g[-1] if g[-1] >= k else g[0]}"
                             f" outside the domain [0, {k})")
        if seen[g].any():
            raise ValueError("groups of known counts must be disjoint (a value is in two groups)")
        seen[g] = True
        out.append(g)
    if not out:
        raise ValueError("give at least one group of known counts")
    return out


def marginal_groups(shape, axis: int) -> list:
    """The groups of a 2-D domain (row-major) whose totals form the marginal over ``axis``."""
    k1, k2 = int(shape[0]), int(shape[1])
    idx = np.arange(k1 * k2).reshape(k1, k2)
    return [idx[i, :].tolist() for i in range(k1)] if axis == 0 else \
        [idx[:, j].tolist() for j in range(k2)]


def histogram_sensitivity(policy: Policy, groups) -> int:
    """L1 sensitivity of the full histogram over neighbours that keep the known counts."""
    k = policy.k
    groups = check_groups(groups, k)
    label = np.full(k, -1, dtype=np.int64)
    for i, g in enumerate(groups):
        label[g] = i
    u, v = policy.value_edges()
    bottom = policy.has_bottom
    nb = policy.bottom_neighbours() if bottom else np.zeros(0, dtype=np.int64)
    cross = bool(np.any(label[u] != label[v])) if u.size else False
    cross = cross or bool(np.any(label[nb] >= 0))  # ⊥ is on the free vertex
    inside = bool(np.any(label[u] == label[v])) if u.size else False
    s1 = 2 if inside else (1 if bool(np.any(label[nb] < 0)) else 0)
    if not cross:
        return s1
    free = int(np.sum(label < 0))
    cycle = 2 * sum(1 for g in groups if len(g) >= 2)
    cycle += 2 if free >= 2 else (1 if free == 1 and bottom else 0)
    return max(s1, cycle)


@dataclass
class ConstrainedRelease:
    """A histogram released under known counts: ``values`` (one per cell, projected onto the
    known totals), ``variances`` (exact-noise bounds per cell), ``sensitivity``, ``noise_plans``."""

    values: np.ndarray
    variances: np.ndarray
    sensitivity: int
    epsilon: float
    noise_plans: tuple = field(repr=False, default=())

    @property
    def expected_mse(self) -> float:
        return float(np.mean(self.variances)) if self.variances.size else 0.0


def _project(z, x, groups):
    for g in groups:
        z[g] += (x[g].sum() - z[g].sum()) / len(g)  # the known total, public by declaration
    return z


def known_counts_plan(policy: Policy, groups) -> Plan:
    """The histogram of every cell under the known counts, as a :class:`~._plan.Plan`
    (``unit_var``: each cell's variance at ε = 1, exact for the projected noise)."""
    groups = check_groups(groups, policy.k)
    s = histogram_sensitivity(policy, groups)
    unit = np.full(policy.k, 2.0 * float(s) ** 2)
    for g in groups:
        unit[g] *= 1.0 - 1.0 / len(g)

    def run(x, exact, eps, noise):
        x = np.asarray(x, dtype=float).ravel()
        if s == 0:  # every cell is a known count: nothing is secret
            return x.copy()
        # a neighbour changes at most s cells, each by ±1
        return _project(noise.release(x, s, eps, changed=s), x, groups)

    return Plan("known_counts", f"laplace on every cell, sensitivity {s} under the known counts "
                f"({len(groups)} groups), projected onto them", unit, run)


def release_histogram(x, policy: Policy, groups, epsilon: float, rng=None) -> ConstrainedRelease:
    """Every cell of ``x`` with exact discrete Laplace noise of scale ``S/ε`` (``S`` from
    :func:`histogram_sensitivity`), then each group shifted to its known total."""
    x = np.asarray(x, dtype=float).ravel()
    if x.size != policy.k:
        raise ValueError(f"x has {x.size} cells but the policy's domain has {policy.k}")
    plan = known_counts_plan(policy, groups)
    noise = SafeNoise(rng)
    z = plan.run(x, None, epsilon, noise)
    infl = max([NOISE_INFLATION] + [float(p.inflation) for p in noise.plans])
    var = plan.unit_var * (infl / float(epsilon)) ** 2
    s = histogram_sensitivity(policy, groups)
    return ConstrainedRelease(z, var, s, float(epsilon), tuple(noise.plans))
