"""Blowfish releases through the exact sampler: rows on the public grid, exact reconstruction.

* every strategy, run with *zero* noise (a stub in place of :class:`SafeNoise`), answers exactly
  ``W·x``: the released-rows rewrite ``public part + W_T·A⁺(A·v)`` and the exact noise-only grid
  form compute the right thing (a deterministic check, sharper than the statistical ones of
  ``test_strategies``);
* every number a strategy releases lies on the grid of its plan, and the plans — hence the grids
  — are the same for policy-neighbouring histograms (they depend on ε and the policy only);
* the operators' exact pseudo-inverses agree with the float ones and with each other (Python
  ints against int64), within the bound that decides when int64 is safe;
* the grid strategies' int64 path equals the Python-int path on the same noise.
"""

from __future__ import annotations

from fractions import Fraction
from unittest import mock

import numpy as np
import pytest
from conftest import breadth
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from provsql_dp.mechanisms.noise.safe_noise import on_grid
from provsql_dp.policies import blowfish as bf
from provsql_dp.policies.blowfish import _exact
from provsql_dp.policies.blowfish import grid_plans as gp
from provsql_dp.policies.blowfish._ops import Hierarchical, Identity, Privelet, SafeNoise
from provsql_dp.policies.blowfish.strategies import plans

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

POLICIES = [
    bf.Policy.line(24), bf.Policy.threshold(24, 3), bf.Policy.full(24),
    bf.Policy.full(24, bounded=False), bf.Policy.partition(np.arange(24) // 6),
    bf.Policy.line(24, bounded=False, sources=[0]),
    bf.Policy.grid(6, 5), bf.Policy.grid(6, 5, 2),
    bf.Policy.grid(6, 5, bounded=False, sources=[0, 7]),
    bf.Policy.compose(bf.Policy.line(6), bf.Policy.line(5)),
]
# the default run: the cheap policies (1-D line, 2-D grids and product); the other 1-D ones took
# ~80% of the file (5-35 s each, idle to loaded): CI's second step, as in test_strategies.py
_QUICK = {0, 6, 7, 8, 9}  # indices into POLICIES
_BY_COST = [p if i in _QUICK else pytest.param(p, marks=pytest.mark.slow)
            for i, p in enumerate(POLICIES)]


class ZeroNoise(SafeNoise):
    """Releases values unchanged and draws zero integers: the mechanism's deterministic part."""

    def release(self, values, sensitivity, epsilon, changed=None):
        super().release(np.zeros(1), sensitivity, epsilon, changed)  # record a valid plan
        return np.array(values, dtype=float)

    def integers(self, shape, sensitivity, epsilon):
        super().integers(1, sensitivity, epsilon)
        return np.zeros(tuple(int(d) for d in np.atleast_1d(shape)), dtype=np.int64)


class Recording(SafeNoise):
    """The real exact noise, keeping every released array next to its plan."""

    def __init__(self, rng):
        super().__init__(rng)
        self.released = []

    def release(self, values, sensitivity, epsilon, changed=None):
        out = super().release(values, sensitivity, epsilon, changed)
        self.released.append((self.plans[-1], out))
        return out


def _workloads(pol, rng):
    if len(pol.shape) == 2:
        return [bf.random_rects(pol.shape, 8, rng),
                bf.Matrix(rng.integers(0, 2, size=(4, pol.k)), shape=pol.shape)]
    return [bf.random_ranges(pol.k, 8, rng), bf.Histogram(pol.k), bf.Prefix(pol.k),
            bf.Matrix(rng.integers(-1, 3, size=(5, pol.k)))]


def _neighbour(pol, x, rng):
    """A policy neighbour of ``x``: one record moved along a policy edge (bounded), or one record
    added at a value adjacent to ⊥ / anywhere for unbounded DP."""
    y = x.copy()
    if pol.bounded:
        u, v = pol.value_edges()
        i = int(rng.integers(len(u)))
        a, b = (int(u[i]), int(v[i])) if x[int(u[i])] >= 1 else (int(v[i]), int(u[i]))
        y[a] -= 1
        y[b] += 1
        return y
    cells = pol.bottom_neighbours()
    y[int(cells[int(rng.integers(cells.size))])] += 1
    return y


@pytest.mark.parametrize("pol", _BY_COST, ids=repr)
@breadth(5, 25, seed=st.integers(0, 2**31 - 1))
@SETTINGS
def test_zero_noise_reproduces_the_exact_answers(pol, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 40, pol.k).astype(float)
    for w in _workloads(pol, rng):
        exact = w.answer(x)
        for p in plans(w, pol):
            got = np.asarray(p.run(x, None, 1.0, ZeroNoise(np.random.default_rng(0))), dtype=float).ravel()
            # (ordered: isotonic fit and clipping to [0, n] keep an exact, monotone prefix)
            assert np.allclose(got, exact, rtol=1e-9, atol=1e-6), p.detail
            if p.name.startswith("grid_"):  # exact arithmetic: bit-for-bit
                assert np.array_equal(got, exact), p.detail


@pytest.mark.parametrize("pol", _BY_COST, ids=repr)
@breadth(5, 25, seed=st.integers(0, 2**31 - 1), eps=st.sampled_from([0.05, 0.5, 1.0, 3.0]))
@SETTINGS
def test_released_rows_lie_on_the_plans_grid_which_neighbours_share(pol, seed, eps):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 12, pol.k).astype(float)
    y = _neighbour(pol, x, rng)
    for w in _workloads(pol, rng)[:2]:
        for p in plans(w, pol):
            rx, ry = Recording(np.random.default_rng(1)), Recording(np.random.default_rng(2))
            p.run(x, None, eps, rx)
            p.run(y, None, eps, ry)
            assert rx.plans, p.detail  # every strategy draws through SafeNoise
            assert rx.plans == ry.plans, p.detail  # grids and scales: public only
            for plan in rx.plans:
                assert plan.epsilon <= eps * (1 + 1e-12) and plan.epsilon_spent <= Fraction(plan.epsilon)
            for plan, out in rx.released + ry.released:
                assert np.all(on_grid(out, plan.grid)), p.detail


