"""Variance from noisy count, sum and sum of squares: the sensitivity of the three parts by
brute force on neighbouring random databases, the clamp, and the interval's coverage."""

import pytest
import math

import numpy as np
from hypothesis import given, settings, strategies as st

from provsql_dp.mechanisms.global_sensitivity.variance import (
    SPLIT, STATISTICS, release_many_variances, release_variance)

LO, HI = -2.0, 6.0
H = (HI - LO) / 2


def parts(xs):
    y = np.clip(np.asarray(xs, dtype=float), LO, HI) - (LO + HI) / 2
    return len(y), float(y.sum()), float((y * y).sum())


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(-50, 50, allow_nan=False), max_size=30),
       st.floats(-50, 50, allow_nan=False), st.data())
@pytest.mark.slow  # 4-10 s (a rate or brute-force check): CI's second step
def test_one_record_moves_the_parts_by_at_most_their_sensitivity(xs, new, data):
    n, s, q = parts(xs)
    neighbours = [xs + [new]]
    if xs:
        i = data.draw(st.integers(0, len(xs) - 1))
        neighbours.append(xs[:i] + xs[i + 1:])
    for ys in neighbours:
        n2, s2, q2 = parts(ys)
        assert abs(n2 - n) <= 1
        assert abs(s2 - s) <= H * (1 + 1e-12)
        assert abs(q2 - q) <= H * H * (1 + 1e-12)


def test_the_split_adds_to_one():
    assert sum(SPLIT) == 1


def test_values_are_clamped_and_intervals_cover():
    rng = np.random.default_rng(11)
    for stat, (sample, root) in STATISTICS.items():
        hits = 0
        for _ in range(150):
            xs = rng.uniform(-4, 8, 60)
            c = np.clip(xs, LO, HI)
            truth = c.var(ddof=1 if sample else 0)
            truth = math.sqrt(truth) if root else truth
            r = release_variance(*parts(xs), LO, HI, 1.0, stat, rng=rng)
            cap = H * H * (60 / 59 if sample else 1) * 1.2
            assert 0 <= r.value <= (math.sqrt(cap) if root else cap)
            lo, hi = r.interval(0.9)
            hits += lo <= truth <= hi
        assert hits >= 0.9 * 150 - 8, (stat, hits)


def test_empty_and_tiny_tables_release_a_number():
    rng = np.random.default_rng(2)
    for r in release_many_variances([(0, 0.0, 0.0), (1, 0.5, 0.25)], LO, HI, 0.5, "VAR_SAMP",
                                    rng=rng):
        assert 0 <= r.value <= H * H * 2
        lo, hi = r.interval()
        assert lo <= hi


def test_accuracy_at_epsilon_1_on_300_rows():
    rng = np.random.default_rng(4)
    errs = []
    for _ in range(50):
        xs = rng.normal(2, 1.5, 300)
        truth = np.clip(xs, LO, HI).std(ddof=1)
        errs.append(release_variance(*parts(xs), LO, HI, 1.0, "STDDEV_SAMP", rng=rng).value
                    - truth)
    assert np.sqrt(np.mean(np.square(errs))) < 0.15
