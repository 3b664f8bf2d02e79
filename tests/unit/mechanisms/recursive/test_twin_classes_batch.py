"""Vectorised twin detection (``_symmetry``): the batched exact verifier against a brute-force
automorphism check, the classes against brute-force twin classes, the spanning-forest
verification rounds, and the speed of an all-twins input of 10^5 participants."""

from __future__ import annotations

import itertools
import time
from collections import Counter

import numpy as np
import pytest
from conftest import breadth
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from recursive_testkit import make_kr

from provsql_dp.mechanisms.recursive import _lp
from provsql_dp.mechanisms.recursive import _symmetry
from provsql_dp.provenance.krelation import KRelation


def is_automorphism(kr: KRelation, p, q) -> bool:
    """Renaming p <-> q maps the multiset of (annotation, weight) onto itself (written
    independently of the implementation)."""

    def canon(swap):
        return Counter(
            (frozenset(frozenset(swap.get(x, x) for x in m) for m in kr.annotation(t)), float(w))
            for t, w in enumerate(kr.weights)
        )

    return canon({}) == canon({p: q, q: p})


def brute_classes(kr: KRelation, stc) -> np.ndarray:
    """Twin classes by checking every pair (twins form an equivalence relation)."""
    names = [kr.participant_list[i] for i in stc.occurring]
    cls = np.arange(stc.n)
    for a, b in itertools.combinations(range(stc.n), 2):
        if cls[b] == b and is_automorphism(kr, names[a], names[b]):
            cls[b] = cls[a]
    return cls


def same_partition(x: np.ndarray, y: np.ndarray) -> bool:
    pairs = set(zip(x.tolist(), y.tolist()))
    return len(pairs) == len(set(x.tolist())) == len(set(y.tolist()))


@st.composite
def k_relations(draw):
    """Small K-relations with planted symmetry: random base tuples closed under every
    permutation of one or two random classes, so twins (adjacent and not) are common; either
    general DNF annotations or one monomial of a fixed size per tuple (the fast path)."""
    n = draw(st.integers(2, 7))
    fixed_k = draw(st.sampled_from([None, 1, 2, 3]))
    if fixed_k is not None:
        fixed_k = min(fixed_k, n)
    weights = st.sampled_from([1.0, 2.0, 0.5])

    def mono():
        size = fixed_k or draw(st.integers(1, min(3, n)))
        return sorted(draw(st.lists(st.integers(0, n - 1), min_size=size, max_size=size, unique=True)))

    base = []
    for _ in range(draw(st.integers(1, 4))):
        n_monos = 1 if fixed_k else draw(st.integers(1, 2))
        base.append(([mono() for _ in range(n_monos)], draw(weights)))
    perm = draw(st.permutations(list(range(n))))
    n_cls = draw(st.integers(0, 2))
    classes = [perm[:3], perm[3:5]][:n_cls]
    classes = [c for c in classes if len(c) >= 2]
    anns, ws = [], []
    for monos, w in base:
        images = set()
        for combo in itertools.product(*[itertools.permutations(c) for c in classes]):
            ren = {}
            for c, img in zip(classes, combo):
                ren.update(dict(zip(c, img)))
            images.add(tuple(tuple(sorted(ren.get(x, x) for x in m)) for m in monos))
        for img in sorted(images):
            anns.append([list(m) for m in img])
            ws.append(w)
    # a few unsymmetric extra tuples (they break some planted twins)
    for _ in range(draw(st.integers(0, 2))):
        anns.append([mono()])
        ws.append(draw(weights))
    return make_kr(anns, ws, n_participants=n + 1)


#: the twin-class property tests' settings (test_twin_colour_gate uses them too)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@breadth(30, 150, k_relations(), st.sampled_from([1, 5, 10_000]))
def test_classes_equal_brute_force_twin_classes(kr, chunk):
    stc = _lp.Structure(kr)
    if stc.n == 0:
        return
    saved = _symmetry._CHUNK
    try:
        _symmetry._CHUNK = chunk
        cls = _symmetry.twin_classes(stc)
    finally:
        _symmetry._CHUNK = saved
    assert same_partition(cls, brute_classes(kr, stc))
    # labels are 0..K-1 in the order of each class's smallest member
    first = [int(np.flatnonzero(cls == c)[0]) for c in range(int(cls.max()) + 1)]
    assert first == sorted(first) and set(cls.tolist()) == set(range(len(first)))


@breadth(30, 150, k_relations(), st.sampled_from([1, 3, 10_000]))
def test_batched_verifier_is_exact_on_every_pair(kr, budget):
    stc = _lp.Structure(kr)
    if stc.n < 2:
        return
    names = [kr.participant_list[i] for i in stc.occurring]
    pp, qq = np.array(list(itertools.combinations(range(stc.n), 2))).T
    got = _symmetry._Verifier(stc)(pp.astype(np.int64), qq.astype(np.int64), budget)
    want = [is_automorphism(kr, names[a], names[b]) for a, b in zip(pp, qq)]
    assert got.tolist() == want


