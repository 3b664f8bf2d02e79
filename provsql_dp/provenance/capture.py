"""Provenance capture: compile a plan to one DuckDB query that carries participants, run it, and
assemble the K-relation from arrays.

The rewrite (one function per plan node, :func:`compile_node`) gives every intermediate relation
three kinds of columns:

* the node's value columns, named by their plan ids;
* participant *slots* ``__s0, __s1, …``: for each protected scan below, the key of every owner of
  the row (NULL where a union branch has no such scan);
* *discriminator* columns ``__d0, …`` that identify the output tuple a derivation belongs to under
  SQL bag semantics: a base row's ``rowid``; a ``DISTINCT`` resets them to its own values.

Joins, filters and projections just carry slots and discriminators along, so DuckDB does the whole
derivation computation vectorised. Only at the very top are derivations grouped by their
discriminators into tuples; for a query without ``DISTINCT`` every derivation row is its own tuple
and no grouping is needed. In Python the slots become dense participant indices with numpy
(``searchsorted`` against each domain's sorted key dictionary, see
:mod:`~provsql_dp.provenance.participants`) — or the engine returns the ids itself, and a
distributed engine numbers the tuples within hash partitions (``capture_sql``'s ``key_views``
and ``partitioned``) — duplicate participants are removed
inside a monomial, and — for grouped tuples — duplicate and absorbed monomials are dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sqlglot import exp

from .._progress import report
from ..errors import CaptureTooLarge, InternalError
from ..sql.plan import (
    Aggregate,
    Distinct,
    Filter,
    GroupFilter,
    Join,
    Node,
    OneRow,
    Project,
    Scan,
    SemiJoin,
    AntiJoin,
    Slot,
    Union,
    walk,
)
from .backends import as_backend
from .clamp import DEFAULT_BOUNDS, clamp_sql, sum_clamp
from ._monomials import _dedupe_within, _grouped
from .krelation import KRelation
from . import _dictionaries as _dict
from .participants import MISSING, engine_ids, map_slot
from .slots import slot_sources

__all__ = ["compile_node", "capture", "Compiled", "capture_sql", "clamp_sql", "sum_clamp",
           "DEFAULT_BOUNDS", "DEFAULT_MAX_ROWS", "max_rows_of"]

#: derivation rows a capture may bring into Python by default (``max_capture_rows``): ca-HepPh's
#: 3.4 M node-private triangles peak at ~4.3 GB through the recursive mechanism's LPs, so this
#: leaves room on a 24 GB machine; a curator with more memory raises it
DEFAULT_MAX_ROWS = 10_000_000


def max_rows_of(con) -> int | None:
    """The capture limit of a provsql_dp connection (``con.max_capture_rows``; None: none)."""
    return getattr(con, "max_capture_rows", DEFAULT_MAX_ROWS)


@dataclass(frozen=True)
class Compiled:
    """SQL computing a plan node's derivations, and the layout of its hidden columns."""

    sql: str
    ids: tuple[str, ...]
    slots: tuple[Slot, ...]
    n_disc: int


def q(name: str) -> str:
    """Quote an identifier for DuckDB."""
    return '"' + name.replace('"', '""') + '"'


def _sql(e: exp.Expression) -> str:
    return e.sql(dialect="duckdb")


def _hidden(prefix: str, n: int, start: int = 0) -> list[str]:
    return [f"__{prefix}{i}" for i in range(start, start + n)]


