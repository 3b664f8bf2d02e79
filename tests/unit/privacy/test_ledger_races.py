"""The ledger under random interleavings: whatever races with a charge — other threads charging
through the same or other ledgers, a budget raised or lowered, an interrupt inside the charge —
every user's ``spent`` is the sum of the user's ledger rows (ε or ρ, and δ), never above the
total, on the path that reads the budget row and on the known-budget path
(:meth:`Ledger._charge_known`) alike; and each refusal or fallback of the known-budget path
spends nothing itself.

A budget row deleted is a reset of that user's spending (what was spent is forgotten with it),
so it is tested apart: DuckDB 2.0 detects no conflict between deleting a row and updating it, in
either order (an UPDATE of a row deleted meanwhile counts it as updated), so a charge racing a
deletion is one made before it, on either path; a row created again is never charged from what
was known of the deleted one unless it holds exactly those values."""

from __future__ import annotations

import random
import subprocess
import sys
import threading
from fractions import Fraction

import duckdb
import pytest

from provsql_dp.errors import BudgetExceededError, DeclarationError, OperationalError, ProgrammingError
from provsql_dp.privacy.accounting import Cost
from provsql_dp.privacy._ledger_rows import STATE_SQL, spending
from provsql_dp.privacy.ledger import Ledger

S = "_provsql_dp"
#: (user, unit, total, total δ, the costs its charges draw from)
USERS = [
    ("eps", "epsilon", "3", None, [Cost(epsilon=Fraction(1, 20)), Cost(epsilon=Fraction(1, 7))]),
    ("ed", "epsilon-delta", "3", "1/1000",
     [Cost(epsilon=Fraction(1, 20), delta=Fraction(1, 100000)), Cost(epsilon=Fraction(1, 9))]),
    ("zed", "rho", "1/2", None, [Cost(rho=Fraction(1, 200)), Cost(epsilon=Fraction(1, 10))]),
]


class _Interrupting:
    """A cursor that raises KeyboardInterrupt before or after a random statement."""

    def __init__(self, cur, rng, lock):
        self._cur, self._rng, self._lock = cur, rng, lock

    def _roll(self) -> bool:
        with self._lock:
            return self._rng.random() < 0.04

    def execute(self, sql, params=None):
        if self._roll():
            raise KeyboardInterrupt
        out = self._cur.execute(sql, params) if params is not None else self._cur.execute(sql)
        if self._roll():
            raise KeyboardInterrupt  # after the statement (after the COMMIT, say)
        return out

    def close(self):
        self._cur.close()


def _consistent(con) -> None:
    """Each user's spent (ε or ρ, and δ: the budget row's folded spending and the rows after its
    fold, as every reader reads it) is exactly the sum of the user's ledger rows, and within the
    total; the user's charge numbers are 1, 2, … without a gap."""
    states = spending(con.execute(STATE_SQL).fetchall())
    for user, _unit, _t, _td, _costs in USERS:
        rows = con.execute(f"SELECT epsilon, delta, charge_no FROM {S}.ledger WHERE user_name = ?",
                           [user]).fetchall()
        st = states[user]
        total, total_d = Fraction(st.total), Fraction(st.total_delta)
        assert st.spent == sum((Fraction(e) for e, _, _ in rows), Fraction(0)), user
        assert st.spent_delta == sum((Fraction(d) for _, d, _ in rows), Fraction(0)), user
        assert st.spent <= total and st.spent_delta <= total_d, user
        assert sorted(n for _, _, n in rows) == list(range(1, len(rows) + 1)), user


