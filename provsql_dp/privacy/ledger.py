"""The privacy budget ledger: per-user totals and every charge, kept inside the database.

Budgets are exact fractions (stored as text such as ``'1/1000'``), so a thousand charges of 0.001
add up to exactly 1 — no float drift can let a user overspend. :meth:`Ledger.charge` is the one
API every mechanism charges through, *before* any noise is drawn: it checks the remaining budget,
records the charge and commits, in one transaction on a connection of its own, so a refused
charge spends nothing and a crash after the charge loses nothing. The same transaction appends the
release's row to the audit log (:mod:`provsql_dp.privacy.audit`). Concurrent charges against the
same user conflict on the user's budget row; the loser retries against the new balance.

Example
-------
>>> import duckdb
>>> led = Ledger(duckdb.connect())
>>> led.set_budget("alice", "1")
>>> for _ in range(1000):
...     _ = led.charge("alice", "0.001", "SELECT ...", "test")
>>> led.remaining("alice")
Fraction(0, 1)
>>> led.charge("alice", "0.001", "SELECT ...", "test")
Traceback (most recent call last):
  ...
provsql_dp.errors.BudgetExceededError: privacy budget exceeded for user 'alice': the release needs ε = 0.001 but only 0 of 1 remains; nothing was spent. The curator can raise the total with SET PRIVACY BUDGET … FOR USER 'alice'
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction

import duckdb

from .._cancel import check_current
from .._numbers import format_eps, to_fraction
from .._progress import CHARGED, report
from ..errors import BudgetExceededError, DeclarationError, OperationalError
from ..sql.catalog import SCHEMA
from . import audit

__all__ = ["Ledger", "Charge", "to_fraction", "format_eps"]  # the last two re-exported from _numbers

_DDL = [
    f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}",
    f"""CREATE TABLE IF NOT EXISTS {SCHEMA}.budget (
        user_name VARCHAR PRIMARY KEY,
        total VARCHAR NOT NULL,
        spent VARCHAR NOT NULL,
        updated TIMESTAMP DEFAULT current_timestamp)""",
    f"CREATE SEQUENCE IF NOT EXISTS {SCHEMA}.ledger_seq START 1",
    f"""CREATE TABLE IF NOT EXISTS {SCHEMA}.ledger (
        id BIGINT PRIMARY KEY,
        charged_at TIMESTAMP NOT NULL,
        user_name VARCHAR NOT NULL,
        statement VARCHAR,
        mechanism VARCHAR NOT NULL,
        epsilon VARCHAR NOT NULL)""",
]

_RETRIES = 50


@dataclass(frozen=True)
class Charge:
    """One recorded charge."""

    id: int
    at: datetime
    user: str
    statement: str | None
    mechanism: str
    epsilon: Fraction
    remaining: Fraction


class Ledger:
    """Budgets and charges in ``_provsql_dp.privacy.ledger`` / ``_provsql_dp.ledger``."""

    def __init__(self, con: duckdb.DuckDBPyConnection, *, read_only: bool = False):
        self.con = con
        self.read_only = read_only
        #: {user: (total, spent)} as stored, after this object's last charge: the guess
        #: :meth:`_charge_known` verifies inside its transaction (never trusted as such)
        self._known: dict[str, tuple[str, str]] = {}
        #: who charges through this ledger, for the audit log's rows (:mod:`.audit`)
        self.source = audit.Source()
        #: charges recorded by this object (a statement that fails after one is ``failed``)
        self.charges = 0
        if not read_only:
            for stmt in _DDL + audit.DDL:
                con.execute(stmt)

    def _rows(self, sql: str, params=()) -> list:
        """Read the latest committed state, on a connection of its own (never through the
        caller's open transaction, whose snapshot may predate other connections' charges)."""
        cur = self.con.cursor()
        try:
            return cur.execute(sql, list(params)).fetchall()
        except duckdb.CatalogException:
            return []  # a read-only database without our catalog: nothing recorded
        finally:
            cur.close()

    def _transaction(self, body, what: str):
        """Run ``body(cursor)`` in a transaction of its own connection and commit it; retry when
        a concurrent transaction conflicts. ``body`` raises to refuse (nothing is written)."""
        cur = self.con.cursor()
        try:
            for attempt in range(_RETRIES):
                try:
                    cur.execute("BEGIN TRANSACTION")
                    result = body(cur)
                    cur.execute("COMMIT")
                    return result
                except (duckdb.TransactionException, duckdb.ConstraintException):
                    _rollback(cur)  # a concurrent writer won: try again on the new state
                    time.sleep(0.001 * (attempt + 1))
                except BaseException:
                    _rollback(cur)
                    raise
            raise OperationalError(f"could not {what}: too much contention on the budget; "
                                   "nothing was changed, try again")
        finally:
            cur.close()

    def set_budget(self, user: str, total) -> None:
        """Set ``user``'s total budget (``SET PRIVACY BUDGET``). Spending so far is kept."""
        total = to_fraction(total)
        if total <= 0:
            raise DeclarationError("a privacy budget must be positive")

        def body(cur):
            row = cur.execute(
                f"SELECT spent FROM {SCHEMA}.budget WHERE user_name = ?", [user]
            ).fetchone()
            spent = Fraction(row[0]) if row else Fraction(0)
            if total < spent:
                raise DeclarationError(
                    f"user {user!r} has already spent ε = {format_eps(spent)}; the total "
                    f"cannot be set below that (asked for {format_eps(total)})"
                )
            if row:
                cur.execute(
                    f"UPDATE {SCHEMA}.budget SET total = ?, updated = current_timestamp "
                    "WHERE user_name = ?",
                    [_enc(total), user],
                )
            else:
                cur.execute(
                    f"INSERT INTO {SCHEMA}.budget (user_name, total, spent) VALUES (?, ?, ?)",
                    [user, _enc(total), _enc(Fraction(0))],
                )

        self._known.pop(user, None)
        self._transaction(body, "set the budget")

    def budget(self, user: str) -> tuple[Fraction, Fraction] | None:
        """``(total, spent)`` for ``user``, or None when no budget was set."""
        rows = self._rows(f"SELECT total, spent FROM {SCHEMA}.budget WHERE user_name = ?", [user])
        if not rows:
            return None
        return Fraction(rows[0][0]), Fraction(rows[0][1])

    def remaining(self, user: str) -> Fraction:
        b = self.budget(user)
        return Fraction(0) if b is None else b[0] - b[1]

    def users(self) -> list[tuple[str, Fraction, Fraction]]:
        rows = self._rows(f"SELECT user_name, total, spent FROM {SCHEMA}.budget ORDER BY user_name")
        return [(u, Fraction(t), Fraction(s)) for u, t, s in rows]

    def check(self, user: str, epsilon) -> None:
        """Raise :class:`BudgetExceededError` now if ``epsilon`` exceeds what remains (no write)."""
        eps = _positive(epsilon)
        b = self.budget(user)
        if b is None:
            raise BudgetExceededError(_no_budget(user))
        total, spent = b
        if spent + eps > total:
            raise BudgetExceededError(_exceeded(user, eps, total, spent))

    def charge(self, user: str, epsilon, statement: str | None, mechanism: str) -> Charge:
        """Atomically record a charge of ``epsilon`` or refuse it, spending nothing."""
        if self.read_only:
            raise OperationalError(
                "this connection is read-only, so no charge can be recorded and nothing can be "
                "released; open the database read-write"
            )
        eps = _positive(epsilon)
        check_current()  # a statement cancelled before its charge charges nothing (_cancel)
        charge = self._charge_known(user, eps, statement, mechanism)
        if charge is not None:
            report(CHARGED, public=True)
            return charge
        self._known.pop(user, None)
        read = []

        def body(cur) -> Charge:
            row = cur.execute(
                f"SELECT total, spent FROM {SCHEMA}.budget WHERE user_name = ?", [user]
            ).fetchone()
            if row is None:
                raise BudgetExceededError(_no_budget(user))
            total, spent = Fraction(row[0]), Fraction(row[1])
            if spent + eps > total:
                raise BudgetExceededError(_exceeded(user, eps, total, spent))
            updated = cur.execute(
                f"UPDATE {SCHEMA}.budget SET spent = ?, updated = current_timestamp "
                "WHERE user_name = ? AND spent = ?",
                [_enc(spent + eps), user, row[1]],
            ).fetchone()
            if not updated or updated[0] != 1:
                raise duckdb.TransactionException("the budget row changed concurrently")
            read[:] = [(row[0], _enc(spent + eps))]
            at = datetime.now()
            cid = cur.execute(
                f"INSERT INTO {SCHEMA}.ledger VALUES "
                f"(nextval('{SCHEMA}.ledger_seq'), ?, ?, ?, ?, ?) RETURNING id",
                [at, user, statement, mechanism, _enc(eps)],
            ).fetchone()[0]
            # the audit row in the charge's transaction: both are committed, or neither
            audit.insert(cur, self.source, user, "released", statement, mechanism, _enc(eps), cid, at=at)
            return Charge(cid, at, user, statement, mechanism, eps, total - spent - eps)

        charge = self._transaction(body, "record the charge")
        self._known[user] = read[0]  # committed
        self.charges += 1
        report(CHARGED, public=True)  # the shell's status line (data-independent)
        return charge

    def _charge_known(self, user: str, eps: Fraction, statement, mechanism) -> Charge | None:
        """The charge in four statements instead of five when this object charged ``user``
        last: no SELECT of the budget row, whose (total, spent) it remembers; ``UPDATE … WHERE
        total = known AND spent = known`` both checks and writes. In DuckDB an UPDATE matches
        the row only as the latest committed version has it and a concurrent writer of that row
        makes it (or the COMMIT) fail with a conflict, so ``spent + ε ≤ total`` checked on the
        known values holds in the database when one row is updated. Otherwise the transaction
        is rolled back and None says: take the path that reads the row — also when nothing is
        known or the known budget does not cover ``eps`` (it may have been raised since). (No
        ``UPDATE … RETURNING`` here or in :meth:`charge`: DuckDB 2.0 does not detect a
        write-write conflict on a row updated that way — measured, a race then overspends.)"""
        known = self._known.get(user)
        if known is None:
            return None
        total, spent = Fraction(known[0]), Fraction(known[1])
        if spent + eps > total:
            return None
        cur = self.con.cursor()
        try:
            updated = cur.execute(
                f"BEGIN TRANSACTION; UPDATE {SCHEMA}.budget SET spent = ?, "
                "updated = current_timestamp WHERE user_name = ? AND total = ? AND spent = ?",
                [_enc(spent + eps), user, known[0], known[1]]).fetchone()
            if not updated or updated[0] != 1:
                _rollback(cur)
                return None
            at = datetime.now()
            cid = cur.execute(
                f"INSERT INTO {SCHEMA}.ledger VALUES "
                f"(nextval('{SCHEMA}.ledger_seq'), ?, ?, ?, ?, ?) RETURNING id",
                [at, user, statement, mechanism, _enc(eps)]).fetchone()[0]
            audit.insert(cur, self.source, user, "released", statement, mechanism, _enc(eps), cid, at=at)
            cur.execute("COMMIT")
        except duckdb.Error:  # a conflict, or anything else: the reading path decides
            _rollback(cur)
            return None
        finally:
            cur.close()
        self._known[user] = (known[0], _enc(spent + eps))
        self.charges += 1
        return Charge(cid, at, user, statement, mechanism, eps, total - spent - eps)

    def entries(self, user: str | None = None) -> list[Charge]:
        """The recorded charges, oldest first (all users, or one)."""
        sql = f"SELECT id, charged_at, user_name, statement, mechanism, epsilon FROM {SCHEMA}.ledger"
        params: list = []
        if user is not None:
            sql += " WHERE user_name = ?"
            params.append(user)
        rows = self._rows(sql + " ORDER BY id", params)
        return [Charge(i, a, u, s, m, Fraction(e), Fraction(0)) for i, a, u, s, m, e in rows]


def _enc(f: Fraction) -> str:
    return f"{f.numerator}/{f.denominator}"


def _positive(epsilon) -> Fraction:
    eps = to_fraction(epsilon)
    if eps <= 0:
        raise ValueError(f"epsilon must be positive, got {format_eps(eps)}")
    return eps


def _rollback(cur) -> None:
    try:
        cur.execute("ROLLBACK")
    except duckdb.Error:
        pass


def _no_budget(user: str) -> str:
    return (
        f"no privacy budget is set for user {user!r}, so nothing can be released; the curator "
        f"sets one with SET PRIVACY BUDGET <epsilon> FOR USER '{user}'"
    )


def _exceeded(user: str, eps: Fraction, total: Fraction, spent: Fraction) -> str:
    return (
        f"privacy budget exceeded for user {user!r}: the release needs ε = {format_eps(eps)} but "
        f"only {format_eps(total - spent)} of {format_eps(total)} remains; nothing was spent. "
        f"The curator can raise the total with SET PRIVACY BUDGET … FOR USER '{user}'"
    )
