"""sql.show_names: our SHOW statements beside DuckDB's SHOW <table>, told apart by the words alone."""

import pytest

import provsql_dp
from provsql_dp.errors import PrivacyError
from provsql_dp.sql.curator_grammar import ShowAuditLog
from provsql_dp.sql.dialect import parse_one
from provsql_dp.sql.expressions import ShowBounds
from provsql_dp.sql.show_names import shown_table


@pytest.mark.parametrize("sql,ours", [
    ("SHOW AUDIT LOG", ShowAuditLog), ("show audit log limit 3", ShowAuditLog),
    ("SHOW BOUNDS", ShowBounds), ("SHOW bounds", ShowBounds),  # complete: stays ours
    ("SHOW audit", None), ("SHOW audit;", None), ("SHOW privacy", None), ('SHOW "audit"', None),
])
def test_the_words_decide(sql, ours):
    tree = parse_one(sql)
    if ours is None:
        assert shown_table(tree) is not None, tree
    else:
        assert isinstance(tree, ours)


@pytest.mark.parametrize("sql", ["SHOW TABLES", "SHOW ALL TABLES", "SHOW DATABASES",
                                 "SHOW FUNCTIONS"])
def test_duckdbs_own_show_words_are_no_table(sql):
    assert shown_table(parse_one(sql)) is None


def _curator_and_analyst(name: str, ddl: str):
    """A curator connection to the in-memory database ``name`` after ``ddl``, and analyst ann's."""
    con = provsql_dp.connect(name)
    con.execute(ddl)
    con.execute("SET PRIVACY BUDGET 1 FOR USER 'ann'")
    with pytest.warns(UserWarning):
        an = provsql_dp.connect(name, role="analyst", user="ann")
    return con, an


def test_a_users_audit_table_is_described_by_curator_and_analyst():
    con, an = _curator_and_analyst(":memory:h48_show_names", "CREATE TABLE audit(x INT, note "
                                   "VARCHAR); CREATE TABLE bounds(b INT)")
    for c in (con, an):
        assert [r[0] for r in c.execute("SHOW audit").fetchall()] == ["x", "note"]
        assert [r[0] for r in c.execute('SHOW "bounds"').fetchall()] == ["b"]
        assert [d[0] for d in c.execute("SHOW bounds").description][:2] == ["schema", "table"]
    assert [r[0] for r in an.execute("SHOW main.audit").fetchall()] == ["x", "note"]
    assert con.execute("SHOW AUDIT LOG LIMIT 1").description[0][0] == "id"
    with pytest.raises(PrivacyError, match="curator only"):
        an.execute("SHOW AUDIT LOG")
    with pytest.raises(PrivacyError, match="an analyst cannot run SHOW DATABASES"):
        an.execute("SHOW DATABASES")


def test_a_table_named_with_a_keyword_is_described_by_curator_and_analyst():
    """h55hard: DuckDB reads ``SHOW group`` as a syntax error (GROUP is reserved): the
    curator's SHOW of a table runs with the names quoted (``show_names.quoted_show``); the
    analyst's was already answered from the catalog. ``SHOW TABLE bounds`` describes a table
    named like a complete statement of ours."""
    con, an = _curator_and_analyst(":memory:h55_show_names", 'CREATE TABLE "group"(g INT); '
                                   'CREATE TABLE "Order"(o INT); CREATE TABLE bounds(b INT)')
    for c in (con, an):
        for sql in ("SHOW group", "SHOW GROUP;", "SHOW main.group", 'SHOW "group"'):
            assert [r[0] for r in c.execute(sql).fetchall()] == ["g"], sql
        assert [r[0] for r in c.execute("SHOW Order").fetchall()] == ["o"]
    for c in (con, an):
        assert [r[0] for r in c.execute("SHOW TABLE bounds").fetchall()] == ["b"]
    assert [r[0] for r in con.execute("SHOW TABLES").fetchall()] == ["Order", "bounds", "group"]
