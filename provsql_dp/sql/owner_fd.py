"""What is a function of the participant: functional dependencies of a plan's rows on their owner.

From a plan alone — its join and filter equalities, the declared keys (``PRIMARY KEY``/``UNIQUE``),
the ownership declarations (``PROTECT TABLE t [BY (c)] [REFERENCES r]``) and constants — three
questions the planner and the routes ask:

* :func:`owner_determined` — which columns of a single-owner plan are a function of the owner
  (a ``GROUP BY`` on them puts all of one participant's rows in one group: each group's release
  then needs no share of ε, the same as ``OPTIONS (max_groups = 1)`` but proved). TPC-H Q5's
  ``n_name`` is: ``c_nationkey`` is a column of the participant's own row (``customer`` holds one
  row per participant), ``c_nationkey = s_nationkey = n_nationkey`` and ``n_nationkey`` is the
  key of the public ``nation``, so the nation row — and its name — is the customer's.
* :func:`keys_determine_owners` — whether ``GROUP BY`` keys determine every owner of a group's
  rows (the group is *owner-local*: its ``HAVING`` reads one participant set's rows only). TPC-H
  Q18's ``GROUP BY l_orderkey`` is: with ``lineitem BY (l_orderkey) REFERENCES orders`` a line
  item's owner is a function of ``l_orderkey`` (each hop of the chain references a declared key).
* :func:`inner_owners_local` — whether every row an ``EXISTS``/``NOT EXISTS`` subquery can
  match is owned only by participants who own the outer row (or is public). TPC-H Q21's
  ``l3.l_orderkey = l1.l_orderkey``: both line items' owners are the owner of that order.

The rules (each is an FD that holds on every row of the plan's output, never a guess from data):

1. an equality ``a = b`` of bare columns in a filter or an inner-join or semi-join condition
   holds on the row (both non-NULL); it is used only between columns of one type family (all
   integer types; otherwise one type), where equal values are the same value — never for a
   string column compared under a collation (``'eng' = 'ENG'`` under ``NOCASE``;
   ``Scan.collated``, read from the schema and the session's ``default_collation``);
2. ``a = constant`` fixes ``a`` for every row (``a`` not collated, as in rule 1, and the
   constant of ``a``'s type family or a string literal: a BIGINT ``= 9007199254740992e0``
   holds for 2⁵³ and 2⁵³ + 1; :mod:`._equal_values`);
3. a declared key of a table determines its row (and the row every column) where its columns
   are not NULL — declared NOT NULL (a PRIMARY KEY is), or made so on every row by the
   statement: an equality of rule 1 or 2, or ``c IS NOT NULL`` (a nullable UNIQUE column lets
   many rows share NULL: grouped by it, or determined as NULL, they are not one row); the row's
   ``rowid`` determines the row;
4. the owner of a row is: the value of its owner column (``BY (c)``, in its domain), its rowid
   (``PROTECT TABLE t``), or — along a foreign key — a function of its referencing columns: the
   owner of the one referenced row (a declared key), which is the owner of any scan of that
   table whose key columns equal them (so ``l3`` and ``l1`` above have the same owner).

Equal owners are found by a congruence closure: classes of equal columns, then owner *terms*
(domain and the classes that name the participant), foreign-key terms resolved hop by hop.
Nothing below a ``UNION`` or ``DISTINCT`` is analysed (the answer is then "not proved").

Why an owner-local anti-join is safe (:class:`~provsql_dp.sql.plan.AntiJoin`). Say every row
``r`` that ``NOT EXISTS (… WHERE corr)`` can match for an outer row ``o`` is public or owned only
by participants that own ``o`` (rule 4 through ``corr``). Take any world ``W`` (a sub-database:
some participants and everything they own removed). If ``o`` is in ``W``, all its owners are,
so every such ``r`` is in ``W`` too (public rows always are): the subquery sees in ``W`` exactly
the matches it sees on the whole database. So ``o`` passes the anti-join in ``W`` iff ``o`` is in
``W`` and it passes on the whole database: its annotation is ``o``'s own, a positive formula,
and the anti-join is a filter evaluated once on the full data. Removing a participant removes
the outer row and its matches together, and changes no other participant's row's predicate, so
every route's sensitivity claim (Laplace with a bounded contribution, the single-owner closed
form, the recursive mechanism's LPs over the K-relation) holds unchanged. The same argument
makes an owner-local ``EXISTS`` a plain filter (``o ∧ ⋁ matches = o``: each match's monomial is
a subset of ``o``'s, absorption), so such a semi-join keeps the single-owner shape. A match
owned by ``{p, q}`` with only ``p`` owning ``o`` is *not* local (removing ``q`` flips it), and
is refused. ``x NOT IN (SELECT y … WHERE w)`` is the anti-join on ``w AND (x = y) IS NOT
FALSE`` (SQL's NULLs: a NULL comparison blocks), so its locality is read from ``w`` alone.

>>> import duckdb
>>> from provsql_dp.sql.catalog import Catalog
>>> from provsql_dp.sql.dialect import parse_one
>>> from provsql_dp.sql.planner import plan_query
>>> con = duckdb.connect()
>>> _ = con.execute("CREATE TABLE c(ck INT PRIMARY KEY, nk INT); CREATE TABLE n(nk INT PRIMARY "
...                 "KEY, name VARCHAR); CREATE TABLE o(ok INT PRIMARY KEY, ck INT)")
>>> cat = Catalog(con)
>>> _ = cat.protect("c", None, None); _ = cat.protect("o", ["ck"], None, (["c"], None))
>>> p = plan_query(parse_one("SELECT n.name, COUNT(*) FROM c, o, n WHERE c.ck = o.ck "
...                          "AND c.nk = n.nk GROUP BY n.name"), cat)
>>> p.group_by[0] in owner_determined(p.child)
True
>>> p = plan_query(parse_one("SELECT o.ok, COUNT(*) FROM c, o WHERE c.ck = o.ck GROUP BY o.ok"),
...                cat)
>>> p.group_by[0] in owner_determined(p.child)     # a customer has many orders
False
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sqlglot import exp

from ._conjuncts import conjuncts
from ._equal_values import column_facts, fixed_by, same_value
from .plan import (AntiJoin, Distinct, Filter, GroupFilter, Join, Node, OneRow, Project, Scan,
                   SemiJoin, Union)

__all__ = ["owner_determined", "keys_determine_owners", "inner_owners_local", "Facts", "facts"]


@dataclass
class Facts:
    """What holds on every row of a plan node: ``base`` (output id → scan column id it equals),
    ``deps`` (computed output id → the scan column ids it is a deterministic function of),
    ``equal`` (pairs of scan column ids), ``consts`` (scan column ids fixed by a constant),
    ``scans`` (the scans whose rows make the row), ``slots`` ((scan index, slot position) of
    each participant slot, in the capture's order) and ``nonnull`` (scan column ids not NULL on
    any row: ``c IS NOT NULL``; those of ``equal`` and ``consts`` are not NULL either)."""

    base: dict = field(default_factory=dict)
    deps: dict = field(default_factory=dict)
    equal: list = field(default_factory=list)
    consts: set = field(default_factory=set)
    scans: list = field(default_factory=list)
    slots: list = field(default_factory=list)
    nonnull: set = field(default_factory=set)

    def merged(self, other: "Facts") -> "Facts":
        off = len(self.scans)
        return Facts({**self.base, **other.base}, {**self.deps, **other.deps},
                     self.equal + other.equal, self.consts | other.consts,
                     self.scans + other.scans,
                     self.slots + [(s + off, j) for s, j in other.slots],
                     self.nonnull | other.nonnull)


def facts(node: Node) -> Facts | None:
    """The :class:`Facts` of ``node``, or None below a union or DISTINCT (not analysed)."""
    if isinstance(node, Scan):
        return Facts(dict(zip(node.ids, node.ids)), {}, [], set(), [node],
                     [(0, j) for j in range(len(node.slots))])
    if isinstance(node, OneRow):
        return Facts()
    if isinstance(node, (Filter, AntiJoin)):  # an anti-join's condition holds on no row
        f = facts(node.child if isinstance(node, Filter) else node.left)
        if f is None:
            return None
        if isinstance(node, Filter):
            _conditions(f, node.predicate)
        return f
    if isinstance(node, (Join, SemiJoin)):
        left, right = facts(node.left), facts(node.right)
        if left is None or right is None:
            return None
        f = left.merged(right)
        if isinstance(node, SemiJoin) and _protected(node.right) and not node.local:
            pass  # each (row, match) pair is a derivation: its slots are the capture's
        elif isinstance(node, SemiJoin):
            f.slots = left.slots  # a public or owner-local match adds no slot
        if node.condition is not None:
            _conditions(f, node.condition)
        return f
    if isinstance(node, (Project, GroupFilter)):  # a group's rows share its keys' lineage
        f = facts(node.child)
        if f is None:
            return None
        out_base, out_deps = {}, {}
        for e, i in zip(node.exprs, node.ids):
            if isinstance(e, exp.Column) and not e.table and e.name in f.base:
                out_base[i] = f.base[e.name]
            elif isinstance(node, Project) and _deterministic(e):
                d = _depends(e, f)
                if d is not None:
                    out_deps[i] = d
        f.base, f.deps = out_base, out_deps
        return f
    if isinstance(node, (Union, Distinct)):
        return None
    return None


def _protected(node: Node) -> bool:
    from .plan import walk
    return any(isinstance(n, Scan) and n.slots for n in walk(node))


_VOLATILE = re.compile(r"\b(random|uuid|gen_random_uuid|now|current_\w+|nextval|setseed)\b", re.I)


def _deterministic(e: exp.Expression) -> bool:
    return not any(isinstance(n, (exp.Rand, exp.AggFunc, exp.Window)) for n in e.walk()) and \
        not _VOLATILE.search(e.sql(dialect="duckdb"))


def _depends(e: exp.Expression, f: Facts) -> frozenset | None:
    out = set()
    for c in e.find_all(exp.Column):
        if c.table:
            return None
        if c.name in f.base:
            out.add(f.base[c.name])
        elif c.name in f.deps:
            out |= f.deps[c.name]
        else:
            return None
    return frozenset(out)



def _conditions(f: Facts, pred: exp.Expression) -> None:
    """Record the equalities and constants of the conjuncts of ``pred`` (true on every row):
    only those that prove the same value (:mod:`._equal_values`: no collation, one type family)."""
    types, collated = column_facts(f.scans)
    for conj in conjuncts(pred):
        if isinstance(conj, exp.Not) and isinstance(conj.this, exp.Is) and isinstance(
                conj.this.expression, exp.Null) and isinstance(conj.this.this, exp.Column) \
                and not conj.this.this.table and conj.this.this.name in f.base:
            f.nonnull.add(f.base[conj.this.this.name])  # c IS NOT NULL
        if not isinstance(conj, exp.EQ):
            continue
        a, b = conj.this, conj.expression
        bare = [isinstance(x, exp.Column) and not x.table and x.name in f.base for x in (a, b)]
        if all(bare):
            x, y = f.base[a.name], f.base[b.name]
            if same_value(types, collated, x, y):  # 'eng' = 'ENG' under NOCASE: not the same
                f.equal.append((x, y))
        elif bare[0] and fixed_by(types, collated, f.base[a.name], b):
            f.consts.add(f.base[a.name])
        elif bare[1] and fixed_by(types, collated, f.base[b.name], a):
            f.consts.add(f.base[b.name])


# ---------------------------------------------------------------------- congruence closure
class _Classes:
    """Union-find over scan column ids and per-scan rowid pseudo-ids, closed under rule 3 (two
    scans of one table whose declared key columns are equal are the same row)."""

    def __init__(self, f: Facts):
        self.f = f
        self.parent: dict = {}
        for a, b in f.equal:
            self.union(a, b)
        changed = True
        while changed:
            changed = False
            for i, s in enumerate(f.scans):
                for j in range(i):
                    t = f.scans[j]
                    if (s.schema, s.table, s.catalog) != (t.schema, t.table, t.catalog) \
                            or self.find(rowid(s, i)) == self.find(rowid(t, j)):
                        continue
                    cs, ct = dict(zip(s.columns, s.ids)), dict(zip(t.columns, t.ids))
                    if any(all(self.find(cs[c]) == self.find(ct[c]) for c in key)
                           for key in _keys(s, self)):
                        for c in s.columns:
                            self.union(cs[c], ct[c])
                        self.union(rowid(s, i), rowid(t, j))
                        changed = True

    def not_null(self, x) -> bool:
        """Whether column id ``x`` is not NULL on any row: its class holds a column of an
        equality, a constant or an ``IS NOT NULL`` (equal values; the same row's value)."""
        f = self.f
        sure = f.nonnull | f.consts | {c for pair in f.equal for c in pair}
        return self.find(x) in {self.find(c) for c in sure}

    def find(self, x):
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a, b) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


