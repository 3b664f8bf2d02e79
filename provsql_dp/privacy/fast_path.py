"""The single-owner fast paths: a private aggregate answered inside DuckDB, never materialising
tuples or participants in Python.

Chosen from the plan and the declarations only (:func:`provsql_dp.provenance.owners.owners`),
never from the data:

* **Laplace** — each participant owns at most one tuple (one row per person, joined to public
  tables on their declared keys) and each tuple's weight is bounded (1 for a count, the clamp of
  a bounded SUM): DuckDB computes the exact aggregate per group and the Laplace mechanism adds
  noise at the global sensitivity. A participant's tuple falls in one group, so every group is
  released at the full ε (parallel composition).
* **single-owner recursive mechanism** — every tuple has one owner but the declarations do not
  bound how many tuples a participant owns (people ⋈ visits): DuckDB computes each
  participant's total (``GROUP BY`` owner) and the closed forms of
  :mod:`provsql_dp.mechanisms.recursive.single_owner` release it, exactly as the LPs would.

>>> import provsql_dp, numpy as np
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE p(id INT PRIMARY KEY, age INT)")
>>> _ = con.execute("INSERT INTO p SELECT range, range % 90 FROM range(1000)")
>>> _ = con.execute("PROTECT TABLE p")
>>> _ = con.execute("SET PRIVACY BUDGET 10")
>>> cur = con.execute("SELECT COUNT(*) FROM p WHERE age > 40 WITH EPSILON 1")
>>> cur.privacy.mechanism, isinstance(cur.fetchone()[0], int)
('laplace', True)
"""

from __future__ import annotations

import math
from contextlib import contextmanager

import duckdb
import numpy as np
from sqlglot import exp

from .._deadline import DeadlineExceeded, reading
from ..mechanisms.global_sensitivity import laplace
from ..mechanisms.recursive import single_owner
from ..mechanisms.recursive import buckets
from ..provenance.backends import DuckDBBackend, engine_of
from ..provenance.capture import clamp_sql, compile_node, q
from ..provenance.clamp import sum_clamp
from ..provenance.clamp import clamped_sum_query
from ..provenance.flat_rows import flat_rows
from ..provenance.owner_totals import owner_totals_sql
from ..provenance.owners import Owners, owners
from ..sql.plan import Aggregate
from .dense_totals import dense_owner_totals
from . import _spark_native
from ._kept_texts import kept_for_plan
from .engine_buckets import (NO_ROWS, bucket_params, direct_column_sql, direct_totals_sql,
                             direct_weights_sql, engine_buckets, engine_run, native_pass_sql)
from .no_data import from_no_data, total_range
from .release_info import PrivacyInfo
from .group_epsilon import one_group_per_participant
from .centred_avg import centred_sensitivity

__all__ = ["laplace_applies", "release_laplace", "release_laplace_avg", "release_single_owner",
           "NoRows"]


def laplace_applies(plan: Aggregate, own: Owners | None, bounds) -> bool:
    """Whether the Laplace fast path answers ``plan``: one bounded tuple per participant."""
    if own is None or own.rows_per_owner is None:
        return False
    return plan.kind == "count" or bounds is not None


def release_laplace(con, plan: Aggregate, epsilon, groups: list[tuple], key_names: list[str],
                    bounds, charge_fn, rng=None):
    """Run the aggregate in DuckDB and release every group with the Laplace mechanism.

    ``groups`` is the public list of groups (``[()]`` without GROUP BY); ``charge_fn()`` charges
    the ledger and returns the charge (called before any noise is drawn). A bounded SUM is
    computed by :func:`provsql_dp.provenance.clamp.clamped_sum_query` (the clamp's total, over
    the finite values)."""
    sql, _ = _kept_laplace_sql(con, plan, bounds, with_count=False)
    true = _true_values(con, sql, 1)[0]
    return _release_groups(plan, true, epsilon, groups, key_names, bounds, charge_fn, rng)


