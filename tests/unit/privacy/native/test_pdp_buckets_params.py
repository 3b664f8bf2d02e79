"""``pdp_buckets`` returns the SQL pass's rows over the whole parameter range, not only the
sampled values of ``test_pdp_buckets.py`` (red team h64native): β log-uniform from 1e-6 (every
total takes the logarithm; near tests everywhere) to the cap 1, and on each switch of the cell
table's width (``2^-nb = expm1(β)/2 − 1e-5``, one ulp either side); θ from 1e-9 to 1e15; μ and
ε₂ (the caps) anywhere. The totals sit on the breakpoints of k and m and on the cell starts of
every binade (subnormals to the largest double), at the cell window (1e-6), the fast test's
margin (1e-7/β), the near margins (1e-9) and the key window (2^-46), a few ulps either side.

Needs the built extension (``provsql-dp build-native``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import insert_rows
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from provsql_dp.privacy import native
from provsql_dp.provenance.clamp import clamp_sql

from test_pdp_buckets import PATH, _duck, _passes, _same

pytestmark = pytest.mark.skipif(PATH is None, reason="pdp_buckets not built (provsql-dp build-native)")


def _points(rng, theta, beta, mu, eps2):
    ln2t, ltm = math.log(2.0 / theta), math.log(theta) + mu
    js = int(-ln2t / beta) + rng.integers(-50, 50, 12) + rng.integers(0, int(700 / beta), 12)
    pts = [math.exp(a) for j in js for a in ((int(j) + 1) * beta - ln2t, int(j) * beta + ltm)
           if -745 < a < 709]
    pts += [math.ldexp(1 + int(i) / 1024, int(e)) for i in rng.integers(0, 1024, 8)
            for e in rng.integers(-1074, 1024, 3)]
    pts += [math.exp(700.0), math.ldexp(eps2, 63)]
    out = []
    for t in pts:
        for r in (0.0, 1e-6, -1e-6, 1e-7, -1e-7, 1e-7 / beta, -1e-7 / beta, 1e-9, -1e-9,
                  2.0 ** -46, -(2.0 ** -46)):
            v = t * (1 + r)
            if 0 < v < math.inf:
                out += [v, float(np.nextafter(v, np.inf)), float(np.nextafter(v, -np.inf))]
    return np.array(out + list(np.exp(rng.uniform(-740, 709, 100))))


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), log_beta=st.floats(-6, 0), nb=st.integers(0, 10),
       ulp=st.sampled_from([-1, 0, 1]), log_theta=st.floats(-9, 15), mu=st.floats(0.01, 5),
       log_eps2=st.floats(-7, 3))
def test_rows_equal_the_sql_pass_over_the_parameter_range(seed, log_beta, nb, ulp, log_theta,
                                                          mu, log_eps2):
    beta = 10.0 ** log_beta
    if nb:  # on a switch of the cell table's width
        beta = math.log1p(2 * (2.0 ** -nb + 1e-5))
        beta = float(np.nextafter(beta, np.inf * ulp)) if ulp else beta
    theta, eps2 = 10.0 ** log_theta, 10.0 ** log_eps2
    rng = np.random.default_rng(seed)
    x = _points(rng, theta, beta, mu, eps2)
    x *= rng.choice([-1.0, 1.0], len(x))
    params = {"theta": theta, "beta": beta, "mu": mu, "eps2": eps2}
    duck = _duck(2)
    duck.execute("CREATE TABLE r(x DOUBLE)")
    insert_rows(duck, "r", [[float(v)] for v in x])
    lo, hi = -1.7e308, 1.7e308
    w = clamp_sql("x", lo, hi)
    totals = (f"SELECT (w < 0)::INTEGER AS p, abs(w) AS c FROM (SELECT ({w})::DOUBLE AS w "
              "FROM r) AS t WHERE w <> 0")
    nat = native.direct_sql("SELECT * FROM r", "x", lo, hi, True, params)
    sql_cols, nat_cols = _passes(duck, totals, 2, params, True, nat)
    _same(sql_cols, nat_cols, params)
