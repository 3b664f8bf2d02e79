"""Describe of a prepared statement (:mod:`provsql_dp.interfaces.pgwire._describe`): the columns
a statement's run gives, known without running it — no charge, no audit row, nothing of the
analyst's text sent to DuckDB. Each private query below is described, then run: where the
description is given, it is the run's exactly (names and types, interval columns included)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import provsql_dp
from provsql_dp.interfaces.pgwire._describe import describe_statement, private_columns
from provsql_dp.sql import dialect as d


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("describe") / "d.duckdb")
    con = provsql_dp.connect(path)
    con.execute("CREATE TABLE t(id INT PRIMARY KEY, g INT, s VARCHAR, d DATE, x DOUBLE, "
                "n DECIMAL(10,2))")
    con.execute("INSERT INTO t SELECT i, i % 3, 'a' || (i % 2), DATE '2020-01-01' + (i % 2)::INT, "
                "i * 1.5, i FROM range(100) r(i)")
    con.execute("CREATE TABLE v(id INT, pid INT)")
    con.execute("INSERT INTO v SELECT i, i % 50 FROM range(200) r(i)")
    con.execute("CREATE TABLE pub(k INT, name VARCHAR, day DATE)")
    con.execute("INSERT INTO pub VALUES (1, 'a', '2020-01-01')")
    con.execute("PROTECT TABLE t; PROTECT TABLE v BY (pid) REFERENCES t (id)")
    con.execute("SET PRIVACY BUDGET 1000 FOR USER 'ann'")
    con.execute("SET GROUP KEYS ON t (g) VALUES (0, 1, 2)")
    con.execute("SET GROUP KEYS ON t (s) VALUES ('a0', 'a1')")
    con.execute("SET GROUP KEYS ON t (d) VALUES ('2020-01-01', '2020-01-02')")
    con.execute("SET BOUNDS ON t (x) BETWEEN 0 AND 200")
    con.commit()
    con.close()
    return path


@pytest.fixture
def ann(db):
    con = provsql_dp.connect(db, role="analyst", user="ann", interval_columns=True)
    yield con
    con.close()


PRIVATE = [
    "SELECT COUNT(*) FROM t WITH EPSILON 1",
    "SELECT g, COUNT(*) FROM t GROUP BY g WITH EPSILON 1",
    "SELECT s, g, d, COUNT(*), SUM(x) FROM t GROUP BY s, g, d WITH EPSILON 1",
    "SELECT SUM(x) AS total FROM t WITH EPSILON 1",
    "SELECT SUM(g) FROM t WITH EPSILON 1",
    "SELECT AVG(x) FROM t WITH EPSILON 1",
    "SELECT g, AVG(x), COUNT(*) AS c FROM t GROUP BY g WITH EPSILON 1",
    "SELECT COUNT(*) FROM t JOIN v ON t.id = v.pid WITH EPSILON 1",
    "SELECT COUNT(*) * 2 AS dbl FROM t WITH EPSILON 1",
    "SELECT g, COUNT(*) c FROM t GROUP BY g ORDER BY c DESC LIMIT 2 WITH EPSILON 1",
    "SELECT COUNT(*) AS c, g FROM t GROUP BY g WITH EPSILON 1",
    "SELECT g, SUM(x) / COUNT(*) AS mean FROM t GROUP BY g HAVING COUNT(*) > 0 WITH EPSILON 1",
    "SELECT COUNT(*) FROM t WITH EPSILON 1 OPTIONS (mechanism = 'recursive')",
    "SELECT COUNT(*) FROM t WITH EPSILON 1 OPTIONS (intervals = false)",
    "SELECT COUNT(*) FROM t WITH EPSILON 1 OPTIONS (intervals = 0.9)",
    "SELECT g, count_if(x > 10) FROM t GROUP BY ALL WITH EPSILON 1",
    "SELECT CASE WHEN x > 50 THEN 'high' ELSE 'low' END AS band, COUNT(*) FROM t GROUP BY 1 "
    "WITH EPSILON 1",
    "SELECT MEDIAN(x) FROM t WITH EPSILON 1",
    "SELECT COUNT(DISTINCT g) FROM t WITH EPSILON 1",
    "SELECT COUNT(*) FROM t WITH EPSILON 1 OPTIONS (raw = true)",
]


@pytest.mark.parametrize("sql", PRIVATE)
def test_a_private_description_is_the_runs(ann, sql):
    spent = ann.ledger.budget("ann")[1]
    described, why = private_columns(ann, d.parse_one(sql))
    assert ann.ledger.budget("ann")[1] == spent  # describing charges nothing
    ran = [(c[0], str(c[1])) for c in ann.execute(sql).description]
    if described is None:
        assert why  # not described: the reason is said
    else:
        assert described == ran


def test_the_routes_are_described(ann):
    """Every statement above is described (the Laplace, single-owner, recursive and
    post-processing paths, the quantile and distinct routes: tests/unit/interfaces/pgwire/
    test_describe_routes.py has the others) but a raw COUNT, which the aggregate route its run
    decides types."""
    undescribed = [s for s in PRIVATE if private_columns(ann, d.parse_one(s))[0] is None]
    assert undescribed == PRIVATE[-1:]


def _session(con):
    return SimpleNamespace(con=con, server=None)


def test_public_statements_and_parameter_types(ann):
    found = describe_statement(_session(ann), "SELECT k, name, day FROM pub WHERE k = $1 AND "
                               "name = $2 AND day = $3 AND k = ANY($4) AND $5 IS NULL",
                               [0, 0, 0, 0, 0], 5)
    assert found.columns == [("k", "INTEGER"), ("name", "VARCHAR"), ("day", "DATE")]
    assert found.params == [23, 25, 1082, 1007, 25]  # int4, text, date, int4[], unknown: text
    assert describe_statement(_session(ann), "SELECT k FROM pub WHERE k = $1", [20], 1).params \
        == [20]  # the client's own type first


def test_a_private_statement_with_parameters_is_described_without_values(ann):
    spent = ann.ledger.budget("ann")[1]
    found = describe_statement(_session(ann), "SELECT g, COUNT(*) FROM t WHERE s = $1 AND g = "
                               "ANY($2) GROUP BY g WITH EPSILON 1", [], 2)
    assert found.params == [25, 1007]
    assert found.columns == [("g", "INTEGER"), ("COUNT(*)", "BIGINT"),
                             ("COUNT(*)_low", "DOUBLE"), ("COUNT(*)_high", "DOUBLE")]
    assert ann.ledger.budget("ann")[1] == spent


def test_a_refused_statement_is_refused_when_described(ann):
    with pytest.raises(provsql_dp.PrivacyError):
        describe_statement(_session(ann), "SELECT * FROM t", [], 0)
    with pytest.raises(provsql_dp.Error, match="raw rows are never released"):
        describe_statement(_session(ann), "SELECT id FROM t WITH EPSILON 1", [], 0)
