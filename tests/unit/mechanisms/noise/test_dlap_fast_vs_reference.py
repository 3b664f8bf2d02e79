"""The fast discrete Laplace sampler (``_dlap``) against the exact law and the slow reference.

``_dlap_reference`` is the original line-by-line transcription of Canonne, Kamath & Steinke
(2020), Algorithms 1–2. Both samplers are checked against the exact CDF by the
Dvoretzky–Kiefer–Wolfowitz inequality at failure probability ``ALPHA = 1e-9`` per check (seeds
are fixed, so the outcome is deterministic; a correct sampler fails with probability ≤ 1e-9), and
against each other (two-sample: ``sup |F_fast − F_ref| ≤ δ_fast + δ_ref``). The one new
ingredient of the fast sampler — the Bernoulli(1/k) chain read off one integer — is checked
exactly, at every threshold.
"""

from __future__ import annotations

import math
import os
import sys
from fractions import Fraction

import numpy as np
import pytest

from provsql_dp.mechanisms.noise import _dlap
from provsql_dp.mechanisms.noise._dlap_reference import reference_discrete_laplace
from provsql_dp.mechanisms.noise.safe_noise import discrete_laplace, plan_laplace

ALPHA = 1e-9
N = 300_000


def dkw_delta(n: int, alpha: float = ALPHA) -> float:
    return math.sqrt(math.log(2 / alpha) / (2 * n))


def dlap_cdf(k, lam: Fraction) -> np.ndarray:
    p = math.exp(-1.0 / float(lam))
    k = np.asarray(k, dtype=float)
    with np.errstate(over="ignore"):
        return np.where(k < 0, p ** (-k) / (1 + p), 1 - p ** (k + 1) / (1 + p))


def ecdf(sample: np.ndarray, grid: np.ndarray) -> np.ndarray:
    return np.searchsorted(np.sort(sample), grid, side="right") / sample.size


SCALES = [Fraction(1, 3), Fraction(1, 2), Fraction(1), Fraction(3, 2), Fraction(7, 3), Fraction(5),
          plan_laplace(1, 0.1, integer=True).noise_units]


@pytest.mark.parametrize("lam", SCALES, ids=str)
def test_fast_and_reference_samplers_have_the_exact_law(lam):
    fast = discrete_laplace(lam, size=N, rng=np.random.default_rng(11))
    ref = reference_discrete_laplace(lam, size=N, rng=np.random.default_rng(12))
    lo = int(min(fast.min(), ref.min())) - 1
    hi = int(max(fast.max(), ref.max())) + 1
    grid = np.arange(lo, hi + 1)
    exact = dlap_cdf(grid, lam)
    d = dkw_delta(N)
    f, r = ecdf(fast, grid), ecdf(ref, grid)
    assert np.max(np.abs(f - exact)) <= d, lam
    assert np.max(np.abs(r - exact)) <= d, lam
    assert np.max(np.abs(f - r)) <= 2 * d, lam


def test_the_comparison_has_power():
    """A 5 % scale error is caught by the same check (so the test above can fail)."""
    lam = Fraction(5)
    fast = discrete_laplace(lam * Fraction(21, 20), size=N, rng=np.random.default_rng(13))
    grid = np.arange(int(fast.min()) - 1, int(fast.max()) + 2)
    assert np.max(np.abs(ecdf(fast, grid) - dlap_cdf(grid, lam))) > dkw_delta(N)


class _Fixed:
    """A stand-in generator whose ``integers`` returns given values (then 1s for the tail)."""

    def __init__(self, values):
        self.values = np.asarray(values, dtype=np.int64)
        self.calls = 0

    def integers(self, low, high, size=None, dtype=np.int64):
        self.calls += 1
        if self.calls == 1:
            assert high == math.factorial(20) and size == self.values.size
            return self.values
        return 1  # a continuation coin Bernoulli(1/k) that fails


