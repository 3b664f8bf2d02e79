"""R2T's fast paths held to the slow ones: the reduced truncation LP equals the plain LP (and
PuLP on tiny instances), its bounds bracket it, and the lazy race returns bit for bit what the
eager race (every LP solved, noise drawn per threshold) returns with the same generator."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from provsql_dp.mechanisms.r2t import _columns as _r2t_columns
from provsql_dp.mechanisms.r2t import race as r2t
from provsql_dp.mechanisms.r2t.truncation import R2TModel

from recursive_testkit import random_kr
from test_r2t import pulp_truncation

seeds = st.integers(0, 2**32 - 1)
shapes = st.sampled_from([(5, 7, 3), (8, 30, 2), (10, 40, 1), (6, 20, 3)])


def kr_of(seed, shape, integer=False):
    n, n_tuples, max_monos = shape
    return random_kr(np.random.default_rng(seed), n=n, n_tuples=n_tuples, max_monos=max_monos,
                     integer_weights=integer)


@settings(max_examples=60, deadline=None)
@given(seeds, shapes, st.booleans(), st.floats(0.0, 1.2))
def test_reduced_lp_equals_plain_lp_and_bounds_bracket_it(seed, shape, integer, frac):
    kr = kr_of(seed, shape, integer)
    m = R2TModel(kr)
    tau = frac * m.max_load
    q = m.value(tau)
    assert q == pytest.approx(m.plain_value(tau), abs=1e-6)
    lo, hi = m.bounds(tau)
    assert lo - 1e-6 <= q <= hi + 1e-6


@settings(max_examples=20, deadline=None)
@given(seeds, st.sampled_from([0.5, 1.0, 2.0, 4.0]))
def test_reduced_lp_matches_pulp(seed, tau):
    kr = kr_of(seed, (5, 7, 3))
    assert R2TModel(kr).value(tau) == pytest.approx(pulp_truncation(kr, tau), abs=1e-6)


@settings(max_examples=30, deadline=None)
@given(seeds, shapes, st.floats(0.0, 3.0))
def test_q_is_nondecreasing_and_q_over_tau_nonincreasing(seed, shape, frac):
    m = R2TModel(kr_of(seed, shape))
    a = max(frac * m.max_load, 1e-3)
    qa, qb = m.value(a), m.value(2 * a)
    assert qa <= qb + 1e-6 and qb / (2 * a) <= qa / a + 1e-6


@settings(max_examples=60, deadline=None)
@given(seeds, shapes, st.sampled_from([0.5, 2.0, 10.0, 50.0]), st.sampled_from([4, 16, 2**10]),
       st.integers(0, 2**32 - 1))
def test_lazy_race_equals_eager_race(seed, shape, eps, gs, noise_seed):
    kr = kr_of(seed, shape)
    fast = r2t.release(kr, eps, max_contribution=gs, rng=np.random.default_rng(noise_seed), lp_gap=0)
    m = R2TModel(kr)
    values = [m.plain_value(t) for t in r2t.thresholds(gs)]
    slow = r2t._race(values, eps, gs, r2t.DEFAULT_BETA, np.random.default_rng(noise_seed), 0)
    assert fast.value == slow.value


@settings(max_examples=100, deadline=None)
@given(st.floats(0, 1e7), st.floats(0.01, 1e3), st.floats(0.01, 10), st.integers(0, 2**32 - 1))
def test_released_with_is_release(q, sens, eps, noise_seed):
    p = r2t.plan_laplace(sens, eps)
    noise = p.release(0.0, rng=np.random.default_rng(noise_seed))
    assert r2t.released_with(p, q, noise) == p.release(q, rng=np.random.default_rng(noise_seed))


def test_large_thresholds_need_no_lp():
    kr = kr_of(3, (8, 30, 2))
    stats = r2t.LPStats()
    m = R2TModel(kr, stats=stats)
    assert m.value(m.max_load) == pytest.approx(float(kr.weights.sum()))
    assert m.bounds(2 * m.max_load) == (m.total, m.total) and stats.n_lps == 0


@settings(max_examples=60, deadline=None)
@given(seeds, shapes, st.booleans(), st.floats(0.0, 1.2), st.sampled_from([1, 3, 50]))
def test_column_generation_equals_plain_lp(seed, shape, integer, frac, batch):
    kr = kr_of(seed, shape, integer)
    m = R2TModel(kr)
    m.colgen_above, m.colgen_batch = 0, batch  # every reduced LP by columns, few at a time
    tau = frac * m.max_load
    plain = m.plain_value(tau)
    for shrink in (False, True):
        _r2t_columns.SHRINK = shrink
        try:
            assert m.value(tau) == pytest.approx(plain, abs=1e-6)
        finally:
            _r2t_columns.SHRINK = False


@settings(max_examples=60, deadline=None)
@given(seeds, shapes, st.booleans(), st.floats(0.0, 1.2))
def test_dual_bound_is_an_upper_bound(seed, shape, integer, frac):
    kr = kr_of(seed, shape, integer)
    m = R2TModel(kr)
    tau = frac * m.max_load
    assert m.plain_value(tau) <= m.dual_bound(tau) + 1e-6
    assert m.dual_bound(tau) <= m.bounds(tau)[1] + 1e-6


@settings(max_examples=40, deadline=None)
@given(seeds, st.integers(2, 6), st.sampled_from([1.0, 2.0, 3.0, 5.0]))
def test_merged_columns_keep_the_optimum(seed, copies, tau):
    """Many single-monomial tuples share their monomial (merged into one column): the reduced
    LP's value is the plain LP's and PuLP's."""
    from provsql_dp.provenance.krelation import KRelation

    rng = np.random.default_rng(seed)
    base = [frozenset(("p", int(x)) for x in rng.choice(6, size=rng.integers(1, 4), replace=False))
            for _ in range(5)]
    annotations = [[b] for b in base for _ in range(copies)]
    weights = rng.integers(1, 4, size=len(annotations)).astype(float)
    kr = KRelation.from_annotations(rows=[(k,) for k in range(len(annotations))],
                                    annotations=annotations, weights=weights)
    m = R2TModel(kr)
    assert m.value(tau) == pytest.approx(m.plain_value(tau), abs=1e-6)
    assert m.value(tau) == pytest.approx(pulp_truncation(kr, tau), abs=1e-6)


