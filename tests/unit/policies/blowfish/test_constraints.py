"""Count constraints (policies/blowfish/constraints.py): the histogram's sensitivity against
brute force over every pair of neighbouring databases (papers/002 Def. 4.1) on tiny domains,
and the release (projection onto the known counts, variances, budget)."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from conftest import breadth
from hypothesis import strategies as st

from provsql_dp.policies.blowfish.constraints import (
    histogram_sensitivity,
    marginal_groups,
    release_histogram,
)
from provsql_dp.policies.blowfish.policy import Policy

BOT = -1


def _secret(policy, a, b):
    if a == b:
        return False
    if BOT in (a, b):
        v = b if a == BOT else a
        return policy.has_bottom and v in set(policy.bottom_neighbours().tolist())
    u, w = policy.value_edges()
    return bool(np.any((u == min(a, b)) & (w == max(a, b))))


def brute_sensitivity(policy, groups, n):
    """max ‖h(D) − h(D')‖₁ over neighbours (Def. 4.1) among databases of n individuals."""
    k = policy.k
    vals = list(range(k)) + ([BOT] if policy.has_bottom else [])
    label = {v: None for v in vals}
    for i, g in enumerate(groups):
        for v in g:
            label[v] = i
    dbs = list(itertools.product(vals, repeat=n))

    def counts(d):
        return tuple(sum(1 for t in d if t != BOT and label[t] == i) for i in range(len(groups)))

    def hist(d):
        h = np.zeros(k)
        for t in d:
            if t != BOT:
                h[t] += 1
        return h

    by_counts = {}
    for d in dbs:
        by_counts.setdefault(counts(d), []).append(d)
    best = 0
    for same in by_counts.values():
        for d in same:
            T = {}
            for d2 in same:
                T[d2] = (frozenset((i, d2[i]) for i in range(n) if d[i] != d2[i]
                                   and _secret(policy, d[i], d2[i])),
                         frozenset(i for i in range(n) if d[i] != d2[i]))
            for d2 in same:
                t2, delta2 = T[d2]
                if not t2:
                    continue
                minimal = not any((t3 and t3 < t2) or (t3 == t2 and delta3 < delta2)
                                  for t3, delta3 in T.values())
                if minimal:
                    best = max(best, int(np.abs(hist(d) - hist(d2)).sum()))
    return best


POLICIES = {
    "full": lambda k, b: Policy.full(k, bounded=b),
    "line": lambda k, b: Policy.line(k, bounded=b),
    "threshold2": lambda k, b: Policy.threshold(k, 2, bounded=b),
}


@breadth(5, 25, st.sampled_from(sorted(POLICIES)), st.booleans(), st.integers(2, 4), st.data())
def test_sensitivity_bounds_every_neighbour_by_brute_force(kind, bounded, k, data):
    pol = POLICIES[kind](k, bounded)
    label = data.draw(st.lists(st.integers(-1, 2), min_size=k, max_size=k))
    groups = [[v for v in range(k) if label[v] == g] for g in range(3)]
    groups = [g for g in groups if g]
    if not groups:
        groups = [[0]]
    n = 3 if k <= 3 else 2
    brute = brute_sensitivity(pol, groups, n)
    s = histogram_sensitivity(pol, groups)
    assert brute <= s
    if kind == "full" and bounded and n >= len(groups) + 1:
        assert brute == s  # complete graph: the cycle through every group is a neighbour


def test_known_marginal_under_dp_is_twice_the_cells_and_exact():
    pol = Policy.full(4)  # 2 × 2, a known row marginal
    groups = marginal_groups((2, 2), 0)
    assert groups == [[0, 1], [2, 3]]
    assert histogram_sensitivity(pol, groups) == 4 == brute_sensitivity(pol, groups, 3)
    # single-value groups are public cells: with n known, the last cell is too
    assert histogram_sensitivity(pol, [[0], [1], [2]]) == 0 == brute_sensitivity(pol, [[0], [1], [2]], 4)
    assert histogram_sensitivity(pol, [[0, 1], [2]]) == 2 == brute_sensitivity(pol, [[0, 1], [2]], 3)
    assert histogram_sensitivity(pol, [[0, 1], [2, 3]]) == 4


def test_groups_inside_partition_cells_keep_sensitivity_two():
    pol = Policy.partition([0, 0, 1, 1])
    assert histogram_sensitivity(pol, [[0, 1], [2, 3]]) == 2 == brute_sensitivity(pol, [[0, 1], [2, 3]], 3)


def test_release_matches_known_totals_and_spends_epsilon():
    x = np.array([5, 0, 2, 1, 1, 3])
    pol = Policy.line(6)
    groups = [[0, 1, 2], [4, 5]]
    rel = release_histogram(x, pol, groups, 0.5, rng=np.random.default_rng(3))
    assert rel.values[[0, 1, 2]].sum() == pytest.approx(7) and rel.values[[4, 5]].sum() == pytest.approx(4)
    assert sum(Fraction(p.epsilon_spent) for p in rel.noise_plans) <= Fraction(0.5)
    s = histogram_sensitivity(pol, groups)
    base = 2 * (s / 0.5) ** 2
    assert rel.variances[3] == pytest.approx(base, rel=1e-5)
    assert rel.variances[0] == pytest.approx(base * 2 / 3, rel=1e-5)


@pytest.mark.slow  # a rate check, ~21 s loaded: CI's second step
def test_release_variance_matches_the_noise():
    x = np.array([4, 1, 0, 2])
    pol, groups = Policy.full(4), [[0, 1], [2, 3]]
    g = np.random.default_rng(11)
    errs = np.array([release_histogram(x, pol, groups, 1.0, rng=g).values - x for _ in range(4000)])
    want = release_histogram(x, pol, groups, 1.0, rng=g).variances
    assert np.allclose(errs.var(axis=0), want, rtol=0.1)
    assert np.allclose(errs[:, :2].sum(axis=1), 0) and np.allclose(errs[:, 2:].sum(axis=1), 0)


def test_bad_groups_are_refused():
    pol = Policy.line(4)
    for groups, msg in (([[0, 1], [1, 2]], "disjoint"), ([[0, 9]], "outside"), ([[]], "empty"),
                        ([], "at least one")):
        with pytest.raises(ValueError, match=msg):
            histogram_sensitivity(pol, groups)
