"""The engine bucket route never re-reads a bucket for totals on a boundary
(``buckets.near_sql``: red-team finding h49attack-3), and still computes exactly what the
per-participant closed forms compute from the totals.

Random totals, a share of them placed exactly on (and one ulp around) the Δ search's thresholds
``W_j``, their greedy twins ``gb_j``, the Δ̂ lattice ``θe^{μ+βi}`` and Δ̂'s caps, for random
θ, β, μ: DuckDB buckets them (:func:`provsql_dp.privacy.engine_buckets.engine_buckets`), and
``delta_buckets`` / ``clamped_buckets`` must equal ``single_owner.delta`` /
``single_owner.clamped_sum`` with no exact re-read at all.
"""

from __future__ import annotations

import math

import duckdb
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from provsql_dp.mechanisms.recursive import single_owner
from provsql_dp.mechanisms.recursive.buckets import clamped_buckets, delta_buckets
from provsql_dp.mechanisms.recursive.release import capped_delta_hat
from provsql_dp.mechanisms.recursive.single_owner import search_range
from provsql_dp.privacy.engine_buckets import engine_buckets


def _boundaries(c, theta, beta, mu, eps2):
    top = float(np.max(c)) if len(c) else 1.0
    out = [math.exp(math.log(theta) + mu + beta * i) for i in range(-5, 40)]
    out += [math.exp(700.0), math.ldexp(eps2, 63)]
    _, cand = search_range(2 * top, len(c) + 8, theta, beta)
    if cand is not None:
        _, w, gb = cand
        out += list(w[:30]) + list(gb[:30])
    return [v for v in out if 0 < v < 1e300]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), theta=st.sampled_from([1.0, 4.0, 0.003, 250.0]),
       beta=st.sampled_from([0.1, 0.05, 0.5, 1.3]), mu=st.sampled_from([0.5, 0.0, 2.0]))
def test_totals_on_boundaries_are_classified_exactly_without_a_further_pass(seed, theta, beta, mu):
    rng = np.random.default_rng(seed)
    base = np.round(rng.exponential(20.0, size=60), int(rng.integers(0, 4)))
    bounds = _boundaries(base[base > 0], theta, beta, mu, 0.5)
    picks = rng.choice(bounds, size=min(25, len(bounds)), replace=False)
    planted = np.concatenate([picks, np.nextafter(picks, np.inf), np.nextafter(picks, -np.inf)])
    c = np.concatenate([base, planted, [0.0]])
    con = duckdb.connect()
    con.execute("CREATE TABLE tot(c0 DOUBLE)")
    con.executemany("INSERT INTO tot VALUES (?)", [[float(v)] for v in c])
    reads = []

    def run(sql, params=None):
        return con.execute(sql, params).fetchnumpy()

    def run_exact(sql, params=None):
        reads.append(sql)
        return run(sql, params)

    params = {"theta": theta, "beta": beta, "mu": mu, "eps2": 0.5}
    (b,), = engine_buckets(run, "SELECT 0 AS g, c0 FROM tot", None, params, 1, 1, run_exact)
    assert delta_buckets(b, theta, beta) == single_owner.delta(c, theta, beta)
    # every Δ̂ a release can draw: the lattice θe^{μ+βĵ} (computed as release_delta_hat does)
    # and its caps
    lattice = [capped_delta_hat(math.exp(math.log(theta) + mu + beta * j), 0.5)
               for j in range(-5, 40, 3)]
    for d in lattice + [capped_delta_hat(math.inf, 0.5), math.exp(700.0)]:
        assert clamped_buckets(b, d) == pytest.approx(single_owner.clamped_sum(c, d), rel=1e-12)
    assert not reads, f"{len(reads)} further pass(es) over the totals"
    for d in picks[:6]:  # any other Δ̂ (none a release draws): the safety net's exact re-read
        assert clamped_buckets(b, d) == pytest.approx(single_owner.clamped_sum(c, d), rel=1e-12)


def test_no_rows_at_the_deadline_gives_empty_buckets():
    """A bucket query cut off at the release deadline answers NO_ROWS (fast_path): its columns
    must be every column the bucket pass reads (the near-boundary column ``e`` included), so the
    data-independent release follows instead of a KeyError after the charge."""
    from provsql_dp.mechanisms.recursive.buckets import params_for
    from provsql_dp.privacy.engine_buckets import NO_ROWS, engine_buckets

    out = engine_buckets(lambda *a: NO_ROWS, "", None, params_for(1.0, 2, "node"), 2, 3)
    assert len(out) == 3
