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
from conftest import breadth
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


@breadth(5, 25, seed=st.integers(0, 2**31), theta=st.sampled_from([1.0, 4.0, 0.003, 250.0]),
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


def _bucket_rows(c, theta=1.0, beta=0.1, mu=0.5, eps2=0.5):
    """(the buckets, the number of rows the bucket pass returned, exact re-reads)."""
    con = duckdb.connect()
    con.execute("CREATE TABLE tot(c0 DOUBLE)")
    con.execute("INSERT INTO tot SELECT unnest(?::DOUBLE[])", [[float(v) for v in c]])
    rows, reads = [], []

    def run(sql, params=None):
        out = con.execute(sql, params).fetchnumpy()
        rows.append(len(out["c" if "c" in out else "n"]))
        return out

    def run_exact(sql, params=None):
        reads.append(sql)
        return run(sql, params)

    params = {"theta": theta, "beta": beta, "mu": mu, "eps2": eps2}
    (b,), = engine_buckets(run, "SELECT 0 AS g, c0 FROM tot", None, params, 1, 1, run_exact)
    return b, rows[0], reads


@pytest.mark.parametrize("spread", ["slack", "lattice", "ulps"])
def test_many_totals_pushed_onto_a_boundary_add_no_bucket_rows(spread):
    """h55hard: near totals were grouped by their exact value, so an analyst who pushed n
    distinct totals onto a boundary (``CASE WHEN <secret> THEN W_j·(1 + id·1e-12) …``) grew the
    engine's hash table — and the bucket rows — with n: a timing channel. Keyed by their cell
    among the boundaries (``near_cell_sql``), 50 or 5000 such totals give the same number of
    bucket rows, and the release still classifies every one exactly, with no further pass."""
    _, (_, w, gb) = search_range(200.0, 10**5, 1.0, 0.1)
    lattice = math.exp(0.5 + 0.1 * 12)  # a Δ̂ lattice point (θ = 1, μ = 0.5, β = 0.1)

    def pushed(n):
        i = np.arange(1, n + 1, dtype=np.float64)
        if spread == "slack":  # inside W_5's greedy slack (W_5, gb_5], and around W_9
            return np.concatenate([w[4] + (gb[4] - w[4]) * i / (n + 1), w[8] * (1 + i * 1e-13)])
        if spread == "lattice":  # within 1e-9 of a lattice point, on both sides
            return lattice * (1 + (i - n / 2) * 1e-13)
        return np.nextafter(w[6], np.inf) + np.spacing(w[6]) * (i % 40)  # a few ulps: windowed

    base = np.round(np.random.default_rng(3).exponential(20.0, size=300), 1)
    counts = []
    for n in (50, 5000):
        c = np.concatenate([base, pushed(n)])
        b, n_rows, reads = _bucket_rows(c)
        assert not reads
        assert delta_buckets(b, 1.0, 0.1) == single_owner.delta(c, 1.0, 0.1)
        for d in (lattice, float(w[4]), float(gb[4]), float(w[6]), math.exp(0.5 + 0.1 * 5)):
            assert clamped_buckets(b, d) == pytest.approx(single_owner.clamped_sum(c, d),
                                                          rel=1e-12)
        assert not reads
        counts.append(n_rows)
        if spread == "slack":  # a Δ̂ no release draws, inside a near cell: the safety net reads
            d = float(w[4] + gb[4]) / 2  # that cell again (by its key) and is exact
            assert clamped_buckets(b, d) == pytest.approx(single_owner.clamped_sum(c, d),
                                                          rel=1e-12)
            assert len(reads) == 1 and "e = ?" in reads[0]
    assert counts[0] == counts[1], counts
