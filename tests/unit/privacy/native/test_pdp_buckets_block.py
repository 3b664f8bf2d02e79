"""The direct path's block code (``pdp_fine.h``: fine cells keyed by a total's bits, per-bucket
accumulators; a state's rows after its first FINE_MIN_ROWS) returns the SQL pass's rows (a far
bucket's min and max as bounds that classify as they do: ``test_pdp_buckets._same``): on chunks of DuckDB's 2048 rows with NULLs (the
validity mask), salary-like totals, the breakpoints of k and m and the fine cells' starts a few
ulps either side, the cell window (1e-6), the near margins (1e-9), negatives, NaN, ±inf, ±0,
subnormals, huge totals and the fine table's top 2^64; and where a breakpoint sits just below a
fine cell's start (θ or μ chosen for it), which the cell's lower bound must send to the per-row
code (a total within 1e-9 of a breakpoint is near).

Needs the built extension (``provsql-dp build-native``)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from conftest import breadth
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from provsql_dp.privacy import native
from provsql_dp.provenance.clamp import clamp_sql

from test_pdp_buckets import PATH, _duck, _passes, _same

pytestmark = pytest.mark.skipif(PATH is None, reason="pdp_buckets not built (provsql-dp build-native)")


def _fine_bits(beta):
    """params_from's rule (pdp_params.h): the fine cells' mantissa bits, 0 without them."""
    for nb in range(1, 14):
        if 2.0 ** -nb <= math.expm1(beta) / 64:
            return min(nb + 2, 13)
    return 0


def _around(t):
    """t, a few ulps and the windows either side of it"""
    out = [t]
    for r in (1e-6, -1e-6, 1e-9, -1e-9, 2e-9, -2e-9, 1e-7, -1e-7):
        out.append(t * (1 + r))
    up, down = t, t
    for _ in range(3):
        up, down = float(np.nextafter(up, np.inf)), float(np.nextafter(down, -np.inf))
        out += [up, down]
    return out


def _table(duck, x, nulls):
    """r(x DOUBLE) from x, NULL where nulls (not NaN)"""
    duck.register("src", pd.DataFrame({"x": x, "nul": nulls}))
    duck.execute("CREATE OR REPLACE TABLE r AS SELECT CASE WHEN nul THEN NULL ELSE x END AS x "
                 "FROM src")
    duck.unregister("src")


#: ordinary totals first: a state takes its first FINE_MIN_ROWS rows (pdp_fine.h) by the
#: per-row code, then the block code (one thread: the table's rows in order)
PAD = 20000


def _check(duck, x, rng, signed, lo, hi, params):
    x = np.asarray(x, dtype=np.float64)
    x = np.concatenate([rng.integers(1, 120000, PAD).astype(np.float64),
                        x[rng.permutation(len(x))]])
    _table(duck, x, np.concatenate([np.zeros(PAD, bool), rng.random(len(x) - PAD) < 0.03]))
    w = clamp_sql("x", lo, hi)
    if signed:
        totals = (f"SELECT (w < 0)::INTEGER AS p, abs(w) AS c FROM (SELECT ({w})::DOUBLE AS w "
                  "FROM r) AS t WHERE w <> 0")
    else:
        totals = f"SELECT 0 AS p, w AS c FROM (SELECT ({w})::DOUBLE AS w FROM r) AS t WHERE w <> 0"
    nat = native.direct_sql("SELECT * FROM r", "x", lo, hi, signed, params)
    sql_cols, nat_cols = _passes(duck, totals, 2 if signed else 1, params, True, nat)
    _same(sql_cols, nat_cols, params)
    return nat_cols


@breadth(3, 12, seed=st.integers(0, 2**31), signed=st.booleans(),
         bounds=st.sampled_from([(-1e12, 1e12), (-5e4, 7e4), (-1.7e308, 1.7e308), (0.0, 1e5)]),
         beta=st.sampled_from([0.1, 0.05, 0.5, 1.3, 0.0079, 0.02, 0.3]),
         theta=st.sampled_from([1.0, 4.0, 0.003, 250.0]), mu=st.sampled_from([0.5, 0.0, 2.0]),
         eps2=st.sampled_from([0.5, 0.05, 1e-6]))
def test_block_path_rows_equal_the_sql_pass(seed, signed, bounds, beta, theta, mu, eps2):
    rng = np.random.default_rng(seed)
    params = {"theta": theta, "beta": beta, "mu": mu, "eps2": eps2}
    ln2t, ltm = math.log(2.0 / theta), math.log(theta) + mu
    nb = _fine_bits(beta) or 12
    pts = []
    for j in rng.integers(int(-ln2t / beta) - 2, int((14 - ln2t) / beta), 25):
        pts += _around(math.exp((int(j) + 1) * beta - ln2t))
    for j in rng.integers(int(-ltm / beta) - 2, int((14 - ltm) / beta), 25):
        pts += _around(math.exp(int(j) * beta + ltm))
    for i, e in zip(rng.integers(0, 2 ** nb, 20), rng.integers(0, 30, 20)):
        pts += _around(math.ldexp(1 + int(i) / 2 ** nb, int(e)))
    pts += _around(2.0 ** 64) + _around(1.0) + [math.exp(700.0), math.ldexp(eps2, 63)]
    odd = [0.0, -0.0, 5e-324, -5e-324, 2.2e-308, 1e-300, 1e300, -1e300, math.nan, math.inf,
           -math.inf, 1.7976931348623157e308, 0.5, 0.999999999]
    base = rng.integers(0, 120000, 4500).astype(np.float64)
    x = np.concatenate([base, pts, odd])
    x *= np.where(rng.random(len(x)) < 0.3, -1.0, 1.0)
    _check(_duck(1), x, rng, signed, bounds[0], bounds[1], params)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), which=st.sampled_from(["k", "m"]),
       gap=st.sampled_from([0.0, 1e-13, 5e-10, 1e-9, 3e-9, 1e-7, 9e-7, 1e-6, 2e-6, -1e-13]),
       beta=st.sampled_from([0.1, 0.05, 0.5]))
def test_a_breakpoint_just_below_a_fine_cell_start(seed, which, gap, beta):
    """θ (a breakpoint of k) or μ (of m) chosen so that the breakpoint lies a relative ``gap``
    below the start a of a fine cell: the totals from a up are near (within 1e-9) or at the
    cell window; the block code must key them as the SQL does."""
    rng = np.random.default_rng(seed)
    nb = _fine_bits(beta)
    a = math.ldexp(1 + int(rng.integers(0, 2 ** nb)) / 2 ** nb, int(rng.integers(3, 25)))
    target = a * (1 - gap)
    j = round(math.log(2 * a) / beta)
    if which == "k":  # exp((j + 1)·β - ln(2/θ)) = target
        theta, mu = 2.0 / math.exp((j + 1) * beta - math.log(target)), 0.5
    else:  # exp(j·β + ln θ + μ) = target
        theta = 1.0
        mu = math.log(target) - j * beta
    params = {"theta": theta, "beta": beta, "mu": mu, "eps2": 0.5}
    step = math.ldexp(1.0, math.frexp(a)[1] - 1 - nb)  # the cell's width
    cell = [a + step * f for f in (0, 1e-12, 1e-9, 1e-6, 1e-3, 0.5, 0.999)]
    x = [v for t in cell for v in _around(t)] + _around(target) + list(
        rng.integers(0, 120000, 2500).astype(np.float64))
    nat_cols = _check(_duck(1), x, rng, True, -1e12, 1e12, params)
    assert np.ma.getdata(nat_cols["n"]).sum() > 2400


def test_a_grouped_direct_call_gives_each_group_its_rows():
    """Not a form provsql_dp writes (its grouped pass is spec mode 2), but the aggregate's: a
    direct-path spec under GROUP BY, groups sorted so that whole chunks share a state (the block
    path past FINE_MIN_ROWS) and interleaved (the per-row path), each group's rows the SQL
    pass's over that group alone."""
    rng = np.random.default_rng(7)
    duck = _duck(1)
    n = 3 * 25000
    x = np.concatenate([rng.integers(1, 120000, n - 300).astype(np.float64),
                        _around(math.exp(11 * 0.1 - math.log(2.0))) * 20])[:n]
    duck.register("src", pd.DataFrame({"x": x, "g": np.arange(n) // 25000,
                                       "h": np.arange(n) % 3}))
    duck.execute("CREATE OR REPLACE TABLE r AS SELECT * FROM src")
    duck.unregister("src")
    params = {"theta": 1.0, "beta": 0.1, "mu": 0.5, "eps2": 0.25}
    spec = native.spec_name(1, -1e12, 1e12, params)
    for col in ("g", "h"):
        data = duck.execute(f'SELECT {col} AS g, pdp_buckets(struct_pack("{spec}" := x)) AS b '
                            f"FROM r GROUP BY {col}").fetchnumpy()
        cols = native.decode(data)
        for g in range(3):
            mine = {k: (v[cols["g"] == g] if not np.ma.isMaskedArray(v)
                        else v[np.asarray(cols["g"] == g)]) for k, v in cols.items()}
            w = clamp_sql("x", -1e12, 1e12)
            totals = (f"SELECT (w < 0)::INTEGER AS p, abs(w) AS c FROM (SELECT ({w})::DOUBLE AS w "
                      f"FROM r WHERE {col} = {g}) AS t WHERE w <> 0")
            nat = native.direct_sql(f"SELECT * FROM r WHERE {col} = {g}", "x", -1e12, 1e12, True,
                                    params)
            sql_cols, _ = _passes(duck, totals, 2, params, True, nat)
            mine["g"] = np.zeros(len(mine["n"]), np.int64)
            _same(sql_cols, mine, params)
