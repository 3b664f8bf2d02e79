"""``KMEANS CLUSTERS k OF (cols) FROM t`` (papers/002 §6) from SQL: the declarations pick the
Blowfish k-means policy (checked against the Python release with the same noise), ε is charged
before the table is read, and refusals charge nothing."""

from fractions import Fraction

import numpy as np
import pytest

import provsql_dp
from provsql_dp.errors import DeclarationError, ProgrammingError, UnsupportedQueryError
from provsql_dp.policies.blowfish.clustering import kmeans


def _con():
    con = provsql_dp.connect()
    con.execute("CREATE TABLE pts(id INT PRIMARY KEY, x DOUBLE, y DOUBLE, tag VARCHAR)")
    con.execute("INSERT INTO pts SELECT i, CASE WHEN i % 2 = 0 THEN 0.2 ELSE 0.7 END "
                "+ (i % 9) / 100, CASE WHEN i % 3 = 0 THEN 0.3 ELSE 0.6 END, 't' "
                "FROM range(3000) t(i)")
    con.execute("INSERT INTO pts VALUES (5000, NULL, 0.5, 'null x')")
    con.execute("PROTECT TABLE pts")
    con.execute("SET PRIVACY BUDGET 100")
    return con


def _points(con):
    return np.asarray(con._duck.execute(
        "SELECT x, y FROM pts WHERE x IS NOT NULL AND y IS NOT NULL").fetchall(), float)


@pytest.mark.parametrize("declare, expected", [
    ("CREATE POLICY p ON pts (x, y) AS DELTA 0.05 METRIC L1 DOMAIN [0, 1) WIDTH 0.01, "
     "[0, 1) WIDTH 0.01 BOUNDED", dict(policy="threshold", theta=0.05, bounded=True)),
    ("CREATE POLICY p ON pts (x, y) AS DELTA 0.05 DOMAIN [0, 1) WIDTH 0.01, "
     "[0, 1) WIDTH 0.01 BOUNDED", dict(policy="threshold", theta=0.05 * 2 ** 0.5, bounded=True)),
    ("CREATE POLICY p ON pts (x, y) AS (FULL, FULL) DOMAIN [0, 1) WIDTH 0.1, [0, 1) WIDTH 0.1 "
     "BOUNDED", dict(policy="attribute", bounded=True)),
    ("CREATE POLICY p ON pts (x, y) AS (PARTITION BY WIDTH 0.5, PARTITION BY WIDTH 0.25) "
     "DOMAIN [0, 1) WIDTH 0.05, [0, 1) WIDTH 0.05 BOUNDED",
     dict(policy="partition", cells=[2, 4], bounded=True)),
    ("CREATE POLICY p ON pts (x, y) AS FULL DOMAIN [0, 1) WIDTH 0.1, [0, 1) WIDTH 0.1",
     dict(policy="dp", bounded=False)),
    ("SET BOUNDS ON pts (x) BETWEEN 0 AND 1; SET BOUNDS ON pts (y) BETWEEN 0 AND 1",
     dict(policy="dp", bounded=False)),
])
def test_the_declaration_picks_the_policy_and_its_sensitivity(declare, expected):
    con = _con()
    con.execute(declare)
    con._rng = np.random.default_rng(7)
    cur = con.execute("KMEANS CLUSTERS 3 OF (x, y) FROM pts ITERATIONS 4 WITH EPSILON 2")
    assert [c[0] for c in cur.description] == ["cluster", "x", "y"]
    rows = cur.fetchall()
    assert [r[0] for r in rows] == [1, 2, 3]
    ref = kmeans(_points(con), 3, 2.0, lo=0, hi=1, iterations=4,
                 rng=np.random.default_rng(7), **expected)
    assert np.allclose([r[1:] for r in rows], ref.centers)
    assert con.ledger.budget(con.user)[1] == 2


def test_columns_in_another_order_than_the_policy_s():
    con = _con()
    con.execute("CREATE POLICY p ON pts (x, y) AS (PARTITION BY WIDTH 0.5, PARTITION BY WIDTH "
                "0.25) DOMAIN [0, 1) WIDTH 0.05, [0, 1) WIDTH 0.05 BOUNDED")
    con._rng = np.random.default_rng(3)
    rows = con.execute("KMEANS CLUSTERS 2 OF (y, x) FROM pts WITH EPSILON 1").fetchall()
    ref = kmeans(_points(con)[:, ::-1], 2, 1.0, lo=0, hi=1, policy="partition", cells=[4, 2],
                 rng=np.random.default_rng(3))
    assert np.allclose([r[1:] for r in rows], ref.centers)


def test_the_centres_are_found_at_a_generous_budget():
    con = _con()
    con.execute("SET BOUNDS ON pts (x) BETWEEN 0 AND 1")
    con._rng = np.random.default_rng(0)
    rows = con.execute("KMEANS CLUSTERS 2 OF (x) FROM pts ITERATIONS 5 WITH EPSILON 50").fetchall()
    assert sorted(round(r[1], 2) for r in rows) == [0.24, 0.74]


def test_session_default_epsilon():
    con = _con()
    con.execute("SET BOUNDS ON pts (x) BETWEEN 0 AND 1")
    con.execute("SET PRIVACY EPSILON 0.5")
    con.execute("KMEANS CLUSTERS 2 OF (x) FROM pts")
    assert con.ledger.budget(con.user)[1] == Fraction(1, 2)


