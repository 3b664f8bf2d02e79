"""Which bucket pass runs is decided by public parameters only: the native pass
(``pdp_buckets``) when the connection loaded it and β ≥ ``_NATIVE_FASTER_BETA`` (below it the
SQL pass is the faster, ``benchmarks/native_small_beta.py``), the SQL pass otherwise."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from provsql_dp.privacy.engine_buckets import _NATIVE_FASTER_BETA, native_pass_sql


def _route(native, beta):
    con = SimpleNamespace(_native=native)
    params = {"theta": 1.0, "beta": beta, "mu": 0.5, "eps2": 0.25}
    return native_pass_sql(con, None, "x", None, True, params, "SELECT g, c0 FROM t", 1, False)


@pytest.mark.parametrize("beta", [1e-13, 1e-6, 1e-4, 3e-4, _NATIVE_FASTER_BETA * (1 - 1e-12)])
def test_a_small_beta_takes_the_sql_pass(beta):
    assert _route(True, beta) is None


@pytest.mark.parametrize("beta", [_NATIVE_FASTER_BETA, 0.0078, 0.1, 1.0])
def test_a_larger_beta_takes_the_native_pass_when_loaded(beta):
    sql = _route(True, beta)
    assert sql is not None and "pdp_buckets(struct_pack(" in sql
    assert _route(False, beta) is None