@pytest.mark.parametrize("known_path", [False, True], ids=["reading-path", "known-path"])
def test_random_interleavings_keep_spent_equal_to_the_ledger(tmp_path, known_path):
    path = str(tmp_path / "stress.duckdb")
    con = duckdb.connect(path)
    ledgers = [Ledger(con) for _ in range(3)] + [Ledger(duckdb.connect(path))]
    for user, unit, total, total_d, _costs in USERS:
        ledgers[0].set_budget(user, total, unit=unit, delta=total_d)
    rng, rng_lock = random.Random(1729), threading.Lock()
    outcomes = {"ok": 0, "refused": 0, "interrupted": 0, "contention": 0}
    count_lock = threading.Lock()
    with pytest.MonkeyPatch.context() as m:
        if not known_path:
            m.setattr(Ledger, "_charge_known", lambda *a: None)
        real_cursor = Ledger._charger_cursor
        m.setattr(Ledger, "_charger_cursor",
                  lambda self: _Interrupting(real_cursor(self), rng, rng_lock))

        def charger(led, seed):
            r = random.Random(seed)
            for _ in range(40):
                user, _u, _t, _td, costs = r.choice(USERS)
                try:
                    led.charge(user, None, "stress", "test", cost=r.choice(costs))
                    what = "ok"
                except (BudgetExceededError, ProgrammingError):
                    what = "refused"
                except KeyboardInterrupt:
                    what = "interrupted"
                except OperationalError:
                    what = "contention"
                with count_lock:
                    outcomes[what] += 1

        def curator(seed):
            r = random.Random(seed)
            for _ in range(12):
                user, unit, total, total_d, _costs = r.choice(USERS)
                new = Fraction(total) * Fraction(r.choice([1, 2, 4]), 2)
                try:  # raised, or lowered (refused below what was spent)
                    ledgers[-1].set_budget(user, new, unit=unit, delta=total_d)
                except Exception:  # noqa: BLE001 - below spending, or contention: unchanged
                    pass

        threads = [threading.Thread(target=charger, args=(led, i))
                   for i, led in enumerate([ledgers[0]] * 3 + ledgers[1:])]
        threads.append(threading.Thread(target=curator, args=(99,)))
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert outcomes["ok"] > 20 and sum(outcomes.values()) == 6 * 40, outcomes
    _consistent(con)


