"""``EXPLAIN PRIVACY … DELTA δ`` / ``… WITH RHO ρ`` and the release agree on post-processing:
ORDER BY, LIMIT, HAVING and arithmetic over released aggregates are split off and compiled the
same way in both, so EXPLAIN accepts (with a ``post-processing`` row, ε 0) exactly what the
release accepts, and refuses with the release's error class what the release refuses (the
release's refusal charging nothing)."""

import numpy as np
import pytest

import provsql_dp
from provsql_dp.errors import Error


def _con(budget):
    con = provsql_dp.connect()
    con.execute("CREATE TABLE p(id INT PRIMARY KEY, k VARCHAR, age INT, city VARCHAR)")
    con.execute("INSERT INTO p SELECT range, ['a','b','c'][range % 3 + 1], range % 90, "
                "'c' || (range % 7) FROM range(3000)")
    con.execute("PROTECT TABLE p; SET GROUP KEYS ON p (k) VALUES ('a', 'b', 'c')")
    con.execute("SET BOUNDS ON p (age) BETWEEN 0 AND 100")
    con.execute(f"SET PRIVACY BUDGET {budget}")
    con._rng = np.random.default_rng(1)
    return con


_QUERIES = [
    "SELECT k, COUNT(*) AS n FROM p GROUP BY k ORDER BY n DESC LIMIT 2",
    "SELECT SUM(age) / COUNT(*) AS mean FROM p",
    "SELECT k, COUNT(*) AS n FROM p GROUP BY k HAVING COUNT(*) > 10 ORDER BY k",
    "SELECT ROUND(COUNT(*) * 2, -1) FROM p WHERE age > 30",
    "SELECT city, COUNT(*) AS n FROM p GROUP BY city ORDER BY n DESC LIMIT 3",  # selection
    "SELECT k, COUNT(*) FROM p GROUP BY k ORDER BY id",  # refused by both: not an output
    "SELECT COUNT(*) FROM p LIMIT 1 OFFSET 1",
    "SELECT k, MEDIAN(age) FROM p GROUP BY k ORDER BY k",  # refused by both (pure ε only)
]


def _outcome(con, sql):
    try:
        return con.execute(sql).fetchall(), None
    except Error as e:
        return None, type(e)


@pytest.mark.parametrize("clause,budget", [("WITH EPSILON 1 DELTA 1e-6", "EPSILON 100 DELTA 1e-3"),
                                           ("WITH RHO 0.05", "RHO 10")])
@pytest.mark.parametrize("query", _QUERIES)
def test_explain_accepts_exactly_what_the_release_accepts(query, clause, budget):
    con = _con(budget)
    rows, explain_err = _outcome(con, f"EXPLAIN PRIVACY {query} {clause}")
    before = con.ledger.account(con.user)
    released, release_err = _outcome(con, f"{query} {clause}")
    assert explain_err == release_err, (explain_err, release_err)
    if release_err is not None:
        assert con.ledger.account(con.user) == before  # a refusal charges nothing
        return
    post = [r for r in rows if r[0] == "post-processing"]
    split = any(w in query for w in ("ORDER BY", "LIMIT", "HAVING", "/", "ROUND"))
    assert len(post) == (1 if split else 0)
    if post:
        assert post[0][4] == "0" and post[0][8] == "post-processing"
    assert all(r[0] != "post-processing" for r in rows[:len(rows) - len(post)])