def release_laplace_avg(con, sum_plan: Aggregate, count_plan: Aggregate, sum_eps, count_eps,
                        groups: list[tuple], key_names: list[str], bounds, charge_fn, rng=None,
                        centre=None):
    """An AVG's SUM and COUNT, both on the Laplace path, read in ONE scan: ``(sum result, count
    result)``, each what :func:`release_laplace` returns for its part, drawn from ``rng`` in the
    same order (the SUM's groups, then the COUNT's).

    The planner builds an AVG's COUNT over the rows of its SUM whose value is finite
    (``sql.planner``): exactly the rows the SUM adds (:func:`clamped_sum_query`), so the COUNT
    is their number, next to the SUM in the same query. ``count_plan`` is only used
    for its label and the sensitivity of a count. With ``centre = m`` the SUM part released is
    the centred sum ``Σ (clamp(x) − m) = SUM − m·COUNT``, at sensitivity ``k·(U − L)/2``
    (:mod:`.centred_avg`)."""
    sql, _ = _kept_laplace_sql(con, sum_plan, bounds, with_count=True)
    sums, counts = _true_values(con, sql, 2)
    sens = None
    if centre is not None and not isinstance(sums, NoRows):
        sums = {k: v - centre * counts.get(k, 0) for k, v in sums.items()}
    if centre is not None:
        sens = centred_sensitivity(owners(sum_plan.child).rows_per_owner, bounds)
    out_sum = _release_groups(sum_plan, sums, sum_eps, groups, key_names, bounds, charge_fn, rng,
                              sens)
    out_count = _release_groups(count_plan, counts, count_eps, groups, key_names, None, charge_fn,
                                rng)
    return out_sum, out_count


def _kept_laplace_sql(con, plan: Aggregate, bounds, with_count: bool) -> tuple[str, int]:
    """:func:`_laplace_sql`, kept by the catalog next to the plan it was made from (a plan is
    kept while the schema and the declarations are unchanged, ``Catalog.snapshot``): the entry
    holds the plan itself, so a new plan never meets the SQL of another."""
    key = ("laplace sql", None if bounds is None else tuple(map(float, bounds)), with_count)
    return kept_for_plan(con, plan, key, lambda: _laplace_sql(plan, bounds, with_count))


def _laplace_sql(plan: Aggregate, bounds, with_count: bool) -> tuple[str, int]:
    """``SELECT keys…, aggregate[, count] FROM child … GROUP BY keys…``: a count, or a SUM
    clamped to ``bounds`` over the finite values and their number
    (:func:`provsql_dp.provenance.clamp.clamped_sum_query`)."""
    flat = _flat_laplace_sql(plan, bounds, with_count)
    if flat is not None:
        return flat
    compiled = compile_node(plan.child, disc=False)
    keys = [q(k) for k in plan.group_by]
    if plan.kind != "count":
        lower, upper = bounds
        sql = clamped_sum_query(compiled.sql, plan.weight.sql(dialect="duckdb"), lower, upper,
                                keys, with_count)
        return sql, 1 + with_count
    aggs = ["count(*)"] * (1 + with_count)
    sql = f"SELECT {', '.join(keys + aggs)} FROM ({compiled.sql}) AS t"
    if keys:
        sql += f" GROUP BY {', '.join(keys)}"
    return sql, len(aggs)


def _flat_laplace_sql(plan: Aggregate, bounds, with_count: bool) -> tuple[str, int] | None:
    """:func:`_laplace_sql` over the table itself when the plan's rows are one table's under
    a filter (:func:`provsql_dp.provenance.flat_rows.flat_rows`): the same aggregate of the same
    rows, without the layers DuckDB keeps (~10 % of a COUNT's time on 10^7 rows), or None."""
    flat = flat_rows(plan.child)
    if flat is None or not set(plan.group_by) <= set(flat.columns):
        return None
    if plan.kind != "count":  # over the ids, as compiled, in one layer: no name meets the
        # aliases of clamped_sum_query
        cols = ", ".join(f"{q(c)} AS {q(i)}" for i, c in flat.columns.items())
        lower, upper = bounds
        sql = clamped_sum_query(f"SELECT {cols} FROM {flat.from_where}",
                                plan.weight.sql(dialect="duckdb"), lower, upper,
                                [q(k) for k in plan.group_by], with_count)
        return sql, 1 + with_count
    keys = [q(flat.columns[k]) for k in plan.group_by]
    aggs = ["count(*)"] * (1 + with_count)
    sql = f"SELECT {', '.join(keys + aggs)} FROM {flat.from_where}"
    if keys:
        sql += f" GROUP BY {', '.join(keys)}"
    return sql, len(aggs)


