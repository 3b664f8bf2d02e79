"""The native pass's far buckets report, from the block code's accumulators, a ``[lo, hi]`` that
bounds their totals instead of their exact extremes (``pdp_fine.h``: the range of their fine
cells, hi lowered to its part's largest total). What Python reads from them must not change: on
random salaries with totals planted exactly on and within ulps of every threshold ``W_j``, greedy
``gb_j``, lattice point, cap, 1.0 and 2^64, subnormals, negatives, NaN, ±inf, NULL, and a
largest total in a far bucket, :func:`~provsql_dp.mechanisms.recursive.buckets.delta_buckets`
and :func:`~provsql_dp.mechanisms.recursive.buckets.clamped_buckets` of the native pass's
buckets give what they give on :meth:`Buckets.from_totals` of the same totals (and
``single_owner``'s exact functions), the validation raises alike, and no bucket is read again
(the safety net) where the SQL pass reads none.

Needs the built extension (``provsql-dp build-native``)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from provsql_dp.mechanisms.recursive import single_owner
from provsql_dp.mechanisms.recursive.buckets import (Buckets, cap_indices, clamped_buckets,
                                                     delta_buckets)
from provsql_dp.mechanisms.recursive.single_owner import search_range
from provsql_dp.privacy import native
from provsql_dp.privacy.engine_buckets import engine_buckets
from provsql_dp.provenance.clamp import clamp_sql

from test_pdp_buckets import PATH, _duck

pytestmark = pytest.mark.skipif(PATH is None, reason="pdp_buckets not built (provsql-dp build-native)")


def _ulps(t, n=3):
    out = [t]
    up = down = t
    for _ in range(n):
        up, down = float(np.nextafter(up, np.inf)), float(np.nextafter(down, -np.inf))
        out += [up, down]
    return out


def _lattice(params, i):
    """release_delta_hat's Δ̂ for index i"""
    return math.exp((math.log(params["theta"]) + params["mu"]) + params["beta"] * i)


def _far_top(rng, params, above):
    """a total above ``above``, far from every boundary (a fraction of a bucket from each)"""
    th, be, mu = params["theta"], params["beta"], params["mu"]
    for _ in range(1000):
        c = above * (1 + rng.uniform(0.05, 0.5))
        fk = math.log(2 * c / th) / be
        fm = (math.log(c) - (math.log(th) + mu)) / be
        if min(fk % 1, 1 - fk % 1, fm % 1, 1 - fm % 1) > 0.05:
            return c
    raise AssertionError("no far total found")


def _planted(rng, params, top):
    """every boundary Python and the engine use up to ``top``, with its neighbouring doubles"""
    th, be = params["theta"], params["beta"]
    _, cand = search_range(2 * top, 10**6, th, be)
    pts = []
    if cand is not None:
        _, w, gb = cand
        for t in np.concatenate([w, gb]):
            pts += _ulps(float(t)) + [float(t) * (1 + 1e-9), float(t) * (1 - 1e-9)]
    ltm = math.log(th) + params["mu"]
    for i in range(int(math.floor(-ltm / be)) - 1, int(math.ceil((math.log(top) - ltm) / be)) + 1):
        pts += _ulps(_lattice(params, i)) + [_lattice(params, i) * (1 + 1e-6)]
    for i in cap_indices(th, be, params["mu"], params["eps2"]):
        pts += _ulps(_lattice(params, i))
    pts += [math.exp(700.0), math.ldexp(params["eps2"], 63)]
    pts += _ulps(1.0) + _ulps(2.0 ** 64) + [5e-324, 2.2e-308, 1e-300, 0.5]
    pts = np.array(pts)
    return pts[rng.random(len(pts)) < 0.7]  # a random subset: not every boundary every time


def _native_buckets(duck, params, signed, lo, hi):
    """the native pass's Buckets of r(x) and the number of exact reads its release made"""
    reads = []

    def run(sql, p=None):
        return duck.execute(sql, p).fetchnumpy()

    def run_exact(sql, p=None):
        reads.append(sql)
        return run(sql, p)

    nat = native.direct_sql("SELECT * FROM r", "x", lo, hi, signed, params)
    w = clamp_sql("x", lo, hi)
    part, value = ("(w < 0)::INTEGER", "abs(w)") if signed else ("0", "w")
    totals = (f"SELECT {part} AS p, {value} AS c FROM (SELECT ({w})::DOUBLE AS w FROM r) AS t "
              "WHERE w <> 0")
    parts = engine_buckets(run, totals, None, params, 2 if signed else 1, 1, run_exact=run_exact,
                           inline=True, native=nat)[0]
    return parts, reads


