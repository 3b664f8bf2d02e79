"""Charge numbers (:mod:`provsql_dp.privacy.ledger`'s docstring): the known-budget charge is one
``INSERT``, the reading path folds, every reader sees one spent, ``.dump`` restores it, and a
``KeyboardInterrupt`` before or after any statement of any writer leaves spent equal to the
ledger's charges and within the total."""

from __future__ import annotations

import io
from fractions import Fraction

import duckdb
import pytest

import provsql_dp
from provsql_dp.interfaces.shell.dump import dump
from provsql_dp.interfaces.shell.session import Shell
from provsql_dp.privacy._ledger_rows import BUDGET_SET, STATE_SQL, spending
from provsql_dp.privacy.ledger import _FOLD_EVERY, Ledger

S = "_provsql_dp"


def _rows(con, user):
    return con.execute(f"SELECT epsilon, charge_no FROM {S}.ledger WHERE user_name = ? "
                       "ORDER BY charge_no", [user]).fetchall()


def test_known_charges_write_one_row_each_and_the_reading_path_folds():
    con = duckdb.connect()
    led = Ledger(con)
    led.set_budget("u", "10")
    folds = []
    for i in range(2 * _FOLD_EVERY + 3):
        led.charge("u", "1/10", f"q{i}", "test")
        folds.append(con.execute(f"SELECT charge_no, spent FROM {S}.budget").fetchone())
    # number 1 is the budget's; the reading path (first charge, then every 32nd) folds
    assert [f[0] for f in folds].count(2) == _FOLD_EVERY
    assert folds[_FOLD_EVERY] == (2 + _FOLD_EVERY, f"{_FOLD_EVERY + 1}/10")
    assert [n for _, n in _rows(con, "u")] == list(range(1, 2 * _FOLD_EVERY + 5))
    assert led.account("u")[2] == Fraction(2 * _FOLD_EVERY + 3, 10)
    assert Ledger(con).remaining("u") == 10 - Fraction(2 * _FOLD_EVERY + 3, 10)
    assert len(led.entries("u")) == 2 * _FOLD_EVERY + 3  # the budget's row is no charge


def test_show_privacy_budget_and_dump_see_the_charges_after_the_fold():
    con = provsql_dp.connect(user="cur")
    con.execute("CREATE TABLE p (x INTEGER); INSERT INTO p SELECT range FROM range(50); "
                "PROTECT TABLE p; SET PRIVACY BUDGET 5")
    for _ in range(4):
        con.execute("SELECT COUNT(*) FROM p WITH EPSILON 0.25").fetchall()
    assert con._duck.execute(f"SELECT spent FROM {S}.budget").fetchone() == ("1/4",)  # folded
    assert [r[2] for r in con.execute("SHOW PRIVACY BUDGET").fetchall()] == ["1"]
    fresh = provsql_dp.connect(user="cur")
    fresh.autocommit = True
    err = io.StringIO()
    assert Shell(fresh, io.StringIO(), err).run_text("\n".join(dump(con))), err.getvalue()
    assert fresh.ledger.accounts() == con.ledger.accounts()
    assert [c.id for c in fresh.ledger.entries()] == [c.id for c in con.ledger.entries()]
    fresh.execute("SELECT COUNT(*) FROM p WITH EPSILON 0.5").fetchall()
    fresh.execute("SELECT COUNT(*) FROM p WITH EPSILON 0.5").fetchall()
    assert fresh.ledger.budget("cur") == (5, 2)
    assert fresh._duck.execute(f"SELECT count(*) FROM {S}.ledger WHERE mechanism = ?",
                               [BUDGET_SET]).fetchone() == (1,)


class _Interrupt:
    """A connection whose cursors raise KeyboardInterrupt before or after statement ``at``
    (counted over all of them)."""

    def __init__(self, con, at: int, after: bool):
        self._con, self.at, self.after, self.n = con, at, after, 0

    def cursor(self):
        return _Cursor(self, self._con.cursor())

    def __getattr__(self, name):
        return getattr(self._con, name)


class _Cursor:
    def __init__(self, owner, cur):
        self._owner, self._cur = owner, cur

    def execute(self, sql, params=None):
        o = self._owner
        o.n += 1
        if o.n == o.at and not o.after:
            raise KeyboardInterrupt
        out = self._cur.execute(sql, params) if params is not None else self._cur.execute(sql)
        if o.n == o.at and o.after:
            raise KeyboardInterrupt
        return out

    def __getattr__(self, name):
        return getattr(self._cur, name)


@pytest.mark.parametrize("after", [False, True], ids=["before", "after"])
def test_an_interrupt_at_any_statement_of_any_writer_keeps_spent_exact(after):
    """Each writer in turn (a reading-path charge, known-budget charges, a budget lowered, a
    budget raised), interrupted before or after its k-th statement, for every k: whatever
    committed, spent is the sum of the rows and within the total, and the next charges work."""
    for at in range(1, 12):
        raw = duckdb.connect()
        led = Ledger(raw)
        led.set_budget("u", "1")
        led.con = _Interrupt(raw, at, after)
        steps = [lambda: led.charge("u", "1/10", "a", "test"),
                 lambda: led.charge("u", "1/10", "b", "test"),
                 lambda: led.charge("u", "1/10", "c", "test"),
                 lambda: led.set_budget("u", "1/2"),
                 lambda: led.charge("u", "1/10", "d", "test"),
                 lambda: led.set_budget("u", "2")]
        for step in steps:
            try:
                step()
            except KeyboardInterrupt:
                pass
            st = spending(raw.execute(STATE_SQL).fetchall())["u"]
            rows = _rows(raw, "u")
            assert st.spent == sum(Fraction(e) for e, _ in rows) <= Fraction(st.total), (at, rows)
            assert [n for _, n in rows] == list(range(1, len(rows) + 1)), (at, rows)
        led.con = raw
        led.charge("u", "1/10", "e", "test")
        assert led.account("u")[2] == sum(Fraction(e) for e, _ in _rows(raw, "u"))
