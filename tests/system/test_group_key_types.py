"""Every route answering a private GROUP BY describes its keys as DuckDB types the same GROUP BY
over the tables: ``cursor.description`` (and the Arrow types of the answer) equal a plain DuckDB
connection's on a copy of the data, and the values are of that type. The routes described every
key as VARCHAR — an INTEGER key, a DATE key, ``ROUND(x, -1)`` — while returning ints, dates,
floats (post-processed answers and the quantile and variance routes were typed already)."""

from __future__ import annotations

import duckdb
import pytest

import provsql_dp

TABLES = [
    "CREATE TABLE t(id INT PRIMARY KEY, g INT, s SMALLINT, d DATE, ts TIMESTAMP, x DOUBLE, "
    "n DECIMAL(6,2), k VARCHAR, b BOOLEAN, d2 DATE, ti TINYINT)",
    "INSERT INTO t SELECT i, i % 3, (i % 4)::SMALLINT, DATE '2020-01-01' + (i % 2)::INT, "
    "TIMESTAMP '2020-01-01' + to_days((i % 2)::INT), i % 50, (i % 5)::DECIMAL(6,2), "
    "['a', 'b'][i % 2 + 1], i % 2 = 0, DATE '2020-01-01' + (i % 90)::INT, (i % 3)::TINYINT "
    "FROM range(600) r(i)",
    "CREATE TABLE pub(code INT, name VARCHAR)",
    "INSERT INTO pub VALUES (0, 'zero'), (1, 'one'), (2, 'two')",
    "CREATE TABLE o(oid INT PRIMARY KEY, tid INT REFERENCES t(id), amount DOUBLE, day DATE)",
    "INSERT INTO o SELECT i, i % 600, i % 7, DATE '2021-01-01' + (i % 3)::INT "
    "FROM range(1500) r(i)",
    "CREATE TABLE q(id INT PRIMARY KEY, p INT)",
    "INSERT INTO q SELECT i, i % 3 FROM range(300) r(i)",
]
DECLARATIONS = [
    "PROTECT TABLE t", "PROTECT TABLE o REFERENCES t",
    "SET GROUP KEYS ON t (g) VALUES (0, 1, 2)", "SET GROUP KEYS ON t (s) VALUES (0, 1, 2, 3)",
    "SET GROUP KEYS ON t (d) VALUES ('2020-01-01', '2020-01-02')",
    "SET GROUP KEYS ON t (ts) VALUES ('2020-01-01', '2020-01-02')",
    "SET GROUP KEYS ON t (n) VALUES (0, 1, 2, 3, 4)", "SET GROUP KEYS ON t (k) VALUES ('a', 'b')",
    "SET GROUP KEYS ON t (b) VALUES (true, false)",
    "SET GROUP KEYS ON o (day) VALUES ('2021-01-01', '2021-01-02', '2021-01-03')",
    "SET BOUNDS ON t (x) BETWEEN 0 AND 100", "SET BOUNDS ON o (amount) BETWEEN 0 AND 10",
    "PROTECT TABLE q", "CREATE POLICY qp ON q (p) AS FULL DOMAIN (0, 1, 2) BOUNDED",
]
PURE = "SET PRIVACY BUDGET 100000"
APPROX = "SET PRIVACY BUDGET EPSILON 100000 DELTA 0.9"
RHO = "SET PRIVACY BUDGET RHO 100000"

