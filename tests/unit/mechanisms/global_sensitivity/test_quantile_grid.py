"""The grid quantile (report-noisy-max on integer rank scores): its privacy invariant by brute
force on neighbouring random databases, exactness of the score computation, and accuracy."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from provsql_dp.mechanisms.global_sensitivity.quantile_grid import (
    bin_index, grid_of, grid_scores, rank_fraction, release_from_counts, release_grid_quantile)

LO, HI, STEPS = -3.0, 7.0, 16


def _scores(values, q):
    k, on = bin_index(values, LO, HI, STEPS)
    c = np.cumsum(np.bincount(k, minlength=STEPS + 1))
    e = np.bincount(k[on], minlength=STEPS + 1)
    return grid_scores(c, c - e, len(values), q)


values = st.lists(st.one_of(st.floats(-10, 10, allow_nan=False),
                            st.sampled_from([-3.0, 7.0, 0.125, 4.5])), max_size=40)


@settings(max_examples=300, deadline=None)
@given(values, st.sampled_from(["0.5", "0.1", "0.9", "0.25", "0.333", "0", "1"]),
       st.data())
def test_every_score_moves_by_at_most_b_between_neighbours(xs, q, data):
    """Add, remove or replace one record: |u_k − u'_k| ≤ b for every grid point (Δu = b)."""
    qf = rank_fraction(q)
    u = _scores(xs, qf)
    new = data.draw(st.floats(-10, 10, allow_nan=False))
    neighbours = [xs + [new]]
    if xs:
        i = data.draw(st.integers(0, len(xs) - 1))
        neighbours += [xs[:i] + xs[i + 1:], xs[:i] + [new] + xs[i + 1:]]
    for ys in neighbours:
        assert np.abs(_scores(ys, qf) - u).max() <= qf.denominator


def test_the_best_score_is_a_true_quantile_grid_point():
    """Score 0 exactly where L_k ≤ q·n ≤ C_k."""
    xs = [0.125, 0.75, 0.75, 1.375, 3.25]  # on the grid -3 + k·0.625
    u = _scores(xs, Fraction(1, 2))
    g = grid_of(LO, HI, STEPS)
    assert set(g[u == 0]) == {0.75}


@pytest.mark.slow
def test_selection_is_exactly_dp_on_a_small_case():
    """The exact output law by enumeration of the noise is not feasible; instead check the
    release frequencies of two neighbours differ by at most e^ε (up to sampling error)."""
    rng = np.random.default_rng(7)
    a = [0.0, 0.625, 1.25, 1.875]
    b = a + [6.875]
    eps = 1.0
    n = 20000
    fa = np.bincount([int(round((release_grid_quantile(a, 0.5, LO, HI, eps, rng=rng, steps=STEPS)
                                 .value - LO) / 0.625)) for _ in range(n)], minlength=STEPS + 1)
    fb = np.bincount([int(round((release_grid_quantile(b, 0.5, LO, HI, eps, rng=rng, steps=STEPS)
                                 .value - LO) / 0.625)) for _ in range(n)], minlength=STEPS + 1)
    big = (fa > 500) & (fb > 500)
    ratio = fa[big] / fb[big]
    assert big.sum() >= 3
    assert (ratio < np.e ** eps * 1.15).all() and (ratio > np.e ** -eps / 1.15).all()


def test_accuracy_on_300_rows_at_epsilon_1():
    """Within a few grid steps of the truth (bounds [2500, 6500], 256 steps of 15.6)."""
    rng = np.random.default_rng(3)
    errs = []
    for _ in range(40):
        xs = rng.normal(4200, 800, 300)
        r = release_grid_quantile(xs, 0.5, 2500.0, 6500.0, 1.0, rng=rng)
        errs.append(abs(r.value - np.median(np.clip(xs, 2500, 6500))) / r.grid)
    assert np.median(errs) <= 3 and max(errs) <= 20
    assert r.interval(0.95) == (2500.0, 6500.0)


def test_refusals():
    with pytest.raises(ValueError):
        rank_fraction("1.5")
    with pytest.raises(ValueError):
        release_from_counts(np.zeros(3), np.ones(3), 0.5, 0, 1, 1.0, steps=2)
