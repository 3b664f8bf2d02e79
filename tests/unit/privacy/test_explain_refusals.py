"""``EXPLAIN PRIVACY`` refuses what the release itself refuses, with the same words: a query
releasing raw rows, or reading no protected table, used to get a 'recursive' row as if it could
be released."""

import pytest

import provsql_dp
from provsql_dp.errors import UnsupportedQueryError


@pytest.fixture()
def con():
    c = provsql_dp.connect()
    c.execute("CREATE TABLE t(id INT PRIMARY KEY, x INT); INSERT INTO t SELECT range, range "
              "FROM range(10); PROTECT TABLE t; CREATE TABLE pub(y INT); INSERT INTO pub VALUES (1)")
    c.execute("SET PRIVACY BUDGET 1")
    return c


@pytest.mark.parametrize("query", [
    "SELECT x FROM t WITH EPSILON 0.5",
    "SELECT x FROM t WITH EPSILON 0.5 OPTIONS (mechanism = 'r2t')",
    "SELECT COUNT(*) FROM pub WITH EPSILON 0.5",
    "SELECT COUNT(*) FROM pub WITH ACCURACY 3",
])
def test_explain_refuses_what_the_release_refuses(con, query):
    with pytest.raises(UnsupportedQueryError) as released:
        con.execute(query)
    with pytest.raises(UnsupportedQueryError) as explained:
        con.execute("EXPLAIN PRIVACY " + query)
    assert str(explained.value) == str(released.value)
    assert con.execute("SHOW PRIVACY BUDGET").fetchall() == [("default", "1", "0", "1")]


def test_explain_still_describes_releasable_queries(con):
    assert con.execute("EXPLAIN PRIVACY SELECT COUNT(*) FROM t WITH EPSILON 0.5").fetchone()[0] == "laplace"
    row = con.execute("EXPLAIN PRIVACY SELECT COUNT(*) FROM t a JOIN t b ON a.x = b.x "
                      "WITH EPSILON 0.5").fetchone()
    assert row[0] == "recursive"
