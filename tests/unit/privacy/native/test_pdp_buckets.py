"""The native bucket pass (``pdp_buckets``, :mod:`provsql_dp.privacy.native`) returns the SQL
bucket pass's rows: the same keys ``(g, p, k, m, e)`` bit for bit, the same counts, minima and
maxima (a far bucket's from the block code's accumulators: bounds of them that lie inside the
bucket's thresholds and lattice points, each part's largest total exact), the sums within
1e-12 relative — on random totals with adversarial ones planted
(thresholds ``W_j``, greedy ``gb_j``, lattice points, caps and their neighbouring doubles, ±0,
subnormals, 1e300, NaN, ±inf, negatives, NULL), on the direct path (raw weights clamped inside
the aggregate) and on owner totals ``g, c0, c1``; a release under one seed equals the SQL
path's and the per-participant path's; the parallel combine (several threads) changes nothing.

These tests need the built extension (``provsql-dp build-native``): they skip without it unless
``PROVSQL_DP_REQUIRE_NATIVE=1`` (CI), which makes its absence a failure.
"""

from __future__ import annotations

import math
import os

import duckdb
import numpy as np
import pytest
from conftest import breadth, insert_rows
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import provsql_dp
from provsql_dp.mechanisms.recursive import single_owner
from provsql_dp.mechanisms.recursive.buckets import params_for, release_buckets
from provsql_dp.mechanisms.recursive.single_owner import search_range
from provsql_dp.privacy import native
from provsql_dp.privacy.engine_buckets import engine_buckets
from provsql_dp.provenance.clamp import clamp_sql

PATH = native.built_path()
if PATH is None and os.environ.get("PROVSQL_DP_REQUIRE_NATIVE") == "1":
    raise RuntimeError("PROVSQL_DP_REQUIRE_NATIVE=1 but pdp_buckets is not built: run "
                       "provsql-dp build-native")
pytestmark = pytest.mark.skipif(PATH is None, reason="pdp_buckets not built (provsql-dp build-native)")

KEYS = ("g", "p", "k", "m", "e")


def _duck(threads=1):
    duck, loaded = native.open_duckdb(":memory:", config={"threads": threads})
    assert loaded
    return duck


def _boundaries(theta, beta, mu, eps2, top):
    out = [math.exp(math.log(theta) + mu + beta * i) for i in range(-8, 40)]
    out += [math.exp(700.0), math.ldexp(eps2, 63)]
    _, cand = search_range(2 * top, 200, theta, beta)
    if cand is not None:
        _, w, gb = cand
        out += list(w[:40]) + list(gb[:40])
    return [v for v in out if 0 < v < math.inf]


def _adversarial(rng, theta, beta, mu, eps2, size=300):
    base = np.round(rng.exponential(30.0, size=size), int(rng.integers(0, 4)))
    base *= rng.choice([-1.0, 1.0], size=size)
    bounds = np.array(_boundaries(theta, beta, mu, eps2, float(np.abs(base).max())))
    picks = rng.choice(bounds, size=min(40, len(bounds)), replace=False)
    planted = np.concatenate([picks, np.nextafter(picks, np.inf), np.nextafter(picks, -np.inf),
                              -picks])
    odd = [0.0, -0.0, 5e-324, -5e-324, 2.2e-308, 1e-300, 1e300, -1e300, 1e-9, 1e-8, 5e-9,
           math.nan, math.inf, -math.inf, 1.0, -1.0]
    return np.concatenate([base, planted, odd])


def _passes(duck, totals_sql, n_parts, params, inline, native_sql):
    """The SQL pass's rows and the native pass's rows, as engine_buckets reads them."""
    out = []
    for nat in (None, native_sql):
        got = []

        def run(sql, p=None, got=got):
            data = duck.execute(sql, p).fetchnumpy()
            got.append(native.decode(data) if nat is not None and not got else data)
            return data

        engine_buckets(run, totals_sql, None, params, n_parts, 1 if inline else 3, inline=inline,
                       native=nat)
        out.append(got[0])
    return out


def _rows(cols):
    keys = {}
    for i in range(len(cols["n"])):
        k = tuple(float(np.ma.getdata(cols[c])[i]) if not np.ma.getmaskarray(cols[c])[i]
                  else None for c in KEYS)
        keys[tuple(("nan" if isinstance(v, float) and math.isnan(v) else v) for v in k)] = i
    return keys


def _inside(key, lo, hi, params):
    """[lo, hi] strictly inside far bucket (k, m)'s interval of Python's own boundaries: above
    W_k, gb_k and the lattice point of m − 1, at most W_{k+1} and that of m (as
    single_owner.search_range and release.release_delta_hat compute them), so that it classifies
    as any sub-range does"""
    th, be = params["theta"], params["beta"]
    k, m = key[2], key[3]
    tau = np.exp(np.array([k, k + 1]) * be) * th
    lat = [math.exp((math.log(th) + params["mu"]) + be * (m - 1)),
           math.exp((math.log(th) + params["mu"]) + be * m)]
    gb = (tau[0] * (1 + 1e-9) + 1e-9) / 2
    return lo > max(tau[0] / 2, gb, lat[0]) and hi <= min(tau[1] / 2, lat[1]) and lo <= hi