def _keys(scan: Scan, cl: _Classes):
    """The declared keys of ``scan`` that determine its row (rule 3): each column declared NOT
    NULL or not NULL on every row of the plan (a NULL-keyed row is one of many)."""
    ids = dict(zip(scan.columns, scan.ids))
    for key in scan.unique_keys:
        if all(c in ids and (c in scan.not_null or cl.not_null(ids[c])) for c in key):
            yield key


def rowid(scan: Scan, index: int) -> str:
    return f"#rowid{index}:{scan.ids[0] if scan.ids else ''}"


def _slot_cols(scan: Scan, j: int) -> tuple[str, tuple]:
    """``(kind, column ids)`` of slot ``j``: ``column``/``composite`` (the key's ids), ``rowid``
    (none) or ``fk`` (the referencing columns' ids: the owner is a function of them)."""
    s = scan.slots[j]
    ids = dict(zip(scan.columns, scan.ids))
    cols = (s.column,) if s.kind == "column" else s.key_columns
    if s.kind == "rowid":
        return "rowid", ()
    if all(c in ids for c in cols):
        return "column", tuple(ids[c] for c in cols)
    if scan.owner_ref and all(c in ids for c in scan.owner_ref[0]):
        return "fk", tuple(ids[c] for c in scan.owner_ref[0])
    return "unknown", ()


