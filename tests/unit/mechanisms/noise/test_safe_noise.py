"""Exact discrete Laplace on a public grid (provsql_dp.mechanisms.noise.safe_noise).

Statistical tests use fixed seeds, so they are deterministic; their thresholds are loose enough
that a correct sampler passes with any seed except with negligible probability.
"""

from __future__ import annotations

import doctest
import math
import time
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from provsql_dp.mechanisms.noise import _dlap
from provsql_dp.mechanisms.noise import safe_noise as sn

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def dlap_pmf(k, lam) -> np.ndarray:
    """P[K = k] = (1 − p)/(1 + p)·p**|k|, p = exp(−1/λ)."""
    p = math.exp(-1.0 / float(lam))
    return (1 - p) / (1 + p) * p ** np.abs(np.asarray(k, dtype=float))


def dlap_cdf(k, lam) -> np.ndarray:
    """P[K ≤ k] for integers k."""
    p = math.exp(-1.0 / float(lam))
    k = np.asarray(k, dtype=float)
    neg = p ** (-k) / (1 + p)  # k < 0
    pos = 1 - p ** (k + 1) / (1 + p)  # k ≥ 0
    return np.where(k < 0, neg, pos)


def exact_release(plan: sn.LaplacePlan, values, noise) -> list[float]:
    """The release recomputed with Python's exact integers and Fractions."""
    gamma = Fraction(2) ** plan.grid_exponent
    out = []
    for x, k in zip(values, noise):
        x = min(max(float(x), -sn.MAX_ABS_VALUE), sn.MAX_ABS_VALUE)
        m = math.floor(Fraction(x) / gamma)
        out.append(float((m + int(k)) * gamma))  # Fraction → float: correctly rounded
    return out


# ------------------------------------------------------------------------------------------
# The sampler is exact
# ------------------------------------------------------------------------------------------


LAMBDAS = [
    (Fraction(1, 10), 1),
    (Fraction(1, 2), 2),
    (Fraction(7, 3), 3),
    (Fraction(20), 4),
    (sn.plan_laplace(1, 0.1, integer=True).noise_units, 5),  # a dyadic rounding of 1/0.1
]


@pytest.mark.parametrize("lam,seed", LAMBDAS, ids=lambda v: str(v))
def test_pmf_chi_square(lam, seed):
    n = 100_000
    k = sn.discrete_laplace(lam, size=n, rng=np.random.default_rng(seed))
    assert k.dtype == np.int64 and k.shape == (n,)
    # Cells with expected count ≥ 20; the two tails pooled.
    support = np.arange(-2000, 2001)
    expected = n * dlap_pmf(support, lam)
    keep = support[expected >= 20]
    lo, hi = int(keep.min()), int(keep.max())
    cells = np.arange(lo, hi + 1)
    obs = [np.sum(k < lo)] + [np.sum(k == c) for c in cells] + [np.sum(k > hi)]
    exp_ = [n * float(dlap_cdf(lo - 1, lam))] + list(n * dlap_pmf(cells, lam)) + [
        n * (1 - float(dlap_cdf(hi, lam)))
    ]
    obs, exp_ = np.array(obs, float), np.array(exp_, float)
    mask = exp_ > 0
    if mask.sum() < 2:  # λ tiny: one cell carries everything; compare it directly
        pytest.skip("degenerate")
    _, pvalue = stats.chisquare(obs[mask], exp_[mask] * obs[mask].sum() / exp_[mask].sum())
    assert pvalue > 1e-4, (lam, pvalue)


@pytest.mark.parametrize("lam,seed", LAMBDAS, ids=lambda v: str(v))
def test_cdf_kolmogorov_distance(lam, seed):
    n = 100_000
    k = np.sort(sn.discrete_laplace(lam, size=n, rng=np.random.default_rng(100 + seed)))
    grid = np.arange(int(k.min()) - 1, int(k.max()) + 1)
    ecdf = np.searchsorted(k, grid, side="right") / n
    distance = float(np.max(np.abs(ecdf - dlap_cdf(grid, lam))))
    assert distance < 2.0 / math.sqrt(n), distance  # the 0.1 % KS critical value is 1.95/√n


