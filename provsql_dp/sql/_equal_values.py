"""When SQL's ``=`` proves that two values are the same value (schema and statement, never data).

The single-owner analysis rests on equalities: ``people JOIN depts ON p.dept = d.dept_id`` with
``dept_id`` a declared key of the public ``depts`` puts each person on at most one department
row, so a person owns one tuple (:mod:`provsql_dp.provenance.owners`), and the department is a
function of the person (:mod:`.owner_fd`). That holds only when ``=`` is identity on the key's
values. It is not:

* under a collation: ``'eng' = 'ENG'`` under ``NOCASE``, while a binary ``PRIMARY KEY`` holds
  both (``Scan.collated``: a ``COLLATE`` in the DDL, or a session ``default_collation``);
* between type families DuckDB converts: a DOUBLE equals the BIGINT keys ``2**53`` and
  ``2**53 + 1`` (both convert to the same double), and a BIGINT key compared with a DOUBLE
  constant ``9007199254740992e0`` matches both rows too.

:func:`same_value` decides a ``column = column`` (rule 1 of :mod:`.owner_fd`), :func:`fixed_by`
a ``column = constant`` (rule 2), :func:`pinned_by` a ``key = expression`` of the other side of a
join; all from the scans' declared types and collations. Unknown types count as not equal.

>>> from provsql_dp.sql.plan import Scan
>>> p = Scan("people", "main", ("id", "dept", "x"), ("v0", "v1", "v2"), ("id", "dept", "x"),
...          types=("INTEGER", "VARCHAR", "DOUBLE"), collated=("dept",))
>>> d = Scan("depts", "main", ("k", "name", "n"), ("v3", "v4", "v5"), ("k", "name", "n"),
...          types=("BIGINT", "VARCHAR", "BIGINT"))
>>> types, collated = column_facts([p, d])
>>> same_value(types, collated, "v0", "v5"), same_value(types, collated, "v2", "v5")
(True, False)
>>> same_value(types, collated, "v1", "v4")          # a collated column
False
>>> import sqlglot
>>> [fixed_by(types, collated, "v3", sqlglot.parse_one(c, read="duckdb"))
...  for c in ("7", "'7'", "CAST(7 AS INT)", "9007199254740992e0")]
[True, True, True, False]
>>> pinned_by(types, collated, "v3", sqlglot.parse_one("v0 + 1"), {"v0": "v0"})
True
"""

from __future__ import annotations

import re

from sqlglot import exp

__all__ = ["family", "column_facts", "same_value", "fixed_by", "pinned_by"]

_INTS = {"TINYINT", "SMALLINT", "INTEGER", "INT", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
         "UINTEGER", "UBIGINT", "UHUGEINT"}
_DIGITS = re.compile(r"^\d+$")


def family(t: str | None) -> str | None:
    """Types whose equal values are the same value: every integer type; every spelling of a
    string (``VARCHAR(n)``, ``TEXT``, ``STRING``); else the type itself (DOUBLE = BIGINT may
    equate two distinct integers; unknown types are never equated). Also the rule of the
    catalog's shared participant domains (keys of one family).

    >>> family("UBIGINT"), family("text"), family("DOUBLE"), family(None)
    ('integer', 'VARCHAR', 'DOUBLE', None)
    """
    if not t:
        return None
    t = str(t).upper()
    if t in _INTS:
        return "integer"
    return "VARCHAR" if t.startswith("VARCHAR") or t in ("TEXT", "STRING") else t


def column_facts(scans) -> tuple[dict, set]:
    """``(types, collated)``: each scan column id's declared type, and the ids of collated ones."""
    scans = list(scans)
    types = {i: t for s in scans for i, t in zip(s.ids, s.types or ())}
    collated = {i for s in scans for c, i in zip(s.columns, s.ids) if c in s.collated}
    return types, collated


def same_value(types: dict, collated: set, x: str, y: str) -> bool:
    """Whether ``x = y`` (scan column ids) holds only between the same value."""
    if x in collated or y in collated:
        return False
    fx = family(types.get(x))
    return fx is not None and fx == family(types.get(y))


def _constant(e: exp.Expression) -> bool:
    while isinstance(e, (exp.Paren, exp.Cast, exp.TryCast, exp.Neg)):
        e = e.this
    return isinstance(e, exp.Literal)


def fixed_by(types: dict, collated: set, x: str, const: exp.Expression) -> bool:
    """Whether ``x = const`` fixes ``x``'s value on every row that passes it: ``const`` is a
    constant (literals, casts, negation) whose type is ``x``'s family — or a bare string
    literal, which DuckDB converts to ``x``'s type before comparing."""
    if x in collated or not _constant(const):
        return False
    fx = family(types.get(x))
    if fx is None:
        return False
    e = const.unnest() if isinstance(const, exp.Paren) else const
    if isinstance(e, exp.Literal) and e.is_string:
        return True
    bare = e.this if isinstance(e, exp.Neg) else e
    if fx == "integer" and isinstance(bare, exp.Literal) and _DIGITS.match(bare.this or ""):
        return True
    return _family_of(e, {}) == fx


def pinned_by(types: dict, collated: set, x: str, other: exp.Expression, base: dict) -> bool:
    """Whether ``x = other`` holds only where ``other``'s value is ``x``'s very value: ``other``
    a constant (:func:`fixed_by`), or an expression over output ids that ``base`` maps to scan
    column ids, none collated, of ``x``'s type family."""
    if x in collated:
        return False
    cols = list(other.find_all(exp.Column))
    if not cols:
        return fixed_by(types, collated, x, other)
    ids = [base.get(c.name) for c in cols]
    if any(i is None or i in collated or i not in types for i in ids):
        return False
    if any(isinstance(n, exp.Collate) for n in other.walk()):
        return False
    if isinstance(other, exp.Column):
        return same_value(types, collated, x, ids[0])
    fx = family(types.get(x))
    return fx is not None and _family_of(other, {c.name: types[i] for c, i in zip(cols, ids)}) == fx


def _family_of(e: exp.Expression, coltypes: dict) -> str | None:
    from ._typing import expression_types  # the private binder (no data)
    try:
        return family(expression_types([e], coltypes)[0])
    except Exception:  # noqa: BLE001 - an expression the binder cannot type: not equal
        return None
