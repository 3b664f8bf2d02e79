"""The unbounded SUM's bucket pass as one JVM aggregate on Spark (``privacy/_spark_native.py``,
``privacy/java/provsqldp``): the same bucket rows as the SQL pass — on adversarial totals — the
same exact reads, and the released value DuckDB releases under one seed.

Skipped when the jar was not built (``provsql-dp build-native``), unless
``PROVSQL_DP_REQUIRE_NATIVE=1`` (CI builds it and sets it)."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

import provsql_dp
from provsql_dp.mechanisms.recursive.buckets import params_for
from provsql_dp.privacy import _spark_native, engine_buckets as eb
from provsql_dp.provenance.clamp import clamp_sql

from spark_support import on_spark

pytestmark = pytest.mark.spark

THETA, BETA, MU = 1.0, 0.25, 0.5


def _weights(rng) -> list:
    """Totals a release must bucket right: on and around every threshold W_j, greedy bound
    gb_j and lattice point, ±0, subnormals, huge, NaN, ±inf, negatives, NULL, a spread, and
    whole numbers that repeat (a third of the rows)."""
    tol = 1e-9
    js = np.arange(-60, 80)
    tau = np.exp(js * BETA) * THETA
    edges = np.concatenate([tau / 2, (tau * (1 + tol) + tol) / 2,
                            np.exp(math.log(THETA) + MU + BETA * js)])
    near = np.concatenate([edges * f for f in (1.0, 1 + 2e-16, 1 - 2e-16, 1 + 1e-12, 1 - 1e-12,
                                               1 + 5e-10, 1 + 1e-6)])
    spread = rng.lognormal(0.0, 4.0, 1500) * rng.choice([-1.0, 1.0], 1500)
    odd = [0.0, -0.0, 5e-324, -5e-324, 1e-310, 1e-9, 1e300, -1e300, 1e12, -1e12, 3.0, -3.0,
           float("nan"), float("inf"), float("-inf"), None, None]
    repeated = rng.integers(-40, 90, 3000).astype(float)  # the memo's hits (BucketPass)
    return [*near.tolist(), *(-near[::7]).tolist(), *spread.tolist(), *repeated.tolist(),
            *near[::3].tolist(), *odd]


@pytest.fixture(scope="module")
def native_db(spark, tmp_path_factory):
    jar = _spark_native.jar_path()
    if not jar.exists():
        if os.environ.get("PROVSQL_DP_REQUIRE_NATIVE") == "1":
            pytest.fail(f"PROVSQL_DP_REQUIRE_NATIVE=1 but the native bucket pass is not built "
                        f"({jar}): provsql-dp build-native")
        pytest.skip("the native bucket pass is not built: provsql-dp build-native")
    con = provsql_dp.connect()
    con.execute("CREATE TABLE t(id INT PRIMARY KEY, x DOUBLE, a INT)")
    rng = np.random.default_rng(7)
    w = _weights(rng)
    a = [None if i % 97 == 0 else int(v) for i, v in enumerate(rng.integers(-60, 900, len(w)))]
    con._duck.executemany("INSERT INTO t VALUES (?, ?, ?)", list(zip(range(len(w)), w, a)))
    con.execute("PROTECT TABLE t; SET PRIVACY BUDGET 100")
    sc = on_spark(con, spark, tmp_path_factory.mktemp("native") / "n.duckdb")
    assert _spark_native.pass_for(sc._engine, "SELECT 1.0 AS w", {}, True) is not None
    yield con, sc
    sc.close()


def _rows(data) -> tuple[list, list]:
    """The bucket rows as sorted tuples (p, k, m, e, n, lo, hi, inv, tot), and the rest rows
    (k NULL) merged per part as (p, count, min, max) — several SQL rows may hold one part's."""
    rest = np.ma.getmaskarray(data["k"])
    cols = {k: np.ma.getdata(v) for k, v in data.items()}
    ok = sorted(zip(*(cols[c][~rest].astype(float).tolist()
                      for c in ("p", "k", "m", "e", "n", "lo", "hi", "inv", "tot"))))
    merged = []
    for p in (0, 1):
        sel = rest & (cols["p"] == p)
        if sel.any():
            lo, hi = cols["lo"][sel], cols["hi"][sel]  # in Spark's order: NaN above all
            low = float(lo[~np.isnan(lo)].min()) if (~np.isnan(lo)).any() else "nan"
            high = "nan" if np.isnan(hi).any() else float(hi.max())
            merged.append((p, float(cols["n"][sel].sum()), low, high))
    return ok, merged


