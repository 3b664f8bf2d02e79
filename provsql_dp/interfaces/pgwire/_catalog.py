"""Catalog queries of PostgreSQL clients, answered from a copy of the schema that holds no rows.

psql's ``\\d``, SQLAlchemy's reflection and JDBC's ``DatabaseMetaData`` read ``pg_catalog`` and
``information_schema``. Such a statement never runs on the database: it runs on a **schema
replica**, an in-memory DuckDB database with the same schemas, tables and columns (views become
tables of their columns) and **no rows**, minus provsql_dp's own schema (budgets, ledger,
accounts). DuckDB's ``pg_catalog`` and ``information_schema`` views over it give the answer. Names
and types are public (an analyst needs them to write queries; the explorer shows them too), and
nothing else is in the replica, so no answer from it can depend on protected data. The replica runs
with DuckDB's guard rails (no external access, locked configuration, a memory limit), and is
rebuilt when the schema changes. A catalog query DuckDB cannot answer there is refused with what
failed.

A few idioms of psql's queries that DuckDB does not parse are rewritten first (``OPERATOR(
pg_catalog.~)`` → ``~``, ``COLLATE pg_catalog.default`` dropped).

>>> is_catalog_query("SELECT c.relname FROM pg_catalog.pg_class c"), is_catalog_query("SELECT 1")
(True, False)
>>> is_catalog_query("select pg_catalog.version()"), is_catalog_query("SELECT COUNT(*) FROM pg_stats_t WITH EPSILON 1")
(True, False)
>>> compatible("WHERE c.relname OPERATOR(pg_catalog.~) '^(t)$' COLLATE pg_catalog.default")
"WHERE c.relname ~ '^(t)$'"
"""

from __future__ import annotations

import re
import threading

import duckdb

from ...sql.catalog import SCHEMA
from ._catalog_compat import SCHEMA as COMPAT, STATEMENTS

__all__ = ["is_catalog_query", "compatible", "Replica"]

_CATALOG = re.compile(
    r"\b(pg_catalog|information_schema)\s*\.|\bpg_(class|namespace|attribute|type|index|database|settings|"
    r"proc|description|constraint|am|roles|user|tables|views|attrdef|inherits|enum|range|collation|"
    r"extension|tablespace|matviews|sequence|sequences|stat_\w+|get_\w+|table_is_visible|"
    r"type_is_visible|encoding_to_char|backend_pid|is_in_recovery|postmaster_start_time)\b|"
    r"\b(version|current_schema|current_schemas|current_database|current_setting|format_type|"
    r"obj_description|col_description|shobj_description|has_\w+_privilege)\s*\(",
    re.IGNORECASE)
_QUERY = re.compile(r"^\s*(\(\s*)*(select|with|table|values|show)\b", re.IGNORECASE)
_PRIVATE = re.compile(r"\bwith\s+(epsilon|accuracy)\b", re.IGNORECASE)
_REWRITES = [
    (re.compile(r"OPERATOR\s*\(\s*pg_catalog\s*\.\s*([~!*<>=]+)\s*\)", re.IGNORECASE), r"\1"),
    (re.compile(r"\s*COLLATE\s+pg_catalog\s*\.\s*\"?default\"?", re.IGNORECASE), ""),
    (re.compile(r"::\s*(pg_catalog\s*\.\s*)?reg(type|class|proc|namespace|role)\b", re.IGNORECASE), ""),
    (re.compile(r"\bpg_catalog\s*\.\s*", re.IGNORECASE), ""),  # pgcompat first, then DuckDB's own
]
# DuckDB refuses to turn external access back on while the database runs; a catalog query is a
# SELECT (see is_catalog_query), which cannot change a setting
_GUARDS = ["SET enable_external_access = false", "SET python_enable_replacements = false",
           "SET memory_limit = '512MB'", "SET threads = 1"]
CATALOG_SECONDS = 10.0  # a catalog query on a schema without rows that runs longer is stopped


def is_catalog_query(stmt: str) -> bool:
    """Whether ``stmt`` is a query that reads the system catalog (and is not a private query),
    and only it: a query that also names a table of the database (``SELECT * FROM t WHERE
    version() IS NOT NULL``) is not — the replica has no rows, so it would answer it wrongly; it
    takes the path of every statement (and is answered or refused there)."""
    if not (_QUERY.match(stmt) and _CATALOG.search(stmt) and not _PRIVATE.search(stmt)):
        return False
    return not _names_a_database_table(stmt)