def compile_node(node: Node, disc: bool = True) -> Compiled:
    """The derivation query of a plan node (see the module docstring for its columns).

    With ``disc=False`` no discriminator columns are produced: for a plan without ``DISTINCT``
    every derivation is its own tuple, so they would never be read."""
    if isinstance(node, Scan):
        return _compile_scan(node, disc)
    if isinstance(node, Filter):
        c = compile_node(node.child, disc)
        return Compiled(
            f"SELECT * FROM ({c.sql}) AS f WHERE {_sql(node.predicate)}", c.ids, c.slots, c.n_disc
        )
    if isinstance(node, Project):
        c = compile_node(node.child, disc)
        cols = [f"{_sql(e)} AS {q(i)}" for e, i in zip(node.exprs, node.ids)]
        cols += _hidden("s", len(c.slots)) + _hidden("d", c.n_disc)
        return Compiled(
            f"SELECT {', '.join(cols)} FROM ({c.sql}) AS p", node.ids, c.slots, c.n_disc
        )
    if isinstance(node, Join):
        left, right = compile_node(node.left, disc), compile_node(node.right, disc)
        cols = [f"l.{q(i)}" for i in left.ids] + [f"r.{q(i)}" for i in right.ids]
        cols += [f"l.{h}" for h in _hidden("s", len(left.slots))]
        cols += [
            f"r.__s{k} AS __s{k + len(left.slots)}" for k in range(len(right.slots))
        ]
        cols += [f"l.{h}" for h in _hidden("d", left.n_disc)]
        cols += [f"r.__d{k} AS __d{k + left.n_disc}" for k in range(right.n_disc)]
        if node.condition is None:
            on = "CROSS JOIN"
            cond = ""
        else:
            on = "JOIN"
            cond = f" ON {_sql(node.condition)}"
        sql = f"SELECT {', '.join(cols)} FROM ({left.sql}) AS l {on} ({right.sql}) AS r{cond}"
        return Compiled(sql, node.ids, left.slots + right.slots, left.n_disc + right.n_disc)
    if isinstance(node, (SemiJoin, AntiJoin)):
        return _compile_semijoin(node, disc)
    if isinstance(node, GroupFilter):
        return _compile_group_filter(node, disc)
    if isinstance(node, OneRow):
        return Compiled(f"SELECT 0 AS {'__d0' if disc else '__one'}", (), (), int(disc))
    if isinstance(node, Union):
        parts = [compile_node(c, disc) for c in node.inputs]
        slots = tuple(s for c in parts for s in c.slots)
        n_disc = 1 + sum(c.n_disc for c in parts) if disc else 0
        branches = []
        s_off = d_off = 0
        for tag, c in enumerate(parts):
            cols = [f"{q(a)} AS {q(b)}" for a, b in zip(c.ids, node.ids)]
            for k in range(len(slots)):
                inside = s_off <= k < s_off + len(c.slots)
                cols.append(f"{'__s' + str(k - s_off) if inside else 'NULL'} AS __s{k}")
            if disc:
                cols.append(f"{tag} AS __d0")
            for k in range(1, n_disc):
                inside = d_off <= k - 1 < d_off + c.n_disc
                cols.append(f"{'__d' + str(k - 1 - d_off) if inside else 'NULL'} AS __d{k}")
            branches.append(f"SELECT {', '.join(cols)} FROM ({c.sql}) AS u{tag}")
            s_off += len(c.slots)
            d_off += c.n_disc
        return Compiled(" UNION ALL ".join(branches), node.ids, slots, n_disc)
    if isinstance(node, Distinct):
        c = compile_node(node.child, disc)
        cols = [q(i) for i in c.ids] + _hidden("s", len(c.slots))
        inner = f"SELECT DISTINCT {', '.join(cols)} FROM ({c.sql}) AS dd"
        outer = [q(i) for i in c.ids] + _hidden("s", len(c.slots))
        outer += [f"{q(i)} AS __d{k}" for k, i in enumerate(c.ids)]
        return Compiled(f"SELECT {', '.join(outer)} FROM ({inner}) AS d", c.ids, c.slots, len(c.ids))
    if isinstance(node, Aggregate):
        raise InternalError("an aggregate can only be the root of a plan")
    raise InternalError(f"unknown plan node {type(node).__name__}")


def _protected(node: Node) -> bool:
    return any(isinstance(n, Scan) and n.slots for n in walk(node))


def _compile_semijoin(node: SemiJoin, disc: bool) -> Compiled:
    """``left ⋉ right``. Public right side: ``WHERE EXISTS`` (the left row keeps its annotation).
    Protected: one derivation row per (left row, match), with the left's discriminators only, so
    one tuple per left row: its annotation AND the OR of its matches' (:func:`capture_sql`)."""
    left = compile_node(node.left, disc)
    if isinstance(node, AntiJoin) or node.local or not _protected(node.right):
        # public or owner-local matches (sql.owner_fd): a filter on the whole database, the
        # left row's annotation kept
        right = compile_node(node.right, False)
        neg = "NOT " if isinstance(node, AntiJoin) else ""
        sql = (f"SELECT * FROM ({left.sql}) AS l WHERE {neg}EXISTS (SELECT 1 FROM ({right.sql}) "
               f"AS r WHERE {_sql(node.condition)})")
        return Compiled(sql, node.ids, left.slots, left.n_disc)
    right = compile_node(node.right, False)
    cols = [f"l.{q(i)}" for i in left.ids] + [f"l.{h}" for h in _hidden("s", len(left.slots))]
    cols += [f"r.__s{k} AS __s{k + len(left.slots)}" for k in range(len(right.slots))]
    cols += [f"l.{h}" for h in _hidden("d", left.n_disc)]
    sql = (f"SELECT {', '.join(cols)} FROM ({left.sql}) AS l JOIN ({right.sql}) AS r "
           f"ON {_sql(node.condition)}")
    return Compiled(sql, node.ids, left.slots + right.slots, left.n_disc)


