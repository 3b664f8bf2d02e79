"""The quantile mechanism (provsql_dp.mechanisms.global_sensitivity.quantile): its sensitivity claims, checked on
random tables and random neighbours through DuckDB's own aggregates (the values the SQL route
releases), the reference implementation against DuckDB, and the exact law of the release."""

import math

import duckdb
import numpy as np
import pytest
from conftest import breadth
from hypothesis import given, settings
from hypothesis import strategies as st

from provsql_dp.mechanisms.global_sensitivity.quantile import (
    quantile_of,
    quantile_sensitivity,
    release_quantile,
)
from provsql_dp.mechanisms.noise.safe_noise import plan_laplace

CON = duckdb.connect()
LO, HI = -5.0, 20.0


def duck(values, q, discrete):
    """The statistic exactly as the SQL route computes it."""
    fn = "quantile_disc" if discrete else "quantile_cont"
    v = CON.execute(
        f"SELECT {fn}(LEAST(GREATEST(CAST(x AS DOUBLE), {LO!r}), {HI!r}), {q!r}) "
        "FROM (SELECT unnest(?::DOUBLE[]) AS x)", [list(values)]).fetchone()[0]
    return (LO + HI) / 2 if v is None else float(v)


values = st.lists(st.floats(-30, 40, allow_nan=False, width=64), min_size=1, max_size=40)
qs = st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.9, 0.99, 1.0]) | st.floats(0, 1)


@breadth(30, 150, values, qs, st.booleans(), st.floats(1e-3, 3.0), st.data())
def test_delta_move_moves_quantile_by_at_most_delta(xs, q, discrete, delta, data):
    """Bounded δ-neighbourhood: one record moves by ≤ δ ⇒ the clamped quantile moves ≤ Δ."""
    i = data.draw(st.integers(0, len(xs) - 1))
    step = data.draw(st.floats(-delta, delta))
    ys = list(xs)
    ys[i] = xs[i] + step
    sens = quantile_sensitivity(LO, HI, delta=delta)
    assert abs(duck(xs, q, discrete) - duck(ys, q, discrete)) <= sens


@settings(max_examples=150, deadline=None)
@given(st.lists(st.floats(-30, 40, allow_nan=False), max_size=30), qs, st.booleans(),
       st.floats(-1e3, 1e3), st.data())
def test_any_neighbour_moves_quantile_by_at_most_the_width(xs, q, discrete, new, data):
    """Declared bounds: a record added, removed or replaced (the empty table included) moves the
    clamped quantile by at most hi − lo."""
    sens = quantile_sensitivity(LO, HI)
    base = duck(xs, q, discrete)
    added = duck(xs + [new], q, discrete)
    assert abs(base - added) <= sens
    if xs:
        i = data.draw(st.integers(0, len(xs) - 1))
        removed = duck(xs[:i] + xs[i + 1:], q, discrete)
        replaced = duck(xs[:i] + [new] + xs[i + 1:], q, discrete)
        assert abs(base - removed) <= sens and abs(base - replaced) <= sens
    assert LO <= base <= HI


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(-30, 40, allow_nan=False), max_size=30), qs, st.booleans())
def test_reference_matches_duckdb(xs, q, discrete):
    assert math.isclose(quantile_of(xs, q, LO, HI, discrete), duck(xs, q, discrete),
                        rel_tol=1e-12, abs_tol=1e-12)


def test_sensitivity_is_capped_by_the_interval_and_rejects_bad_input():
    assert quantile_sensitivity(0, 1, delta=5) < 1 + 1e-12
    assert quantile_sensitivity(0, 100, delta=0.25) >= 0.25
    with pytest.raises(ValueError):
        quantile_sensitivity(1, 1)
    with pytest.raises(ValueError):
        quantile_sensitivity(0, 1, delta=0)


@settings(max_examples=50, deadline=None)
@given(st.floats(LO, HI), st.floats(0.05, 5.0), st.integers(0, 2**32))
def test_release_stays_in_bounds_on_the_public_grid(v, eps, seed):
    sens = quantile_sensitivity(LO, HI, delta=0.5)
    r = release_quantile(v, LO, HI, sens, eps, rng=np.random.default_rng(seed))
    assert LO <= r.value <= HI
    plan = plan_laplace(sens, eps)
    assert r.grid == plan.grid
    assert r.value in (LO, HI) or r.value / r.grid == math.floor(r.value / r.grid)


@pytest.mark.slow  # 4-10 s (a rate or brute-force check): CI's second step
def test_release_law_is_discrete_laplace_on_the_grid():
    """Exact law: (release − ⌊v/γ⌋γ)/γ is DLap(λ); compare the empirical frequencies of the
    central integers with the exact probability mass function (no clamping in reach)."""
    sens = quantile_sensitivity(LO, HI, delta=1.0)
    plan = plan_laplace(sens, 1.0)
    g = np.random.default_rng(5)
    v = 7.3
    base = math.floor(v / plan.grid)
    n = 4000
    ks = np.array([round(release_quantile(v, LO, HI, sens, 1.0, rng=g).value / plan.grid) - base
                   for _ in range(n)])
    lam = float(plan.noise_units)
    a = math.exp(-1 / lam)
    for k in (0, 1, -1, int(lam), -int(lam)):
        p = (1 - a) / (1 + a) * a ** abs(k)
        se = math.sqrt(p * (1 - p) / n)
        assert abs(np.mean(ks == k) - p) < 5 * se + 1e-9


def test_noise_bound_covers_its_probability():
    sens = quantile_sensitivity(LO, HI, delta=1.0)
    g = np.random.default_rng(9)
    r = [release_quantile(7.3, LO, HI, sens, 2.0, rng=g) for _ in range(1500)]
    b = r[0].noise_bound(0.9)
    cover = np.mean([abs(x.value - 7.3) <= b for x in r])
    assert cover >= 0.88
