"""What one statement of a wire client does, and the result it sends back.

Every analyst statement goes through the session's provsql_dp connection, exactly as in the
DB-API (same cursor path, same refusals, same ledger); the wire layer answers only what concerns
the wire session itself, never the data:

* ``SHOW LAST RELEASE`` — the privacy metadata of the session's last private release (mechanism,
  ε charged, remaining budget, and per released row and column the interval at 95 % and what it
  covers), for a client that sees only rows;
* ``SHOW provsql_dp.role`` — the signed-in account's role (``curator`` or ``analyst``);
* ``SET provsql_dp.interval_columns = on | off | 0.9`` — whether private answers carry
  ``<col>_low``/``<col>_high`` columns (**on by default for wire clients**, coverage 0.95);
* transaction control (``BEGIN``, ``COMMIT``, ``ROLLBACK``): passed to the curator's connection;
  for an analyst, who can change nothing, acknowledged with no effect (a release is committed when
  it is made; a ROLLBACK never refunds ε); ``SAVEPOINT`` and ``RELEASE`` (drivers' nested
  transactions) are acknowledged; ``ROLLBACK TO`` is refused to a curator (DuckDB has no
  savepoints);
* the client settings drivers send (``SET extra_float_digits``, ``SET application_name``,
  ``SHOW transaction isolation level``, …): acknowledged and remembered, never sent to DuckDB;
  ``SET statement_timeout`` bounds the session's statements (:func:`_statement_timeout`);
* catalog queries (``pg_catalog``, ``information_schema``): answered from the schema replica
  (:mod:`._catalog`).

>>> command_tag("INSERT INTO t VALUES (1)", None, 3), command_tag("PROTECT TABLE t", None, -1)
('INSERT 0 3', 'PROTECT')
>>> command_tag("select * from t", [("x",)], 2), command_tag("CREATE TABLE t(x INT)", None, -1)
('SELECT 2', 'CREATE TABLE')
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import duckdb

from ..._duckdb_errors import translate
from ...errors import Error, NotSupportedError, ProgrammingError
from ..dbapi.audit_failures import audit_failure, audit_refusal
from ..dbapi.interval_columns import coverage_of
from ...privacy.limits import check_statement
from ._catalog import is_catalog_query, names_the_catalog
from ._temporal import zone

__all__ = ["Outcome", "command_tag", "CLIENT_SETTINGS", "execute", "charged_text"]

#: settings a PostgreSQL driver reads or sets; their values as this server reports them
CLIENT_SETTINGS = {
    "server_version": "15.0", "server_version_num": "150000", "server_encoding": "UTF8",
    "client_encoding": "UTF8", "datestyle": "ISO, MDY", "timezone": "UTC", "intervalstyle": "postgres",
    "integer_datetimes": "on", "standard_conforming_strings": "on", "extra_float_digits": "1",
    "application_name": "", "search_path": "main", "transaction_isolation": "serializable",
    "transaction isolation level": "serializable", "default_transaction_isolation": "serializable",
    "transaction_read_only": "off", "max_identifier_length": "63", "lc_collate": "C", "lc_ctype": "C",
    "statement_timeout": "0", "is_superuser": "off", "session_authorization": "",
    "bytea_output": "hex", "default_transaction_read_only": "off", "jit": "off",
}
# matched in full against the statement stripped of its spaces and one final ';' (by
# _client_statement), each in linear time: the former forms, anchored on '\s*;?\s*$' behind lazy
# groups, backtracked in cubic time — 'SHOW a' and 4,000 spaces held a thread for 71 s
# (red team h143)
_SET = re.compile(r"SET\s+(?:SESSION\s+|LOCAL\s+)?(?P<name>[\w.]+(?:\s+ZONE)?)"
                  r"(?:\s*=\s*|\s+TO\s+|\s+)(?P<value>.*)", re.IGNORECASE | re.DOTALL)
_SHOW = re.compile(r"SHOW\s+(?P<name>[\w.]+(?:[ \t]+[\w.]+)*)", re.IGNORECASE)
_TX = re.compile(r"^\s*(BEGIN|START\s+TRANSACTION|COMMIT|END|ROLLBACK|ABORT)\b", re.IGNORECASE)
_SAVEPOINT = re.compile(r"^\s*(SAVEPOINT|RELEASE|ROLLBACK\s+(WORK\s+|TRANSACTION\s+)?TO)\b", re.IGNORECASE)
_NOOP = re.compile(r"^\s*(DISCARD\s+ALL|RESET\s+ALL|DEALLOCATE\b|UNLISTEN\b|SET\s+SESSION\s+CHARACTERISTICS\b"
                   r"|SET\s+TRANSACTION\b)", re.IGNORECASE)
_LAST = re.compile(r"SHOW\s+LAST\s+RELEASE", re.IGNORECASE)  # as _SET and _SHOW
#: asyncpg's statements around its type introspection (PostgreSQL's JIT: none here)
#: matched in full against the statement stripped as by _client_statement (linear time: h143)
_JIT = re.compile(r"SELECT\s+(current_setting\('jit'\)\s+AS\s+cur,\s*)?set_config\('jit',"
                  r"\s*('off'|\$1),\s*false\)(\s+AS\s+new)?", re.IGNORECASE)
#: asyncpg's type introspection (``WITH RECURSIVE typeinfo_tree … any($1::oid[])``), which it
#: sends for an array type it has no codec for (``int4[]`` of ``x = ANY($1)``)
_TYPEINFO = re.compile(r"^\s*WITH\s+RECURSIVE\s+typeinfo_tree\b.*\bany\(\$1::oid\[\]\)", re.I | re.S)
#: element OID → (typname, its regtype name)
_TYPE_NAMES = {16: ("bool", "boolean"), 17: ("bytea", "bytea"), 21: ("int2", "smallint"),
               23: ("int4", "integer"), 20: ("int8", "bigint"), 25: ("text", "text"),
               700: ("float4", "real"), 701: ("float8", "double precision"), 1082: ("date", "date"),
               1083: ("time", "time without time zone"),
               1114: ("timestamp", "timestamp without time zone"),
               1184: ("timestamptz", "timestamp with time zone"), 1186: ("interval", "interval"),
               1700: ("numeric", "numeric"), 2950: ("uuid", "uuid"), 114: ("json", "json"),
               26: ("oid", "oid")}
TYPEINFO_COLUMNS = [("oid", "BIGINT"), ("ns", "VARCHAR"), ("name", "VARCHAR"), ("kind", "VARCHAR"),
                    ("basetype", "BIGINT"), ("elemtype", "BIGINT"), ("elemdelim", "VARCHAR"),
                    ("range_subtype", "BIGINT"), ("attrtypoids", "VARCHAR"),
                    ("attrnames", "VARCHAR"), ("depth", "INTEGER"), ("basetype_name", "VARCHAR"),
                    ("elemtype_name", "VARCHAR"), ("range_subtype_name", "VARCHAR")]
_INTERVALS = "provsql_dp.interval_columns"
_ROLE = "provsql_dp.role"  # SHOW only: the signed-in account's role (provsql-dp shell --server)


_CHUNK = 10_000  # rows turned into Python tuples at a time while a result is sent


@dataclass
class Outcome:
    """A statement's result: ``columns`` (name, DuckDB type) or None, its rows (a list, or a
    cursor read in chunks as they are sent), its tag (a result set's is ``SELECT <rows sent>``)."""

    tag: str
    columns: list[tuple[str, object]] | None = None
    rows: list[tuple] = field(default_factory=list)
    privacy: object | None = None
    cursor: object | None = None  # rows not read yet come from here
    done: bool = False  # every row read
    reported: tuple | None = None  # a setting the client is told of (ParameterStatus)

    def take(self, n: int) -> list[tuple]:
        """The next ``n`` rows (``n`` ≤ 0: all the rest): those held first, then the cursor's."""
        out = list(self.rows[:n] if n > 0 else self.rows)
        self.rows = self.rows[len(out):]
        while self.cursor is not None and (n <= 0 or len(out) < n):
            chunk = self.cursor.fetchmany(_CHUNK if n <= 0 else min(_CHUNK, n - len(out)))
            if not chunk:
                self.close()
                break
            out.extend(chunk)
        self.done = self.cursor is None and not self.rows
        return out

    def close(self) -> None:
        self.done = True
        if self.cursor is not None:
            self.cursor.close()
            self.cursor = None


def command_tag(stmt: str, description, rowcount: int) -> str:
    """The CommandComplete tag PostgreSQL would send for ``stmt``."""
    words = stmt.split(None, 2)
    first = words[0].upper() if words else ""
    if description is not None:
        return f"SELECT {max(rowcount, 0)}"
    if first == "INSERT":
        return f"INSERT 0 {max(rowcount, 0)}"
    if first in ("UPDATE", "DELETE", "MERGE", "COPY"):
        return f"{first} {max(rowcount, 0)}"
    if first in ("CREATE", "DROP", "ALTER") and len(words) > 1:
        return f"{first} {words[1].upper().rstrip(';')}"
    return first.rstrip(";")


def charged_text(info) -> str:
    """What a release charged, in its budget's unit (``ε charged 0.5``, ``ρ charged 0.125``,
    ``ε charged 1, δ 1e-06``).

    >>> from types import SimpleNamespace as NS
    >>> charged_text(NS(epsilon=0.125, unit="rho", delta=0.0))
    'ρ charged 0.125'
    """
    if getattr(info, "unit", "epsilon") == "rho":
        return f"ρ charged {info.epsilon:g}"
    delta = getattr(info, "delta", 0.0) or 0.0
    return f"ε charged {info.epsilon:g}" + (f", δ {delta:g}" if delta else "")


def _last_release(info) -> Outcome:
    # ``epsilon`` and ``remaining`` are counted in ``unit``: epsilon, epsilon-delta or rho
    cols = [("mechanism", "VARCHAR"), ("epsilon", "DOUBLE"), ("remaining", "DOUBLE"),
            ("row_number", "INTEGER"), ("column_name", "VARCHAR"), ("low", "DOUBLE"),
            ("high", "DOUBLE"), ("coverage", "DOUBLE"), ("covers", "VARCHAR"), ("unit", "VARCHAR")]
    rows = []
    if info is not None:
        unit = getattr(info, "unit", "epsilon")
        names = [lo[:-4] for lo, _ in info.interval_names()]
        covers = info.covers()
        intervals = info.intervals(0.95) if info.releases else []
        for i, per_col in enumerate(intervals, 1):
            for j, (lo, hi) in enumerate(per_col):
                if j in getattr(info, "public_columns", ()):
                    continue  # a GROUP BY key among the values: public, no interval
                rows.append((info.mechanism, info.epsilon, info.remaining, i,
                             names[j] if j < len(names) else f"value{j + 1}",
                             None if lo is None else float(lo), None if hi is None else float(hi),
                             0.95, covers[j] if j < len(covers) else None, unit))
        if not rows:
            rows.append((info.mechanism, info.epsilon, info.remaining, None, None, None, None, None,
                         None, unit))
    return Outcome(f"SELECT {len(rows)}", cols, rows)


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|min|h)?\s*$", re.IGNORECASE)


