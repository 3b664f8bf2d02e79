"""What the single-table statement routes (quantile, variance, distinct count) share: the one
protected table a statement reads, read from the declarations only, never from its rows.

>>> import provsql_dp, sqlglot
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE p(id INT PRIMARY KEY, x DOUBLE); PROTECT TABLE p")
>>> t = one_table(con, sqlglot.parse_one("SELECT VAR_POP(x) FROM p", read="duckdb"), "VAR_POP")
>>> t.info.name, t.column("X"), t.table_sql
('p', 'x', '"memory"."main"."p"')
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from ..errors import ProgrammingError, UnsupportedQueryError
from ..provenance.capture import q as quote
from .policy_route import row_per_participant

__all__ = ["OneTable", "one_table", "select_of"]


def select_of(tree):
    """The SELECT of a statement (parentheses without an alias dropped), with an aggregate's
    ``FILTER (WHERE c)`` moved into the WHERE when it is the select list's only aggregate (the
    single-table routes release one aggregate: over the rows where ``c`` holds, as WHERE says).

    >>> import sqlglot
    >>> t = sqlglot.parse_one("SELECT MEDIAN(x) FILTER (WHERE y > 1) AS m FROM t WHERE z",
    ...                       read="duckdb")
    >>> select_of(t).sql(dialect="duckdb")
    'SELECT MEDIAN(x) AS m FROM t WHERE z AND (y > 1)'
    """
    while isinstance(tree, exp.Subquery) and not tree.alias:
        tree = tree.this
    if not isinstance(tree, exp.Select):
        return tree
    filters = [e for e in tree.expressions if isinstance(e.unalias(), exp.Filter)]
    if len(filters) != 1 or sum(1 for e in tree.expressions if e.find(exp.AggFunc)) != 1:
        return tree
    tree = tree.copy()
    item = next(e for e in tree.expressions if isinstance(e.unalias(), exp.Filter))
    filt = item.unalias()
    cond = filt.expression.this if isinstance(filt.expression, exp.Where) else filt.expression
    filt.replace(filt.this)
    return tree.where(exp.paren(cond), copy=False)


@dataclass(frozen=True)
class OneTable:
    """The table of a single-table private statement (row per participant)."""

    info: object
    lower: dict          # lower-cased column name → column name
    types: dict          # column name → DuckDB type
    table_sql: str
    owner: str | None = None  # the owner column when a participant may own several rows

    def column(self, name: str) -> str | None:
        return self.lower.get(name.lower())


def one_table(con, sel, statistic: str, owned: bool = False) -> OneTable:
    """The one protected, row-per-participant table ``sel`` reads directly; refusals name the
    statistic (nothing is charged). ``owned``: also accept a table protected ``BY (owner)``
    whose owner is not declared unique (a participant may own several rows): its
    :attr:`OneTable.owner` names the column."""
    from_ = sel.args.get("from_") or sel.args.get("from")
    if from_ is None or not isinstance(from_.this, exp.Table) or sel.args.get("joins"):
        raise UnsupportedQueryError(f"{statistic} reads one protected table directly (no join, "
                                    "no subquery in FROM)")
    t = from_.this
    info = con.catalog.find_table([p for p in (t.catalog, t.db, t.name) if p])
    if info is None:
        raise ProgrammingError(f"table {t.name!r} does not exist")
    prot = con.catalog.protection(info.schema, info.name)
    ok, why = row_per_participant(con, info, prot)
    owner = None
    if not ok and owned and prot is not None and len(prot.by_columns) == 1 \
            and prot.references is None:  # owned along a foreign key: refused with its reason
        owner = prot.by_columns[0]
    elif not ok:
        raise UnsupportedQueryError(f"{statistic} cannot be released: {why}")
    table_sql = ".".join(quote(p) for p in (info.catalog, info.schema, info.name) if p)
    return OneTable(info, {c.lower(): c for c in info.columns},
                    dict(zip(info.columns, info.types)), table_sql, owner)


def key_filter(group: str, group_type: str, keys) -> str:
    """``g IN (TRY_CAST('k' AS T), …)``: the rows of a release's declared group keys."""
    vals = ", ".join(f"TRY_CAST({exp.Literal.string(str(k)).sql(dialect='duckdb')} AS "
                     f"{group_type})" for k in keys)
    return f"{quote(group)} IN ({vals})"


def rows_sql(q) -> tuple[str, str]:
    """``(group column, WHERE condition)`` of a single-table release ``q`` (``column``,
    ``where_sql``, ``group``, ``group_type``, ``keys``) over the non-NULL values of its column:
    the group column is ``"g AS __g, "`` when grouped (else empty)."""
    conds = [f"({q.where_sql})"] if q.where_sql else []
    conds.append(f"{quote(q.column)} IS NOT NULL")
    if q.group is None:
        return "", " AND ".join(conds)
    conds.append(key_filter(q.group, q.group_type, q.keys))
    return f"{quote(q.group)} AS __g, ", " AND ".join(conds)

