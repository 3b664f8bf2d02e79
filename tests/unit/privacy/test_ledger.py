"""The budget ledger: exact arithmetic, refusals that spend nothing, durability, concurrency."""

from __future__ import annotations

import subprocess
import sys
import threading
from fractions import Fraction

import duckdb
import pytest

import provsql_dp
from provsql_dp.errors import BudgetExceededError, DeclarationError, OperationalError
from provsql_dp.privacy.ledger import Ledger, format_eps, to_fraction


def _spy_known_charges(m: pytest.MonkeyPatch, known: list) -> None:
    """Record what each ``Ledger._charge_known`` returned (None: it fell back to reading)."""
    real = Ledger._charge_known

    def spy(self, *a):
        known.append(real(self, *a))
        return known[-1]

    m.setattr(Ledger, "_charge_known", spy)


def test_thousand_thousandths_make_exactly_one():
    led = Ledger(duckdb.connect())
    led.set_budget("u", 1.0)
    for _ in range(1000):
        led.charge("u", 0.001, None, "test")
    assert led.remaining("u") == 0
    assert sum(c.epsilon for c in led.entries("u")) == 1
    with pytest.raises(BudgetExceededError):
        led.charge("u", Fraction(1, 10**12), None, "test")


def test_refused_charge_spends_nothing_and_records_nothing():
    led = Ledger(duckdb.connect())
    led.set_budget("u", "0.5")
    led.charge("u", "0.3", "q1", "test")
    before = (led.budget("u"), len(led.entries()))
    with pytest.raises(BudgetExceededError, match="only 0.2 of 0.5 remains; nothing was spent"):
        led.charge("u", "0.3", "q2", "test")
    assert (led.budget("u"), len(led.entries())) == before


def test_no_budget_means_no_release():
    led = Ledger(duckdb.connect())
    with pytest.raises(BudgetExceededError, match="no privacy budget is set for user 'bob'"):
        led.charge("bob", 0.1, None, "test")
    assert led.entries() == []


@pytest.mark.parametrize("bad", [0, -1, "x", None, True])
def test_bad_epsilons_are_refused(bad):
    led = Ledger(duckdb.connect())
    led.set_budget("u", 1)
    with pytest.raises((ValueError, DeclarationError)):
        led.charge("u", bad, None, "test")
    assert led.remaining("u") == 1


def test_budget_cannot_drop_below_spending():
    led = Ledger(duckdb.connect())
    led.set_budget("u", 1)
    led.charge("u", "0.75", None, "test")
    with pytest.raises(DeclarationError, match="already spent"):
        led.set_budget("u", "0.5")
    led.set_budget("u", 2)
    assert led.remaining("u") == Fraction(5, 4)


def test_exact_values_and_rendering():
    assert to_fraction(0.1) == Fraction(1, 10)
    assert to_fraction("2.5e-3") == Fraction(1, 400)
    assert format_eps(Fraction(1, 400)) == "0.0025"
    assert format_eps(Fraction(1, 3)) == "1/3"


def test_ledger_survives_reconnect(tmp_path):
    path = str(tmp_path / "db.duckdb")
    con = provsql_dp.connect(path)
    con.execute("CREATE TABLE t(a INT); PROTECT TABLE t BY (a); SET PRIVACY BUDGET 3 FOR USER 'ann'")
    con._ledger.charge("ann", "0.25", "q", "test")
    con.close()
    con = provsql_dp.connect(path)
    assert con.ledger.remaining("ann") == Fraction(11, 4)
    assert [p.table for p in con.protected()] == ["t"]
    assert [(c.user, c.epsilon, c.statement) for c in con.ledger.entries()] == [
        ("ann", Fraction(1, 4), "q")
    ]