#: (statement, its budget, the routes it takes, how many leading columns are keys)
CASES = [
    ("SELECT g, d, COUNT(*) FROM t GROUP BY g, d WITH EPSILON 1", PURE, ("laplace",), 2),
    ("SELECT s, ts, n, b, COUNT(*) FROM t GROUP BY s, ts, n, b WITH EPSILON 1", PURE,
     ("laplace",), 4),
    ("SELECT g, SUM(x), COUNT(*) FROM t GROUP BY g WITH EPSILON 1", PURE,
     ("laplace", "laplace"), 1),
    ("SELECT d, AVG(x) FROM t GROUP BY d WITH EPSILON 1", PURE, ("laplace", "laplace"), 1),
    ("SELECT g, COUNT(*) FROM t GROUP BY g WITH EPSILON 1 OPTIONS (mechanism = 'recursive')",
     PURE, ("single-owner",), 1),
    ("SELECT d, SUM(x), COUNT(*) FROM t GROUP BY d WITH EPSILON 1 "
     "OPTIONS (mechanism = 'recursive')", PURE, ("single-owner", "single-owner"), 1),
    ("SELECT g, COUNT(*) FROM t GROUP BY g WITH EPSILON 1 "
     "OPTIONS (mechanism = 'recursive', max_groups = 1)", PURE, ("single-owner",), 1),
    ("SELECT g, COUNT(*) FROM t GROUP BY g WITH EPSILON 1 OPTIONS (mechanism = 'r2t')", PURE,
     ("r2t",), 1),
    ("SELECT g, COUNT(DISTINCT k) FROM t GROUP BY g WITH EPSILON 1", PURE, ("recursive-lp",), 1),
    ("SELECT t.d, COUNT(*) FROM t JOIN o ON o.tid = t.id GROUP BY t.d WITH EPSILON 1", PURE,
     ("single-owner",), 1),
    ("SELECT o.day, SUM(amount) FROM o GROUP BY o.day WITH EPSILON 1", PURE,
     ("single-owner",), 1),
    ("SELECT t.g, COUNT(*) FROM t WHERE t.id IN (SELECT tid FROM o WHERE amount > 3) "
     "GROUP BY t.g WITH EPSILON 1", PURE, ("laplace",), 1),
    ("SELECT d, COUNT(*) FROM t WHERE EXISTS (SELECT 1 FROM o WHERE o.tid = t.id) GROUP BY d "
     "WITH EPSILON 1", PURE, ("laplace",), 1),
    ("SELECT pub.code, pub.name, COUNT(*) FROM t JOIN pub ON pub.code = t.g "
     "GROUP BY pub.code, pub.name WITH EPSILON 1", PURE, ("single-owner",), 2),
    ("SELECT date_trunc('month', d2), COUNT(*) FROM t WHERE d2 BETWEEN DATE '2020-01-01' AND "
     "DATE '2020-03-31' GROUP BY date_trunc('month', d2) WITH EPSILON 1", PURE, ("laplace",), 1),
    ("SELECT FLOOR(x / 10), COUNT(*) FROM t WHERE x BETWEEN 0 AND 49 GROUP BY FLOOR(x / 10) "
     "WITH EPSILON 1", PURE, ("laplace",), 1),
    ("SELECT ti, COUNT(*) FROM t GROUP BY ti WITH EPSILON 1", PURE, ("policy",), 1),
    ("SELECT p, COUNT(*) FROM q GROUP BY p WITH EPSILON 1", PURE, ("policy",), 1),
    ("SELECT g, d, COUNT(*) FROM t GROUP BY g, d WITH RHO 0.5", RHO, ("gaussian",), 2),
    ("SELECT g, SUM(x), COUNT(*) FROM t GROUP BY g WITH RHO 0.5", RHO,
     ("gaussian", "gaussian"), 1),
    ("SELECT g, COUNT(*) FROM t GROUP BY g WITH EPSILON 1 DELTA 1e-6", APPROX, ("laplace",), 1),
    ("SELECT ROUND(x, -1), COUNT(*) FROM t GROUP BY ROUND(x, -1) WITH EPSILON 1 DELTA 1e-6",
     APPROX, ("partition-selection",), 1),
    ("SELECT FLOOR(x / 10), SUM(x) FROM t GROUP BY FLOOR(x / 10) WITH EPSILON 1 DELTA 1e-6",
     APPROX, ("partition-selection",), 1),
    ("SELECT date_trunc('month', d2), COUNT(*) FROM t GROUP BY date_trunc('month', d2) "
     "WITH EPSILON 1 DELTA 1e-6", APPROX, ("partition-selection",), 1),
    ("SELECT id % 5, COUNT(*) FROM t GROUP BY id % 5 WITH EPSILON 1 DELTA 1e-6", APPROX,
     ("partition-selection",), 1),
    ("SELECT d2, COUNT(*) FROM t GROUP BY d2 WITH EPSILON 5 DELTA 0.3", APPROX,
     ("partition-selection",), 1),
    # typed before (their routes type the key over the table they read): kept with the others
    ("SELECT g, MEDIAN(x) FROM t GROUP BY g WITH EPSILON 1", PURE, ("quantile",), 1),
    ("SELECT d, VAR_POP(x) FROM t GROUP BY d WITH EPSILON 1", PURE, ("variance",), 1),
]


