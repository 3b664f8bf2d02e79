"""The bucket pass's grouping keys (``privacy.engine_buckets``): the near-boundary column ``e`` is
never NULL — the exact value of a total near a boundary, 0 for any other — because a nullable
DOUBLE grouping key cost Spark's partial hash aggregate ~25 ns a row (issue 30,
``benchmarks/spark_bucket_pass_measured.md``); and ``Buckets.single`` marks exactly the buckets of
a near total."""

from __future__ import annotations

import math

import duckdb
import numpy as np

from provsql_dp.privacy.engine_buckets import engine_buckets

PARAMS = {"theta": 1.0, "beta": 0.1, "mu": 0.5, "eps2": 0.5}


def _pass(totals):
    con = duckdb.connect()
    con.execute("CREATE TABLE tot(c0 DOUBLE)")
    con.executemany("INSERT INTO tot VALUES (?)", [[float(v)] for v in totals])
    rows = []

    def run(sql, params=None):
        out = con.execute(sql, params).fetchnumpy()
        rows.append(out)
        return out

    (b,), = engine_buckets(run, "SELECT 0 AS g, c0 FROM tot", None, PARAMS, 1, 1)
    return rows[0], b


def test_the_near_column_is_zero_for_far_totals_and_the_value_for_near_ones():
    w3 = math.exp(3 * PARAMS["beta"]) / 2  # the threshold W_3 (θ = 1): near
    lattice = math.exp(PARAMS["mu"] + 7 * PARAMS["beta"])  # a point of the Δ̂ lattice: near
    far = [3.0, 3.0, 7.25, 40.0, 1234.5]
    data, b = _pass(far + [w3, lattice, lattice])
    e = data["e"]
    assert not np.ma.getmaskarray(e).any()  # no NULL: a non-nullable key on Spark
    assert sorted(np.ma.getdata(e)[np.ma.getdata(e) != 0].tolist()) == sorted([w3, lattice])
    # the near totals' buckets, and only theirs, are single values classified exactly
    assert sorted(b.lo[b.single].tolist()) == sorted([w3, lattice])
    assert b.n[b.single].tolist() == [1.0, 2.0] or b.n[b.single].tolist() == [2.0, 1.0]
    assert b.n[~b.single].sum() == len(far) and not (b.lo[~b.single] == w3).any()
