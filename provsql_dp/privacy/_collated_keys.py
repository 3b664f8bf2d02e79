"""A private ``GROUP BY`` never groups by a string compared under a collation.

DuckDB groups ``GROUP BY s`` with ``s VARCHAR COLLATE NOCASE`` (or any string column under a
session ``default_collation``, or a key ``s COLLATE NOCASE``) as ``=`` compares: ``'A'`` and
``'a'`` fall in one group, and the group's key is *one of its rows' values* — the first DuckDB
meets. A release matches its groups by value against a public list (declared keys, a public
table's values), so the whole group went to ``'A'`` or to ``'a'`` as one row decided: with keys
``('A', 'a')`` declared on a protected ``NOCASE`` column, removing the first row moved 50 rows
from one released group to the other, and a public ``depts(dname COLLATE NOCASE)`` holding
``'E'`` and ``'e'`` released ``E`` as 40 or 0 (red team h75cache, finding 2). Partition
selection would release the spelling itself. The collation carries through string functions
(``trim(s)``, ``s || ''``, even ``CAST(s AS VARCHAR)``), so every key that reads such a column is
refused, before the charge — except a bare column of a public table none of whose values are
equal under the collation without being the same string (each group then has one spelling,
whatever rows join it: the public table is read to tell, as its values are for the groups).
A key the plan does not trace to its columns (under a union) is refused when any column of the
plan is collated.

>>> from sqlglot import exp
>>> from provsql_dp.sql.plan import Aggregate, Project, Scan
>>> scan = Scan("t", "main", ("id", "s"), ("v0", "v1"), ("id", "s"), collated=("s",))
>>> plan = Aggregate(Project(scan, (exp.column("v1"),), ("v2",), ("s",)), "count", None, ("v2",))
>>> collated_key(plan)
'v2'
>>> collated_key(plan, one_spelling=lambda scan, column: True) is None  # a public t
True
>>> refuse_collated_keys(plan, ["s"])
Traceback (most recent call last):
...
provsql_dp.errors.UnsupportedQueryError: GROUP BY s is not supported in a private query: ...
>>> collated_key(Aggregate(Project(scan, (exp.column("v0"),), ("v2",), ("id",)), "count",
...                        None, ("v2",))) is None
True
"""

from __future__ import annotations

from sqlglot import exp

from ..errors import UnsupportedQueryError
from ..provenance.backends import engine_of
from ..provenance.capture import q
from ..sql.key_domain import _definition
from ..sql.plan import Scan, walk

__all__ = ["collated_key", "one_spelling_reader", "refuse_collated_keys"]


def collated_key(plan, one_spelling=None) -> str | None:
    """The first GROUP BY key id of ``plan`` (an Aggregate) that reads a collated string, or
    None. ``one_spelling(scan, column)``: whether a public scan's collated column holds no two
    spellings of one value (a bare key column of it then passes); None: never."""
    cols = {i: (n, c) for n in walk(plan.child) if isinstance(n, Scan)
            for c, i in zip(n.columns, n.ids) if c in n.collated}
    for key in plan.group_by:
        definition = _definition(plan.child, key)
        if definition is None:
            if cols:
                return key
            continue
        if isinstance(definition, exp.Column) and definition.name in cols:
            scan, column = cols[definition.name]
            if not scan.slots and one_spelling is not None and one_spelling(scan, column):
                continue
            return key
        if any(c.name in cols for c in definition.find_all(exp.Column)):
            return key
        if any(c.expression.name.lower() != "binary" for c in definition.find_all(exp.Collate)):
            return key
    return None


def one_spelling_reader(con):
    """``one_spelling`` for :func:`collated_key` reading the public table on ``con``'s engine:
    as many distinct values under the collation as distinct strings (``md5``: by the bytes)."""
    def one_spelling(scan: Scan, column: str) -> bool:
        c = q(column)
        rows = engine_of(con).fetchall(
            f"SELECT count(DISTINCT {c}) = count(DISTINCT md5({c})) FROM {scan.from_sql}")
        return bool(rows and rows[0][0])
    return one_spelling


def refuse_collated_keys(plan, names, one_spelling=None) -> None:
    """Refuse (:class:`~provsql_dp.errors.UnsupportedQueryError`, nothing charged) a ``plan``
    whose GROUP BY reads a collated string; ``names``: the keys' names, in GROUP BY order."""
    key = collated_key(plan, one_spelling)
    if key is None:
        return
    name = dict(zip(plan.group_by, names)).get(key, key)
    raise UnsupportedQueryError(
        f"GROUP BY {name} is not supported in a private query: it reads a string compared under "
        "a collation (a COLLATE in the column's definition or the key, or the session's "
        "default_collation), and DuckDB puts strings that differ ('A', 'a') in one group under "
        "the value of whichever of its rows comes first, so which released group receives them "
        "would depend on the data. Group by a column without a collation (a curator can add one "
        "and declare its keys), or RESET default_collation. Nothing was charged")
