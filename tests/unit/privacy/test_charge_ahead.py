"""A release's known-budget charge recorded while it reads (privacy.charge_ahead): charged once,
before anything read is released; a charge that does not go through abandons the read (the
DuckDB query under way is interrupted) and the release runs again, charged first — refused
with nothing spent when the budget is gone; a cancel or a failure of the read is the
statement's outcome, charged exactly when the charge went through."""

from __future__ import annotations

import threading
from fractions import Fraction

import pytest

import provsql_dp
from provsql_dp._cancel import Abandoned
from provsql_dp._deadline import reading
from provsql_dp.errors import BudgetExceededError, StatementCancelled
from provsql_dp.privacy import charge_ahead as ca
from provsql_dp.privacy.ledger import Ledger

COUNT = "SELECT count(*) FROM p WHERE x > 3 WITH EPSILON 1"
#: a read of many seconds: it ends early only when interrupted
LONG = "SELECT sum(a.range * b.range) FROM range(40000) a, range(40000) b"


def _connect(path):
    con = provsql_dp.connect(str(path))
    con.execute("CREATE TABLE IF NOT EXISTS p(id INT PRIMARY KEY, x DOUBLE)")
    return con


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "db.duckdb"
    con = _connect(path)
    con.execute("INSERT INTO p SELECT i, i % 10 FROM range(1000) t(i)")
    con.execute("PROTECT TABLE p")
    con.execute("SET PRIVACY BUDGET 5")
    yield path, con
    con.close()


def _rows(con) -> int:
    return con._duck.execute("SELECT count(*) FROM _provsql_dp.ledger WHERE id > 0").fetchone()[0]


def _spy(monkeypatch) -> list:
    """Each charge_ahead's result (a PendingCharge, or None: the charge came first)."""
    seen, real = [], ca.charge_ahead

    def spy(*a):
        seen.append(real(*a))
        return seen[-1]
    monkeypatch.setattr(ca, "charge_ahead", spy)
    return seen


def test_a_known_budget_charge_runs_beside_the_read_and_is_recorded_once(db, monkeypatch):
    _, con = db
    seen = _spy(monkeypatch)
    con.execute(COUNT).fetchall()  # the reading path: learns the budget
    for _ in range(3):
        cur = con.execute(COUNT)
        assert len(cur.fetchall()) == 1 and cur.privacy.epsilon == 1
    two = con.execute("SELECT count(*), sum(x) FROM p WITH EPSILON 1")  # several aggregates
    assert two.privacy.epsilon == 1
    assert seen[0] is None and all(isinstance(p, ca.PendingCharge) for p in seen[1:])
    assert _rows(con) == 5 and con.ledger.remaining("default") == 0
    with pytest.raises(BudgetExceededError):  # the known budget does not cover it: charge first
        con.execute(COUNT)
    assert seen[-1] is None and _rows(con) == 5


def test_a_charge_taken_meanwhile_runs_the_release_again_charged_once(db, monkeypatch):
    path, con = db
    other = _connect(path)  # the same user on another connection: takes the next number
    try:
        con.execute(COUNT).fetchall()
        seen = _spy(monkeypatch)
        other.execute(COUNT).fetchall()
        cur = con.execute(COUNT)  # its known number is taken: not charged ahead, then charged
        assert len(cur.fetchall()) == 1 and cur.privacy.epsilon == 1
        assert isinstance(seen[-1], ca.PendingCharge) and seen[-1].work.abandoned
        assert _rows(con) == 3 and con.ledger.remaining("default") == 2
    finally:
        other.close()


def test_a_budget_spent_meanwhile_refuses_with_nothing_spent_or_released(db, monkeypatch):
    path, con = db
    other = _connect(path)
    try:
        con.execute(COUNT).fetchall()  # 1 of 5
        other.execute("SELECT count(*) FROM p WITH EPSILON 4").fetchall()  # the rest
        seen = _spy(monkeypatch)
        with pytest.raises(BudgetExceededError, match="nothing was spent"):
            con.execute(COUNT)  # known: 4 left; the number is taken; the reading path refuses
        assert seen[-1].work.abandoned
        assert _rows(con) == 2 and con.ledger.remaining("default") == 0
        assert con.privacy is None or con.privacy.epsilon == 1  # the earlier release's
    finally:
        other.close()