def _statement_timeout(session, value: str) -> Outcome:
    """``SET statement_timeout``: PostgreSQL's units (a bare number is milliseconds; 0: none).
    The session's statements stop after it (the server's --statement-timeout still applies when
    shorter); private releases get it as their release time limit, so they stop their own work by
    then and release their data-independent fallback — but never before the server's
    ``--release-seconds``, when it pads releases."""
    m = _DURATION.match(value)
    if m is None:
        raise ProgrammingError(f"statement_timeout takes a duration such as 5000 (ms), '5s' or '1min', got {value!r}")
    seconds = float(m[1]) * {"ms": 0.001, "s": 1, "min": 60, "h": 3600}[(m[2] or "ms").lower()]
    session.statement_timeout = seconds or None
    engine_limit = session.server.engine.release_time_limit
    # never below the curator's padding (--release-seconds S): every release then takes S, and
    # a limit the analyst picks under S would make the fallback answer exactly when the work took
    # longer than the analyst's threshold — the running-time channel the padding closes (red
    # team h94attack, finding 6). The statement itself still stops at the session's timeout.
    mine = session.statement_timeout
    padded = getattr(session.con, "release_seconds", None)
    if mine is not None and padded is not None:
        mine = max(mine, padded)
    limits = [t for t in (engine_limit, mine) if t is not None]
    session.con.release_time_limit = min(limits) if limits else None
    session.settings["statement_timeout"] = value
    return Outcome("SET")