def _same_reading(b, ref, c, params):
    """delta_buckets, clamped_buckets and the validation of b as of ref and of the totals c"""
    th, be = params["theta"], params["beta"]
    errors = []
    for x in (b, ref):
        try:
            x.check()
            errors.append(None)
        except ValueError as e:
            errors.append(str(e))
    assert errors[0] == errors[1]
    pos = c[(c > 0) & np.isfinite(c)]
    assert float(b.hi.max(initial=-np.inf)) == float(pos.max(initial=-np.inf))
    got = delta_buckets(b, th, be)
    assert got == delta_buckets(ref, th, be)
    if errors[0] is None:
        assert got == single_owner.delta(c, th, be)
    ds = [_lattice(params, i) for i in range(int(np.min(b.m, initial=0)) - 2,
                                               int(np.max(b.m, initial=0)) + 3)]
    ds += [math.exp(700.0), math.ldexp(params["eps2"], 63), float(pos.max(initial=0.0))]
    for d in ds:
        assert clamped_buckets(b, d) == pytest.approx(clamped_buckets(ref, d), rel=1e-12, abs=0)


# ~39 s idle (156 s loaded), the default step's longest test and, ordered last by xdist's
# loadfile, one worker's idle tail: CI's slow step (session 11)
@pytest.mark.slow
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), signed=st.booleans(), far_max=st.booleans(),
       bounds=st.sampled_from([(-1e12, 1e12), (-1.7e308, 1.7e308), (0.0, 1e6), (-5e4, 9e4)]),
       beta=st.sampled_from([0.1, 0.05, 0.5, 1.3, 0.02]),
       theta=st.sampled_from([1.0, 4.0, 0.003, 250.0]), mu=st.sampled_from([0.5, 0.0, 2.0]),
       eps2=st.sampled_from([0.5, 0.05, 1e-6]))
def test_the_far_buckets_bounds_read_as_the_exact_extremes(seed, signed, far_max, bounds, beta,
                                                           theta, mu, eps2):
    """``far_max``: the largest total is in a far bucket (no planted total above it), whose
    accumulator's cells reach beyond it: its hi must be the total itself"""
    rng = np.random.default_rng(seed)
    params = {"theta": theta, "beta": beta, "mu": mu, "eps2": eps2}
    lo, hi = bounds
    cap = min(120000.0, hi / 2)
    salaries = rng.integers(1, int(cap), 40000).astype(np.float64)
    top = _far_top(rng, params, cap)  # above every salary, below the bounds, far
    pts = _planted(rng, params, top)
    if far_max:
        pts = pts[np.abs(pts) < top]
    odd = np.array([0.0, -0.0, -5e-324, -1e300, math.nan, math.inf, -math.inf, -3.0, -7.25e4])
    odd = odd[~(np.abs(odd) >= top)] if far_max else odd
    x = np.concatenate([pts, salaries[:20000] * np.where(rng.random(20000) < 0.2, -1, 1),
                        [top], odd if (signed or rng.random() < 0.3) else []])
    x = np.concatenate([salaries[20000:], x[rng.permutation(len(x))]])  # the block path's rows
    nulls = rng.random(len(x)) < 0.02
    nulls[x == top] = False  # the planted largest total stays a total (NULL, it was none)
    duck = _duck(1)
    duck.register("src", pd.DataFrame({"x": x, "nul": nulls}))
    duck.execute("CREATE TABLE r AS SELECT CASE WHEN nul THEN NULL ELSE x END AS x FROM src")
    duck.unregister("src")
    w = duck.execute(f"SELECT w FROM (SELECT ({clamp_sql('x', lo, hi)})::DOUBLE AS w FROM r) "
                     "AS t WHERE w <> 0").fetchnumpy()["w"]  # the SQL's totals (NULL dropped)
    w = np.asarray(w, dtype=np.float64)
    parts, reads = _native_buckets(duck, params, signed, lo, hi)
    neg = w < 0
    totals = [np.abs(w[~neg]), np.abs(w[neg])] if signed else [w]
    before = len(reads)
    for b, c in zip(parts, totals):
        ref = Buckets.from_totals(c, theta, beta, mu)
        _same_reading(b, ref, c, params)
    assert len(reads) == before == 0  # no far bucket read again (the SQL pass reads none)
    assert sum(float(b.n.sum()) for b in parts) > 30000  # the block path ran
    if far_max:
        assert float(parts[0].hi.max()) == top and not parts[0].near()[parts[0].hi == top].any()
