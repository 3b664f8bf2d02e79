"""Unbounded ``SUM`` at engine speed: the single-owner closed forms with the per-participant
totals kept inside the engine (DuckDB or Spark).

:func:`provsql_dp.privacy.fast_path.release_single_owner` used to bring every participant's total
into Python (10^7 of them for ``SUM(x)`` over a table protected row by row). Here DuckDB runs one
aggregate pass over the totals — themselves a ``GROUP BY`` owner subquery, or the rows themselves
when each participant owns at most one of them — and returns, per group, part (the positive and
negative parts of a signed SUM) and bucket, the summary :class:`~provsql_dp.mechanisms.recursive.
buckets.Buckets` reads (``count``, ``Σ 1/c``, ``Σ c``, ``min``, ``max``): a few hundred rows. The
Δ search and X are computed from it exactly as from the totals
(:mod:`provsql_dp.mechanisms.recursive.buckets`); a total within rounding of a boundary goes to
a near bucket in the same pass — keyed by its cell among the boundaries around it, and by its
exact value only within a few ulps of one (``near_sql``, ``near_key_sql``: a number of keys
bounded by the boundaries, not by the data) — never read by a further pass.

Which path runs depends on the plan and the declarations only (never on the data); the released
distribution is the per-participant path's.

**Native pass.** When the connection loaded ``pdp_buckets`` (``provsql-dp build-native``,
:mod:`provsql_dp.privacy.native`: decided when the database was opened, by the installation only),
the same bucket rows come from one aggregate function of our own instead of the SQL pass
(:func:`native_pass_sql`): the same keys and counts, the sums up to the order of addition, the
same minima and maxima except a far bucket's (``e = 0``) that its block code summed without
them — bounds of its totals that lie strictly inside the bucket's thresholds and lattice points,
so that every classification below is the one the exact extremes give, and each part's largest
total exact (``pdp_fine.h``); so the same release, in one pass over the same rows; the exact
reads of the safety net stay SQL. Below
β = 1e-3 (public: :data:`_NATIVE_FASTER_BETA`) the SQL pass runs, the faster there.

**On Spark** the same SQL runs there (:func:`engine_run`, through
:meth:`~provsql_dp.provenance.backends.spark.SparkBackend.to_spark`): the per-owner totals are
a ``GROUP BY`` owner that Spark partially aggregates before its shuffle (none at all for a
table protected row by row: the rows are the totals), the buckets a second aggregate with a few
dozen groups; the bucket rows — and, rarely, the totals of one bucket read exactly — are all
that crosses to the driver. Under one seed the released value is DuckDB's (exactly for
whole-number totals, see :mod:`~provsql_dp.mechanisms.recursive.buckets`). For a table
protected row by row, where the installation has built its jar, one JVM aggregate computes the
same bucket rows instead (:mod:`._spark_native`: 1.3× a plain ``SUM`` at 10^8 rows, the SQL
5.2×); ``Cursor.privacy.bucket_pass`` says which ran.

>>> import provsql_dp, numpy as np
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE t(id INT PRIMARY KEY, x DOUBLE)")
>>> _ = con.execute("INSERT INTO t SELECT range, range % 7 - 2 FROM range(1000)")
>>> _ = con.execute("PROTECT TABLE t; SET PRIVACY BUDGET 10")
>>> con._rng = np.random.default_rng(1)
>>> v = con.execute("SELECT SUM(x) FROM t WITH EPSILON 1").fetchone()[0]
>>> abs(v - 1000) < 200   # true sum 1000 (positive part 1855, negative 855)
True
"""

from __future__ import annotations

import functools

import numpy as np
import sqlglot
from sqlglot import exp

from ..mechanisms.recursive.buckets import Buckets, bucket_sql, near_key_sql, near_sql, params_for
from ..provenance.capture import compile_node, q
from ..provenance.flat_rows import flat_rows
from ..sql.plan import Filter, Project, Scan
from .native import decode, direct_sql, grouped_sql

__all__ = ["direct_totals_sql", "direct_weights_sql", "direct_column_sql", "native_pass_sql",
           "engine_buckets", "bucket_params", "engine_run", "NO_ROWS"]

#: the bucket query's answer when no total was read (cut off at the deadline)
NO_ROWS = {c: np.zeros(0) for c in ("g", "p", "k", "m", "e", "n", "inv", "tot", "lo", "hi")}


