"""The privacy budget ledger: per-user totals and every charge, kept inside the database.

Budgets are exact fractions (stored as text such as ``'1/1000'``), so a thousand charges of 0.001
add up to exactly 1 — no float drift can let a user overspend. :meth:`Ledger.charge` is the one
API every mechanism charges through, *before* any noise is drawn: it checks the remaining budget
and records the charge atomically, so a refused charge spends nothing and a crash after the
charge loses nothing. The charge's row is also the release's row of the audit log
(:mod:`provsql_dp.privacy.audit`).

Charge numbers, and why a charge can be one ``INSERT``
------------------------------------------------------
A user's spending is the budget row's ``spent`` (its *folded* spending) plus the ε (ρ) of the
user's ledger rows whose ``charge_no`` is above the row's ``charge_no`` (its *fold*); δ likewise
(:func:`._ledger_rows.spending`, the one read every reader uses: ``SHOW PRIVACY BUDGET``,
``.dump``, :meth:`Ledger.accounts`, the charges). Rows without a number (written by older
versions) and budget rows without one (fold 0) are folded: an older ledger reads as before.

Every *numbered writer* — a charge, and every change of the budget row through this class
(``SET PRIVACY BUDGET`` raising or lowering a total, changing the unit, creating the row again
after a deletion, and the fold, which only the reading path and ``SET PRIVACY BUDGET`` do) —
commits exactly one ledger row numbered ``n = 1 +`` the user's last number, under the unique key
``(user_name, charge_no)``; a budget change's row is a zero charge (mechanism
:data:`BUDGET_SET`, a negative id, no audit id: neither :meth:`Ledger.entries`, the audit log
nor ``.dump`` lists it). Claims, per user:

1. *Numbers are dense and commit in order.* A writer takes ``n`` either as 1 + the largest
   number its snapshot sees (so ``n - 1`` had committed before it started) or, on the
   known-budget path, as 1 + the number of its own ledger's last committed charge. So ``n``
   commits only after ``n - 1`` did, and two writers of one ``n`` cannot both commit: DuckDB 2.0
   fails the second ``COMMIT`` of a unique key inserted by two open transactions, in either
   order of inserts and commits, and fails an insert of a key committed after the inserter's
   snapshot (``test_ledger_races.py: test_duckdb_fails_the_second_of_two_inserts_of_one_key``).
2. *Each writer ``n`` decides on the state as writer ``n - 1`` left it.* On the reading path its
   snapshot holds ``n - 1`` (it read it) and, by 1, every smaller number and no larger one; the
   budget row is changed only by numbered writers, so the row and the rows after its fold are
   exactly the state after ``n - 1``. On the known-budget path, ``n - 1`` is this ledger's own
   charge, after which it kept the state it wrote (:class:`Known`); by 1 nothing committed in
   between. (Its ``INSERT … SELECT … FROM budget WHERE`` the row equals the known one is a second
   check, not the one relied on.)
3. *So spent never exceeds the total*: writer 1 starts from a row the check of
   ``SET PRIVACY BUDGET`` wrote (total ≥ spent); a charge commits only if the state after
   ``n - 1`` plus its amount is within that state's total, a budget change only if its new
   total covers that state's spending; by 2 and induction on ``n``, after every commit spent ≤
   total. And *spent is the sum of the charges*: each writer's row adds its own amount, and a
   fold moves rows' sum into ``spent`` in the same transaction that raises the fold past them.
4. A writer that fails (a conflict, a refusal, an interrupt anywhere) commits nothing: the
   known-budget path is one autocommit statement, the others one transaction each; the known
   state is updated only after a commit, and a stale one only makes the next charge conflict
   (its number is taken) and take the reading path.

Not numbered, and outside this argument: SQL written by hand to ``_provsql_dp.budget`` (an
``UPDATE`` of a total is not checked against spending even alone). A budget row *deleted* is a
reset of that user's spending (a charge racing the deletion is one made before it); created
again through :meth:`Ledger.set_budget`, its fold is the user's last number, so nothing charged
before counts. The known path sends every 32nd charge to the reading path, which folds, so
a read sums at most 32 rows a user. An older provsql_dp must not charge a ledger this one wrote:
it reads the folded spending alone (the charges after the fold are unknown to it).

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
from datetime import datetime
from fractions import Fraction

import duckdb

from .._cancel import check_current
from .._numbers import format_eps, to_fraction
from .._progress import CHARGED, report
from ..errors import BudgetExceededError, DeclarationError, OperationalError, ProgrammingError
from ..sql.catalog import SCHEMA
from . import audit
from ._ledger_rows import (BUDGET_SET, STATE_SQL, BudgetRow, Charge, Known, State, close,
                           enc, exceeded, no_budget, positive, rollback, spending)
from .accounting import UNITS, Cost, budget_text, converted_spending, debit
from .shared_charge import shared

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
    # charge numbers (the module's docstring): NULL in the rows written before, which are folded
    f"ALTER TABLE {SCHEMA}.ledger ADD COLUMN IF NOT EXISTS charge_no BIGINT",
    f"ALTER TABLE {SCHEMA}.budget ADD COLUMN IF NOT EXISTS charge_no BIGINT",
    f"CREATE UNIQUE INDEX IF NOT EXISTS ledger_charge_no ON {SCHEMA}.ledger (user_name, charge_no)",
    # a budget change's row has a negative id of its own: charges keep their ids 1, 2, …
    f"CREATE SEQUENCE IF NOT EXISTS {SCHEMA}.budget_set_seq START 1",
]

_RETRIES = 50
#: the known-budget path leaves every this-many-th charge to the reading path, which folds
_FOLD_EVERY = 32

#: the ledger's unit and δ columns, written by :meth:`Ledger._charge_on` unless the charge is in
#: pure ε (their defaults), indexed by that
_UNIT_COLUMNS, _UNIT_VALUES = ("unit, delta, ", ""), ("?, ?, ", "")
_INSERT = (f"INSERT INTO {SCHEMA}.ledger (id, charged_at, user_name, statement, mechanism, "
           f"epsilon, unit, delta, charge_no, {audit.LEDGER_COLUMNS}) VALUES "
           f"(nextval('{SCHEMA}.ledger_seq'), ?, ?, ?, ?, ?, ?, ?, ?, {audit.LEDGER_VALUES}) "
           "RETURNING id")
_INSERT_SET = (f"INSERT INTO {SCHEMA}.ledger (id, charged_at, user_name, statement, mechanism, "
               "epsilon, unit, delta, charge_no) VALUES "
               f"(-nextval('{SCHEMA}.budget_set_seq'), ?, ?, ?, '{BUDGET_SET}', '0/1', ?, '0/1', ?)")


def _known_insert(pure: bool) -> str:
    """The known-budget charge: one ``INSERT … SELECT`` of its row, numbered, where the budget
    row is as known (no row: nothing written)."""
    return (f"INSERT INTO {SCHEMA}.ledger (id, charged_at, user_name, statement, mechanism, "
            f"epsilon, {_UNIT_COLUMNS[pure]}charge_no, {audit.LEDGER_COLUMNS}) SELECT "
            f"nextval('{SCHEMA}.ledger_seq'), ?, user_name, ?, ?, ?, {_UNIT_VALUES[pure]}?, "
            f"{audit.LEDGER_VALUES} FROM {SCHEMA}.budget WHERE user_name = ? AND unit = ? AND "
            "total = ? AND spent = ? AND coalesce(charge_no, 0) = ?"
            + ("" if pure else " AND total_delta = ? AND spent_delta = ?") + " RETURNING id")


_KNOWN_INSERT = (_known_insert(False), _known_insert(True))


class Ledger:
    """Budgets and charges in ``_provsql_dp.privacy.ledger`` / ``_provsql_dp.ledger``."""

    def __init__(self, con: duckdb.DuckDBPyConnection, *, read_only: bool = False):
        self.con = con
        self.read_only = read_only
        #: {user: the budget as this object left it at its last charge}: the guess
        #: :meth:`_charge_known` charges against (the charge number makes it safe)
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
                    rollback(cur)  # a concurrent writer won: try again on the new state
                    time.sleep(0.001 * (attempt + 1))
                except BaseException:
                    rollback(cur)
                    raise
            raise OperationalError(f"could not {what}: too much contention on the budget; "
                                   "nothing was changed, try again")
        finally:
            cur.close()

    def set_budget(self, user: str, total, *, unit: str = "epsilon", delta=None) -> None:
        """Set ``user``'s total budget (``SET PRIVACY BUDGET``) in ``unit`` (``'epsilon'``,
        ``'epsilon-delta'`` with ``delta``, or ``'rho'``; :mod:`.accounting`). Spending so far
        is kept, converted exactly when the unit changes (or the change is refused). A numbered
        writer (the module's docstring): its ledger row is a zero charge, and it folds."""
        total = to_fraction(total)
        if total <= 0:
            raise DeclarationError("a privacy budget must be positive")
        if unit not in UNITS:
            raise DeclarationError(f"unknown budget unit {unit!r}; one of {', '.join(UNITS)}")
        total_delta = to_fraction(delta) if unit == "epsilon-delta" else Fraction(0)
        if unit == "epsilon-delta" and not 0 < total_delta < 1:
            raise DeclarationError("the δ of a privacy budget must lie strictly between 0 and 1")

        def body(cur):
            st = _state(cur, user)
            spent, spent_delta = Fraction(0), Fraction(0)
            if st is not None:
                spent, spent_delta = converted_spending(st.unit, unit, st.spent, st.spent_delta,
                                                        user)
                last = st.last
            else:  # none, or deleted: what was charged before does not count (a reset)
                last = cur.execute(f"SELECT coalesce(max(charge_no), 0) FROM {SCHEMA}.ledger "
                                   "WHERE user_name = ?", [user]).fetchone()[0]
            if total < spent or total_delta < spent_delta:
                raise DeclarationError(
                    f"user {user!r} has already spent {budget_text(unit, spent, spent_delta)}; "
                    f"the total cannot be set below that (asked for "
                    f"{budget_text(unit, total, total_delta)})"
                )
            n = last + 1
            cur.execute(_INSERT_SET, [datetime.now(), user, "SET PRIVACY BUDGET "
                                      + budget_text(unit, total, total_delta), unit, n])
            values = [enc(total), enc(spent), unit, enc(total_delta), enc(spent_delta), n, user]
            if st is not None:
                cur.execute(
                    f"UPDATE {SCHEMA}.budget SET total = ?, spent = ?, unit = ?, total_delta = ?, "
                    "spent_delta = ?, charge_no = ?, updated = current_timestamp "
                    "WHERE user_name = ?", values)
            else:
                cur.execute(
                    f"INSERT INTO {SCHEMA}.budget (total, spent, unit, total_delta, spent_delta, "
                    "charge_no, user_name) VALUES (?, ?, ?, ?, ?, ?, ?)", values)

        self._known.pop(user, None)
        self._transaction(body, "set the budget")

    def budget(self, user: str) -> tuple[Fraction, Fraction] | None:
        """``(total, spent)`` for ``user``, or None when no budget was set."""
        acc = self.account(user)
        return None if acc is None else (acc[1], acc[2])

    def account(self, user: str) -> tuple[str, Fraction, Fraction, Fraction, Fraction] | None:
        """``(unit, total, spent, total δ, spent δ)`` for ``user``, or None when no budget."""
        rows = self._account_rows(" WHERE b.user_name = ?", [user])
        return rows[0][1:] if rows else None

    def accounts(self) -> list[tuple]:
        """``(user, unit, total, spent, total δ, spent δ)`` for every user, by name."""
        return self._account_rows("", [])

    def _account_rows(self, where: str, params) -> list[tuple]:
        try:
            states = spending(self._rows(STATE_SQL + where, params))
        except duckdb.BinderException:  # a read-only ledger of an older version: its rows
            return _older_account_rows(self, where.replace("b.", ""), params)
        return [(u, s.unit, Fraction(s.total), s.spent, Fraction(s.total_delta), s.spent_delta)
                for u, s in sorted(states.items())]

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
        cost = cost if cost is not None else Cost(epsilon=positive(epsilon))
        acc = self.account(user)
        if acc is None:
            raise BudgetExceededError(no_budget(user))
        unit, total, spent, total_delta, spent_delta = acc
        amount, delta = debit(cost, unit, user)
        if spent + amount > total or spent_delta + delta > total_delta:
            raise BudgetExceededError(exceeded(user, (amount, delta), (total, total_delta),
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
        part = shared()  # a part of a statement charged once (.shared_charge)
        if part is not None:
            return part.take(self, user, epsilon, cost)
        cost = cost if cost is not None else Cost(epsilon=positive(epsilon))
        check_current()  # a statement cancelled before its charge charges nothing (_cancel)
        charge = self._charge_known(user, cost, statement, mechanism)
        if charge is not None:
            report(CHARGED, public=True)
            return charge
        self._known.pop(user, None)
        read = []

        def body(cur) -> Charge:  # the reading path: charges and folds, numbered
            st = _state(cur, user)
            if st is None:
                raise BudgetExceededError(no_budget(user))
            total, total_d, spent, spent_d = (Fraction(st.total), Fraction(st.total_delta),
                                              st.spent, st.spent_delta)
            amount, delta = debit(cost, st.unit, user)
            if spent + amount > total or spent_d + delta > total_d:
                raise BudgetExceededError(exceeded(user, (amount, delta), (total, total_d),
                                                   (spent, spent_d), st.unit))
            n, new, new_d = st.last + 1, enc(spent + amount), enc(spent_d + delta)
            updated = cur.execute(
                f"UPDATE {SCHEMA}.budget SET spent = ?, spent_delta = ?, charge_no = ?, "
                "updated = current_timestamp WHERE user_name = ? AND spent = ? AND unit = ? "
                "AND coalesce(charge_no, 0) = ?",
                [new, new_d, n, user, st.spent_row, st.unit, st.fold]).fetchone()
            if not updated or updated[0] != 1:
                raise duckdb.TransactionException("the budget row changed concurrently")
            at = datetime.now()
            cid = cur.execute(_INSERT, [  # also the release's audit row (privacy.audit)
                at, user, statement, mechanism, enc(amount), st.unit, enc(delta), n,
                self.source.role, self.source.client]).fetchone()[0]
            read[:] = [Known(st.unit, st.total, new, st.total_delta, new_d, delta, n, n,
                             total - spent - amount, total_d - spent_d - delta)]
            return Charge(cid, at, user, statement, mechanism, amount, total - spent - amount,
                          st.unit, delta)

        charge = self._transaction(body, "record the charge")
        if read:
            self._known[user] = read[0]  # committed: the fast path's guess
        self.charges += 1
        report(CHARGED, public=True)  # the shell's status line (data-independent)
        return charge

    def _charge_known(self, user: str, cost: Cost, statement, mechanism) -> Charge | None:
        """The charge in one autocommit ``INSERT`` when this object charged ``user`` last:
        numbered one above that charge, whose state it kept (:class:`Known`; safe by the
        module's docstring). None says: take the reading path — also when nothing is known, the
        known budget does not cover ``cost`` or its unit cannot pay it (either may have changed
        since: the reading path decides, and refuses with the row it read), the charge number
        was taken meanwhile, or the budget row is not the known one."""
        plan = self._known_debit(user, cost)
        if plan is None:
            return None
        if not self._charger_lock.acquire(blocking=False):  # another thread charges through
            return None  # this object now: the reading path, on a connection of its own
        try:
            return self._charge_on(self._charger_cursor(), user, plan[1], statement,
                                   mechanism, plan[0])
        finally:
            self._charger_lock.release()

    def _known_debit(self, user: str, cost: Cost) -> tuple[Known, tuple] | None:
        """``(known state, (amount, δ))`` when the known-budget path may charge ``cost`` to
        ``user`` (:meth:`_charge_known`'s conditions but the charger's lock), else None."""
        known = self._known.get(user)
        if known is None or known.last - known.fold >= _FOLD_EVERY - 1:
            return None
        try:
            amount, delta = debit(cost, known.unit, user)
        except ProgrammingError:
            return None
        if amount > known.left or delta > known.left_delta:
            return None
        return known, (amount, delta)

    def _charger_cursor(self):
        """The connection :meth:`_charge_known` charges on, kept between charges (opening and
        closing one per charge cost ~0.4 ms); never in a transaction between two charges. It
        is closed with the connection it came from (DuckDB closes a connection's cursors)."""
        if self._charger is None:
            cur = self.con.cursor()
            try:  # no optimizer for this connection's small statement: a tenth of a
                # millisecond, and nothing for it to improve in it
                cur.execute("PRAGMA disable_optimizer")
            except duckdb.Error:  # the configuration is locked (an analyst's guard rails)
                pass
            self._charger = cur
        return self._charger

    def _drop_charger(self, cur) -> None:
        """Roll back and close the kept connection: a fresh one next time, whatever state this
        one is in."""
        rollback(cur)
        self._charger = None
        close(cur)

    def _charge_on(self, cur, user, debited, statement, mechanism, known) -> Charge | None:
        (amount, delta), unit = debited, known.unit
        pure = unit == "epsilon"  # δ is 0 and stays so: the columns' defaults
        n, at = known.last + 1, datetime.now()
        try:
            rows = cur.execute(
                _KNOWN_INSERT[pure],
                [at, statement, mechanism, enc(amount)] + ([] if pure else [unit, enc(delta)])
                + [n, self.source.role, self.source.client, user, unit, known.total,
                   known.spent, known.fold]
                + ([] if pure else [known.total_delta, known.spent_delta])).fetchall()
        except duckdb.Error:  # the number taken meanwhile, or anything else: the reading path
            self._drop_charger(cur)
            return None
        except BaseException:  # (Ctrl-C, say) no transaction is left open on the kept connection
            self._drop_charger(cur)
            raise
        if len(rows) != 1:  # the budget row is not the known one: nothing was written
            return None
        left = known.left - amount
        self._known[user] = known._replace(last=n, left=left,
                                           left_delta=known.left_delta - delta, delta=delta)
        self.charges += 1
        return Charge(rows[0][0], at, user, statement, mechanism, amount, left, unit, delta)

    def entries(self, user: str | None = None, *, last: bool = False) -> list[Charge]:
        """The recorded charges, oldest first (all users, or one); ``last``: only the newest
        (one row read, not the user's whole ledger). A budget change's row is no charge."""
        cols = "id, charged_at, user_name, statement, mechanism, epsilon"
        where, params = (" WHERE user_name = ?", [user]) if user is not None else (" WHERE TRUE", [])
        order = " ORDER BY id DESC LIMIT 1" if last else " ORDER BY id ASC"
        try:
            rows = self._rows(f"SELECT {cols}, unit, delta FROM {SCHEMA}.ledger{where} AND "
                              f"mechanism <> '{BUDGET_SET}'{order}", params)
        except duckdb.BinderException:  # a read-only ledger made before budget units: pure ε
            rows = [r + ("epsilon", "0") for r in self._rows(
                f"SELECT {cols} FROM {SCHEMA}.ledger{where}{order}", params)]
        return [Charge(i, a, u, s, m, Fraction(e), Fraction(0), unit or "epsilon",
                       Fraction(d or 0)) for i, a, u, s, m, e, unit, d in rows]


def _state(cur, user: str) -> State | None:
    """``user``'s budget as ``cur``'s snapshot has it (:data:`._ledger_rows.STATE_SQL`)."""
    return spending(cur.execute(STATE_SQL + " WHERE b.user_name = ?", [user]).fetchall()).get(user)


def _older_account_rows(led: Ledger, where: str, params) -> list[tuple]:
    """The accounts of a read-only ledger of an older version (no charge numbers; before budget
    units: pure ε)."""
    sql = f"SELECT user_name, unit, total, spent, total_delta, spent_delta FROM {SCHEMA}.budget"
    try:
        rows = led._rows(sql + where + " ORDER BY user_name", params)
    except duckdb.BinderException:
        rows = [(u, "epsilon", t, s, "0", "0") for u, t, s in led._rows(
            f"SELECT user_name, total, spent FROM {SCHEMA}.budget" + where + " ORDER BY user_name",
            params)]
    return [(u, unit or "epsilon", Fraction(t), Fraction(s), Fraction(td or 0),
             Fraction(sd or 0)) for u, unit, t, s, td, sd in rows]