def test_zero_mass_for_tiny_scale():
    lam = Fraction(1, 10)  # P[0] = tanh(5) = 0.99990920…
    k = sn.discrete_laplace(lam, size=200_000, rng=np.random.default_rng(8))
    p0 = math.tanh(1 / (2 * float(lam)))
    zeros = int(np.sum(k == 0))
    assert stats.binomtest(zeros, k.size, p0).pvalue > 1e-4
    assert np.all(np.abs(k) <= 3)


@pytest.mark.parametrize("lam", [Fraction(50), Fraction(1000, 3)])
def test_variance_is_two_scale_squared(lam):
    k = sn.discrete_laplace(lam, size=100_000, rng=np.random.default_rng(21))
    p = math.exp(-1 / float(lam))
    exact = 2 * p / (1 - p) ** 2
    assert abs(exact / (2 * float(lam) ** 2) - 1) < 1e-3  # ≈ 2λ² for large λ
    assert abs(float(k.var()) / exact - 1) < 0.04  # sd of the estimate ≈ 0.7 %
    assert abs(float(k.mean())) < 5 * math.sqrt(exact / k.size)


@pytest.mark.parametrize("num,den", [(0, 5), (1, 3), (2, 3), (1, 1), (7, 7), (12345, 2**40)])
def test_bernoulli_exp_is_exact(num, den):
    n = 200_000
    draws = _dlap._bernoulli_exp_ratio(np.full(n, num, dtype=np.int64), den, np.random.default_rng(num + den))
    p = math.exp(-num / den)
    hits = int(draws.sum())
    if p == 1.0:
        assert hits == n
    else:
        assert stats.binomtest(hits, n, p).pvalue > 1e-4, (num, den, hits / n, p)


def test_bernoulli_exp_one():
    draws = _dlap._bernoulli_exp_one(300_000, np.random.default_rng(5))
    assert stats.binomtest(int(draws.sum()), draws.size, math.exp(-1)).pvalue > 1e-4


def test_discrete_laplace_scalar_and_shapes():
    g = np.random.default_rng(0)
    assert isinstance(sn.discrete_laplace(3, rng=g), int)
    assert sn.discrete_laplace(Fraction(5, 2), size=(3, 4), rng=g).shape == (3, 4)
    assert sn.discrete_laplace(2.5, size=0, rng=g).shape == (0,)
    assert sn.discrete_laplace(np.int64(4), size=5, rng=g).shape == (5,)


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), 1e-30, Fraction(2**70, 3)])
def test_discrete_laplace_rejects_bad_scales(bad):
    with pytest.raises(ValueError):
        sn.discrete_laplace(bad, size=3, rng=np.random.default_rng(0))


def test_discrete_laplace_rejects_non_numbers():
    with pytest.raises(TypeError):
        sn.discrete_laplace("2", rng=np.random.default_rng(0))
    with pytest.raises(TypeError):
        sn.discrete_laplace(True, rng=np.random.default_rng(0))


def test_overflow_is_an_error_not_a_truncation(monkeypatch):
    # Shrink the int64 headroom so that the (normally < 2**-700) event happens.
    monkeypatch.setattr(_dlap, "_INT_LIMIT", 2 * 1000)  # the sampler's module
    with pytest.raises(OverflowError):
        sn.discrete_laplace(1000, size=10_000, rng=np.random.default_rng(0))


def test_sampling_speed():
    n = 1_000_000
    for lam in (Fraction(1, 2), Fraction(2**21), sn.plan_laplace(1.0, 0.1).noise_units):
        g = np.random.default_rng(0)
        start = time.perf_counter()
        k = sn.discrete_laplace(lam, size=n, rng=g)
        elapsed = time.perf_counter() - start
        assert k.shape == (n,)
        print(f"discrete_laplace λ={float(lam):.4g}: {n:,} samples in {elapsed:.3f} s")
    plan = sn.plan_laplace(1.0, 1.0)
    values = np.random.default_rng(1).normal(size=n) * 1e6
    start = time.perf_counter()
    plan.release_array(values, rng=np.random.default_rng(2))
    print(f"release_array: {n:,} values in {time.perf_counter() - start:.3f} s")
    start = time.perf_counter()
    for _ in range(100):
        plan.release(1.0)
    print(f"scalar release with OS entropy: {(time.perf_counter() - start) * 1e4:.0f} µs each")


