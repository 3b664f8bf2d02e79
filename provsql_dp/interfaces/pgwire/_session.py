"""One wire client from its first byte to its last: TLS, sign-in, then simple and extended query.

The session thread reads the client's messages and runs each statement on the session's own
provsql_dp connection (:mod:`._execute`). While a statement runs, a watcher notices the client
leaving (its socket closed) and stops the statement, as a CancelRequest does
(:meth:`provsql_dp.interfaces.web.engine.Engine.cancel` of this session only).

Extended query protocol: Parse stores a statement, Bind makes a portal with its parameters
(text or binary, by the client's type OIDs), Describe of a portal runs it and Execute sends its
rows (``max_rows`` honoured with PortalSuspended); after an error every message up to Sync is
skipped, as PostgreSQL does. Describe of a statement answers its parameter types and columns
without running it (:mod:`._describe`); an Execute whose client described only the statement
gets its rows in the types described. A message refused before any statement runs — an unknown
prepared statement or portal, a Parse of several statements (which leaves no statement under its
name), a parameter of the wrong count, type or format code — is in the audit log as every
refusal is, with the session's user, role and client
(:func:`..dbapi.audit_failures.audit_refusal`); a statement's own refusal its path logs.

A session never ends without a word while the client still listens: a sign-in that stalls past
``SIGN_IN_SECONDS`` and a connection the server cannot open for the account (an ``OSError``
there is the server's, not the client leaving) end with a FATAL ``08006`` that says so.
"""

from __future__ import annotations

import logging
import secrets
import socket
import ssl
import struct
import threading

from ...errors import Error, InterfaceError
from ..dbapi.audit_failures import audit_refusal
from ..dbapi.statements import split_statements
from ..web import accounts
from ..web.engine import TooManyStatements, interrupt
from . import _messages as m
from ._describe import as_described, bind_oids, check_described, describe_statement, placeholders
from ._execute import CLIENT_SETTINGS, charged_text, command_tag, execute
from ._scram import MECHANISM, MECHANISM_PLUS, Exchange, ScramError
from ._sqlstate import (CONNECTION_FAILURE, INTERNAL, INVALID_AUTH, INVALID_PASSWORD, PROTOCOL,
                        QUERY_CANCELED, TOO_MANY, sqlstate)
from ._temporal import zone
from ._types import decode_param, encode_binary, encode_text, type_oid, type_size
from ._watch import watch_disconnect

__all__ = ["Session"]

log = logging.getLogger("provsql_dp.pgwire")
_FLUSH_AT = 1 << 16
SIGN_IN_SECONDS = 30.0


class _Refused(Exception):
    """Sign-in refused: the session ends after the error is sent."""

    def __init__(self, code: str, text: str, hint: str | None = None):
        super().__init__(text)
        self.code, self.hint = code, hint


class _Portal:
    def __init__(self, sql: str, params, formats: list[int], described):
        self.sql, self.params, self.formats = sql, params, formats
        self.outcome, self.sent = None, 0
        self.described = described  # the statement's Describe, when the client decodes by it