def _term(f: Facts, cl: _Classes, si: int, j: int, depth: int = 0):
    """The owner term of slot ``j`` of scan ``si``: equal terms name the same participant."""
    scan = f.scans[si]
    kind, cols = _slot_cols(scan, j)
    dom = scan.slots[j].domain
    if kind == "column":
        return ("col", dom, tuple(cl.find(c) for c in cols))
    if kind == "rowid":
        return ("row", dom, cl.find(rowid(scan, si)))
    if kind == "fk":
        _, rs, rt, rcols = scan.owner_ref
        classes = tuple(cl.find(c) for c in cols)
        if depth < 32:  # a scan of the referenced table with those key values: its owner
            for ti, t in enumerate(f.scans):
                tc = dict(zip(t.columns, t.ids))
                if ((t.schema.lower(), t.table.lower()) == (rs.lower(), rt.lower())
                        and j < len(t.slots) and t.slots[j].domain == dom
                        and all(c in tc for c in rcols)
                        and tuple(cl.find(tc[c]) for c in rcols) == classes):
                    return _term(f, cl, ti, j, depth + 1)
        return ("fk", dom, rs.lower(), rt.lower(), tuple(rcols), j, classes)
    return ("unknown", si, j)


# ---------------------------------------------------------------------- the three questions
def _closure(f: Facts, cl: _Classes, start: set) -> set:
    """The classes determined by ``start`` (classes) under rules 2 and 3."""
    known = set(start) | {cl.find(c) for c in f.consts}
    changed = True
    while changed:
        changed = False
        for i, s in enumerate(f.scans):
            row = cl.find(rowid(s, i))
            ids = dict(zip(s.columns, s.ids))
            if row not in known and any(all(cl.find(ids[c]) in known for c in key)
                                        for key in _keys(s, cl)):
                known.add(row)
                changed = True
            if row in known:
                new = {cl.find(x) for x in s.ids} - known
                if new:
                    known |= new
                    changed = True
    return known


