"""The barrier's speed-ups for ca-HepPh node (mechanisms/recursive/_x_barrier.py), all time only:

* the line search's accepted trial gives the next step's value and ``(1 − A g)/μ``: the Newton
  path is the former one **bit for bit** (with the other two changes off), with fewer
  evaluations of the smoothed objective;
* :meth:`AnchoredBarrier.single_move` is the best one-column move of the eq.-20 minimiser (brute
  force over the columns), a point of the row in the box, so its objective bounds ``H(j)`` from
  above (the plain LP's H);
* the paths run in the order of the one-column moves, each ended early once a target rules
  its ``j`` out;
* a path ended at a degenerate optimum (forced on every path here) leaves ``j`` to the Kelley
  rounds over ``C`` first: X and every exact H through ``Solver.h_pair`` are the plain LP's, on
  random graphs and on graphs with a clique (eq. 20's optimum ``g = 1/3`` on the clique, as the
  240-author collaboration of ca-HepPh), and H agrees with PuLP's CBC on some.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import breadth
from hypothesis import given, settings
from hypothesis import strategies as hs
from recursive_testkit import make_kr, pulp_h
from scipy.special import expit
from test_recursive_certify import random_triangles
from test_x_barrier import _PARAMS, _close, _model, _plain_h

from provsql_dp.mechanisms.recursive import _x_barrier
from provsql_dp.mechanisms.recursive import efficient as rm
from provsql_dp.mechanisms.recursive._structure import Structure

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:pulp")


def _former_newton(bar, j):
    """The Newton path as it was (every step evaluates the smoothed objective at its start)."""
    g = bar._start(j)
    nc, mult = bar.nc, bar.mult
    kkt = np.zeros((nc + 1, nc + 1))
    kkt[:nc, nc] = kkt[nc, :nc] = mult
    pi = bar.q.copy()
    for mu in _x_barrier.MUS:
        for _ in range(30):
            if bar.newton_steps >= _x_barrier.MAX_NEWTON:
                return g, pi
            bar.newton_steps += 1
            a = (1.0 - bar.A @ g) / mu
            sig = expit(a)
            pi = bar.q * sig
            grad = -(bar.At @ pi) - mu * (1.0 / g - 1.0 / (1.0 - g))
            live = np.abs(a) < 36.0
            kkt[:nc, :nc] = bar.hessian(np.where(live, pi * (1.0 - sig) / mu, 0.0))
            kkt[np.arange(nc), np.arange(nc)] += mu * (1.0 / g**2 + 1.0 / (1.0 - g) ** 2)
            rhs = np.concatenate([-grad, [j - mult @ g]])
            try:
                step = np.linalg.solve(kkt, rhs)[:nc]
            except np.linalg.LinAlgError:
                return g, pi
            if not np.all(np.isfinite(step)):
                return g, pi
            dec = -float(grad @ step)
            t = 1.0
            neg, pos = step < 0, step > 0
            if neg.any():
                t = min(t, 0.99 * float(np.min(-g[neg] / step[neg])))
            if pos.any():
                t = min(t, 0.99 * float(np.min((1.0 - g[pos]) / step[pos])))
            f0 = bar._smoothed(g, mu, a)
            while t > 1e-12 and bar._smoothed(g + t * step, mu) > f0 - 0.25 * t * max(dec, 0.0):
                t *= 0.5
            g = np.clip(g + t * step, 1e-15, 1 - 1e-15)
            if dec < 1e-6 or dec < 1e-9 * abs(f0):
                break
    return g, pi


@settings(max_examples=12, deadline=None)
@given(seed=hs.integers(0, 2**32 - 1))
def test_the_reused_line_search_is_the_former_path_bit_for_bit(seed):
    kr, st, s, xc, j_real, dh = _model(seed)
    if xc is None or not _x_barrier.applicable(xc):
        return
    j = float(max(0, math.floor(j_real)))
    calls = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_x_barrier, "FEW_LIVE", -1.0)  # the pairs' Hessian on every step
        mp.setattr(_x_barrier, "DEGENERATE_MU", 0.0)  # the whole path
        smoothed = _x_barrier.AnchoredBarrier._smoothed
        mp.setattr(_x_barrier.AnchoredBarrier, "_smoothed",
                   lambda self, g, mu, a=None: calls.append(1) or smoothed(self, g, mu, a))
        g_new, pi_new = _x_barrier.AnchoredBarrier.of(xc).newton(j)
        new_calls = len(calls)
        calls.clear()
        g_old, pi_old = _former_newton(_x_barrier.AnchoredBarrier.of(xc), j)
    assert np.array_equal(g_new, g_old) and np.array_equal(pi_new, pi_old)
    assert new_calls <= len(calls)


@settings(max_examples=25, deadline=None)
@given(seed=hs.integers(0, 2**32 - 1))
def test_single_move_is_the_best_one_column_move_and_an_upper_bound(seed):
    kr, st, s, xc, j_real, dh = _model(seed)
    if xc is None or not _x_barrier.applicable(xc):
        return
    bar = _x_barrier.AnchoredBarrier.of(xc)
    for j in sorted({math.floor(j_real), math.ceil(j_real)}):
        g = bar.single_move(float(j))
        moves = []
        for c in range(bar.nc):
            h = bar.g_star.copy()
            h[c] += (j - float(bar.mult @ bar.g_star)) / bar.mult[c]
            if -1e-12 <= h[c] <= 1 + 1e-12:
                moves.append(bar.objective(np.clip(h, 0.0, 1.0)))
        if g is None:
            assert not moves
            continue
        assert np.all((g >= 0.0) & (g <= 1.0))
        assert abs(float(bar.mult @ g) - j) <= 1e-9 * max(1.0, j)  # the row, to rounding
        assert _close(bar.objective(g), min(moves), 1e-12)
        ref = _plain_h(st, j)
        assert ref <= bar.objective(g) + 1e-7 * max(1.0, ref), (j, bar.objective(g), ref)


def _clique_triangles(rng, m, n):
    """Node-privacy triangles of a clique on ``m`` vertices plus ``n − m`` others, each joined
    to a few clique vertices and to each other at random."""
    adj = np.triu(rng.random((n, n)) < 0.35, 1)
    adj[:m, :m] = np.triu(np.ones((m, m), dtype=bool), 1)
    adj = adj | adj.T
    tris = [[[a, b, c]] for a in range(n) for b in range(a + 1, n) for c in range(b + 1, n)
            if adj[a, b] and adj[a, c] and adj[b, c]]
    return make_kr(tris, n_participants=n)


@breadth(4, 20, seed=hs.integers(0, 2**32 - 1), clique=hs.booleans())
def test_x_with_every_path_degenerate_is_the_plain_x(seed, clique):
    rng = np.random.default_rng(seed)
    if clique:
        kr = _clique_triangles(rng, int(rng.integers(5, 9)), int(rng.integers(9, 13)))
    else:
        kr = random_triangles(rng, n=int(rng.integers(6, 14)), p=float(rng.uniform(0.3, 0.9)))
    st = Structure(kr)
    top = float(st.deg.max())
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_x_barrier, "DEGENERATE_MU", 1.0)  # every path ends after its first weight
        mp.setattr(_x_barrier, "DEGENERATE_FRACTION", -1.0)
        for dh in rng.uniform(0.05, 1.2, size=2) * top:
            cut = rm._Run(st, _PARAMS, cuts=True)
            x_c, _ = cut.x(float(dh))
            x_p, _ = rm._Run(st, _PARAMS, cuts=False).x(float(dh))
            assert _close(x_c, x_p), (x_c, x_p)
            for j, h in cut.h_values.items():
                assert _close(h, _plain_h(st, j)), (j, h)


def test_clique_h_next_to_the_argmin_is_cbc_h():
    """On a clique whose eq.-20 optimum is degenerate, H at both sides of the argmin through
    the degenerate route equals PuLP's (CBC) H."""
    checked = 0
    for seed in range(6):
        rng = np.random.default_rng(4100 + seed)
        kr = _clique_triangles(rng, 7, 10)
        st = Structure(kr)
        cut = rm._Run(st, _PARAMS, cuts=True)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(_x_barrier, "DEGENERATE_MU", 1.0)
            mp.setattr(_x_barrier, "DEGENERATE_FRACTION", -1.0)
            cut.x(0.3 * float(st.deg.max()))
        for j, h in cut.h_values.items():
            if st.n == st.n_total:
                assert _close(h, pulp_h(kr, st.n_total - j)), (seed, j, h)
                checked += 1
    assert checked > 0


@breadth(4, 20, seed=hs.integers(0, 2**32 - 1), single=hs.booleans())
def test_x_with_targets_on_every_newton_weight_is_the_plain_x(seed, single):
    """The paths in the one-column moves' order, each asked for its target from the first
    smoothing weight (or the former order, SINGLE_MOVE off): X and the exact H are the plain ones."""
    rng = np.random.default_rng(seed)
    kr = _clique_triangles(rng, int(rng.integers(5, 9)), int(rng.integers(9, 13)))
    st = Structure(kr)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_x_barrier, "RULE_MU", 1.0)
        mp.setattr(_x_barrier, "SINGLE_MOVE", single)
        for dh in rng.uniform(0.05, 1.2, size=2) * float(st.deg.max()):
            cut = rm._Run(st, _PARAMS, cuts=True)
            x_c, _ = cut.x(float(dh))
            assert _close(x_c, rm._Run(st, _PARAMS, cuts=False).x(float(dh))[0])
            for j, h in cut.h_values.items():
                assert _close(h, _plain_h(st, j)), (j, h)
