"""Each participant's total contribution, as one DuckDB query: the input of the single-owner
closed forms (:mod:`provsql_dp.mechanisms.recursive.single_owner`).

For a single-owner plan (:func:`provsql_dp.provenance.owners.owners`) the query groups the plan's
tuples by the group keys and the owner and aggregates their weights. The general form compiles the
whole plan and aggregates its output. One shape is common enough to deserve a cheaper one — a
protected table with one row per participant joined on its key to the rows that participant owns
(``people JOIN visits ON people.id = visits.pid``):

* the join condition equates the owner side's declared key (its participant column) with bare
  columns of the other side, of the same type, and nothing else;
* the weight and every group key not of the owner side read only the other side.

Then every row of the other side matches at most one owner row, the one whose key equals its
join columns, so the owner of a joined tuple *is* the value of those columns; grouping the other
side by them first and joining the (far fewer) totals to the owner side gives the same totals per
(keys, owner) — the aggregate is pushed below the join. A row of the other side that matches no
owner row (NULL or absent key, filtered owner) is dropped by the join either way. Equal types on
both sides of the key equality make "equal under the join" the same as "same group" (no implicit
cast merges two distinct values into one owner, which would split an owner's total).

Everything here reads the plan only, never the data: the shape chosen, like the mechanism, is
public.

>>> from provsql_dp.sql.plan import Scan, Slot, Join
>>> from sqlglot import exp
>>> people = Scan("people", "main", ("id", "city"), ("v0", "v1"), ("id", "city"),
...               (Slot("people", "column", "id"),), types=("INTEGER", "VARCHAR"),
...               unique_keys=(("id",),))
>>> visits = Scan("visits", "main", ("pid", "day"), ("v2", "v3"), ("pid", "day"),
...               (Slot("people", "column", "pid"),), types=("INTEGER", "INTEGER"))
>>> j = Join(people, visits, exp.EQ(this=exp.column("v0"), expression=exp.column("v2")))
>>> sql = owner_totals_sql(j, 0, ["v1"], ["count(*)"], set())
>>> "GROUP BY o.\\"v2\\"" in sql and sql.index("GROUP BY") < sql.index("JOIN")
True
"""

from __future__ import annotations

from typing import NamedTuple

from sqlglot import exp

from ..sql.plan import Filter, Join, Node, Project, Scan, walk
from .capture import compile_node, q
from .slots import analyse, slot_sources
from ..sql._conjuncts import conjuncts

__all__ = ["owner_totals_sql", "owner_rows_sql", "INTEGER_KEYS"]

#: owner key types whose values index an array (:func:`owner_rows_sql`)
INTEGER_KEYS = frozenset({"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT",
                          "UINTEGER", "UBIGINT"})


def owner_totals_sql(node: Node, slot: int, keys: list[str], parts: list[str],
                     weight_ids: set[str], with_owner: bool = False) -> str:
    """``SELECT keys…, c0, c1, … FROM … GROUP BY keys…, owner``: per (group keys, owner), each
    aggregate of ``parts`` (SQL over the plan's column ids, e.g. ``count(*)``, ``sum(…)``) as a
    DOUBLE, 0 when empty. ``slot`` is the kept participant slot, ``weight_ids`` the ids the
    weight reads; ``with_owner`` adds the owner as one column ``__o``."""
    cols = ", ".join(f"coalesce({p}, 0)::DOUBLE AS c{j}" for j, p in enumerate(parts))
    pushed = _pushed_down(node, keys, cols, weight_ids, with_owner)
    if pushed is not None:
        return pushed
    compiled = compile_node(node, disc=False)
    kind, ref = slot_sources(node)[slot]
    owner = [q(i) for i in ref] if kind == "value" else [f"__s{slot}"]
    qk = [q(k) for k in keys]
    packed = owner[0] if len(owner) == 1 else (
        "struct_pack(" + ", ".join(f"o{j} := {o}" for j, o in enumerate(owner)) + ")")
    shown = [f"{packed} AS __o"] if with_owner else []
    return (f"SELECT {', '.join(qk + shown + [cols])} FROM ({compiled.sql}) AS t "
            f"GROUP BY {', '.join(qk + owner)}")


class _OwnerSide(NamedTuple):
    """The shape pushed below the join (:func:`_owner_side`)."""

    rename: dict  # {outer id: expression over the join's ids}
    preds: list  # filter conjuncts over the join's ids, each over one side
    owner_side: Node  # the side with one row per participant
    other: Node  # the side whose rows the participants own
    pins: list  # [(owner-side key id, other-side id)]: the join condition