class NoRows(dict):
    """The totals of a read cut off at the release's deadline: no group, every value 0 (a
    release from them is :class:`~.no_data.FromNoData`, its interval the statistic's whole
    range, :func:`~.no_data.total_range`)."""


def _true_values(con, sql: str, n: int) -> list[dict]:
    """The ``n`` aggregates of each group, as ``{group key tuple: value}`` (NULL as 0). A read
    cut off at the release's deadline (:mod:`provsql_dp._deadline`) reads no data: every group's
    value is 0, released with the same noise (the data-independent fallback): :class:`NoRows`."""
    try:
        rows = engine_of(con).fetchall(sql)
    except DeadlineExceeded as e:
        _no_data(con, e, "the Laplace release of 0 in every group")
        return [NoRows() for _ in range(n)]
    return [{tuple(r[:-n]): (r[len(r) - n + j] or 0) for r in rows} for j in range(n)]


def _release_groups(plan: Aggregate, true: dict, epsilon, groups, key_names, bounds, charge_fn,
                    rng, sens=None):
    own = owners(plan.child)
    whole = total_range(plan.kind, None if sens is not None else bounds)  # (a centred sum: ±)
    if plan.kind == "count":
        integer, sens = True, float(own.rows_per_owner)
    elif sens is not None:  # a centred sum (release_laplace_avg)
        integer = False
    else:
        lower, upper = bounds
        integer = False
        sens = float(own.rows_per_owner) * max(abs(float(lower)), abs(float(upper)))
    charge = charge_fn()
    eps = float(epsilon)
    # a participant's k = rows_per_owner tuples may lie in k groups: ℓ1 ≤ sens over at most k
    # coordinates (one row per participant: one group, parallel composition)
    releases = laplace.release_many([true.get(tuple(g), 0) for g in groups], sensitivity=sens,
                                    epsilon=eps, integer=integer, rng=rng,
                                    changed=int(own.rows_per_owner))
    releases = list(from_no_data(releases, *whole, isinstance(true, NoRows)))  # honest intervals
    out = [tuple(g) + (rel.value,) for g, rel in zip(groups, releases)]
    desc = [(n, "VARCHAR") for n in key_names] + [(plan.label, "BIGINT" if integer else "DOUBLE")]
    info = PrivacyInfo(mechanism="laplace", epsilon=charge.epsilon, remaining=charge.remaining,
                       releases=tuple(releases))
    return desc, out, info


