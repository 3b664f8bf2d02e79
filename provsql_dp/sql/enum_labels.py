"""ENUM columns of a protected table: their labels are shown to analysts and taken as public.

An ENUM type lists its labels, and DuckDB spells them in the column's type: ``DESCRIBE``,
``SHOW t``, ``SHOW ALL TABLES`` and the wire's catalog (psql's ``\\d``) show them to every analyst,
for nothing, and the policy route takes them as the column's public domain (a histogram over
``GROUP BY c`` releases one bin per label, :mod:`provsql_dp.privacy.policy_route`). That holds
when the curator wrote the labels (``CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')``). It does
not when they came from the data: a pandas ``Categorical`` column loaded with ``CREATE TABLE t AS
SELECT * FROM df`` becomes an ENUM of the column's distinct values, and so does ``CREATE TYPE t
AS ENUM (SELECT DISTINCT c FROM …)`` — the label 'bob-rare-condition' is there because one
participant has it (red team h103attack, finding 3).

provsql_dp cannot tell the two apart, so the curator says which: a protected table's ENUM column
needs its labels declared public — all of them: ``SET GROUP KEYS ON t (c) VALUES (…)`` (or
``FROM`` a public table) — or is cast to ``VARCHAR`` first. ``PROTECT
TABLE`` refuses one without, and so does an ``ALTER TABLE`` that gives a protected table an ENUM
column (:func:`refuse_enum_alter`). A change made outside provsql_dp is out of reach here.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE p(id INT PRIMARY KEY, name ENUM('ann', 'bob'))")
>>> con.execute("PROTECT TABLE p")
Traceback (most recent call last):
...
provsql_dp.errors.DeclarationError: cannot protect 'p': its column name is an ENUM, whose labels every analyst sees (DESCRIBE, SHOW, \\d) and which are taken as the column's public domain; labels loaded from the data (a pandas Categorical, CREATE TYPE … AS ENUM (SELECT …)) list the participants' values. Cast it to VARCHAR (ALTER TABLE p ALTER name TYPE VARCHAR), or, if the labels are public, declare them all: SET GROUP KEYS ON p (name) VALUES (…)
"""

from __future__ import annotations

from sqlglot.errors import TokenError

from ..errors import DeclarationError

__all__ = ["refuse_enum_columns", "refuse_enum_alter"]


def _is_enum(sql_type: str) -> bool:
    return "ENUM(" in sql_type.upper()


def _declared_public(duck, catalog_schema: str, schema: str, table: str, column: str,
                     sql_type: str | None) -> bool:
    """Whether group keys on ``column`` declare every label of its ENUM type ``sql_type`` public
    (keys naming some labels leave the others, shown all the same, undeclared); ``sql_type`` None:
    whether any are declared (an ALTER's new type is read from its statement). Read from the
    declarations' table in ``catalog_schema`` (this module sits below the catalog's readers)."""
    if not duck.execute("SELECT count(*) FROM duckdb_tables() WHERE schema_name = ? AND "
                        "table_name = 'group_keys'", [catalog_schema]).fetchone()[0]:
        return False
    row = duck.execute(
        f'SELECT key_values, source_schema, source_table, source_column FROM "{catalog_schema}"'
        ".group_keys WHERE lower(schema_name) = lower(?) AND lower(table_name) = lower(?) AND "
        "lower(column_name) = lower(?)", [schema, table, column]).fetchone()
    if row is None or sql_type is None:
        return row is not None
    labels = {r[0] for r in duck.execute(f"SELECT unnest(enum_range(NULL::{sql_type}))").fetchall()}
    values, s_schema, s_table, s_column = row
    if values is not None:
        return labels <= set(values)
    ident = '"{}"'.format
    found = duck.execute(
        f"SELECT DISTINCT CAST({ident(s_column)} AS VARCHAR) FROM "
        f"{ident(s_schema)}.{ident(s_table)}").fetchall()
    return labels <= {r[0] for r in found}


def _message(doing: str, table: str, column: str, top_level: bool) -> str:
    declare = (f", or, if the labels are public, declare them all: SET GROUP KEYS ON {table} "
               f"({column}) VALUES (…)" if top_level else "")
    return (f"cannot {doing}: its column {column} is an ENUM, whose labels every analyst sees "
            "(DESCRIBE, SHOW, \\d) and which are taken as the column's public domain; labels "
            "loaded from the data (a pandas Categorical, CREATE TYPE … AS ENUM (SELECT …)) list "
            f"the participants' values. Cast it to VARCHAR (ALTER TABLE {table} ALTER {column} "
            f"TYPE VARCHAR){declare}")


def refuse_enum_columns(duck, catalog_schema: str, info) -> None:
    """Raise :class:`~provsql_dp.errors.DeclarationError` when the table ``info`` (a
    :class:`~provsql_dp.sql.catalog.TableInfo` about to be protected) has an ENUM column (or a
    list or struct of one) whose labels no declaration makes public."""
    for column, sql_type in zip(info.columns, info.types):
        if not _is_enum(sql_type):
            continue
        top_level = sql_type.upper().startswith("ENUM(") and sql_type.endswith(")")
        if top_level and _declared_public(duck, catalog_schema, info.schema, info.name, column,
                                          sql_type):
            continue
        raise DeclarationError(_message(f"protect {info.name!r}", info.name, column, top_level))


def refuse_enum_alter(con, catalog_schema: str, info, column: str, stmt: str) -> None:
    """Raise when ``stmt``, an ``ALTER TABLE`` adding ``column`` to the protected table ``info``
    or changing its type, gives it an ENUM type (read from the statement's tokens: the word
    ``ENUM``, the name of an ENUM type of the database or of a type made of one, ``CREATE TYPE
    moods AS mood[]``) that no declaration makes public."""
    from . import dialect as d

    try:
        words = {t.text.lower() for t in d.ProvDP().tokenize(stmt)}
    except TokenError:
        return
    words -= {info.name.lower(), info.schema.lower(), column.lower()}  # a table named as a type
    enums = {r[0].lower() for r in con._duck.execute(
        "SELECT DISTINCT type_name FROM duckdb_types() WHERE logical_type = 'ENUM'").fetchall()}
    for name, in con._duck.execute(  # an alias of a list, struct, map of one (h114attack-4)
            "SELECT DISTINCT type_name FROM duckdb_types() WHERE NOT internal AND logical_type IN "
            "('LIST', 'ARRAY', 'STRUCT', 'MAP', 'UNION')").fetchall():
        ident = '"' + name.replace('"', '""') + '"'
        if _is_enum(con._duck.execute(f"SELECT typeof(NULL::{ident})").fetchone()[0]):
            enums.add(name.lower())
    if not words & (enums | {"enum"}):
        return
    if _declared_public(con._duck, catalog_schema, info.schema, info.name, column, None):
        return
    raise DeclarationError(_message(f"give the protected table {info.name!r} an ENUM column",
                                    info.name, column, True))
