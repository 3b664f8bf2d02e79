"""The single-owner GROUP BY released with ONE ℓ1 bound across its groups (no ε split).

When a GROUP BY on the single-owner route has a public list of several groups and the
declarations do not prove that each participant falls in one of them (TPC-H Q21: a customer's
orders reach many suppliers), the route used to release each group at ε / groups. It now
releases the whole vector of groups at the statement's ε with
:func:`provsql_dp.mechanisms.recursive.single_owner_groups.release_rows` — each participant's
per-group totals scaled into one ℓ1 ball of radius Δ̂, Δ̂ chosen from the participants' totals by
the scalar closed form; the privacy argument is that module's docstring.

The choice is :func:`provsql_dp.privacy.group_epsilon.l1_across_groups`: the route, the GROUP BY,
the declarations and the number of groups — never the data — and ``EXPLAIN PRIVACY`` reads the
same function (:mod:`.explain_route`), so it names the same strategy and ε as the release.
``OPTIONS (max_groups = k)`` with ``k`` below the number of groups keeps its per-participant
truncation at ε / k (the analyst's declared bound).

The engine computes each (group, owner) total once, with the owner's norm over every group and
whether the row is the owner's first (two window functions over the owner): numpy receives one
row per (group, owner), never a participant's identity.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE p(id INT PRIMARY KEY); PROTECT TABLE p")
>>> _ = con.execute("CREATE TABLE s(sid INT PRIMARY KEY, region VARCHAR)")
>>> _ = con.execute("CREATE TABLE o(pid INT REFERENCES p(id), sid INT REFERENCES s(sid))")
>>> _ = con.execute("PROTECT TABLE o BY (pid) REFERENCES p")
>>> _ = con.execute("INSERT INTO p SELECT range FROM range(50)")
>>> _ = con.execute("INSERT INTO s VALUES (1, 'a'), (2, 'b'), (3, 'c')")
>>> _ = con.execute("INSERT INTO o SELECT range % 50, range % 3 + 1 FROM range(600)")
>>> _ = con.execute("SET PRIVACY BUDGET 5")
>>> cur = con.execute("SELECT s.region, COUNT(*) FROM o JOIN s ON o.sid = s.sid "
...                   "GROUP BY s.region WITH EPSILON 1")
>>> cur.privacy.routes, len(cur.fetchall()), float(cur.privacy.epsilon)
(('single-owner',), 3, 1.0)
>>> cur.privacy.releases[0].changed, cur.privacy.releases[0].epsilon
(3, 1.0)
"""

from __future__ import annotations

import numpy as np
from sqlglot import exp

from .._deadline import DeadlineExceeded, reading
from ..mechanisms.recursive.single_owner_groups import release_rows
from ..provenance.backends import DuckDBBackend, engine_of
from ..provenance.capture import clamp_sql, q
from ..provenance.clamp import sum_clamp
from ..provenance.owner_totals import owner_totals_sql
from .fast_path import _group_relation, _hash_aggregate_settings, _no_data
from .release_info import PrivacyInfo

__all__ = ["STRATEGY", "fetch_rows", "parts_sql", "release", "rows_sql"]

#: the strategy ``EXPLAIN PRIVACY`` shows for this release (``{g}``: the number of groups)
STRATEGY = ("single-owner closed form with one ℓ1 bound across the {g} groups: each "
            "participant's per-group totals scaled into one ball of radius Δ̂, every group "
            "released at the full ε (a participant may fall in several groups)")


def parts_sql(weight, bounds, signed: bool, where=None) -> tuple[list[str], set]:
    """The aggregates summed per (group, owner) and the ids they read: ``count(*)``
    (``weight`` None), or the clamped SUM of ``weight`` (two nonnegative parts when signed), as
    :func:`.fast_path.release_single_owner` sums them; ``where``: only the rows it holds.

    >>> parts_sql(None, None, False, exp.column("v2"))
    (['count(*) FILTER (WHERE v2)'], {'v2'})
    """
    ids = {c.name for c in where.find_all(exp.Column)} if where is not None else set()
    tail = "" if where is None else f" FILTER (WHERE {where.sql(dialect='duckdb')})"
    if weight is None:
        return [f"count(*){tail}"], ids
    lo, hi = sum_clamp(bounds, signed)
    w = clamp_sql(weight.sql(dialect="duckdb"), lo, hi)
    values = [f"greatest({w}, 0.0)", f"greatest(-({w}), 0.0)"] if signed else [w]
    return [f"sum({v}){tail}" for v in values], ids | {c.name for c in weight.find_all(exp.Column)}