def test_threads_racing_never_overspend(tmp_path):
    """Eight connections charge concurrently; exactly the budget is spent, never more."""
    path = str(tmp_path / "race.duckdb")
    setup = provsql_dp.connect(path)
    setup.execute("SET PRIVACY BUDGET 1 FOR USER 'u'")
    cons = [provsql_dp.connect(path, user="u") for _ in range(8)]
    ok, refused = [], []
    lock = threading.Lock()

    def spend(con):
        for _ in range(6):
            try:
                con._ledger.charge("u", "0.05", None, "race")
                with lock:
                    ok.append(1)
            except BudgetExceededError:
                with lock:
                    refused.append(1)

    threads = [threading.Thread(target=spend, args=(c,)) for c in cons]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ok) == 20 and len(refused) == 28
    assert setup.ledger.remaining("u") == 0
    assert len(setup.ledger.entries("u")) == 20


def test_one_ledger_shared_by_racing_threads_never_overspends(tmp_path):
    """The known-budget charge runs on a connection the ledger keeps (one thread at a time: the
    others take the reading path on connections of their own); with eight threads charging
    through one ledger and two more ledgers racing, exactly the budget is spent."""
    path = str(tmp_path / "shared.duckdb")
    con = duckdb.connect(path)
    shared, rivals = Ledger(con), [Ledger(con) for _ in range(2)]
    shared.set_budget("u", "1")
    ok, refused = [], []
    lock = threading.Lock()

    def spend(led):
        for _ in range(8):
            try:
                led.charge("u", "0.025", None, "race")
                with lock:
                    ok.append(1)
            except BudgetExceededError:
                with lock:
                    refused.append(1)

    threads = [threading.Thread(target=spend, args=(led,)) for led in [shared] * 8 + rivals]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ok) == 40 and len(refused) == 10 * 8 - 40
    assert shared.remaining("u") == 0 and len(shared.entries("u")) == 40
    assert sum(c.epsilon for c in shared.entries("u")) == 1


def test_the_kept_charge_connection_is_reused_and_closed_with_its_parent(tmp_path):
    path = str(tmp_path / "kept.duckdb")
    con = duckdb.connect(path)
    led = Ledger(con)
    led.set_budget("u", "1")
    for _ in range(3):
        led.charge("u", "0.1", None, "test")
    kept = led._charger
    assert kept is not None
    led.charge("u", "0.1", None, "test")
    assert led._charger is kept and led.budget("u") == (1, Fraction(2, 5))
    con.close()  # DuckDB closes the cursors of a connection with it: nothing holds the file
    with pytest.raises(duckdb.ConnectionException):
        kept.execute("SELECT 1")
    other = duckdb.connect(path)
    assert other.execute("SELECT count(*) FROM _provsql_dp.ledger WHERE mechanism = 'test'"
                         ).fetchone() == (4,)