def _client_statement(stmt: str) -> tuple[str, str, str | None] | None:
    """``("SET", name, value)``, ``("SHOW", name, None)``, ``("LAST", "", None)`` for ``SHOW LAST
    RELEASE``, or None: how the wire layer reads a statement it may answer itself.

    >>> _client_statement("set application_name TO 'psql' ;"), _client_statement("SHOW a b!")
    (('SET', 'application_name', "'psql'"), None)
    """
    body = stmt.strip()
    body = body[:-1].rstrip() if body.endswith(";") else body
    if _LAST.fullmatch(body):
        return ("LAST", "", None)
    if m := _SET.fullmatch(body):
        return ("SET", m["name"], m["value"].strip())
    if m := _SHOW.fullmatch(body):
        return ("SHOW", m["name"], None)
    return None


def is_jit(stmt: str):
    """The match of asyncpg's statements around its type introspection, or None."""
    body = stmt.strip()
    return _JIT.fullmatch(body[:-1].rstrip() if body.endswith(";") else body)


def jit_outcome(stmt: str, parameters) -> Outcome:
    """asyncpg's ``SELECT current_setting('jit') AS cur, set_config('jit', 'off', false) AS
    new`` and ``SELECT set_config('jit', $1, false)``: acknowledged (no JIT here)."""
    if is_jit(stmt)[1]:
        return Outcome("SELECT 1", [("cur", "VARCHAR"), ("new", "VARCHAR")], [("off", "off")])
    return Outcome("SELECT 1", [("set_config", "VARCHAR")], [((parameters or ["off"])[0],)])


