"""The audit log: every release and every refusal, for the curator.

A release's audit row **is** its charge's ledger row (:meth:`provsql_dp.privacy.ledger.Ledger.charge`
writes who released it, from which client, and its place in the log's order into that row): the
log and the ledger agree under any concurrency and across a crash, and the charge writes one row
instead of two. A statement that fails (a refusal: an exhausted budget, a refused analyst
statement, a cancel, a time limit…) gets a row of its own in ``_provsql_dp.audit_events``, with
the class of its error and ε 0 — it charged nothing; when it fails *after* a charge (cancelled
during the LP, say) its row says ``failed`` and the charge keeps its own ``released`` row.

The view ``_provsql_dp.audit`` gives both, one row per event; only the library writes the rows
under it, and only ever appends them. Columns:

==============  ========================================================================
``id``          order of writing
``logged_at``   when (the server's clock; a release's is its charge's ``charged_at``)
``user_name``   whose budget; ``role``: curator or analyst
``client``      ``dbapi`` (a Python connection), ``shell``, ``explorer`` or ``wire``
``outcome``     ``released``, ``refused`` (nothing charged) or ``failed`` (after a charge)
``statement``   the statement's text; ``route``: the mechanism charged (``laplace``, …)
``epsilon``     ε charged, an exact fraction as text (``'0'`` for a refusal)
``ledger_id``   the charge's row of ``_provsql_dp.ledger`` (NULL for a refusal)
``reason``      the error's class for a refusal (``BudgetExceededError``, ``PrivacyError``…)
``detail``      the first line of the error's message
==============  ========================================================================

(A database made before the audit rows moved into the ledger has a table ``_provsql_dp.audit``:
the first read-write connection renames it ``audit_events``, where its rows — releases included —
stay as they were, and makes the view; its ledger rows, which have no place in the log's order,
are not shown twice.)

The view ``_provsql_dp.audit_log`` adds ``epsilon_value`` (a DOUBLE) for sums and charts and
``unit``, what ``epsilon`` counts: ``epsilon`` (pure ε), ``epsilon-delta`` (the ε of an (ε, δ)
charge, its δ in the ledger row) or ``rho`` (a zCDP budget: the column holds ρ); NULL for a
refusal, which charged nothing. ``SHOW AUDIT LOG [LIMIT n]`` gives its last rows. Both
live in our catalog schema, which an analyst's statements cannot name
(:mod:`provsql_dp.privacy.roles`): only a curator reads the log, in SQL (``SHOW AUDIT LOG``, ``SELECT * FROM
_provsql_dp.audit_log``, also over the wire) or with the shell's ``.audit``.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE t(x INT); INSERT INTO t VALUES (1), (2); PROTECT TABLE t")
>>> _ = con.execute("SET PRIVACY BUDGET 1 FOR USER 'default'")
>>> _ = con.execute("SELECT COUNT(*) FROM t WITH EPSILON 0.5")
>>> try:
...     con.execute("SELECT COUNT(*) FROM t WITH EPSILON 5")
... except provsql_dp.errors.BudgetExceededError:
...     pass
>>> con.execute("SELECT outcome, route, epsilon, unit, reason FROM _provsql_dp.audit_log ORDER BY id").fetchall()
[('released', 'laplace', '1/2', 'epsilon', None), ('refused', None, '0', None, 'BudgetExceededError')]
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

import duckdb

from ..sql.catalog import SCHEMA

__all__ = ["Source", "DDL", "create", "insert", "storable", "record_failure", "last_rows",
           "CLIENTS", "LOG_COLUMNS", "LEDGER_COLUMNS", "LEDGER_VALUES"]

log = logging.getLogger("provsql_dp.audit")

#: who may appear in ``client``
CLIENTS = ("dbapi", "shell", "explorer", "wire")

#: what a charge writes into its ledger row to make it its release's audit row: the columns
#: and their values in the ledger's ``INSERT`` (parameters: :attr:`Source.role`, then
#: :attr:`Source.client`); the columns are added to a ledger made before them by the ledger's DDL
LEDGER_COLUMNS = "audit_id, role, client"
LEDGER_VALUES = f"nextval('{SCHEMA}.audit_seq'), ?, ?"

#: the view: ``epsilon`` as a DOUBLE, and the unit of the charge (the ledger row's)
_VIEW = """{create} {SCHEMA}.audit_log AS
        SELECT a.id, a.logged_at, a.user_name, a.role, a.client, a.outcome, a.statement, a.route,
               a.epsilon,
               CAST(split_part(a.epsilon, '/', 1) AS DOUBLE)
                 / CAST(coalesce(nullif(split_part(a.epsilon, '/', 2), ''), '1') AS DOUBLE)
                 AS epsilon_value,
               l.unit AS unit, a.ledger_id, a.reason, a.detail
        FROM {SCHEMA}.audit a LEFT JOIN {SCHEMA}.ledger l ON l.id = a.ledger_id"""

DDL = [
    f"CREATE SEQUENCE IF NOT EXISTS {SCHEMA}.audit_seq START 1",
    f"""CREATE TABLE IF NOT EXISTS {SCHEMA}.audit_events (
        id BIGINT NOT NULL,
        logged_at TIMESTAMP NOT NULL,
        user_name VARCHAR NOT NULL,
        role VARCHAR NOT NULL,
        client VARCHAR NOT NULL,
        outcome VARCHAR NOT NULL,
        statement VARCHAR,
        route VARCHAR,
        epsilon VARCHAR NOT NULL,
        ledger_id BIGINT,
        reason VARCHAR,
        detail VARCHAR)""",
    # a release's row is its ledger row (a ledger row without a place in the log's order was
    # written before: its release's row is in audit_events, renamed from the old table)
    f"""CREATE VIEW IF NOT EXISTS {SCHEMA}.audit AS
        SELECT audit_id AS id, charged_at AS logged_at, user_name, role, client,
               'released' AS outcome, statement, mechanism AS route, epsilon, id AS ledger_id,
               CAST(NULL AS VARCHAR) AS reason, CAST(NULL AS VARCHAR) AS detail
        FROM {SCHEMA}.ledger WHERE audit_id IS NOT NULL
        UNION ALL
        SELECT id, logged_at, user_name, role, client, outcome, statement, route, epsilon,
               ledger_id, reason, detail FROM {SCHEMA}.audit_events""",
    _VIEW.format(SCHEMA=SCHEMA, create="CREATE VIEW IF NOT EXISTS"),
]

_INSERT = (f"INSERT INTO {SCHEMA}.audit_events VALUES (nextval('{SCHEMA}.audit_seq'), "
           "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
_DETAIL_CHARS = 500
#: a refused statement longer than this is logged cut (an analyst's limit is 64 KiB by default)
_STATEMENT_CHARS = 65_536


def create(con: duckdb.DuckDBPyConnection) -> None:
    """The table of the events other than releases and the views (after the ledger's tables
    and columns); an audit table made before the release rows moved into the ledger becomes
    ``audit_events``, rows and all; a view made before the ``unit`` column is replaced."""
    if _is_table(con, "audit"):
        try:
            con.execute(f"ALTER TABLE {SCHEMA}.audit RENAME TO audit_events")
        except duckdb.Error:
            if _is_table(con, "audit"):  # not another connection renaming it at the same time
                raise
    for stmt in DDL:
        con.execute(stmt)
    has_unit = con.execute("SELECT count(*) FROM duckdb_columns() WHERE schema_name = ? AND "
                           "table_name = 'audit_log' AND column_name = 'unit'", [SCHEMA]).fetchall()[0][0]
    if not has_unit:
        con.execute(_VIEW.format(SCHEMA=SCHEMA, create="CREATE OR REPLACE VIEW"))


def _is_table(con, name: str) -> bool:
    return con.execute("SELECT count(*) FROM duckdb_tables() WHERE schema_name = ? AND "
                       "table_name = ? AND database_name = current_database()",
                       [SCHEMA, name]).fetchall()[0][0] > 0


#: the columns of ``SHOW AUDIT LOG`` and their types
LOG_COLUMNS = [("id", "BIGINT"), ("logged_at", "TIMESTAMP"), ("user_name", "VARCHAR"),
               ("role", "VARCHAR"), ("client", "VARCHAR"), ("outcome", "VARCHAR"),
               ("route", "VARCHAR"), ("epsilon", "VARCHAR"), ("unit", "VARCHAR"),
               ("reason", "VARCHAR"), ("detail", "VARCHAR"), ("statement", "VARCHAR")]


def last_rows(con: duckdb.DuckDBPyConnection, n: int) -> list[tuple]:
    """The last ``n`` rows of the log, oldest first, in :data:`LOG_COLUMNS`' order."""
    cols = ", ".join(c for c, _ in LOG_COLUMNS)
    cur = con.cursor()
    try:
        return cur.execute(f"SELECT {cols} FROM (SELECT * FROM {SCHEMA}.audit_log ORDER BY id DESC "
                           "LIMIT ?) ORDER BY id", [int(n)]).fetchall()
    finally:
        cur.close()


