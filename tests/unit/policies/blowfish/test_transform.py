"""Properties of P_G and of the tree transforms (papers/000 §4)."""

import itertools

import numpy as np
import scipy.sparse as sp
from conftest import breadth
from hypothesis import given, settings
from hypothesis import strategies as st

from provsql_dp.policies import blowfish as bf
from provsql_dp.policies.blowfish._transform import (
    bfs_forest,
    candidate_trees,
    htheta_tree,
    incidence,
    right_inverse,
    stretch,
)

FAST = settings(max_examples=40, deadline=None)


@st.composite
def policies(draw, connected=False, max_k=9):
    kind = draw(st.sampled_from(["full", "line", "threshold", "grid", "partition", "graph"]
                                if not connected else ["full", "line", "threshold", "grid", "graph"]))
    bounded = draw(st.booleans())
    if kind == "grid":
        k1, k2 = draw(st.integers(1, 3)), draw(st.integers(2, 3))
        k = k1 * k2
    else:
        k = draw(st.integers(2, max_k))
    sources = None
    if not bounded and draw(st.booleans()):
        sources = draw(st.lists(st.integers(0, k - 1), min_size=1, max_size=3))
    if kind == "full":
        return bf.Policy.full(k, bounded=bounded, sources=sources)
    if kind == "line":
        return bf.Policy.line(k, bounded=bounded, sources=sources)
    if kind == "threshold":
        return bf.Policy.threshold(k, draw(st.integers(2, 4)), bounded=bounded, sources=sources)
    if kind == "grid":
        return bf.Policy.grid(k1, k2, draw(st.integers(1, 2)), bounded=bounded, sources=sources)
    if kind == "partition":
        labels = draw(st.lists(st.integers(0, 2), min_size=k, max_size=k))
        return bf.Policy.partition(labels, bounded=bounded, sources=sources)
    # a random connected graph: a random spanning path plus random chords
    perm = draw(st.permutations(list(range(k))))
    edges = list(zip(perm[:-1], perm[1:]))
    extra = draw(st.lists(st.tuples(st.integers(0, k - 1), st.integers(0, k - 1)), max_size=4))
    return bf.Policy.graph(k, edges + [e for e in extra if e[0] != e[1]], bounded=bounded,
                           sources=sources)


def n_components_without_bottom(pol):
    u, v = pol.edges()
    n = pol.n_vertices
    g = sp.csr_matrix((np.ones(len(u)), (u, v)), shape=(n, n))
    from scipy.sparse.csgraph import connected_components
    nc, lab = connected_components(g, directed=False)
    if pol.bounded:
        return nc
    return nc - 1


@FAST
@given(policies())
def test_incidence_rank_and_shape(pol):
    P, r = incidence(pol)
    u, _ = pol.edges()
    rank = np.linalg.matrix_rank(P.toarray()) if P.shape[1] else 0
    if pol.bounded:
        assert P.shape == (pol.k - 1, len(u))
        # connected: full row rank k-1 (Lemma 4.8, Case II); one lost rank per extra component
        assert rank == pol.k - n_components_without_bottom(pol)
    else:
        assert P.shape == (pol.k, len(u))
        assert rank == pol.k - n_components_without_bottom(pol)


@breadth(8, 40, policies(), st.data())
def test_tree_transform_is_exact_including_all_ones(pol, data):
    k = pol.k
    x = np.array(data.draw(st.lists(st.integers(0, 9), min_size=k, max_size=k)), dtype=float)
    W = np.array(data.draw(st.lists(st.lists(st.integers(-2, 3), min_size=k, max_size=k),
                                    min_size=1, max_size=4)), dtype=float)
    W = np.vstack([W, np.ones(k)])  # the all-ones query: the total must survive
    for t in candidate_trees(pol) + [bfs_forest(pol)]:
        xt = t.forward(x)
        assert np.array_equal(t.workload(W) @ xt, W @ x)
        assert np.allclose(t.backward(xt), x)
        assert t.ell == stretch(pol, t)  # the stretch the strategies use is the exact one


@FAST
@given(policies(connected=True), st.data())
def test_right_inverse_reconstructs_w_x(pol, data):
    """W·P_G·P_G⁻¹·x = W·x (Case I) and Lemma 4.10 (Case II), with an O(k) right inverse."""
    k = pol.k
    x = np.array(data.draw(st.lists(st.integers(0, 9), min_size=k, max_size=k)), dtype=float)
    W = np.vstack([np.array(data.draw(st.lists(st.integers(-2, 3), min_size=k, max_size=k)),
                            dtype=float), np.ones(k)])
    P, r = incidence(pol)
    if pol.bounded:
        y = right_inverse(pol, x, tree=bfs_forest(pol, root=r), drop=r)
        keep = np.r_[0:r, r + 1:k]
        assert np.allclose(P @ y, x[keep])
        n = x.sum()
        Wp = W[:, keep] - W[:, [r]]  # rewrite x[r] as n - sum of the others
        assert np.allclose(Wp @ (P @ y) + n * W[:, r], W @ x)
    else:
        if n_components_without_bottom(pol):
            return  # a component unreachable from ⊥ has a public total; tested above
        y = right_inverse(pol, x)
        assert np.allclose(P @ y, x)
        assert np.allclose(W @ (P @ y), W @ x)


