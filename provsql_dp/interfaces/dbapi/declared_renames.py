"""A curator's ``ALTER TABLE t RENAME TO u`` of a protected table: refused, naming the way.

Declarations are stored by table name. Renamed, a protected table kept its rows under a name no
declaration names — a public table, every row readable by any analyst (``SELECT * FROM u``) —
while ``SHOW PROTECTED`` still listed ``t`` as protected (red team h85attack-3). The rename is
refused before it runs; the curator unprotects, renames and protects again, or copies the rows
knowingly (``CREATE TABLE u AS SELECT * FROM t``). A rename made outside provsql_dp (DuckDB's own
client) is out of reach here.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE people(id INT PRIMARY KEY); PROTECT TABLE people")
>>> con.execute("ALTER TABLE people RENAME TO staff")
Traceback (most recent call last):
...
provsql_dp.errors.DeclarationError: cannot rename the protected table 'people': its declarations name it, and under 'staff' its rows would be a public table any analyst reads. UNPROTECT TABLE people, rename it, then PROTECT TABLE staff … again (and its bounds, group keys and the tables owned along its foreign keys)
>>> _ = con.execute("CREATE TABLE notes(x INT); ALTER TABLE notes RENAME TO memos")
"""

from __future__ import annotations

import re

from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from ...errors import DeclarationError
from ...sql import dialect as d
from .declared_columns import alter_action, refuse_declared_column_change
from .declared_drops import _refuse_shadow, refuse_orphan_name

__all__ = ["refuse_protected_rename"]

#: a cheap pre-filter on the words (a leading comment, ``/* … */ ALTER TABLE``, is no escape:
#: the parse decides)
_WORDS = (re.compile(r"\bALTER\b", re.IGNORECASE), re.compile(r"\bRENAME\b", re.IGNORECASE))


def refuse_protected_rename(con, stmt: str) -> None:
    """Raise :class:`~provsql_dp.errors.DeclarationError` when ``stmt`` renames a protected
    table of ``con``'s database, or changes a column a declaration names
    (:mod:`.declared_columns`), from the statement and the declarations; nothing runs."""
    if not _WORDS[0].search(stmt):
        return
    refuse_declared_column_change(con, stmt)
    if not _WORDS[1].search(stmt) or alter_action(stmt) is not None:
        return  # not a rename, or a column's (ALTER TABLE t RENAME c TO d)
    try:
        tree = d.parse_one(stmt)
    except (ParseError, TokenError):
        return  # not ours to judge: DuckDB refuses it or runs what it understood
    if not isinstance(tree, exp.Alter) or (tree.args.get("kind") or "").upper() not in (
            "TABLE", "VIEW"):
        return
    renames = [a for a in tree.args.get("actions") or () if isinstance(a, exp.AlterRename)]
    if not renames or not isinstance(tree.this, exp.Table):
        return
    cat = con._catalog
    info = cat.find_table([p.name for p in tree.this.parts])
    new = renames[0].this.name if isinstance(renames[0].this, exp.Table) else "the new name"
    if info is None:
        return
    if info.catalog.lower() == "temp" and isinstance(renames[0].this, exp.Table):
        return _refuse_shadow(con, f"rename the table {info.name!r} to", new)  # as CREATE TEMP
    if cat.protection(info.schema, info.name) is None:
        if isinstance(renames[0].this, exp.Table):  # an orphan's name: its declarations
            refuse_orphan_name(con, f"rename {info.name!r} to", info.schema, new)
        return
    raise DeclarationError(
        f"cannot rename the protected table {info.name!r}: its declarations name it, and under "
        f"{new!r} its rows would be a public table any analyst reads. UNPROTECT TABLE "
        f"{info.name}, rename it, then PROTECT TABLE {new} … again (and its bounds, group keys "
        "and the tables owned along its foreign keys)")
