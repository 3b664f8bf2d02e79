"""Whether a statement reads any protected table, judged from its text and the catalog.

A private statement that reads no protected table has nothing to protect: the answer is the
refusal "run it without its privacy clause", whatever else it holds. TPC-H Q11 (``partsupp ⋈
supplier ⋈ nation … HAVING SUM(…) > (SELECT SUM(…) * 0.0001 …)``) reads none of the tables a
customer owns; refused for its subquery in HAVING, it would send the analyst looking for a
workaround when the query is public. :func:`split_private` is :func:`~.post_split.split_post`
with that reason first.

Only the decisive case is named: every table the statement names is a base table (no view, no
table function, no name the catalog does not know) and none is protected. Anything else keeps
the statement's own refusal.

>>> import duckdb
>>> from provsql_dp.sql.catalog import Catalog
>>> from provsql_dp.sql.dialect import parse_one
>>> con = duckdb.connect()
>>> _ = con.execute("CREATE TABLE nation(n INT, v INT)")
>>> reads_no_protected(Catalog(con), parse_one(
...     "WITH w AS (SELECT * FROM nation) SELECT n, SUM(v) FROM w GROUP BY n"))
True
>>> reads_no_protected(Catalog(con), parse_one("SELECT COUNT(*) FROM read_csv('x.csv')"))
False
>>> split_private(Catalog(con), parse_one(
...     "SELECT n FROM nation GROUP BY n HAVING SUM(v) > (SELECT SUM(v) FROM nation)"))
Traceback (most recent call last):
  ...
provsql_dp.errors.UnsupportedQueryError: the query reads no protected table, so there is nothing to protect; run it without its privacy clause (WITH EPSILON / WITH ACCURACY)
"""

from __future__ import annotations

from sqlglot import exp

from ..errors import UnsupportedQueryError
from .catalog import Catalog
from .post_split import Post, split_post
from .public_values import public_values

__all__ = ["NOTHING_TO_PROTECT", "reads_no_protected", "split_private"]

NOTHING_TO_PROTECT = ("the query reads no protected table, so there is nothing to protect; "
                      "run it without its privacy clause (WITH EPSILON / WITH ACCURACY)")


def reads_no_protected(catalog: Catalog, tree: exp.Expression) -> bool:
    """True when every table ``tree`` names is a known base table and none is protected."""
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    protected = {(p.schema.lower(), p.table.lower()) for p in catalog.list_protected()}
    for t in tree.find_all(exp.Table):
        if not isinstance(t.this, exp.Identifier):
            return False  # a table function: not judged here
        parts = [p.name for p in t.parts]
        if len(parts) == 1 and parts[0].lower() in ctes:
            continue  # its body's tables are found on their own
        info = catalog.find_table(parts)
        if info is None or info.view_sql is not None:
            return False
        if (info.schema.lower(), info.name.lower()) in protected:
            return False
    return True


def split_private(catalog: Catalog, tree: exp.Expression) -> tuple[exp.Expression, Post | None]:
    """:func:`~.post_split.split_post`, except that a statement it refuses and that reads no
    protected table is refused for that: :data:`NOTHING_TO_PROTECT`. Public values written as
    peers write them are made plain first (:func:`.public_values.public_values`)."""
    tree = public_values(tree, catalog.con)
    try:
        return split_post(tree)
    except UnsupportedQueryError as err:
        if reads_no_protected(catalog, tree):
            raise UnsupportedQueryError(NOTHING_TO_PROTECT) from err
        raise