def _failing_charge(monkeypatch, started: threading.Event, times: int = 10**9):
    """The known charge fails (nothing written) once the read has started, ``times`` times;
    then it charges."""
    real, calls = Ledger._charge_on, []

    def fail(self, cur, *a):
        calls.append(1)
        if len(calls) > times:
            return real(self, cur, *a)
        started.wait(30)
        return None
    monkeypatch.setattr(Ledger, "_charge_on", fail)


def test_a_charge_that_fails_interrupts_the_read_under_way(db, monkeypatch):
    _, con = db
    con.execute(COUNT).fetchall()
    started, attempts = threading.Event(), []
    _failing_charge(monkeypatch, started, times=1)  # then the release run again charges

    def release(charge_fn):
        attempts.append("started")
        if len(attempts) == 1:
            try:
                with reading(con._duck):
                    started.set()
                    con._duck.execute(LONG).fetchall()
            except Abandoned:
                attempts.append("abandoned")
                raise
            attempts.append("read to its end")
        return charge_fn()

    with con._cancel.statement():
        charge = ca.charged_release(con, Fraction(1), "SELECT …", "test", release)
    assert attempts == ["started", "abandoned", "started"]
    assert charge.epsilon == 1 and _rows(con) == 2  # charged once, by the release run again


def test_a_cancel_during_the_read_is_the_outcome_charged_as_it_went(db):
    _, con = db
    con.execute(COUNT).fetchall()

    def release(charge_fn):
        timer = threading.Timer(0.3, con.cancel)
        timer.start()
        try:
            with reading(con._duck):
                con._duck.execute(LONG).fetchall()
        finally:
            timer.cancel()
        return charge_fn()

    with pytest.raises(StatementCancelled), con._cancel.statement():
        ca.charged_release(con, Fraction(1), "SELECT …", "test", release)
    assert _rows(con) == 2  # the charge ran beside the read: it stands, written once


def test_a_failure_of_the_read_waits_for_the_charge_and_is_the_statements(db):
    _, con = db
    con.execute(COUNT).fetchall()

    def release(charge_fn):
        raise ZeroDivisionError("the read failed")

    with pytest.raises(ZeroDivisionError):
        ca.charged_release(con, Fraction(1), "SELECT …", "test", release)
    assert _rows(con) == 2  # charged (as when the charge came first), once


def test_a_release_that_never_asks_for_its_charge_is_not_served_uncharged(db, monkeypatch):
    _, con = db
    con.execute(COUNT).fetchall()
    started = threading.Event()
    started.set()
    _failing_charge(monkeypatch, started)  # the known path fails every time: the reading path
    calls = []

    def release(charge_fn):  # returns without asking for its charge
        calls.append(len(calls))
        return "answer"

    assert ca.charged_release(con, Fraction(1), "SELECT …", "test", release) == "answer"
    assert calls == [0, 1]  # the first answer, uncharged, was dropped; the second is charged
    assert _rows(con) == 2


def test_a_process_that_charged_ahead_exits_cleanly(tmp_path):
    """The charges' thread holds no connection between charges and is stopped at exit: no
    DuckDB object is torn down in it while the interpreter finalizes (which aborts)."""
    import subprocess
    import sys
    code = (
        "import provsql_dp\n"
        f"con = provsql_dp.connect({str(tmp_path / 'x.duckdb')!r})\n"
        "con.execute('CREATE TABLE p(id INT PRIMARY KEY, x DOUBLE); PROTECT TABLE p')\n"
        "con.execute('INSERT INTO p SELECT i, i FROM range(100) t(i)')\n"
        "con.execute('SET PRIVACY BUDGET 5')\n"
        "for _ in range(3):\n"
        "    con.execute('SELECT count(*) FROM p WITH EPSILON 1').fetchall()\n"
        "from provsql_dp.privacy import charge_ahead\n"
        "assert charge_ahead._CHARGER._thread is not None\n"
        "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
    assert "terminate" not in out.stderr


def test_the_charges_thread_takes_one_charge_at_a_time_and_stops():
    worker, go, ran = ca._Charger(), threading.Event(), []
    assert worker.submit(lambda: (go.wait(30), ran.append(1)))
    assert not worker.submit(lambda: ran.append(2))  # busy: the statement charges first itself
    go.set()
    for _ in range(3000):
        if worker.submit(lambda: ran.append(3)):
            break
        threading.Event().wait(0.01)
    worker.stop(5.0)
    assert ran == [1, 3] and worker._ended.is_set()