@settings(max_examples=60, deadline=None)
@given(seeds, shapes, st.booleans(), st.floats(0.0, 1.2), st.sampled_from([1, 2, 3]))
def test_blocks_solved_apart_sum_to_the_plain_lp(seed, shape, integer, frac, min_rows):
    """Connected components solved as separate LPs (every size of block) give the plain LP's
    value."""
    kr = kr_of(seed, shape, integer)
    m = R2TModel(kr)
    m.min_block_rows = min_rows
    tau = frac * m.max_load
    assert m.value(tau) == pytest.approx(m.plain_value(tau), abs=1e-6)


def test_time_limit_is_shared_by_the_blocks_of_one_threshold(monkeypatch):
    """Each block gets what is left of the threshold's time limit, not the whole limit again."""
    from provsql_dp.mechanisms.r2t import truncation as r2t_lp
    from provsql_dp.provenance.krelation import KRelation

    # four disjoint groups of participants: four blocks at τ = 1
    annotations = [[{("p", 2 * g), ("p", 2 * g + 1)}] for g in range(4) for _ in range(3)]
    kr = KRelation.from_annotations(rows=[(k,) for k in range(12)], annotations=annotations)
    m = R2TModel(kr)
    m.min_block_rows = 1
    seen, real = [], r2t_lp.solve_lp

    def spy(*a, time_limit=None, **k):
        seen.append(time_limit)
        return real(*a, time_limit=time_limit, **k)

    monkeypatch.setattr(r2t_lp, "solve_lp", spy)
    assert m.value(1.0, time_limit=50.0) == pytest.approx(m.plain_value(1.0))
    blocks = seen[:-1]  # the last call is plain_value's
    assert len(blocks) == 4 and all(0 < t <= 50.0 for t in blocks)
    assert blocks == sorted(blocks, reverse=True)