def test_second_process_gets_a_clear_error(tmp_path):
    path = str(tmp_path / "locked.duckdb")
    con = provsql_dp.connect(path)
    con.execute("SET PRIVACY BUDGET 1")
    code = (
        "import provsql_dp, sys\n"
        "try:\n"
        f"    provsql_dp.connect({path!r})\n"
        "except provsql_dp.OperationalError as e:\n"
        "    print('refused:', e); sys.exit(3)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 3, out.stderr
    assert "one process write a database file at a time" in out.stdout
    assert con.ledger.remaining("default") == 1


def test_read_only_connection_cannot_charge(tmp_path):
    path = str(tmp_path / "ro.duckdb")
    con = provsql_dp.connect(path)
    con.execute("SET PRIVACY BUDGET 1")
    con.close()
    ro = provsql_dp.connect(path, read_only=True)
    with pytest.raises(OperationalError, match="read-only"):
        ro._ledger.charge("default", "0.1", None, "test")
    assert ro.ledger.remaining("default") == 1


def test_a_known_budget_row_is_verified_not_trusted():
    """After a charge the ledger remembers (total, spent) and skips the SELECT; when another
    connection changed the row (a charge, a new total) the remembered values no longer match
    and the charge reads the row: the accounting stays exact either way."""
    con = duckdb.connect()
    mine, other = Ledger(con), Ledger(con)
    mine.set_budget("u", "1")
    known = []
    with pytest.MonkeyPatch.context() as m:
        _spy_known_charges(m, known)
        mine.charge("u", "0.1", "a", "test")  # nothing known yet: reads the row
        mine.charge("u", "0.1", "b", "test")  # known: one UPDATE checks and writes
        other.charge("u", "0.3", "c", "test")  # behind mine's back
        mine.charge("u", "0.1", "d", "test")  # known values stale: falls back, reads
        other.set_budget("u", "0.7")
        with pytest.raises(BudgetExceededError):  # remembers total 1: must read the new 0.7
            mine.charge("u", "0.2", "e", "test")
        mine.charge("u", "0.1", "f", "test")
    assert [k is not None for k in known] == [False, True, False, False, False, False]
    assert mine.budget("u") == (Fraction(7, 10), Fraction(7, 10))
    assert [c.statement for c in mine.entries("u")] == ["a", "b", "c", "d", "f"]
    assert sum(c.epsilon for c in mine.entries("u")) == Fraction(7, 10)


def test_a_missing_directory_is_not_called_a_lock(tmp_path):
    with pytest.raises(provsql_dp.OperationalError) as err:
        provsql_dp.connect(str(tmp_path / "no_such_dir" / "x.duckdb"))
    assert "directory must exist" in str(err.value)
    assert "one process write" not in str(err.value)


def test_the_known_budget_charge_runs_under_a_locked_configuration():
    """Guard rails lock DuckDB's configuration (analysts' connections): the kept connection
    cannot turn its optimizer off, and charges on it all the same."""
    con = duckdb.connect()
    led = Ledger(con)
    led.set_budget("u", "1")
    con.execute("SET lock_configuration = true")
    known = []
    with pytest.MonkeyPatch.context() as m:
        _spy_known_charges(m, known)
        for _ in range(3):
            led.charge("u", "0.25", None, "test")
    assert [k is not None for k in known] == [False, True, True]
    assert led.budget("u") == (1, Fraction(3, 4)) and len(led.entries("u")) == 3


def test_an_interrupted_known_budget_charge_leaves_no_transaction_open():
    """A KeyboardInterrupt between the budget row's update and the commit: the kept connection
    is rolled back and dropped, so the row is not held and nothing was charged."""
    con = duckdb.connect()
    led, other = Ledger(con), Ledger(con)
    led.set_budget("u", "1")
    led.charge("u", "0.1", None, "test")
    real = led._charge_on

    def interrupted(cur, *a):
        class Cur:
            def execute(self, sql, params=None):
                if sql.startswith("INSERT"):
                    raise KeyboardInterrupt
                return cur.execute(sql, params) if params is not None else cur.execute(sql)

            def close(self):
                cur.close()
        return real(Cur(), *a)

    led._charge_on = interrupted
    with pytest.raises(KeyboardInterrupt):
        led.charge("u", "0.1", None, "test")
    assert led._charger is None
    del led._charge_on
    other.charge("u", "0.2", None, "test")  # the row is free: no conflict with a held update
    led.charge("u", "0.1", None, "test")
    assert led.budget("u") == (1, Fraction(2, 5)) and len(led.entries("u")) == 3


def test_entries_last_reads_the_newest_charge_only():
    led = Ledger(duckdb.connect())
    led.set_budget("ann", "10")
    for eps in ("0.1", "0.2", "0.3"):
        led.charge("ann", eps, "SELECT …", "test")
    assert [c.epsilon for c in led.entries("ann", last=True)] == [Fraction(3, 10)]
    assert [c.epsilon for c in led.entries("ann")] == [Fraction(1, 10), Fraction(2, 10),
                                                        Fraction(3, 10)]