def _compile_group_filter(node: GroupFilter, disc: bool) -> Compiled:
    """``GROUP BY keys HAVING …``: one derivation row (and tuple) per passing group, whose keys
    determine its slots (:mod:`provsql_dp.sql.grouped`): grouping by them too splits nothing."""
    c = compile_node(node.child, False)
    slots = _hidden("s", len(c.slots))
    keys = [_sql(k) for k in node.keys]
    cols = [f"{_sql(e)} AS {q(i)}" for e, i in zip(node.exprs, node.ids)] + slots
    if disc:
        cols += [f"{k} AS __d{j}" for j, k in enumerate(keys)]
    sql = (f"SELECT {', '.join(cols)} FROM ({c.sql}) AS g GROUP BY {', '.join(keys + slots)} "
           f"HAVING {_sql(node.having)}")
    return Compiled(sql, node.ids, c.slots, len(keys) if disc else 0)


def _compile_scan(node: Scan, disc: bool = True) -> Compiled:
    cols = [f"{q(c)} AS {q(i)}" for c, i in zip(node.columns, node.ids)]
    for k, slot in enumerate(node.slots):
        cols.append(f"{_slot_expr(slot)} AS __s{k}")
    if disc:
        cols.append(f"{node.rowid_sql} AS __d0")
    return Compiled(
        f"SELECT {', '.join(cols)} FROM {node.from_sql}", node.ids, node.slots, int(disc)
    )


def _slot_expr(slot: Slot) -> str:
    if slot.kind == "column":
        return q(slot.column)
    if slot.kind == "rowid":
        return "rowid"
    fields = ", ".join(f"c{j} := {q(c)}" for j, c in enumerate(slot.key_columns))
    return f"struct_pack({fields})"


def _has_distinct(node: Node) -> bool:
    """Whether derivation rows must be grouped into tuples: a DISTINCT, or a semi-join with a
    protected right side (several matches of one left row are one tuple)."""
    return any(isinstance(n, Distinct) or isinstance(n, SemiJoin) and not n.local
               and _protected(n.right) for n in walk(node))


