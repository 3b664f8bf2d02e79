"""CREATE POLICY … AS DELTA δ from SQL, and range counts routed to the policy's strategies."""

import numpy as np
import pytest

import provsql_dp
from provsql_dp.errors import DeclarationError, ProgrammingError


@pytest.fixture
def con():
    c = provsql_dp.connect()
    c.execute("CREATE TABLE pts(id INT PRIMARY KEY, x DOUBLE, y DOUBLE, tag VARCHAR)")
    rng = np.random.default_rng(0)
    rows = [(i, float(rng.random()), float(rng.random()), "a") for i in range(400)]
    c.execute("INSERT INTO pts SELECT * FROM (VALUES " +
              ", ".join(f"({i}, {x}, {y}, '{t}')" for i, x, y, t in rows) + ")")
    c.execute("PROTECT TABLE pts")
    c.execute("SET PRIVACY BUDGET 100 FOR USER 'default'")
    return c


def test_one_column_threshold_and_range_counts(con):
    msg = con.execute("CREATE POLICY near ON pts (x) AS DELTA 0.05 DOMAIN [0, 1) WIDTH 0.01 "
                      "BOUNDED").fetchall()[0][0]
    assert "distance at most 5" in msg  # θ = ⌈0.05 / 0.01⌉
    cur = con.execute("COUNT CUMULATIVE x FROM pts WITH EPSILON 1")
    rows = cur.fetchall()
    assert len(rows) == 100 and cur.privacy.policy == "near"
    cur = con.execute("COUNT RANGES (x >= 0.2 AND x < 0.5) FROM pts WITH EPSILON 1")
    assert cur.privacy.mechanism == "blowfish" and cur.privacy.epsilon == 1


def test_two_columns_metric_and_sources(con):
    msg = con.execute("CREATE POLICY near2 ON pts (x, y) AS DELTA 0.02 METRIC L1 DOMAIN [0, 1) "
                      "WIDTH 0.01, [0, 1) WIDTH 0.01 UNBOUNDED SOURCES ((0, 0))").fetchall()[0][0]
    # L1 gaps < 0.02 between 0.01-cells: index offsets up to (2, 1), i.e. L1 θ = 3 on bins
    assert "L1 distance at most 3" in msg and "source" in msg
    shown = con.execute("SHOW POLICIES").fetchall()[0]
    assert shown[4] == "DELTA 0.02 L1"
    cur = con.execute("SELECT count(*) FROM pts WHERE x >= 0.2 AND x < 0.5 AND y >= 0.1 "
                      "AND y < 0.3 WITH EPSILON 1")
    assert cur.privacy.policy == "near2"


def test_delta_refusals(con):
    with pytest.raises(DeclarationError, match="WIDTH"):
        con.execute("CREATE POLICY bad ON pts (tag) AS DELTA 1 DOMAIN ('a', 'b')")
    with pytest.raises(ProgrammingError):
        con.execute("CREATE POLICY bad ON pts (x, y) AS (DELTA 1, LINE) DOMAIN [0, 1) WIDTH 0.1, "
                    "[0, 1) WIDTH 0.1")
    with pytest.raises(ProgrammingError):
        con.execute("CREATE POLICY bad ON pts (x) AS DELTA 0.1 METRIC COSINE DOMAIN [0, 1) WIDTH 0.1")
    assert con.execute("SHOW POLICIES").fetchall() == []
