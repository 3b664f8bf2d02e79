"""The diagonal certificates of the Δ-search LP (mechanisms/recursive/_j_diagonal.py): below and
above J(W) (the plain LP, PuLP/CBC on conjunctive instances) on random DNF, their tangent cut
below J everywhere, the exact line search, and the Δ search / release unchanged with them."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import breadth
from hypothesis import given, settings
from hypothesis import strategies as hs
from recursive_testkit import make_kr, random_kr
from test_recursive_certify import pulp_j, random_triangles

from provsql_dp.mechanisms.recursive import efficient as rm
from provsql_dp.mechanisms.recursive._j_diagonal import diagonal_bounds, line_max
from provsql_dp.mechanisms.recursive._lp import Solver
from provsql_dp.mechanisms.recursive._structure import Structure, reduced


def _views(kr):
    st = Structure(kr)
    return st, [st.load_view(), reduced(st).load_view()]  # the plain view and the quotient's


@breadth(12, 60, seed=hs.integers(0, 2**32 - 1))
def test_bounds_enclose_the_plain_j_and_the_cut_is_below_it(seed):
    """General DNF (disjunctions, repeated participants, weights), plain view and quotient."""
    rng = np.random.default_rng(seed)
    kr = random_kr(rng, n=int(rng.integers(3, 10)), n_tuples=int(rng.integers(2, 24)),
                   max_monos=3, max_size=3)
    st, views = _views(kr)
    if st.n == 0:
        return
    plain = Solver(st, first_order=False, cuts=False)
    top = float(st.load_view().deg.max())
    for frac in rng.uniform(0.02, 1.1, size=4):
        cap = float(frac) * top
        ref = plain.j_value(cap)[0]
        for v in views:
            slope, lower, upper = diagonal_bounds(v, cap)
            assert lower <= ref + 1e-7 * max(1.0, ref), (lower, ref)
            assert ref <= upper + 1e-7 * max(1.0, ref), (ref, upper)
            assert slope <= 0.0
            for w2 in rng.uniform(0.0, 1.2, size=3) * top:
                assert lower + slope * (float(w2) - cap) <= plain.j_value(float(w2))[0] + 1e-6


@pytest.mark.parametrize("seed", range(4))
def test_bounds_enclose_pulp_on_triangles(seed):
    rng = np.random.default_rng(700 + seed)
    kr = random_triangles(rng, n=12, p=0.55)
    st, views = _views(kr)
    top = float(st.deg.max())
    for frac in (0.9, 0.5, 0.2):
        ref = pulp_j(kr, frac * top)
        for v in views:
            _, lower, upper = diagonal_bounds(v, frac * top)
            assert lower <= ref + 1e-7 and ref <= upper + 1e-7


def test_star_joins_are_decided_tightly():
    """Q21's shape: heavy hubs (suppliers) and light leaves (orders), one monomial {hub, leaf}
    per tuple: the diagonal bounds meet at J = Σ (1 − W / deg)."""
    ann, hubs = [], 6
    for h in range(hubs):
        for leaf in range(40):
            ann.append([[h, hubs + (h * 40 + leaf) // 3]])  # each leaf in ≤ 3 tuples of a hub
    kr = make_kr(ann)
    st = Structure(kr)
    cap = 10.0
    _, lower, upper = diagonal_bounds(st.load_view(), cap)
    exact = Solver(st, first_order=False, cuts=False).j_value(cap)[0]
    assert abs(upper - exact) <= 1e-9 * exact and lower >= exact * (1 - 1e-8)
    assert abs(exact - hubs * (1 - cap / 40)) <= 1e-9


@breadth(40, 200, b=hs.floats(-5, 50), data=hs.data())
def test_line_max_is_the_maximum_of_the_concave_function(b, data):
    n = data.draw(hs.integers(1, 8))
    a = np.array(data.draw(hs.lists(hs.floats(0, 10), min_size=n, max_size=n)))
    a[a < 1e-3] = 0.0
    c = np.array(data.draw(hs.lists(hs.floats(0.01, 10), min_size=n, max_size=n)))

    def f(al):
        return al * b - np.maximum(al * a - c, 0.0).sum()

    al = line_max(b, a, c)
    if not np.isfinite(al):
        assert b > 0 and not (a > 0).any()
        return
    if b > a.sum():  # unbounded above: any α is a valid multiplier, the last breakpoint is used
        assert al == max(c[a > 0] / a[a > 0])
        return
    grid = np.concatenate([[0.0], c[a > 0] / a[a > 0], np.linspace(0, 2 * al + 5, 50)])
    assert f(al) >= max(f(x) for x in grid) - 1e-9 * (1 + abs(f(al)))


@pytest.mark.slow  # ~8 s idle (32 s loaded): CI's slow step (session 11)
@settings(max_examples=30, deadline=None)
@given(seed=hs.integers(0, 2**32 - 1))
def test_delta_and_release_are_unchanged_by_the_diagonal_certificates(seed):
    """The Δ search with the diagonal step equals the plain-LP search; the release under a seed
    (first-order path forced, as on large models) is bit-identical with and without it."""
    from provsql_dp.mechanisms.recursive import _delta_lp, _lp

    rng = np.random.default_rng(seed)
    if rng.random() < 0.5:
        kr = random_kr(rng, n=int(rng.integers(3, 12)), n_tuples=int(rng.integers(2, 30)),
                       max_monos=2, max_size=3)
    else:
        kr = random_triangles(rng, n=int(rng.integers(6, 14)), p=float(rng.uniform(0.3, 0.8)))
    params = rm.resolve_params(0.5, "node", theta=1.0, beta=None, mu=None, eps1=None, eps2=None)
    st = Structure(kr)
    plain = rm._Run(st, params, first_order=False, cuts=False).delta()
    assert rm._Run(st, params, first_order=True).delta() == plain  # the diagonal step runs
    real = _delta_lp.diagonal_bounds
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_lp, "_FIRST_ORDER_MIN", -1)  # the path of large models
        with_diag = rm.release(kr, epsilon=0.5, rng=np.random.default_rng(seed % 1000)).value
        m.setattr(_delta_lp, "diagonal_bounds",  # never settling: the former path
                  lambda v, cap, decided=None: (0.0, 0.0, float("inf")))
        without = rm.release(kr, epsilon=0.5, rng=np.random.default_rng(seed % 1000)).value
    assert _delta_lp.diagonal_bounds is real
    assert with_diag == without
