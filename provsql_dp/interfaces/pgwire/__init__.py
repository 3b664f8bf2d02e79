"""PostgreSQL's wire protocol in front of provsql_dp: psql, psycopg, JDBC, SQLAlchemy, BI tools.

``provsql-dp serve DATABASE --pg-port 5433`` starts it beside the explorer, in the same process
and on the same engine (:class:`provsql_dp.interfaces.web.engine.Engine`): one database, one
ledger. A client signs in with **SCRAM-SHA-256** against the account's stored verifier
(:mod:`provsql_dp.interfaces.web.accounts`; the same accounts sign in to the explorer); its role
is the account's. TLS is offered when the operator gives a certificate (``--tls-cert``,
``--tls-key``), and with it SCRAM-SHA-256-PLUS (channel binding, :mod:`._scram`). Every statement then runs on the session's own provsql_dp connection
(``role=…, user=…``), through the same cursor path as the DB-API — refusals, routes and charges
are exactly the shell's — with these additions for clients that know only SQL
(:mod:`._execute`): private answers carry interval columns by default, a notice after each
release says what was charged, ``SHOW LAST RELEASE`` gives the release's metadata as rows, and
catalog queries are answered from a schema replica without rows (:mod:`._catalog`). Errors carry
SQLSTATE codes (:mod:`._sqlstate`); result columns carry PostgreSQL type OIDs (:mod:`._types`).

Why a protocol implementation of our own, kept to the framing (:mod:`._messages`): of the Python
libraries evaluated, ``riffq`` (Rust ``pgwire`` under a Python callback API) ships no wheel for
this Python (3.11) on Linux x86-64 and its source build fetches a git dependency; ``buenavista``
(last release 2024) supports MD5 sign-in against plaintext passwords only, no TLS, errors without
SQLSTATE, and a CancelRequest that closes the session instead of stopping the statement; and
``postgres-wire`` needs Python 3.13. The protocol messages are few and fixed; the tests drive the
server with real clients (libpq's psql, psycopg, SQLAlchemy, pandas).

>>> from provsql_dp.interfaces.web.engine import Engine
>>> srv = WireServer(Engine(":memory:"), port=0)
>>> srv.port > 0
True
>>> srv.close()
"""

from .server import WireServer, tls_context

__all__ = ["WireServer", "tls_context"]