def test_pseudo_inverse_pitfall_is_avoided():
    """The public prototype's bug: pinv of the full incidence loses the total (off by n/k)."""
    k = 6
    pol = bf.Policy.line(k)
    x = np.array([4., 0., 1., 3., 2., 5.])
    u, v = pol.edges()
    full = np.zeros((k, len(u)))
    full[u, np.arange(len(u))] = 1
    full[v, np.arange(len(u))] = -1
    ones = np.ones((1, k))
    wrong = ones @ full @ np.linalg.pinv(full) @ x
    assert not np.isclose(wrong[0], x.sum())
    t = candidate_trees(pol)[0]
    assert (t.workload(ones) @ t.forward(x))[0] == x.sum()


def _databases(k, nmax=2):
    for n in range(nmax + 1):
        for combo in itertools.combinations_with_replacement(range(k), n):
            yield np.bincount(np.array(combo, dtype=int), minlength=k).astype(float)


def _neighbours(x, pol):
    """Def. 3.2 literally: change one record along an edge, or add/remove one at a ⊥-edge."""
    u, v = pol.edges()
    k = pol.k
    for a, b in zip(u, v):
        if b == k:  # ⊥-edge
            y = x.copy(); y[a] += 1; yield y
            if x[a] > 0:
                y = x.copy(); y[a] -= 1; yield y
            continue
        for s, d in ((a, b), (b, a)):
            if x[s] > 0:
                y = x.copy(); y[s] -= 1; y[d] += 1; yield y


@FAST
@given(policies(max_k=5), st.data())
def test_policy_sensitivity_equals_brute_force(pol, data):
    k = pol.k
    W = np.array(data.draw(st.lists(st.lists(st.integers(-2, 3), min_size=k, max_size=k),
                                    min_size=1, max_size=3)), dtype=float)
    brute = 0.0
    for x in _databases(k):
        for y in _neighbours(x, pol):
            brute = max(brute, float(np.abs(W @ (x - y)).sum()))
    assert np.isclose(bf.policy_sensitivity(W, pol), brute)


@st.composite
def tree_policies(draw):
    k = draw(st.integers(2, 9))
    c = draw(st.sampled_from(["line", "bottom_star", "line_source", "random_tree"]))
    if c == "line":
        return bf.Policy.line(k)
    if c == "bottom_star":
        return bf.Policy.full(k, bounded=False)
    if c == "line_source":
        return bf.Policy.line(k, bounded=False, sources=[draw(st.sampled_from([0, k - 1]))])
    parents = [draw(st.integers(0, i - 1)) for i in range(1, k)]
    return bf.Policy.graph(k, [(i, p) for i, p in zip(range(1, k), parents)])


@breadth(8, 40, tree_policies())
def test_tree_neighbours_map_to_dp_neighbours(pol):
    """Lemma 4.9: under a tree policy, Blowfish neighbours ↔ DP neighbours of x_T."""
    t = [t for t in candidate_trees(pol) + [bfs_forest(pol)] if t.ell == 1][0]
    u, v = pol.edges()
    k = pol.k
    seen = set()
    for a, b in zip(u, v):
        d = np.zeros(k)
        d[a] += 1
        if b < k:
            d[b] -= 1
        dt = t.forward(d)[t.noise_mask]
        assert np.abs(dt).sum() == 1  # exactly one transformed count moves by one
        seen.add(int(np.flatnonzero(dt)[0]))
    assert len(seen) == int(t.noise_mask.sum())  # and every DP neighbour comes from an edge


@breadth(8, 40, st.integers(3, 30), st.integers(2, 8))
def test_htheta_stretch_and_ordered_hierarchical_sensitivity(k, theta):
    pol = bf.Policy.threshold(k, theta)
    if theta >= k - 1:
        return
    t = htheta_tree(pol)
    assert stretch(pol, t) <= 3
    red = (np.arange(k) % theta == theta - 1) & t.noise_mask[:k]
    non = (np.arange(k) % theta != theta - 1) & t.noise_mask[:k]
    u, v = pol.edges()
    for a, b in zip(u, v):
        d = np.zeros(k); d[a] -= 1; d[b] += 1
        dt = t.forward(d)
        assert np.abs(dt[red]).sum() <= 1  # one prefix (S node) at most
        assert np.abs(dt[non]).sum() <= 2  # two leaves at most