# ------------------------------------------------------------------------------------------
# Plans: the grid rule and the privacy accounting
# ------------------------------------------------------------------------------------------


def test_grid_rule_examples():
    assert sn.grid_for(1.0, 1.0) == 2.0**-20
    assert sn.grid_for(1.0, 0.5) == 2.0**-20  # min(Δ, Δ/ε) = Δ
    assert sn.grid_for(1.0, 4.0) == 2.0**-22  # min(Δ, Δ/ε) = 1/4
    assert sn.grid_for(3.0, 1.0) == 2.0**-19  # largest power of two ≤ 3·2**-20
    assert sn.grid_for(1.0, 1.0, changed=8) == 2.0**-23  # per-coordinate sensitivity 1/8
    assert sn.grid_for(1, 1.0, integer=True) == 1.0
    assert sn.grid_for(2.0**30, 1.0, integer=True) == 2.0**10  # coarser than 1 only when tiny vs Δ


def test_integer_counts_pay_nothing():
    plan = sn.plan_laplace(1, 0.5, integer=True)
    assert (plan.grid, plan.index_sensitivity, plan.noise_units) == (1.0, 1, Fraction(2))
    assert plan.epsilon_spent == Fraction(1, 2) and plan.inflation == 1.0
    plan = sn.plan_laplace(3, 0.25, integer=True, changed=50)  # r is irrelevant on the unit grid
    assert (plan.index_sensitivity, plan.noise_units, plan.epsilon_spent) == (3, 12, Fraction(1, 4))
    rel = plan.release_array(np.arange(1000), rng=np.random.default_rng(3))
    assert np.all(rel == np.round(rel))
    noise = rel - np.arange(1000)
    assert abs(float(noise.var()) / (2 * 12.0**2) - 1) < 0.15


def test_real_values_inflation_is_tiny_and_exact():
    plan = sn.plan_laplace(1.0, 0.1)
    assert plan.epsilon_spent <= Fraction(0.1)
    assert 1.0 <= plan.inflation < 1 + 2**-49  # 1/γ is an integer: no rounding cost at all
    plan = sn.plan_laplace(1.3, 0.7)
    assert plan.epsilon_spent <= Fraction(0.7)
    assert 1.0 <= plan.inflation <= 1 + 2**-20 + 2**-49


@SETTINGS
@given(
    delta=st.floats(1e-6, 1e9),
    eps=st.floats(1e-4, 50.0),
    changed=st.integers(1, 2000),
    integer=st.booleans(),
)
def test_epsilon_charged_is_never_exceeded(delta, eps, changed, integer):
    try:
        plan = sn.plan_laplace(delta, eps, integer=integer, changed=changed)
    except ValueError:
        assert delta / eps < sn.MIN_SCALE or delta / eps > sn.MAX_SCALE
        return
    gamma = Fraction(2) ** plan.grid_exponent
    # the grid is a power of two within the supported range, fixed by public values only
    assert plan.grid_exponent >= sn.MIN_GRID_EXPONENT and (not integer or plan.grid >= 1)
    assert sn.grid_for(delta, eps, integer=integer, changed=changed) == plan.grid
    # index sensitivity covers every neighbour: c ≥ ⌈Δ/γ⌉ + r − 1, or ⌊Δ⌋ on the unit grid
    if integer and plan.grid_exponent == 0:
        assert plan.index_sensitivity == max(1, math.floor(delta))
    else:
        assert plan.index_sensitivity == math.ceil(Fraction(delta) / gamma) + changed - 1
    # the exact privacy loss c/λ never exceeds the ε charged
    assert plan.noise_units >= Fraction(plan.index_sensitivity) / Fraction(eps)
    assert plan.epsilon_spent <= Fraction(eps)
    # the price is accuracy only, and bounded (integer data: the true sensitivity is ⌊Δ⌋)
    native = math.floor(delta) / delta if integer and plan.grid_exponent == 0 else 1.0
    assert plan.inflation >= native * (1 - 1e-15)
    assert plan.inflation <= (1 + changed * float(gamma) / delta) * (1 + 2**-49)
    assert plan.noise_units <= sn.MAX_NOISE_UNITS
    assert plan.noise_units.denominator <= 2**61