def capture_sql(
    plan: Node,
    bounds: tuple[float, float] | None = None,
    *,
    key_views: dict[int, str] | None = None,
    partitioned: bool = False,
    keep: tuple[int, ...] | None = None,
) -> tuple[str, Compiled, bool, list]:
    """The top-level capture query, its layout, whether derivations need grouping, and where
    each slot is read from (see :func:`provsql_dp.provenance.slots.slot_sources`). A SUM's
    weights are clamped to ``bounds`` (default :data:`DEFAULT_BOUNDS`).

    Two options move work from the driver into a distributed engine (results are the same):

    * ``key_views`` — for slots read from their own column, the table (``__k0, …, __id``) of
      their domain's sorted dictionary: the slot comes back as its participant id ``__i{k}``
      (an INT: the dictionary position, -1 where the slot is NULL, ``MISSING`` for a key absent
      from the dictionary) instead of its key, computed by a join in the engine;
    * ``partitioned`` — a grouped capture numbers its tuples within hash partitions of their
      discriminators (``__h`` the hash, ``__r`` a dense rank inside it; rows ordered by both)
      instead of one global ``dense_rank`` window, which a distributed engine runs in a single
      partition, and the rows come back unordered. Equal tuples still get equal ``(__h, __r)``,
      distinct tuples distinct ones.

    ``keep``: the positions (in ``Compiled.ids``) of the output columns to select (and those a
    participant slot is read from); ``None``, all.
    The engine then prunes what no kept column needs from the join (a release reads none: on
    TPC-H Q7 at SF 1 the 49 output columns were 11 GB of Python strings in the driver)."""
    agg = plan if isinstance(plan, Aggregate) else None
    inner = agg.child if agg else plan
    grouped = _has_distinct(inner)
    c = compile_node(inner, disc=grouped)
    sources = slot_sources(inner)
    key_views = key_views or {}
    if keep is None:
        cols = [q(i) for i in c.ids]
    else:  # the kept columns and those a participant slot is read from (not as engine ids)
        read = {i for k, (kind, ref) in enumerate(sources) if kind == "value" and k not in key_views
                for i in ref}
        cols = [q(i) for n, i in enumerate(c.ids) if n in keep or i in read]
    joins = []
    if agg is not None and agg.weight is not None:
        lo, hi = bounds if bounds is not None else DEFAULT_BOUNDS
        cols.append(f"COALESCE({clamp_sql(_sql(agg.weight), lo, hi)}, 0.0) AS __w")
    for k, (kind, ref) in enumerate(sources):
        if kind == "drop" or (kind == "value" and k not in key_views):
            continue
        slot = c.slots[k]
        width = len(slot.key_columns) if slot.kind == "composite" else 1
        if k in key_views:  # the engine looks the key up in the dictionary
            if kind == "value":  # the output values that equal the key on every row
                keys = [f"top.{q(i)}" for i in ref]
                null = " OR ".join(f"{key} IS NULL" for key in keys)
            else:
                keys = [f"top.__s{k}.c{j}" for j in range(width)] if width > 1 else [f"top.__s{k}"]
                null = f"top.__s{k} IS NULL"
            on = " AND ".join(f"{key} = __pk{k}.__k{j}" for j, key in enumerate(keys))
            joins.append(f" LEFT JOIN {key_views[k]} AS __pk{k} ON {on}")
            cols.append(f"COALESCE(__pk{k}.__id, CASE WHEN {null} THEN -1 "
                        f"ELSE {MISSING} END) AS __i{k}")
        elif slot.kind == "composite":  # a struct of the key's columns: unpack it for numpy
            cols += [f"__s{k}.c{j} AS __s{k}_{j}" for j in range(width)]
        else:
            cols.append(f"__s{k}")
    source = f"({c.sql}) AS top{''.join(joins)}"
    if grouped and partitioned:
        h = f"hash({', '.join(f'top.__d{k}' for k in range(c.n_disc))})"
        order = ", ".join(f"top.__d{k} NULLS FIRST" for k in range(c.n_disc))
        cols.append(f"{h} AS __h")
        cols.append(f"dense_rank() OVER (PARTITION BY {h} ORDER BY {order}) AS __r")
        sql = f"SELECT {', '.join(cols)} FROM {source}"
    elif grouped:
        order = ", ".join(f"__d{k} NULLS FIRST" for k in range(c.n_disc))
        cols.append(f"dense_rank() OVER (ORDER BY {order}) - 1 AS __t")
        sql = f"SELECT {', '.join(cols)} FROM {source} ORDER BY __t"
    else:
        sql = f"SELECT {', '.join(cols)} FROM {source}"
    return sql, c, grouped, sources


def _fetch(be, sql: str) -> tuple[dict, list[str]]:
    """Run a query on the backend; its columns as numpy arrays, and its column types."""
    return be.fetchnumpy(sql)


