"""DuckDB's ``SHOW t`` of a curator, with ``t``'s names quoted (:mod:`.show_names`): a table
named with a keyword (``group``) is otherwise DuckDB's own syntax error."""

from __future__ import annotations

from sqlglot.errors import ParseError

from .dialect import parse_one
from .show_names import shown_table

__all__ = ["quoted_show"]


def quoted_show(stmt: str) -> str:
    """DuckDB's ``SHOW t`` (:func:`shown_table`) with every part of ``t`` quoted, or ``stmt``
    itself for any other statement: ``SHOW group`` describes the table ``group``, which DuckDB
    reads as a syntax error unless the name is quoted.

    >>> quoted_show("SHOW group"), quoted_show("show main.group;"), quoted_show("SHOW TABLES")
    ('SHOW "group"', 'SHOW "main"."group"', 'SHOW TABLES')
    """
    if stmt.lstrip()[:4].upper() != "SHOW":
        return stmt
    try:
        table = shown_table(parse_one(stmt))
    except ParseError:
        return stmt
    return stmt if table is None else "SHOW " + table.sql(dialect="duckdb", identify=True)