@pytest.mark.parametrize("setup, sql, error, text", [
    ("", "KMEANS CLUSTERS 2 OF (x, y) FROM pts WITH EPSILON 1", ProgrammingError,
     "needs the points' public box"),
    ("CREATE POLICY p ON pts (x) AS LINE DOMAIN [0, 1) WIDTH 0.1 BOUNDED",
     "KMEANS CLUSTERS 2 OF (x) FROM pts WITH EPSILON 1", DeclarationError,
     "does not give a k-means neighbourhood"),
    ("CREATE POLICY p ON pts (x, y) AS DELTA 0.1 DOMAIN [0, 1) WIDTH 0.1, [0, 1) WIDTH 0.1",
     "KMEANS CLUSTERS 2 OF (x, y) FROM pts WITH EPSILON 1", DeclarationError, "is UNBOUNDED"),
    ("CREATE POLICY p ON pts (x) AS PARTITION BY WIDTH 0.3 DOMAIN [0, 0.9) WIDTH 0.1 BOUNDED",
     "KMEANS CLUSTERS 2 OF (x) FROM pts WITH EPSILON 1", None, None),
    ("CREATE POLICY p ON pts (x, y) AS FULL DOMAIN [0, 1) WIDTH 0.5, [0, 1) WIDTH 0.5 BOUNDED "
     "KNOWN COUNTS TOTAL", "KMEANS CLUSTERS 2 OF (x, y) FROM pts WITH EPSILON 1",
     DeclarationError, "KNOWN COUNTS"),
    ("SET BOUNDS ON pts (x) BETWEEN 0 AND 1",
     "KMEANS CLUSTERS 0 OF (x) FROM pts WITH EPSILON 1", ProgrammingError, "1 to 1000"),
    ("SET BOUNDS ON pts (x) BETWEEN 0 AND 1",
     "KMEANS CLUSTERS 2 OF (x, x) FROM pts WITH EPSILON 1", ProgrammingError, "named twice"),
    ("", "KMEANS CLUSTERS 2 OF (tag) FROM pts WITH EPSILON 1", UnsupportedQueryError,
     "clusters numbers"),
    ("", "KMEANS CLUSTERS 2 OF (z) FROM pts WITH EPSILON 1", ProgrammingError, "no column 'z'"),
    ("SET BOUNDS ON pts (x) BETWEEN 0 AND 1; SET PRIVACY BUDGET 0.5",
     "KMEANS CLUSTERS 2 OF (x) FROM pts WITH EPSILON 1", provsql_dp.errors.BudgetExceededError,
     "budget exceeded"),
])
def test_refusals_charge_nothing(setup, sql, error, text):
    con = _con()
    if setup:
        con.execute(setup)
    before = con.ledger.budget(con.user)
    if error is None:  # the control: this declaration is supported
        con.execute(sql)
        return
    with pytest.raises(error, match=text):
        con.execute(sql)
    assert con.ledger.budget(con.user) == before


def test_an_unprotected_table_is_refused():
    con = _con()
    # a public copy of the points (provsql_dp refuses to make one: protected_copies)
    con._duck.execute("CREATE TABLE open_pts AS SELECT x FROM pts")
    con.execute("SET BOUNDS ON open_pts (x) BETWEEN 0 AND 1")
    with pytest.raises(ProgrammingError, match="is not protected"):
        con.execute("KMEANS CLUSTERS 2 OF (x) FROM open_pts WITH EPSILON 1")


@pytest.mark.parametrize("sql, text", [
    ("KMEANS CLUSTERS OF (x) FROM pts", "Expected the number of clusters"),
    ("KMEANS CLUSTERS 2 (x) FROM pts", "Expected OF"),
    ("KMEANS CLUSTERS 2 OF (x) FROM pts WITH ACCURACY 1", "no accuracy-first form"),
    ("KMEANS CLUSTERS 2 OF (x) FROM pts WITH EPSILON 1 OPTIONS (raw = true)", "no OPTIONS"),
])
def test_syntax_errors(sql, text):
    con = _con()
    with pytest.raises(ProgrammingError, match=text):
        con.execute(sql)


def test_an_accepted_release_is_padded_to_release_seconds():
    import time

    con = _con()
    con.execute("SET BOUNDS ON pts (x) BETWEEN 0 AND 1")
    con.release_seconds = 0.5
    t = time.monotonic()
    con.execute("KMEANS CLUSTERS 2 OF (x) FROM pts ITERATIONS 1 WITH EPSILON 1")
    assert time.monotonic() - t >= 0.5
    assert con.ledger.budget(con.user)[1] == 1


def test_an_analyst_runs_kmeans_on_their_own_budget(tmp_path):
    """KMEANS is on the analyst's allow-list (our grammar parses it whole; the table is read by
    its catalog name): it releases centres and charges the analyst's own budget, never the rows."""
    path = str(tmp_path / "k.duckdb")
    cur = _con_at(path)
    cur.execute("SET BOUNDS ON pts (x) BETWEEN 0 AND 1; SET PRIVACY BUDGET 3 FOR USER 'ann'")
    cur.close()
    an = provsql_dp.connect(path, role="analyst", user="ann")
    rows = an.execute("KMEANS CLUSTERS 2 OF (x) FROM pts ITERATIONS 3 WITH EPSILON 1").fetchall()
    assert len(rows) == 2
    assert an.ledger.remaining("ann") == 2
    an.close()


def _con_at(path):
    con = provsql_dp.connect(path)
    con.execute("CREATE TABLE pts(id INT PRIMARY KEY, x DOUBLE, y DOUBLE, tag VARCHAR)")
    con.execute("INSERT INTO pts SELECT i, (i % 7) / 10, (i % 3) / 10, 't' FROM range(300) t(i)")
    con.execute("PROTECT TABLE pts")
    return con