def _same(sql_cols, nat_cols, params=None, contain=True):
    """The same rows; with ``params``, a far bucket's (lo, hi) (e = 0: the block code's
    accumulators report the range of their fine cells, hi lowered to its part's largest) may
    differ from the exact ones by lying inside the bucket's boundaries (:func:`_inside`) and, with
    ``contain``, around the exact ones; each part's largest total the same"""
    a, b = _rows(sql_cols), _rows(nat_cols)
    # the same keys as numbers (SQL's ceil may give -0.0 where the native int64 key gives 0.0)
    assert set(a) - set(b) == set() and set(b) - set(a) == set()
    top = {}
    for key, i in a.items():
        j = b[key]
        assert sql_cols["n"][i] == nat_cols["n"][j]
        x, y = [(float(cols["lo"][r]), float(cols["hi"][r]))
                for cols, r in ((sql_cols, i), (nat_cols, j))]
        if key[2] is not None:
            for side, v in enumerate((x, y)):
                top[key[:2], side] = max(top.get((key[:2], side), -math.inf), v[1])
        if not all(u == v or (math.isnan(u) and math.isnan(v)) for u, v in zip(x, y)):
            assert params is not None and key[4] == 0 and key[2] is not None, (key, x, y)
            assert _inside(key, *x, params) and _inside(key, *y, params), (key, x, y)
            assert not contain or (y[0] <= x[0] and x[1] <= y[1]), (key, x, y)
        if key[2] is None:  # outside the buckets (NaN, ±inf, negative): count, min, max read
            continue
        for c in ("inv", "tot"):
            x, y = float(sql_cols[c][i]), float(nat_cols[c][j])
            assert x == pytest.approx(y, rel=1e-12, abs=0), (key, c)
    for (part, side), v in top.items():  # each part's largest total (the Δ search's range)
        assert v == top[part, 1 - side], (part, v)


PARAMS = dict(theta=st.sampled_from([1.0, 4.0, 0.003, 250.0]),
              beta=st.sampled_from([0.1, 0.05, 0.5, 1.3]), mu=st.sampled_from([0.5, 0.0, 2.0]),
              eps2=st.sampled_from([0.5, 0.05, 1e-6]))


@pytest.mark.slow  # ~9 s idle (36 s loaded): CI's slow step (session 11)
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), signed=st.booleans(),
       bounds=st.sampled_from([(-1e12, 1e12), (-50.0, 70.0), (-1e300, 1e300), (0.0, 10.0)]),
       **PARAMS)
def test_direct_path_rows_equal_the_sql_pass(seed, signed, bounds, theta, beta, mu, eps2):
    rng = np.random.default_rng(seed)
    x = _adversarial(rng, theta, beta, mu, eps2)
    duck = _duck()
    duck.execute("CREATE TABLE r(x DOUBLE)")
    insert_rows(duck, "r", [[float(v)] for v in x] + [[None]])
    lo, hi = bounds
    params = {"theta": theta, "beta": beta, "mu": mu, "eps2": eps2}
    w = clamp_sql("x", lo, hi)
    part, value = ("(w < 0)::INTEGER", "abs(w)") if signed else ("0", "w")
    totals = (f"SELECT {part} AS p, {value} AS c FROM (SELECT ({w})::DOUBLE AS w FROM r) AS t "
              "WHERE w <> 0")
    nat = native.direct_sql("SELECT * FROM r", "x", lo, hi, signed, params)
    sql_cols, nat_cols = _passes(duck, totals, 2 if signed else 1, params, True, nat)
    _same(sql_cols, nat_cols, params)


@breadth(3, 15, seed=st.integers(0, 2**31), **PARAMS)
def test_owner_totals_rows_equal_the_sql_pass(seed, theta, beta, mu, eps2):
    rng = np.random.default_rng(seed)
    c0 = _adversarial(rng, theta, beta, mu, eps2)
    c1 = rng.permutation(c0)
    g = rng.integers(0, 3, size=len(c0))
    duck = _duck()
    duck.execute("CREATE TABLE tot(g INTEGER, c0 DOUBLE, c1 DOUBLE)")
    rows = [[int(a), float(b), float(c)] for a, b, c in zip(g, c0, c1)] + [[1, None, 2.0]]
    insert_rows(duck, "tot", rows)
    params = {"theta": theta, "beta": beta, "mu": mu, "eps2": eps2}
    totals = "SELECT g, c0, c1 FROM tot"
    sql_cols, nat_cols = _passes(duck, totals, 2, params, False,
                                 native.grouped_sql(totals, 2, params))
    _same(sql_cols, nat_cols)


