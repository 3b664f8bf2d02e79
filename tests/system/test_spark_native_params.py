"""Spark's JVM bucket pass returns the SQL pass's rows beyond the one parameter set of
``test_spark_native_buckets.py``: θ from 1e-9 to 1e6, β from 1e-6 (every total near) through
0.0021 to the cap 1, μ, ε₂ tiny and huge; over internal rows, as an
Aggregator and over a clamped column (red team h64native)."""

from __future__ import annotations

import pytest

from provsql_dp.mechanisms.recursive.buckets import params_for
from provsql_dp.privacy import _spark_native, engine_buckets as eb
from provsql_dp.provenance.clamp import clamp_sql
from test_spark_native_buckets import native_db, _rows  # noqa: F401

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("theta, beta, mu, eps, entry", [
    (1e-9, 1e-6, 0.01, 2.0, "runRows"), (1e6, 1.0, 3.0, 50.0, "runRows"),
    (0.003, 0.0021, 0.5, 0.01, "runRows"), (7.0, 0.05, 1.0, 1e-5, "run"),
    (1.0, 1e-6, 0.5, 2.0, "runColumn"), (250.0, 0.69, 0.5, 2.0, "runColumn")])
def test_native_rows_equal_the_sql_pass_over_the_parameters(native_db, theta, beta, mu, eps, entry, monkeypatch):
    _, sc = native_db
    be = sc._engine
    monkeypatch.setattr(_spark_native, "_ENTRY", "runRows" if entry == "runColumn" else entry)
    monkeypatch.setattr(_spark_native, "_loaded", {})
    params = params_for(eps, 2, "node", theta=theta, beta=beta, mu=mu)
    weights, column = "SELECT x AS w FROM t", None
    if entry == "runColumn":
        lo, hi, col = -50.0, 1e6, "x"
        column = (f"SELECT {col} AS w FROM t", lo, hi)
        weights = f"SELECT {clamp_sql(col, lo, hi)} AS w FROM t"
    totals = f"SELECT (w < 0)::INTEGER AS p, abs(w) AS c FROM ({weights}) AS t WHERE w <> 0"
    got = {}

    def run(text, p=None):
        got.setdefault("sql", eb.engine_run(be, text, p))
        return got["sql"]

    eb.engine_buckets(run, totals, None, params, 2, 1, inline=True)
    native = _spark_native.pass_for(be, weights, params, True, column)
    assert native is not None
    sql_rows, sql_rest = _rows(got["sql"])
    nat_rows, nat_rest = _rows(native.buckets())
    assert [r[:7] for r in nat_rows] == [r[:7] for r in sql_rows]
    for a, b in zip(nat_rows, sql_rows):
        assert a[7:] == pytest.approx(b[7:], rel=1e-12)
    assert nat_rest == sql_rest