@pytest.mark.parametrize("signed, entry", [(True, "runRows"), (False, "runRows"),
                                           (True, "run"), (True, "runColumn"),
                                           (False, "runColumn")])
def test_native_rows_equal_the_sql_pass(native_db, signed, entry, monkeypatch):
    """On adversarial totals (NaN, ±inf and negatives unclamped: the rest), the native pass —
    over Spark's internal rows, as an Aggregator (``run``: its buffer serialized between the
    partial and the final aggregate), or over the scan's columnar batches of the bare column
    clamped in Java (``runColumn``, against the SQL clamp) — returns the SQL pass's rows: the
    same keys (k, m, e), counts, minima and maxima; the sums up to their order of addition."""
    _, sc = native_db
    be = sc._engine
    monkeypatch.setattr(_spark_native, "_ENTRY", "runRows" if entry == "runColumn" else entry)
    monkeypatch.setattr(_spark_native, "_loaded", {})
    params = params_for(2.0, 2 if signed else 1, "node", theta=THETA, beta=BETA, mu=MU)
    weights, column = "SELECT x AS w FROM t", None
    if entry == "runColumn":  # clamped to bounds that cut both tails; a DOUBLE, an INT column
        lo, hi, col = (-50.0, 1e6, "x") if signed else (0.5, 800.0, "a")
        column = (f"SELECT {col} AS w FROM t", lo, hi)
        weights = f"SELECT {clamp_sql(col, lo, hi)} AS w FROM t"
        plan = be.spark.sql(be.to_spark(column[0]))._jdf.queryExecution().executedPlan()
        assert plan.output().head().dataType().typeName() == ("double" if signed else "integer")
        # WholeStageCodegen ← Project (the rename to w) ← ColumnarToRow ← the Parquet scan
        scan = plan.child().child().child()
        assert plan.nodeName().startswith("WholeStageCodegen") and scan.supportsColumnar()
    part = "(w < 0)::INTEGER" if signed else "0"
    totals = (f"SELECT {part} AS p, {'abs(w)' if signed else 'w'} AS c FROM ({weights}) AS t "
              "WHERE w <> 0")
    got = {}

    def run(text, p=None):
        got.setdefault("sql", eb.engine_run(be, text, p))
        return got["sql"]

    eb.engine_buckets(run, totals, None, params, 2 if signed else 1, 1, inline=True)
    native = _spark_native.pass_for(be, weights, params, signed, column)
    sql_rows, sql_rest = _rows(got["sql"])
    nat_rows, nat_rest = _rows(native.buckets())
    assert [r[:7] for r in nat_rows] == [r[:7] for r in sql_rows]
    for a, b in zip(nat_rows, sql_rows):
        assert a[7:] == pytest.approx(b[7:], rel=1e-12)
    assert nat_rest == sql_rest and (nat_rest or column)  # NaN, ±inf (negatives: unsigned)
    assert sum(r[4] for r in nat_rows if r[3] != 0) > 100  # many near totals, as built