OPS = [lambda m: Identity(m), lambda m: Hierarchical(m, 2), lambda m: Hierarchical(m, 3),
       lambda m: Hierarchical(m, 4, block=8), lambda m: Privelet(m), lambda m: Privelet(m, block=4)]


@pytest.mark.parametrize("make", OPS)
@given(m=st.integers(1, 40), seed=st.integers(0, 2**31 - 1),
       big=st.sampled_from([3, 1000, 2**40]))
@SETTINGS
def test_operator_exact_pseudo_inverse(make, m, seed, big):
    op = make(m)
    rng = np.random.default_rng(seed)
    v = rng.integers(-5, 6, m).astype(float)
    A = np.stack([op.apply(e) for e in np.eye(m)], axis=1)  # A column by column
    assert np.allclose(op.apply(v), A @ v)
    assert np.allclose(op.pinv_apply(op.apply(v)), v)  # A⁺A = I: the rewrite is exact
    k = rng.integers(-big, big + 1, (2, op.n_rows))
    num, den = op.pinv_exact(k)
    assert den == op.exact_den
    assert np.allclose(np.asarray(num, dtype=float) / den, op.pinv_apply(k.astype(float)),
                       rtol=1e-9, atol=1e-9 * big)
    kmax = int(np.abs(k).max())
    assert max(abs(int(t)) for t in num.ravel()) <= op.exact_gain * den * kmax
    if den < 2**62 and op.exact_gain * den * kmax < 2**62:
        n64, d64 = op.pinv_exact(k, np.int64)
        assert d64 == den and n64.dtype == np.int64
        assert [int(t) for t in n64.ravel()] == [int(t) for t in num.ravel()]


@pytest.mark.parametrize("kind", ["identity", "hierarchical", "privelet"])
@pytest.mark.parametrize("bounded", [True, False])
@given(seed=st.integers(0, 2**31 - 1), big=st.sampled_from([5, 10**6, 2**45]))
@SETTINGS
def test_grid_int64_path_equals_the_python_int_path(kind, bounded, seed, big):
    rng = np.random.default_rng(seed)
    k1, k2 = int(rng.integers(1, 9)), int(rng.integers(1, 9))
    pol = bf.Policy.grid(k1, k2, bounded=bounded, sources=None if bounded else [0, k1 * k2 - 1])
    w = bf.random_rects((k1, k2), 12, rng)
    x = rng.integers(0, 50, k1 * k2).astype(float)
    mk = {"identity": Identity, "hierarchical": lambda m: Hierarchical(m, 2), "privelet": Privelet}[kind]
    opH, opV = mk(k1), mk(k2)
    kh = rng.integers(-big, big + 1, (k2 - 1, opH.n_rows)) if k2 > 1 else None
    kv = rng.integers(-big, big + 1, (k1 - 1, opV.n_rows)) if k1 > 1 else None
    src = None if bounded else pol.bottom_neighbours()
    ksrc = None if bounded else rng.integers(-big, big + 1, src.size)
    fast = gp.line_noise_answers(w, x, (opH, kh), (opV, kv), src, ksrc)
    with mock.patch.object(gp, "int64_counts", lambda x: None):  # force Python ints
        slow = gp.line_noise_answers(w, x, (opH, kh), (opV, kv), src, ksrc)
    assert np.array_equal(fast, slow)
    # and both are the exact rational, rounded once
    field = np.zeros((k1, k2))
    for fam, (op, kk) in (("h", (opH, kh)), ("v", (opV, kv))):
        if kk is None:
            continue
        z = op.pinv_apply(kk.astype(float))
        if fam == "h":
            field[:, :-1] += z.T
            field[:, 1:] -= z.T
        else:
            field[:-1, :] += z
            field[1:, :] -= z
    if src is not None:
        field.reshape(-1)[src] += ksrc
    approx = _exact.rect_sums(x.reshape(k1, k2) + field, w)
    assert np.allclose(fast, approx, rtol=1e-9, atol=1e-6 * big)


def test_int64_counts_refuses_what_it_cannot_hold_exactly():
    assert _exact.int64_counts([1.0, 2.5]) is None
    assert _exact.int64_counts([2.0**61, 0.0]) is None
    assert _exact.int64_counts([np.nan]) is None
    assert _exact.int64_counts([3.0, -4.0]).tolist() == [3, -4]