def test_inverse_factorial_chain_is_exact_at_every_threshold():
    """``L = min{k : u ≥ 20!/k!}``: a step function of u; checking both sides of every step
    proves ``#{u : L > k} = 20!/k!``, i.e. ``P[L > k] = 1/k!`` exactly for k ≤ 20."""
    f20 = math.factorial(20)
    us, want = [], []
    for k in range(2, 21):
        t = f20 // math.factorial(k)
        us += [t, t - 1]
        want += [k, k + 1]
    us += [f20 - 1]
    want += [2]
    got = _dlap._first_failing_inverse_factorial_coin(len(us), _Fixed(us))
    assert got.tolist() == want


def test_inverse_factorial_chain_continues_past_twenty():
    """u = 0 (probability 1/20!) continues with coins Bernoulli(1/21), …, as Alg. 1 does."""
    got = _dlap._first_failing_inverse_factorial_coin(3, _Fixed([0, 5, f := math.factorial(20) - 1]))
    assert got.tolist() == [21, 20, 2] and f > 0


@pytest.mark.parametrize("num,den", [(0, 7), (3, 7), (7, 7), (1, 1), (0, 1), (2**40, 2**41)])
def test_bernoulli_exp_fast_and_reference_agree(num, den):
    from provsql_dp.mechanisms.noise import _dlap_reference as ref

    n = 400_000
    arr = np.full(n, num, dtype=np.int64)
    fast = _dlap._bernoulli_exp_ratio(arr, den, np.random.default_rng(num + 3)).mean()
    slow = ref._bernoulli_exp_ratio(arr, den, np.random.default_rng(num + 4)).mean()
    p = math.exp(-num / den)
    d = math.sqrt(math.log(2 / ALPHA) / (2 * n))  # Hoeffding
    assert abs(fast - p) <= d and abs(slow - p) <= d


def test_pooled_os_entropy_draws_have_the_law():
    """Scalar and small draws without ``rng`` come from the per-scale pool: same exact law."""
    lam = Fraction(3, 2)
    k = np.concatenate([discrete_laplace(lam, size=50) for _ in range(4000)]
                       + [np.array([discrete_laplace(lam) for _ in range(20_000)])])
    grid = np.arange(int(k.min()) - 1, int(k.max()) + 2)
    assert np.max(np.abs(ecdf(k, grid) - dlap_cdf(grid, lam))) <= dkw_delta(k.size)


def test_pool_hands_each_value_out_once_and_erases_it():
    _dlap._forget_pools()
    discrete_laplace(Fraction(9), size=10)
    pool = _dlap._pools[(9, 1)]
    assert pool.pos == 10 and not pool.buf[:10].any()  # used values are zeroed
    before = pool.buf.copy()
    taken = discrete_laplace(Fraction(9), size=5)
    assert taken.tolist() == before[10:15].tolist() and pool.pos == 15
    discrete_laplace(Fraction(9), size=7, rng=np.random.default_rng(0))  # a test rng: no pool
    assert pool.pos == 15


@pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "darwin", reason="needs os.fork")
def test_forked_child_never_reuses_the_parents_pool():
    discrete_laplace(Fraction(9))
    assert _dlap._pools
    pid = os.fork()
    if pid == 0:  # child
        os._exit(0 if not _dlap._pools else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_bernoulli_exp_one_is_the_parity_of_the_chain_at_every_threshold():
    """The parity shortcut of ``_bernoulli_exp_one`` agrees with ``L odd`` on both sides of
    every step of L (so ``P[odd] = Σ_k odd P[L = k] = exp(−1)``, as in CKS Alg. 1) — both ways
    it reads the parity: by a searchsorted up to ``_SEARCH_MAX`` coins, by comparisons above."""
    f20 = math.factorial(20)
    us = [0, 1, f20 - 1]
    for k in range(2, 21):
        t = f20 // math.factorial(k)
        us += [t, t - 1, t + 1]
    us = sorted(set(us))
    big = us * (_dlap._SEARCH_MAX // len(us) + 1)  # past the threshold: the comparisons
    assert len(us) <= _dlap._SEARCH_MAX < len(big)
    for values in (us, big):
        chain = _dlap._first_failing_inverse_factorial_coin(len(values), _Fixed(values))
        odd = _dlap._bernoulli_exp_one(len(values), _Fixed(values))
        assert odd.tolist() == (chain % 2 == 1).tolist()
