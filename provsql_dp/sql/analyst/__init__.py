"""The analyst statement compiler: nothing an analyst types reaches DuckDB.

Every non-private statement of an analyst is parsed (our dialect), checked and **re-emitted
by us**; DuckDB runs only the text we emit (or nothing, when the catalog answers). The
statement kinds an analyst may run are an allow-list (:data:`ANALYST_KINDS`):

=============================================  ==============================================
``SELECT`` / set operations / ``VALUES`` /     compiled (:mod:`._query`): every table name
FROM-first / ``PIVOT`` / ``UNPIVOT``           resolved by scope, checked, fully qualified;
                                               CTEs renamed fresh; views inlined, checked
``DESCRIBE <table>``                           answered from the catalog (no DuckDB statement)
``DESCRIBE <query>``, ``SUMMARIZE <table |     the query compiled, then wrapped by us
query>``, ``EXPLAIN [ANALYZE] <query>``
``SHOW TABLES``, ``SHOW ALL TABLES``           a fixed statement of ours (the schema is public;
                                               provsql_dp's own tables are not listed)
=============================================  ==============================================

Our privacy statements an analyst may run are judged by :mod:`provsql_dp.privacy.roles`;
everything else is refused there, by name, before anything runs.

**Why sqlglot's scope analysis.** The binder that matters is DuckDB's, but it only runs on text
and would read data while binding (``PIVOT`` evaluates its ``ON`` values at bind time). sqlglot's
scope analysis resolves each table reference to the CTE visible in its own scope; we then make
the emitted text unambiguous — fresh CTE names, fully qualified real tables — so that DuckDB's
binder can only agree with our resolution or fail (a fresh name it cannot see is no table).

>>> import duckdb
>>> from provsql_dp.sql.catalog import Catalog
>>> from provsql_dp.sql import dialect as d
>>> con = duckdb.connect()
>>> _ = con.execute("CREATE TABLE t(a INT PRIMARY KEY, s VARCHAR)")
>>> compile_statement(Catalog(con), d.parse_one("DESCRIBE t")).rows
[('a', 'INTEGER', 'NO', 'PRI', None, None), ('s', 'VARCHAR', 'YES', None, None, None)]
>>> _ = Catalog(con).ensure()
>>> [r[1:3] for r in con.execute(compile_statement(Catalog(con), d.parse_one("SHOW ALL TABLES")).sql).fetchall()]
[('main', 't')]
>>> compile_statement(Catalog(con), d.parse_one("SUMMARIZE t")).sql
'SUMMARIZE SELECT * FROM "memory"."main"."t" AS t'
>>> compile_statement(Catalog(con), d.parse_one("SELECT * FROM read_text('/etc/passwd')"))
Traceback (most recent call last):
...
provsql_dp.errors.PrivacyError: an analyst cannot use the table function READ_TEXT('/etc/passwd'): only tables of the database can be read
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp
from sqlglot.errors import ParseError

from ...errors import PrivacyError
from .. import dialect as d
from ..catalog import SCHEMA, Catalog
from ..show_names import shown_table
from ._query import MAX_VIEW_DEPTH, compile_query, refuse

__all__ = ["Compiled", "compile_statement", "ANALYST_KINDS", "refuse", "MAX_VIEW_DEPTH"]

#: the statement kinds (besides our privacy statements) an analyst may run
ANALYST_KINDS = ("SELECT", "set operations (UNION, INTERSECT, EXCEPT)", "VALUES", "FROM-first",
                 "PIVOT", "UNPIVOT", "DESCRIBE", "SUMMARIZE", "EXPLAIN", "SHOW TABLES",
                 "SHOW ALL TABLES")

_DESCRIBE_COLUMNS = [("column_name", "VARCHAR"), ("column_type", "VARCHAR"), ("null", "VARCHAR"),
                     ("key", "VARCHAR"), ("default", "VARCHAR"), ("extra", "VARCHAR")]


@dataclass
class Compiled:
    """What an analyst statement becomes: ``sql`` (our text, for DuckDB) or, answered from the
    catalog, ``description`` and ``rows``."""

    kind: str
    sql: str | None = None
    description: list[tuple[str, str]] | None = None
    rows: list[tuple] | None = None


def _is_query(tree: exp.Expression) -> bool:
    return isinstance(tree, (exp.Query, exp.Values, exp.Pivot))


def compile_statement(catalog: Catalog, tree: exp.Expression) -> Compiled | None:
    """Compile the analyst statement ``tree`` (parameters already bound); None when its kind is
    not on the allow-list (the caller refuses it by name). Raises :class:`PrivacyError` when the
    kind is allowed but the statement reads what an analyst may not."""
    with catalog.snapshot():  # one read of the schema and declarations per statement
        return _compile(catalog, tree)


def _compile(catalog: Catalog, tree: exp.Expression) -> Compiled | None:
    if _is_query(tree):
        kind = "PIVOT" if isinstance(tree, exp.Pivot) else "query"
        return Compiled(kind, sql=compile_query(catalog, tree)[0])
    if isinstance(tree, exp.Describe):
        extra = sorted(k for k, v in tree.args.items() if v and k != "this")
        if extra:
            raise refuse(f"DESCRIBE with {extra[0].upper()}")
        if isinstance(tree.this, exp.Table):
            return _describe_table(catalog, tree.this)
        if _is_query(tree.this):
            return Compiled("DESCRIBE", sql="DESCRIBE " + compile_query(catalog, tree.this)[0])
        return None
    if isinstance(tree, exp.Summarize):
        inner = tree.this
        if isinstance(inner, exp.Table):
            inner = exp.select("*").from_(inner)
        if not _is_query(inner):
            return None
        return Compiled("SUMMARIZE", sql="SUMMARIZE " + compile_query(catalog, inner)[0])
    if isinstance(tree, exp.Show):
        which = str(tree.name).upper()
        if which in ("TABLES", "ALL TABLES") and not any(
                v for k, v in tree.args.items() if k != "this"):
            # a fixed text of ours; provsql_dp's internal tables (the ledger, the audit log,
            # …) are not the analyst's to list (their names and columns, red team h85attack)
            sql = _ALL_TABLES if which == "ALL TABLES" else f"SHOW {which}"
            return Compiled(f"SHOW {which}", sql=sql)
        return None
    if shown_table(tree) is not None:  # DuckDB's SHOW t: DESCRIBE t (sql.show_names)
        return _describe_table(catalog, shown_table(tree))
    if isinstance(tree, exp.Command) and str(tree.this).upper() == "EXPLAIN":
        return _explain(catalog, tree)
    return None


def _explain(catalog: Catalog, tree: exp.Command) -> Compiled:
    rest = tree.expression.name if isinstance(tree.expression, exp.Literal) else ""
    head = "EXPLAIN "
    words = rest.split(None, 1)
    if words and words[0].upper() == "ANALYZE":
        head, rest = "EXPLAIN ANALYZE ", (words[1] if len(words) > 1 else "")
    try:
        inner = d.parse_one(rest)
    except ParseError:
        raise refuse("EXPLAIN of this statement: only EXPLAIN [ANALYZE] <query> is allowed") from None
    if not _is_query(inner):
        raise refuse(f"EXPLAIN of {type(inner).__name__.upper()}: only EXPLAIN [ANALYZE] <query> "
                     "is allowed")
    return Compiled("EXPLAIN", sql=head + compile_query(catalog, inner)[0])


_ALL_TABLES = (f"SELECT * FROM (SHOW ALL TABLES) WHERE lower(\"schema\") <> '{SCHEMA.lower()}' "
               'ORDER BY "database", "schema", "name"')


def _describe_table(catalog: Catalog, table: exp.Table) -> Compiled:
    """``DESCRIBE <table or view>`` from the catalog: schemas are public, protected ones too;
    nothing is bound, so no data is read (a view's body is not expanded)."""
    if not isinstance(table.this, exp.Identifier):
        raise PrivacyError(
            f"an analyst cannot use the table function {table.this.sql(dialect='duckdb')}: "
            "only tables of the database can be read")
    parts = [p.name for p in table.parts]
    info = catalog.find_table(parts)
    if info is None or info.schema.lower() == SCHEMA.lower():  # provsql_dp's own: not shown
        raise PrivacyError(
            f"an analyst can describe only tables of the database; {'.'.join(parts)!r} is not one")
    keys = catalog.unique_keys(info) if info.view_sql is None and not info.frame else ()
    primary = set(catalog.primary_key(info)) if keys else set()
    unique = {k[0] for k in keys if len(k) == 1} - primary
    rows = catalog.con.execute(
        """SELECT column_name, data_type, CASE WHEN is_nullable THEN 'YES' ELSE 'NO' END,
                  column_default
             FROM duckdb_columns()
            WHERE database_name = ? AND schema_name = ? AND table_name = ?
            ORDER BY column_index ASC""",
        [info.catalog, info.schema, info.name]).fetchall()
    out = [(n, t, "NO" if n in primary else null,
            "PRI" if n in primary else ("UNI" if n in unique else None), default, None)
           for n, t, null, default in rows]
    return Compiled("DESCRIBE", description=list(_DESCRIBE_COLUMNS), rows=out)
