"""``PUBLISH STREAM``'s sensitivity (``privacy/stream_sensitivity.py``): the planner's where it
derives one (the default, and a floor for ``SENSITIVITY s``); the curator's, recorded as
unchecked with the reason, where it derives none; refused when a protected table's query has
neither. A refusal spends nothing: the ledger and the stream's window account are unchanged."""

from __future__ import annotations

import pytest

import provsql_dp
from provsql_dp.errors import PrivacyError


@pytest.fixture
def con(tmp_path):
    con = provsql_dp.connect(str(tmp_path / "db.duckdb"))
    con.execute("SET PRIVACY BUDGET 100")
    con.execute("CREATE TABLE visits(id INT PRIMARY KEY, day INT, person INT, amount DOUBLE, "
                "bounded DOUBLE)")
    con.execute("INSERT INTO visits SELECT i, i % 5, i % 7, i * 1000, i % 10 FROM range(100) t(i)")
    con.execute("CREATE TABLE events(day INT, person INT)")
    con.execute("INSERT INTO events SELECT i % 5, i % 7 FROM range(100) t(i)")
    con.execute("CREATE TABLE pub(x INT); INSERT INTO pub VALUES (1)")
    con.execute("PROTECT TABLE visits; PROTECT TABLE events BY (person)")
    con.execute("SET BOUNDS ON visits (bounded) BETWEEN 0 AND 10")
    con.execute("CREATE STREAM s WINDOW 2 STEPS WITH EPSILON 50")
    yield con
    con.close()


def _publish(con, query, sensitivity=None, step=1):
    sens = f"SENSITIVITY {sensitivity} " if sensitivity is not None else ""
    row = con.execute(f"PUBLISH STREAM s STEP {step} {sens}WITH EPSILON 1 AS {query}").fetchone()
    last = con.execute("SHOW STREAMS s").fetchall()[-1]
    return row[4], last[3], last[4]  # the noise scale, the statistic run, the sensitivity


def _spent(con):
    return (con.execute("SELECT * FROM _provsql_dp.ledger ORDER BY id").fetchall(),
            con.execute("SELECT * FROM _provsql_dp.budget ORDER BY ALL").fetchall(),
            con.execute("SELECT * FROM _provsql_dp.delta_releases ORDER BY ALL").fetchall())


def test_a_derived_sensitivity_is_the_default(con):
    scale, _, basis = _publish(con, "SELECT count(*) FROM visits WHERE day = 1")
    assert scale == pytest.approx(1.0)
    assert basis == "1, derived (COUNT, at most 1 row per participant)"
    scale, statistic, basis = _publish(con, "SELECT sum(bounded) FROM visits")
    assert scale == pytest.approx(10.0)  # not 1: one participant moves the sum by up to 10
    assert basis == "10, derived (SUM clamped to [0, 10], at most 1 row per participant)"
    assert statistic == "SELECT SUM(bounded) FROM visits"  # the curator's text; run clamped
    scale, _, basis = _publish(con, "SELECT count(*) FROM visits", sensitivity=3)
    assert scale == pytest.approx(3.0) and basis.startswith("3, stated (the planner derives 1")


@pytest.mark.parametrize("query, stated, message", [
    ("SELECT sum(bounded) FROM visits", 1, r"SENSITIVITY 1 is below the sensitivity the planner "
                                          r"derives for the stream's query, 10 \(SUM clamped"),
    ("SELECT count(*) FROM visits", 0.5, r"SENSITIVITY 0.5 is below .* 1 \(COUNT"),
    ("SELECT sum(amount) FROM visits", None, r"derives no sensitivity .*no declared bounds.* "
                                             r"give SENSITIVITY s"),
    ("SELECT count(*) FROM visits a JOIN visits b ON a.person = b.person", None,
     r"derives no sensitivity .*joins protected rows"),
    ("SELECT count(*) FROM events", None, r"derives no sensitivity .*any number of the rows"),
])
def test_a_sensitivity_below_the_planners_or_missing_is_refused(con, query, stated, message):
    before = _spent(con)
    with pytest.raises(PrivacyError, match=message + ".*nothing was spent"):
        _publish(con, query, stated)
    assert _spent(con) == before


@pytest.mark.parametrize("query, stated, why", [
    ("SELECT sum(amount) FROM visits", 100000, "a SUM of a column with no declared bounds"),
    ("SELECT count(*) FROM events", 5, "a participant may own any number"),
    ("SELECT count(*) FROM visits a JOIN visits b ON a.person = b.person", 100, "it joins"),
])
def test_where_the_planner_derives_none_the_stated_one_is_kept_with_the_reason(con, query,
                                                                                stated, why):
    scale, _, basis = _publish(con, query, stated)
    assert scale == pytest.approx(stated)
    assert basis.startswith(f"{stated}, stated, not checked ({why}")


def test_a_query_of_public_tables_keeps_the_default(con):
    scale, _, basis = _publish(con, "SELECT count(*) FROM pub")
    assert scale == pytest.approx(1.0) and basis == "1, the default (it reads no protected table)"


def test_a_sum_whose_bounds_straddle_zero_hides_a_replaced_row(con):
    """The stream's neighbour may replace one participant's rows of a step (Theorem 2: an
    entity's data differ within δ steps), not only add or remove them: a SUM clamped to [-5, 10]
    moves by 15, not by the add/remove 10 (h104 leftover 5)."""
    con.execute("DROP BOUNDS ON visits (bounded); SET BOUNDS ON visits (bounded) BETWEEN -5 AND 10")
    scale, _, basis = _publish(con, "SELECT sum(bounded) FROM visits WHERE day = 1")
    assert scale == pytest.approx(15.0)
    assert basis == ("15, derived (SUM clamped to [-5, 10], at most 1 row per participant, which "
                     "the stream's neighbour may replace: 1 × (10 − (-5)))")
    before = _spent(con)
    with pytest.raises(PrivacyError, match=r"SENSITIVITY 10 is below .* 15 \(SUM clamped"):
        _publish(con, "SELECT sum(bounded) FROM visits WHERE day = 2", sensitivity=10, step=2)
    assert _spent(con) == before
