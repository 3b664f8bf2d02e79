"""The bucketed closed forms (``recursive.buckets``) against the per-participant ones
(``recursive.single_owner``): the same Δ, the same X, the same release under one seed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import breadth
from hypothesis import given, settings
from hypothesis import strategies as st

from provsql_dp.mechanisms.recursive import buckets as bk
from provsql_dp.mechanisms.recursive import single_owner as so

totals = st.lists(st.one_of(st.integers(0, 50).map(float),
                            st.floats(0, 1e6, allow_nan=False, allow_infinity=False)),
                  max_size=60)
params = st.tuples(st.sampled_from([0.5, 1.0, 3.0]), st.sampled_from([0.02, 0.2, 0.5, 1.0]))


@breadth(40, 200, totals, params)
def test_delta_is_the_per_participant_one(c, p):
    theta, beta = p
    b = bk.Buckets.from_totals(c, theta, beta, mu=1.0)
    assert bk.delta_buckets(b, theta, beta) == so.delta(np.array(c), theta, beta)


@settings(max_examples=200, deadline=None)
@given(totals, st.floats(0, 1e6))
def test_clamped_sum_is_the_per_participant_one(c, d):
    b = bk.Buckets.from_totals(c, 1.0, 0.2, mu=1.0)
    assert bk.clamped_buckets(b, d) == pytest.approx(so.clamped_sum(np.array(c), d), rel=1e-12)


def test_totals_on_the_thresholds_are_read_exactly():
    theta, beta = 1.0, 0.5
    w = np.exp(np.arange(1, 12) * beta) * theta / 2  # totals exactly on the thresholds W_j
    c = np.concatenate([w, np.nextafter(w, np.inf), np.nextafter(w, 0), [0.0, 0.0]])
    asked = []
    b = bk.Buckets.from_totals(c, theta, beta, mu=0.0)
    inner = b.exact
    b.exact = lambda kind, v: asked.append((kind, v)) or inner(kind, v)
    assert bk.delta_buckets(b, theta, beta) == so.delta(c, theta, beta)
    d = math.exp(3 * beta) * theta  # Δ̂ on the lattice with μ = 0: equal to a total's bucket edge
    assert bk.clamped_buckets(b, d) == pytest.approx(so.clamped_sum(c, d), rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 40).map(float), max_size=50), st.integers(0, 2**32 - 1),
       st.sampled_from([0.3, 1.0, 4.0]))
def test_count_releases_are_identical_under_one_seed(c, seed, eps):
    p = bk.params_for(eps, 1, "node")
    b = bk.Buckets.from_totals(c, p["theta"], p["beta"], p["mu"])
    got = bk.release_buckets([b], eps, "node", np.random.default_rng(seed))
    want = so.release(np.array(c), eps, "node", np.random.default_rng(seed))
    assert (got.value, got.delta_hat, got.epsilon) == (want.value, want.delta_hat, want.epsilon)


@breadth(12, 60, totals, totals, st.integers(0, 2**32 - 1))
def test_signed_releases_match_under_one_seed(pos, neg, seed):
    n = max(len(pos), len(neg))
    cp, cn = np.zeros(n), np.zeros(n)
    cp[:len(pos)], cn[:len(neg)] = pos, neg
    p = bk.params_for(1.0, 2, "node")
    parts = [bk.Buckets.from_totals(x, p["theta"], p["beta"], p["mu"]) for x in (cp, cn)]
    got = bk.release_buckets(parts, 1.0, "node", np.random.default_rng(seed))
    want = so.release_signed(cp, cn, 1.0, "node", np.random.default_rng(seed))
    assert got.mechanism == want.mechanism == "recursive-signed"
    assert got.delta_hat == want.delta_hat
    assert got.value == pytest.approx(want.value, rel=1e-9, abs=1e-6 * want.delta_hat)


@pytest.mark.parametrize("c, message", [
    ([1.0, -2.0], "nonnegative"), ([1.0, float("nan")], "finite"), ([float("inf")], "finite"),
    ([1e308, 1.7e308], "too large")])
def test_invalid_totals_are_refused_like_the_per_participant_path(c, message):
    b = bk.Buckets.from_totals(c, 1.0, 0.2, mu=1.0)
    with pytest.raises(ValueError, match=message):
        bk.release_buckets([b], 1.0, "node", np.random.default_rng(0))
    with pytest.raises(ValueError, match=message):
        so.release(np.array(c), 1.0, "node", np.random.default_rng(0))
