"""DAWA (policies/blowfish/dawa.py): exact costs, their sensitivity, the dynamic program against
brute force, the invariant the privacy proof rests on, the exact budget split, and the
strategies end to end."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from provsql_dp import blowfish as bf
from provsql_dp.policies.blowfish import dawa

counts = st.lists(st.integers(0, 30), min_size=1, max_size=12)


def _brute_dev(v, a, L):
    w = np.asarray(v[a:a + L], dtype=float)
    return float(np.abs(w - w.mean()).sum())


@given(counts)
def test_interval_costs_are_the_exact_l1_deviations(v):
    costs = dawa.interval_costs(np.array(v))
    assert sorted(costs) == [1 << j for j in range(len(v).bit_length()) if 1 << j <= len(v)]
    for L, c in costs.items():
        assert c.size == len(v) - L + 1
        for a in range(c.size):
            assert c[a] == pytest.approx(_brute_dev(v, a, L), abs=1e-9)
            assert float(Fraction(c[a]) * L).is_integer()  # exact: L·dev is an integer


@given(counts, st.data())
def test_a_unit_change_moves_each_deviation_by_less_than_two(v, data):
    i = data.draw(st.integers(0, len(v) - 1))
    sign = data.draw(st.sampled_from([-1, 1])) if v[i] > 0 else 1
    w = list(v)
    w[i] += sign
    c, c2 = dawa.interval_costs(np.array(v)), dawa.interval_costs(np.array(w))
    for L in c:
        d = np.abs(c2[L] - c[L])
        a = np.arange(c[L].size)
        holds = (a <= i) & (i < a + L)
        assert np.all(d[~holds] == 0)
        assert np.all(d[holds] <= 2 * (1 - 1 / L) + 1e-12)


def _partitions(n):
    """Every partition of [0, n) into intervals of power-of-two length, as boundary lists."""
    if n == 0:
        yield [0]
        return
    L = 1
    while L <= n:
        for rest in _partitions(n - L):
            yield rest + [n]
        L *= 2


def _total(noisy, cuts, offset):
    return sum(int(noisy[b - a][a]) + offset for a, b in zip(cuts[:-1], cuts[1:]))


def _random_noisy(n, rng, lo=-20, hi=20):
    out, L = {}, 1
    while L <= n:
        out[L] = rng.integers(lo, hi, n - L + 1)
        L *= 2
    return out


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 9), st.integers(0, 2 ** 32 - 1), st.integers(-5, 5))
def test_dynamic_program_finds_the_least_noisy_partition(n, seed, offset):
    noisy = _random_noisy(n, np.random.default_rng(seed))
    got = dawa.choose_partition(noisy, n, offset).tolist()
    best = min(_total(noisy, p, offset) for p in _partitions(n))
    assert got[0] == 0 and got[-1] == n
    assert _total(noisy, got, offset) == best


@settings(max_examples=120, deadline=None)
@given(st.integers(1, 9), st.integers(0, 2 ** 32 - 1), st.integers(0, 8), st.data())
def test_output_survives_the_privacy_coupling(n, seed, D, data):
    """The proof's lemma: subtracting D from every interval holding i and raising the cost of
    intervals outside the output leaves the output unchanged (ties included: small costs)."""
    rng = np.random.default_rng(seed)
    noisy = _random_noisy(n, rng, -3, 3)
    out = dawa.choose_partition(noisy, n, 0).tolist()
    chosen = {(a, b - a) for a, b in zip(out[:-1], out[1:])}
    i = data.draw(st.integers(0, n - 1))
    moved = {}
    for L, c in noisy.items():
        c2 = c.copy()
        for a in range(c.size):
            if a <= i < a + L:
                c2[a] -= D
            if (a, L) not in chosen:
                c2[a] += int(rng.integers(0, 4))
        moved[L] = c2
    assert dawa.choose_partition(moved, n, 0).tolist() == out


@given(st.floats(1e-6, 1e3))
def test_budget_split_never_exceeds_epsilon(eps):
    e1, e2 = dawa.split_budget(eps)
    assert e1 > 0 and e2 > 0
    assert Fraction(e1) + Fraction(e2) <= Fraction(eps)


@pytest.mark.parametrize("pol,strategy", [(bf.Policy.line(64), "dawa"),
                                          (bf.Policy.threshold(64, 4), "dawa"),
                                          (bf.Policy.line(64), "dp_dawa")])
def test_release_spends_at_most_epsilon_and_is_exact_at_huge_epsilon(pol, strategy):
    x = np.zeros(64)
    x[10:20] = 5
    x[40] = 30
    w = bf.random_ranges(64, 50, np.random.default_rng(0))
    a = bf.answer(w, x, pol, 0.7, strategy=strategy, rng=np.random.default_rng(1))
    assert a.strategy == strategy and a.noise_only and not a.mse_is_upper_bound
    spent = sum(Fraction(p.epsilon_spent) for p in a.noise_plans)
    assert len(a.noise_plans) == 2 and spent <= Fraction(0.7)
    assert a.variances.shape == (50,) and np.all(a.variances >= 0)
    big = bf.answer(w, x, pol, 1e5, strategy=strategy, rng=np.random.default_rng(2))
    assert np.allclose(big.values, w.answer(x), atol=0.05)


def test_stage_one_is_at_epsilon_over_stretch():
    """ℓ unit changes of x_T per neighbour: the partition's noise has sensitivity 4ℓ."""
    pol = bf.Policy.threshold(64, 4)
    a = bf.answer(bf.Histogram(64), np.arange(64) % 3, pol, 1.0, strategy="dawa",
                  rng=np.random.default_rng(0))
    ell = int(a.detail.split("ℓ=")[1].split(")")[0].split(",")[0])
    assert ell >= 2
    assert a.noise_plans[0].sensitivity == 4 * ell


def test_dawa_is_never_the_default_and_errors_are_clear():
    w, pol = bf.Histogram(16), bf.Policy.line(16)
    assert bf.answer(w, np.ones(16), pol, 1.0, rng=np.random.default_rng(0)).strategy != "dawa"
    assert "dawa" not in bf.compare_strategies(w, pol, 1.0)
    with pytest.raises(ValueError, match="data dependent"):
        bf.expected_error(w, pol, 1.0, strategy="dawa")
    with pytest.raises(ValueError, match="integer counts"):
        bf.answer(w, np.full(16, 0.5), pol, 1.0, strategy="dp_dawa")
    with pytest.raises(ValueError, match="does not apply"):
        bf.answer(bf.Histogram(16), np.ones(16), bf.Policy.grid(4, 4), 1.0, strategy="dawa")