@dataclass(frozen=True)
class Source:
    """Who a connection's statements come from: its role and its client (:data:`CLIENTS`)."""

    role: str = "curator"
    client: str = "dbapi"


def storable(text: str | None, limit: int | None = None) -> str | None:
    """``text`` as the log can store it: a lone surrogate escaped (DuckDB refuses it, and the
    row with it: a refusal went unlogged, red team h94attack finding 5), cut past ``limit``
    characters saying how long it was.

    >>> storable("SELECT 1 -- \\ud800"), storable("x" * 10, limit=4)
    ('SELECT 1 -- \\\\ud800', 'xxxx… (10 characters)')
    """
    if text is None:
        return None
    if limit is not None and len(text) > limit:
        text = f"{text[:limit]}… ({len(text):,} characters)"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def insert(cur, source: Source, user: str, outcome: str, statement: str | None, route: str | None,
           epsilon: str, ledger_id: int | None = None, reason: str | None = None,
           detail: str | None = None, at: datetime | None = None) -> None:
    """Append one row of an event other than a release (those are the ledger's rows) on
    ``cur``."""
    cur.execute(_INSERT, [at or datetime.now(), storable(user), source.role, source.client,
                          outcome, storable(statement, _STATEMENT_CHARS), route, epsilon,
                          ledger_id, reason, storable(detail)])


def record_failure(duck: duckdb.DuckDBPyConnection, source: Source, user: str, statement: str,
                   error: BaseException, charged: bool) -> None:
    """A statement that failed: ``refused`` (nothing charged) or ``failed`` (after a charge),
    committed on a cursor of its own (never in the caller's transaction, which the failure may
    roll back). The log is best effort here only: a read-only database, or one closing, cannot
    take the row, and the statement's own error is what the caller must see."""
    text = str(error).strip().splitlines()
    cur = duck.cursor()
    try:
        insert(cur, source, user, "failed" if charged else "refused", statement, None, "0",
               reason=type(error).__name__,
               detail=(text[0] if text else "")[:_DETAIL_CHARS])
    except duckdb.Error as e:
        log.warning("the audit log could not record a refusal of %s: %s", user, e)
    finally:
        cur.close()
