"""Explorer accounts and sign-in sessions.

Accounts live in the database (``_provsql_dp.web_accounts``: name, role, scrypt salt and hash), so
they travel with the data and its budgets. Passwords are hashed with the standard library's
``hashlib.scrypt`` (n = 2¹⁴, r = 8, p = 1, 16-byte salt) and compared in constant time. Sessions
are held in the server's memory: a random 32-byte token in an ``HttpOnly``, ``SameSite=Strict``
cookie, each with its own CSRF token (:mod:`.csrf`); they end at sign-out, after 12 hours, or when
the server stops.

>>> import duckdb
>>> duck = duckdb.connect()
>>> add_account(duck, "ann", "analyst", "correct horse")
>>> verify(duck, "ann", "correct horse")
'analyst'
>>> verify(duck, "ann", "wrong") is None, verify(duck, "bob", "x") is None
(True, True)
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from dataclasses import dataclass, field

__all__ = ["add_account", "verify", "list_accounts", "Sessions", "Session", "ROLES", "ACCOUNTS"]

ROLES = ("curator", "analyst")
ACCOUNTS = "_provsql_dp.web_accounts"
_N, _R, _P = 2 ** 14, 8, 1
SESSION_SECONDS = 12 * 3600
# A hash to compare against when the account does not exist, so an unknown name costs as much
# time as a wrong password (sign-in timing does not reveal which accounts exist).
_DUMMY_SALT = b"\0" * 16


def _hash(password: str, salt: bytes) -> bytes:
    return hashlib.scrypt(password.encode(), salt=salt, n=_N, r=_R, p=_P, maxmem=64 * 2 ** 20, dklen=32)


def _ensure(duck) -> None:
    duck.execute("CREATE SCHEMA IF NOT EXISTS _provsql_dp")
    duck.execute(f"CREATE TABLE IF NOT EXISTS {ACCOUNTS} (name VARCHAR PRIMARY KEY, role VARCHAR NOT NULL, "
                 "salt BLOB NOT NULL, hash BLOB NOT NULL)")


def add_account(duck, name: str, role: str, password: str) -> None:
    """Create or replace the account ``name`` (``duck``: a DuckDB connection to the database)."""
    if role not in ROLES:
        raise ValueError(f"role must be curator or analyst, got {role!r}")
    if not name or not name.strip() or len(name) > 64:
        raise ValueError("an account name must be 1 to 64 characters")
    if len(password) < 8:
        raise ValueError("a password must have at least 8 characters")
    _ensure(duck)
    salt = secrets.token_bytes(16)
    duck.execute(f"INSERT OR REPLACE INTO {ACCOUNTS} VALUES (?, ?, ?, ?)",
                 [name, role, salt, _hash(password, salt)])


def list_accounts(duck) -> list[tuple[str, str]]:
    """(name, role) of every account."""
    _ensure(duck)
    return duck.execute(f"SELECT name, role FROM {ACCOUNTS} ORDER BY name").fetchall()


def verify(duck, name: str, password: str) -> str | None:
    """The account's role when ``password`` is right, else None (same work either way)."""
    _ensure(duck)
    row = duck.execute(f"SELECT role, salt, hash FROM {ACCOUNTS} WHERE name = ?", [name]).fetchone()
    salt, want = (bytes(row[1]), bytes(row[2])) if row else (_DUMMY_SALT, b"\1" * 32)
    ok = hmac.compare_digest(_hash(password, salt), want)
    return row[0] if row and ok else None


@dataclass
class Session:
    user: str
    role: str
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    expires: float = field(default_factory=lambda: time.time() + SESSION_SECONDS)


class Sessions:
    """Signed-in sessions by cookie token (in memory; thread-safe)."""

    def __init__(self):
        self._by_token: dict[str, Session] = {}
        self._lock = threading.Lock()

    def open(self, user: str, role: str) -> tuple[str, Session]:
        token = secrets.token_urlsafe(32)
        with self._lock:
            self._by_token[token] = s = Session(user, role)
        return token, s

    def get(self, token: str | None) -> Session | None:
        if not token:
            return None
        with self._lock:
            s = self._by_token.get(token)
            if s is not None and s.expires < time.time():
                del self._by_token[token]
                s = None
        return s

    def close(self, token: str | None) -> None:
        with self._lock:
            self._by_token.pop(token or "", None)