def _connect(budget: str):
    con = provsql_dp.connect()
    for s in TABLES + DECLARATIONS + [budget]:
        con.execute(s)
    return con


@pytest.fixture(scope="module")
def plain():
    con = duckdb.connect()
    for s in TABLES:
        con.execute(s)
    yield con
    con.close()


def _core(statement: str) -> str:
    return statement.split(" WITH EPSILON")[0].split(" WITH RHO")[0]


@pytest.mark.parametrize("statement, budget, routes, n_keys", CASES,
                         ids=[c[0][:60] for c in CASES])
def test_key_types_are_duckdbs(plain, statement, budget, routes, n_keys):
    con = _connect(budget)
    cur = con.execute(statement)
    rows = cur.fetchall()
    assert cur.privacy.routes == routes
    want = plain.execute(_core(statement))
    want_rows = want.fetchall()
    got_types = [str(c[1]) for c in cur.description[:n_keys]]
    assert got_types == [str(c[1]) for c in want.description[:n_keys]]
    assert rows and want_rows
    for i in range(n_keys):  # the values are of the type described: DuckDB's own
        assert {type(r[i]) for r in rows if r[i] is not None} == \
            {type(r[i]) for r in want_rows if r[i] is not None}, got_types[i]
    arrow = con.execute(statement).fetch_arrow_table()  # Arrow types follow the description
    relation = plain.sql(_core(statement))
    want_arrow = (getattr(relation, "to_arrow_table", None) or relation.arrow)()
    assert arrow.schema.types[:n_keys] == want_arrow.schema.types[:n_keys]


def test_no_group_released_keeps_the_plans_type():
    """Partition selection may release no group: the key is still typed, from the plan."""
    con = _connect(APPROX)
    cur = con.execute("SELECT x, COUNT(*) FROM t GROUP BY x WITH EPSILON 0.1 DELTA 1e-12")
    assert cur.fetchall() == [] and str(cur.description[0][1]) == "DOUBLE"


def test_refusals_leave_the_ledger_as_it_was_and_the_next_answer_is_typed():
    con = _connect(PURE)
    before = con.execute("SHOW PRIVACY BUDGET").fetchall()
    for bad in ("SELECT x, COUNT(*) FROM t GROUP BY x WITH EPSILON 1",
                "SELECT g + 1, COUNT(*) FROM t GROUP BY g + 1 WITH EPSILON 1",
                "SELECT g, COUNT(*) FROM t GROUP BY g WITH RHO 0.5",
                "SELECT g, COUNT(*) FROM t GROUP BY g ORDER BY nosuch(g) WITH EPSILON 1"):
        with pytest.raises(provsql_dp.Error):
            con.execute(bad)
    assert con.execute("SHOW PRIVACY BUDGET").fetchall() == before
    cur = con.execute("SELECT g, COUNT(*) FROM t GROUP BY g WITH EPSILON 1")
    assert str(cur.description[0][1]) == "INTEGER" and cur.fetchall()[0][0] == 0