def _typeinfo(parameters) -> Outcome:
    """asyncpg's type introspection, answered for the arrays this server sends and reads (their
    elements have asyncpg's own codecs); other OIDs have no row (no such type here)."""
    from ._types import _ELEMENTS
    rows = []
    for oid in (parameters or [[]])[0] or []:
        element = _ELEMENTS.get(oid)
        if element in _TYPE_NAMES:
            name, regtype = _TYPE_NAMES[element]
            rows.append((oid, "pg_catalog", "_" + name, "b", None, element, ",", None, None, None,
                         0, None, regtype, None))
    return Outcome(f"SELECT {len(rows)}", list(TYPEINFO_COLUMNS), rows)


def _setting(session, stmt: str) -> Outcome | None:
    """A client setting (SET/SHOW of a driver's parameter); None when the statement is not one."""
    read = _client_statement(stmt)
    kind, name, value = read or ("", "", None)
    if kind == "SET":
        name = name.lower()
        value = value.strip("'\"")
        if name == _INTERVALS:
            try:
                setting = {"on": True, "true": True, "off": False, "false": False}.get(value.lower())
                setting = float(value) if setting is None else setting
                coverage_of(setting)
            except (ValueError, ProgrammingError):
                raise ProgrammingError(f"{_INTERVALS} takes on, off or a coverage in (0.5, 1), "
                                       f"got {value!r}") from None
            session.con.interval_columns = setting
            return Outcome("SET")
        if name == "statement_timeout":
            return _statement_timeout(session, value)
        if name in ("timezone", "time zone"):  # a timestamptz parameter's text without an offset
            try:
                zone(value)
            except ValueError as e:
                raise ProgrammingError(str(e)) from None
            session.settings["timezone"] = value
            return Outcome("SET", reported=("TimeZone", value))  # as PostgreSQL reports it
        if name in CLIENT_SETTINGS or name == "time zone" or name == "names":
            session.settings[name] = value
            return Outcome("SET")
        return None
    if kind == "SHOW" and name.lower() in (*CLIENT_SETTINGS, _INTERVALS, _ROLE):
        name = name.lower()
        value = str(session.con.interval_columns) if name == _INTERVALS else session.con.role \
            if name == _ROLE else session.settings.get(name, CLIENT_SETTINGS[name])
        return Outcome("SHOW", [(name.replace(" ", "_"), "VARCHAR")], [(value,)])
    return None