class Session:
    """The server side of one client connection."""

    def __init__(self, server, sock: socket.socket, address):
        self.server, self.sock, self.address = server, sock, address
        self.pid = secrets.randbits(31)
        self.secret = secrets.randbits(31)
        self.con = None
        self.role = self.user = None
        self.settings: dict[str, str] = {}
        self.last_privacy = None
        self.in_transaction = False
        self.statement_timeout: float | None = None  # SET statement_timeout (seconds; None: none)
        self._limit: float | None = None
        self.statements: dict[str, tuple[str, list[int]]] = {}
        self.descriptions: dict = {}  # a prepared statement's Describe (._describe.Description)
        self.portals: dict[str, _Portal] = {}
        self._out: list[bytes] = []
        self._size = 0
        self._running = None  # the engine's entry of the statement under way
        self.catalog_cursor = None  # the schema replica's connection of a catalog query under way
        self._cancelled = False
        self._timed_out = False
        self._runs = 0  # statements run: a message's error with none run is the message's refusal
        self._about = ""  # what the message under way names (its statement's text, or its name)

    # ------------------------------------------------------------------ output
    def send(self, data: bytes) -> None:
        self._out.append(data)
        self._size += len(data)
        if self._size >= _FLUSH_AT:
            self.flush()

    def flush(self) -> None:
        if self._out:
            data, self._out, self._size = b"".join(self._out), [], 0
            self.sock.sendall(data)

    def error(self, e: BaseException) -> None:
        if isinstance(e, _Refused):
            return self.send(m.error_response(e.code, str(e), e.hint, severity="FATAL"))
        if self._cancelled or self._timed_out:
            why = (f"the statement ran longer than its time limit ({self._limit:g} s: the server's "
                   "--statement-timeout or the session's statement_timeout)" if self._timed_out
                   else "the statement was cancelled at the client's request")
            self.send(m.error_response(QUERY_CANCELED, f"{why}; anything it had released stands"))
            return
        if isinstance(e, Error):
            self.send(m.error_response(TOO_MANY if isinstance(e, TooManyStatements) else sqlstate(e),
                                       str(e), routine=getattr(e, "routine", None)))
            return
        if isinstance(e, m.ProtocolViolation):  # the client's own bytes: described back
            self.send(m.error_response(PROTOCOL, f"protocol error: {e}"))
            return
        log.error("internal error serving %s", self.user, exc_info=e)
        self.send(m.error_response(INTERNAL, "the server could not complete this statement (an internal "
                                   "error; details are in the server's log)"))

    # ------------------------------------------------------------------ lifetime
    def _last_words(self, code: str, text: str) -> None:
        """A FATAL error to a client whose session ends (nothing if it is gone already)."""
        try:
            self.send(m.error_response(code, text, severity="FATAL"))
            self.flush()
        except OSError:
            pass

    def run(self) -> None:
        try:
            self.sock.settimeout(SIGN_IN_SECONDS)  # a client that never finishes signing in
            if self._startup():
                self.sock.settimeout(None)
                self._loop()
        except TimeoutError:  # only sign-in has a time limit: say so rather than just hang up
            self._last_words(CONNECTION_FAILURE, f"sign-in did not finish within "
                                                 f"{SIGN_IN_SECONDS:g} s; connect again")
        except (EOFError, ConnectionError, OSError, ssl.SSLError):
            pass  # the client went away
        except _Refused as e:
            try:
                self.error(e)
                self.flush()
            except OSError:
                pass
        except m.ProtocolViolation as e:  # the client's own bytes: say what was wrong with them
            log.warning("wire session from %s ended on a protocol error: %s", self.address, e)
            self._last_words(PROTOCOL, f"protocol error: {e}")
        except Exception as e:  # noqa: BLE001 - an internal error ends this session only
            # its text may quote the data (a value being encoded, an engine's message): the log
            # keeps it, the client learns only that the session ended on an internal error
            log.error("wire session from %s ended on an internal error", self.address, exc_info=e)
            self._last_words(INTERNAL, "the server could not continue this session (an internal "
                                       "error; details are in the server's log)")
        finally:
            self.server._forget(self)
            for portal in self.portals.values():
                if portal.outcome is not None:
                    portal.outcome.close()
            if self.con is not None:
                self.con.close()
            try:
                self.sock.close()
            except OSError:
                pass

    def _startup(self) -> bool:
        while True:
            code, body = m.read_startup(self.sock)
            if code == m.SSL_REQUEST:
                if self.server.tls is None:
                    self.sock.sendall(b"N")
                    continue
                self.sock.sendall(b"S")
                self.sock = self.server.tls.wrap_socket(self.sock, server_side=True)
                continue
            if code == m.GSS_REQUEST:
                self.sock.sendall(b"N")
                continue
            if code == m.CANCEL_REQUEST:
                pid, secret = struct.unpack("!ii", body[:8])
                self.server.cancel(pid, secret)
                return False
            if code != m.PROTOCOL_3:
                raise _Refused(PROTOCOL, f"unsupported frontend protocol {code >> 16}.{code & 0xFFFF}: "
                                         "this server speaks protocol 3.0")
            break
        parts = body.split(b"\0")
        params = {k.decode(): v.decode() for k, v in zip(parts[0::2], parts[1::2]) if k}
        if self.server.tls is not None and self.server.require_tls and not isinstance(self.sock, ssl.SSLSocket):
            raise _Refused(INVALID_AUTH, "this server accepts TLS connections only", "connect with sslmode=require")
        self.user = params.get("user", "")
        self.role = self._authenticate(self.user)
        self.con = self._open()
        self.settings["application_name"] = params.get("application_name", "")
        for tz in (v for k, v in params.items() if k.lower() == "timezone"):  # a start-up option
            try:
                zone(tz)
            except ValueError as e:
                raise _Refused(PROTOCOL, f"start-up option TimeZone: {e}") from None
            self.settings["timezone"] = tz
        self.send(m.auth(0))
        status = dict(CLIENT_SETTINGS, application_name=params.get("application_name", ""),
                      session_authorization=self.user, is_superuser="off",
                      timezone=self.settings.get("timezone", "UTC"))
        for name in ("server_version", "server_encoding", "client_encoding", "application_name",
                     "DateStyle", "integer_datetimes", "IntervalStyle", "is_superuser",
                     "session_authorization", "standard_conforming_strings", "TimeZone"):
            self.send(m.parameter_status(name, status[name.lower()]))
        self.send(m.backend_key(self.pid, self.secret))
        self.server._register(self)
        self.send(m.ready("I"))
        self.flush()
        return True

    def _open(self):
        """The session's connection (a new one after Engine.recover); a failure to open it (the
        engine's, not the client's: out of file descriptors, Spark unreachable, a database out of
        service) ends the session with a FATAL error that says so, never with a silently closed
        socket (which a client reports as "server closed the connection unexpectedly")."""
        try:
            return self.server.engine.fresh(self.con, self.role, self.user, "wire", interval_columns=True)
        except Error as e:
            raise _Refused(sqlstate(e), f"the server could not open a connection for "
                                        f"{self.user!r}: {e}") from None
        except Exception as e:  # noqa: BLE001 - an OSError here must not read as "the client left"
            log.error("opening a wire session's connection for %s failed", self.user, exc_info=e)
            raise _Refused(CONNECTION_FAILURE, f"the server could not open a connection for "
                                               f"{self.user!r} (details are in the server's log); "
                                               "try again later") from None

    def _authenticate(self, user: str) -> str:
        """:meth:`_scram`, its failures counted per client address and account name
        (:class:`~provsql_dp.interfaces.web.login_limits.LoginLimits`, as the explorer's
        sign-in): past 5 failures of either, the next attempt waits 1 s, doubling to 60 s,
        refused at once before the exchange; the account's role."""
        client = str(self.address[0]) if isinstance(self.address, tuple) else str(self.address)
        wait = self.server.login_limits.begin(client, user)
        if wait is not None:
            raise _Refused(INVALID_AUTH, f"too many sign-ins from this address or for this "
                                         f"account: try again in {max(1, round(wait))} s")
        role = None
        try:
            role = self._scram(user)
            return role
        finally:
            self.server.login_limits.end(client, user, ok=role is not None)

    def _scram(self, user: str) -> str:
        """SCRAM-SHA-256 against the account's stored verifier; the account's role."""
        duck = self.server.engine.duck
        try:
            verifier = accounts.scram_verifier(duck, user)
        finally:
            duck.close()
        # on TLS, with a certificate whose hash RFC 5929 names: channel binding offered too
        binding = self.server.channel_binding if isinstance(self.sock, ssl.SSLSocket) else None
        offered = [MECHANISM_PLUS, MECHANISM] if binding is not None else [MECHANISM]
        self.sock.sendall(m.auth(10, b"".join(x.encode() + b"\0" for x in offered) + b"\0"))
        kind, body = m.read_message(self.sock)
        if kind != b"p":
            raise _Refused(PROTOCOL, "expected a SASL initial response")
        r = m.Reader(body)
        mechanism = r.cstring()
        if mechanism not in offered:
            raise _Refused(INVALID_AUTH, f"authentication mechanism {mechanism!r} is not supported; "
                                         f"this connection offers {', '.join(offered)}")
        n = r.int32()
        exchange = Exchange(verifier, self.server.secret, user, binding=binding,
                            plus=mechanism == MECHANISM_PLUS)
        try:
            first = exchange.server_first(r.bytes(n).decode())
            self.sock.sendall(m.auth(11, first.encode()))
            kind, body = m.read_message(self.sock)
            if kind != b"p":
                raise _Refused(PROTOCOL, "expected a SASL response")
            final = exchange.client_final(body.decode())
        except ScramError as e:
            raise _Refused(INVALID_AUTH, f"sign-in failed: {e}") from None
        if final is None:
            raise _Refused(INVALID_PASSWORD, f'password authentication failed for user "{user}"',
                           "check the name and password; the curator creates accounts with "
                           "provsql-dp serve DATABASE --add-account NAME --role ROLE (an account made "
                           "before SCRAM verifiers signs in to the explorer once first)")
        self.sock.sendall(m.auth(12, final.encode()))
        return verifier.role

    # ------------------------------------------------------------------ messages
    def _loop(self) -> None:
        skipping = False  # after an error in extended query: skip to Sync
        while True:
            kind, body = m.read_message(self.sock)
            self.con = self._open()  # the same, unless the engine reopened the database
            if kind == b"X":
                return
            if kind == b"S":
                skipping = False
                self.send(m.ready(self._status()))
                self.flush()
                continue
            if kind == b"H":
                self.flush()
                continue
            if kind == b"Q":
                self._simple(m.Reader(body).cstring())
                self.send(m.ready(self._status()))
                self.flush()
                continue
            if skipping:
                continue
            runs, self._about = self._runs, f"(wire message {kind.decode(errors='replace')!r})"
            try:
                handler = {b"P": self._parse, b"B": self._bind, b"D": self._describe,
                           b"E": self._execute, b"C": self._close}.get(kind)
                if handler is None:
                    raise InterfaceError(f"unsupported message type {kind!r}")
                handler(m.Reader(body))
            except Exception as e:  # noqa: BLE001 - reported to the client, the session goes on
                if self._runs == runs:  # the message's refusal (a statement's, its path logs)
                    audit_refusal(self.con, self._about, e)
                self.error(e)
                skipping = True

    def time_zone(self) -> str:
        """The session's ``TimeZone`` (``SET TimeZone``, or the client's start-up option)."""
        return self.settings.get("timezone", CLIENT_SETTINGS["timezone"])

    def _status(self) -> str:
        """ReadyForQuery's status: the curator's DuckDB transaction as the connection tracks it
        (a failed statement rolls it back: ``I``), an analyst's acknowledged BEGIN."""
        if self.con is not None and self.con.role == "curator":
            return "T" if self.con._in_tx else "I"
        return "T" if self.in_transaction else "I"

    def _run(self, stmt: str, params=None):
        """Run one statement with cancel and disconnect watching."""
        self._cancelled = self._timed_out = False
        self._runs += 1
        engine = self.server.engine
        with engine.running(self.role, self.user, self.con, self.statement_timeout, stmt) as entry:
            self._running = entry
            done = threading.Event()
            watcher = threading.Thread(target=watch_disconnect, args=(self, done), daemon=True)
            watcher.start()
            try:
                out = execute(self, stmt, params)
            finally:
                done.set()
                watcher.join()
                self._timed_out = entry.timed_out
                self._limit = entry.limit
                self._running = None
        if out.reported is not None:  # SET TimeZone: drivers read instants in it
            self.send(m.parameter_status(*out.reported))
        if out.privacy is not None:
            info = out.privacy
            self.send(m.notice_response(f"private release: mechanism {info.mechanism}, "
                                        f"{charged_text(info)}, remaining {info.remaining:g} "
                                        "(SHOW LAST RELEASE for the intervals)"))
        return out

    def cancel(self) -> None:
        entry, replica = self._running, self.catalog_cursor
        if entry is not None:
            self._cancelled = True
            interrupt(entry.con)
        if replica is not None:
            self._cancelled = True
            replica.interrupt()

    # ------------------------------------------------------------------ simple query
    def _kept_tokens(self):  # the session's connection's, never another session's (h85attack-6)
        return getattr(self.con, "_kept_tokens", None)

    def _simple(self, sql: str) -> None:
        try:
            stmts = split_statements(sql, self._kept_tokens())
        except Error as e:
            audit_refusal(self.con, sql, e)
            self.error(e)
            return
        if not stmts:
            self.send(m.message(b"I"))  # EmptyQueryResponse
            return
        for stmt in stmts:
            try:
                out = self._run(stmt)
            except Exception as e:  # noqa: BLE001 - the rest of the text does not run
                self.error(e)
                return
            if out.columns is not None:
                self._row_description(out.columns, [0] * len(out.columns))
                sent = self._rows(out, [0] * len(out.columns), 0, 0)
                self.send(m.command_complete(f"SELECT {sent}"))
            else:
                self.send(m.command_complete(out.tag))

    # ------------------------------------------------------------------ extended query
    def _parse(self, r: m.Reader) -> None:
        name, sql = r.cstring(), r.cstring()
        self.statements.pop(name, None)  # refused, it leaves none: a Bind never finds an old one
        self.descriptions.pop(name, None)
        self._about = sql
        n = r.int16()
        oids = [r.int32() for _ in range(n)]
        stmts = split_statements(sql, self._kept_tokens())
        if len(stmts) > 1:
            raise InterfaceError("a prepared statement holds one statement, not several")
        self.statements[name] = (stmts[0] if stmts else "", oids)
        self.send(m.message(b"1"))

    def _bind(self, r: m.Reader) -> None:
        portal, name = r.cstring(), r.cstring()
        sql, oids = self._statement(name, "Bind")
        fmts = [r.int16() for _ in range(r.int16())]
        n = r.int16()
        m.check_formats(fmts, n, "parameter")
        if n and placeholders(sql) not in (0, n):
            raise InterfaceError(f"Bind gives {n} parameter(s) and the statement takes "
                                 f"{placeholders(sql)} ($1 …): bind one value for each")
        raw = []
        for i in range(n):
            raw.append((None if (size := r.int32()) < 0 else r.bytes(size),
                        fmts[i] if len(fmts) > 1 else (fmts[0] if fmts else 0)))
        oids, values = bind_oids(self, name, sql, oids, raw), []
        for i, (data, fmt) in enumerate(raw):
            oid = oids[i]
            try:
                values.append(decode_param(oid, data, fmt, self.time_zone()))
            except (ValueError, struct.error, UnicodeDecodeError, KeyError, IndexError,
                    OverflowError) as e:  # malformed bytes (a 3-byte int4: KeyError)
                raise InterfaceError(f"parameter ${i + 1} cannot be read as type {oid}: {e}") from None
        result_fmts = [r.int16() for _ in range(r.int16())]
        m.check_formats(result_fmts, None, "result")
        old = self.portals.get(portal)
        if old is not None and old.outcome is not None:
            old.outcome.close()
        self.portals[portal] = _Portal(sql, values if values or placeholders(sql) else None,
                                       result_fmts, self.descriptions.get(name))
        self.send(m.message(b"2"))

    def _formats(self, portal: _Portal) -> list[int]:
        n = len(portal.outcome.columns or ())
        f = portal.formats
        return [0] * n if not f else (f * n if len(f) == 1 else f)

    def _ensure_run(self, portal: _Portal) -> None:
        if portal.outcome is None:
            portal.outcome = self._run(portal.sql, portal.params) if portal.sql else None

    def _describe(self, r: m.Reader) -> None:
        kind, name = r.bytes(1), r.cstring()
        if kind == b"S":
            sql, oids = self._statement(name, "Describe")
            found = describe_statement(self, sql, oids, max(placeholders(sql), len(oids)))
            self.descriptions[name] = found
            self.send(m.parameter_description(found.params))
            if found.columns is None:  # NoData: no rows, or columns known only when it runs
                self.send(m.message(b"n"))
            else:
                self._row_description(found.columns, [0] * len(found.columns))
            return
        portal = self._portal(name, "Describe")
        self._ensure_run(portal)
        portal.described = None  # the client decodes by this run's own description
        if portal.outcome is None or portal.outcome.columns is None:
            self.send(m.message(b"n"))
        else:
            self._row_description(portal.outcome.columns, self._formats(portal))

    def _execute(self, r: m.Reader) -> None:
        name, max_rows = r.cstring(), r.int32()
        portal = self._portal(name, "Execute")
        check_described(self, portal)  # before it runs: nothing charged
        self._ensure_run(portal)
        out = portal.outcome
        if out is None:
            self.send(m.message(b"I"))
            return
        told = portal.described
        if out.columns is not None and told is not None and told.status:
            # described NoData, as PostgreSQL describes such statements: the status line a notice
            self.send(m.notice_response(" ".join(str(r[0]) for r in out.take(0))))
            self.send(m.command_complete(command_tag(portal.sql, None, -1)))
            return
        if out.columns is not None:
            portal.sent = self._rows(out, self._formats(portal), portal.sent, max_rows,
                                     portal.described)
            if not out.done:
                self.send(m.message(b"s"))  # PortalSuspended
                return
            self.send(m.command_complete(f"SELECT {portal.sent}"))
            return
        self.send(m.command_complete(out.tag))

    def _statement(self, name: str, what: str) -> tuple[str, list[int]]:
        if name not in self.statements:
            self._about = f"({what} of the prepared statement {name!r})"
            raise InterfaceError(f"prepared statement {name!r} does not exist (a Parse refused "
                                 "leaves none under its name): Parse it first")
        self._about = self.statements[name][0]
        return self.statements[name]

    def _portal(self, name: str, what: str) -> _Portal:
        if name not in self.portals:
            self._about = f"({what} of the portal {name!r})"
            raise InterfaceError(f"portal {name!r} does not exist: Bind it first")
        self._about = self.portals[name].sql
        return self.portals[name]

    def _close(self, r: m.Reader) -> None:
        kind, name = r.bytes(1), r.cstring()
        gone = (self.statements if kind == b"S" else self.portals).pop(name, None)
        self.descriptions.pop(name, None) if kind == b"S" else None
        if isinstance(gone, _Portal) and gone.outcome is not None:
            gone.outcome.close()
        self.send(m.message(b"3"))

    # ------------------------------------------------------------------ results
    def _row_description(self, columns, formats: list[int]) -> None:
        oids = [type_oid(t) for _, t in columns]
        self.send(m.row_description([(c[0], o, type_size(o)) for c, o in zip(columns, oids)], formats))

    def _rows(self, out, formats: list[int], start: int, max_rows: int, told=None) -> int:
        """Send up to ``max_rows`` rows (≤ 0: all) after the ``start`` sent; the count sent so far.
        With a row limit, one row more is read to know whether the portal is done. ``told``: the
        statement's Describe, by which the client decodes them (None: the outcome's own)."""
        rows = out.take(max_rows + 1 if max_rows > 0 else 0)
        if max_rows > 0 and len(rows) > max_rows:
            out.rows, rows = rows[max_rows:] + out.rows, rows[:max_rows]  # the extra row waits
            out.done = False
        oids, rows = as_described(out.columns, rows, told)
        tz = zone(self.time_zone()) if 1184 in oids else None  # instants shown in TimeZone
        for row in rows:
            self.send(m.data_row([encode_binary(v, o) if f else encode_text(v, o, tz)
                                  for v, o, f in zip(row, oids, formats)]))
        return start + len(rows)

