"""``CREATE STREAM … ALLOCATE`` from SQL (papers/004 §7): the stream picks each step's ε by the
paper's offline and online algorithms, Theorem 2's windows hold exactly, refusals spend nothing."""

from fractions import Fraction

import numpy as np
import pytest

import provsql_dp
from provsql_dp.errors import DeclarationError, ProgrammingError
from provsql_dp.policies.delta import Publisher, allocate_offline, allocate_online, total_error
from provsql_dp.policies.delta.allocation import bernoulli_future, equal_split


def _con():
    con = provsql_dp.connect()
    con.execute("SET PRIVACY BUDGET 10")
    con.execute("CREATE TABLE visits(day INT, person INT)")
    con.execute("INSERT INTO visits SELECT range % 12 + 1, range FROM range(600)")
    return con


def _windows(spent: dict, delta: int) -> list[Fraction]:
    lo, hi = min(spent), max(spent)
    return [sum((spent.get(s, Fraction(0)) for s in range(a, a + delta)), Fraction(0))
            for a in range(lo - delta + 1, hi + 1)]


def test_offline_allocation_is_problem_1_s_optimum_and_every_window_holds():
    con = _con()
    w = [1, 0, 2, 1, 1, 0, 0, 3, 1, 1, 2, 1]
    msg = con.execute("CREATE STREAM days WINDOW 3 STEPS WITH EPSILON 1 ALLOCATE OFFLINE "
                      f"WEIGHTS ({', '.join(map(str, w))})").fetchone()[0]
    assert "offline allocation over steps 1–12" in msg
    assert con.ledger.budget(con.user)[1] == 1  # charged once, at creation
    opt = allocate_offline(w, 3, 1.0)
    got = []
    for t in range(1, 13):
        sql = f"PUBLISH STREAM days STEP {t} AS SELECT count(*) FROM visits WHERE day = {t}"
        if w[t - 1] == 0:
            with pytest.raises(ProgrammingError, match="weight 0"):
                con.execute(sql)
            got.append(0.0)
            continue
        row = con.execute(sql).fetchone()
        assert row[:2] == ("days", t)
        got.append(float(Fraction(row[3])))
    assert np.allclose(got, opt, atol=3e-6)
    assert total_error(w, got) < total_error(w, equal_split(12, 3, 1.0))
    spent = Publisher(con, "days").spent()
    assert max(_windows(spent, 3)) <= 1  # exact arithmetic
    assert con.ledger.budget(con.user)[1] == 1  # releases draw on the window account only


def test_offline_refusals_spend_nothing():
    con = _con()
    con.execute("CREATE STREAM s WINDOW 2 STEPS WITH EPSILON 1 ALLOCATE OFFLINE WEIGHTS (1, 1)")
    before = Publisher(con, "s").spent()
    for sql, text in [
        ("PUBLISH STREAM s STEP 3 AS SELECT 1", "outside its plan"),
        ("PUBLISH STREAM s STEP 1 WITH EPSILON 0.1 AS SELECT 1", "drop WITH EPSILON"),
        ("PUBLISH STREAM s STEP 1 WEIGHT 2 AS SELECT 1", "WEIGHT applies to an online"),
    ]:
        with pytest.raises(ProgrammingError, match=text):
            con.execute(sql)
    assert Publisher(con, "s").spent() == before == {}
    con.execute("PUBLISH STREAM s STEP 1 AS SELECT 1")
    with pytest.raises(ProgrammingError, match="already published"):  # once per step
        con.execute("PUBLISH STREAM s STEP 1 AS SELECT 1")
    assert Publisher(con, "s").spent() == {1: Fraction(1, 2)}
    con.execute("PUBLISH STREAM s STEP 2 AS SELECT 1")  # its planned share is intact
    assert Publisher(con, "s").spent() == {1: Fraction(1, 2), 2: Fraction(1, 2)}