# ---------------------------------------------------------------------- assembling the K-relation
def capture(con, plan: Node, bounds: tuple[float, float] | None = None, *,
            max_rows: int | None = None, columns: Sequence[str] | None = None) -> KRelation:
    """Run the capture query of ``plan`` on ``con`` (a DuckDB connection or a backend, see
    :mod:`provsql_dp.provenance.backends`) and return its K-relation (a SUM's weights clamped to
    ``bounds``, see :func:`capture_sql`).

    ``max_rows``: the engine stops one row past it (Spark: reading stops at the first Arrow
    batch past it, with no LIMIT in the query) and :class:`~provsql_dp.errors.CaptureTooLarge`
    is raised before anything larger reaches Python (measured: the cut-off costs nothing on
    ca-HepPh's 3.4 M triangles).

    ``columns``: the output columns the K-relation keeps (:attr:`KRelation.values`, in the
    plan's order, the first of repeated names); ``None``, every one. A release reads only its
    GROUP BY keys, and the columns it does not keep are never fetched nor joined by the engine:
    the same weights and annotations, a fraction of the memory."""
    con = as_backend(con)
    report("capturing provenance")
    names = _names(plan)
    keep = None if columns is None else _positions(names, columns)
    try:
        domains = _dict.dictionaries(con, plan, q, _slot_expr)
        plist, offsets = _dict.participant_list(domains)
        inner = plan.child if isinstance(plan, Aggregate) else plan
        views = _dict.key_views(con, compile_node(inner, disc=False).slots, slot_sources(inner),
                                domains)
        sql, compiled, grouped, sources = capture_sql(
            plan, bounds, key_views=views,
            partitioned=bool(getattr(con, "partitioned_ranks", False)), keep=keep)
        if max_rows is not None and getattr(con, "dialect", "") == "spark":
            data, types = con.fetchnumpy(sql, max_rows=max_rows)  # counted as the batches arrive
        else:
            run = sql if max_rows is None else (f"SELECT * FROM ({sql}) AS __capped "
                                                f"LIMIT {int(max_rows) + 1}")
            data, types = _fetch(con, run)
    finally:
        if hasattr(con, "drop_key_views"):
            con.drop_key_views()
    n = len(next(iter(data.values()))) if data else 0
    if max_rows is not None and n > max_rows:
        raise CaptureTooLarge(max_rows)
    report("captured provenance: rows", n)
    if "__w" in data:
        weights = np.asarray(np.ma.filled(data["__w"], 0.0), dtype=np.float64)
    else:
        weights = np.ones(n, dtype=np.float64)

    kept = [(k, src) for k, src in enumerate(sources) if src[0] != "drop"]
    P = np.empty((n, len(kept)), dtype=np.int64)
    for j, (k, (kind, ref)) in enumerate(kept):
        slot = compiled.slots[k]
        if f"__i{k}" in data:  # the engine assigned the ids
            P[:, j] = engine_ids(data[f"__i{k}"], offsets[slot.domain], slot.domain)
            continue
        if kind == "value":
            columns = [data[i] for i in ref]
        elif slot.kind == "composite":
            columns = [data[f"__s{k}_{c}"] for c in range(len(slot.key_columns))]
        else:
            columns = [data[f"__s{k}"]]
        P[:, j] = map_slot(columns, domains[slot.domain], offsets[slot.domain])
    _dedupe_within(P)

    kept_ids = compiled.ids if keep is None else [compiled.ids[i] for i in keep]
    type_of = dict(zip(data, types))
    values = [_column(data[i], type_of[i]) for i in kept_ids]
    names = names if keep is None else tuple(names[i] for i in keep)
    if not grouped:
        valid = P >= 0
        if valid.all():  # every derivation has all its slots: a fixed-width layout
            mono_ptr = np.arange(n + 1, dtype=np.int64) * P.shape[1]
            mono_part = P.reshape(-1)
        else:
            sizes = valid.sum(axis=1)
            mono_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
            mono_part = P[valid]
        kr = KRelation(
            columns=names,
            values=tuple(values),
            weights=weights,
            tuple_ptr=np.arange(n + 1, dtype=np.int64),
            mono_ptr=mono_ptr,
            mono_part=mono_part,
            participant_list=plist,
            sql=sql,
        )
        return kr
    return _grouped(names, values, weights, P, _tuple_ids(data, n), plist, sql)


def _positions(names: tuple[str, ...], columns: Sequence[str]) -> tuple[int, ...]:
    """The positions of ``columns`` among the output ``names`` (the first of repeated ones)."""
    missing = [c for c in columns if c not in names]
    if missing:
        raise ValueError(f"capture: no output column {missing[0]!r} (the query's: "
                         f"{', '.join(names)})")
    return tuple(sorted({names.index(c) for c in columns}))


def _tuple_ids(data: dict, n: int) -> np.ndarray:
    """Dense tuple ids of a grouped capture's rows: the engine's global rank ``__t`` (rows
    arrive sorted by it), or — for a partitioned capture, whose rows arrive in any order — the
    rank of ``(__h, __r)`` among the distinct pairs (one numpy sort on the driver, which
    :func:`_grouped` does anyway; a global ORDER BY in the engine would run the whole capture
    twice, once to sample its range partitions)."""
    if "__t" in data:
        return np.asarray(data["__t"], dtype=np.int64)
    h = np.asarray(data["__h"]).astype(np.int64)  # a 32-bit hash
    r = np.asarray(data["__r"]).astype(np.int64)  # a rank below 2^31
    _, tid = np.unique((h << 32) | r, return_inverse=True)
    return tid.reshape(-1).astype(np.int64)


def _names(plan: Node) -> tuple[str, ...]:
    return tuple(plan.child.names if isinstance(plan, Aggregate) else plan.names)


def _column(arr, duck_type) -> np.ndarray:
    """A result column kept as a numpy array (masked where NULL); DATE becomes datetime64[D] so
    that ``tolist()`` yields ``datetime.date`` like DuckDB's own rows. Conversion to Python
    objects happens lazily in :attr:`KRelation.rows`."""
    if str(duck_type) == "DATE":
        if isinstance(arr, np.ma.MaskedArray):
            return np.ma.MaskedArray(arr.data.astype("datetime64[D]"), mask=arr.mask)
        return np.asarray(arr).astype("datetime64[D]")
    return arr
