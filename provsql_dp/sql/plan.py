"""Query plans: positive relational algebra as frozen dataclasses, plus a final linear aggregate.

Every node exposes ``ids`` — internal, globally unique column identifiers — and ``names``, the
column names a user sees. Predicates and projected expressions are sqlglot expressions whose
column references are bare identifiers naming ids of the child node, so a node is meaningful on
its own and the capture pass (``provsql_dp.provenance.capture``) can compile it without any scope information.

>>> from sqlglot import exp
>>> scan = Scan(table="t", schema="main", columns=("a",), ids=("v0",), names=("a",))
>>> flt = Filter(scan, exp.GT(this=exp.column("v0"), expression=exp.Literal.number(1)))
>>> flt.ids, flt.names
(('v0',), ('a',))
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

__all__ = [
    "Slot",
    "Scan",
    "Filter",
    "Project",
    "Join",
    "SemiJoin",
    "AntiJoin",
    "OneRow",
    "GroupFilter",
    "Union",
    "Distinct",
    "Aggregate",
    "AggregateColumn",
    "Aggregates",
    "Node",
    "walk",
    "explain",
]


@dataclass(frozen=True)
class Slot:
    """One participant of a protected row: its domain and how to read its key from the row.

    ``column`` is the base column holding the key; ``None`` with ``kind="rowid"`` means DuckDB's
    ``rowid``; ``kind="composite"`` means the table's composite primary key ``key_columns``.
    """

    domain: str
    kind: str  # "column" | "rowid" | "composite"
    column: str | None = None
    key_columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class Scan:
    """A base table instance. ``slots`` is empty for a public table."""

    table: str
    schema: str
    columns: tuple[str, ...]
    ids: tuple[str, ...]
    names: tuple[str, ...]
    slots: tuple[Slot, ...] = ()
    catalog: str | None = None
    types: tuple[str, ...] = ()  # DuckDB type of each column, when known
    unique_keys: tuple[tuple[str, ...], ...] = ()  # declared PRIMARY KEY / UNIQUE column sets
    #: the columns declared NOT NULL (PRIMARY KEY columns are): a UNIQUE key determines its row
    #: only where its columns are not NULL (NULLs are not equal: many rows share a NULL "key")
    not_null: tuple[str, ...] = ()
    #: the string columns compared under a collation (``'a' = 'A'`` may hold): never equated
    collated: tuple[str, ...] = ()
    #: a table owned along foreign keys: the relation read instead of the table (its columns,
    #: ``__pdp_rowid`` and the owner columns the slots name; :mod:`provsql_dp.sql.foreign_owners`)
    source: str | None = None
    #: with ``source``: ``(columns, ref schema, ref table, ref columns)`` of the first hop — a row
    #: has the owners of the ``ref table`` row whose ``ref columns`` equal its ``columns``
    owner_ref: tuple = ()

    @property
    def children(self) -> tuple:
        return ()

    @property
    def from_sql(self) -> str:
        """What a query reads the scan's rows from (the table, or its owner-resolving join)."""
        return self.source if self.source is not None else self.qualified

    @property
    def rowid_sql(self) -> str:
        return "__pdp_rowid" if self.source is not None else "rowid"

    @property
    def qualified(self) -> str:
        parts = [p for p in (self.catalog, self.schema, self.table) if p]
        return ".".join(_quote(p) for p in parts)


@dataclass(frozen=True)
class Filter:
    child: Node
    predicate: exp.Expression

    @property
    def ids(self) -> tuple[str, ...]:
        return self.child.ids

    @property
    def names(self) -> tuple[str, ...]:
        return self.child.names

    @property
    def children(self) -> tuple:
        return (self.child,)


@dataclass(frozen=True)
class Project:
    child: Node
    exprs: tuple[exp.Expression, ...]
    ids: tuple[str, ...]
    names: tuple[str, ...]

    @property
    def children(self) -> tuple:
        return (self.child,)


@dataclass(frozen=True)
class Join:
    """Inner join (``condition`` None: cross product)."""

    left: Node
    right: Node
    condition: exp.Expression | None = None

    @property
    def ids(self) -> tuple[str, ...]:
        return self.left.ids + self.right.ids

    @property
    def names(self) -> tuple[str, ...]:
        return self.left.names + self.right.names

    @property
    def children(self) -> tuple:
        return (self.left, self.right)


