"""The DuckDB types of a private answer's ``GROUP BY`` keys: one place for every route.

A route releases each group's key as the public value it is (a declared key, a public table's
value, a value the statement proves, a group partition selection released) and describes it as
``VARCHAR``: the routes do not type their keys. :func:`typed_keys` types them once, after the
route (:func:`provsql_dp.privacy.routing._served`, which every route answering a ``GROUP BY``
of a plan passes through), as DuckDB types the same ``GROUP BY`` over the tables — so
``cursor.description``, the wire server's type OIDs and the Arrow/pandas types of the answer
agree with the values: an ``INTEGER`` key is described ``INTEGER``, a ``DATE`` key ``DATE``,
``ROUND(x, -1)`` over a DOUBLE ``DOUBLE``, ``date_trunc('month', d)`` ``TIMESTAMP``. The type
comes from the plan (:func:`plan_types`: the scans' column types, each projection typed by
binding it on an empty DuckDB); post-processing types its ``released`` table the same way
(:mod:`.post_sql`), and the routes that build no plan (quantiles, variances) type their key
over the one table they read (:func:`one_table_key_types`).

Where the plan cannot type a key (an expression the binder does not know), or its type does
not fit the values released (another engine's values; the policy route's bins, labelled by
their lower edges), the key keeps the type its route gave it if that fits, else is described
by the values' own Python type (:func:`value_type`: ``int`` → ``BIGINT``, ``date`` → ``DATE``,
…), else as the route gave it: the values are never changed, and what is described is what is
returned.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE t(id INT PRIMARY KEY, g INT, d DATE)")
>>> _ = con.execute("INSERT INTO t SELECT i, i % 3, DATE '2020-01-01' + (i % 2)::INT "
...                 "FROM range(90) r(i)")
>>> _ = con.execute("PROTECT TABLE t; SET PRIVACY BUDGET 5")
>>> _ = con.execute("SET GROUP KEYS ON t (g) VALUES (0, 1, 2)")
>>> _ = con.execute("SET GROUP KEYS ON t (d) VALUES ('2020-01-01', '2020-01-02')")
>>> cur = con.execute("SELECT g, d, COUNT(*) FROM t GROUP BY g, d WITH EPSILON 1")
>>> [str(c[1]) for c in cur.description], [type(v).__name__ for v in cur.fetchone()]
(['INTEGER', 'DATE', 'BIGINT'], ['int', 'date', 'int'])
>>> value_type([3, None, 4]), value_type([1.5]), value_type(["a", 1]), value_type([])
('BIGINT', 'DOUBLE', None, None)
"""

from __future__ import annotations

import datetime
import decimal
import uuid
from functools import lru_cache

from sqlglot import exp

from ..sql._typing import _parse_type, expression_types
from ..sql.plan import Aggregate, Aggregates, Distinct, Filter, Join, Project, Scan, Union

__all__ = ["plan_types", "plan_key_types", "one_table_key_types", "typed_keys", "fits",
           "value_type"]


def plan_types(node) -> dict:
    """The DuckDB type of every id of a plan (scans' declared types, projections typed)."""
    if isinstance(node, Scan):
        return dict(zip(node.ids, node.types)) if node.types else {}
    if isinstance(node, (Filter, Distinct)):
        return plan_types(node.child)
    if isinstance(node, Join):
        return {**plan_types(node.left), **plan_types(node.right)}
    if isinstance(node, Project):  # a column passed through keeps its type; the rest is bound
        inner = plan_types(node.child)
        out = dict(inner)
        bound = []
        for i, e in zip(node.ids, node.exprs):
            if isinstance(e, exp.Column) and not e.table and e.name in inner:
                out[i] = inner[e.name]
            else:
                bound.append((i, e))
        if bound:
            exprs = tuple(e for _, e in bound)
            used = {c.name for e in exprs for c in e.find_all(exp.Column)}
            typed = _bound_types(exprs, tuple(sorted((c, inner.get(c)) for c in used)))
            out.update((i, t) for (i, _), t in zip(bound, typed) if t is not None)
        return out
    if isinstance(node, Union):
        return dict(zip(node.ids, plan_types(node.inputs[0]).values()))
    out = {}
    for c in getattr(node, "children", ()):
        out.update(plan_types(c))
    return out


@lru_cache(maxsize=512)
def _bound_types(exprs: tuple, inputs: tuple) -> tuple:
    """The types of computed expressions over columns of the types ``inputs`` (kept: a release's
    statement is typed once, not at each release), Nones where they cannot be typed."""
    try:
        return expression_types(exprs, {c: t for c, t in inputs if t is not None})
    except Exception:  # noqa: BLE001 - an untyped column: the value decides (typed_keys)
        return (None,) * len(exprs)


def plan_key_types(plan) -> list:
    """The DuckDB type of each ``GROUP BY`` key of ``plan`` (an Aggregate, or the first part of
    an Aggregates: they share their keys), None where the plan cannot type it; [] without
    ``GROUP BY``."""
    first = plan.parts[0] if isinstance(plan, Aggregates) else plan
    if not isinstance(first, Aggregate) or not first.group_by:
        return []
    known = plan_types(first.child)
    return [known.get(k) for k in first.group_by]


