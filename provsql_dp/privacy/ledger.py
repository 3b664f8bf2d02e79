"""The privacy budget ledger: per-user totals and every charge, kept inside the database.

Budgets are exact fractions (stored as text such as ``'1/1000'``), so a thousand charges of 0.001
add up to exactly 1 — no float drift can let a user overspend. :meth:`Ledger.charge` is the one
API every mechanism charges through, *before* any noise is drawn: it checks the remaining budget,
records the charge and commits, in one transaction on a connection of its own, so a refused
charge spends nothing and a crash after the charge loses nothing. The charge's row is also the
release's row of the audit log (:mod:`provsql_dp.privacy.audit`). Concurrent charges against the
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

import threading
import time
from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction
from typing import NamedTuple

import duckdb

from .._cancel import check_current
from .._numbers import format_eps, to_fraction
from .._progress import CHARGED, report
from ..errors import BudgetExceededError, DeclarationError, OperationalError, ProgrammingError
from ..sql.catalog import SCHEMA
from . import audit
from .accounting import UNITS, Cost, budget_text, converted_spending, debit

__all__ = ["Ledger", "Charge", "BudgetRow", "Known", "to_fraction", "format_eps"]  # the last two re-exported from _numbers

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
    # budgets in (ε, δ) and in zCDP ρ (privacy.accounting): added to a ledger made before them,
    # whose rows keep their meaning (pure ε, δ = 0)
    f"ALTER TABLE {SCHEMA}.budget ADD COLUMN IF NOT EXISTS unit VARCHAR DEFAULT 'epsilon'",
    f"ALTER TABLE {SCHEMA}.budget ADD COLUMN IF NOT EXISTS total_delta VARCHAR DEFAULT '0/1'",
    f"ALTER TABLE {SCHEMA}.budget ADD COLUMN IF NOT EXISTS spent_delta VARCHAR DEFAULT '0/1'",
    f"ALTER TABLE {SCHEMA}.ledger ADD COLUMN IF NOT EXISTS unit VARCHAR DEFAULT 'epsilon'",
    f"ALTER TABLE {SCHEMA}.ledger ADD COLUMN IF NOT EXISTS delta VARCHAR DEFAULT '0/1'",
    # a charge's row is its release's audit row (privacy.audit): its place in the log's order,
    # who released it and from which client (NULL in the rows written before: theirs are in
    # audit_events)
    f"ALTER TABLE {SCHEMA}.ledger ADD COLUMN IF NOT EXISTS audit_id BIGINT",
    f"ALTER TABLE {SCHEMA}.ledger ADD COLUMN IF NOT EXISTS role VARCHAR",
    f"ALTER TABLE {SCHEMA}.ledger ADD COLUMN IF NOT EXISTS client VARCHAR",
]

_RETRIES = 50

#: the ledger's unit and δ columns, written by :meth:`Ledger._charge_on` unless the charge is in
#: pure ε (their defaults), indexed by that
_UNIT_COLUMNS, _UNIT_VALUES = ("unit, delta, ", ""), ("?, ?, ", "")


@dataclass(frozen=True)
class Charge:
    """One recorded charge."""

    id: int
    at: datetime
    user: str
    statement: str | None
    mechanism: str
    epsilon: Fraction  # the amount debited, in ``unit`` (ε, or ρ for a zCDP budget)
    remaining: Fraction
    unit: str = "epsilon"
    delta: Fraction = Fraction(0)


class Known(NamedTuple):
    """A budget row as this ledger last wrote it (its fractions as stored, ``'3/10'``), and the
    δ of the charge it made then: what :meth:`Ledger._charge_known` checks and writes against."""

    unit: str
    total: str
    spent: str
    total_delta: str
    spent_delta: str
    delta: Fraction


class BudgetRow(tuple):
    """``(user, total, spent)`` of one budget, with its ``unit``: ``'epsilon'``,
    ``'epsilon-delta'`` (total and spent are the ε part) or ``'rho'`` (they are ρ).

    >>> row = BudgetRow("zed", Fraction(1, 2), Fraction(0), "rho")
    >>> user, total, spent = row
    >>> row.unit, row
    ('rho', ('zed', Fraction(1, 2), Fraction(0, 1), unit='rho'))
    """

    def __new__(cls, user: str, total: Fraction, spent: Fraction, unit: str = "epsilon"):
        row = super().__new__(cls, (user, total, spent))
        row.unit = unit
        return row

    def __getnewargs__(self):
        return (*self, self.unit)

    def __repr__(self) -> str:
        return f"({self[0]!r}, {self[1]!r}, {self[2]!r}, unit={self.unit!r})"


class Ledger:
    """Budgets and charges in ``_provsql_dp.privacy.ledger`` / ``_provsql_dp.ledger``."""

    def __init__(self, con: duckdb.DuckDBPyConnection, *, read_only: bool = False):
        self.con = con
        self.read_only = read_only
        #: {user: the budget row as stored after this object's last charge}: the guess
        #: :meth:`_charge_known` verifies inside its transaction (never trusted as such)
        self._known: dict[str, Known] = {}
        #: who charges through this ledger, for the audit log's rows (:mod:`.audit`)
        self.source = audit.Source()
        #: charges recorded by this object (a statement that fails after one is ``failed``)
        self.charges = 0
        #: :meth:`_charge_known`'s kept connection, and who charges on it now
        self._charger = None
        self._charger_lock = threading.Lock()
        if not read_only:
            for stmt in _DDL:
                con.execute(stmt)
            audit.create(con)

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

    def set_budget(self, user: str, total, *, unit: str = "epsilon", delta=None) -> None:
        """Set ``user``'s total budget (``SET PRIVACY BUDGET``) in ``unit`` (``'epsilon'``,
        ``'epsilon-delta'`` with ``delta``, or ``'rho'``; :mod:`.accounting`). Spending so far
        is kept, converted exactly when the unit changes (or the change is refused)."""
        total = to_fraction(total)
        if total <= 0:
            raise DeclarationError("a privacy budget must be positive")
        if unit not in UNITS:
            raise DeclarationError(f"unknown budget unit {unit!r}; one of {', '.join(UNITS)}")
        total_delta = to_fraction(delta) if unit == "epsilon-delta" else Fraction(0)
        if unit == "epsilon-delta" and not 0 < total_delta < 1:
            raise DeclarationError("the δ of a privacy budget must lie strictly between 0 and 1")

        def body(cur):
            row = cur.execute(
                f"SELECT spent, unit, spent_delta FROM {SCHEMA}.budget WHERE user_name = ?", [user]
            ).fetchone()
            spent, spent_delta = Fraction(0), Fraction(0)
            if row:
                spent, spent_delta = converted_spending(row[1], unit, Fraction(row[0]),
                                                        Fraction(row[2]), user)
            if total < spent or total_delta < spent_delta:
                raise DeclarationError(
                    f"user {user!r} has already spent {budget_text(unit, spent, spent_delta)}; "
                    f"the total cannot be set below that (asked for "
                    f"{budget_text(unit, total, total_delta)})"
                )
            if row:
                cur.execute(
                    f"UPDATE {SCHEMA}.budget SET total = ?, spent = ?, unit = ?, total_delta = ?, "
                    "spent_delta = ?, updated = current_timestamp WHERE user_name = ?",
                    [_enc(total), _enc(spent), unit, _enc(total_delta), _enc(spent_delta), user],
                )
            else:
                cur.execute(
                    f"INSERT INTO {SCHEMA}.budget (user_name, total, spent, unit, total_delta, "
                    "spent_delta) VALUES (?, ?, ?, ?, ?, ?)",
                    [user, _enc(total), _enc(Fraction(0)), unit, _enc(total_delta),
                     _enc(Fraction(0))],
                )

        self._known.pop(user, None)
        self._transaction(body, "set the budget")

    def budget(self, user: str) -> tuple[Fraction, Fraction] | None:
        """``(total, spent)`` for ``user``, or None when no budget was set."""
        rows = self._rows(f"SELECT total, spent FROM {SCHEMA}.budget WHERE user_name = ?", [user])
        if not rows:
            return None
        return Fraction(rows[0][0]), Fraction(rows[0][1])

    def account(self, user: str) -> tuple[str, Fraction, Fraction, Fraction, Fraction] | None:
        """``(unit, total, spent, total δ, spent δ)`` for ``user``, or None when no budget."""
        rows = self._account_rows(" WHERE user_name = ?", [user])
        return rows[0][1:] if rows else None

    def accounts(self) -> list[tuple]:
        """``(user, unit, total, spent, total δ, spent δ)`` for every user, by name."""
        return self._account_rows(" ORDER BY user_name", [])

    def _account_rows(self, tail: str, params) -> list[tuple]:
        sql = f"SELECT user_name, unit, total, spent, total_delta, spent_delta FROM {SCHEMA}.budget"
        try:
            rows = self._rows(sql + tail, params)
        except duckdb.BinderException:  # a read-only ledger made before budget units: pure ε
            rows = [(u, "epsilon", t, s, "0", "0") for u, t, s in self._rows(
                f"SELECT user_name, total, spent FROM {SCHEMA}.budget" + tail, params)]
        return [(u, unit or "epsilon", Fraction(t), Fraction(s), Fraction(td or 0),
                 Fraction(sd or 0)) for u, unit, t, s, td, sd in rows]

    def remaining(self, user: str) -> Fraction:
        b = self.budget(user)
        return Fraction(0) if b is None else b[0] - b[1]

    def users(self) -> list[BudgetRow]:
        """``(user, total, spent)`` for every user, by name; each row's ``unit`` says what
        total and spent count (ε, the ε of an (ε, δ) budget, or ρ)."""
        return [BudgetRow(u, t, s, unit) for u, unit, t, s, _td, _sd in self.accounts()]

    def check(self, user: str, epsilon, cost: Cost | None = None) -> None:
        """Raise :class:`BudgetExceededError` now if ``epsilon`` (or ``cost``) exceeds what
        remains, or a ProgrammingError if the budget's unit cannot pay it (no write)."""
        cost = cost if cost is not None else Cost(epsilon=_positive(epsilon))
        acc = self.account(user)
        if acc is None:
            raise BudgetExceededError(_no_budget(user))
        unit, total, spent, total_delta, spent_delta = acc
        amount, delta = debit(cost, unit, user)
        if spent + amount > total or spent_delta + delta > total_delta:
            raise BudgetExceededError(_exceeded(user, (amount, delta), (total, total_delta),
                                                (spent, spent_delta), unit))

    def charge(self, user: str, epsilon, statement: str | None, mechanism: str,
               cost: Cost | None = None) -> Charge:
        """Atomically record a charge of ``epsilon`` (or of ``cost``: (ε, δ) or ρ, debited in
        the unit of the user's budget, :func:`.accounting.debit`) or refuse it, spending
        nothing."""
        if self.read_only:
            raise OperationalError(
                "this connection is read-only, so no charge can be recorded and nothing can be "
                "released; open the database read-write"
            )
        cost = cost if cost is not None else Cost(epsilon=_positive(epsilon))
        check_current()  # a statement cancelled before its charge charges nothing (_cancel)
        charge = self._charge_known(user, cost, statement, mechanism)
        if charge is not None:
            report(CHARGED, public=True)
            return charge
        self._known.pop(user, None)
        read = []

        def body(cur) -> Charge:
            row = cur.execute(
                f"SELECT total, spent, unit, total_delta, spent_delta FROM {SCHEMA}.budget "
                "WHERE user_name = ?", [user]
            ).fetchone()
            if row is None:
                raise BudgetExceededError(_no_budget(user))
            total, spent, unit = Fraction(row[0]), Fraction(row[1]), row[2]
            total_d, spent_d = Fraction(row[3]), Fraction(row[4])
            amount, delta = debit(cost, unit, user)
            if spent + amount > total or spent_d + delta > total_d:
                raise BudgetExceededError(_exceeded(user, (amount, delta), (total, total_d),
                                                    (spent, spent_d), unit))
            updated = cur.execute(
                f"UPDATE {SCHEMA}.budget SET spent = ?, spent_delta = ?, "
                "updated = current_timestamp WHERE user_name = ? AND spent = ? AND unit = ?",
                [_enc(spent + amount), _enc(spent_d + delta), user, row[1], unit],
            ).fetchone()
            if not updated or updated[0] != 1:
                raise duckdb.TransactionException("the budget row changed concurrently")
            read[:] = [Known(unit, row[0], _enc(spent + amount), row[3], _enc(spent_d + delta),
                             delta)]
            at = datetime.now()
            cid = cur.execute(  # also the release's audit row (privacy.audit)
                f"INSERT INTO {SCHEMA}.ledger (id, charged_at, user_name, statement, mechanism, "
                f"epsilon, unit, delta, {audit.LEDGER_COLUMNS}) VALUES "
                f"(nextval('{SCHEMA}.ledger_seq'), ?, ?, ?, ?, ?, ?, ?, {audit.LEDGER_VALUES}) "
                "RETURNING id",
                [at, user, statement, mechanism, _enc(amount), unit, _enc(delta),
                 self.source.role, self.source.client],
            ).fetchone()[0]
            return Charge(cid, at, user, statement, mechanism, amount, total - spent - amount,
                          unit, delta)

        charge = self._transaction(body, "record the charge")
        if read:
            self._known[user] = read[0]  # committed: the fast path's guess
        self.charges += 1
        report(CHARGED, public=True)  # the shell's status line (data-independent)
        return charge

    def _charge_known(self, user: str, cost: Cost, statement, mechanism) -> Charge | None:
        """The charge in three statements instead of five when this object charged ``user``
        last: no SELECT of the budget row, whose unit, totals and spending it remembers
        (:class:`Known`); ``UPDATE … WHERE`` each of them ``= known`` both checks and writes.
        In DuckDB an UPDATE matches the row only as the latest committed version has it and a
        concurrent writer of that row makes it (or the COMMIT) fail with a conflict, so
        ``spent + amount ≤ total`` (and so for δ) checked on the known values holds in the
        database when one row is updated. Otherwise the transaction is rolled back and None
        says: take the path that reads the row — also when nothing is known, or the known
        budget does not cover ``cost`` or its unit cannot pay it (either may have changed
        since: the reading path decides, and refuses with the row it read). (No ``UPDATE …
        RETURNING`` here or in :meth:`charge`: DuckDB 2.0 does not detect a write-write
        conflict on a row updated that way — measured, a race then overspends.) One
        ``execute`` for the whole charge measured no faster: what a DuckDB statement costs is
        its execution (~0.2–0.6 ms each), not the call, and the one text needs more of them."""
        known = self._known.get(user)
        if known is None:
            return None
        try:
            amount, delta = debit(cost, known.unit, user)
        except ProgrammingError:
            return None
        if (Fraction(known.spent) + amount > Fraction(known.total)
                or Fraction(known.spent_delta) + delta > Fraction(known.total_delta)):
            return None
        if not self._charger_lock.acquire(blocking=False):  # another thread charges through
            return None  # this object now: the reading path, on a connection of its own
        try:
            return self._charge_on(self._charger_cursor(), user, (amount, delta), statement,
                                   mechanism, known)
        finally:
            self._charger_lock.release()

    def _charger_cursor(self):
        """The connection :meth:`_charge_known` charges on, kept between charges (opening and
        closing one per charge cost ~0.4 ms); never in a transaction between two charges. It
        is closed with the connection it came from (DuckDB closes a connection's cursors)."""
        if self._charger is None:
            cur = self.con.cursor()
            try:  # no optimizer for this connection's few small statements: a tenth of a
                # millisecond each, and nothing for it to improve in them
                cur.execute("PRAGMA disable_optimizer")
            except duckdb.Error:  # the configuration is locked (an analyst's guard rails)
                pass
            self._charger = cur
        return self._charger

    def _drop_charger(self, cur) -> None:
        """Roll back and close the kept connection: a fresh one next time, whatever state this
        one is in."""
        _rollback(cur)
        self._charger = None
        _close(cur)

    def _charge_on(self, cur, user, debited, statement, mechanism, known) -> Charge | None:
        (amount, delta), unit = debited, known.unit
        spent, spent_d = _enc(Fraction(known.spent) + amount), _enc(Fraction(known.spent_delta)
                                                                    + delta)
        pure = unit == "epsilon"  # δ is 0 and stays so: the statements of before, a bit cheaper
        try:
            updated = cur.execute(
                f"BEGIN TRANSACTION; UPDATE {SCHEMA}.budget SET spent = ?"
                + ("" if pure else ", spent_delta = ?")
                + ", updated = current_timestamp WHERE user_name = ? AND unit = ? AND total = ? "
                "AND spent = ?" + ("" if pure else " AND total_delta = ? AND spent_delta = ?"),
                [spent] + ([] if pure else [spent_d]) + [user, unit, known.total, known.spent]
                + ([] if pure else [known.total_delta, known.spent_delta])).fetchone()
            if not updated or updated[0] != 1:
                _rollback(cur)
                return None
            at = datetime.now()
            cid = cur.execute(  # also the release's audit row (privacy.audit)
                f"INSERT INTO {SCHEMA}.ledger (id, charged_at, user_name, statement, mechanism, "
                f"epsilon, {_UNIT_COLUMNS[pure]}{audit.LEDGER_COLUMNS}) VALUES "
                f"(nextval('{SCHEMA}.ledger_seq'), ?, ?, ?, ?, ?, {_UNIT_VALUES[pure]}"
                f"{audit.LEDGER_VALUES}) RETURNING id",
                [at, user, statement, mechanism, _enc(amount)]
                + ([] if pure else [unit, _enc(delta)])
                + [self.source.role, self.source.client]).fetchone()[0]
            cur.execute("COMMIT")
        except duckdb.Error:  # a conflict, or anything else: the reading path decides
            self._drop_charger(cur)
            return None
        except BaseException:  # (Ctrl-C, say) no transaction is left open on the kept connection
            self._drop_charger(cur)
            raise
        self._known[user] = known._replace(spent=spent, spent_delta=spent_d, delta=delta)
        self.charges += 1
        return Charge(cid, at, user, statement, mechanism, amount,
                      Fraction(known.total) - Fraction(spent), unit, delta)

    def entries(self, user: str | None = None, *, last: bool = False) -> list[Charge]:
        """The recorded charges, oldest first (all users, or one); ``last``: only the newest
        (one row read, not the user's whole ledger)."""
        cols = "id, charged_at, user_name, statement, mechanism, epsilon"
        tail, params = (" WHERE user_name = ?", [user]) if user is not None else ("", [])
        order = " ORDER BY id DESC LIMIT 1" if last else " ORDER BY id ASC"
        try:
            rows = self._rows(f"SELECT {cols}, unit, delta FROM {SCHEMA}.ledger{tail}{order}",
                              params)
        except duckdb.BinderException:  # a read-only ledger made before budget units: pure ε
            rows = [r + ("epsilon", "0") for r in self._rows(
                f"SELECT {cols} FROM {SCHEMA}.ledger{tail}{order}", params)]
        return [Charge(i, a, u, s, m, Fraction(e), Fraction(0), unit or "epsilon",
                       Fraction(d or 0)) for i, a, u, s, m, e, unit, d in rows]


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