def direct_totals_sql(con, child, weight: str, signed: bool) -> str | None:
    """``SELECT p, c …`` — each tuple its owner's whole total, one row per nonzero tuple, ``p``
    the part it adds to (0: positive, 1: negative part of a signed SUM, ``c`` then its absolute
    value) — when the plan reads one table protected row by row (``PROTECT TABLE t``: its key,
    never NULL, is the participant) through filters and projections: each participant then
    owns at most one tuple and no ``GROUP BY`` owner is needed. ``weight``: the clamped weight
    (NULL adds nothing). None otherwise.

    One pass for both parts: a tuple's positive part ``greatest(w, 0)`` and negative part
    ``greatest(-w, 0)`` are never both nonzero, so the tuple is one row ``(w < 0, |w|)`` — the
    same totals as two passes over the table, one per part (measured 1.3× faster at 10^7). A
    NULL weight (the clamp's NaN, ±∞) fails ``w <> 0`` like a zero: no ``coalesce`` per row."""
    weights = direct_weights_sql(con, child, weight)
    if weights is None:
        return None
    part = "(w < 0)::INTEGER" if signed else "0"
    value = "abs(w)" if signed else "w"
    return f"SELECT {part} AS p, {value} AS c FROM ({weights}) AS t WHERE w <> 0"


def direct_column_sql(con, child, weight) -> str | None:
    """``SELECT col …``: the column the weight is (an sqlglot expression) before its clamp,
    when :func:`direct_weights_sql` applies and the plan reads the table through projections
    only (no filter) — the native pass then reads the scan's columnar batches where Spark's
    plan of this query renames or casts one column to DOUBLE and nothing else
    (``BucketPass.runColumn`` checks; its rows otherwise). Else None."""
    node = child
    while isinstance(node, Project):
        node = node.child
    if not isinstance(weight, exp.Column) or not isinstance(node, Scan):
        return None
    if direct_weights_sql(con, child, "NULL") is None:
        return None
    return (f"SELECT {weight.sql(dialect='duckdb')} AS w "
            f"FROM ({compile_node(child, disc=False).sql}) AS t")


def direct_weights_sql(con, child, weight: str) -> str | None:
    """``SELECT w …``: the weight of each tuple (NULL, zero and NaN included) when
    :func:`direct_totals_sql` applies, else None — the input of the native pass on Spark
    (:mod:`._spark_native`), which splits the parts itself."""
    node = child
    while isinstance(node, (Filter, Project)):
        node = node.child
    if not isinstance(node, Scan) or len(node.slots) != 1 or node.source is not None:
        return None
    prot = con._catalog.protection(node.schema, node.table)
    if prot is None or prot.by_columns or prot.references is not None:
        return None
    return (f"SELECT ({weight})::DOUBLE AS w "
            f"FROM ({compile_node(child, disc=False).sql}) AS t")


#: below this β the bucket estimates (|ln c|/β, |ln c| ≤ 745) leave the native pass's int64 keys
_NATIVE_MIN_BETA = 1e-12
#: below this β (public) the SQL pass is the faster: nearly every total its own bucket, the
#: native pass's per-thread tables and their serial combine cost 1.5–2.5× the SQL pass's
#: parallel GROUP BY (``benchmarks/native_small_beta.py``: 10^6 totals, β ≤ 3e-4), at 1e-3
#: they are even, above it the native pass is faster (0.14× at β = 0.1)
_NATIVE_FASTER_BETA = 1e-3


def native_pass_sql(con, child, weight_sql: str, bounds, signed: bool, params, totals_sql: str,
                    n_parts: int, inline: bool) -> str | None:
    """The bucket pass as one native ``pdp_buckets`` aggregate (:mod:`provsql_dp.privacy.native`)
    when the connection loaded it (``con._native``: decided when the database was opened, by
    the installation only), else None (the SQL pass). ``inline``: the direct path (the rows of
    ``child`` are the totals, ``weight_sql`` their raw weight clamped to ``bounds`` inside the
    aggregate); otherwise the owner totals ``totals_sql`` (``g, c0[, c1]``). A β below
    :data:`_NATIVE_FASTER_BETA` (public) takes the SQL pass."""
    beta = float(params["beta"])
    if not getattr(con, "_native", False) or not beta >= max(_NATIVE_MIN_BETA, _NATIVE_FASTER_BETA):
        return None
    if inline:
        lo, hi = bounds
        return direct_sql(_rows_sql(child), weight_sql, lo, hi, signed, params)
    return grouped_sql(totals_sql, n_parts, params)


def _rows_sql(child) -> str:
    """The rows of ``child`` with its ids as columns: one ``SELECT col AS id … FROM table WHERE
    …`` layer when the plan is one table's rows under filters
    (:func:`~provsql_dp.provenance.flat_rows.flat_rows`, as the Laplace path reads them), else
    the compiled plan. The same rows; the layers of the compiled plan cost DuckDB ~0.1–0.2 ms
    to bind and plan (a native pass over 10^3 rows: 0.80 → 0.68 ms CPU), nothing per row."""
    flat = flat_rows(child)
    if flat is None:
        return compile_node(child, disc=False).sql
    cols = ", ".join(f"{q(c)} AS {q(i)}" for i, c in flat.columns.items())
    return f"SELECT {cols} FROM {flat.from_where}"


