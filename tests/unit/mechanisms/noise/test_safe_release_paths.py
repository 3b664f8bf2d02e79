"""Every release path draws its noise from the floating-point-safe sampler (safe_noise).

For each path the released numbers lie on the public grid the path documents (``on_grid``), the
grid is the one planned from public quantities only, and the noise keeps its stated scale.
Statistical checks use fixed seeds and loose thresholds.
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from recursive_testkit import make_kr
from scipy import stats

from provsql_dp.graph.baselines import laplace_release, smooth_triangle_release
from provsql_dp.mechanisms.recursive import general
from provsql_dp.mechanisms.global_sensitivity import laplace
from provsql_dp.mechanisms.noise import sources as noise
from provsql_dp.mechanisms.recursive import efficient as rm
from provsql_dp.mechanisms.recursive import single_owner as so
from provsql_dp.mechanisms.noise.safe_noise import (
    at_least_min_scale,
    on_grid,
    plan_laplace,
)
from provsql_dp.policies import blowfish as bf
from provsql_dp.policies.delta import (
    Policy,
    cumulative,
    equiwidth_histogram,
    median,
    shifted_histograms,
    sorted_points,
)

KR = make_kr(
    [[[0, 1, 2]], [[1, 2, 3]], [[4, 5, 6]], [[0, 4]], [[2, 5], [3, 6]]],
    [1.0, 1.0, 1.0, 2.0, 1.5],
    n_participants=8,
)
TOTALS = np.array([0.0, 1.5, 3.25, 7.0, 2.0, 0.5, 11.0])


def _j_hat(rel):
    """The released index ĵ behind Δ̂ = θ·e^{μ+βĵ} (an integer)."""
    p = rel.params
    return (math.log(rel.delta_hat) - math.log(p["theta"]) - p["mu"]) / p["beta"]


def _check_recursive_release(rel):
    p = rel.params
    plan = plan_laplace(at_least_min_scale(rel.delta_hat, p["eps2"]), p["eps2"])
    assert rel.grid == plan.grid and rel.noise_scale == plan.noise_scale
    assert on_grid(rel.value, rel.grid)
    assert abs(_j_hat(rel) - round(_j_hat(rel))) < 1e-6  # Δ̂ comes from an integer release
    assert rel.noise_scale == pytest.approx(rel.delta_hat / p["eps2"], rel=2 ** -19)


# ---------------------------------------------------------------------------------- grids
@pytest.mark.parametrize("seed", range(5))
def test_laplace_count_is_an_integer_on_the_unit_grid(seed):
    rel = laplace.release(1234, sensitivity=3, epsilon=0.7, integer=True,
                          rng=np.random.default_rng(seed))
    assert isinstance(rel.value, int) and rel.grid == 1.0 and on_grid(rel.value, rel.grid)
    plan = plan_laplace(3, 0.7, integer=True)
    assert rel.value == plan.release(1234, rng=np.random.default_rng(seed))
    assert rel.noise_scale == pytest.approx(3 / 0.7, rel=1e-15)


@pytest.mark.parametrize("value", [0.0, 12.5, -3.1, 1e9 + 0.123, 7.0 / 3.0])
def test_laplace_sum_lies_on_its_public_grid(value):
    rel = laplace.release(value, sensitivity=250.0, epsilon=0.3, rng=np.random.default_rng(1))
    plan = plan_laplace(250.0, 0.3)
    assert rel.grid == plan.grid == 2.0 ** (math.floor(math.log2(250.0)) - 20)
    assert on_grid(rel.value, rel.grid)
    assert rel.value == plan.release(value, rng=np.random.default_rng(1))


def test_recursive_release_is_on_the_grid_of_its_released_scale():
    for seed in range(4):
        _check_recursive_release(rm.release(KR, 0.8, rng=np.random.default_rng(seed)))


def test_single_owner_release_is_on_the_grid_and_matches_the_lp_path():
    kr = make_kr([[[i]] for i in range(len(TOTALS))], TOTALS.tolist(), n_participants=len(TOTALS))
    for seed in range(4):
        a = so.release(TOTALS, 0.6, rng=np.random.default_rng(seed))
        b = rm.release(kr, 0.6, rng=np.random.default_rng(seed))
        _check_recursive_release(a)
        _check_recursive_release(b)
        assert a.delta_hat == b.delta_hat and a.grid == b.grid
        assert a.value == pytest.approx(b.value, abs=2 * a.grid, rel=1e-9)


def test_signed_releases_lie_on_the_finer_grid_of_their_parts():
    rel = so.release_signed([3.0, 0.0, 5.5], [0.0, 1.0, 0.25], epsilon=1.0,
                            rng=np.random.default_rng(2))
    pos, neg = rel.parts
    for part in rel.parts:
        _check_recursive_release(part)
    assert rel.grid == min(pos.grid, neg.grid) and on_grid(rel.value, rel.grid)
    kr = make_kr([[[0, 1]], [[1, 2]], [[2]], [[0]]], [3.0, -2.0, 1.0, -0.5], n_participants=3)
    rel = rm.release_signed(kr, epsilon=1.0, rng=np.random.default_rng(0))
    assert on_grid(rel.value, rel.grid)


def test_general_release_is_on_the_grid():
    def pairs(world):
        k = len(world)
        return k * (k - 1) / 2

    for seed in range(3):
        rel = general.release(pairs, list(range(5)), epsilon=1.0, rng=np.random.default_rng(seed))
        _check_recursive_release(rel)


def test_data_independent_noise_is_on_its_grid():
    z = noise.laplace(2.5, size=100, rng=np.random.default_rng(0))
    assert np.all(on_grid(z, plan_laplace(2.5, 1.0).grid))


def test_blowfish_histogram_releases_its_rows_on_the_grid():
    k = 40
    x = np.random.default_rng(0).integers(0, 20, k).astype(float)
    pol = bf.Policy.full(k, bounded=False)  # plain unbounded DP: Laplace(1/ε) per cell
    ans = bf.answer(bf.Histogram(k), x, pol, 0.5, strategy="laplace",
                    rng=np.random.default_rng(1))
    (plan,) = ans.noise_plans
    assert plan.sensitivity == 1 and plan.epsilon == 0.5
    assert np.all(on_grid(ans.values, plan.grid))
    assert plan.noise_scale == pytest.approx(2.0, rel=2 ** -19)


def test_blowfish_post_processed_and_exact_paths_record_their_plans():
    k = 32
    x = np.random.default_rng(3).integers(0, 9, k).astype(float)
    ans = bf.answer(bf.Prefix(k), x, bf.Policy.line(k), 1.0, rng=np.random.default_rng(0))
    assert ans.noise_plans and all(p.epsilon <= 1.0 for p in ans.noise_plans)
    assert ans.values[-1] == x.sum()  # the public total is exact
    pol = bf.Policy.grid(5, 6, 2, bounded=False, sources=[0, 7])
    w = bf.random_rects(pol.shape, 6, np.random.default_rng(4))
    x2 = np.random.default_rng(5).integers(0, 9, pol.k).astype(float)
    for name in ("grid_laplace", "grid_hierarchical", "grid_privelet"):
        a = bf.answer(w, x2, pol, 1.0, strategy=name, rng=np.random.default_rng(6))
        # exact noise-only path: integer noise on the unit grid for every line and ⊥-edge
        assert a.noise_plans and all(p.grid == 1.0 and p.integer for p in a.noise_plans)
        assert np.all(np.isfinite(a.values))


def test_delta_cumulative_counts_are_integers_and_hide_an_unbounded_total():
    pts = np.random.default_rng(0).uniform(0, 1, 500)
    rel = cumulative(pts, Policy(0.05), 1.0, cells=20, rng=np.random.default_rng(1))
    assert rel.grid == 1.0 and np.all(on_grid(rel.cumulative, rel.grid))
    src = cumulative(pts, Policy(0.05, sources=[0.5]), 1.0, cells=20,
                     rng=np.random.default_rng(1))
    bottom = src.tree.roots[src.tree.roots >= src.k]
    assert bottom.size == 1 and src.cumulative[bottom[0]] == 0.0  # not the exact table size
    mask = src.tree.parent[: src.tree.n] >= 0
    assert np.all(on_grid(src.cumulative[mask], 1.0))


def test_delta_histograms_sorted_points_median_are_on_their_grids():
    rng = np.random.default_rng(0)
    pts = rng.uniform(0, 1, size=(2000, 2))
    pol = Policy(0.05, dims=2)
    for rel in (shifted_histograms(pts, pol, 1.0, bin_width=0.1, rng=rng),
                equiwidth_histogram(pts, pol, 1.0, bin_width=0.1, rng=rng)):
        assert rel.grid == 1.0 and all(np.all(on_grid(c, 1.0)) for c in rel.counts)
    s = sorted_points(pts[:, 0], Policy(0.01), 1.0, rng=rng)
    assert s.grid == plan_laplace(0.01, 1.0, changed=2000).grid
    m = median(pts[:, 0], Policy(0.01), 1.0, rng=rng)
    assert m.noise == "laplace" and on_grid(m.value, m.grid)
    assert m.grid == plan_laplace(0.01, 1.0).grid


def test_graph_baselines_are_on_their_grids():
    assert float(laplace_release(120, 98, 0.5, rng=np.random.default_rng(0),
                                 integer=True)).is_integer()
    v = laplace_release(120.0, 98, 0.5, rng=np.random.default_rng(0))
    assert on_grid(v, plan_laplace(98, 0.5).grid)
    g = nx.gnp_random_graph(30, 0.3, seed=1)
    r = smooth_triangle_release(g, 1.0, delta=0.01, rng=np.random.default_rng(0))
    assert float(r).is_integer()  # (ε, δ) smooth release: integer count + integer noise


# ------------------------------------------------------------------------- stated scales
def test_laplace_sum_noise_has_the_stated_scale():
    sens, eps, n = 3.0, 0.4, 6000
    plan = plan_laplace(sens, eps)
    value = 17.3
    err = plan.release_array(np.full(n, value), rng=np.random.default_rng(11)) - value
    scale = sens / eps
    assert abs(err.mean()) < 5 * scale * math.sqrt(2 / n)
    assert np.var(err) / (2 * scale ** 2) == pytest.approx(1.0, abs=0.1)
    assert stats.kstest(err / scale, stats.laplace.cdf).pvalue > 1e-3
    rel = laplace.release(value, sensitivity=sens, epsilon=eps, rng=np.random.default_rng(0))
    cover = np.mean(np.abs(err) <= rel.noise_bound(0.9))
    assert cover >= 0.9 - 3 * math.sqrt(0.09 / n)


def test_single_owner_noise_has_the_stated_scale_and_bound():
    """X̂ − X over many seeded releases: Laplace of scale Δ̂/ε₂ (normalised per release), and
    ĵ − j is discrete Laplace of scale 1/ε₁."""
    c = np.random.default_rng(0).pareto(1.5, 300) * 3
    runs = 1500
    z, jn, covered = [], [], 0
    j, _ = so.delta(c, 1.0, 0.2)
    for seed in range(runs):
        rel = so.release(c, 1.0, rng=np.random.default_rng(1000 + seed))
        x = so.clamped_sum(c, rel.delta_hat)
        z.append((rel.value - x) / rel.noise_scale)
        jn.append(round(_j_hat(rel)) - j)
        covered += abs(rel.value - x) <= rel.noise_bound(0.9)
    z = np.array(z)
    assert np.var(z) == pytest.approx(2.0, rel=0.15)
    assert stats.kstest(z, stats.laplace.cdf).pvalue > 1e-3
    p = math.exp(-0.5)  # ε₁ = 0.5
    assert np.var(jn) == pytest.approx(2 * p / (1 - p) ** 2, rel=0.15)
    assert covered / runs >= 0.9 - 3 * math.sqrt(0.09 / runs)
