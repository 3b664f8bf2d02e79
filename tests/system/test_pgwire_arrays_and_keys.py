"""The wire server speaks PostgreSQL's arrays and reports primary keys as PostgreSQL does.

A DuckDB list of a scalar type went to clients as JSON text under the ``text`` OID (psycopg gave
back the string ``'[1, 2]'``); it is now PostgreSQL's array of the element's type, in the text
and in the binary format, so psycopg gives back a Python list of the element's Python values.
And SQLAlchemy's primary-key reflection found none: DuckDB's ``pg_constraint`` numbers columns
from 0 and backs no constraint by a ``pg_index`` row; the replica's compatibility views number
them as ``pg_attribute`` does and list each primary key and UNIQUE constraint as an index."""

from __future__ import annotations

import datetime
import decimal

import pytest

from pgwire_support import dsn, make_database, running_server

psycopg = pytest.importorskip("psycopg")
pytestmark = pytest.mark.slow  # a server and its clients: .ci/run's second step

QUERY = ("SELECT [1, NULL, 3] AS a, ['x y', NULL, '', 'q\"', 'NULL', 'a\\b', '{}', 'x,y'] AS b, "
         "[DATE '2020-01-02'] AS d, []::INTEGER[] AS e, [[1, 2], [3]] AS n, "
         "[1.5, 2.25]::DECIMAL(5,2)[] AS m, [true, false] AS t, [1.5::DOUBLE, NULL] AS f, "
         "[9007199254740993]::BIGINT[] AS big")
EXPECTED = ([1, None, 3], ["x y", None, "", 'q"', "NULL", "a\\b", "{}", "x,y"],
            [datetime.date(2020, 1, 2)], [], "[[1, 2], [3]]",
            [decimal.Decimal("1.50"), decimal.Decimal("2.25")], [True, False], [1.5, None],
            [9007199254740993])


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("pgwire_arrays") / "arrays.duckdb")
    make_database(path)
    with running_server(path) as srv:
        yield srv


@pytest.mark.parametrize("binary", [False, True])
def test_lists_are_postgresql_arrays(server, binary):
    with psycopg.connect(dsn(server, "cu"), autocommit=True) as c:
        cur = c.cursor(binary=binary)
        row = cur.execute(QUERY).fetchone()
        assert row == EXPECTED
        oids = [d.type_code for d in cur.description]
        assert oids == [1007, 1009, 1182, 1007, 25, 1231, 1000, 1022, 1016]


def test_sqlalchemy_reflects_primary_keys(server):
    sa = pytest.importorskip("sqlalchemy")
    engine = sa.create_engine(f"postgresql+psycopg://ann:ann-password@127.0.0.1:{server.port}/demo")
    try:
        insp = sa.inspect(engine)
        assert insp.get_pk_constraint("emp")["constrained_columns"] == ["id"]
        assert insp.get_pk_constraint("depts")["constrained_columns"] == []
        cols = {c["name"]: c["nullable"] for c in insp.get_columns("emp")}
        assert cols == {"id": False, "dept": True, "salary": True}
    finally:
        engine.dispose()


@pytest.mark.parametrize("binary", [False, True])
def test_a_list_parameter_is_an_array(server, binary):
    """psycopg sends a Python list as a typed array parameter (``int2[]``, ``text[]`` in the
    binary format, ``%b``): it arrives as a list (it arrived as the text ``'{1,2}'``), so
    ``x = ANY(%s)`` works as in PostgreSQL. (A list of strings in the text format psycopg sends
    untyped, OID 0, leaving the type to PostgreSQL's inference: it arrives as text.)"""
    mark = "%b" if binary else "%s"
    with psycopg.connect(dsn(server, "cu"), autocommit=True) as c:
        cur = c.cursor(binary=binary)
        assert cur.execute(f"SELECT x FROM pub WHERE x = ANY({mark}) ORDER BY x",
                           [[3, 1, 2999]]).fetchall() == [(1,), (3,), (2999,)]
        assert cur.execute("SELECT name FROM depts WHERE name = ANY(%b) ORDER BY 1",
                           [["d1", "d2", 'no "such", dept', None]]).fetchall() == [("d1",), ("d2",)]
        assert cur.execute(f"SELECT {mark}::INTEGER[] AS a", [[5, None]]).fetchone() == ([5, None],)


def test_an_analysts_private_query_takes_a_list(server):
    """Through the wire too: an analyst's ``= ANY(%s)`` is planned as ``IN (…)`` and charged."""
    with psycopg.connect(dsn(server, "bob"), autocommit=True) as c:
        rows = c.execute("SELECT COUNT(*) FROM emp WHERE dept = ANY(%b) WITH EPSILON 0.5",
                         [["d0", "d1"]]).fetchall()
        assert len(rows) == 1 and abs(rows[0][0] - 134) < 40  # 67 + 67 of 200
        with pytest.raises(psycopg.Error, match="a list is bound only as the list of"):
            c.execute("SELECT COUNT(*) FROM emp WHERE salary > %s WITH EPSILON 0.5", [[1, 2]])
