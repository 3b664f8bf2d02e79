"""A wire server on a small database for the client tests (tests/system/test_pgwire*.py).

``emp`` (200 rows) is protected, ``depts`` and ``pub`` are public; ``ann`` and ``bob`` are
analysts with budget 3, ``cu`` the curator. The server runs in the test's process on a free
loopback port.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess

import provsql_dp
from provsql_dp.interfaces.pgwire import WireServer
from provsql_dp.interfaces.web import accounts
from provsql_dp.interfaces.web.engine import Engine

PASSWORDS = {"ann": "ann-password", "bob": "bob-password", "cu": "cu-password"}


def make_database(path: str) -> None:
    con = provsql_dp.connect(path)
    con.execute("CREATE TABLE emp(id INT PRIMARY KEY, dept VARCHAR, salary DOUBLE)")
    con.execute("INSERT INTO emp SELECT range, 'd' || (range % 3), range * 10.0 FROM range(200)")
    con.execute("CREATE TABLE depts(name VARCHAR, floor INT)")
    con.execute("INSERT INTO depts VALUES ('d0', 1), ('d1', 2), ('d2', 2)")
    con.execute("CREATE TABLE pub(x INT)")
    con.execute("INSERT INTO pub SELECT range FROM range(3000)")
    con.execute("PROTECT TABLE emp")
    con.execute("SET GROUP KEYS ON emp (dept) VALUES ('d0', 'd1', 'd2')")
    for user in ("ann", "bob"):
        con.execute(f"SET PRIVACY BUDGET 3 FOR USER '{user}'")
        accounts.add_account(con._duck, user, "analyst", PASSWORDS[user])
    accounts.add_account(con._duck, "cu", "curator", PASSWORDS["cu"])
    con.commit()
    con.close()


@contextlib.contextmanager
def running_server(path: str, **engine_options):
    engine = Engine(path, **engine_options)
    server = WireServer(engine, "127.0.0.1", 0, **engine_options.pop("_wire", {})).start()
    try:
        yield server
    finally:
        server.close()
        engine.close()


def served(tmp_path_factory, name: str, *statements: str, **engine_options):
    """A module fixture's body: the server on a fresh :func:`make_database` (``yield from``),
    after the curator's ``statements`` (tables and declarations of the module's own)."""
    path = str(tmp_path_factory.mktemp(name) / f"{name}.duckdb")
    make_database(path)
    if statements:
        con = provsql_dp.connect(path)
        for sql in statements:
            con.execute(sql)
        con.commit()
        con.close()
    with running_server(path, **engine_options) as srv:
        yield srv


def spent(path_or_engine, user: str) -> str:
    """The ε ``user`` has spent, read on a curator connection of the server's engine."""
    with path_or_engine.checkout("curator", "_test") as con:
        return str(con.ledger.budget(user)[1])


def dsn(server, user: str, **extra) -> str:
    parts = {"host": "127.0.0.1", "port": server.port, "user": user, "password": PASSWORDS.get(user, "x"),
             "dbname": "demo", **extra}
    return " ".join(f"{k}={v}" for k, v in parts.items())


PSQL = shutil.which("psql")


def psql(server, user: str, script: str, *flags: str) -> subprocess.CompletedProcess:
    """Debian's psql running ``script`` as ``user`` (no ~/.psqlrc)."""
    env = dict(os.environ, PGPASSWORD=PASSWORDS[user], PGCONNECT_TIMEOUT="10")
    return subprocess.run([PSQL, "-X", "-h", "127.0.0.1", "-p", str(server.port), "-U", user, "-d", "demo",
                           *flags], input=script, capture_output=True, text=True, env=env, timeout=120)


def ledger_rows(path_or_engine) -> list[tuple]:
    """Every row of the ledger, read on a curator connection of the server's engine (a refusal
    leaves them exactly as they were)."""
    with path_or_engine.checkout("curator", "_test") as con:
        return con.execute("SELECT * FROM _provsql_dp.ledger ORDER BY id").fetchall()


def asyncpg_run(server, user: str, body):
    """``body(connection)`` on an asyncpg connection signed in with SCRAM (no TLS)."""
    import asyncio

    import asyncpg

    async def main():
        c = await asyncpg.connect(host="127.0.0.1", port=server.port, user=user,
                                  password=PASSWORDS[user], database="demo", ssl=False)
        try:
            return await body(c)
        finally:
            await c.close()
    return asyncio.run(main())
