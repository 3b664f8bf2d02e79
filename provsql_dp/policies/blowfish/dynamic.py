"""Dynamic (projected) policies, Liu et al. Def. 3.1 and Thm 3.

A workload of ranges only needs the counts of the cells between consecutive range endpoints.
:func:`project` returns those cells (bin boundaries per axis, for one ``GROUP BY`` in SQL), the
workload rewritten over the cells ``W* = W T⁺`` and the projected policy ``G*``: cells ``c₁, c₂``
are secrets when some policy edge joins a value of ``c₁`` to a value of ``c₂``. Every neighbour
under ``G`` is a neighbour (or an identical table) under ``G*``, so an ``(ε, G*)``-Blowfish
release on the cell counts is ``(ε, G)``-Blowfish on the full domain (Thm 3). Nothing of size
``k`` is ever built: a coarse query on a domain of 10¹² values costs a handful of cells.

>>> from provsql_dp import blowfish as bf
>>> pr = project(bf.Ranges(10**12, [0, 5 * 10**11], [10**12 - 1, 10**12 - 1]), bf.Policy.line(10**12))
>>> pr.policy, pr.bins[0].tolist()
(Policy(line, shape=(2,), bounded), [0, 500000000000, 1000000000000])
>>> pr.workload.lo.tolist(), pr.workload.hi.tolist()
([0, 1], [1, 1])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import NotSupportedError
from .policy import Policy
from .workload import Ranges, Rects, Workload

__all__ = ["Projection", "project"]


@dataclass
class Projection:
    """The projected ``(W*, G*)`` and the cells: cell ``i`` of axis ``a`` holds the values
    ``bins[a][i] <= v < bins[a][i+1]``."""

    workload: Workload
    policy: Policy
    bins: list
    original: Policy

    @property
    def n_cells(self):
        return self.policy.k

    def aggregate(self, x):
        """``x* = T x`` from a materialised histogram (tests; SQL computes it with GROUP BY)."""
        x = np.asarray(x, dtype=float).reshape(self.original.shape)
        for ax, b in enumerate(self.bins):
            x = np.add.reduceat(x, b[:-1], axis=ax)
        return x.ravel()

    def cell_of(self, values, axis=0):
        """Cell index of each original value along ``axis`` (for a SQL CASE / binning)."""
        return np.searchsorted(self.bins[axis], np.asarray(values), side="right") - 1

    def answer(self, x_star, epsilon, strategy=None, rng=None):
        """Answer ``W*`` on the cell counts under ``G*`` (see :func:`provsql_dp.policies.blowfish.answer`)."""
        from ._engine import answer
        return answer(self.workload, x_star, self.policy, epsilon, strategy=strategy, rng=rng)


def _breaks(k, starts, stops):
    return np.unique(np.concatenate([[0, k], np.asarray(starts, np.int64), np.asarray(stops, np.int64)]))


def _project_1d(pol: Policy, b):
    m = b.size - 1
    src = None
    if pol.sources is not None:
        src = np.unique(np.searchsorted(b, pol.sources, side="right") - 1)
    kw = {"bounded": pol.bounded, "sources": src}
    if pol.kind == "full":
        return Policy.full(m, **kw)
    if pol.kind == "line":
        return Policy.line(m, **kw)
    if pol.kind == "threshold":
        t = int(pol.theta)
        # cells i < j are joined when the gap b[j] - (b[i+1] - 1) between them is at most θ
        last = b[1:] - 1
        jmax = np.searchsorted(b[:-1], last + t, side="right") - 1
        if np.all(jmax <= np.arange(m) + 1):
            return Policy.line(m, **kw)
        us = np.repeat(np.arange(m), np.maximum(jmax - np.arange(m), 0))
        offs = np.concatenate([np.arange(1, d + 1) for d in np.maximum(jmax - np.arange(m), 0)]) \
            if us.size else np.zeros(0, np.int64)
        return Policy.graph(m, np.column_stack([us, us + offs]), ordered=True, **kw)
    raise NotSupportedError(f"projection of a {pol.kind} policy is not supported; answer on the "
                            "full domain instead (provsql_dp.policies.blowfish.answer)")


def project(workload: Workload, policy: Policy) -> Projection:
    """Project a range workload and its policy onto the cells the workload needs."""
    if isinstance(workload, Ranges) and len(policy.shape) == 1:
        k = policy.k
        b = _breaks(k, workload.lo, workload.hi + 1)
        lo = np.searchsorted(b, workload.lo, side="right") - 1
        hi = np.searchsorted(b, workload.hi + 1, side="left") - 1
        pp = _project_1d(policy, b)
        return Projection(Ranges(pp.k, lo, hi), pp, [b], policy)
    if isinstance(workload, Rects) and len(policy.shape) == 2:
        ok = (policy.kind == "grid" and policy.theta == 1) or (
            policy.kind == "product" and all(f.kind in ("full", "line", "threshold")
                                             for f in policy.factors))
        if not ok:
            raise NotSupportedError("2-D projection supports the grid G¹ and attribute "
                                    "compositions of FULL, LINE and THRESHOLD graphs; answer on "
                                    "the full domain instead")
        k1, k2 = policy.shape
        b1 = _breaks(k1, workload.r0, workload.r1 + 1)
        b2 = _breaks(k2, workload.c0, workload.c1 + 1)
        r0 = np.searchsorted(b1, workload.r0, side="right") - 1
        r1 = np.searchsorted(b1, workload.r1 + 1, side="left") - 1
        c0 = np.searchsorted(b2, workload.c0, side="right") - 1
        c1 = np.searchsorted(b2, workload.c1 + 1, side="left") - 1
        m1, m2 = b1.size - 1, b2.size - 1
        src = None
        if policy.sources is not None:
            s1, s2 = np.divmod(policy.sources, k2)
            cs = (np.searchsorted(b1, s1, side="right") - 1) * m2 + \
                 (np.searchsorted(b2, s2, side="right") - 1)
            src = np.unique(cs)
        if policy.kind == "grid":
            pp = Policy.grid(m1, m2, 1, bounded=policy.bounded, sources=src)
            return Projection(Rects(pp.shape, r0, r1, c0, c1), pp, [b1, b2], policy)
        # attribute composition (Liu et al. Def. 3.2): a neighbour changes one attribute along
        # an edge of its graph, so its cells change along an edge of that attribute's projected
        # graph: the projection of the product is the product of the projections (Thm 3).
        f1, f2 = (_project_1d(f, b) for f, b in zip(policy.factors, (b1, b2)))
        if m1 == 1 or m2 == 1:
            # a marginal: one axis is a single cell, so the policy on the cells is the other
            # attribute's projected graph, answered by that graph's own 1-D strategies
            f = f2 if m1 == 1 else f1
            if f.kind == "full" and not policy.bounded and src is None:
                # in a composition the factors keep their value edges next to ⊥; a 1-D FULL
                # without sources would have ⊥ edges only (unbounded DP), a weaker policy
                src = np.arange(f.k)
            pp = f.with_bounded(policy.bounded, src)
            lo, hi = (c0, c1) if m1 == 1 else (r0, r1)
            return Projection(Ranges(pp.k, lo, hi), pp, [b1, b2], policy)
        pp = Policy.compose(f1, f2, bounded=policy.bounded, sources=src)
        return Projection(Rects(pp.shape, r0, r1, c0, c1), pp, [b1, b2], policy)
    raise NotSupportedError("projection needs a Ranges workload on a 1-D policy or a Rects "
                            "workload on a 2-D policy")