def _owner_side(node: Node, keys: list[str], weight_ids: set[str]) -> _OwnerSide | None:
    """The join under ``node`` seen from its owner side, when the aggregate can be pushed below
    it: an inner join whose condition equates the owner side's declared key with a bare column
    of the other side (:func:`_owner_key_pins`), the weight reading the other side only, every
    group key one side's, every filter conjunct one side's; else None. The sides are tried in
    order; the first that fits is the one."""
    shape = _join_shape(node)
    if shape is None:
        return None
    join, rename, preds = shape
    if any(i not in rename for i in list(keys) + sorted(weight_ids)):
        return None
    for owner_side, other in ((join.left, join.right), (join.right, join.left)):
        pins = _owner_key_pins(owner_side, other, join.condition)
        if pins is None:
            continue
        other_ids, own_ids = set(other.ids), set(owner_side.ids)
        if not all(_columns(rename[i]) <= other_ids for i in weight_ids):
            continue
        if not all(_columns(rename[k]) <= other_ids or _columns(rename[k]) <= own_ids for k in keys):
            continue
        if any(not (_columns(p) <= own_ids or _columns(p) <= other_ids) for p in preds):
            return None  # a predicate over both sides: not pushed
        return _OwnerSide(rename, preds, owner_side, other, pins)
    return None


def _pushed_down(node: Node, keys: list[str], cols: str, weight_ids: set[str],
                 with_owner: bool = False) -> str | None:
    side = _owner_side(node, keys, weight_ids)
    if side is None:
        return None
    rename, preds, owner_side, other, pins = side
    other_ids = set(other.ids)
    outer = list(dict.fromkeys(list(keys) + sorted(weight_ids)))
    o_outer = [i for i in outer if _columns(rename[i]) <= other_ids]
    a_keys = [k for k in keys if k not in o_outer]
    other_sql = _side_sql(other, preds, {i: rename[i] for i in o_outer})
    owner_sql = _side_sql(owner_side, preds, {k: rename[k] for k in a_keys})
    o_keys = [k for k in keys if k in o_outer]
    inner_by = [f"o.{q(c)}" for _, c in pins] + [f"o.{q(k)}" for k in o_keys]
    inner_cols = [f"o.{q(c)} AS __k{j}" for j, (_, c) in enumerate(pins)]
    inner_cols += [f"o.{q(k)}" for k in o_keys]
    inner = (f"SELECT {', '.join(inner_cols + [cols])} FROM ({other_sql})"
             f" AS o GROUP BY {', '.join(inner_by)}")
    on = " AND ".join(f"a.{q(a)} = t.__k{j}" for j, (a, _) in enumerate(pins))
    out = [f"t.{q(k)}" if k in o_keys else f"a.{q(k)}" for k in keys]
    if with_owner:
        out.append("t.__k0 AS __o")  # one pin: the owner's key
    out += [f"t.c{j}" for j in range(cols.count(" AS c"))]
    return f"SELECT {', '.join(out)} FROM ({inner}) AS t JOIN ({owner_sql}) AS a ON {on}"


def owner_rows_sql(node: Node, values: list[str | None], weight_ids: set[str]
                   ) -> tuple[str, str] | None:
    """``(rows, owners)`` for the shape :func:`owner_totals_sql` pushes below the join, without
    GROUP BY and with an integer owner key, else None: ``rows`` selects, for every row of the
    other side (its filters applied) whose join column is not NULL, that column as ``__o`` and
    each per-row value of ``values`` (SQL over the plan's ids; None for a count's 1) as ``c0,
    c1, …`` (DOUBLE, NULL as 0); ``owners`` selects the owner side's key ``__k`` (filters
    applied, not NULL, one row per participant by the declared key). A participant's total is
    the sum of the values of the rows whose ``__o`` equals its ``__k`` — the totals of
    :func:`owner_totals_sql` (which drops participants without rows: their total is 0), left
    for the caller to add up by key (``numpy.bincount`` when the keys are dense)."""
    side = _owner_side(node, [], weight_ids)
    if side is None:
        return None
    rename, preds, owner_side, other, pins = side
    ((a, b),) = pins
    key_type = _key_type(owner_side, other, a)
    if key_type not in INTEGER_KEYS:
        return None
    # as BIGINT (exact for every integer type but UBIGINT): numpy indexes with it as it is
    cast = "" if key_type == "UBIGINT" else "::BIGINT"
    other_sql = _side_sql(other, preds, {i: rename[i] for i in sorted(weight_ids)})
    owner_sql = _side_sql(owner_side, preds, {})
    cols = [f"coalesce({v}, 0)::DOUBLE AS c{j}" for j, v in enumerate(values) if v is not None]
    rows = (f"SELECT {', '.join([f'o.{q(b)}{cast} AS __o'] + cols)} FROM ({other_sql}) AS o "
            f"WHERE o.{q(b)} IS NOT NULL")
    owners = f"SELECT a.{q(a)} AS __k FROM ({owner_sql}) AS a WHERE a.{q(a)} IS NOT NULL"
    return rows, owners