def release_single_owner(con, plan: Aggregate, own: Owners, epsilon, groups: list[tuple],
                         key_names: list[str], style: str, kwargs: dict, signed: bool, bounds,
                         charge_fn, rng=None, fallback=None, max_groups=None):
    """Release with the single-owner closed forms of the recursive mechanism: DuckDB computes
    each participant's total per group (one hash aggregate ``GROUP BY`` keys, owner), numpy does
    the rest.

    With a GROUP BY, the public list of groups is handed to DuckDB as a parameter: each
    per-owner total is joined to its group's index (keys compared as ``GROUP BY`` compares them,
    NULL equal to NULL; totals of undeclared keys are dropped) and sorted by it, so that one
    query yields every group's totals as a contiguous slice — no window function, no second pass.

    Groups are released at the full ε when every key is a function of the owner (a
    participant's tuples then fall in one group: :mod:`provsql_dp.sql.owner_fd` proves it),
    else at ε / groups — or, with ``max_groups = k`` declared (``OPTIONS (max_groups = k)``),
    at ε / k with the bound *enforced*: each participant keeps its totals in its first ``k``
    groups in the public group order (a per-participant truncation, so that adding or removing
    one participant changes at most ``k`` groups' inputs) and loses the rest."""
    parallel = one_group_per_participant(plan, own)
    truncate = (not parallel and max_groups is not None and plan.group_by
                and max_groups < len(groups))
    keys = [q(k) for k in plan.group_by]
    if plan.weight is None:
        parts, values = ["count(*)"], [None]
    else:
        lo, hi = sum_clamp(bounds, signed)
        weight, w, weight_ids = kept_for_plan(con, plan, ("weight", float(lo), float(hi)),
                                              lambda: _weight_texts(plan, lo, hi))
        values = [f"greatest({w}, 0.0)", f"greatest(-({w}), 0.0)"] if signed else [w]
        parts = [f"sum({v})" for v in values]
    weight_ids = weight_ids if plan.weight is not None else frozenset()
    engine = engine_of(con)
    embedded = isinstance(engine, DuckDBBackend)
    if parallel:
        eps = float(epsilon)
    else:
        eps = float(epsilon) / (int(max_groups) if truncate else max(1, len(groups)))
    params = bucket_params(eps, len(values), style, kwargs) if plan.weight is not None else None
    if params is not None:  # an unbounded SUM: the totals stay in the engine (engine_buckets)
        direct = None if keys else kept_for_plan(  # text made by sqlglot: kept with the plan
            con, plan, ("direct totals", w, signed),
            lambda: direct_totals_sql(con, plan.child, w, signed))
        sql, sql_params = (direct, None) if direct is not None else _owner_totals_query(
            plan, own, groups, parts, weight_ids, truncate, max_groups, embedded)
        # no GROUP BY owner on the direct path: no perfect hash setting to change (3 statements)
        settings = _hash_aggregate_settings if direct is None else _unchanged

        def run(text, p=None):
            if not embedded:  # Spark: the same SQL, its parameters written in (engine_run)
                return engine_run(engine, text, p)
            with settings(con._duck), reading(con._duck):
                return con._duck.execute(text, p).fetchnumpy()

        def run_exact(text, p=None):  # a bucket read exactly, after the charge
            try:
                return run(text, p)
            except DeadlineExceeded as e:  # that group's release falls back
                _no_data(con, e, "the data-independent release of one group")
                raise
        # the same pass as one native aggregate where the installation has it (never by data)
        if embedded:  # DuckDB's pdp_buckets (privacy.native): its SQL text
            native = kept_for_plan(
                con, plan, ("native pass", weight, float(lo), float(hi), signed, sql, len(values),
                            direct is not None, bool(getattr(con, "_native", False)),
                            *(float(params[k]) for k in ("theta", "beta", "mu", "eps2"))),
                lambda: native_pass_sql(con, plan.child, weight, (lo, hi), signed, params, sql,
                                        len(values), direct is not None))
        else:  # Spark's JVM pass (_spark_native), the direct path only
            column = direct_column_sql(con, plan.child, plan.weight)
            native = None if direct is None else _spark_native.pass_for(
                engine, direct_weights_sql(con, plan.child, w), params, signed,
                None if column is None else (column, float(lo), float(hi)))
            if native is not None:  # its exact reads, cut off at the deadline as run_exact's
                native = _NativeReads(native, lambda e: _no_data(
                    con, e, "the data-independent release of one group"))
        try:
            per_group = engine_buckets(run, sql, sql_params, params, len(values), len(groups),
                                       run_exact, inline=direct is not None,
                                       positive=direct is not None and signed
                                       and math.isfinite(float(lo)) and math.isfinite(float(hi)),
                                       materialize=embedded, native=native)
        except DeadlineExceeded as e:  # cut off at the deadline: no participant's totals are read
            _no_data(con, e, "the single-owner release of no participant in every group")
            per_group = engine_buckets(lambda *a: NO_ROWS, "", None, params, len(values),
                                       len(groups))
        return _release_each(plan, groups, key_names, charge_fn, fallback, eps, lambda i, gen:
                             buckets.release_buckets(per_group[i], eps, style, gen, **kwargs), rng,
                             bucket_pass="native" if native is not None else "sql")
    # A count's per-owner totals are whole numbers with few distinct values: their histogram
    # (total, how many owners) goes to the closed forms (single_owner.release(counts=…)); so
    # does, on Spark, a SUM's whose parameters are invalid (the release then raises as it would).
    histogram = plan.weight is None or not embedded
    dense = None
    try:
        if embedded and not keys:
            with reading(con._duck):  # a release's step: interrupted at its deadline
                dense = dense_owner_totals(con._duck, plan.child, values, weight_ids, histogram)
        if dense is not None:
            g, totals, mult = dense
        else:
            g, totals, mult = _owner_totals_sql_path(con, engine, embedded, plan, own, groups,
                                                     parts, weight_ids, truncate, max_groups,
                                                     histogram)
    except DeadlineExceeded as e:  # cut off at the deadline: no participant's totals are read
        _no_data(con, e, "the single-owner release of no participant in every group")
        g, totals = np.zeros(0, dtype=np.int64), [np.zeros(0) for _ in parts]
        mult = np.zeros(0) if histogram else None
    bounds_at = np.searchsorted(g, np.arange(len(groups) + 1))

    def one(i, gen):
        sl = slice(bounds_at[i], bounds_at[i + 1])
        m = None if mult is None else mult[sl]
        if signed:
            return single_owner.release_signed(totals[0][sl], totals[1][sl], eps, style, gen,
                                               counts=m, **kwargs)
        return single_owner.release(totals[0][sl], eps, style, gen, counts=m, **kwargs)
    return _release_each(plan, groups, key_names, charge_fn, fallback, eps, one, rng)