def test_verifier_general_path_duplicate_and_swapped_monomials():
    # disjunctions the swap does not fix tuple by tuple: R(t1) = {0,2} ∨ {1,3} and
    # R(t2) = {1,2} ∨ {0,3}; (0 1) exchanges t1 and t2, an automorphism iff their weights agree
    kr = make_kr([[[0, 2], [1, 3]], [[1, 2], [0, 3]]], [1.0, 1.0])
    stc = _lp.Structure(kr)
    v = _symmetry._Verifier(stc)
    assert not v.fixed
    assert v(np.array([0]), np.array([1]), 100).tolist() == [True]
    kr2 = make_kr([[[0, 2], [1, 3]], [[1, 2], [0, 3]]], [1.0, 2.0])  # weights differ
    stc2 = _lp.Structure(kr2)
    assert _symmetry._Verifier(stc2)(np.array([0]), np.array([1]), 100).tolist() == [False]


def test_fixed_path_code_overflow_falls_back_to_lexsort():
    """Rows too wide for one int64 code are compared lexicographically, with the same answers."""
    kr = make_kr([[list(t)] for t in itertools.combinations(range(6), 5)] + [[[0, 1, 2, 3, 6]]])
    stc = _lp.Structure(kr)
    v = _symmetry._Verifier(stc)
    assert v.fixed and v.k == 5
    pp, qq = np.array(list(itertools.combinations(range(stc.n), 2))).T
    fast = v(pp, qq, 10_000)
    v.st = type("S", (), dict(vars(stc), n=2**20))()  # n^k * pairs ≥ 2^63: lexsort path
    assert np.array_equal(v(pp, qq, 10_000), fast)
    names = [kr.participant_list[i] for i in stc.occurring]
    assert fast.tolist() == [is_automorphism(kr, names[a], names[b]) for a, b in zip(pp, qq)]


# ---------------------------------------------------------------------- verification rounds
@pytest.mark.parametrize("rounds", [0, 1, 3])
@pytest.mark.parametrize("seed", range(8))
def test_verified_classes_are_components_of_accepted_pairs(seed, rounds, monkeypatch):
    """With any verifier that accepts exactly the pairs of a hidden equivalence, the classes are
    the connected components of the accepted candidates, whatever the number of rounds."""
    monkeypatch.setattr(_symmetry, "_FOREST_ROUNDS", rounds)
    rng = np.random.default_rng(seed)
    n = 60
    truth = rng.integers(0, 6, size=n)
    cp = rng.integers(0, n, size=150)
    cq = rng.integers(0, n, size=150)
    # dense candidate cliques inside some true classes, and duplicate / reversed / loop pairs
    members = np.flatnonzero(truth == 0)
    cl = np.array(list(itertools.combinations(members, 2))).reshape(-1, 2)
    cp = np.concatenate([cp, cl[:, 0], cl[:, 1], [3, 3]])
    cq = np.concatenate([cq, cl[:, 1], cl[:, 0], [3, 3]])
    calls = []

    def verify(p, q):
        calls.append(len(p))
        return truth[p] == truth[q]

    lab = _symmetry._verified_classes(n, cp, cq, verify)
    ok = truth[cp] == truth[cq]
    want = _symmetry._components(n, cp[ok], cq[ok])
    assert same_partition(lab, want)
    assert all(c > 0 for c in calls) and len(calls) <= rounds + 1


def test_a_clique_of_twins_costs_s_minus_one_checks():
    s = 40
    cp, cq = np.array(list(itertools.combinations(range(s), 2))).T
    checked = []

    def verify(p, q):
        checked.extend(zip(p.tolist(), q.tolist()))
        return np.ones(len(p), dtype=bool)

    lab = _symmetry._verified_classes(s, cp, cq, verify)
    assert len(set(lab.tolist())) == 1 and len(checked) == s - 1


# ---------------------------------------------------------------------- engine speed
@pytest.mark.slow  # 10^5 participants, ~19 s loaded: CI's second step
def test_all_twins_1e5_participants_is_fast():
    """One row per person (a COUNT): 10^5 pairwise twins, found by vectorised code only."""
    n = 100_000
    kr = make_kr([[[i]] for i in range(n)])
    stc = _lp.Structure(kr)
    t0 = time.perf_counter()
    cls = _symmetry.twin_classes(stc)
    elapsed = time.perf_counter() - t0
    print(f"twin_classes, {n} all-twin participants: {elapsed:.3f} s")
    assert int(cls.max()) == 0
    t0 = time.perf_counter()
    red = _lp.reduced(stc)
    print(f"reduced (twin classes + quotient): {time.perf_counter() - t0:.3f} s")
    assert red.n == 1 and red.n_tuples == 1 and red.q[0] == n
