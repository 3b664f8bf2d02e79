"""Sustainable publishing of a growing table (Fang & Chang §6): Theorem 2, enforced in the database.

A :class:`Publisher` releases one noisy statistic per time step (or several: their budgets add
up). Under the δ-neighbourhood on sequences (an entity's data differ only within δ consecutive
steps, and entities appear through the null sequence), Theorem 2 makes the whole infinite series
ε-differentially private as long as **every window of δ consecutive steps spends at most ε**. The
publisher enforces exactly that, in exact rational arithmetic: a release that would push any
window containing its step over ε is refused with :class:`~provsql_dp.errors.BudgetExceededError`
and spends nothing.

State lives in the database, in catalog tables of our own (schema ``_provsql_dp``):

* ``delta_publishers(name, delta, epsilon, created, version, state)`` — one row per publisher;
  ``state`` is ``'opening'`` while its ledger charge is recorded, then ``'open'``;
* ``delta_releases(publisher, seq, step, epsilon, statistic, value, status, released_at)`` — one
  row per release; ``status`` is ``'reserved'`` from the moment the window check passes until the
  noisy value is stored (``'released'``). A reservation counts against its windows, so a crash
  between the check and the release can only waste budget, never overspend. These rows are the
  publisher's **window account**, kept in exact rational arithmetic in the same database as the
  ledger.

The ledger and the window account (Theorem 2). Creating a publisher charges the creating user's
ledger **once**, the window budget ε (mechanism ``delta_stream``): under the δ-neighbourhood on
sequences, Theorem 2 makes the whole infinite series of releases ε-differentially private as
long as every window of δ consecutive steps spends at most ε, so the series costs ε in the
sequential composition with everything else the user releases — however long it runs. Each
release is then checked against the window account only and never charged to the ledger again.
(A series created by an earlier version paid nothing at creation: its ``state`` is ``'legacy'``
and each of its releases is still charged to the ledger, as before.)

The order of a release: compute the exact statistic (a failure spends nothing) → in one
transaction, check every window holding the step and reserve → release the value with exact
discrete Laplace noise on the public grid of ``plan_laplace(sensitivity, ε)``
(:mod:`provsql_dp.mechanisms.noise.safe_noise`, OS entropy unless a test passes a generator; the plan is
checked before anything is reserved) → store the value. From SQL: ``CREATE STREAM``,
``PUBLISH STREAM``, ``SHOW STREAMS`` (:mod:`provsql_dp.privacy.stream_statements`).

Examples
--------
>>> import numpy as np, provsql_dp
>>> from provsql_dp.policies.delta import Publisher
>>> con = provsql_dp.connect()
>>> con.ledger.set_budget(con.user, 100)
>>> pub = Publisher(con, "visits", delta=3, epsilon=1.0)   # charges the ledger ε = 1, once
>>> con.ledger.budget(con.user)
(Fraction(100, 1), Fraction(1, 1))
>>> r = pub.release(1, 120.0, epsilon=0.5, rng=np.random.default_rng(0))
>>> _ = pub.release(2, 118.0, epsilon=0.5, rng=np.random.default_rng(1))
>>> pub.available(3)                     # steps 1–3 already spend 1
Fraction(0, 1)
>>> pub.release(3, 130.0, epsilon=0.1)
Traceback (most recent call last):
  ...
provsql_dp.errors.BudgetExceededError: publisher 'visits': releasing ε = 0.1 at step 3 would make steps 1–3 spend 1.1 > ε = 1 (Theorem 2: any 3 consecutive steps spend at most ε); at most 0 is available at step 3. Nothing was spent.
>>> pub.available(4)                     # step 1 has left the window
Fraction(1, 2)
>>> con.ledger.budget(con.user)          # releases draw on the window account only
(Fraction(100, 1), Fraction(1, 1))
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction

import duckdb

from ..._numbers import format_eps, to_fraction
from ...errors import (
    BudgetExceededError,
    DeclarationError,
    OperationalError,
    ProgrammingError,
)
from ...mechanisms.noise.sources import resolve_rng
from ...mechanisms.noise.safe_noise import MAX_ABS_VALUE, plan_laplace
from ...sql.catalog import SCHEMA

__all__ = ["Publisher", "Release", "list_publishers", "published"]

_DDL = [
    f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}",
    f"""CREATE TABLE IF NOT EXISTS {SCHEMA}.delta_publishers (
        name VARCHAR PRIMARY KEY,
        delta BIGINT NOT NULL,
        epsilon VARCHAR NOT NULL,
        created TIMESTAMP DEFAULT current_timestamp,
        version BIGINT NOT NULL DEFAULT 0)""",
    # a publisher created by an earlier version has none: 'legacy', charged release by release
    f"ALTER TABLE {SCHEMA}.delta_publishers ADD COLUMN IF NOT EXISTS state VARCHAR DEFAULT 'legacy'",
    f"""CREATE TABLE IF NOT EXISTS {SCHEMA}.delta_releases (
        publisher VARCHAR NOT NULL,
        seq BIGINT NOT NULL,
        step BIGINT NOT NULL,
        epsilon VARCHAR NOT NULL,
        statistic VARCHAR,
        value DOUBLE,
        status VARCHAR NOT NULL,
        released_at TIMESTAMP,
        PRIMARY KEY (publisher, seq))""",
    # the sensitivity a release was calibrated to and where it came from (PUBLISH STREAM:
    # privacy.stream_sensitivity); NULL in the rows of an earlier version
    f"ALTER TABLE {SCHEMA}.delta_releases ADD COLUMN IF NOT EXISTS sensitivity VARCHAR",
]

_RETRIES = 50


def _enc(f: Fraction) -> str:
    return f"{f.numerator}/{f.denominator}"


@dataclass(frozen=True)
class Release:
    """One published statistic."""

    step: int
    value: float
    epsilon: Fraction
    statistic: str
    scale: float
    grid: float = float("nan")  # the public grid of ``value`` (NaN for history rows)
    #: the sensitivity it was calibrated to and its basis, as recorded (None: not recorded)
    sensitivity: str | None = None


def _duck(con):
    led = getattr(con, "ledger", None)
    if led is None or not hasattr(led, "charge"):
        raise ProgrammingError("Publisher needs a provsql_dp connection (provsql_dp.connect(...)), "
                               "whose ledger it charges")
    return led.con


def list_publishers(db: duckdb.DuckDBPyConnection) -> list[tuple]:
    """``(name, delta, epsilon, releases, last_step, state)`` of every publisher in the
    database, by name (reads our catalog tables only)."""
    try:
        return [(n, int(dl), Fraction(e), int(r), s, st) for n, dl, e, r, s, st in db.execute(
            f"SELECT p.name, p.delta, p.epsilon, count(r.seq) FILTER (WHERE r.status = 'released'), "
            f"max(r.step) FILTER (WHERE r.status = 'released'), coalesce(p.state, 'legacy') "
            f"FROM {SCHEMA}.delta_publishers p LEFT JOIN {SCHEMA}.delta_releases r "
            "ON r.publisher = p.name GROUP BY ALL ORDER BY p.name").fetchall()]
    except duckdb.CatalogException:  # no publisher was ever created in this database
        return []


def published(db: duckdb.DuckDBPyConnection, name: str) -> list[Release]:
    """Every completed release of publisher ``name``, oldest first."""
    try:
        rows = db.execute(
            f"SELECT step, value, epsilon, statistic, sensitivity FROM {SCHEMA}.delta_releases "
            "WHERE publisher = ? AND status = 'released' ORDER BY seq", [name]).fetchall()
    except duckdb.BinderException:  # a table of an earlier version, never opened since
        rows = [(*r, None) for r in db.execute(
            f"SELECT step, value, epsilon, statistic FROM {SCHEMA}.delta_releases "
            "WHERE publisher = ? AND status = 'released' ORDER BY seq", [name]).fetchall()]
    except duckdb.CatalogException:
        return []
    return [Release(int(s), float(v), Fraction(e), st, float("nan"), sensitivity=se)
            for s, v, e, st, se in rows]


class Publisher:
    """Releases statistics of a growing table step by step under Theorem 2.

    Parameters
    ----------
    con : provsql_dp.Connection
        Its database holds the state; creating the publisher charges its user's ledger the
        window budget ε, once.
    name : str
        The publisher's name; reopening it (even from another connection to the same database
        file) restores its state.
    delta : int, optional
        Window length in time steps (required when creating).
    epsilon : float, str or Fraction, optional
        Budget of any window (required when creating).
    """

    def __init__(self, con, name: str, delta=None, epsilon=None):
        self.con = con
        self._db = _duck(con)
        if not isinstance(name, str) or not name:
            raise DeclarationError("a publisher needs a non-empty name")
        self.name = name
        # our own cursor: autocommitted, outside any transaction the connection has open
        # (PEP 249 implicit transactions), like the budget ledger
        self._cur = self._db.cursor()
        for stmt in _DDL:
            self._cur.execute(stmt)
        row = self._state()
        if row is None:
            if delta is None or epsilon is None:
                raise DeclarationError(f"publisher {name!r} does not exist yet: give delta and "
                                       "epsilon to create it")
            d, e = self._check(delta, epsilon)
            self._create(d, e)
            row = self._state()
        if row[2] == "opening":
            raise OperationalError(
                f"publisher {name!r} is being created by another connection (its ledger charge "
                "is not recorded yet); try again")
        self.legacy = row[2] == "legacy"
        self.delta = int(row[0])
        self.epsilon = Fraction(row[1])
        if delta is not None and int(delta) != self.delta or (
                epsilon is not None and to_fraction(epsilon) != self.epsilon):
            raise DeclarationError(
                f"publisher {name!r} already exists with delta = {self.delta} and epsilon = "
                f"{format_eps(self.epsilon)}; its window rule cannot change (use a new name)")

    @staticmethod
    def _check(delta, epsilon):
        try:
            d = int(delta)
        except (TypeError, ValueError):
            raise DeclarationError(f"delta must be a whole number of time steps, got {delta!r}") from None
        if d != delta or d < 1:
            raise DeclarationError(f"delta must be a whole number of time steps ≥ 1, got {delta!r}")
        e = to_fraction(epsilon)
        if e <= 0:
            raise DeclarationError("epsilon must be positive")
        return d, e

    def _state(self):
        return self._cur.execute(
            f"SELECT delta, epsilon, coalesce(state, 'legacy') FROM {SCHEMA}.delta_publishers "
            "WHERE name = ?", [self.name]).fetchone()

    def _create(self, delta: int, epsilon: Fraction) -> None:
        """Insert the publisher as ``'opening'``, charge the ledger ε once (Theorem 2: the whole
        series costs ε), then open it. A refused charge removes the row: nothing is spent."""
        try:
            self._cur.execute(
                f"INSERT INTO {SCHEMA}.delta_publishers (name, delta, epsilon, state) "
                "VALUES (?, ?, ?, 'opening')", [self.name, delta, _enc(epsilon)])
        except (duckdb.ConstraintException, duckdb.TransactionException):
            return  # created concurrently: its creator charges
        try:
            self.con.ledger.charge(
                self.con.user, epsilon,
                f"stream {self.name}: any {delta} consecutive steps spend at most "
                f"{format_eps(epsilon)} (Fang & Chang Theorem 2)", "delta_stream")
        except BaseException:
            self._cur.execute(f"DELETE FROM {SCHEMA}.delta_publishers WHERE name = ? "
                              "AND state = 'opening'", [self.name])
            raise
        self._cur.execute(f"UPDATE {SCHEMA}.delta_publishers SET state = 'open' WHERE name = ?",
                          [self.name])

    # ------------------------------------------------------------------ state
    def _spend_near(self, cur, step: int) -> dict:
        rows = cur.execute(
            f"SELECT step, epsilon FROM {SCHEMA}.delta_releases WHERE publisher = ? "
            "AND step BETWEEN ? AND ?", [self.name, step - self.delta + 1, step + self.delta - 1]
        ).fetchall()
        out: dict = {}
        for s, e in rows:
            out[int(s)] = out.get(int(s), Fraction(0)) + Fraction(e)
        return out

    def _worst_window(self, spend: dict, step: int):
        """(largest spend of a window holding ``step``, its first step)."""
        best, first = Fraction(-1), step
        for a in range(step - self.delta + 1, step + 1):
            tot = sum((spend.get(s, Fraction(0)) for s in range(a, a + self.delta)), Fraction(0))
            if tot > best:
                best, first = tot, a
        return best, first

    def available(self, step: int) -> Fraction:
        """The largest ε a release at ``step`` may still spend."""
        spend = self._spend_near(self._cur, int(step))
        worst, _ = self._worst_window(spend, int(step))
        return max(Fraction(0), self.epsilon - worst)

    def spent(self) -> dict:
        """``{step: total ε spent at that step}`` (reservations included)."""
        rows = self._cur.execute(
            f"SELECT step, epsilon FROM {SCHEMA}.delta_releases WHERE publisher = ?", [self.name]
        ).fetchall()
        out: dict = {}
        for s, e in rows:
            out[int(s)] = out.get(int(s), Fraction(0)) + Fraction(e)
        return dict(sorted(out.items()))

    def releases(self) -> list[Release]:
        """Every completed release, oldest first."""
        return published(self._cur, self.name)

    # ------------------------------------------------------------------ releasing
    def _exact(self, statistic, params, saturate: bool = False):
        if isinstance(statistic, str):
            try:  # on the connection itself: the curator's uncommitted rows count
                row = self._db.execute(statistic, list(params or [])).fetchone()
            except duckdb.Error as e:
                raise ProgrammingError(f"the statistic failed: {e}; nothing was spent") from e
            if row is None or len(row) != 1:
                raise ProgrammingError("the statistic must return one row with one numeric value")
            val = row[0]
            text = statistic
        else:
            val, text = statistic, repr(statistic)
        try:
            v = float(val if val is not None else 0.0)
        except (TypeError, ValueError):
            raise ProgrammingError("the statistic must be numeric") from None
        if not math.isfinite(v) and saturate:  # the outcome never depends on an overflow
            v = 0.0 if math.isnan(v) else math.copysign(MAX_ABS_VALUE, v)
        if not math.isfinite(v):
            raise ProgrammingError("the statistic must be finite (clamp it in the query); "
                                   "nothing was spent")
        return v, text

    def _reserve(self, step: int, eps: Fraction, text: str) -> int:
        cur = self._db.cursor()
        try:
            for attempt in range(_RETRIES):
                try:
                    cur.execute("BEGIN TRANSACTION")
                    # a write to the publisher's row makes concurrent reservations conflict
                    cur.execute(f"UPDATE {SCHEMA}.delta_publishers SET version = version + 1 "
                                "WHERE name = ?", [self.name])
                    spend = self._spend_near(cur, step)
                    spend[step] = spend.get(step, Fraction(0)) + eps
                    worst, first = self._worst_window(spend, step)
                    if worst > self.epsilon:
                        cur.execute("ROLLBACK")
                        avail = max(Fraction(0), self.epsilon - (worst - eps))
                        raise BudgetExceededError(
                            f"publisher {self.name!r}: releasing ε = {format_eps(eps)} at step "
                            f"{step} would make steps {first}–{first + self.delta - 1} spend "
                            f"{format_eps(worst)} > ε = {format_eps(self.epsilon)} (Theorem 2: "
                            f"any {self.delta} consecutive steps spend at most ε); at most "
                            f"{format_eps(avail)} is available at step {step}. Nothing was spent.")
                    seq = cur.execute(
                        f"SELECT coalesce(max(seq), 0) + 1 FROM {SCHEMA}.delta_releases "
                        "WHERE publisher = ?", [self.name]).fetchone()[0]
                    cur.execute(
                        f"INSERT INTO {SCHEMA}.delta_releases (publisher, seq, step, epsilon, "
                        "statistic, value, status, released_at) VALUES (?, ?, ?, ?, ?, NULL, "
                        "'reserved', NULL)", [self.name, seq, step, _enc(eps), text])
                    cur.execute("COMMIT")
                    return int(seq)
                except (duckdb.TransactionException, duckdb.ConstraintException):
                    try:
                        cur.execute("ROLLBACK")
                    except duckdb.Error:
                        pass
                    time.sleep(0.001 * (attempt + 1))
            raise OperationalError(f"publisher {self.name!r}: too much contention; nothing was "
                                   "spent, try again")
        finally:
            cur.close()

    def release(self, step: int, statistic, epsilon, sensitivity=1.0, params=None,
                rng=None, basis: str | None = None, shown: str | None = None,
                saturate: bool = False) -> Release:
        """Release ``statistic + Laplace(sensitivity/ε)`` at time ``step``.

        Parameters
        ----------
        step : int
            The time step (any order; several releases at one step add up).
        statistic : str or float
            A SQL query returning one numeric value (run on the connection's database, e.g. the
            count of the rows of this step), or the exact value computed by the curator.
        epsilon : float, str or Fraction
            ``ε_t`` for this release.
        sensitivity : float
            The statistic's sensitivity to one entity's data *at one step* added, removed or
            replaced (1 for a count of rows of that step, one row per entity; ``hi − lo`` for a
            sum of one value clamped to ``[lo, hi]`` with ``lo ≤ 0 ≤ hi``). The statistic reads
            that step's data only (Theorem 2's premise).
        params : sequence, optional
            Parameters of the SQL query.
        rng : numpy.random.Generator, optional
            Tests only; default OS entropy.
        basis : str, optional
            Where ``sensitivity`` comes from, recorded with the release (``SHOW STREAMS name``).
        shown : str, optional
            The text recorded for the statistic (default: ``statistic`` itself); ``PUBLISH
            STREAM`` records the curator's query while it runs the planner's, whose SQL spells out
            the views it reads (their definitions are not the analysts' to see).
        saturate : bool, optional
            A statistic that comes out ±∞ (finite values whose sum overflows) is released as
            ``±MAX_ABS_VALUE``, the range the mechanism releases over, and NaN (overflows both
            ways) as 0, instead of refused: ``PUBLISH STREAM``'s, whose refusal would tell
            whether the data overflows.

        Raises
        ------
        BudgetExceededError
            A window holding ``step`` would spend more than ε; nothing was spent.
        """
        try:
            step = int(step)
        except (TypeError, ValueError):
            raise ProgrammingError(f"step must be an integer time step, got {step!r}") from None
        eps = to_fraction(epsilon)
        if eps <= 0:
            raise ProgrammingError("epsilon must be positive")
        sens = float(sensitivity)
        if not sens > 0:
            raise ProgrammingError("sensitivity must be positive")
        try:  # the grid and the exact noise, from public parameters, before anything is reserved
            plan = plan_laplace(sens, float(eps))
        except ValueError as e:
            raise ProgrammingError(f"cannot release with sensitivity {sens!r} at ε = "
                                   f"{format_eps(eps)}: {e}; nothing was spent") from None
        exact, text = self._exact(statistic, params, saturate)
        text = text if shown is None else shown
        seq = self._reserve(step, eps, text)  # the window account; the ledger paid ε at creation
        if self.legacy:  # created before window accounts: charged release by release
            try:
                self.con.ledger.charge(self.con.user, eps,
                                       f"publisher {self.name} step {step}: {text}",
                                       "delta_publisher")
            except BaseException:
                self._cur.execute(f"DELETE FROM {SCHEMA}.delta_releases WHERE publisher = ? "
                                  "AND seq = ?", [self.name, seq])
                raise
        value = plan.release(exact, rng=resolve_rng(rng))
        self._cur.execute(
            f"UPDATE {SCHEMA}.delta_releases SET value = ?, status = 'released', released_at = ?, "
            "sensitivity = ? WHERE publisher = ? AND seq = ?",
            [value, datetime.now(), basis or f"{sens!r}", self.name, seq])
        return Release(step, value, eps, text, plan.noise_scale, plan.grid, basis or f"{sens!r}")