def test_a_policy_bin_edge_is_not_rounded_by_post_processing():
    """The policy route labels a bin by its lower edge: 2.5 on an INTEGER column under a
    WIDTH 2.5 domain. Post-processing (an alias, ORDER BY) typed its key INTEGER from the plan
    and returned 2 and 8 for the edges 2.5 and 7.5; it now types it from the route's public
    labels, as the answer without post-processing is described."""
    con = provsql_dp.connect()
    con.execute("CREATE TABLE p(id INT PRIMARY KEY, age INT)")
    con.execute("INSERT INTO p SELECT i, i % 10 FROM range(500) r(i)")
    con.execute("PROTECT TABLE p; SET PRIVACY BUDGET 100")
    con.execute("CREATE POLICY al ON p (age) AS LINE DOMAIN [0, 10) WIDTH 2.5 BOUNDED")
    plain = con.execute("SELECT age, COUNT(*) FROM p GROUP BY age WITH EPSILON 1")
    assert [r[0] for r in plain.fetchall()] == [0, 2.5, 5, 7.5]
    assert str(plain.description[0][1]) == "DOUBLE"
    for sql in ("SELECT age AS a, COUNT(*) FROM p GROUP BY age WITH EPSILON 1",
                "SELECT age, COUNT(*) FROM p GROUP BY age ORDER BY age DESC WITH EPSILON 1"):
        cur = con.execute(sql)
        assert sorted(r[0] for r in cur.fetchall()) == [0, 2.5, 5, 7.5]
        assert str(cur.description[0][1]) == "DOUBLE"
    con.execute("CREATE TABLE q(id INT PRIMARY KEY, age INT)")  # whole edges: INTEGER
    con.execute("INSERT INTO q SELECT i, i % 10 FROM range(500) r(i)")
    con.execute("PROTECT TABLE q")
    con.execute("CREATE POLICY ql ON q (age) AS LINE DOMAIN [0, 10) WIDTH 5 BOUNDED")
    cur = con.execute("SELECT age AS a, COUNT(*) FROM q GROUP BY age WITH EPSILON 1")
    assert [r[0] for r in cur.fetchall()] == [0, 5] and str(cur.description[0][1]) == "INTEGER"


def test_policy_bin_labels_have_one_type_the_columns():
    """Bins labelled by their lower edges: a DOUBLE column's whole edges came back as ints
    (described BIGINT), an INTEGER column's edges under WIDTH 2.5 as ints and floats mixed.
    Every edge is now a float unless the column is an integer one and the edges are whole."""
    con = provsql_dp.connect()
    con.execute("CREATE TABLE m(id INT PRIMARY KEY, x DOUBLE, n INT)")
    con.execute("INSERT INTO m SELECT i, (i % 10)::DOUBLE, i % 10 FROM range(300) r(i)")
    con.execute("PROTECT TABLE m; SET PRIVACY BUDGET 100")
    con.execute("CREATE POLICY mx ON m (x) AS LINE DOMAIN [0, 10) WIDTH 2 BOUNDED")
    con.execute("CREATE POLICY mn ON m (n) AS LINE DOMAIN [0, 10) WIDTH 2.5 BOUNDED")
    for sql, col, kind in [("SELECT x, COUNT(*) FROM m GROUP BY x", "x", "DOUBLE"),
                           ("SELECT x AS b, COUNT(*) FROM m GROUP BY x ORDER BY b", "x", "DOUBLE"),
                           ("COUNT CUMULATIVE x FROM m", "x", "DOUBLE"),
                           ("SELECT n, COUNT(*) FROM m GROUP BY n", "n", "DOUBLE")]:
        cur = con.execute(sql + " WITH EPSILON 1")
        keys = [r[0] for r in cur.fetchall()]
        assert {type(k) for k in keys} == {float}, sql
        assert str(cur.description[0][1]) == kind, sql
