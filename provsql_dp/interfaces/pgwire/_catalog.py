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

As everywhere on the analyst boundary, **the client's text never reaches DuckDB**, the replica's
included: a catalog query is read by sqlglot (as PostgreSQL), must be one query that names only
the catalog's relations and the table functions drivers use, and the replica runs the DuckDB text
sqlglot emits for it, without comments (:func:`emitted`), read back and checked again. A query
sqlglot cannot read is refused, naming what it could not read.

A few idioms of psql's queries that neither parses as PostgreSQL reads them are rewritten first
(``OPERATOR(pg_catalog.~)`` → ``~``, ``COLLATE pg_catalog.default`` dropped).

>>> is_catalog_query("SELECT c.relname FROM pg_catalog.pg_class c"), is_catalog_query("SELECT 1")
(True, False)
>>> is_catalog_query("select pg_catalog.version()"), is_catalog_query("SELECT COUNT(*) FROM pg_stats_t WITH EPSILON 1")
(True, False)
>>> compatible("WHERE c.relname OPERATOR(pg_catalog.~) '^(t)$' COLLATE pg_catalog.default")
"WHERE c.relname ~ '^(t)$'"
>>> emitted("SELECT c.relname FROM pg_catalog.pg_class c WHERE c.relname ~ '^t$' -- hi")
"SELECT c.relname FROM pg_class AS c WHERE REGEXP_MATCHES(c.relname, '^t$')"
"""

from __future__ import annotations

import re
import threading

import duckdb

from ...sql.catalog import SCHEMA
from ...sql.cte_names import visible_ctes
from ._catalog_compat import SCHEMA as COMPAT, STATEMENTS
from ..web._fatal import is_fatal
from ._catalog_functions import check_catalog_functions

__all__ = ["is_catalog_query", "names_the_catalog", "compatible", "emitted", "Replica"]

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
# SELECT (see is_catalog_query), which cannot run SET — but a table function can change the
# instance's configuration (enable_logging with a file storage made the next query throw
# through DuckDB's C++ and abort the server: red team h73attack-4), so the configuration is
# locked last, and only the table functions of _TABLE_FUNCTIONS are left to the replica
# the replica needs no directory (no rows to spill, no secrets, no extensions): emptied, so that
# no setting names a server path — an analyst's pg_settings or current_setting showed
# allowed_directories (the working directory's .tmp/) and secret_directory (the user's home)
_GUARDS = ["SET temp_directory = ''", "SET secret_directory = ''", "SET home_directory = ''",
           "SET extension_directory = ''",
           "SET enable_external_access = false", "SET python_enable_replacements = false",
           "SET memory_limit = '512MB'", "SET threads = 1", "SET lock_configuration = true"]
CATALOG_SECONDS = 10.0  # a catalog query on a schema without rows that runs longer is stopped
#: rows a catalog query may answer (the catalog of a schema of 10,000 tables of 50 columns has
#: 500,000 attributes): a join of generate_series with pg_type answered 3,000,000 rows, turned
#: into Python tuples at once (~100 bytes each) — red team h143
MAX_CATALOG_ROWS = 1_000_000


def names_the_catalog(stmt: str) -> bool:
    """:func:`is_catalog_query`'s first test, by patterns only (no parse): a query naming the
    system catalog that is not a private query. The caller checks an analyst's size and depth
    limits between the two (the parse of a deeply nested text overflowed Python's stack)."""
    return bool(_QUERY.match(stmt) and _CATALOG.search(stmt) and not _PRIVATE.search(stmt))


def is_catalog_query(stmt: str) -> bool:
    """Whether ``stmt`` is a query that reads the system catalog (and is not a private query),
    and only it: a query that also names a table of the database (``SELECT * FROM t WHERE
    version() IS NOT NULL``) is not — the replica has no rows, so it would answer it wrongly; it
    takes the path of every statement (and is answered or refused there)."""
    return names_the_catalog(stmt) and not _names_a_database_table(stmt)


#: relations of the replica that are not the database's: its catalog schemas and the unqualified
#: names of ``pg_catalog`` (``pg_class``, …; ``compatible`` strips the schema) and of pgcompat
_CATALOG_SCHEMAS = {"pg_catalog", "information_schema", COMPAT.lower()}


def _names_a_database_table(stmt: str) -> bool:
    """Whether the query names a relation that is neither the catalog's nor a CTE visible where
    it is named, or reads a table named in a string (``query``, ``query_table``) (a statement
    sqlglot cannot read as PostgreSQL is left to the replica, as before: the path of every
    statement could not read it either). Red team h63attack, finding 4: a CTE's name inside its
    own non-recursive body (``WITH t AS (SELECT * FROM t)``) is the database's table, and an
    unqualified ``pg_…`` name is the catalog's only when the replica's catalog has it.

    >>> _names_a_database_table("SELECT * FROM emp WHERE version() IS NOT NULL")
    True
    >>> _names_a_database_table("SELECT c.relname FROM pg_catalog.pg_class c JOIN "
    ...                         "information_schema.tables t ON t.table_name = c.relname")
    False
    >>> _names_a_database_table("WITH x AS (SELECT oid FROM pg_type) SELECT * FROM x, "
    ...                         "unnest(ARRAY[1, 2]) AS u(i), generate_series(1, 3)")
    False
    >>> _names_a_database_table("WITH emp AS (SELECT * FROM emp) SELECT * FROM emp, pg_type")
    True
    """
    import sqlglot

    for pattern, repl in _REWRITES[:-1]:  # psql's idioms; a pg_catalog qualifier stays
        stmt = pattern.sub(repl, stmt)
    try:
        trees = sqlglot.parse(stmt, read="postgres")
    except sqlglot.errors.SqlglotError:
        return False  # not ours to judge: emitted() refuses what sqlglot cannot read
    return _reads_the_database(trees)


def _reads_the_database(trees) -> bool:
    """Whether any of the sqlglot ``trees`` names a relation that is neither the catalog's nor a
    visible CTE, or calls a table function the replica does not allow."""
    from sqlglot import exp

    for tree in trees:
        if tree is None:
            continue
        for table in tree.find_all(exp.Table):
            name, schema = table.name.lower(), table.db.lower()
            if isinstance(table.this, exp.Func):  # a table function (unnest, generate_series, …)
                if not _replica_table_function(table.this):
                    return True  # not for the replica: the path of every statement judges it
                continue
            if not name or not isinstance(table.this, exp.Identifier):
                continue
            if schema in _CATALOG_SCHEMAS:
                continue
            if not schema and (name in visible_ctes(table) or name in _replica_relations()):
                continue
            return True
    return False


#: the table functions a catalog query may call on the replica (those of drivers' catalog
#: queries; each reads nothing and changes nothing), besides the compatibility schema's table
#: macros. Any other — ``query``/``query_table`` (they read a relation of the database named in
#: a string), ``enable_logging``, ``enable_profiling``, ``checkpoint``, scans of pointers … —
#: sends the statement down the path of every statement, where an analyst's is refused
_TABLE_FUNCTIONS = {"unnest", "generate_series", "generate_subscripts", "range"}


def _replica_table_function(func) -> bool:
    """Whether the table function ``func`` (a sqlglot node) may run on the replica.

    >>> import sqlglot
    >>> f = lambda sql: _replica_table_function(sqlglot.parse_one(sql, read="postgres").find(sqlglot.exp.Table).this)
    >>> f("SELECT * FROM generate_series(1, 3)"), f("SELECT * FROM enable_logging(level := 'x')")
    (True, False)
    """
    from sqlglot import exp

    if isinstance(func, (exp.GenerateSeries, exp.ExplodingGenerateSeries, exp.Unnest, exp.Explode)):
        return True
    name = func.name.lower() if isinstance(func, exp.Anonymous) else ""
    return name in _TABLE_FUNCTIONS or name in _replica_relations()


_RELATIONS: list[frozenset] = []


def _replica_relations() -> frozenset:
    """The unqualified relation names the replica's catalog answers: DuckDB's ``pg_catalog``
    views and the compatibility schema's views, tables and table macros (read once)."""
    if not _RELATIONS:
        duck = duckdb.connect(":memory:")
        try:
            for stmt in STATEMENTS:
                duck.execute(stmt)
            rows = duck.execute(
                "SELECT view_name FROM duckdb_views() WHERE schema_name IN ('pg_catalog', ?) "
                "UNION SELECT table_name FROM duckdb_tables() WHERE schema_name IN "
                "('pg_catalog', ?) UNION SELECT function_name FROM duckdb_functions() "
                "WHERE schema_name = ? AND function_type = 'table_macro'",
                [COMPAT, COMPAT, COMPAT]).fetchall()
        finally:
            duck.close()
        _RELATIONS.append(frozenset(r[0].lower() for r in rows))
    return _RELATIONS[0]


def compatible(stmt: str) -> str:
    """psql's PostgreSQL-only idioms in forms DuckDB reads."""
    for pattern, repl in _REWRITES:
        stmt = pattern.sub(repl, stmt)
    return stmt


def emitted(stmt: str) -> str:
    """The DuckDB text the replica runs for the catalog query ``stmt``: ``stmt``'s PostgreSQL
    idioms rewritten (:func:`compatible`), read by sqlglot as PostgreSQL, and emitted by sqlglot
    for DuckDB without comments — so nothing the client wrote reaches DuckDB as written (a
    backtick, a comment, a second statement). Refused (:class:`ProgrammingError`, nothing run)
    unless it is one query whose unquoted names are PostgreSQL names and whose table functions
    are those drivers use (checked on the tree read, and on the emitted text read back);
    parameters (``$1``) stay parameters.

    >>> emitted("SELECT 1 FROM pg_class `--`; DROP SCHEMA pgcompat CASCADE")
    Traceback (most recent call last):
    ...
    provsql_dp.errors.ProgrammingError: this catalog query could not be read as one PostgreSQL query: ` is not a name (quote names in double quotes, and send each statement on its own)
    """
    import sqlglot
    from sqlglot import exp

    from ...errors import ProgrammingError

    def refuse(why: str):
        raise ProgrammingError(f"this catalog query could not be read as one PostgreSQL query: {why}")

    try:
        trees = [t for t in sqlglot.parse(compatible(stmt), read="postgres") if t is not None]
    except sqlglot.errors.SqlglotError as e:
        refuse(f"{str(e).splitlines()[0][:200]} (the server answers catalog queries it reads as "
               "PostgreSQL)")
    if len(trees) != 1 or not isinstance(trees[0], exp.Query):
        kinds = ", ".join(type(t).__name__.upper() for t in trees) or "nothing"
        refuse(f"it reads as {len(trees)} statement(s) ({kinds}): send each query on its own")
    for ident in trees[0].find_all(exp.Identifier):
        if not ident.quoted and not _NAME.fullmatch(ident.name):
            refuse(f"{ident.name[:40]} is not a name (quote names in double quotes, and send each "
                   "statement on its own)")
    check_catalog_functions(trees[0], _replica_relations())  # no repeat(), no recursion of ||
    if (func := _replica_refuses(trees)) is not None:
        refuse(f"it calls the table function {func}, which the server's catalog does not run "
               f"(catalog queries may call {', '.join(sorted(_TABLE_FUNCTIONS))})")
    sql = trees[0].sql(dialect="duckdb", comments=False)
    try:  # our own text, read back: still one query, still no other table function
        back = [t for t in sqlglot.parse(sql, read="duckdb") if t is not None]
    except sqlglot.errors.SqlglotError:
        back = []
    if len(back) != 1 or not isinstance(back[0], exp.Query) or _replica_refuses(back) is not None:
        refuse("its DuckDB form does not read back as one query of the catalog")
    return sql


#: an unquoted name as PostgreSQL reads it (letters, digits, ``_`` and ``$``, not first)
_NAME = re.compile(r"[^\W\d]\w*(\$\w*)*")


def _replica_refuses(trees) -> str | None:
    """The first table function of ``trees`` the replica does not run, or None."""
    from sqlglot import exp

    for tree in trees:
        for table in tree.find_all(exp.Table):
            if isinstance(table.this, exp.Func) and not _replica_table_function(table.this):
                return table.this.sql(dialect="postgres")[:60]
    return None


def _schema_of(duck) -> tuple[tuple, tuple]:
    """The database's tables' columns (schema, table, column, type, position, nullable) and
    primary keys (schema, table, its columns): public, as ``DESCRIBE`` shows them to analysts."""
    where = f"NOT IN ('{SCHEMA}', 'pg_catalog', 'information_schema')"
    columns = duck.execute(
        "SELECT table_schema, table_name, column_name, data_type, ordinal_position, "
        "is_nullable = 'YES' FROM information_schema.columns WHERE table_catalog = "
        f"current_database() AND table_schema {where} "
        "ORDER BY table_schema, table_name, ordinal_position").fetchall()
    keys = duck.execute(
        "SELECT schema_name, table_name, constraint_column_names FROM duckdb_constraints() "
        f"WHERE constraint_type = 'PRIMARY KEY' AND database_name = current_database() AND "
        f"schema_name {where} ORDER BY 1, 2").fetchall()
    return tuple(columns), tuple((s, t, tuple(k)) for s, t, k in keys)


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class Replica:
    """The schema replica of one database (built on first use, rebuilt when the schema changed)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._key = None
        self._duck = None

    def _build(self, schema_facts: tuple[tuple, tuple]):
        duck = duckdb.connect(":memory:")
        columns, keys = schema_facts
        tables: dict[tuple[str, str], list[str]] = {}
        for schema, table, column, dtype, _, nullable in columns:
            tables.setdefault((schema, table), []).append(
                f"{_ident(column)} {dtype}{'' if nullable else ' NOT NULL'}")
        for schema, table, key in keys:
            if (schema, table) in tables:
                tables[(schema, table)].append(f"PRIMARY KEY ({', '.join(_ident(c) for c in key)})")
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
        facts = _schema_of(source_duck)
        key = hash(facts)
        with self._lock:
            if key != self._key:
                old, self._duck = self._duck, self._build(facts)
                self._key = key
                if old is not None:
                    old.close()
            cur = self._duck.cursor()
        cur.execute(f"SET search_path = '{COMPAT},main'")
        return cur

    def run(self, cur, sql: str, parameters=None) -> tuple[list | None, list[tuple]]:
        """(description, rows) of a catalog query on ``cur`` (from :meth:`cursor`), run as the
        text :func:`emitted` makes of it; stopped after :data:`CATALOG_SECONDS` (it reads no
        data: it takes milliseconds). After DuckDB's internal error (which invalidates the
        replica for every session) the replica is built anew on the next :meth:`cursor`."""
        ours = emitted(sql)
        _one_query(cur, ours)  # DuckDB reads our text as one query too
        timer = threading.Timer(CATALOG_SECONDS, cur.interrupt)
        timer.daemon = True
        timer.start()
        try:
            res = cur.execute(ours, parameters)
            desc = res.description
            rows = res.fetchmany(MAX_CATALOG_ROWS + 1) if desc else []
            if len(rows) > MAX_CATALOG_ROWS:
                from ...errors import ProgrammingError

                raise ProgrammingError(
                    f"this catalog query answers more than {MAX_CATALOG_ROWS:,} rows, more than "
                    "the server's catalog sends: narrow it (WHERE, LIMIT)")
            return desc, rows
        except duckdb.Error as e:
            if is_fatal(e):  # DuckDB invalidated the replica: the next cursor() builds a new one
                with self._lock:
                    self._key = None
            raise
        finally:
            timer.cancel()


def _one_query(cur, sql: str) -> None:
    """Refuse ``sql`` unless DuckDB reads it as one query: DuckDB runs every statement of a
    text, and this replica is every session's. A name quoted in backticks hid a ``;`` from the
    split of statements (``SELECT 1 FROM pg_class `--`; DROP SCHEMA pgcompat CASCADE``): an
    analyst dropped or redefined the catalog other sessions read (red team h103attack, finding 2).
    """
    from ...errors import ProgrammingError

    try:
        stmts = cur.extract_statements(sql)
    except duckdb.Error:
        return  # DuckDB says what it cannot parse when it runs it
    if len(stmts) != 1 or stmts[0].type != duckdb.StatementType.SELECT:
        raise ProgrammingError(
            "a catalog query is answered from the server's catalog (names and types only) and must "
            f"be one query; DuckDB reads this text as {len(stmts)} statement(s) "
            f"({', '.join(st.type.name for st in stmts)}) — a name quoted in backticks (`…`) hides "
            "a ';': quote names in double quotes, and send each statement on its own")
