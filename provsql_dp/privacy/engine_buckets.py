"""Unbounded ``SUM`` at engine speed: the single-owner closed forms with the per-participant
totals kept inside the engine (DuckDB or Spark).

:func:`provsql_dp.privacy.fast_path.release_single_owner` used to bring every participant's total
into Python (10^7 of them for ``SUM(x)`` over a table protected row by row). Here DuckDB runs one
aggregate pass over the totals — themselves a ``GROUP BY`` owner subquery, or the rows themselves
when each participant owns at most one of them — and returns, per group, part (the positive and
negative parts of a signed SUM) and bucket, the summary :class:`~provsql_dp.mechanisms.recursive.
buckets.Buckets` reads (``count``, ``Σ 1/c``, ``Σ c``, ``min``, ``max``): a few hundred rows. The
Δ search and X are computed from it exactly as from the totals
(:mod:`provsql_dp.mechanisms.recursive.buckets`); a bucket within rounding of a threshold is read
exactly by one more pass (rare).

Which path runs depends on the plan and the declarations only (never on the data); the released
distribution is the per-participant path's.

**On Spark** the same SQL runs there (:func:`engine_run`, through
:meth:`~provsql_dp.provenance.backends.spark.SparkBackend.to_spark`): the per-owner totals are
a ``GROUP BY`` owner that Spark partially aggregates before its shuffle (none at all for a
table protected row by row: the rows are the totals), the buckets a second aggregate with a few
hundred groups; the bucket rows — and, rarely, the totals of one bucket read exactly — are all
that crosses to the driver. Under one seed the released value is DuckDB's (exactly for
whole-number totals, see :mod:`~provsql_dp.mechanisms.recursive.buckets`).

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

import numpy as np
import sqlglot
from sqlglot import exp

from ..mechanisms.recursive.buckets import Buckets, bucket_sql, params_for
from ..provenance.capture import compile_node
from ..sql.plan import Filter, Project, Scan

__all__ = ["direct_totals_sql", "engine_buckets", "bucket_params", "engine_run", "NO_ROWS"]

#: the bucket query's answer when no total was read (cut off at the deadline)
NO_ROWS = {c: np.zeros(0) for c in ("g", "p", "k", "m", "n", "inv", "tot", "lo", "hi")}


def direct_totals_sql(con, child, values: list[str]) -> str | None:
    """``SELECT 0 AS g, c0, …`` — each tuple its owner's whole total — when the plan reads one
    table protected row by row (``PROTECT TABLE t``: its key, never NULL, is the participant)
    through filters and projections: each participant then owns at most one tuple and no
    ``GROUP BY`` owner is needed. None otherwise."""
    node = child
    while isinstance(node, (Filter, Project)):
        node = node.child
    if not isinstance(node, Scan) or len(node.slots) != 1 or node.source is not None:
        return None
    prot = con._catalog.protection(node.schema, node.table)
    if prot is None or prot.by_columns or prot.references is not None:
        return None
    cols = ", ".join(f"coalesce({v}, 0)::DOUBLE AS c{j}" for j, v in enumerate(values))
    return f"SELECT 0 AS g, {cols} FROM ({compile_node(child, disc=False).sql}) AS t"


def engine_buckets(run, totals_sql: str, sql_params: list | None, params, n_parts: int,
                   n_groups: int, run_exact=None, inline: bool = False,
                   materialize: bool = True):
    """Per group, the list of :class:`Buckets` (one per part) of the totals ``totals_sql``
    returns (columns ``g, c0[, c1]``, with its parameters ``sql_params``; ``params`` the
    release's θ, β, μ), from one pass of the engine; ``inline``: the totals are the rows
    themselves (:func:`direct_totals_sql`: at most one nonzero part each), read once instead of
    materialised. ``run(sql, parameters)`` executes a query and
    returns its columns as numpy arrays (``run_exact`` for the exact reads of a bucket during
    the release; default ``run``). ``materialize``: the totals are a ``MATERIALIZED`` CTE,
    computed once for all parts (DuckDB; Spark has no such keyword and reuses the shuffle)."""
    first = list(sql_params or [])
    run_exact = run_exact or run
    ln, k, m = bucket_sql("c", params["theta"], params["beta"], params["mu"])
    # the parts as rows (p, c), zeros left out (they change nothing): a UNION ALL over the
    # totals (a list unnest costs ten times more per row), read once when they are a GROUP BY;
    # rows themselves (inline) have at most one nonzero part — a value's positive or negative
    # part — and are read once, each giving the part it has (p NULL: a zero, dropped below —
    # a filter here would be pushed down into the scan and evaluate the parts twice on Spark)
    if inline:
        pick = " ".join(f"WHEN c{j} <> 0 THEN {j}" for j in range(n_parts))
        val = " ".join(f"WHEN c{j} <> 0 THEN c{j}" for j in range(n_parts))
        rows = f"SELECT g, CASE {pick} END AS p, CASE {val} END AS c FROM ({totals_sql}) AS t"
        with_tt = ""
    else:
        rows = " UNION ALL ".join(f"SELECT g, {j} AS p, c{j} AS c FROM tt WHERE c{j} <> 0"
                                  for j in range(n_parts))
        with_tt = f"WITH tt AS {'MATERIALIZED ' if n_parts > 1 and materialize else ''}({totals_sql}) "
    logs = f"SELECT g, p, c, {ln} AS l FROM ({rows}) AS r"
    keyed = f"{with_tt}SELECT g, p, c, {k} AS k, {m} AS m FROM ({logs}) AS lr"
    data = run(f"SELECT g, p, k, m, count(*)::DOUBLE AS n, sum(1.0 / c) AS inv, "
               f"sum(c) AS tot, min(c) AS lo, max(c) AS hi FROM ({keyed}) AS b "
               f"GROUP BY g, p, k, m", first or None)
    null = np.ma.getmaskarray(data["k"])
    # in the order of (g, p, k, m), NULLs last (no ORDER BY: Spark would sample the result in
    # one more job); the sums below then add the buckets in the same order on every engine
    cols = {name: np.ma.getdata(v) for name, v in data.items()}
    order = np.lexsort((cols["m"], np.ma.getmaskarray(data["m"]), cols["k"], null, cols["p"],
                        cols["g"]))  # the last key first
    keep = order[~np.ma.getmaskarray(data["p"])[order]]  # zeros (inline rows) have no part
    cols = {name: v[keep] for name, v in cols.items()}
    null = null[keep]
    out = []
    for g in range(n_groups):
        parts = []
        for p in range(n_parts):
            sel = (cols["g"] == g) & (cols["p"] == p)
            ok, bad = sel & ~null, sel & null
            rest = (float(cols["n"][bad].sum()), float(cols["lo"][bad].min()),
                    float(cols["hi"][bad].max())) if bad.any() else (0.0, 0.0, 0.0)

            def exact(kind, v, g=g, p=p):
                sql = f"SELECT c FROM ({keyed}) AS e WHERE g = ? AND p = ? AND {kind} = ?"
                return np.asarray(run_exact(sql, first + [g, p, int(v)])["c"], dtype=np.float64)

            parts.append(Buckets(
                cols["k"][ok].astype(np.int64), cols["m"][ok].astype(np.int64), cols["n"][ok],
                cols["inv"][ok], cols["tot"][ok], cols["lo"][ok], cols["hi"][ok], rest, exact))
        out.append(parts)
    return out


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
