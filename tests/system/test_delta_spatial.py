"""Spatial releases end to end, seeded: the noise variances we report are the variances we get,
and the δ-neighbourhood strategies beat their standard-DP counterparts where the paper says."""

import numpy as np
import pytest

from provsql_dp.policies.delta import (
    Policy,
    cumulative,
    equiwidth_histogram,
    median,
    range_count,
    shifted_histograms,
    sorted_points,
)


def _clustered(rng, n=20000):
    c = rng.uniform(0.2, 0.8, size=(8, 2))
    pts = c[rng.integers(0, 8, n)] + rng.normal(0, 0.05, size=(n, 2))
    return np.clip(pts, 0, 1)


def test_shifted_histogram_noise_variance_is_exact():
    rng = np.random.default_rng(1)
    pts = _clustered(rng, 5000)
    pol = Policy(0.01, dims=2)
    q = ([0.2, 0.31], [0.5, 0.47], [0.1, 0.6], [0.4, 0.93])
    runs = np.array([shifted_histograms(pts, pol, 0.5, bin_width=0.05, rng=rng).range_count(*q)
                     for _ in range(300)])
    rel = shifted_histograms(pts, pol, 0.5, bin_width=0.05, rng=rng)
    var = rel.variance(*q)
    emp = runs.var(axis=0)
    assert np.all(np.abs(emp / var - 1) < 0.25)  # 300 draws: ±25% is > 4 standard errors


def test_cumulative_noise_variance_is_exact():
    rng = np.random.default_rng(2)
    pts = rng.beta(2, 5, 3000)
    pol = Policy(0.02)
    runs = np.array([cumulative(pts, pol, 1.0, cells=200, rng=rng).range_count([0.1, 0.333],
                                                                                [0.4, 0.9])
                     for _ in range(400)])
    var = cumulative(pts, pol, 1.0, cells=200, rng=rng).variance([0.1, 0.333], [0.4, 0.9])
    assert np.all(np.abs(runs.var(axis=0) / var - 1) < 0.25)


def test_shifted_beats_equiwidth_on_clustered_data():
    rng = np.random.default_rng(3)
    pts = _clustered(rng)
    qs = []
    for _ in range(300):
        cx, cy = rng.uniform(0.05, 0.95, 2)
        qs.append((cx - 0.05, cx + 0.05, cy - 0.05, cy + 0.05))
    q = np.array(qs).T
    truth = np.array([np.sum((pts[:, 0] >= a) & (pts[:, 0] < b) & (pts[:, 1] >= c) & (pts[:, 1] < d))
                      for a, b, c, d in qs])
    pol = Policy(0.001, dims=2)

    def mse(rel):
        return np.mean((rel.range_count(*q) - truth) ** 2)

    base, shifted = {}, {}
    for w in (0.01, 0.02, 0.04):
        base[w] = mse(equiwidth_histogram(pts, pol, 1.0, w, rng=rng))
        shifted[w] = mse(shifted_histograms(pts, pol, 1.0, bin_width=w, rng=rng))
        assert shifted[w] < base[w]  # same width: m = w/δ histograms average noise and bias away
    # even against the baseline's best width (picked on the data: not private), by a margin
    assert min(shifted.values()) < min(base.values()) / 2


def test_sorted_points_and_median_improve_with_small_delta():
    rng = np.random.default_rng(4)
    x = np.clip(rng.exponential(0.1, 2001), 0, 1)
    true_med = float(np.median(x))
    errs = {}
    for d in (1.0, 0.001):
        errs[d] = np.mean([abs(median(x, Policy(d), 0.5, rng=rng).value - true_med)
                           for _ in range(200)])
    assert errs[0.001] < errs[1.0]
    truth = np.sum((x >= 0.05) & (x < 0.2))
    e_small = np.mean([(sorted_points(x, Policy(0.001), 1.0, rng=rng).range_count([0.05], [0.2])[0]
                        - truth) ** 2 for _ in range(50)])
    e_big = np.mean([(sorted_points(x, Policy(1.0), 1.0, rng=rng).range_count([0.05], [0.2])[0]
                      - truth) ** 2 for _ in range(50)])
    assert e_small < e_big


def test_refusals():
    pts = np.random.default_rng(0).uniform(0, 1, 10)
    with pytest.raises(ValueError, match="row count must be"):
        sorted_points(pts, Policy(0.1, sources=[0.0]), 1.0)
    with pytest.raises(ValueError, match="sources"):
        median(pts, Policy(0.1, sources=[0.0]), 1.0)
    with pytest.raises(ValueError, match="whole multiple"):
        shifted_histograms(np.c_[pts, pts], Policy(0.01, dims=2), 1.0, bin_width=0.015)
    with pytest.raises(ValueError, match="outside"):
        range_count([2.0], Policy(0.1), 1.0, [(0, 1)])
