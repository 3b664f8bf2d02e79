"""The wire server: a listening socket, one thread per client session, CancelRequests routed.

:class:`WireServer` runs beside the explorer in the same process and on the same
:class:`~provsql_dp.interfaces.web.engine.Engine` (one database, one ledger). Each accepted
connection gets a thread running a :class:`~._session.Session`; a CancelRequest (a new connection
carrying a session's process id and secret key) stops that session's statement.

The accept thread outlives a failed ``accept()`` (out of file descriptors, a client that reset
before it was accepted): it logs the failure and listens on, since a dead accept thread would
leave every later client hanging. Threads of one client process are clients like any other
(``tests/system/test_pgwire_concurrent_clients.py``).
"""

from __future__ import annotations

import logging
import secrets
import socket
import ssl
import threading
import time

from ..._cancel import wait_ended
from ..web.login_limits import LoginLimits
from ._catalog import Replica
from ._scram import tls_server_end_point
from ._session import Session

__all__ = ["WireServer", "tls_context"]

log = logging.getLogger("provsql_dp.pgwire")
ACCEPT_RETRY_SECONDS = 0.05  # after a failed accept() (e.g. EMFILE), before the next


def tls_context(cert: str, key: str) -> ssl.SSLContext:
    """A server TLS context from the operator's certificate chain and private key (PEM files).
    It remembers the server certificate's ``tls-server-end-point`` data (``channel_binding``,
    None when its signature hash is not one RFC 5929 names), for SCRAM-SHA-256-PLUS."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(cert, key)
    with open(cert, encoding="ascii", errors="replace") as f:
        pem = f.read()
    end = "-----END CERTIFICATE-----"
    first = pem[pem.find("-----BEGIN CERTIFICATE-----"):pem.find(end) + len(end)]  # the server's own
    ctx.channel_binding = tls_server_end_point(ssl.PEM_cert_to_DER_cert(first))
    return ctx


class WireServer:
    """PostgreSQL's wire protocol on ``host:port`` over ``engine``.

    ``tls``: an :class:`ssl.SSLContext` (clients may then ask for TLS); ``require_tls``: refuse
    clients that do not. ``port=0`` picks a free port (see :attr:`port`)."""

    def __init__(self, engine, host: str = "127.0.0.1", port: int = 5433, *,
                 tls: ssl.SSLContext | None = None, require_tls: bool = False, max_sessions: int = 256):
        self.engine = engine
        self.tls = tls
        self.require_tls = require_tls and tls is not None
        #: the certificate's channel-binding data (SCRAM-SHA-256-PLUS offered on TLS sessions)
        self.channel_binding = getattr(tls, "channel_binding", None)
        self.max_sessions = max_sessions
        self.secret = secrets.token_bytes(32)  # for the decoy salts of unknown accounts
        #: failed sign-ins: backoff per client address and account name; a pool's connections
        #: from one address sign in together (16 at a time), 256 in all
        self.login_limits = LoginLimits(per_client=16, max_running=256)
        self.replica = Replica()
        self._sessions: dict[int, Session] = {}
        self._lock = threading.Lock()
        self._listener = socket.create_server((host, port), reuse_port=False, backlog=128)
        self.host, self.port = self._listener.getsockname()[:2]
        self._thread: threading.Thread | None = None
        self._accepting = threading.Event()  # set as the accept thread ends
        #: each session and the Event its thread sets last (never Thread.join/is_alive: on
        #: CPython 3.11 a Ctrl-C landing in either marks a thread inside DuckDB stopped, and the
        #: server's exit tore it down there; _cancel.wait_ended)
        self._threads: list[tuple[threading.Thread, threading.Event, Session]] = []
        self._closing = False

    def start(self) -> "WireServer":
        """Accept clients on a background thread; returns at once."""
        self._thread = threading.Thread(target=_then_set, args=(self.serve_forever, self._accepting),
                                        name="pgwire-accept", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        while not self._closing:
            try:
                sock, address = self._listener.accept()
            except OSError as e:
                if self._closing:
                    return
                # a transient failure (out of file descriptors, a client that reset before we
                # accepted it…) must not end the accept thread: every later client would hang
                log.warning("wire server: accepting a client failed (%s); still listening", e)
                time.sleep(ACCEPT_RETRY_SECONDS)
                continue
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:  # the client is already gone
                sock.close()
                continue
            with self._lock:
                full = len(self._sessions) >= self.max_sessions
            if full:
                from . import _messages as m

                sock.sendall(m.error_response("53300", "too many clients are connected to this server; "
                                              "try again later", severity="FATAL"))
                sock.close()
                continue
            session = Session(self, sock, address)
            ended = threading.Event()
            thread = threading.Thread(target=_then_set, args=(session.run, ended),
                                      name=f"pgwire-{address[1]}", daemon=True)
            with self._lock:
                self._threads = [(t, e, s) for t, e, s in self._threads if not e.is_set()] + [
                    (thread, ended, session)]
            thread.start()

    def _register(self, session: Session) -> None:
        with self._lock:
            self._sessions[session.pid] = session

    def _forget(self, session: Session) -> None:
        with self._lock:
            if self._sessions.get(session.pid) is session:
                del self._sessions[session.pid]

    def cancel(self, pid: int, secret: int) -> None:
        """A CancelRequest: stop the statement of the session with that key (else nothing)."""
        with self._lock:
            session = self._sessions.get(pid)
        if session is not None and secrets.compare_digest(session.secret.to_bytes(4, "big"),
                                                          secret.to_bytes(4, "big", signed=True)):
            session.cancel()

    def close(self, wait: float = 10.0) -> None:
        """Stop accepting, stop every session's statement, end the sessions (waiting up to
        ``wait`` seconds for their threads, which close their connections)."""
        self._closing = True
        try:
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._listener.close()
        with self._lock:
            running = list(self._threads)  # signed in or still signing in
        for _, _, s in running:
            s.cancel()
            try:
                s.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        interrupted = False
        for t, ended in [(t, e) for t, e, _ in running] + (
                [(self._thread, self._accepting)] if self._thread else []):
            interrupted |= wait_ended(ended, wait)
            if ended.is_set():  # past its last step, no C++ left: a join only tidies up
                t.join(wait)
        if interrupted:
            raise KeyboardInterrupt


def _then_set(run, ended: threading.Event) -> None:
    """``run()``, then ``ended`` set: a thread's end as :func:`~provsql_dp._cancel.wait_ended`
    waits for it."""
    try:
        run()
    finally:
        ended.set()