def engine_buckets(run, totals_sql: str, sql_params: list | None, params, n_parts: int,
                   n_groups: int, run_exact=None, inline: bool = False, positive: bool = False,
                   materialize: bool = True, native=None):
    """Per group, the list of :class:`Buckets` (one per part) of the totals ``totals_sql``
    returns (columns ``g, c0[, c1]``, with its parameters ``sql_params``; ``params`` the
    release's θ, β, μ), from one pass of the engine; ``inline``: ``totals_sql`` is
    :func:`direct_totals_sql` (rows ``p, c`` of one group: the table's own rows, read once).
    ``run(sql, parameters)`` executes a query and returns its columns as numpy arrays
    (``run_exact`` for the exact reads of a bucket during the release; default ``run``).
    ``positive``: every ``c`` is known positive and finite (:func:`direct_totals_sql` of a
    signed SUM clamped to finite bounds), so ``ln c`` needs no guard (measured 9 % of the
    pass). ``materialize``: the totals are a ``MATERIALIZED`` CTE, computed once for both
    parts (DuckDB; Spark has no such keyword, and reuses the shuffle). ``native``: the same
    pass as one native aggregate, either the SQL text of DuckDB's ``pdp_buckets``
    (:func:`native_pass_sql`, :mod:`provsql_dp.privacy.native`: rows ``g, b``, the same bucket
    keys bit for bit, counts and sums, far buckets' ``lo, hi`` bounds that classify as their
    extremes do; the exact reads stay SQL) or a JVM pass on Spark
    (:class:`._spark_native.NativePass`, ``inline`` only: its rows and exact reads replace the
    SQL's, which are the same rows, ``tests/system/test_spark_native_buckets.py``)."""
    first = list(sql_params or [])
    run_exact = run_exact or run
    keys = "p, k, m" if inline else "g, p, k, m"
    # the totals with their bucket keys, built on first use: the SQL pass and the exact reads
    # need it, the native pass only for a read of the safety net
    keyed = functools.cache(lambda: _keyed_text(totals_sql, params, n_parts, inline, positive,
                                                materialize))
    if isinstance(native, str):  # DuckDB: one pdp_buckets aggregate (privacy.native)
        data = decode(run(native, first or None))
    elif native is not None:  # Spark: one JVM aggregate (_spark_native)
        data = native.buckets()
    else:
        data = run(f"SELECT {'0 AS g, ' if inline else ''}{keys}, e, count(*)::DOUBLE AS n, "
                   f"sum(1.0 / c) AS inv, sum(c) AS tot, min(c) AS lo, max(c) AS hi "
                   f"FROM ({keyed()}) AS b GROUP BY {keys}, e", first or None)
    null = np.ma.getmaskarray(data["k"])
    # in the order of (g, p, k, m), NULLs last (no ORDER BY: Spark would sample the result in
    # one more job); the sums below then add the buckets in the same order on every engine
    cols = {name: np.ma.getdata(v) for name, v in data.items()}
    far = cols["e"] == 0  # no near total: e = 0 (sorted last, as NULL was)
    order = np.lexsort((cols["e"], far, cols["m"],
                        np.ma.getmaskarray(data["m"]), cols["k"], null, cols["p"],
                        cols["g"]))  # the last key first
    cols = {name: v[order] for name, v in cols.items()}
    null = null[order]
    single = ~far[order]  # a near bucket (near_sql): e ≠ 0
    # sorted by (g, p, NULL last): each group's part is one slice, its non-NULL buckets first
    g_at = cols["g"].searchsorted(np.arange(n_groups + 1))
    out = []
    for g in range(n_groups):
        parts = []
        p_at = cols["p"][g_at[g]:g_at[g + 1]].searchsorted(np.arange(n_parts + 1)) + g_at[g]
        for p in range(n_parts):
            start, end = int(p_at[p]), int(p_at[p + 1])
            mid = end - int(np.count_nonzero(null[start:end]))
            ok, bad = slice(start, mid), slice(mid, end)
            rest = (float(cols["n"][bad].sum()), float(cols["lo"][bad].min()),
                    float(cols["hi"][bad].max())) if mid < end else (0.0, 0.0, 0.0)

            near_keys = [cols[x][ok][single[ok]] for x in ("k", "m", "e")]
            near_at = np.cumsum(single[ok]) - 1  # index among this part's near buckets

            def exact(kind, v, g=g, p=p, near_keys=near_keys, near_at=near_at):
                if native is not None and not isinstance(native, str):  # Spark's pass
                    key = [v] if kind != "near" else [x[near_at[v]] for x in near_keys]
                    return np.asarray(native.exact(p, kind, key)["c"], dtype=np.float64)
                if kind != "near":  # the near totals are buckets of their own
                    sql = (f"SELECT c FROM ({keyed()}) AS r WHERE g = ? AND p = ? AND {kind} = ? "
                           "AND e = 0")
                    where = [g, p, int(v)]
                else:  # the safety net: a near bucket (its cell's code e < 0) read again
                    sql = (f"SELECT c FROM ({keyed()}) AS r WHERE g = ? AND p = ? AND k = ? "
                           "AND m = ? AND e = ?")
                    where = [g, p] + [float(x[near_at[v]]) for x in near_keys]
                return np.asarray(run_exact(sql, first + where)["c"], dtype=np.float64)

            parts.append(Buckets(
                cols["k"][ok].astype(np.int64), cols["m"][ok].astype(np.int64), cols["n"][ok],
                cols["inv"][ok], cols["tot"][ok], cols["lo"][ok], cols["hi"][ok], rest, exact,
                single[ok]))
        out.append(parts)
    return out