def owner_determined(node: Node) -> set:
    """The ids (scan column ids, and the output ids of ``node``, bare or computed by a
    deterministic expression) whose value is a function of the owner, for a ``node`` every row
    of which has one owner that every slot names (:func:`provsql_dp.provenance.owners.owners`
    decides that). Empty when ``node`` is not analysed."""
    f = facts(node)
    if f is None:
        return set()
    cl = _Classes(f)
    start = set()
    for si, j in f.slots:
        kind, cols = _slot_cols(f.scans[si], j)
        if kind == "column":  # the owner's key is this column's value
            start |= {cl.find(c) for c in cols}
        elif kind == "rowid":  # the owner is this row
            start.add(cl.find(rowid(f.scans[si], si)))
    known = _closure(f, cl, start)
    out = {x for s in f.scans for x in s.ids if cl.find(x) in known}
    out |= {o for o, b in f.base.items() if b in out}
    out |= {o for o, d in f.deps.items() if d <= out}
    return out


def keys_determine_owners(node: Node, keys: list) -> bool:
    """Whether the bare columns among ``keys`` (expressions over ``node``'s ids) determine every
    participant slot of ``node``'s rows (rules 1–4)."""
    f = facts(node)
    if f is None:
        return False
    cl = _Classes(f)
    start = {cl.find(f.base[k.name]) for k in keys
             if isinstance(k, exp.Column) and not k.table and k.name in f.base}
    known = _closure(f, cl, start)
    for si, j in f.slots:
        scan = f.scans[si]
        kind, cols = _slot_cols(scan, j)
        if kind in ("column", "fk"):  # the owner is (a function of) these columns
            ok = all(cl.find(c) in known for c in cols)
        elif kind == "rowid":
            ok = cl.find(rowid(scan, si)) in known
        else:
            ok = False
        if not ok:
            return False
    return True


def inner_owners_local(outer: Node, inner: Node, condition: exp.Expression | None) -> bool:
    """Whether every participant slot of every ``inner`` row that satisfies ``condition``
    (over both sides' ids) with an ``outer`` row names a participant who owns that outer row;
    True when ``inner`` is public. See the module docstring for why such a (NOT) EXISTS is safe."""
    if not _protected(inner):
        return True
    fo, fi = facts(outer), facts(inner)
    if fo is None or fi is None:
        return False
    f = fo.merged(fi)
    if condition is not None:
        _conditions(f, condition)
    cl = _Classes(f)
    n_outer = len(fo.scans)
    mine = {_term(f, cl, si, j) for si, j in f.slots if si < n_outer}
    theirs = [_term(f, cl, si, j) for si, j in f.slots if si >= n_outer]
    return all(t[0] != "unknown" and t in mine for t in theirs)