def _close(cur) -> None:
    try:
        cur.close()
    except duckdb.Error:
        pass


def _no_budget(user: str) -> str:
    return (
        f"no privacy budget is set for user {user!r}, so nothing can be released; the curator "
        f"sets one with SET PRIVACY BUDGET <epsilon> FOR USER '{user}'"
    )


def _exceeded(user: str, need, total, spent, unit: str = "epsilon") -> str:
    """``need``, ``total``, ``spent``: (amount, δ) pairs in ``unit`` (or plain ε amounts)."""
    need, total, spent = (x if isinstance(x, tuple) else (x, Fraction(0))
                          for x in (need, total, spent))
    left = (total[0] - spent[0], total[1] - spent[1])
    if unit == "epsilon":
        return (
            f"privacy budget exceeded for user {user!r}: the release needs ε = "
            f"{format_eps(need[0])} but only {format_eps(left[0])} of {format_eps(total[0])} "
            f"remains; nothing was spent. "
            f"The curator can raise the total with SET PRIVACY BUDGET … FOR USER '{user}'"
        )
    return (
        f"privacy budget exceeded for user {user!r}: the release needs "
        f"{budget_text(unit, *need)} but only {budget_text(unit, *left)} of "
        f"{budget_text(unit, *total)} remains; nothing was spent. "
        f"The curator can raise the total with SET PRIVACY BUDGET … FOR USER '{user}'"
    )
