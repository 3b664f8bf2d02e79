"""Accounts (explorer and wire server alike) and the explorer's sign-in sessions.

Accounts live in the database (``_provsql_dp.web_accounts``), so they travel with the data and
its budgets. A password is kept only as its **SCRAM-SHA-256 verifier** (RFC 5802 / 7677, as
PostgreSQL stores it): a 16-byte salt, an iteration count (32,768 for new accounts), StoredKey =
SHA-256(HMAC(SaltedPassword, "Client Key")) and ServerKey = HMAC(SaltedPassword, "Server Key"),
SaltedPassword = PBKDF2-HMAC-SHA-256(SASLprep(password), salt, iterations). The wire server
(:mod:`provsql_dp.interfaces.pgwire`) signs clients in with the SCRAM exchange against it (the
password never crosses the network); the explorer, which receives the password in its sign-in
form, recomputes StoredKey and compares in constant time. An account made before verifiers
(scrypt salt and hash only) still signs in to the explorer, which then stores its verifier, so
it can use the wire server from then on.

>>> import duckdb
>>> duck = duckdb.connect()
>>> has_accounts(duck)
False
>>> add_account(duck, "ann", "analyst", "correct horse")
>>> verify(duck, "ann", "correct horse"), has_accounts(duck)
('analyst', True)
>>> verify(duck, "ann", "wrong") is None, verify(duck, "bob", "x") is None
(True, True)
>>> v = scram_verifier(duck, "ann")
>>> v.role, v.iterations, len(v.salt), len(v.stored_key), len(v.server_key)
('analyst', 32768, 16, 32, 32)
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import stringprep
import threading
import time
import unicodedata
from dataclasses import dataclass, field

__all__ = ["add_account", "verify", "list_accounts", "has_accounts", "scram_verifier", "Verifier",
           "make_verifier", "salted_keys", "Sessions", "Session", "ROLES", "ACCOUNTS", "ITERATIONS"]

ROLES = ("curator", "analyst")
ACCOUNTS = "_provsql_dp.web_accounts"
ITERATIONS = 2 ** 15
_N, _R, _P = 2 ** 14, 8, 1  # the scrypt parameters of accounts made before SCRAM verifiers
SESSION_SECONDS = 12 * 3600
# A salt to compute against when the account does not exist, so an unknown name costs as much
# time as a wrong password (sign-in timing does not reveal which accounts exist).
_DUMMY_SALT = b"\0" * 16


@dataclass(frozen=True)
class Verifier:
    """What the server keeps of a password (never the password, never SaltedPassword)."""

    role: str
    salt: bytes
    iterations: int
    stored_key: bytes
    server_key: bytes


def saslprep(password: str) -> bytes:
    """RFC 4013 SASLprep of a password, as PostgreSQL and libpq apply it; a password it
    prohibits is used as its raw UTF-8 bytes (PostgreSQL's rule)."""
    chars = [" " if stringprep.in_table_c12(c) else c for c in password if not stringprep.in_table_b1(c)]
    text = unicodedata.normalize("NFKC", "".join(chars))
    prohibited = (stringprep.in_table_c12, stringprep.in_table_c21_c22, stringprep.in_table_c3,
                  stringprep.in_table_c4, stringprep.in_table_c5, stringprep.in_table_c6,
                  stringprep.in_table_c7, stringprep.in_table_c8, stringprep.in_table_c9,
                  stringprep.in_table_a1)
    if not text or any(test(c) for c in text for test in prohibited):
        return password.encode("utf-8")
    return text.encode("utf-8")


def salted_keys(password: str, salt: bytes, iterations: int) -> tuple[bytes, bytes]:
    """(StoredKey, ServerKey) of ``password``."""
    salted = hashlib.pbkdf2_hmac("sha256", saslprep(password), salt, iterations)
    client_key = hmac.digest(salted, b"Client Key", "sha256")
    return hashlib.sha256(client_key).digest(), hmac.digest(salted, b"Server Key", "sha256")


def make_verifier(role: str, password: str, iterations: int = ITERATIONS) -> Verifier:
    salt = secrets.token_bytes(16)
    return Verifier(role, salt, iterations, *salted_keys(password, salt, iterations))


def _ensure(duck) -> None:
    duck.execute("CREATE SCHEMA IF NOT EXISTS _provsql_dp")
    duck.execute(f"CREATE TABLE IF NOT EXISTS {ACCOUNTS} (name VARCHAR PRIMARY KEY, role VARCHAR NOT NULL, "
                 "salt BLOB, hash BLOB, scram_salt BLOB, scram_iterations INTEGER, stored_key BLOB, "
                 "server_key BLOB)")
    cols = {r[0] for r in duck.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = '_provsql_dp' "
        "AND table_name = 'web_accounts'").fetchall()}
    if "stored_key" not in cols:  # an account table of the scrypt-only days: add the verifier
        for stmt in ("ALTER TABLE {t} ALTER COLUMN salt DROP NOT NULL",
                     "ALTER TABLE {t} ALTER COLUMN hash DROP NOT NULL",
                     "ALTER TABLE {t} ADD COLUMN scram_salt BLOB",
                     "ALTER TABLE {t} ADD COLUMN scram_iterations INTEGER",
                     "ALTER TABLE {t} ADD COLUMN stored_key BLOB",
                     "ALTER TABLE {t} ADD COLUMN server_key BLOB"):
            duck.execute(stmt.format(t=ACCOUNTS))


