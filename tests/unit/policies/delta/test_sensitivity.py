"""Every sensitivity claim of provsql_dp.policies.delta, by brute force over every δ-neighbouring pair of
a small discretised domain (a linear release's L1 change between two tables that differ by one
record moved from cell u to cell v is the L1 norm of A·(e_u − e_v); with sources, adding a record
at a source cell s changes it by ‖A·e_s‖₁)."""

import itertools
import math

import numpy as np
import pytest

from provsql_dp.policies.blowfish import policy_sensitivity
from provsql_dp.policies.delta import Policy, smooth_sensitivity
from provsql_dp.policies.delta.histograms import (
    lattice_shape,
    series_sensitivity,
    shift_strategy_matrix,
)
from provsql_dp.policies.delta.spatial1d import cumulative_tree


def _brute(A, edges, sources=()):
    A = np.asarray(A, dtype=float)
    best = 0.0
    for u, v in edges:
        best = max(best, np.abs(A[:, u] - A[:, v]).sum())
    for s in sources:
        best = max(best, np.abs(A[:, s]).sum())
    return best


def _cum_matrix(tree, k):
    """The released coordinates of C_{n,δ} as a matrix over the k cells (noised slots only)."""
    A = np.array([tree.forward(np.eye(k)[c]) for c in range(k)]).T  # slots × cells
    return A[tree.parent >= 0]


@pytest.mark.parametrize("delta,k", [(0.1, 10), (0.25, 8), (0.05, 12), (0.3, 6), (1.0, 5)])
@pytest.mark.parametrize("sources", [None, [0.0], [1.0], [0.0, 0.55]])
def test_cumulative_sensitivity_is_set_by_delta(delta, k, sources):
    pol = Policy(delta, sources=sources)
    tree = cumulative_tree(pol, k)
    A = _cum_matrix(tree, k)
    th = pol.threshold_of(k)
    edges = [(i, j) for i in range(k) for j in range(i + 1, k) if j - i <= th]
    src = pol.source_cells(k) if sources is not None else ()
    brute = _brute(A, edges, src)
    assert brute == tree.ell  # the noise scale used is exactly the sensitivity
    if sources is None:
        assert brute == min(th, k - 1)  # bounded: θ = ⌈δ/w⌉, not k − 1
    assert policy_sensitivity(A, pol.blowfish(k)) == brute


@pytest.mark.parametrize("metric", ["euclidean", "l1"])
@pytest.mark.parametrize("sources", [None, "boundary"])
@pytest.mark.parametrize("m", [1, 2, 3, 5, 7])
def test_shifted_histograms_sensitivity(metric, sources, m):
    pol = Policy(1 / 8, dims=2, metric=metric, sources=sources)
    shape = lattice_shape(pol)
    A = shift_strategy_matrix(pol, m)
    # every pair of lattice cells with points within δ (king moves on the δ-lattice)
    k1, k2 = shape
    edges = [(a, b) for a, b in itertools.combinations(range(k1 * k2), 2)
             if abs(a // k2 - b // k2) <= 1 and abs(a % k2 - b % k2) <= 1]
    bp = pol.blowfish(shape)
    u, v = bp.value_edges()
    assert set(zip(u.tolist(), v.tolist())) == set(edges)
    src = pol.source_cells(shape) if sources else ()
    brute = _brute(A, edges, src)
    assert brute == series_sensitivity(m, pol.bounded)
    assert policy_sensitivity(A, bp) == brute


def test_equiwidth_baseline_sensitivity_is_two():
    pol = Policy(1 / 8, dims=2)
    A = shift_strategy_matrix(pol, 1)
    assert policy_sensitivity(A, pol.blowfish(lattice_shape(pol))) == 2


GRID = [i / 6 for i in range(7)]


def _neighbours(data, delta):
    """Every table obtained by moving one record of ``data`` to a grid value within δ."""
    out = []
    for i, a in enumerate(data):
        for b in GRID:
            if b != a and abs(a - b) <= delta + 1e-12:
                out.append(data[:i] + (b,) + data[i + 1:])
    return out


@pytest.mark.parametrize("delta", [1 / 6, 2 / 6, 1.0])
def test_sorted_points_l1_sensitivity_is_delta(delta):
    worst = 0.0
    for data in itertools.combinations_with_replacement(GRID, 3):
        for nb in _neighbours(data, delta):
            d = np.abs(np.sort(data) - np.sort(nb)).sum()
            moved = [abs(a - b) for a, b in zip(data, nb) if a != b][0]
            assert d == pytest.approx(moved)  # exactly the distance moved
            worst = max(worst, d)
    assert worst == pytest.approx(delta)


def _median(x):
    x = sorted(x)
    return x[(len(x) + 1) // 2 - 1]


@pytest.mark.parametrize("n", [3, 4])
@pytest.mark.parametrize("delta", [1 / 6, 2 / 6, 1.0])
def test_median_smooth_sensitivity_is_smooth_upper_bound(n, delta):
    beta = 0.3
    pol = Policy(delta)
    S = {}
    for data in itertools.combinations_with_replacement(GRID, n):
        S[data] = smooth_sensitivity(np.array(data), pol, beta)
    for data, s in S.items():
        nbs = [tuple(sorted(nb)) for nb in _neighbours(data, delta)]
        ls = max((abs(_median(data) - _median(nb)) for nb in nbs), default=0.0)
        assert ls <= s + 1e-12                            # an upper bound on local sensitivity
        assert s <= delta + 1e-12                         # never above δ
        for nb in nbs:
            assert s <= math.exp(beta) * S[nb] + 1e-12    # β-smooth along δ-neighbours
