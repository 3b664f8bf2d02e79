"""Files a curator's ``COPY … TO`` or ``EXPORT DATABASE`` filled with protected rows, remembered
by the connection: reading one back into a table no declaration protects is a copy.

A curator may write protected rows to a file (``COPY people TO 'people.csv'``, ``EXPORT
DATABASE 'backup'``): the file is theirs, outside the database, and no analyst reads a file
through provsql_dp (:mod:`provsql_dp.sql.analyst` refuses ``read_csv``, ``COPY`` and a path as a
table; the guard rails, :mod:`.engines`, refuse them again in DuckDB). But ``CREATE TABLE pub AS
SELECT * FROM read_csv('people.csv')`` then put the rows where every analyst reads them. So the
connection remembers each file (and each export directory) it wrote protected rows to, as it
remembers its TEMP tables (:mod:`.protected_copies`), and counts a read of it — ``read_csv``,
``read_parquet``, ``FROM 'people.csv'``, a glob matching it, ``COPY pub FROM 'people.csv'`` —
as a read of the protected table. A file written again with public rows is forgotten. What
another connection, another process or a later session does with the file is out of reach: the
file has no mark of where its rows came from (provsql_dp's own ``.dump`` writes the declarations
with the rows, so a restored dump is protected again).

>>> import provsql_dp, os, tempfile
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE people(id INT PRIMARY KEY); PROTECT TABLE people")
>>> path = os.path.join(tempfile.mkdtemp(), "people.csv")
>>> _ = con.execute(f"COPY people TO '{path}'")
>>> con.execute(f"CREATE TABLE pub AS SELECT * FROM read_csv('{path}')")
Traceback (most recent call last):
...
provsql_dp.errors.DeclarationError: cannot write the protected rows of people (through the file .../people.csv, written by a COPY of them) into pub, which no declaration protects: every analyst could read them there. Create it empty (CREATE TABLE pub AS SELECT … WITH NO DATA), PROTECT TABLE pub BY (id) AS people (the unit of the rows it copies), then INSERT INTO pub SELECT …; a TEMP table is yours alone
"""

from __future__ import annotations

import fnmatch
import os
import re

from sqlglot import exp

from ...errors import DeclarationError
from ...sql import dialect as d

__all__ = ["FILE_STATEMENT", "file_statement", "held_file"]

#: a statement that writes a file, or reads one into a table
FILE_STATEMENT = re.compile(r"^\s*(?:COPY|EXPORT\s+DATABASE)\b", re.IGNORECASE)
_EXPORT = re.compile(r"""^\s*EXPORT\s+DATABASE\s+(?:(?:"[^"]+"|\w+)\s+TO\s+)?'((?:[^']|'')+)'""",
                     re.IGNORECASE)
_GLOB = re.compile(r"[*?\[]")


def _key(path: str) -> str:
    """A path as DuckDB opens it from this process: absolute, normalized."""
    return os.path.normpath(os.path.abspath(os.path.expanduser(path)))


def held_file(held: dict[tuple[str, str], str], path: str) -> str | None:
    """What a read of ``path`` (a file name or a glob) reads of the files ``held`` remembers as
    holding protected rows, or None."""
    key, glob = _key(path), _GLOB.search(path) is not None
    for (kind, p), source in held.items():
        if kind == "file" and (p == key or glob and fnmatch.fnmatch(p, key)):
            return f"{source} (through the file {p}, written by a COPY of them)"
        if kind == "dir":
            names = source.split(", ")
            inside = key.startswith(p + os.sep) and os.path.splitext(
                os.path.basename(key))[0].lower() in names
            matched = glob and any(fnmatch.fnmatch(os.path.join(p, f"{n}.{ext}"), key)
                                   for n in names for ext in ("csv", "parquet"))
            if inside or matched or key == p:
                return f"{names[0]} (through the directory {p}, written by an EXPORT DATABASE)"
    return None


def file_statement(con, stmt: str, held: dict, source_of, protected, into_protected) -> None:
    """``COPY … TO 'f'`` and ``EXPORT DATABASE 'd'``: remember (in ``held``) whether the file
    holds protected rows, as ``source_of(query)`` finds; ``COPY t FROM 'f'`` of a remembered
    file into a table ``t`` that ``protected(table)`` says is not protected: refused; into a
    protected one, ``into_protected(tree, table, source)`` judges (its unit:
    :mod:`.protected_units`)."""
    export = _EXPORT.match(stmt)
    if export is not None:
        key = _key(export[1].replace("''", "'"))
        names = [p.table.lower() for p in con._catalog.list_protected()]
        held.pop(("dir", key), None)
        if names:
            held["dir", key] = ", ".join(names)
        return
    try:
        tree = d.parse_one(stmt)
    except Exception:  # noqa: BLE001 - DuckDB judges a statement sqlglot does not read
        return
    if not isinstance(tree, exp.Copy):
        return
    files = [f.this for f in tree.args.get("files") or () if isinstance(f, exp.Literal)]
    table = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    if tree.args.get("kind"):  # COPY t FROM 'f'
        source = next((s for f in files if (s := held_file(held, f)) is not None), None)
        if source is not None and isinstance(table, exp.Table) and protected(table):
            return into_protected(tree, table, source)
        if source is not None and isinstance(table, exp.Table):
            name = table.name
            raise DeclarationError(
                f"cannot write the protected rows of {source} into {name}, which no declaration "
                f"protects: every analyst could read them there. PROTECT TABLE {name} first, or "
                "load them into a TEMP table (yours alone)")
        return
    query = table.this if isinstance(table, exp.Subquery) else (
        exp.select("*").from_(table.copy()) if isinstance(table, exp.Table) else table)
    source = source_of(query)
    for f in files:
        held.pop(("file", _key(f)), None)
        if source is not None:
            held["file", _key(f)] = source