class _LeftRows:
    """A node whose rows are some of its left child's (semi- and anti-joins): its columns are
    the left ones; both sides are children."""

    @property
    def ids(self) -> tuple[str, ...]:
        return self.left.ids

    @property
    def names(self) -> tuple[str, ...]:
        return self.left.names

    @property
    def children(self) -> tuple:
        return (self.left, self.right)


@dataclass(frozen=True)
class SemiJoin(_LeftRows):
    """``left ⋉ right``: the rows of ``left`` that have a match in ``right`` under ``condition``
    (over ``left.ids + right.ids``; ``IN (subquery)``, ``EXISTS``). Each left row is kept once,
    however many matches it has — a semi-join does not multiply rows as a join does — and its
    annotation is its own AND the OR of its matches' annotations (the existence of a match).
    Its columns are the left ones. ``local``: every match is public or owned only by owners of
    its left row (:func:`provsql_dp.sql.owner_fd.inner_owners_local`), so the annotation is the
    left row's own (absorption) and the capture reads it as a filter."""

    left: Node
    right: Node
    condition: exp.Expression
    local: bool = False


@dataclass(frozen=True)
class AntiJoin(_LeftRows):
    """``left ▷ right``: the rows of ``left`` with no match in ``right`` under ``condition``
    (``NOT EXISTS``). Admitted only when every possible match is public or owned only by owners
    of its left row (:mod:`provsql_dp.sql.owner_fd`): the anti-join is then evaluated on the
    whole database and the left row keeps its own annotation — a positive formula."""

    left: Node
    right: Node
    condition: exp.Expression


@dataclass(frozen=True)
class OneRow:
    """The public relation of one row and no column: what ``SELECT 1`` (no FROM) projects from,
    and each row of a ``VALUES`` list (a union of such projections)."""

    @property
    def ids(self) -> tuple[str, ...]:
        return ()

    @property
    def names(self) -> tuple[str, ...]:
        return ()

    @property
    def children(self) -> tuple:
        return ()


@dataclass(frozen=True)
class GroupFilter:
    """``SELECT keys FROM child GROUP BY keys HAVING having``: one row per group whose
    aggregates pass ``having`` (an expression over ``child.ids`` holding aggregates). The
    planner admits it only where its provenance is exact (:mod:`provsql_dp.sql.grouped`): the
    child is public (annotation True) or the keys determine every participant of a group's rows
    (each group is one conjunction of participants, all of whose rows it holds)."""

    child: Node
    exprs: tuple[exp.Expression, ...]
    ids: tuple[str, ...]
    names: tuple[str, ...]
    having: exp.Expression
    keys: tuple[exp.Expression, ...] = ()  # the GROUP BY expressions, over ``child.ids``

    @property
    def children(self) -> tuple:
        return (self.child,)


@dataclass(frozen=True)
class Union:
    """Bag union (UNION ALL) of children with the same arity; output columns renamed to ``ids``."""

    inputs: tuple[Node, ...]
    ids: tuple[str, ...]
    names: tuple[str, ...]

    @property
    def children(self) -> tuple:
        return self.inputs


@dataclass(frozen=True)
class Distinct:
    """Duplicate elimination: equal rows merge, their annotations are OR-ed."""

    child: Node

    @property
    def ids(self) -> tuple[str, ...]:
        return self.child.ids

    @property
    def names(self) -> tuple[str, ...]:
        return self.child.names

    @property
    def children(self) -> tuple:
        return (self.child,)


@dataclass(frozen=True)
class Aggregate:
    """The final linear aggregate ``Σ_t q(t)`` over the tuples of ``child``.

    ``weight`` is None for a count (q(t) = 1) or an expression over ``child.ids`` for a sum.
    ``group_by`` lists ids of ``child`` whose values split the release into groups.
    ``bounds`` are the declared bounds of a SUM's bare column (``SET BOUNDS``), or None.
    """

    child: Node
    kind: str  # "count" | "sum"
    weight: exp.Expression | None = None
    group_by: tuple[str, ...] = ()
    label: str = field(default="count")
    bounds: tuple[float, float] | None = None

    @property
    def ids(self) -> tuple[str, ...]:
        return self.child.ids

    @property
    def names(self) -> tuple[str, ...]:
        return self.child.names

    @property
    def children(self) -> tuple:
        return (self.child,)


