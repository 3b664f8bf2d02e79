"""Over the wire, a private GROUP BY's keys carry their column's PostgreSQL type: psycopg sees
an ``int4`` key as ``int``, a ``date`` key as ``datetime.date``, a binned ``ROUND(x, -1)`` as
``float8`` — in text and in binary results — where RowDescription said ``text`` for every key
(the routes described their keys as VARCHAR; :mod:`provsql_dp.privacy.key_types`)."""

from __future__ import annotations

import datetime

import pytest

pytestmark = pytest.mark.slow  # real clients end to end: .ci/run's second step

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install '.[test]')")

import provsql_dp  # noqa: E402
from provsql_dp.interfaces.web import accounts  # noqa: E402
from pgwire_support import PASSWORDS, dsn, running_server, spent  # noqa: E402

INT4, DATE, FLOAT8, INT8, TEXT = 23, 1082, 701, 20, 25


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("pgwire_keys") / "keys.duckdb")
    con = provsql_dp.connect(path)
    con.execute("CREATE TABLE t(id INT PRIMARY KEY, g INT, d DATE, x DOUBLE, k VARCHAR)")
    con.execute("INSERT INTO t SELECT i, i % 3, DATE '2020-01-01' + (i % 2)::INT, i % 40, "
                "'k' || (i % 2) FROM range(600) r(i)")
    con.execute("PROTECT TABLE t")
    con.execute("SET GROUP KEYS ON t (g) VALUES (0, 1, 2)")
    con.execute("SET GROUP KEYS ON t (d) VALUES ('2020-01-01', '2020-01-02')")
    con.execute("SET GROUP KEYS ON t (k) VALUES ('k0', 'k1')")
    con.execute("SET PRIVACY BUDGET EPSILON 50 DELTA 1e-3 FOR USER 'ann'")
    accounts.add_account(con._duck, "ann", "analyst", PASSWORDS["ann"])
    accounts.add_account(con._duck, "cu", "curator", PASSWORDS["cu"])
    con.commit()
    con.close()
    with running_server(path) as srv:
        yield srv


@pytest.mark.parametrize("binary", [False, True])
def test_int_and_date_keys_have_their_types_in_text_and_binary(server, binary):
    with psycopg.connect(dsn(server, "ann"), autocommit=True) as c:
        c.execute("SET provsql_dp.interval_columns = off")
        cur = c.execute("SELECT g, d, k, COUNT(*) FROM t GROUP BY g, d, k WITH EPSILON 1",
                        binary=binary)
        assert [x.type_code for x in cur.description] == [INT4, DATE, TEXT, INT8]
        rows = cur.fetchall()
        assert [r[:3] for r in rows[:2]] == [(0, datetime.date(2020, 1, 1), "k0"),
                                             (0, datetime.date(2020, 1, 1), "k1")]
        assert all(isinstance(r[3], int) for r in rows)


@pytest.mark.parametrize("binary", [False, True])
def test_partition_selection_and_declared_keys_under_delta(server, binary):
    with psycopg.connect(dsn(server, "ann"), autocommit=True) as c:
        c.execute("SET provsql_dp.interval_columns = off")
        cur = c.execute("SELECT ROUND(x, -1) AS b, COUNT(*) FROM t GROUP BY ROUND(x, -1) "
                        "WITH EPSILON 1 DELTA 1e-6", binary=binary)
        assert [x.type_code for x in cur.description] == [FLOAT8, INT8]
        keys = [r[0] for r in cur.fetchall()]
        assert keys and all(isinstance(v, float) for v in keys)
        cur = c.execute("SELECT g, COUNT(*) FROM t GROUP BY g WITH EPSILON 1 DELTA 1e-6",
                        binary=binary)
        assert [x.type_code for x in cur.description] == [INT4, INT8]
        assert [r[0] for r in cur.fetchall()] == [0, 1, 2]


def test_a_refused_grouping_spends_nothing(server):
    before = spent(server.engine, "ann")
    with psycopg.connect(dsn(server, "ann"), autocommit=True) as c:
        with pytest.raises(psycopg.Error):
            c.execute("SELECT x, COUNT(*) FROM t GROUP BY x WITH EPSILON 1")
    assert spent(server.engine, "ann") == before