def _store(duck, name: str, v: Verifier) -> None:
    duck.execute(f"INSERT OR REPLACE INTO {ACCOUNTS} VALUES (?, ?, NULL, NULL, ?, ?, ?, ?)",
                 [name, v.role, v.salt, v.iterations, v.stored_key, v.server_key])


def add_account(duck, name: str, role: str, password: str) -> None:
    """Create or replace the account ``name`` (``duck``: a DuckDB connection to the database)."""
    if role not in ROLES:
        raise ValueError(f"role must be curator or analyst, got {role!r}")
    if not name or not name.strip() or len(name) > 64:
        raise ValueError("an account name must be 1 to 64 characters")
    if len(password) < 8:
        raise ValueError("a password must have at least 8 characters")
    _ensure(duck)
    _store(duck, name, make_verifier(role, password))


def list_accounts(duck) -> list[tuple[str, str]]:
    """(name, role) of every account."""
    _ensure(duck)
    return duck.execute(f"SELECT name, role FROM {ACCOUNTS} ORDER BY name").fetchall()


def has_accounts(duck) -> bool:
    """Whether anyone can sign in (reads nothing when the table does not exist yet)."""
    found = duck.execute("SELECT count(*) FROM duckdb_tables() WHERE schema_name = '_provsql_dp' "
                         "AND table_name = 'web_accounts'").fetchone()[0]
    return bool(found) and duck.execute(f"SELECT count(*) FROM {ACCOUNTS}").fetchone()[0] > 0


def scram_verifier(duck, name: str) -> Verifier | None:
    """The stored verifier of ``name`` (None: no such account, or one without a verifier)."""
    _ensure(duck)
    row = duck.execute(f"SELECT role, scram_salt, scram_iterations, stored_key, server_key FROM {ACCOUNTS} "
                       "WHERE name = ?", [name]).fetchone()
    if row is None or row[3] is None:
        return None
    return Verifier(row[0], bytes(row[1]), int(row[2]), bytes(row[3]), bytes(row[4]))


def _scrypt(password: str, salt: bytes) -> bytes:
    return hashlib.scrypt(password.encode(), salt=salt, n=_N, r=_R, p=_P, maxmem=64 * 2 ** 20, dklen=32)


def verify(duck, name: str, password: str) -> str | None:
    """The account's role when ``password`` is right, else None (same work either way)."""
    _ensure(duck)
    row = duck.execute(f"SELECT role, salt, hash, scram_salt, scram_iterations, stored_key FROM {ACCOUNTS} "
                       "WHERE name = ?", [name]).fetchone()
    if row is not None and row[5] is None:  # an account of the scrypt-only days
        if not hmac.compare_digest(_scrypt(password, bytes(row[1])), bytes(row[2])):
            return None
        _store(duck, name, make_verifier(row[0], password))  # from now on also for the wire
        return row[0]
    salt, iterations, want = ((bytes(row[3]), int(row[4]), bytes(row[5])) if row
                              else (_DUMMY_SALT, ITERATIONS, b"\1" * 32))
    ok = hmac.compare_digest(salted_keys(password, salt, iterations)[0], want)
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
