"""``x <> ALL(list)`` — the negation of ``x = ANY(list)``, PostgreSQL's idiom for "none of these" —
is planned as ``NOT x IN (…)`` (an empty list: true), with a list parameter or a list written out,
in analysts' public queries and in private ones, where ``NOT IN`` of literals is a filter on each
row's own value as ``IN`` is. It was refused: ``all()`` is no allowed function, and a list
parameter was bound only for ``= ANY``."""

from __future__ import annotations

import pytest

import provsql_dp


@pytest.fixture
def cons(tmp_path):
    path = str(tmp_path / "all.duckdb")
    cur = provsql_dp.connect(path)
    cur.execute("CREATE TABLE t(id INT PRIMARY KEY, g INT)")
    cur.execute("INSERT INTO t SELECT i, i % 5 FROM range(1000) r(i)")
    cur.execute("CREATE TABLE pub(x INT)")
    cur.execute("INSERT INTO pub VALUES (1), (2), (3), (NULL)")
    cur.execute("PROTECT TABLE t; SET PRIVACY BUDGET 100 FOR USER 'ann'")
    cur.commit()
    cur.close()
    an = provsql_dp.connect(path, role="analyst", user="ann")
    yield an
    an.close()


@pytest.mark.parametrize("sql, params, rows", [
    ("SELECT x FROM pub WHERE x <> ALL(?) ORDER BY x", [[1, 3]], [(2,)]),
    ("SELECT x FROM pub WHERE x <> ALL([1, 3]) ORDER BY x", None, [(2,)]),
    ("SELECT x FROM pub WHERE x <> ALL(?) ORDER BY x", [[]], [(1,), (2,), (3,), (None,)]),
    ("SELECT x FROM pub WHERE x <> ALL(?) ORDER BY x", [[1, None]], []),  # NULL: unknown
])
def test_public_all_is_not_in(cons, sql, params, rows):
    assert cons.execute(sql, params).fetchall() == rows


def test_private_all_is_not_in_and_charged_once(cons):
    cur = cons.execute("SELECT COUNT(*) FROM t WHERE g <> ALL(?) WITH EPSILON 1", [[0, 1]])
    (n,), = cur.fetchall()
    assert abs(n - 600) < 60
    assert cons.ledger.remaining("ann") == 99


def test_a_list_elsewhere_is_refused_by_number_and_charges_nothing(cons):
    with pytest.raises(provsql_dp.ProgrammingError, match=r"\$1 is a list.*x <> ALL\(\?\)"):
        cons.execute("SELECT COUNT(*) FROM t WHERE g > ? WITH EPSILON 1", [[0, 1]])
    assert cons.ledger.remaining("ann") == 100
