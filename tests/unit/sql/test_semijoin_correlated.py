"""A correlated subquery that is planned on its own (GROUP BY, HAVING, UNION, DISTINCT ON, …:
``sql.semijoin``) is refused naming that limit and the uncorrelated ``IN`` to write — not with
"unknown table or alias" for the enclosing query's alias (h49attack) — and a truly unknown alias
still gets that message."""

from __future__ import annotations

import pytest

import provsql_dp
from provsql_dp.errors import ProgrammingError, UnsupportedQueryError


@pytest.fixture(scope="module")
def con():
    c = provsql_dp.connect(":memory:")
    c.execute("CREATE TABLE people (id INTEGER, code INTEGER); CREATE TABLE pub (code INTEGER); "
              "INSERT INTO people VALUES (1, 1), (2, 1), (3, 2); INSERT INTO pub VALUES (1); "
              "PROTECT TABLE people BY (id) AS person")
    return c


@pytest.mark.parametrize("sql, names", [
    ("SELECT COUNT(*) FROM people p WHERE EXISTS (SELECT 1 FROM people q WHERE q.code = p.code "
     "GROUP BY q.code HAVING COUNT(*) > 1)", "correlated EXISTS subquery with GROUP BY / HAVING"),
    ("SELECT COUNT(*) FROM people p WHERE EXISTS (SELECT 1 FROM people q WHERE q.code = p.code "
     "GROUP BY q.code)", "correlated EXISTS subquery with GROUP BY"),
    ("SELECT COUNT(*) FROM people p WHERE p.id IN (SELECT q.id FROM people q WHERE "
     "q.code = p.code UNION SELECT code FROM pub)", "correlated IN subquery with UNION"),
    ("SELECT COUNT(*) FROM people p WHERE EXISTS (SELECT DISTINCT ON (q.code) q.code FROM "
     "people q WHERE q.code = p.code)", "correlated EXISTS subquery with DISTINCT ON"),
])
def test_correlated_subquery_planned_on_its_own_is_refused_naming_the_limit(con, sql, names):
    for run in (con.plan, con.provenance):
        with pytest.raises(UnsupportedQueryError) as err:
            run(sql)
        msg = str(err.value)
        assert names in msg and "p.code" in msg and "unknown table" not in msg, msg
        assert "p.code IN (SELECT <key> FROM …" in msg, msg


def test_the_suggested_rewrite_is_planned_or_refused_for_its_own_reason(con):
    con.plan("SELECT COUNT(*) FROM people p WHERE p.code IN (SELECT q.code FROM people q "
             "GROUP BY q.code)")
    with pytest.raises(UnsupportedQueryError, match="HAVING over groups that hold several"):
        con.plan("SELECT COUNT(*) FROM people p WHERE p.code IN (SELECT q.code FROM people q "
                 "GROUP BY q.code HAVING COUNT(*) > 1)")


def test_an_unknown_alias_is_still_named_as_such(con):
    with pytest.raises(ProgrammingError, match="unknown table or alias 'zz'"):
        con.plan("SELECT COUNT(*) FROM people p WHERE EXISTS (SELECT 1 FROM people q "
                 "WHERE q.code = zz.code GROUP BY q.code)")