@SETTINGS
@given(
    x=st.floats(-1e12, 1e12),
    frac=st.floats(0.0, 1.0),
    sign=st.sampled_from([-1, 1]),
    delta=st.floats(1e-3, 1e3),
    eps=st.floats(0.05, 5.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_grid_index_moves_by_at_most_c(x, frac, sign, delta, eps, seed):
    """The quantity the privacy proof rests on, observed through the release itself."""
    plan = sn.plan_laplace(delta, eps)
    x2 = x + sign * frac * delta
    if abs(Fraction(x2) - Fraction(x)) > Fraction(delta):  # float rounding widened the step
        return
    y1 = plan.release(x, rng=np.random.default_rng(seed))
    y2 = plan.release(x2, rng=np.random.default_rng(seed))  # same noise K
    moved = abs(Fraction(y1) - Fraction(y2)) / Fraction(plan.grid)
    if max(abs(y1), abs(y2)) < 2.0**53 * plan.grid:  # released exactly (no final rounding)
        assert moved.denominator == 1 and moved <= plan.index_sensitivity


@SETTINGS
@given(
    n=st.integers(1, 40),
    r=st.integers(1, 5),
    delta=st.floats(0.01, 100.0),
    data=st.data(),
)
def test_vector_index_l1_moves_by_at_most_c(n, r, delta, data):
    r = min(r, n)
    plan = sn.plan_laplace(delta, 1.0, changed=r)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = rng.uniform(-1e3, 1e3, size=n)
    where = rng.choice(n, size=r, replace=False)
    step = rng.dirichlet(np.ones(r)) * delta * (1 - 1e-9) * rng.choice([-1, 1], size=r)
    x2 = x.copy()
    x2[where] += step
    if sum(abs(Fraction(a) - Fraction(b)) for a, b in zip(x, x2)) > Fraction(delta):
        return
    y1 = plan.release_array(x, rng=np.random.default_rng(7))
    y2 = plan.release_array(x2, rng=np.random.default_rng(7))
    moved = sum(abs(Fraction(a) - Fraction(b)) for a, b in zip(y1, y2)) / Fraction(plan.grid)
    assert moved.denominator == 1 and moved <= plan.index_sensitivity


@pytest.mark.parametrize(
    "kwargs",
    [
        {"sensitivity": 0, "epsilon": 1},
        {"sensitivity": -1, "epsilon": 1},
        {"sensitivity": float("nan"), "epsilon": 1},
        {"sensitivity": float("inf"), "epsilon": 1},
        {"sensitivity": 1, "epsilon": 0},
        {"sensitivity": 1, "epsilon": float("inf")},
        {"sensitivity": 1, "epsilon": 2.0**-41},  # below MIN_EPSILON
        {"sensitivity": 2.0**-30, "epsilon": 1},  # scale below MIN_SCALE
        {"sensitivity": 2.0**70, "epsilon": 1},  # scale above MAX_SCALE
        {"sensitivity": 1, "epsilon": 2.0**-20, "changed": 2**40},  # noise beyond 2**52 units
        {"sensitivity": 1, "epsilon": 1, "changed": 0},
        {"sensitivity": 1, "epsilon": 1, "changed": True},
        {"sensitivity": 1, "epsilon": 1, "changed": 1.5},
    ],
)
def test_plan_rejects_bad_parameters(kwargs):
    with pytest.raises(ValueError):
        sn.plan_laplace(**kwargs)


def test_plan_accepts_the_limits():
    for delta, eps in [(sn.MIN_SCALE, 1.0), (1.0, 1 / sn.MIN_SCALE), (sn.MAX_SCALE, 1.0),
                       (1.0, sn.MIN_EPSILON), (1.0, 1e-6)]:
        plan = sn.plan_laplace(delta, eps)
        assert plan.epsilon_spent <= Fraction(eps)
        y = plan.release(0.3, rng=np.random.default_rng(0))
        assert sn.on_grid(y, plan.grid)
        assert abs(y - 0.3) < 60 * plan.noise_scale + plan.grid


# ------------------------------------------------------------------------------------------
# Releases: on the grid, exact, deterministic under a seed, independent of the value
# ------------------------------------------------------------------------------------------


VALUES = [0.0, -0.0, 5e-324, -5e-324, 1e-300, -1e-300, 1 / 3, -2 / 3, 0.1, 123456.789,
          -987654.321, 2.0**52 + 1, 1e15, -1e15, 2.0**60, -(2.0**60)]

PLANS = [
    {"sensitivity": 1.0, "epsilon": 1.0},
    {"sensitivity": 0.37, "epsilon": 0.01},
    {"sensitivity": 1e6, "epsilon": 2.0},
    {"sensitivity": sn.MIN_SCALE, "epsilon": 1.0},  # tiny scale, grid 2**-44 (the floor)
    {"sensitivity": 2.0**-20, "epsilon": 1.0, "changed": 2**10},  # the grid floor binds
    {"sensitivity": 2.0**60, "epsilon": 1.0},  # huge scale, coarse grid
    {"sensitivity": 1, "epsilon": 1.0, "integer": True},
    {"sensitivity": 2, "epsilon": 0.3, "integer": True, "changed": 4},
]


@pytest.mark.parametrize("kw", PLANS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_releases_lie_on_the_grid_and_are_exact(kw):
    plan = sn.plan_laplace(**kw)
    values = np.array(VALUES * 4)
    released = plan.release_array(values, rng=np.random.default_rng(42))
    assert released.dtype == np.float64 and released.shape == values.shape
    assert np.all(sn.on_grid(released, plan.grid))
    # bit-for-bit the exact integer computation, rounded once
    noise = sn.discrete_laplace(plan.noise_units, size=values.size, rng=np.random.default_rng(42))
    assert released.tolist() == exact_release(plan, values, noise)


def test_values_up_to_1e15_on_a_fine_grid():
    plan = sn.plan_laplace(1.0, 1.0)  # γ = 2**-20: 1e15/γ ≈ 2**70 grid steps
    for v in (1e15, -1e15, 1e15 + 0.125, 999_999_999_999_999.9):
        y = plan.release(v, rng=np.random.default_rng(1))
        assert sn.on_grid(y, plan.grid)
        assert abs(y - v) < 50  # noise scale 1


def test_clamps_beyond_max_abs_value():
    plan = sn.plan_laplace(1.0, 1.0)
    y = plan.release(1e300, rng=np.random.default_rng(0))
    assert abs(y - sn.MAX_ABS_VALUE) < 1e5 and sn.on_grid(y, plan.grid)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_values_raise(bad):
    plan = sn.plan_laplace(1.0, 1.0)
    with pytest.raises(ValueError):
        plan.release(bad, rng=np.random.default_rng(0))
    with pytest.raises(ValueError):
        plan.release_array([1.0, bad], rng=np.random.default_rng(0))
    with pytest.raises(ValueError):
        sn.laplace_release(bad, 1.0, 1.0)


def test_release_wants_one_value_and_a_generator():
    plan = sn.plan_laplace(1.0, 1.0)
    with pytest.raises(ValueError):
        plan.release([1.0, 2.0])
    with pytest.raises(TypeError):
        plan.release(1.0, rng=42)
    with pytest.raises(TypeError):
        plan.release(1.0, rng=np.random.RandomState(0))


def test_determinism_under_a_fixed_generator():
    plan = sn.plan_laplace(2.0, 0.5)
    values = np.linspace(-10, 10, 1000)
    a = plan.release_array(values, rng=np.random.default_rng(9))
    b = plan.release_array(values, rng=np.random.default_rng(9))
    c = plan.release_array(values, rng=np.random.default_rng(10))
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert sn.laplace_release(3.5, 2.0, 0.5, rng=np.random.Generator(np.random.Philox(5))) == \
        sn.laplace_release(3.5, 2.0, 0.5, rng=np.random.Generator(np.random.Philox(5)))


def test_grid_and_noise_do_not_depend_on_the_value():
    plan = sn.plan_laplace(1.0, 0.5)
    gamma = Fraction(plan.grid)
    noises, states = [], []
    for v in (0.0, 3.25, -17.0, 1e9, 123.456789):
        g = np.random.default_rng(77)
        y = plan.release(v, rng=g)
        noises.append((Fraction(y) - math.floor(Fraction(v) / gamma) * gamma) / gamma)
        states.append(g.bit_generator.state["state"]["state"])
    assert len(set(noises)) == 1 and noises[0].denominator == 1  # the same K, in grid units
    assert len(set(states)) == 1  # the same number of random draws: no value-dependent work
    # the grid is a function of (Δ, ε, r, integer) only: grid_for takes no value at all
    assert sn.grid_for(1.0, 0.5) == plan.grid


def test_os_entropy_releases_differ():
    plan = sn.plan_laplace(1.0, 0.1)
    draws = {plan.release(0.0) for _ in range(5)}
    assert len(draws) == 5  # a collision has probability ≈ 2**-20 per pair
    a, b = sn.release_rng(), sn.release_rng()
    assert isinstance(a.bit_generator, np.random.Philox)
    assert a.bit_generator.state["state"]["key"].tolist() != b.bit_generator.state["state"]["key"].tolist()
    assert sn.laplace_release(0.0, 1.0, 0.1) != sn.laplace_release(0.0, 1.0, 0.1)


def test_release_variance_matches_the_plan():
    plan = sn.plan_laplace(1.0, 0.5)  # noise scale 2
    y = plan.release_array(np.zeros(100_000), rng=np.random.default_rng(31))
    assert abs(plan.noise_scale - 2.0) < 1e-12
    assert abs(plan.noise_variance / (2 * plan.noise_scale**2) - 1) < 1e-6
    assert abs(float(y.var()) / plan.noise_variance - 1) < 0.04


def test_laplace_release_array_default_changed_is_the_size():
    values = np.zeros((4, 5))
    out = sn.laplace_release_array(values, 1.0, 1.0, rng=np.random.default_rng(0))
    assert out.shape == (4, 5)
    assert np.all(sn.on_grid(out, sn.grid_for(1.0, 1.0, changed=20)))


def test_on_grid():
    assert sn.on_grid(3 * 2.0**-20, 2.0**-20)
    assert not sn.on_grid(0.1, 2.0**-20)
    assert not sn.on_grid(float("nan"), 1.0) and not sn.on_grid(float("inf"), 1.0)
    assert sn.on_grid(-0.0, 1.0) and sn.on_grid(2.0**60, 2.0**-44)
    assert not sn.on_grid(5e-324, 2.0**10)
    with pytest.raises(ValueError):
        sn.on_grid(1.0, 0.3)


def test_data_dependent_scale_recursive_mechanism_pattern():
    """Δ̂ is released first (on its own grid); the second plan is a function of Δ̂ only."""
    eps1, eps2, beta, mu, delta, x = 0.5, 0.5, 0.1, 1.0, 7.0, 1234.5
    g = np.random.default_rng(12)
    log_release = sn.laplace_release(math.log(delta) + mu, beta, eps1, rng=g)
    delta_hat = sn.at_least_min_scale(math.exp(log_release), eps2)
    plan = sn.plan_laplace(delta_hat, eps2)
    assert plan.grid == sn.grid_for(delta_hat, eps2)
    y = plan.release(x, rng=g)
    assert sn.on_grid(y, plan.grid) and sn.on_grid(log_release, sn.grid_for(beta, eps1))


def test_at_least_min_scale():
    assert sn.at_least_min_scale(1e-30, 1.0) == sn.MIN_SCALE
    assert sn.at_least_min_scale(0.0, 2.0) == 2 * sn.MIN_SCALE
    assert sn.at_least_min_scale(3.0, 1.0) == 3.0
    for bad in (float("nan"), float("inf"), -1.0):
        with pytest.raises(ValueError):
            sn.at_least_min_scale(bad, 1.0)


def test_dyadic_ceiling():
    for lam in (Fraction(1) / Fraction(0.1), Fraction(2**40) / Fraction(1e-3),
                Fraction(3) / Fraction(1e7 + 0.1), Fraction(5, 7)):
        d = sn._dyadic_ceiling(lam)
        assert d >= lam and d.numerator <= 2**53 and d.denominator <= 2**61
        if lam >= Fraction(1, 2**8):
            assert d / lam - 1 <= Fraction(1, 2**49)


def test_module_doctests():
    result = doctest.testmod(sn, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 10 and result.failed == 0
