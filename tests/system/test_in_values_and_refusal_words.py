"""``x IN (VALUES (1), (2))`` in a private statement is a semi-join with a public relation, as
any VALUES list (issue 28 item 5), and answers what plain DuckDB answers; a statement word that
sqlglot reads as an expression (``LISTEN ch``) is refused by its own name, nothing changed."""

from __future__ import annotations

import pytest

import provsql_dp
from conftest import declared_state
from provsql_dp.errors import PrivacyError


def _make(path=":memory:"):
    con = provsql_dp.connect(path)
    con.execute("CREATE TABLE t(id INT PRIMARY KEY, dept VARCHAR, g INT)")
    con.execute("INSERT INTO t SELECT range, 'd' || (range % 3), "
                "CASE WHEN range % 7 = 0 THEN NULL ELSE range % 4 END FROM range(300)")
    con.execute("PROTECT TABLE t; SET PRIVACY BUDGET 1e9")
    return con


@pytest.mark.parametrize("where", [
    "g IN (VALUES (1), (2))",
    "g NOT IN (VALUES (1), (2))",
    "g NOT IN (VALUES (1), (NULL))",
    "(g, dept) IN (VALUES (1, 'd1'), (0, 'd2'), (3, 'd9'))",
    "g IN (VALUES (1), (3)) AND dept IN (VALUES ('d0'), ('d2'))",
])
def test_in_values_answers_the_count_duckdb_answers(where):
    con = _make()
    truth = con._duck.execute(f"SELECT count(*) FROM t WHERE {where}").fetchone()[0]
    # ε 1000: the Laplace noise (scale 10^-3) rounds away, so the released count is the truth
    cur = con.execute(f"SELECT count(*) FROM t WHERE {where} WITH EPSILON 1000")
    assert cur.fetchone()[0] == truth
    assert cur.privacy.mechanism == "laplace"


def test_in_values_of_the_wrong_width_is_refused_by_its_widths_and_spends_nothing():
    con = _make()
    before = declared_state(con)
    with pytest.raises(provsql_dp.ProgrammingError, match="IN compares 1 value"):
        con.execute("SELECT count(*) FROM t WHERE g IN (VALUES (1, 2)) WITH EPSILON 1")
    assert declared_state(con) == before


def test_in_values_inside_an_expression_is_refused_by_name_and_spends_nothing():
    con = _make()
    before = declared_state(con)
    with pytest.raises(provsql_dp.UnsupportedQueryError,
                       match=r"IN \(VALUES …\) inside an expression .* list the values"):
        con.execute("SELECT sum(CASE WHEN g IN (VALUES (1)) THEN 1 ELSE 0 END) FROM t "
                    "WITH EPSILON 1")
    assert declared_state(con) == before


@pytest.mark.parametrize("stmt, word", [("LISTEN ch", "LISTEN"), ("UNLISTEN ch", "UNLISTEN"),
                                        ("NOTIFY ch", "NOTIFY"), ("CHECKPOINT", "CHECKPOINT")])
def test_an_analysts_statement_is_refused_by_its_own_word(tmp_path, stmt, word):
    path = str(tmp_path / "t.duckdb")
    _make(path).close()
    con = provsql_dp.connect(path, role="analyst", user="ann")
    with pytest.raises(PrivacyError, match=f"an analyst cannot run {word}:") as e:
        con.execute(stmt)
    assert "ALIAS" not in str(e.value) and "COLUMN" not in str(e.value)
