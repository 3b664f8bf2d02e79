"""Who owns the tuples of a plan: the single-owner analysis behind the fast paths.

A K-relation is *single-owner* when every tuple is annotated by exactly one participant
(a one-variable monomial). That holds for a plan without ``DISTINCT`` or ``UNION`` (which OR
annotations together) in which every participant slot names the same participant on every row:
after slot pruning (:func:`provsql_dp.provenance.slots.slot_sources`) exactly one slot is kept.
Then the recursive mechanism needs only each participant's total contribution (see
:mod:`provsql_dp.mechanisms.recursive.single_owner`), which DuckDB computes with one ``GROUP BY``.

When, in addition, the declarations bound how many tuples one participant can own — each
protected scan holds one row per participant (``PROTECT TABLE t``, or ``BY (c)`` with ``c`` a
declared key) and every public table is joined on one of its declared keys — that bound
``rows_per_owner`` is public, and a count (or a SUM of bounded values) has a global sensitivity:
the Laplace mechanism applies, with no sensitivity to estimate.

Everything here reads the plan only — the schema and the declarations — never the data.

>>> from provsql_dp.sql.plan import Scan, Slot, Filter, Join
>>> from sqlglot import exp
>>> people = Scan("people", "main", ("id", "city"), ("v0", "v1"), ("id", "city"),
...               (Slot("people", "column", "id"),), unique_keys=(("id",),))
>>> visits = Scan("visits", "main", ("pid", "day"), ("v2", "v3"), ("pid", "day"),
...               (Slot("people", "column", "pid"),))
>>> o = owners(Filter(people, exp.GT(this=exp.column("v1"), expression=exp.Literal.number(3))))
>>> o.slot, o.rows_per_owner, sorted(o.owner_row_ids)
(0, 1, ['v0', 'v1'])
>>> o = owners(Join(people, visits, exp.EQ(this=exp.column("v0"), expression=exp.column("v2"))))
>>> o.slot, o.rows_per_owner, sorted(o.owner_row_ids)   # v2 (pid) = v0: the owner's key too
(0, None, ['v0', 'v1', 'v2'])
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from sqlglot import exp

from ..sql.owner_fd import owner_determined
from ..sql._equal_values import column_facts, pinned_by, same_value
from ..sql.plan import (AntiJoin, Distinct, Filter, Join, Node, Project, Scan,
                        SemiJoin, Union, walk)
from .slots import analyse, slot_sources
from ..sql._conjuncts import conjuncts

__all__ = ["Owners", "owners"]


@dataclass(frozen=True)
class Owners:
    """The single owner of every tuple of a plan.

    ``slot`` is the kept participant slot (an index into the compiled capture's slots);
    ``rows_per_owner`` the most tuples one participant can own, from the declarations, or None
    when they do not bound it; ``owner_row_ids`` the scan column ids whose value is a function of
    the owner (columns of a protected row that holds one row per participant, and of a public
    row joined on its declared key to such columns, through every equality of the plan:
    :func:`provsql_dp.sql.owner_fd.owner_determined`) — a GROUP BY on them puts each
    participant's tuples in one group.
    """

    slot: int
    rows_per_owner: int | None
    owner_row_ids: frozenset


#: the analyses of the last plans, by node identity (a plan is immutable and, once kept by the
#: catalog, reused by every run of its statement: its analysis is too); each entry holds its
#: node, so an id is never another node's while it is here
_KEPT: dict[int, tuple] = {}
_KEPT_MAX = 256
_KEPT_LOCK = threading.Lock()


def owners(node: Node) -> Owners | None:
    """The single-owner analysis of ``node`` (the child of the final aggregate), or None. A
    function of the plan alone: the analysis of one of the last plans is kept."""
    kept = _KEPT.get(id(node))
    if kept is not None and kept[0] is node:
        return kept[1]
    out = _owners(node)
    with _KEPT_LOCK:
        while len(_KEPT) >= _KEPT_MAX:
            _KEPT.pop(next(iter(_KEPT)), None)  # the oldest first
        _KEPT[id(node)] = (node, out)
    return out


def _owners(node: Node) -> Owners | None:
    if _several_monomials(node):
        return None  # a tuple may have several monomials
    kept = [k for k, (kind, _) in enumerate(slot_sources(node)) if kind != "drop"]
    if len(kept) != 1:
        return None
    rows_ids = {
        i for n in walk(node) if isinstance(n, Scan) and n.slots and _one_row_per_owner(n)
        for i in n.ids
    }
    return Owners(kept[0], _rows_per_owner(node),
                  frozenset(_determined(node, rows_ids) | owner_determined(node)))


def _several_monomials(node: Node) -> bool:
    """Whether a tuple of ``node`` may carry several participants' annotations: a ``DISTINCT``
    or ``UNION`` over protected rows (they OR annotations together), a semi-join whose match
    reads protected rows that are not the left row's owner's. The right side of every owner-local semi-join and anti-join is skipped: they
    are filters of the left rows, evaluated on the whole database (:mod:`provsql_dp.sql.owner_fd`),
    whatever their inside (a ``GROUP BY … HAVING`` of the owner's rows, TPC-H Q18).

    Each node is tested itself (from 866056e to this fix the nodes were wrapped before the test
    and no ``DISTINCT`` ever matched: ``COUNT(DISTINCT species)`` took the single-owner route and
    released the number of (participant, species) pairs, ≈ 300 for a true 3)."""
    if isinstance(node, AntiJoin) or isinstance(node, SemiJoin) and node.local:
        return _several_monomials(node.left)
    # a protected GROUP BY … HAVING is admitted by the planner only when each group is one
    # participant's rows (sql/owner_fd.keys_determine_owners): its rows keep one owner
    if (isinstance(node, (Distinct, Union)) and _protected(node)
            or isinstance(node, SemiJoin) and _protected(node.right)):
        return True
    return any(_several_monomials(c) for c in node.children)


def _determined(node: Node, ids: set) -> set:
    """``ids`` (scan column ids that are functions of the owner) extended by the columns of every
    public scan joined on one of its declared keys to such columns: the public row is then a
    function of the owner's row (``people JOIN depts ON people.dept_id = depts.id``: one
    department per person). Repeated until nothing changes (chains of public tables)."""
    joins = [n for n in walk(node) if isinstance(n, Join) and n.condition is not None]
    changed = True
    while changed:
        changed = False
        for j in joins:
            base = analyse(j).base
            for public in (j.left, j.right):
                scan = _base_scan(public)
                if scan is None or _protected(public) or set(scan.ids) <= ids:
                    continue
                if _key_pinned_by(public, scan, j, base, ids):
                    ids |= set(scan.ids)
                    changed = True
    return ids


def _base_scan(node: Node) -> Scan | None:
    while isinstance(node, (Filter, Project)):
        node = node.child
    return node if isinstance(node, Scan) else None


def _key_pinned_by(public: Node, scan: Scan, join: Join, base: dict, ids: set) -> bool:
    """Whether ``join``'s condition equates every column of one of ``scan``'s declared keys to a
    bare column that is a function of the owner (its base id in ``ids``), by an equality that
    proves the same value (no collation, one type family: :mod:`provsql_dp.sql._equal_values`)."""
    mine = set(analyse(public).base.values())
    col_of = dict(zip(scan.ids, scan.columns))
    types, collated = column_facts(n for n in walk(join) if isinstance(n, Scan))
    pinned = set()
    for conj in conjuncts(join.condition):
        if not isinstance(conj, exp.EQ):
            continue
        for a, b in ((conj.this, conj.expression), (conj.expression, conj.this)):
            if (isinstance(a, exp.Column) and base.get(a.name) in mine
                    and isinstance(b, exp.Column) and base.get(b.name) in ids
                    and base.get(b.name) not in mine
                    and same_value(types, collated, base[a.name], base[b.name])):
                pinned.add(col_of.get(base[a.name]))
    return any(set(key) <= pinned for key in scan.unique_keys)


def _one_row_per_owner(scan: Scan) -> bool:
    """Whether each participant owns at most one row of a protected scan (declared key). A
    nullable UNIQUE owner column qualifies: its NULL rows name no participant (the capture gives
    them id -1, owned by nobody), and each participant's value is on one row at most; rule 3 of
    :mod:`provsql_dp.sql.owner_fd` (a key determines its row) asks more, non-NULL keys."""
    if len(scan.slots) != 1:
        return False
    slot = scan.slots[0]
    if slot.kind in ("rowid", "composite"):
        return True
    return any(tuple(k) == (slot.column,) for k in scan.unique_keys)


def _protected(node: Node) -> bool:
    return any(isinstance(n, Scan) and n.slots for n in walk(node))


def _rows_per_owner(node: Node) -> int | None:
    if isinstance(node, Scan):
        return 1 if _one_row_per_owner(node) else None
    if isinstance(node, (Filter, Project)):
        return _rows_per_owner(node.child)
    if isinstance(node, AntiJoin) or isinstance(node, SemiJoin) and (
            node.local or not _protected(node.right)):
        return _rows_per_owner(node.left)  # a public or owner-local match multiplies nothing
    if isinstance(node, Join):
        left_p, right_p = _protected(node.left), _protected(node.right)
        if left_p and right_p:
            a, b = _rows_per_owner(node.left), _rows_per_owner(node.right)
            return None if a is None or b is None else a * b
        inner, public = (node.left, node.right) if left_p else (node.right, node.left)
        bound = _rows_per_owner(inner)
        if bound is None or not _matches_one_row(public, node):
            return None
        return bound
    return None


def _matches_one_row(public: Node, join: Join) -> bool:
    """Whether ``join``'s condition pins one of ``public``'s declared keys to columns of the other
    side, so that a row of the other side matches at most one row of ``public`` (by equalities
    that prove the same value: ``'eng' = 'ENG'`` under a collation, or a DOUBLE equal to the
    BIGINT keys 2⁵³ and 2⁵³ + 1, would match several; :mod:`provsql_dp.sql._equal_values`)."""
    condition = join.condition
    if condition is None:
        return False
    scan = public
    while isinstance(scan, (Filter, Project)):
        scan = scan.child
    if not isinstance(scan, Scan) or not scan.unique_keys:
        return False
    info = analyse(public)
    mine = {b for b in info.base.values()}
    col_of = dict(zip(scan.ids, scan.columns))
    types, collated = column_facts(n for n in walk(join) if isinstance(n, Scan))
    both = analyse(join).base
    pinned = set()
    for conj in conjuncts(condition):
        if not isinstance(conj, exp.EQ):
            continue
        for a, b in ((conj.this, conj.expression), (conj.expression, conj.this)):
            if (isinstance(a, exp.Column) and a.name in info.base and info.base[a.name] in mine
                    and not any(c.name in info.base for c in b.find_all(exp.Column))
                    and pinned_by(types, collated, info.base[a.name], b, both)):
                pinned.add(col_of.get(info.base[a.name]))
    return any(set(key) <= pinned for key in scan.unique_keys)


