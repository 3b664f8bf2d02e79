"""Count constraints from SQL (papers/002 §8): ``CREATE POLICY … KNOWN COUNTS …``, the
constrained histogram release, EXPLAIN PRIVACY, persistence and the refusals."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import provsql_dp
from provsql_dp.errors import ProgrammingError, UnsupportedQueryError

AGES = [3, 3, 7, 12, 12, 12, 25, 31, 31, 38]
STATES = ["CA", "NY", "CA", "CA", "WA", "NY", "CA", "WA", "WA", "CA"]


def _con(path=":memory:", budget="1000"):
    con = provsql_dp.connect(path)
    con.execute("CREATE TABLE people (id INTEGER PRIMARY KEY, age INTEGER, state VARCHAR)")
    con.execute("INSERT INTO people VALUES " + ", ".join(
        f"({i}, {a}, '{s}')" for i, (a, s) in enumerate(zip(AGES, STATES))))
    con.execute("PROTECT TABLE people")
    con.execute(f"SET PRIVACY BUDGET {budget}")
    return con


def test_known_marginal_histogram_keeps_the_marginal_and_has_its_sensitivity(tmp_path):
    path = str(tmp_path / "db.duckdb")
    con = _con(path)
    msg = con.execute("CREATE POLICY s ON people (age, state) AS FULL DOMAIN [0, 40) WIDTH 10, "
                      "('CA', 'NY', 'WA') BOUNDED KNOWN COUNTS BY (state)").fetchall()[0][0]
    assert "known counts BY (state)" in msg and "histogram sensitivity 6" in msg
    con.close()
    con = provsql_dp.connect(path)  # the declaration persists
    con._rng = np.random.default_rng(5)
    cur = con.execute("SELECT age, state, COUNT(*) FROM people GROUP BY age, state "
                      "WITH EPSILON 0.5 OPTIONS (raw = true)")  # raw: no rounding after projection
    rows = cur.fetchall()
    assert len(rows) == 12
    p = cur.privacy
    assert p.epsilon == Fraction(1, 2) and p.strategy.startswith("laplace on every cell, sensitivity 6")
    for st in ("CA", "NY", "WA"):  # the released cells keep the known marginal exactly
        assert sum(r[2] for r in rows if r[1] == st) == pytest.approx(STATES.count(st), abs=1e-6)
    # the variance: 2·(6/0.5)²·(1 − 1/4) per cell (4 ages per state)
    assert p.releases[0].variance == pytest.approx(2 * 12 ** 2 * 0.75, rel=1e-5)
    ex = con.execute("EXPLAIN PRIVACY SELECT age, state, COUNT(*) FROM people GROUP BY age, state "
                     "WITH EPSILON 0.5").fetchall()[0]
    assert ex[2].startswith("laplace on every cell, sensitivity 6")
    assert ex[5] == pytest.approx(np.sqrt(2 * 12 ** 2 * 0.75), rel=1e-5)


def test_known_groups_of_one_column_and_the_total():
    con = _con(budget="1e7")
    con.execute("CREATE POLICY a ON people (age) AS LINE DOMAIN [0, 40) WIDTH 10 "
                "KNOWN COUNTS ((0, 10), (20, 30))")
    con._rng = np.random.default_rng(2)
    rows = con.execute("SELECT age, COUNT(*) FROM people GROUP BY age WITH EPSILON 1 "
                       "OPTIONS (raw = true)").fetchall()
    assert rows[0][1] + rows[1][1] == pytest.approx(6) and rows[2][1] + rows[3][1] == pytest.approx(4)
    assert "sensitivity 4" in con.execute("SHOW POLICIES").fetchall()[0][8]
    con.execute("DROP POLICY a")
    con.execute("CREATE POLICY t ON people (age) AS FULL DOMAIN [0, 40) WIDTH 10 BOUNDED "
                "KNOWN COUNTS TOTAL")
    assert "sensitivity 2" in con.execute("SHOW POLICIES").fetchall()[0][8]
    big = con.execute("SELECT age, COUNT(*) FROM people GROUP BY age WITH EPSILON 1e6").fetchall()
    assert [round(r[1]) for r in big] == [3, 3, 1, 3]


def test_refusals_spend_nothing_and_store_nothing():
    con = _con(budget="1")
    con.execute("CREATE POLICY s ON people (age, state) AS FULL DOMAIN [0, 40) WIDTH 10, "
                "('CA', 'NY', 'WA') KNOWN COUNTS BY (state)")
    before = (con.ledger.budget(con.user), len(con.ledger.entries()),
              con.execute("SHOW POLICIES").fetchall())
    bad = [
        ("SELECT state, COUNT(*) FROM people GROUP BY state WITH EPSILON 0.1", "only the full histogram"),
        ("COUNT RANGES (age < 20) FROM people WITH EPSILON 0.1", "only the full histogram"),
        ("SELECT age, state, COUNT(*) FROM people GROUP BY age, state WITH EPSILON 0.1 "
         "OPTIONS (strategy = 'laplace')", "drop OPTIONS"),
        ("CREATE POLICY b ON people (age) AS LINE DOMAIN [0, 40) WIDTH 10 KNOWN COUNTS BY (age)",
         "publish the histogram itself"),
        ("CREATE POLICY b ON people (age) AS LINE DOMAIN [0, 40) WIDTH 10 "
         "KNOWN COUNTS ((0, 10), (10, 20))", "disjoint"),
        ("CREATE POLICY b ON people (age) AS LINE DOMAIN [0, 40) WIDTH 10 KNOWN COUNTS BY (x)",
         "column of the policy"),
        ("CREATE POLICY b ON people (age) AS LINE DOMAIN [0, 40) WIDTH 10 KNOWN TOTAL",
         "Expected COUNTS after KNOWN"),
    ]
    for sql, msg in bad:
        with pytest.raises((ProgrammingError, UnsupportedQueryError), match=msg):
            con.execute(sql)
        assert (con.ledger.budget(con.user), len(con.ledger.entries()),
                con.execute("SHOW POLICIES").fetchall()) == before, sql
