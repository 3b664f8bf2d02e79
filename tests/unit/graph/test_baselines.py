import itertools
import math
from fractions import Fraction

import networkx as nx
import numpy as np
import pytest

from provsql_dp.errors import InterfaceError
from provsql_dp.graph import true_count
from provsql_dp.graph.baselines import (
    global_sensitivity,
    rhms_median_error_bounds,
    rhms_params,
    rhms_release,
    sample_power_law_noise,
    smooth_beta,
    smooth_triangle_release,
    triangle_local_sensitivity,
    triangle_smooth_sensitivity,
)
from provsql_dp.graph.patterns import resolve_pattern


def _ls(g):
    nodes = list(g.nodes())
    return max((len(set(g[u]) & set(g[v])) for u, v in itertools.combinations(nodes, 2)), default=0)


def _brute_local_at(g, s):
    nodes = list(g.nodes())
    pairs = list(itertools.combinations(nodes, 2))
    best = 0
    for r in range(s + 1):
        for flips in itertools.combinations(pairs, r):
            h = g.copy()
            for u, v in flips:
                if h.has_edge(u, v):
                    h.remove_edge(u, v)
                else:
                    h.add_edge(u, v)
            best = max(best, _ls(h))
    return best


@pytest.mark.parametrize("seed", range(6))
def test_local_sensitivity_at_distance_matches_brute_force(seed):
    g = nx.gnp_random_graph(6, 0.4, seed=seed)
    for s in range(3):
        assert triangle_local_sensitivity(g, s) == _brute_local_at(g, s)


def test_local_sensitivity_caps_at_n_minus_2():
    assert triangle_local_sensitivity(nx.empty_graph(5), 100) == 3
    assert triangle_local_sensitivity(nx.empty_graph(1), 3) == 0


def test_smooth_sensitivity_definition():
    g = nx.gnp_random_graph(30, 0.15, seed=1)
    beta = 0.2
    direct = max(math.exp(-beta * s) * triangle_local_sensitivity(g, s) for s in range(80))
    assert triangle_smooth_sensitivity(g, beta) == pytest.approx(direct)


@pytest.mark.parametrize(
    "name, k, privacy",
    [("triangle", None, "edge"), ("k-star", 2, "edge"), ("cycle", 4, "edge"),
     ("k-triangle", 2, "edge"), ("triangle", None, "node"), ("k-star", 2, "node")],
)
def test_global_sensitivity_is_the_change_in_the_complete_graph(name, k, privacy):
    n = 7
    full = nx.complete_graph(n)
    h = full.copy()
    if privacy == "edge":
        h.remove_edge(0, 1)
    else:
        h.remove_edges_from(list(h.edges(0)))
    assert global_sensitivity(name, n, privacy, k=k) == true_count(full, name, k) - true_count(h, name, k)


def test_edge_dp_triangle_sensitivity_is_n_minus_2():
    assert all(global_sensitivity("triangle", n, "edge") == n - 2 for n in (3, 10, 5000))


def test_power_law_noise_distribution():
    z = sample_power_law_noise(4.0, size=20000, rng=np.random.default_rng(0))
    # P(|Z| < 1) = ∫_{-1}^{1} dz/(1+z⁴) / (π/√2) ≈ 0.7806
    assert abs(np.mean(np.abs(z) < 1) - 0.7806) < 0.02
    assert abs(np.median(z)) < 0.05


def test_smooth_release_is_centred_on_the_count():
    g = nx.gnp_random_graph(60, 0.2, seed=2)
    t = sum(nx.triangles(g).values()) // 3
    rng = np.random.default_rng(3)
    vals = [smooth_triangle_release(g, 0.5, delta=0.1, rng=rng) for _ in range(200)]
    s = triangle_smooth_sensitivity(g, smooth_beta(0.5, delta=0.1))
    assert abs(np.median(vals) - t) < 4 * s / 0.25


# ----------------------------------------------------- Karwa k-star, ε-DP (Cauchy, NRS constants)
from provsql_dp.graph.baselines import cauchy_params, kstar_pure_release  # noqa: E402
from provsql_dp.mechanisms.subgraph import smooth as gsm  # noqa: E402