def _weight_texts(plan: Aggregate, lo: float, hi: float) -> tuple[str, str, frozenset]:
    """A SUM's weight as DuckDB SQL, clamped to ``[lo, hi]`` (:func:`clamp_sql`), and the
    columns it reads."""
    weight = plan.weight.sql(dialect="duckdb")
    ids = frozenset(c.name for c in plan.weight.find_all(exp.Column))
    return weight, clamp_sql(weight, lo, hi), ids


class _NativeReads:
    """A native pass whose exact reads end the group's release at the deadline, as
    ``run_exact`` does for the SQL pass."""

    def __init__(self, native, no_data):
        self.native, self.no_data = native, no_data

    def buckets(self):
        return self.native.buckets()

    def exact(self, *key):
        try:
            return self.native.exact(*key)
        except DeadlineExceeded as e:
            self.no_data(e)
            raise


def _release_each(plan, groups, key_names, charge_fn, fallback, eps, one, rng,
                  bucket_pass=None):
    """Charge, then release each group with ``one(group index, rng)`` (the data-independent
    ``fallback(eps)`` for a group cut off at the release's deadline; any other failure is the
    statement's, :mod:`.group_epsilon`)."""
    charge = charge_fn()
    releases, out = [], []
    for i, grp in enumerate(groups):
        try:
            rel = one(i, rng)
        except DeadlineExceeded:  # cut off at the deadline: data-independent, unlike a number
            rel = fallback(eps)
        releases.append(rel)
        out.append(tuple(grp) + (rel.value,))
    desc = [(n, "VARCHAR") for n in key_names] + [(plan.label, "DOUBLE")]
    mech = releases[0].mechanism if releases else "recursive"  # no group: nothing released
    info = PrivacyInfo(mechanism=mech, epsilon=charge.epsilon,
                       remaining=charge.remaining, releases=tuple(releases),
                       bucket_pass=bucket_pass)
    return desc, out, info


def _owner_totals_sql_path(con, engine, embedded, plan, own, groups, parts, weight_ids, truncate,
                           max_groups, histogram):
    """``(group index per row, [totals per part], multiplicities or None)`` from one DuckDB
    query: per-owner totals per group (:func:`owner_totals_sql`), joined to the public groups."""
    sql, params = _owner_totals_query(plan, own, groups, parts, weight_ids, truncate, max_groups,
                                      embedded)
    names = ", ".join(f"c{j}" for j in range(len(parts)))
    if histogram:  # DuckDB sends (total, how many owners) instead of one row per owner
        sql = (f"SELECT g, {names}, count(*)::DOUBLE AS m FROM ({sql}) AS h "
               f"GROUP BY g, {names} ORDER BY g")
    else:
        sql = f"SELECT * FROM ({sql}) AS h ORDER BY g"
    if embedded:
        with _hash_aggregate_settings(con._duck), reading(con._duck):
            data = con._duck.execute(sql, params).fetchnumpy()
    else:
        data = engine.fetchnumpy(sql)[0]
    g = np.asarray(data["g"], dtype=np.int64)
    totals = [np.asarray(np.ma.filled(data[f"c{j}"], 0.0), dtype=np.float64) for j in range(len(parts))]
    mult = np.asarray(data["m"], dtype=np.float64) if histogram else None
    return g, totals, mult


