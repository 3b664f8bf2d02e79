"""Slot pruning: which participant slots the capture query must actually return.

A participant slot of a protected scan holds the value of one of the scan's own key columns. When
the query's join and filter conditions equate key columns of one domain (``e1.dst = e2.src`` in a
path or triangle query), those slots name the same participant in every output row, so only one
of them is needed; and when the surviving slot's key column is itself an output column, its
participant can be read from that column instead of a second copy of it. For the triangle query
under node privacy this turns six slot columns into none: the K-relation costs no extra transfer
over the plain query.

Only equalities that hold on *every* output row are used: conjuncts ``x = y`` of filters and inner
join conditions, between bare columns that pass unchanged from a scan's key column, both keys of
the same domain (so of one type family: equal values are the same participant). Union branches
end the analysis: nothing below a union is aliased.

>>> from provsql_dp.sql.plan import Scan, Slot, Join, Project
>>> from sqlglot import exp
>>> s = lambda i: Scan("edge", "main", ("src", "dst"), (f"v{i}", f"v{i+1}"), ("src", "dst"),
...                    (Slot("node", "column", "src"), Slot("node", "column", "dst")))
>>> j = Join(s(0), s(2), exp.EQ(this=exp.column("v1"), expression=exp.column("v2")))
>>> p = Project(j, (exp.column("v0"), exp.column("v3")), ("a", "b"), ("a", "b"))
>>> slot_sources(p)
[('value', ('a',)), ('column', 1), ('drop', 1), ('value', ('b',))]
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from ..sql.plan import (AntiJoin, Distinct, Filter, GroupFilter, Join, Node, OneRow, Project,
                        Scan, SemiJoin, Union)

__all__ = ["slot_sources", "analyse"]


@dataclass
class _Info:
    base: dict[str, str] = field(default_factory=dict)  # output id -> scan column id it equals
    equal: list[tuple[str, str]] = field(default_factory=list)  # scan ids equal on every row
    # per slot: (domain, the scan ids of its key columns or None for rowid, their types)
    slots: list[tuple[str, tuple[str, ...] | None, tuple[str, ...]]] = field(default_factory=list)
    # per slot: (table, its scan's {column: id}, position among the scan's slots, first hop of
    # an owner found along foreign keys — (referencing ids, ref table, ref columns) — or None),
    # or None below a union
    origins: list = field(default_factory=list)


def analyse(node: Node) -> _Info:
    """Bare-column lineage, row-wide equalities and slot keys of a plan node."""
    if isinstance(node, Scan):
        ids = dict(zip(node.columns, node.ids))
        types = dict(zip(node.columns, node.types)) if node.types else {}
        slots = []
        for s in node.slots:
            cols = (s.column,) if s.kind == "column" else s.key_columns
            if s.kind == "rowid" or not all(c in ids for c in cols):
                slots.append((s.domain, None, ()))
            else:
                slots.append((s.domain, tuple(ids[c] for c in cols),
                              tuple(types.get(c, "?") for c in cols)))
        hop = None
        if node.owner_ref and all(c in ids for c in node.owner_ref[0]):
            fk, rs, rt, rk = node.owner_ref
            hop = (tuple(ids[c] for c in fk), (rs.lower(), rt.lower()), tuple(rk))
        table = ((node.schema or "").lower(), node.table.lower())
        origins = [(table, ids, k, hop) for k in range(len(slots))]
        return _Info(dict(zip(node.ids, node.ids)), [], slots, origins)
    if isinstance(node, Filter):
        c = analyse(node.child)
        return _Info(c.base, c.equal + _equalities(node.predicate, c.base), c.slots, c.origins)
    if isinstance(node, OneRow):
        return _Info()
    if isinstance(node, AntiJoin):  # a filter of the left rows: no match, no equality
        return analyse(node.left)
    if isinstance(node, (Join, SemiJoin)):  # a semi-join's condition holds on each derivation
        left, right = analyse(node.left), analyse(node.right)
        base = {**left.base, **right.base}
        eq = left.equal + right.equal
        if node.condition is not None:
            eq += _equalities(node.condition, base)
        if isinstance(node, SemiJoin) and node.local:  # read as a filter: the left's slots
            return _Info(base, eq, left.slots, left.origins)
        return _Info(base, eq, left.slots + right.slots, left.origins + right.origins)
    if isinstance(node, (Project, GroupFilter)):  # a group's rows share its keys' lineage
        c = analyse(node.child)
        base = {
            new: c.base[e.name]
            for e, new in zip(node.exprs, node.ids)
            if isinstance(e, exp.Column) and not e.table and e.name in c.base
        }
        return _Info(base, c.equal, c.slots, c.origins)
    if isinstance(node, Distinct):
        return analyse(node.child)
    if isinstance(node, Union):
        slots = [(d, None, ()) for child in node.inputs for d, _, _ in analyse(child).slots]
        return _Info({}, [], slots, [None] * len(slots))
    raise TypeError(f"not a plan node below the aggregate: {type(node).__name__}")


def _equalities(pred: exp.Expression, base: dict[str, str]) -> list[tuple[str, str]]:
    out = []
    for conj in pred.flatten() if isinstance(pred, exp.And) else [pred]:
        if isinstance(conj, exp.Paren):
            conj = conj.unnest()
        if isinstance(conj, exp.And):
            out += _equalities(conj, base)
            continue
        if isinstance(conj, exp.EQ):
            a, b = conj.this, conj.expression
            if (
                isinstance(a, exp.Column) and isinstance(b, exp.Column)
                and a.name in base and b.name in base
            ):
                out.append((base[a.name], base[b.name]))
    return out


def slot_sources(node: Node) -> list[tuple[str, object]]:
    """For each slot of ``node``'s compiled query, where the capture reads it from:

    * ``("column", k)`` — the slot's own column ``__s{k}``;
    * ``("value", ids)`` — the output value columns ``ids`` (one per key column), which equal
      the slot's key on every row;
    * ``("drop", k)`` — nothing: slot ``k`` (kept) names the same participant on every row.

    A composite key (several columns) is read from values when every one of its columns is.
    """
    info = analyse(node)
    key_of: dict[str, tuple[str, str]] = {}  # scan id of a key column -> (domain, type)
    for domain, bases, types in info.slots:
        for b, t in zip(bases or (), types):
            key_of[b] = (domain, t)
    parent: dict[str, str] = {b: b for b in key_of}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in info.equal:
        if a in key_of and b in key_of and key_of[a] == key_of[b]:
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[rb] = ra
    value_of_class: dict[str, str] = {}
    for out_id in node.ids:
        b = info.base.get(out_id)
        if b is not None and b in key_of:
            value_of_class.setdefault(find(b), out_id)
    kept: dict[tuple, int] = {}
    result: list[tuple[str, object]] = []
    for k, (domain, bases, types) in enumerate(info.slots):
        if bases is None:
            result.append(("column", k))
            continue
        classes = tuple(find(b) for b in bases)
        if (domain, classes) in kept:
            result.append(("drop", kept[(domain, classes)]))
            continue
        kept[(domain, classes)] = k
        if all(c in value_of_class for c in classes):
            result.append(("value", tuple(value_of_class[c] for c in classes)))
        else:
            result.append(("column", k))
    return _along_foreign_keys(info, result)


def _along_foreign_keys(info: _Info, result: list) -> list:
    """Drop the slot of a row owned along a foreign key when the plan joins the referenced row
    itself: its referencing columns equal, on every output row, the referenced table's declared
    key columns of another scan (``lineitem JOIN orders ON l_orderkey = o_orderkey``), so the
    row's owners *are* that scan's owners (its slot at the same position)."""
    ids = {i for _, i in info.equal} | {i for i, _ in info.equal}
    parent = {i: i for i in ids}

    def find(x: str) -> str:
        while parent.get(x, x) != x:
            x = parent[x]
        return x

    for a, b in info.equal:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[rb] = ra
    changed = True
    while changed:  # chains: lineitem → orders → customer, each hop joined
        changed = False
        for k, origin in enumerate(info.origins):
            if origin is None or origin[3] is None or result[k][0] != "column":
                continue
            fk, ref, ref_cols = origin[3]
            for j, other in enumerate(info.origins):
                if (j == k or other is None or other[0] != ref or other[2] != origin[2]
                        or info.slots[j][0] != info.slots[k][0]
                        or not all(c in other[1] for c in ref_cols)):
                    continue
                if all(find(f) == find(other[1][c]) for f, c in zip(fk, ref_cols)):
                    target = result[j][1] if result[j][0] == "drop" else j
                    if target != k and result[target][0] != "drop":
                        result[k] = ("drop", target)
                        changed = True
                        break
    return result