@pytest.mark.parametrize("clause, text", [
    ("ALLOCATE OFFLINE WEIGHTS (0, 0)", "every weight is 0"),
    ("ALLOCATE ONLINE HORIZON 5 PROBABILITY 1.5", "PROBABILITY must be in"),
    ("ALLOCATE ONLINE HORIZON 0 PROBABILITY 0.5", "the horizon must be"),
    ("ALLOCATE ONLINE HORIZON 51 PROBABILITY 0.5", "the horizon must be 1 to 50"),
    ("ALLOCATE OFFLINE WEIGHTS (" + ", ".join(["1"] * 1001) + ")", "1 to 1,000 weights"),
    ("ALLOCATE ONLINE HORIZON 5 PROBABILITY 0.5 SAMPLES 0", "SAMPLES must be"),
])
def test_a_refused_allocation_creates_and_charges_nothing(clause, text):
    con = _con()
    with pytest.raises(DeclarationError, match=text):
        con.execute(f"CREATE STREAM s WINDOW 2 STEPS WITH EPSILON 1 {clause}")
    assert con.ledger.budget(con.user)[1] == 0
    assert con.execute("SHOW STREAMS").fetchall() == []


def test_without_allocation_epsilon_is_required():
    con = _con()
    con.execute("CREATE STREAM s WINDOW 2 STEPS WITH EPSILON 1")
    with pytest.raises(ProgrammingError, match="has no allocation"):
        con.execute("PUBLISH STREAM s STEP 1 AS SELECT 1")
    with pytest.raises(ProgrammingError, match="WEIGHT applies to a stream created with"):
        con.execute("PUBLISH STREAM s STEP 1 WEIGHT 1 WITH EPSILON 0.5 AS SELECT 1")


def test_online_allocation_follows_the_paper_s_algorithm():
    con = _con()
    # p = 1: every future step has weight 1, so the sampled futures (and the decision) are fixed
    con.execute("CREATE STREAM h WINDOW 3 STEPS WITH EPSILON 1 ALLOCATE ONLINE HORIZON 9 "
                "PROBABILITY 1 SAMPLES 5")
    weights, committed = [], []
    for t, w in [(1, 1), (2, 3), (4, 1), (5, 2)]:
        weights += [0.0] * (t - 1 - len(weights)) + [float(w)]
        committed += [0.0] * (t - 1 - len(committed))
        expect = allocate_online(weights, committed, 3, 1.0, 9, bernoulli_future(1.0),
                                 n_samples=5)
        row = con.execute(f"PUBLISH STREAM h STEP {t} WEIGHT {w} AS "
                          f"SELECT count(*) FROM visits WHERE day = {t}").fetchone()
        eps = Fraction(row[3])
        assert eps.denominator in (1, 2, 4, 5, 10, 20, 25, 50, 100)  # a candidate ε·k/100
        assert float(eps) == pytest.approx(expect)
        committed.append(float(eps))
    spent = Publisher(con, "h").spent()
    assert max(_windows(spent, 3)) <= 1
    with pytest.raises(ProgrammingError, match="the next step is 6 or later"):
        con.execute("PUBLISH STREAM h STEP 3 AS SELECT 1")
    with pytest.raises(ProgrammingError, match="outside its plan"):
        con.execute("PUBLISH STREAM h STEP 10 AS SELECT 1")
    with pytest.raises(ProgrammingError, match="WEIGHT 0"):
        con.execute("PUBLISH STREAM h STEP 6 WEIGHT 0 AS SELECT 1")
    assert Publisher(con, "h").spent() == spent


def test_the_schedule_survives_a_reconnect(tmp_path):
    db = str(tmp_path / "s.duckdb")
    con = provsql_dp.connect(db)
    con.execute("SET PRIVACY BUDGET 5")
    con.execute("CREATE STREAM s WINDOW 2 STEPS WITH EPSILON 1 ALLOCATE OFFLINE WEIGHTS (1, 3)")
    con.close()
    con = provsql_dp.connect(db)
    row = con.execute("PUBLISH STREAM s STEP 2 AS SELECT 7").fetchone()
    assert Fraction(row[3]) == Fraction(round(allocate_offline([1, 3], 2, 1.0)[1] * 10**6),
                                        10**6)