def _key_type(owner_side: Node, other: Node, key: str) -> str | None:
    """The declared type of the owner side's key column ``key`` (an id of ``owner_side``)."""
    base = analyse(owner_side).base.get(key)
    for n in walk(owner_side):
        if isinstance(n, Scan) and base in n.ids and n.types:
            return str(n.types[n.ids.index(base)]).upper()
    return None


def _side_sql(side: Node, preds: list, outputs: dict) -> str:
    """One side of the join with the filter conjuncts over its columns, and the plan's output
    columns ``outputs`` ({outer id: expression over the side's ids}) computed under their ids."""
    mine = [p for p in preds if _columns(p) <= set(side.ids)]
    sql = compile_node(Filter(side, exp.and_(*mine)) if mine else side, False).sql
    extra = [f"{rename.sql(dialect='duckdb')} AS {q(i)}" for i, rename in outputs.items()
             if not (isinstance(rename, exp.Column) and rename.name == i)]
    return f"SELECT *, {', '.join(extra)} FROM ({sql}) AS s" if extra else sql


def _join_shape(node: Node):
    """``(join, {outer id: expression over the join's ids}, [filter conjuncts over the join's
    ids])`` when ``node`` is an inner join under projections and filters, else None."""
    preds: list[exp.Expression] = []
    rename: dict[str, exp.Expression] = {i: exp.column(i) for i in node.ids}
    while isinstance(node, (Project, Filter)):
        if isinstance(node, Project):
            m = dict(zip(node.ids, node.exprs))
            if any(c not in node.child.ids for e in node.exprs for c in _columns(e)):
                return None  # a qualified or outer reference: not handled
            rename = {o: _renamed(e, m) for o, e in rename.items()
                      if _columns(e) <= set(m)}
            preds = [_renamed(p, m) for p in preds]
        else:
            preds += conjuncts(node.predicate)
        node = node.child
    if not isinstance(node, Join) or node.condition is None:
        return None
    clash = {i for i, e in rename.items() if i in node.ids and not (
        isinstance(e, exp.Column) and e.name == i)}
    if clash:
        return None  # an outer id naming another column of the join: not renamed safely
    return node, rename, preds


def _renamed(e: exp.Expression, m: dict) -> exp.Expression:
    """``e`` with every column ``c`` of ``m`` replaced by the expression ``m[c]``."""
    return e.transform(lambda n: m[n.name].copy() if isinstance(n, exp.Column)
                       and not n.table and n.name in m else n)


def _columns(e: exp.Expression) -> set[str]:
    return {c.name for c in e.find_all(exp.Column)}


def _owner_key_pins(owner_side: Node, other: Node, condition) -> list[tuple[str, str]] | None:
    """``[(owner-side id, other-side id)]`` when ``condition`` is exactly the equality of the
    owner side's participant key (one row per participant, declared key) with bare columns of
    ``other`` of the same type; else None."""
    scan = owner_side
    while isinstance(scan, (Filter, Project)):
        scan = scan.child
    if not isinstance(scan, Scan) or len(scan.slots) != 1 or scan.slots[0].kind != "column":
        return None
    key = scan.slots[0].column
    if (key,) not in {tuple(k) for k in scan.unique_keys}:
        return None
    own_info, other_info = analyse(owner_side), analyse(other)
    key_id = scan.ids[scan.columns.index(key)]
    types = {i: t for side in (owner_side, other) for n in walk(side) if isinstance(n, Scan)
             for i, t in zip(n.ids, n.types or ("?",) * len(n.ids))}
    pins = []
    for conj in conjuncts(condition):
        if not isinstance(conj, exp.EQ):
            return None
        a, b = conj.this, conj.expression
        if not (isinstance(a, exp.Column) and isinstance(b, exp.Column)) or a.table or b.table:
            return None
        if a.name in other.ids:
            a, b = b, a
        if a.name not in owner_side.ids or b.name not in other.ids:
            return None
        if own_info.base.get(a.name) != key_id or b.name not in other_info.base:
            return None
        t_a, t_b = types.get(key_id), types.get(other_info.base[b.name])
        if t_a is None or t_a == "?" or t_a != t_b:
            return None
        pins.append((a.name, b.name))
    return pins if len(pins) == 1 else None  # a second equality would filter: not pushed