def _keyed_text(totals_sql: str, params, n_parts: int, inline: bool, positive: bool,
                materialize: bool) -> str:
    """The SQL of every total of ``totals_sql`` with its bucket keys ``k, m, e``
    (:func:`engine_buckets`)."""
    ln, k, m = bucket_sql("c", params["theta"], params["beta"], params["mu"])
    ln = "ln(c)" if positive else ln
    if inline:  # the rows (p, c) of the one group (direct_totals_sql): no g to group on
        logs = f"SELECT 0 AS g, p, c, {ln} AS l FROM ({totals_sql}) AS r"
        with_tt = ""
    else:  # the parts as rows (p, c), zeros left out (they change nothing): a UNION ALL over
        # the totals (a list unnest costs ten times more per row), read once (materialised)
        rows = " UNION ALL ".join(f"SELECT g, {j} AS p, c{j} AS c FROM tt WHERE c{j} <> 0"
                                  for j in range(n_parts))
        logs = f"SELECT g, p, c, {ln} AS l FROM ({rows}) AS r"
        mat = "MATERIALIZED " if n_parts > 1 and materialize else ""
        with_tt = f"WITH tt AS {mat}({totals_sql}) "
    # a total that may straddle a boundary goes to a near bucket, key e: its cell among the
    # boundaries around it (e < 0), or its exact value within a few ulps of one (e > 0) — so
    # that no further pass depends on where the data put a total, and the number of keys on
    # the boundaries is bounded (buckets.near_sql, near_key_sql). Any other total has e = 0
    # (zeros are left out of the pass), not NULL: a nullable grouping key cost Spark's hash
    # aggregate 25 ns a row, 28 % of the pass (spark_bucket_pass_measured.md)
    fkm, near = near_sql(params["theta"], params["beta"], params["mu"], params["eps2"])
    key = near_key_sql(params["theta"], params["beta"], params["mu"], params["eps2"], k, m)
    keyed = (f"{with_tt}SELECT g, p, c, {k} AS k, {m} AS m, CASE WHEN {near} THEN {key} "
             f"ELSE 0.0::DOUBLE END AS e "
             f"FROM (SELECT g, p, c, l, {fkm} FROM ({logs}) AS lr) AS lf")
    return keyed


def engine_run(engine, sql: str, parameters=None) -> dict:
    """The columns (numpy arrays, masked where NULL) of the DuckDB-dialect query ``sql`` run by
    an external engine (:class:`~provsql_dp.provenance.backends.spark.SparkBackend`), its
    ``?`` parameters — public numbers here: group and bucket indices — written in as literals,
    in order.

    >>> class Echo:
    ...     def fetchnumpy(self, sql):
    ...         return {"sql": sql}, ["VARCHAR"]
    >>> engine_run(Echo(), "SELECT c FROM t WHERE g = ? AND k = ?", [0, -3])["sql"]
    'SELECT c FROM t WHERE g = 0 AND k = -3'
    """
    if parameters:
        values = iter(parameters)
        tree = sqlglot.parse_one(sql, read="duckdb").transform(
            lambda n: exp.convert(next(values)) if isinstance(n, exp.Placeholder) else n)
        sql = tree.sql(dialect="duckdb")
    return engine.fetchnumpy(sql)[0]


def bucket_params(epsilon: float, n_parts: int, style, kwargs: dict):
    """The parameters each part is released with, or None when they are invalid (the release
    then raises as the per-participant path does)."""
    try:
        return params_for(epsilon, n_parts, style, **kwargs)
    except (TypeError, ValueError):
        return None