def _toggle(g, pair):
    h = g.copy()
    if h.has_edge(*pair):
        h.remove_edge(*pair)
    else:
        h.add_edge(*pair)
    return h


def _stars(g, k):
    return sum(math.comb(d, k) for _, d in g.degree())


def _smooth(g, k, beta):
    e = np.array(list(g.edges()), dtype=np.int64).reshape(-1, 2)
    return gsm.kstar_smooth_sensitivity(e[:, 0], e[:, 1], g.number_of_nodes(), k, beta)


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("seed", range(5))
def test_kstar_pure_smooth_bound_against_brute_force(seed, k):
    """At the ε-DP release's β: S ≥ LS (brute force over every toggled pair) and
    S(G) ≤ e^β S(G') for every neighbour G' — the two properties NRS Lemma 2.6 needs."""
    g = nx.gnp_random_graph(6, 0.45, seed=seed)
    _, beta = cauchy_params(0.5)
    s = _smooth(g, k, beta)
    pairs = list(itertools.combinations(sorted(g.nodes()), 2))
    ls = max(abs(_stars(_toggle(g, p), k) - _stars(g, k)) for p in pairs)
    assert s >= ls - 1e-9
    for p in pairs:
        s2 = _smooth(_toggle(g, p), k, beta)
        assert s <= math.exp(beta) * s2 + 1e-9 and s2 <= math.exp(beta) * s + 1e-9


@pytest.mark.parametrize("seed", range(4))
def test_kstar_pure_release_privacy_loss_between_neighbours(seed):
    """End to end: the output densities of G and of every neighbour G' differ by a factor of at
    most e^{ε/3} (the bound proved in the module docstring; ≤ e^ε) on a fine grid of outputs."""
    eps, k = 0.5, 2
    alpha, beta = cauchy_params(eps)
    g = nx.gnp_random_graph(6, 0.5, seed=10 + seed)

    def log_density(h, t):
        scale = _smooth(h, k, beta) / alpha
        z = (t - _stars(h, k)) / scale
        return -np.log(np.pi * scale * (1 + z * z))

    t = np.linspace(-400, 400, 20001)
    base = log_density(g, t)
    for p in itertools.combinations(sorted(g.nodes()), 2):
        loss = np.abs(log_density(_toggle(g, p), t) - base).max()
        assert loss <= eps / 3 + 1e-9


def test_kstar_pure_release_is_the_count_plus_scaled_cauchy():
    g = nx.gnp_random_graph(12, 0.4, seed=3)
    e = np.array(list(g.edges()), dtype=np.int64)
    alpha, beta = cauchy_params(0.5)
    s = _smooth(g, 2, beta)
    r = kstar_pure_release(e[:, 0], e[:, 1], 12, 2, epsilon=0.5, rng=np.random.default_rng(4))
    z = np.random.default_rng(4).standard_cauchy()
    assert r == pytest.approx(_stars(g, 2) + s / alpha * z)
    with pytest.raises(Exception, match="k must"):
        kstar_pure_release(e[:, 0], e[:, 1], 12, 1, epsilon=0.5)
    with pytest.raises(Exception, match="epsilon"):
        cauchy_params(0.0)


# ---------------------------------------------------------------------- RHMS (Karwa et al. Alg. 2)
# Hand computation for n = 1000, γ = 0.1, ε = 0.5 (ln 1000 = 6.907755278982137):
#   λ = (8 (|V_H| + 1) |E_H|² ln n)^(|E_H| − 1),  θ = |E_H| / (n γ) = |E_H| / 100,  b = λ / (√2 ε)
#   2-star     |V| 3 |E| 2: 8·4·4  = 128  → λ = 128 ln 1000        = 884.1926757097136
#   triangle   |V| 3 |E| 3: 8·4·9  = 288  → λ = (1989.4335203468555)² = 3957845.7325...
#   3-star     |V| 4 |E| 3: 8·5·9  = 360  → λ = (2486.791900433569)²
#   2-triangle |V| 4 |E| 5: 8·5·25 = 1000 → λ = (6907.755278982137)⁴
#   3-triangle |V| 5 |E| 7: 8·6·49 = 2352 → λ = (16247.040416165986)⁶
RHMS_HAND = [
    ("2-star", 884.1926757097136, Fraction(2, 100)),
    ("triangle", 1989.4335203468555 ** 2, Fraction(3, 100)),
    ("3-star", 2486.791900433569 ** 2, Fraction(3, 100)),
    ("2-triangle", 6907.755278982137 ** 4, Fraction(5, 100)),
    ("3-triangle", 16247.040416165986 ** 6, Fraction(7, 100)),
]