def _owner_totals_query(plan, own, groups, parts, weight_ids, truncate, max_groups, embedded):
    """``(SELECT g, c0, … — one row per (group, owner) —, its parameters or None)``."""
    keys = [q(k) for k in plan.group_by]
    inner = owner_totals_sql(plan.child, own.slot, list(plan.group_by), parts, weight_ids,
                             with_owner=bool(truncate))
    names = ", ".join(f"c{j}" for j in range(len(parts)))
    params = None
    if keys:
        k_cols = [f"k{j}" for j in range(len(keys))]
        group_rel, params = _group_relation(groups, len(keys), embedded)
        match = " AND ".join(f"o.{k} IS NOT DISTINCT FROM g.{kc}" for k, kc in zip(keys, k_cols))
        sql = (f"SELECT g.g, {names} FROM ({inner}) AS o JOIN "
               f"{group_rel} AS g ON {match}")
        if truncate:
            sql = sql.replace("SELECT g.g,", "SELECT g.g, row_number() OVER (PARTITION BY o.__o "
                              "ORDER BY g.g) AS __rank,", 1)
            sql = f"SELECT g, {names} FROM ({sql}) AS r WHERE __rank <= {int(max_groups)}"
    else:
        sql = f"SELECT 0 AS g, {names} FROM ({inner}) AS o"
    return sql, params


#: DuckDB's perfect hash aggregate (an array indexed by the key, no hashing) applies to integer
#: group keys whose range, from the table statistics, fits this many bits; its default (12 bits)
#: leaves a per-owner aggregate over 10^6 participant ids to the general hash table, measured
#: 3.4× slower. 22 bits: ids spanning up to 4·10^6 values, an array of a few tens of MB.
PERFECT_HASH_BITS = 22


@contextmanager
def _hash_aggregate_settings(duck):
    """Within the block, DuckDB uses a perfect hash aggregate for key ranges up to
    :data:`PERFECT_HASH_BITS` bits; the connection's own setting is restored after."""
    prev = duck.execute("SELECT current_setting('perfect_ht_threshold')").fetchone()[0]
    if int(prev) >= PERFECT_HASH_BITS:  # already (a guarded connection's locked configuration)
        yield
        return
    duck.execute(f"SET perfect_ht_threshold = {max(int(prev), PERFECT_HASH_BITS)}")
    try:
        yield
    finally:
        try:
            duck.execute(f"SET perfect_ht_threshold = {int(prev)}")
        except duckdb.Error:  # an aborted transaction: the caller's error stands, not this one
            pass


@contextmanager
def _unchanged(duck):
    yield


def _no_data(con, e: DeadlineExceeded, fallback: str) -> None:
    """Record for the curator that a read was cut off and the release reads no data."""
    con._catalog.record_incident(f"{e}; released the data-independent fallback ({fallback})")


def _group_relation(groups: list, n_keys: int, embedded: bool) -> tuple[str, list | None]:
    """The public groups as a relation ``(k0, …, g)`` to join the per-owner totals on: list
    parameters unnested on the embedded DuckDB, inline literals (public values) elsewhere."""
    if embedded:
        unnest = ", ".join(f"unnest(?) AS k{j}" for j in range(n_keys))
        params = [[grp[j] for grp in groups] for j in range(n_keys)] + [len(groups)]
        return f"(SELECT {unnest}, unnest(range(?)) AS g)", params
    rows = ", ".join(
        "(" + ", ".join([exp.convert(v).sql(dialect="duckdb") for v in grp] + [str(i)]) + ")"
        for i, grp in enumerate(groups))
    cols = ", ".join([f"k{j}" for j in range(n_keys)] + ["g"])
    return f"(SELECT * FROM (VALUES {rows}) AS v({cols}))", None