def _catalog(session, stmt: str, parameters) -> Outcome:
    """A catalog query answered from the schema replica. Its refusal is in the audit log as the
    cursor's are (:func:`..dbapi.audit_failures.audit_failure`: an analyst's always, a curator's
    not, as their failed public statements); a success writes nothing — it releases nothing, and
    drivers send many catalog queries."""
    replica = session.server.replica
    try:
        cur = session.catalog_cursor = replica.cursor(session.con._duck)
        try:
            desc, rows = replica.run(cur, stmt, parameters)
        except duckdb.Error as e:
            raise type(translate(e))(
                f"this catalog query is answered from the server's catalog (names and types only), and "
                f"could not be answered there: {str(e).splitlines()[0]}") from e
        finally:
            session.catalog_cursor = None
            cur.close()
    except Error as e:
        audit_failure(session.con, stmt, e, False)  # it charges nothing: a refusal
        raise
    cols = [(c[0], c[1]) for c in desc] if desc else None
    return Outcome(command_tag(stmt, desc, len(rows)), cols, rows)


def _transaction(session, stmt: str) -> Outcome:
    word = stmt.split()[0].upper()
    tag = {"START": "BEGIN", "END": "COMMIT", "ABORT": "ROLLBACK"}.get(word, word)
    if session.con.role == "curator":
        try:
            session.con.execute(stmt)
        except Error as e:  # a privacy statement commits on its own: the transaction may be over
            if tag == "BEGIN" or "no transaction is active" not in str(e):
                raise
    session.in_transaction = tag == "BEGIN"
    return Outcome(tag)


def execute(session, stmt: str, parameters=None) -> Outcome:
    """Run one statement of the session's client."""
    if (_client_statement(stmt) or ("",))[0] == "LAST":
        return _last_release(session.last_privacy)
    if is_jit(stmt):
        return jit_outcome(stmt, parameters)
    if _TYPEINFO.match(stmt):
        return _typeinfo(parameters)
    try:
        out = _setting(session, stmt) if parameters is None else None
    except Error as e:  # a SET refused (a value it cannot take): in the audit log as any refusal
        audit_failure(session.con, stmt, e, False)
        raise
    if out is not None:
        return out
    if m := _SAVEPOINT.match(stmt):
        word = m[1].split()[0].upper()
        if word == "ROLLBACK" and session.con.role == "curator":
            e = NotSupportedError("DuckDB has no savepoints: ROLLBACK TO SAVEPOINT cannot undo part "
                                  "of a transaction; ROLLBACK the whole transaction instead")
            audit_refusal(session.con, stmt, e)  # a refusal, as every other: in the audit log
            raise e
        return Outcome(word)  # nothing to undo for an analyst, who can change nothing
    if _TX.match(stmt):
        return _transaction(session, stmt)
    if _NOOP.match(stmt):
        return Outcome(" ".join(stmt.split()[:2]).upper().rstrip(";"))
    if names_the_catalog(stmt):
        try:  # an analyst's size and depth limits before the parse of is_catalog_query (the
            # path of every statement checks them in Cursor.execute)
            check_statement(session.con, stmt, parameters)  # the replica binds them as values
        except Error as e:
            audit_failure(session.con, stmt, e, False)
            raise
        if is_catalog_query(stmt):
            return _catalog(session, stmt, parameters)
    cur = session.con.cursor()
    try:
        cur.execute(stmt, parameters)
    except BaseException:
        cur.close()
        raise
    if cur.privacy is not None:
        session.last_privacy = cur.privacy
    desc = cur.description
    if desc is None:
        cur.close()
        return Outcome(command_tag(stmt, None, cur.rowcount), None, [], cur.privacy, done=True)
    # the rows go out in chunks (a large public table is not turned into tuples at once)
    return Outcome("SELECT", [(c[0], c[1]) for c in desc], [], cur.privacy, cursor=cur)