def one_table_key_types(con, query) -> dict:
    """The released keys' types ``__k{i}`` of a statement planned by no plan (the quantile and
    variance routes read one table): each GROUP BY key typed over the columns of the one table
    of its FROM; a key that cannot be typed so is left out (VARCHAR, as before)."""
    src = query.args.get("from_") or query.args.get("from")
    table = src.this if src is not None else None
    group = query.args.get("group")
    if not isinstance(table, exp.Table) or query.args.get("joins") or group is None:
        return {}
    info = con._catalog.find_table([table.catalog, table.db, table.name])
    if info is None:
        return {}
    columns = {c.lower(): t for c, t in zip(info.columns, info.types)}
    out = {}
    for i, key in enumerate(group.expressions):
        bare = key.transform(lambda n: exp.column(n.name.lower()) if isinstance(n, exp.Column)
                             else n)
        try:
            out[f"__k{i}"] = expression_types([bare], columns)[0]
        except Exception:  # noqa: BLE001 - an alias, a function it cannot type: VARCHAR
            continue
    return out


def typed_keys(plan, desc: list, rows: list) -> list:
    """``desc`` (``(name, type)`` pairs, the keys first in ``GROUP BY`` order) with each key
    described by the first of its plan's type, the type the route gave it and its values' own
    type (:func:`value_type`) that fits the values released (:func:`fits`; no row: the plan's),
    else as the route described it. Only the description changes, never a value."""
    out = list(desc)
    for i, planned in enumerate(plan_key_types(plan)[:len(out)]):
        values = [r[i] for r in rows]
        given = out[i][1]
        # lazily: the values' own type is read only when neither described type fits
        t = next((t for t in (planned, given) if t and fits(values, t)), None)
        if t is None:
            own = value_type(values)
            t = own if own and fits(values, own) else given
        out[i] = (out[i][0], t)
    return out


#: the Python types DuckDB returns for each family of types (sql._typing's families); a
#: family not listed is not checked
_PYTHON = {"int": int, "float": float, "decimal": decimal.Decimal, "bool": bool, "string": str,
           "enum": str, "date": datetime.date, "timestamp": datetime.datetime,
           "timestamptz": datetime.datetime, "interval": datetime.timedelta}


def fits(values: list, type_name: str) -> bool:
    """Whether every non-NULL value is of the Python type DuckDB returns for ``type_name``.
    Judged by the set of the values' Python types (a pass in C; only ``datetime`` values are
    read one by one, for their time zone).

    >>> fits([1, None, 2], "INTEGER"), fits([1, True], "BIGINT"), fits([True], "BOOLEAN")
    (True, False, True)
    >>> import datetime as dt; fits([dt.datetime(2020, 1, 1)], "DATE")
    False
    """
    family = _parse_type(type_name).family
    want = _PYTHON.get(family)
    if want is None:
        return True
    for kind in set(map(type, values)) - {type(None)}:
        if not issubclass(kind, want) or issubclass(kind, bool) != (family == "bool") or \
                family == "date" and issubclass(kind, datetime.datetime):
            return False
        if family.startswith("timestamp") and any(
                (v.tzinfo is None) != (family == "timestamp") for v in values
                if type(v) is kind):
            return False
    return True


#: a Python value's DuckDB type (the first match: ``bool`` before ``int``, ``datetime`` before
#: ``date``)
_DUCK = ((bool, "BOOLEAN"), (int, "BIGINT"), (float, "DOUBLE"), (str, "VARCHAR"),
         (datetime.datetime, "TIMESTAMP"), (datetime.date, "DATE"), (datetime.time, "TIME"),
         (datetime.timedelta, "INTERVAL"), (bytes, "BLOB"), (uuid.UUID, "UUID"))


def value_type(values: list) -> str | None:
    """The DuckDB type of released values of one Python type (``int`` → ``BIGINT``, ``date`` →
    ``DATE``, an aware ``datetime`` → ``TIMESTAMP WITH TIME ZONE``), None when they have none
    (no value, or several types, or a type without one here). Judged by the set of the values'
    Python types; only ints (their range) and datetimes (their zone) are read one by one."""
    kinds = set()
    for kind in set(map(type, values)) - {type(None)}:
        name = next((n for t, n in _DUCK if issubclass(kind, t)), None)
        of_kind = None
        if name in ("TIMESTAMP", "BIGINT"):
            of_kind = [v for v in values if type(v) is kind]
        if name == "TIMESTAMP":
            kinds.update("TIMESTAMP" if v.tzinfo is None else "TIMESTAMP WITH TIME ZONE"
                         for v in of_kind)
            continue
        if name == "BIGINT" and not (-(1 << 63) <= min(of_kind) and max(of_kind) < (1 << 63)):
            name = "HUGEINT"
        kinds.add(name)
    if len(kinds) != 1 or None in kinds:
        return None
    return kinds.pop()