def test_two_processes_taking_turns_keep_spent_equal_to_the_ledger(tmp_path):
    """DuckDB lets one process write a file at a time: two processes open it in turn, each
    charging several times (the first charge of an opening reads the row, the next ones take
    the known-budget path), for the three units; spent is the sum of the ledger's rows."""
    path = str(tmp_path / "turns.duckdb")
    con = duckdb.connect(path)
    led = Ledger(con)
    for user, unit, total, total_d, _costs in USERS:
        led.set_budget(user, total, unit=unit, delta=total_d)
    con.close()
    code = (
        "import sys, time, duckdb\n"
        "from fractions import Fraction\n"
        "from provsql_dp.privacy.accounting import Cost\n"
        "from provsql_dp.privacy.ledger import Ledger\n"
        "costs = [Cost(epsilon=Fraction(1, 50)), "
        "Cost(epsilon=Fraction(1, 50), delta=Fraction(1, 10**6)), Cost(rho=Fraction(1, 500))]\n"
        "users = ['eps', 'ed', 'zed']\n"
        "done = 0\n"
        "while done < 4:\n"
        "    try:\n"
        f"        con = duckdb.connect({path!r})\n"
        "    except duckdb.IOException:\n"
        "        time.sleep(0.01); continue\n"
        "    led = Ledger(con)\n"
        "    for i in range(9):\n"
        "        led.charge(users[i % 3], None, 'turns', 'test', cost=costs[i % 3])\n"
        "    con.close(); done += 1; time.sleep(0.005)\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    for p in procs:
        assert p.wait(timeout=300) == 0, p.stderr.read()
    con = duckdb.connect(path)
    assert con.execute(f"SELECT count(*) FROM {S}.ledger WHERE mechanism = 'test'").fetchone() == (
        2 * 4 * 9,)
    _consistent(con)
    assert Ledger(con).budget("ed") == (3, Fraction(12, 25))


def _spy(m, seen: list) -> None:
    real = Ledger._charge_known

    def spy(self, *a):
        seen.append(real(self, *a))
        return seen[-1]

    m.setattr(Ledger, "_charge_known", spy)


@pytest.mark.parametrize("unit, delta, cost, debited", [
    ("epsilon-delta", "1/1000", Cost(epsilon=Fraction(1, 10), delta=Fraction(1, 10**5)),
     (Fraction(1, 10), Fraction(1, 10**5))),
    ("rho", None, Cost(rho=Fraction(1, 100)), (Fraction(1, 100), Fraction(0))),
    ("rho", None, Cost(epsilon=Fraction(1, 10)), (Fraction(1, 200), Fraction(0))),
])
def test_budgets_in_delta_and_rho_take_the_known_budget_path(unit, delta, cost, debited):
    led = Ledger(duckdb.connect())
    led.set_budget("u", "1", unit=unit, delta=delta)
    seen = []
    with pytest.MonkeyPatch.context() as m:
        _spy(m, seen)
        charges = [led.charge("u", None, f"q{i}", "test", cost=cost) for i in range(3)]
    assert [c is not None for c in seen] == [False, True, True]
    assert [(c.epsilon, c.delta, c.unit) for c in charges] == [(*debited, unit)] * 3
    assert charges[-1].remaining == 1 - 3 * debited[0]
    assert [(c.id, c.statement, c.unit, c.delta) for c in led.entries("u")] == [
        (c.id, c.statement, unit, debited[1]) for c in charges]
    assert led.account("u")[2:] == (3 * debited[0], Fraction(delta or 0), 3 * debited[1])


def _state(led):
    return led.accounts(), [(c.id, c.epsilon, c.delta) for c in led.entries()]


def test_each_fallback_of_the_known_budget_path_spends_nothing_of_its_own():
    """The known row exhausted, its unit unable to pay the cost, its δ exhausted, the row
    changed or deleted behind its back: the known-budget path writes nothing and the reading
    path decides (refusing with the row it read, or charging it)."""
    con = duckdb.connect()
    led, other = Ledger(con), Ledger(con)
    led.set_budget("u", "1", unit="epsilon-delta", delta="1/1000")
    led.charge("u", None, "a", "test", cost=Cost(epsilon=Fraction(1, 2), delta=Fraction(1, 2000)))
    seen = []
    with pytest.MonkeyPatch.context() as m:
        _spy(m, seen)
        cases = [  # (the cost, the error the reading path refuses with)
            (Cost(epsilon=Fraction(3, 4), delta=Fraction(1, 10**6)), BudgetExceededError),  # ε
            (Cost(epsilon=Fraction(1, 10), delta=Fraction(1, 1000)), BudgetExceededError),  # δ
            (Cost(rho=Fraction(1, 10)), ProgrammingError),  # a ρ cost on an (ε, δ) budget
        ]
        for cost, error in cases:
            before = _state(led)
            with pytest.raises(error):
                led.charge("u", None, "x", "test", cost=cost)
            assert _state(led) == before
        con.execute(f"UPDATE {S}.budget SET total = '2/1'")  # raised behind its back
        led.charge("u", None, "b", "test", cost=Cost(epsilon=Fraction(1, 10),
                                                     delta=Fraction(1, 10**6)))
        led.set_budget("p", "1")
        led.charge("p", "0.5", "p1", "test")
        other.set_budget("p", "5", unit="rho")  # now in ρ: the known pure-ε row cannot pay ρ
        rho = led.charge("p", None, "p2", "test", cost=Cost(rho=Fraction(1, 10)))
        con.execute(f"DELETE FROM {S}.budget WHERE user_name = 'u'")
        before = _state(led)
        with pytest.raises(BudgetExceededError, match="no privacy budget is set"):
            led.charge("u", None, "d", "test", cost=Cost(epsilon=Fraction(1, 10)))
        assert _state(led) == before
        other.set_budget("u", "1", unit="epsilon-delta", delta="1/1000")  # created again
        again = led.charge("u", None, "e", "test", cost=Cost(epsilon=Fraction(1, 10),
                                                               delta=Fraction(1, 10**6)))
    # the refusals were decided by the reading path; each change behind its back too
    assert seen == [None] * 8  # p1: nothing known of p yet
    assert rho.unit == "rho" and rho.epsilon == Fraction(1, 10)
    assert again.remaining == Fraction(9, 10) and led.account("u")[2:] == (
        Fraction(1, 10), Fraction(1, 1000), Fraction(1, 10**6))
    assert [c.statement for c in led.entries("u")] == ["a", "b", "e"]


def test_a_row_created_again_with_the_known_values_is_charged_as_it_stands():
    """A budget row deleted and created again (outside provsql_dp) holding exactly the values
    the ledger knows: the known-budget path charges it — the check it makes holds on the row
    that is there — and spent stays the sum of the rows charged since."""
    con = duckdb.connect()
    led = Ledger(con)
    led.set_budget("u", "1")
    led.charge("u", "0.25", "a", "test")
    row = con.execute(f"SELECT * FROM {S}.budget").fetchone()
    con.execute(f"DELETE FROM {S}.budget; INSERT INTO {S}.budget VALUES "
                f"({', '.join('?' * len(row))})", list(row))
    seen = []
    with pytest.MonkeyPatch.context() as m:
        _spy(m, seen)
        led.charge("u", "0.5", "b", "test")
        with pytest.raises(BudgetExceededError, match="only 0.25 of 1 remains"):
            led.charge("u", "0.5", "c", "test")
    assert [s is not None for s in seen] == [True, False]
    assert led.budget("u") == (1, Fraction(3, 4))


@pytest.mark.parametrize("order", ["ABab", "ABba", "AaBb", "BAab", "BAba", "BbAa", "sAb"])
def test_duckdb_fails_the_second_of_two_inserts_of_one_key(tmp_path, order):
    """What the charge numbers rely on (ledger's docstring, claim 1), in DuckDB 2.0: of two
    transactions inserting one unique key, whatever the order of their inserts (A, B) and
    commits (a, b), exactly one commits; an insert of a key committed after the inserter's
    snapshot was taken (s) fails. Rows without a number (NULL) never conflict."""
    con = duckdb.connect(str(tmp_path / "keys.duckdb"))
    con.execute("CREATE TABLE l (id BIGINT PRIMARY KEY, u VARCHAR, n BIGINT)")
    con.execute("CREATE UNIQUE INDEX l_un ON l (u, n)")
    con.execute("INSERT INTO l VALUES (1, 'a', NULL), (2, 'a', NULL)")
    a, b = con.cursor(), con.cursor()
    for cur in (a, b):
        cur.execute("BEGIN")
    if order == "sAb":  # A's snapshot, then B's insert committed, then A's insert
        a.execute("SELECT count(*) FROM l").fetchall()
        b.execute("INSERT INTO l VALUES (11, 'a', 5)")
        b.execute("COMMIT")
        with pytest.raises(duckdb.ConstraintException):
            a.execute("INSERT INTO l VALUES (10, 'a', 5)")
        a.execute("ROLLBACK")
    else:
        steps = {"A": (a, "INSERT INTO l VALUES (10, 'a', 5)"),
                 "B": (b, "INSERT INTO l VALUES (11, 'a', 5)"), "a": (a, "COMMIT"),
                 "b": (b, "COMMIT")}
        failed = []
        for step in order:
            cur, sql = steps[step]
            if step.upper() in failed:  # its insert failed and was rolled back
                continue
            try:
                cur.execute(sql)
            except (duckdb.TransactionException, duckdb.ConstraintException):
                failed.append(step)
                if step in "AB":
                    cur.execute("ROLLBACK")
        assert len(failed) == 1, failed
    assert con.execute("SELECT count(*) FROM l WHERE n = 5").fetchone() == (1,)


@pytest.mark.parametrize("with_key", [True, False], ids=["with-the-key", "without-the-key"])
def test_a_total_lowered_while_a_known_charge_commits(tmp_path, with_key):
    """The race the charge number closes: ``SET PRIVACY BUDGET`` lowers a total (its check
    reads spent = 1/2) while a known-budget charge of 2/5 commits (its check reads the old
    total 1). With the unique key the budget change takes the same number, its commit fails,
    and its retry sees 9/10 spent and refuses. Without it both commit with one number, the
    change's fold hides the charge (spent reads 1/2 while the rows sum to 9/10 > 3/5): the
    invariant fails, so the key is what makes the one-INSERT charge safe."""
    con = duckdb.connect(str(tmp_path / "lowered.duckdb"))
    analyst, curator = Ledger(con), Ledger(duckdb.connect(str(tmp_path / "lowered.duckdb")))
    analyst.set_budget("u", "1")
    analyst.charge("u", "1/2", "a", "test")  # the reading path: the budget is now known
    if not with_key:
        con.execute(f"DROP INDEX {S}.ledger_charge_no")
    seen, raced = [], []

    def body_then_charge(body, what):
        def racing(cur):
            out = body(cur)
            if not raced:  # once, between the budget change's writes and its COMMIT
                raced.append(analyst.charge("u", "2/5", "b", "test"))
            return out
        return Ledger._transaction(curator, racing, what)

    curator._transaction = body_then_charge
    with pytest.MonkeyPatch.context() as m:
        _spy(m, seen)
        try:
            curator.set_budget("u", "3/5")
        except DeclarationError as e:  # the refusal, with the key
            seen.append(e)
    assert seen[0] is not None  # the charge took the one-INSERT path
    if with_key:
        assert "already spent ε = 0.9" in str(seen[-1])
        assert analyst.budget("u") == (1, Fraction(9, 10))
        _consistent_one(con, "u")
    else:
        assert analyst.budget("u") == (Fraction(3, 5), Fraction(1, 2))
        with pytest.raises(AssertionError):
            _consistent_one(con, "u")


def _consistent_one(con, user) -> None:
    st = spending(con.execute(STATE_SQL).fetchall())[user]
    rows = con.execute(f"SELECT epsilon FROM {S}.ledger WHERE user_name = ?", [user]).fetchall()
    assert st.spent == sum(Fraction(e) for e, in rows) <= Fraction(st.total)