@dataclass(frozen=True)
class AggregateColumn:
    """One aggregate of the select list: its label, its kind (``count``, ``sum`` or ``avg``) and
    the indices of the :class:`Aggregates` parts it is computed from (two for AVG: SUM, COUNT)."""

    label: str
    kind: str
    parts: tuple[int, ...]


@dataclass(frozen=True)
class Aggregates:
    """Several aggregates in one select list (or an AVG): each part is an :class:`Aggregate`
    over the same rows and groups, released with its share of ε; ``columns`` says how the
    released parts make the output columns."""

    parts: tuple[Aggregate, ...]
    columns: tuple[AggregateColumn, ...]

    @property
    def group_by(self) -> tuple[str, ...]:
        return self.parts[0].group_by

    @property
    def children(self) -> tuple:
        return self.parts


Node = (Scan | Filter | Project | Join | SemiJoin | AntiJoin | OneRow | GroupFilter | Union | Distinct
        | Aggregate | Aggregates)


def walk(node: Node):
    """Pre-order traversal of a plan."""
    yield node
    for child in node.children:
        yield from walk(child)


def explain(node: Node, indent: int = 0) -> str:
    """A readable, one-node-per-line rendering of a plan (used in golden tests and EXPLAIN).

    >>> print(explain(Scan(table="t", schema="main", columns=("a",), ids=("v0",), names=("a",))))
    Scan main.t [a→v0]
    """
    pad = "  " * indent
    if isinstance(node, Scan):
        cols = ", ".join(f"{c}→{i}" for c, i in zip(node.columns, node.ids))
        prot = ""
        if node.slots:
            prot = " protected " + ", ".join(
                f"{s.domain}:{s.column or s.kind if s.kind != 'composite' else '(' + ','.join(s.key_columns) + ')'}"
                for s in node.slots
            )
        line = f"{pad}Scan {node.schema}.{node.table} [{cols}]{prot}"
    elif isinstance(node, Filter):
        line = f"{pad}Filter {node.predicate.sql(dialect='duckdb')}"
    elif isinstance(node, Project):
        cols = ", ".join(
            f"{e.sql(dialect='duckdb')}→{i}" for e, i in zip(node.exprs, node.ids)
        )
        line = f"{pad}Project [{cols}]"
    elif isinstance(node, Join):
        cond = node.condition.sql(dialect="duckdb") if node.condition is not None else "TRUE"
        line = f"{pad}Join ON {cond}"
    elif isinstance(node, SemiJoin):
        local = " (owner-local)" if node.local else ""
        line = f"{pad}SemiJoin ON {node.condition.sql(dialect='duckdb')}{local}"
    elif isinstance(node, AntiJoin):
        line = f"{pad}AntiJoin ON {node.condition.sql(dialect='duckdb')} (owner-local)"
    elif isinstance(node, OneRow):
        line = f"{pad}OneRow"
    elif isinstance(node, GroupFilter):
        cols = ", ".join(f"{e.sql(dialect='duckdb')}→{i}" for e, i in zip(node.exprs, node.ids))
        line = f"{pad}GroupFilter [{cols}] HAVING {node.having.sql(dialect='duckdb')}"
    elif isinstance(node, Union):
        line = f"{pad}Union ALL [{', '.join(node.ids)}]"
    elif isinstance(node, Distinct):
        line = f"{pad}Distinct"
    elif isinstance(node, Aggregate):
        w = node.weight.sql(dialect="duckdb") if node.weight is not None else "1"
        g = f" GROUP BY {', '.join(node.group_by)}" if node.group_by else ""
        b = f" bounds=[{node.bounds[0]:g}, {node.bounds[1]:g}]" if node.bounds else ""
        line = f"{pad}Aggregate {node.kind.upper()} weight={w}{g}{b}"
    elif isinstance(node, Aggregates):
        cols = ", ".join(f"{c.label}={c.kind.upper()}{list(c.parts)}" for c in node.columns)
        line = f"{pad}Aggregates [{cols}]"
    else:  # pragma: no cover
        raise TypeError(f"not a plan node: {node!r}")
    lines = [line] + [explain(c, indent + 1) for c in node.children]
    return "\n".join(lines)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
