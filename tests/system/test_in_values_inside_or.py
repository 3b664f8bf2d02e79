"""``x IN (VALUES …)`` is a semi-join with a public relation, answered as a condition of WHERE
joined to the others by AND; inside OR (or NOT, or a comparison) it is refused by its own name,
in one sentence with the list to write instead — not as "a subquery" — and nothing changes."""

from __future__ import annotations

import pytest

import provsql_dp
from conftest import declared_state

WAY = ("is not supported in a private query: it is a semi-join, answered only as a condition of "
       "WHERE joined to the others by AND; inside {w}, list the values instead: {fix}")


def _make():
    con = provsql_dp.connect(":memory:")
    con.execute("CREATE TABLE t(id INT PRIMARY KEY, dept VARCHAR, g INT)")
    con.execute("INSERT INTO t SELECT range, 'd' || (range % 3), range % 4 FROM range(300)")
    con.execute("PROTECT TABLE t; SET PRIVACY BUDGET 1e9")
    return con


@pytest.mark.parametrize("where, inside, fix", [
    ("g IN (VALUES (1), (2)) OR dept = 'd0'", "OR", "g IN (1, 2)"),
    ("dept = 'd1' AND (dept = 'd0' OR g IN (VALUES (3)))", "OR", "g IN (3)"),
    ("NOT (g IN (VALUES (1)) OR dept = 'd0')", "OR", "g IN (1)"),
    ("(g, dept) IN (VALUES (1, 'd1'), (2, 'd2'), (3, 'd0'), (0, 'd0')) OR g = 0", "OR",
     "(g, dept) IN ((1, 'd1'), (2, 'd2'), (3, 'd0'), …)"),
    ("(g IN (VALUES (1))) = true", "an expression", "g IN (1)"),
])
def test_in_values_inside_or_is_refused_by_name_with_the_list_to_write(where, inside, fix):
    con = _make()
    before = declared_state(con)
    with pytest.raises(provsql_dp.UnsupportedQueryError) as err:
        con.execute(f"SELECT count(*) FROM t WHERE {where} WITH EPSILON 1")
    assert str(err.value) == f"IN (VALUES …) inside {inside} " + WAY.format(w=inside, fix=fix)
    assert declared_state(con) == before  # nothing charged, nothing declared


@pytest.mark.parametrize("where", [
    "g IN (1, 2) OR dept = 'd0'",
    "(g, dept) IN ((1, 'd1'), (2, 'd2')) OR g = 0",
])
def test_the_list_it_names_is_answered(where):
    con = _make()
    truth = con._duck.execute(f"SELECT count(*) FROM t WHERE {where}").fetchone()[0]
    cur = con.execute(f"SELECT count(*) FROM t WHERE {where} WITH EPSILON 1000")
    assert cur.fetchone()[0] == truth  # ε 1000: the noise (scale 10^-3) rounds away


def test_a_real_subquery_inside_or_keeps_the_subquery_refusal():
    con = _make()
    with pytest.raises(provsql_dp.UnsupportedQueryError, match=r"^a subquery in .* \(not inside OR"):
        con.execute("SELECT count(*) FROM t WHERE g IN (VALUES (1)) OR g IN (SELECT 2) "
                    "WITH EPSILON 1")
