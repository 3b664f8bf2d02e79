"""Twin-class (symmetry) reduction and warm-started re-solves of the recursive mechanism's LPs.

Every reduction must leave H, G, J, eq. 20, Δ and X unchanged: checked against the unreduced
LPs (``symmetry=False``), against PuLP/CBC, and the twin classes against an exact automorphism
check written independently of the implementation.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from recursive_testkit import make_kr, pulp_g, pulp_h

from provsql_dp.mechanisms.recursive import _lp
from provsql_dp.mechanisms.recursive import _symmetry
from provsql_dp.mechanisms.recursive import efficient as rm
from provsql_dp.provenance.krelation import KRelation


def close(a, b, tol=1e-6):
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def symmetric_annotations(rng, n, n_base, classes, max_monos=2, max_size=3):
    """Random DNF annotations closed under every permutation of each class in ``classes``
    (all images of each base tuple, same weight): the result is invariant under Sym(C)."""
    base = []
    for _ in range(n_base):
        k = int(rng.integers(1, max_monos + 1))
        monos = [
            sorted(rng.choice(n, size=int(rng.integers(1, min(max_size, n) + 1)), replace=False).tolist())
            for _ in range(k)
        ]
        base.append((monos, float(rng.choice([0.5, 1.0, 2.0, 3.0]))))
    anns, ws = [], []
    perms = [list(itertools.permutations(c)) for c in classes]
    for monos, w in base:
        for combo in itertools.product(*perms):
            ren = {}
            for c, img in zip(classes, combo):
                ren.update(dict(zip(c, img)))
            anns.append([sorted(ren.get(x, x) for x in m) for m in monos])
            ws.append(w)
    return anns, ws


def symmetric_kr(seed, n=7, n_base=4, conjunctive=False):
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n).tolist()
    classes = [perm[:3], perm[3:5]]
    anns, ws = symmetric_annotations(
        rng, n, n_base, classes, max_monos=1 if conjunctive else 2, max_size=3
    )
    return make_kr(anns, ws, n_participants=n + 1)  # one absent participant


def blown_up_triangles(seed, n=7, p=0.5):
    """Triangles (node privacy) of a random graph with vertices blown up into cliques
    (adjacent twins) and independent sets (non-adjacent twins)."""
    rng = np.random.default_rng(seed)
    adj = {(a, b) for a in range(n) for b in range(a + 1, n) if rng.random() < p}
    copies, nxt = {}, 0
    for v in range(n):
        k = int(rng.integers(1, 4))
        copies[v] = list(range(nxt, nxt + k))
        nxt += k
    clique = {v: bool(rng.integers(0, 2)) for v in range(n)}
    edges = set()
    for v in range(n):
        if clique[v]:
            edges |= {(a, b) for a, b in itertools.combinations(copies[v], 2)}
    for a, b in adj:
        edges |= {(min(x, y), max(x, y)) for x in copies[a] for y in copies[b]}
    nbr = {v: set() for v in range(nxt)}
    for a, b in edges:
        nbr[a].add(b)
        nbr[b].add(a)
    tris = sorted({tuple(sorted((a, b, c))) for a, b in edges for c in nbr[a] & nbr[b]})
    return make_kr([[list(t)] for t in tris], n_participants=nxt) if tris else None


def is_automorphism(kr: KRelation, p, q) -> bool:
    """Independent exact check: renaming p <-> q maps the (annotation, weight) multiset onto
    itself."""
    def canon(swap):
        return Counter(
            (frozenset(frozenset(swap.get(x, x) for x in m) for m in kr.annotation(t)), float(w))
            for t, w in enumerate(kr.weights)
        )

    return canon({}) == canon({p: q, q: p})


# ---------------------------------------------------------------------- twin classes
@pytest.mark.parametrize("seed", range(10))
def test_twin_classes_are_exact_symmetries(seed):
    for kr in (symmetric_kr(seed), symmetric_kr(seed, conjunctive=True), blown_up_triangles(seed)):
        if kr is None:
            continue
        stc = _lp.Structure(kr)
        cls = _symmetry.twin_classes(stc)
        names = [kr.participant_list[i] for i in stc.occurring]
        for c in np.unique(cls):
            members = np.flatnonzero(cls == c)
            for a, b in zip(members[:-1], members[1:]):
                assert is_automorphism(kr, names[a], names[b]), (seed, names[a], names[b])


@pytest.mark.parametrize("seed", range(6))
def test_twin_classes_find_the_planted_symmetry(seed):
    """The closed-under-Sym(C) construction plants classes the detector must find (or merge
    into larger valid classes)."""
    rng = np.random.default_rng(seed)
    anns, ws = symmetric_annotations(rng, 6, 4, [[0, 1, 2]], max_monos=1)
    kr = make_kr(anns, ws, n_participants=6)
    stc = _lp.Structure(kr)
    cls = _symmetry.twin_classes(stc)
    pos = {kr.participant_list[i]: k for k, i in enumerate(stc.occurring)}
    occ = [pos[("p", x)] for x in (0, 1, 2) if ("p", x) in pos]
    assert len({int(cls[k]) for k in occ}) <= 1


def test_clique_and_independent_twins():
    # K4 (adjacent twins: one class) and a "book" of 3 triangles on the edge {0, 1}
    k4 = make_kr([[list(t)] for t in itertools.combinations(range(4), 3)])
    assert len(np.unique(_symmetry.twin_classes(_lp.Structure(k4)))) == 1
    book = make_kr([[[0, 1, 2]], [[0, 1, 3]], [[0, 1, 4]]])
    cls = _symmetry.twin_classes(_lp.Structure(book))
    assert len(np.unique(cls)) == 2  # {0, 1} and {2, 3, 4}
    red = _lp.reduced(_lp.Structure(book))
    assert red.n == 2 and red.n_tuples == 1 and red.q[0] == 3.0


# ---------------------------------------------------------------------- exactness
def _sequences(kr, symmetry):
    n = kr.n_participants
    pts = [i for i in range(n + 1)] + [n - 0.5, n / 3]
    return [rm.H(kr, i, symmetry=symmetry) for i in pts], [rm.G(kr, i, symmetry=symmetry) for i in pts]


@pytest.mark.parametrize("seed", range(8))
def test_reduced_lps_equal_unreduced(seed):
    for kr in (symmetric_kr(seed), blown_up_triangles(seed)):
        if kr is None:
            continue
        h1, g1 = _sequences(kr, True)
        h0, g0 = _sequences(kr, False)
        assert all(close(a, b) for a, b in zip(h1, h0)), (seed, h1, h0)
        assert all(close(a, b) for a, b in zip(g1, g0)), (seed, g1, g0)
        s1 = _lp.Solver(_lp.Structure(kr), symmetry=True)
        s0 = _lp.Solver(_lp.Structure(kr), symmetry=False)
        deg = s0.lp.load_view().deg
        for cap in sorted(set(np.quantile(deg, [0.1, 0.5, 0.9]).tolist())):
            assert close(s1.j_value(cap)[0], s0.j_value(cap)[0], 1e-6), (seed, cap)
        for dh in (0.3, 1.0, 2.5):
            a, b = s1.x_real(dh), s0.x_real(dh)
            assert close(a[0], b[0]), (seed, dh)


@pytest.mark.parametrize("seed", range(6))
def test_reduced_lps_match_pulp(seed):
    kr = symmetric_kr(100 + seed, n=6, n_base=3)
    assert _lp.reduced(_lp.Structure(kr)).n < _lp.Structure(kr).n
    n = kr.n_participants
    for i in [0, 1, n / 2, n - 1.5, n - 1, n]:
        assert close(rm.H(kr, i), pulp_h(kr, i)), (seed, i)
        assert close(rm.G(kr, i), pulp_g(kr, i)), (seed, i)


@pytest.mark.parametrize("seed", range(6))
def test_release_quantities_unchanged_by_reduction(seed):
    kr = blown_up_triangles(seed, n=8, p=0.6) or symmetric_kr(seed)
    for eps in (0.5, 2.0):
        a = rm.explain(kr, eps, symmetry=True)
        b = rm.explain(kr, eps, symmetry=False)
        assert a.delta_j == b.delta_j and close(a.delta, b.delta)
        assert close(a.x, b.x), (seed, eps, a.x, b.x)
        # the noisy release draws the same noise from the same seed
        r1 = rm.release(kr, eps, rng=np.random.default_rng(seed), symmetry=True)
        r0 = rm.release(kr, eps, rng=np.random.default_rng(seed), symmetry=False)
        assert close(r1.delta_hat, r0.delta_hat) and close(r1.value, r0.value, 1e-6)


SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.integers(0, 10_000), st.booleans())
def test_reduction_invariant_hypothesis(seed, conjunctive):
    kr = symmetric_kr(seed, n=6, n_base=3, conjunctive=conjunctive)
    n = kr.n_participants
    for i in (n - 1, n - 2, n / 2):
        assert close(rm.H(kr, i), rm.H(kr, i, symmetry=False))
        assert close(rm.G(kr, i), rm.G(kr, i, symmetry=False))


# ---------------------------------------------------------------------- warm starts
@pytest.mark.parametrize("seed", range(5))
def test_kept_delta_model_equals_fresh_models(seed):
    """Re-solving the kept Δ model for several caps (down to its build cap, in any order)
    gives the value of a fresh model per cap, and its slopes are valid tangents."""
    kr = blown_up_triangles(seed, n=9, p=0.6) or symmetric_kr(seed)
    stc = _lp.Structure(kr)
    deg = np.sort(stc.load_view().deg)
    caps = [float(x) for x in np.quantile(deg, [0.2, 0.6, 0.4, 0.9, 0.3])]
    kept = _lp.Solver(stc)
    lowest = min(caps)
    values = {}
    for c in caps:
        values[c] = kept.j_value(c, lowest)
        fresh = _lp.Solver(_lp.Structure(kr), symmetry=False).j_value(c)
        assert close(values[c][0], fresh[0], 1e-6), (seed, c)
    for c0, (j0, s0) in values.items():
        for c, (j, _) in values.items():
            assert j >= j0 + s0 * (c - c0) - 1e-6 * max(1.0, j0)


@pytest.mark.parametrize("seed", range(6))
def test_anchored_h_equals_h(seed):
    kr = symmetric_kr(200 + seed, n=7, n_base=5)
    stc = _lp.Structure(kr)
    for dh in (0.5, 1.5, 4.0):
        s = _lp.Solver(stc)
        _, j_real = s.x_real(dh)
        for j in sorted({math.floor(j_real), math.ceil(j_real), math.floor(j_real) + 1}):
            j = min(max(j, 0), stc.n)
            ref = _lp.Solver(_lp.Structure(kr), symmetry=False).h(j)
            assert close(s.h_anchored(j, dh), ref), (seed, dh, j)


@pytest.mark.parametrize("seed", range(4))
def test_chunked_pair_scan_finds_the_same_classes(seed, monkeypatch):
    kr = blown_up_triangles(seed, n=9, p=0.6) or symmetric_kr(seed)
    stc = _lp.Structure(kr)
    whole = _symmetry.twin_classes(stc)
    monkeypatch.setattr(_symmetry, "_CHUNK", 7)
    assert np.array_equal(_symmetry.twin_classes(stc), whole)


def test_quotient_skipped_when_no_rows_merge():
    """Two disjoint triangles sharing no labelled form after merging the only twins: the
    candidate classes would merge no tuple, so the reduction is skipped (values unchanged)."""
    kr = make_kr([[[0, 1, 2]], [[2, 3, 4]], [[4, 5, 0]]], [1.0, 2.0, 3.0])
    stc = _lp.Structure(kr)
    assert len(np.unique(_symmetry.twin_classes(stc, min_gain=0.5))) == stc.n
    assert _lp.reduced(stc).n <= stc.n
    for i in range(kr.n_participants + 1):
        assert close(rm.H(kr, i), pulp_h(kr, i)) and close(rm.G(kr, i), pulp_g(kr, i))