def rows_sql(plan, own, groups, parts, weight_ids, embedded: bool):
    """``(SQL, parameters)``: one row per (declared group, owner) with its group index ``g``, its
    parts ``c0…``, its owner's norm ``t`` (over every declared group and part) and ``f``, true
    on one row per owner. Totals of undeclared keys are dropped before the norm."""
    keys = [q(k) for k in plan.group_by]
    inner = owner_totals_sql(plan.child, own.slot, list(plan.group_by), parts, weight_ids,
                             with_owner=True)
    names = [f"c{j}" for j in range(len(parts))]
    group_rel, params = (_group_relation(groups, len(keys), embedded) if keys
                         else ("(SELECT 0 AS g)", []))  # no GROUP BY: the one group
    match = " AND ".join(f"o.{k} IS NOT DISTINCT FROM g.k{j}" for j, k in enumerate(keys)) or "TRUE"
    norm = " + ".join(f"o.{n}" for n in names)
    # DuckDB computes the per-owner totals first (MATERIALIZED): joined in place, its optimizer
    # moved the groups' join into the statement's joins, 20× slower on TPC-H Q8 at SF 1
    head = f"WITH o AS {'MATERIALIZED ' if embedded else ''}({inner}) "
    sql = (f"{head}SELECT g.g AS g, {', '.join(f'o.{n} AS {n}' for n in names)}, "
           f"sum({norm}) OVER (PARTITION BY o.__o) AS t, "
           f"row_number() OVER (PARTITION BY o.__o ORDER BY g.g) = 1 AS f "  # Spark: ordered
           f"FROM o JOIN {group_rel} AS g ON {match}")
    return sql, params


def release(con, d, charge_fn, rng=None):
    """Release decision ``d`` (single-owner, :func:`~.group_epsilon.l1_across_groups`) at its
    full ε: ``(description, rows, PrivacyInfo)``. ``charge_fn()`` charges before any read."""
    plan, groups = d.plan, d.groups
    parts, weight_ids = parts_sql(plan.weight, d.bounds, d.signed)
    charge = charge_fn()
    g, vals, rt, first = fetch_rows(con, plan, d.own, groups, parts, weight_ids)
    releases = release_rows(rt[first], g, vals, rt, len(groups), float(d.epsilon), d.style, rng,
                            **d.kwargs)
    out = [tuple(grp) + (rel.value,) for grp, rel in zip(groups, releases)]
    desc = [(n, "VARCHAR") for n in d.key_names] + [(plan.label, "DOUBLE")]
    info = PrivacyInfo(mechanism=releases[0].mechanism, epsilon=charge.epsilon,
                       remaining=charge.remaining, releases=tuple(releases))
    return desc, out, info


def fetch_rows(con, plan, own, groups, parts, weight_ids):
    """Run :func:`rows_sql` (after the charge): ``(g, values, row norms, first)`` as numpy
    arrays, one entry per (declared group, owner); cut off at the deadline, no rows (the
    data-independent release of no participant, recorded as an incident)."""
    engine = engine_of(con)
    embedded = isinstance(engine, DuckDBBackend)
    k = len(parts)
    try:
        sql, params = rows_sql(plan, own, groups, parts, weight_ids, embedded)
        if embedded:
            with _hash_aggregate_settings(con._duck), reading(con._duck):
                data = con._duck.execute(sql, params).fetchnumpy()
        else:
            data = engine.fetchnumpy(sql)[0]
        g = np.asarray(data["g"], dtype=np.int64)
        vals = np.stack([np.asarray(np.ma.filled(data[f"c{j}"], 0.0), dtype=np.float64)
                         for j in range(k)], axis=1)
        rt = np.asarray(np.ma.filled(data["t"], 0.0), dtype=np.float64)
        first = np.asarray(np.ma.filled(data["f"], False), dtype=bool)
    except DeadlineExceeded as e:  # cut off at the deadline: no participant's totals are read
        _no_data(con, e, "the single-owner release of no participant in every group")
        g, vals = np.zeros(0, dtype=np.int64), np.zeros((0, k))
        rt, first = np.zeros(0), np.zeros(0, dtype=bool)
    return g, vals, rt, first