@pytest.mark.parametrize("pattern,lam,theta", RHMS_HAND)
def test_rhms_noise_scale_matches_the_hand_computation(pattern, lam, theta):
    p = rhms_params(pattern, 1000, epsilon=0.5, gamma=0.1)
    assert p.lam == pytest.approx(lam, rel=1e-12)
    assert p.theta == theta
    assert p.scale == pytest.approx(lam * math.sqrt(2.0), rel=1e-12)  # λ/(√2·0.5) = √2·λ
    assert p.upper == 1000 ** resolve_pattern(pattern).n_nodes
    assert rhms_params(pattern, 1000, epsilon=0.5, gamma=0.1).scale == p.scale  # public only


def test_rhms_refuses_what_it_cannot_do():
    with pytest.raises(InterfaceError, match="θ"):
        rhms_params("triangle", 20, epsilon=0.5, gamma=0.1)  # θ = 3/2
    with pytest.raises(InterfaceError, match="epsilon"):
        rhms_params("triangle", 1000, epsilon=0.0)
    with pytest.raises(ValueError, match="MAX_SCALE"):  # b ≈ 3.8e25 > 2**64
        rhms_release(178233, "3-triangle", 1589, epsilon=0.5, rng=np.random.default_rng(0))


def test_rhms_release_follows_the_algorithm():
    """The answer is the count plus Lap(b) with probability 1 − θ and uniform on {0, …, n^|V_H|}
    with probability θ: the random branch's frequency is θ, the Laplace branch's median absolute
    error is b ln 2, and the overall median lies within Karwa et al.'s Claim 5.1 bounds."""
    n, truth, draws = 1000, 20000, 4000
    p = rhms_params("2-star", n, epsilon=0.5, gamma=0.1)
    rng = np.random.default_rng(11)
    y = np.array([rhms_release(truth, "2-star", n, epsilon=0.5, rng=rng, params=p)
                  for _ in range(draws)])
    err = np.abs(y - truth)
    wild = err > 40 * p.scale  # Laplace tail beyond 40 b: e^-40; uniform on 1e9 values: ~1e-4
    frac = wild.mean()
    sd = math.sqrt(0.02 * 0.98 / draws)
    assert abs(frac - 0.02) < 4 * sd
    assert np.median(err[~wild]) == pytest.approx(p.scale * math.log(2), rel=0.06)
    lo, hi = rhms_median_error_bounds(p)
    assert 0.95 * lo <= np.median(err) <= 1.05 * hi
    assert np.all((y[wild] >= 0) & (y[wild] <= n**3) & (y[wild] == np.round(y[wild])))


def test_uniform_below_is_exact_and_in_range():
    from provsql_dp.graph.baselines import _uniform_below

    rng = np.random.default_rng(3)
    counts = np.bincount([_uniform_below(rng, 3) for _ in range(6000)], minlength=3)
    assert counts.sum() == 6000 and np.all(np.abs(counts - 2000) < 4 * math.sqrt(6000 * 2 / 9))
    big = 10**20 + 7  # needs three 32-bit words
    xs = [_uniform_below(rng, big) for _ in range(2000)]
    assert min(xs) >= 0 and max(xs) < big
    assert 0.4 < np.mean(np.array(xs, dtype=float)) / big < 0.6
    assert _uniform_below(rng, 1) == 0
