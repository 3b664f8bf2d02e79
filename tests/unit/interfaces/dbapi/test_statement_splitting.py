"""The wire server splits a Query message with :func:`split_statements` and sends each piece on:
an analyst's catalog query (``pg_catalog``) runs as written on the schema replica, so a piece
must be exactly one statement for DuckDB too — else a second statement hidden in a string or a
comment would run there unchecked (h57attack). Our splitter and DuckDB's agree on the shapes
where SQL dialects differ: escape strings, dollar quotes, nested comments, quoted identifiers.
"""

from __future__ import annotations

import duckdb
import pytest

from provsql_dp.interfaces.dbapi.statements import split_statements

TAIL = "SELECT 42 AS pwn; --"


@pytest.mark.parametrize("sql", [
    f"SELECT E'\\';{TAIL}' FROM pg_catalog.pg_class",
    f"SELECT 'a\\';{TAIL}' FROM pg_catalog.pg_class",
    f"SELECT $$a$$;{TAIL}$$ FROM pg_catalog.pg_class",
    f"SELECT $x$ $$ $x$;{TAIL}$x$ FROM pg_catalog.pg_class",
    f"SELECT 1 FROM pg_catalog.pg_class /* /* */ ;{TAIL} */",
    f"SELECT \"a\\\";{TAIL}\" FROM pg_catalog.pg_class",
    f"SELECT 1 FROM pg_catalog.pg_class WHERE 'x' = U&'\\0027';{TAIL}'",
    f"SELECT 1 FROM pg_catalog.pg_class -- x\r;{TAIL}",
    f"SELECT b'0';{TAIL}' FROM pg_catalog.pg_class",
])
def test_pieces_are_duckdbs_statements(sql):
    ours = split_statements(sql)
    theirs = [s.query.strip().rstrip(";").strip() for s in duckdb.connect().extract_statements(sql)]
    theirs = [t for t in theirs if t and not t.startswith("--")]
    assert len(ours) == len(theirs), (ours, theirs)