def test_the_parallel_combine_gives_the_rows_of_one_thread():
    params = params_for(1.0, 2, "node")
    out = []
    for threads in (1, 2, 4):
        duck = _duck(threads)
        duck.execute("CREATE TABLE r AS SELECT ((hash(range) % 1000003)::DOUBLE - 300000.0) "
                     "* exp((hash(range * 7) % 1000)::DOUBLE / 50.0) AS x FROM range(600000)")
        data = duck.execute(native.direct_sql("SELECT * FROM r", "x", -1e12, 1e12, True,
                                              params)).fetchnumpy()
        out.append(native.decode(data))
        nonzero = duck.execute("SELECT count(*) FROM r WHERE x <> 0").fetchone()[0]
    for other in out[1:]:  # the far buckets' bounds depend on the rows each thread took
        _same(out[0], other, params, contain=False)
    assert len(out[0]["n"]) > 50 and out[0]["n"].sum() == nonzero > 599000


def test_a_release_equals_the_sql_paths_and_the_per_participant_paths():
    values = []
    for use_native in (True, False):
        con = provsql_dp.connect()
        assert con._native
        con._native = use_native
        con.execute("CREATE TABLE t(id INT PRIMARY KEY, x DOUBLE)")
        con.execute("INSERT INTO t SELECT range, (range * 7919 % 1013) - 300 FROM range(5000)")
        con.execute("PROTECT TABLE t; SET PRIVACY BUDGET 10")
        con._rng = np.random.default_rng(11)
        values.append(con.execute("SELECT SUM(x) FROM t WITH EPSILON 1").fetchone()[0])
    c = np.array([(i * 7919 % 1013) - 300 for i in range(5000)], dtype=float)
    direct = single_owner.release_signed(np.maximum(c, 0), np.maximum(-c, 0), 1.0, "edge",
                                         np.random.default_rng(11)).value
    assert values[0] == values[1] == pytest.approx(direct, rel=0, abs=0)


def test_the_boundary_stays_closed_after_the_load(tmp_path):
    duck, loaded = native.open_duckdb(":memory:")
    assert loaded
    assert duck.execute("SELECT current_setting('allow_unsigned_extensions')").fetchone()[0] is False
    other = tmp_path / "x.duckdb_extension"
    other.write_bytes(PATH.read_bytes())
    with pytest.raises(duckdb.Error, match="unsigned|signature|not a valid|Extension"):
        duck.execute(f"LOAD '{other}'")
    # a guarded connection (an analyst's): no LOAD at all, its settings locked
    con = provsql_dp.connect(role="analyst")
    assert con._native
    with pytest.raises(duckdb.Error):
        con._duck.execute(f"LOAD '{other}'")
    with pytest.raises(duckdb.Error):
        con._duck.execute("SET allow_unsigned_extensions = false")


def test_a_second_connection_to_one_file_shares_the_loaded_aggregate(tmp_path):
    db = str(tmp_path / "db.duckdb")
    a = provsql_dp.connect(db)
    b = provsql_dp.connect(db)
    assert a._native and b._native
    plain = duckdb.connect(str(tmp_path / "other.duckdb"))
    c = provsql_dp.connect(str(tmp_path / "other.duckdb"))  # opened by the caller first
    assert plain is not None and c._native is False


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), **PARAMS)
def test_totals_at_the_edges_of_the_cell_windows_keep_the_sql_keys(seed, theta, beta, mu, eps2):
    """The cell table (totals >= 1 keyed without their logarithm) at its edges: totals at a
    relative 1e-6 (its window) and 1e-7 (the fast test's margin) from the breakpoints of k and
    m, and a few ulps around each, and at the starts of cells (powers of two and their
    subdivisions)."""
    rng = np.random.default_rng(seed)
    ln2t, ltm = math.log(2.0 / theta), math.log(theta) + mu
    js = rng.integers(int(-ln2t / beta), int((40 - ln2t) / beta), size=30)
    points = [math.exp((j + 1) * beta - ln2t) for j in js]
    points += [math.exp(j * beta + ltm) for j in js]
    points += [math.ldexp(1 + i / 64, int(e)) for i in range(0, 64, 7)
               for e in rng.integers(0, 40, size=3)]
    out = []
    for t in points:
        for r in (0.0, 1e-6, -1e-6, 1e-7, -1e-7, 2e-6, -2e-6):
            v = t * (1 + r)
            out += [v, np.nextafter(v, np.inf), np.nextafter(v, -np.inf),
                    np.nextafter(np.nextafter(v, np.inf), np.inf)]
    x = np.array([v for v in out if 1.0 <= v < 1e11])
    duck = _duck()
    duck.execute("CREATE TABLE r(x DOUBLE)")
    insert_rows(duck, "r", [[float(v)] for v in x])
    params = {"theta": theta, "beta": beta, "mu": mu, "eps2": eps2}
    w = clamp_sql("x", -1e12, 1e12)
    totals = (f"SELECT (w < 0)::INTEGER AS p, abs(w) AS c FROM (SELECT ({w})::DOUBLE AS w "
              "FROM r) AS t WHERE w <> 0")
    nat = native.direct_sql("SELECT * FROM r", "x", -1e12, 1e12, True, params)
    sql_cols, nat_cols = _passes(duck, totals, 2, params, True, nat)
    _same(sql_cols, nat_cols, params)