def test_native_exact_reads_equal_the_sql_reads(native_db):
    """The safety net's exact reads (a bucket by k, by m, a near bucket by its key) return the
    same totals as the SQL pass's."""
    _, sc = native_db
    be = sc._engine
    params = params_for(2.0, 2, "node", theta=THETA, beta=BETA, mu=MU)
    native = _spark_native.pass_for(be, "SELECT x AS w FROM t", params, True)
    data = native.buckets()
    far = np.flatnonzero((data["e"] == 0) & ~np.ma.getmaskarray(data["k"]))
    near = np.flatnonzero(data["e"] != 0)
    fk, fm, nb = far[np.argmax(data["n"][far])], far[-1], near[0]
    cols, pred = eb.near_sql(params["theta"], params["beta"], params["mu"], params["eps2"])
    from provsql_dp.mechanisms.recursive.buckets import bucket_sql, near_key_sql

    ln, k, m = bucket_sql("c", params["theta"], params["beta"], params["mu"])
    key = near_key_sql(params["theta"], params["beta"], params["mu"], params["eps2"], k, m)
    keyed = (f"SELECT p, c, {k} AS k, {m} AS m, CASE WHEN {pred} THEN {key} ELSE 0.0::DOUBLE "
             f"END AS e FROM (SELECT p, c, l, {cols} FROM (SELECT p, c, {ln} AS l FROM ("
             "SELECT (x < 0)::INTEGER AS p, abs(x) AS c FROM t WHERE x <> 0) AS r) AS lr) AS lf")
    for kind, i, where in (("k", fk, "k = ? AND e = 0"), ("m", fm, "m = ? AND e = 0"),
                           ("near", nb, "k = ? AND m = ? AND e = ?")):
        p = int(data["p"][i])
        values = ([data[kind][i]] if kind != "near" else
                  [data["k"][i], data["m"][i], data["e"][i]])
        want = eb.engine_run(be, f"SELECT c FROM ({keyed}) AS r WHERE p = ? AND {where}",
                             [p] + [float(v) for v in values])["c"]
        got = native.exact(p, kind, [float(v) for v in values])["c"]
        assert len(got) > 0 and sorted(got) == sorted(want), kind


def test_native_release_equals_duckdb_under_one_seed(native_db, monkeypatch):
    """SUM(x) over the adversarial table (clamped, signed) releases on Spark through the native
    pass exactly what DuckDB releases under the same seed, and what the SQL pass releases."""
    con, sc = native_db
    passes = []
    real = _spark_native.NativePass._run

    def counted(self, spec):
        passes.append(self.column)
        return real(self, spec)

    monkeypatch.setattr(_spark_native.NativePass, "_run", counted)

    def run(c, where="", seed=5):
        c._rng = np.random.default_rng(seed)
        cur = c.execute(f"SELECT SUM(x) FROM t {where} WITH EPSILON 1")
        return cur.fetchone()[0], cur.privacy.bucket_pass

    for where in ("", "WHERE x > 1e299"):  # every total, then a single one
        want, duck_pass = run(con, where)
        passes.clear()
        got, spark_pass = run(sc, where)
        assert len(passes) == 1  # one pass, no exact read: near totals are buckets of their own
        if not where:  # a bare column: read from the scan's columnar batches (runColumn)
            be = sc._engine
            plan = be.spark.sql(be.to_spark(passes[0][0]))._jdf.queryExecution().executedPlan()
            names = [plan.nodeName(), plan.child().nodeName(), plan.child().child().nodeName()]
            assert names[0].startswith("WholeStageCodegen")
            assert names[1:] == ["Project", "ColumnarToRow"]  # the rename to w, then the scan
            assert passes[0][1:] == (-1e12, 1e12)
        else:
            assert passes[0] is None
        with monkeypatch.context() as m:
            m.setenv("PROVSQL_DP_NATIVE", "0")
            m.setattr(_spark_native, "_loaded", {})
            again, sql_pass = run(sc, where)
        monkeypatch.setattr(_spark_native, "_loaded", {})
        duck_want = "native" if getattr(con, "_native", False) else "sql"  # pdp_buckets built?
        assert (duck_pass, spark_pass, sql_pass) == (duck_want, "native", "sql")
        assert got == want == again, where