#: relations of the replica that are not the database's: its catalog schemas and the unqualified
#: names of ``pg_catalog`` (``pg_class``, …; ``compatible`` strips the schema) and of pgcompat
_CATALOG_SCHEMAS = {"pg_catalog", "information_schema", COMPAT.lower()}


def _names_a_database_table(stmt: str) -> bool:
    """Whether the query names a relation that is neither the catalog's nor its own CTE's (a
    statement sqlglot cannot read as PostgreSQL is left to the replica, as before: the path of
    every statement could not read it either).

    >>> _names_a_database_table("SELECT * FROM emp WHERE version() IS NOT NULL")
    True
    >>> _names_a_database_table("SELECT c.relname FROM pg_catalog.pg_class c JOIN "
    ...                         "information_schema.tables t ON t.table_name = c.relname")
    False
    >>> _names_a_database_table("WITH x AS (SELECT oid FROM pg_type) SELECT * FROM x, "
    ...                         "unnest(ARRAY[1, 2]) AS u(i), generate_series(1, 3)")
    False
    """
    import sqlglot
    from sqlglot import exp

    try:
        trees = sqlglot.parse(compatible(stmt), read="postgres")
    except sqlglot.errors.SqlglotError:
        return False
    for tree in trees:
        if tree is None:
            continue
        ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
        for table in tree.find_all(exp.Table):
            name, schema = table.name.lower(), table.db.lower()
            if not name or not isinstance(table.this, exp.Identifier):
                continue  # a table function (unnest, generate_series, …)
            if schema in _CATALOG_SCHEMAS or (not schema and (name in ctes or name.startswith("pg_"))):
                continue
            return True
    return False


def compatible(stmt: str) -> str:
    """psql's PostgreSQL-only idioms in forms DuckDB reads."""
    for pattern, repl in _REWRITES:
        stmt = pattern.sub(repl, stmt)
    return stmt


def _schema_of(duck) -> list[tuple]:
    return duck.execute(
        "SELECT table_schema, table_name, column_name, data_type, ordinal_position "
        "FROM information_schema.columns WHERE table_catalog = current_database() "
        f"AND table_schema NOT IN ('{SCHEMA}', 'pg_catalog', 'information_schema') "
        "ORDER BY table_schema, table_name, ordinal_position").fetchall()


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class Replica:
    """The schema replica of one database (built on first use, rebuilt when the schema changed)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._key = None
        self._duck = None

    def _build(self, columns: list[tuple]):
        duck = duckdb.connect(":memory:")
        tables: dict[tuple[str, str], list[str]] = {}
        for schema, table, column, dtype, _ in columns:
            tables.setdefault((schema, table), []).append(f"{_ident(column)} {dtype}")
        for schema in sorted({s for s, _ in tables}):
            duck.execute(f"CREATE SCHEMA IF NOT EXISTS {_ident(schema)}")
        for (schema, table), cols in tables.items():
            duck.execute(f"CREATE TABLE {_ident(schema)}.{_ident(table)} ({', '.join(cols)})")
        for stmt in STATEMENTS:
            duck.execute(stmt)
        for stmt in _GUARDS:
            duck.execute(stmt)
        return duck

    def cursor(self, source_duck):
        """A connection of its own to the replica of ``source_duck``'s database (brought up to
        date first), with the compatibility schema first on its search path."""
        columns = _schema_of(source_duck)
        key = hash(tuple(columns))
        with self._lock:
            if key != self._key:
                old, self._duck = self._duck, self._build(columns)
                self._key = key
                if old is not None:
                    old.close()
            cur = self._duck.cursor()
        cur.execute(f"SET search_path = '{COMPAT},main'")
        return cur

    def run(self, cur, sql: str, parameters=None) -> tuple[list | None, list[tuple]]:
        """(description, rows) of a catalog query on ``cur`` (from :meth:`cursor`); stopped after
        :data:`CATALOG_SECONDS` (it reads no data: it takes milliseconds)."""
        timer = threading.Timer(CATALOG_SECONDS, cur.interrupt)
        timer.daemon = True
        timer.start()
        try:
            res = cur.execute(compatible(sql), parameters)
            desc = res.description
            return desc, (res.fetchall() if desc else [])
        finally:
            timer.cancel()
