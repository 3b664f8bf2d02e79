"""Per-participant totals added up by ``numpy.bincount`` when the owner keys are dense integers:
the single-owner recursive mechanism's input for ``people ⋈ visits`` without a per-owner
``GROUP BY`` in DuckDB.

The single-owner closed forms (:mod:`provsql_dp.mechanisms.recursive.single_owner`) need each
participant's total. :func:`provsql_dp.provenance.owner_totals.owner_totals_sql` has DuckDB
compute them with ``GROUP BY`` owner; on 10^7 visit rows of 10^6 people that aggregate costs
about 2.5× the plain join (DuckDB's perfect hash aggregate updates an 8-byte state per row in a
table of 10^6 entries), and the closed forms only read the totals back. When the owner key is an
integer column whose values span a range not much larger than the rows, counting by key is a
``bincount`` over an array indexed by ``key − min``: DuckDB streams the join column (Arrow,
no per-row Python) and numpy adds up, about 1.5× faster end to end.

The totals are exactly those of the SQL path: the rows are the other side's rows with their
filters, the owners the owner side's keys with theirs (one row per participant, the declared
key; a participant without rows has total 0, which the closed forms ignore as the SQL path's
inner join does). Which path runs depends on the plan and on the span of the keys read — never
on anything the analyst sees: both give the same totals, only the running time differs.

>>> import duckdb, numpy as np
>>> from provsql_dp.sql.plan import Scan, Slot, Join
>>> from sqlglot import exp
>>> d = duckdb.connect()
>>> _ = d.execute("CREATE TABLE people(id INTEGER PRIMARY KEY); INSERT INTO people VALUES (1), (2), (3)")
>>> _ = d.execute("CREATE TABLE visits(pid INTEGER); INSERT INTO visits VALUES (1), (1), (3), (7), (NULL)")
>>> people = Scan("people", "main", ("id",), ("v0",), ("id",), (Slot("people", "column", "id"),),
...               types=("INTEGER",), unique_keys=(("id",),))
>>> visits = Scan("visits", "main", ("pid",), ("v1",), ("pid",), (Slot("people", "column", "pid"),),
...               types=("INTEGER",))
>>> j = Join(people, visits, exp.EQ(this=exp.column("v0"), expression=exp.column("v1")))
>>> g, (c,), m = dense_owner_totals(d, j, [None], set(), histogram=True)
>>> c.tolist(), m.tolist()   # person 3: one visit, person 1: two (person 2: none; pid 7: no one)
([1.0, 2.0], [1.0, 1.0])
"""

from __future__ import annotations

import numpy as np

from ..provenance.owner_totals import owner_rows_sql
from ..sql.plan import Node

__all__ = ["dense_owner_totals", "MAX_SPAN"]

#: the largest span (max − min + 1) of the owner keys counted in an array, over the number of
#: rows read (plus 2^20): beyond it the keys are sparse and DuckDB's GROUP BY runs instead
MAX_SPAN = 4


def dense_owner_totals(duck, node: Node, values: list[str | None], weight_ids: set[str],
                       histogram: bool):
    """``(g, [totals per value], multiplicities or None)`` as the SQL path of
    :func:`provsql_dp.privacy.fast_path.release_single_owner` returns them for one group
    (``g`` all 0), or None when the plan is not the pushed-down join on an integer key or the keys
    read are sparse. ``values`` are the per-row SQL values (None: a count's 1). Private."""
    shape = owner_rows_sql(node, values, weight_ids)
    if shape is None or not _has_arrow():
        return None
    rows_sql, owners_sql = shape
    rows = _arrow(duck, rows_sql)
    n = rows.num_rows
    lo, span = _key_range(rows.column(0)) if n else (0, 0)
    if span > MAX_SPAN * n + (1 << 20):
        return None
    sums = _bincounts(rows, values, lo, span)  # int64 counts, float64 weighted sums
    owners = _arrow(duck, owners_sql).column(0).to_numpy()
    owners = owners[(owners >= lo) & (owners <= lo + span - 1)] if n else owners[:0]
    if owners.dtype == np.uint64:
        at = (owners - np.uint64(lo)).astype(np.int64)
    else:  # in 64 bits: a TINYINT key minus a negative minimum overflows 8 bits
        at = owners.astype(np.int64) - lo
    totals = [s[at] for s in sums]
    if histogram:  # whole numbers: (total, how many owners), positive totals only
        hist = np.bincount(totals[0].astype(np.int64, copy=False))
        t = np.flatnonzero(hist)
        t = t[t > 0]
        return np.zeros(len(t), np.int64), [t.astype(np.float64)], hist[t].astype(np.float64)
    return (np.zeros(len(totals[0]), np.int64),
            [t.astype(np.float64, copy=False) for t in totals], None)


def _key_range(keys) -> tuple[int, int]:
    """``(min, max − min + 1)`` of a non-empty Arrow column of integer keys, in one pass over
    the Arrow chunks (half the time of numpy's min and max over the concatenated keys)."""
    import pyarrow.compute as pc

    mm = pc.min_max(keys).as_py()
    return int(mm["min"]), int(mm["max"]) - int(mm["min"]) + 1


def _bincounts(part, values, lo: int, span: int) -> list:
    """For the rows of the Arrow table ``part``: per value of ``values``, the sum per key
    ``key − lo`` (an array of ``span``; None: the number of rows). Measured: on two shared cores
    a ``bincount`` per half of the keys in two threads was no faster than one."""
    keys = part.column(0).to_numpy()  # BIGINT (UBIGINT): a copy only when in several chunks
    if keys.dtype == np.uint64:
        keys = (keys - np.uint64(lo)).astype(np.int64)
    elif lo or keys.dtype != np.int64:  # in 64 bits: keys − lo < span fits
        keys = np.subtract(keys, lo, dtype=np.int64)
    return [np.bincount(keys, weights=None if v is None else part.column(f"c{j}").to_numpy(),
                        minlength=span) for j, v in enumerate(values)]


def _has_arrow() -> bool:
    """pyarrow streams DuckDB's columns to numpy without a copy per value (an optional
    dependency: without it DuckDB's GROUP BY runs)."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


def _arrow(duck, sql: str):
    # DuckDB ≥ 2 refuses a relation while an execute() result is unread (a fetchone() leaves
    # one): finish with a result read to its end first (~0.2 ms)
    duck.execute("SELECT 1").fetchall()
    rel = duck.sql(sql)
    to_arrow = getattr(rel, "to_arrow_table", None) or rel.arrow
    return to_arrow()
