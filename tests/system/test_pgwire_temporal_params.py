"""``timestamptz``, ``time`` and ``interval`` parameters from asyncpg and psycopg.

A ``$1`` compared with a TIMESTAMPTZ, TIME or INTERVAL column was described ``text``, so asyncpg
refused a Python ``datetime``/``time``/``timedelta`` ("expected str, got datetime"), and Bind read a
binary ``timestamptz`` as a naive datetime. They are now described with their PostgreSQL OIDs and
read in both formats (:mod:`provsql_dp.interfaces.pgwire._temporal`); a ``timestamptz`` in text
without an offset is read in the session's ``TimeZone``, as PostgreSQL reads it."""

from __future__ import annotations

import asyncio
import datetime
from fractions import Fraction

import pytest

from pgwire_support import PASSWORDS, asyncpg_run, dsn, ledger_rows, served, spent

pytestmark = pytest.mark.slow  # a server and its clients: .ci/run's second step

asyncpg = pytest.importorskip("asyncpg", reason="asyncpg is not installed (pip install '.[test]')")
psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install '.[test]')")

UTC = datetime.timezone.utc
PARIS = datetime.timezone(datetime.timedelta(hours=2))  # Europe/Paris in June


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    yield from served(
        tmp_path_factory, "pgwire_temporal",
        "CREATE TABLE moments(id INT, ts TIMESTAMPTZ, t TIME, d INTERVAL, day DATE)",
        "INSERT INTO moments VALUES "
        "(1, '2020-06-01 10:00:00+00', '10:30:00', INTERVAL 2 HOUR, '2020-06-01'), "
        "(2, '2020-06-02 10:00:00+00', '11:00:00', INTERVAL 3 DAY, '2020-06-02'), "
        "(3, '2020-06-03 10:00:00+00', '12:00:00.25', INTERVAL 1 MONTH, '2020-06-03')",
        "CREATE TABLE logins(id INT PRIMARY KEY, ts TIMESTAMPTZ, took INTERVAL)",
        "INSERT INTO logins SELECT i, TIMESTAMPTZ '2020-06-01 00:00:00+00' + i * "
        "INTERVAL 1 HOUR, i * INTERVAL 1 MINUTE FROM range(200) r(i)",
        "PROTECT TABLE logins")


def test_asyncpg_binary_parameters_described_and_read(server):
    async def body(c):
        stmt = await c.prepare("SELECT id FROM moments WHERE ts = $1 OR t = $2 OR d = $3 "
                               "OR day = $4 ORDER BY id")
        kinds = [p.name for p in stmt.get_parameters()]
        rows = await stmt.fetch(datetime.datetime(2020, 6, 1, 12, tzinfo=PARIS),  # 10:00 UTC
                                datetime.time(11), datetime.timedelta(days=3),
                                datetime.date(2020, 6, 9))
        later = await c.fetch("SELECT id FROM moments WHERE ts > $1 AND t >= $2 ORDER BY id",
                              datetime.datetime(2020, 6, 1, 10, 0, 1, tzinfo=UTC),
                              datetime.time(11, 59, 59))
        hours = await c.fetch("SELECT id FROM moments WHERE d < $1 ORDER BY id",
                              datetime.timedelta(hours=2, microseconds=1))
        return kinds, [r[0] for r in rows], [r[0] for r in later], [r[0] for r in hours]
    kinds, rows, later, hours = asyncpg_run(server, "ann", body)
    assert kinds == ["timestamptz", "time", "interval", "date"]
    assert rows == [1, 2] and later == [3] and hours == [1]


def test_asyncpg_text_format_in_the_session_time_zone(server):
    """asyncpg sends a ``timestamptz`` in text when the program says so; without an offset it is
    read in the session's TimeZone: 12:00 in Paris is 10:00 UTC (PostgreSQL's reading)."""
    async def body(c):
        await c.set_type_codec("timestamptz", schema="pg_catalog", encoder=str, decoder=str,
                               format="text")
        await c.set_type_codec("interval", schema="pg_catalog", encoder=str, decoder=str,
                               format="text")
        await c.execute("SET TimeZone = 'Europe/Paris'")
        paris = await c.fetch("SELECT id FROM moments WHERE ts = $1", "2020-06-01 12:00:00")
        offset = await c.fetch("SELECT id FROM moments WHERE ts = $1", "2020-06-02 10:00:00+00")
        month = await c.fetch("SELECT id FROM moments WHERE d = $1", "1 mon")
        await c.execute("SET TimeZone = 'UTC'")
        utc = await c.fetch("SELECT id FROM moments WHERE ts = $1", "2020-06-03 10:00:00")
        return [r[0] for r in paris + offset + month + utc]
    assert asyncpg_run(server, "ann", body) == [1, 2, 3, 3]


def test_psycopg_text_and_binary_parameters(server):
    with psycopg.connect(dsn(server, "ann"), autocommit=True) as c:
        for mark in ("%s", "%b"):  # text, binary
            rows = c.execute(f"SELECT id FROM moments WHERE ts = {mark} OR t = {mark} "
                             f"OR d = {mark} ORDER BY id",
                             [datetime.datetime(2020, 6, 1, 12, tzinfo=PARIS),
                              datetime.time(12, 0, 0, 250000),
                              datetime.timedelta(days=3)]).fetchall()
            assert [r[0] for r in rows] == [1, 2, 3], mark


def test_private_query_with_temporal_parameters_charged_once(server):
    before = Fraction(spent(server.engine, "bob"))

    async def body(c):
        await c.execute("SET provsql_dp.interval_columns = off")
        early = await c.fetchval("SELECT COUNT(*) FROM logins WHERE ts < $1 WITH EPSILON 0.5",
                                 datetime.datetime(2020, 6, 3, 2, tzinfo=PARIS))  # 00:00 UTC
        quick = await c.fetchval("SELECT COUNT(*) FROM logins WHERE took <= $1 WITH EPSILON 0.5",
                                 datetime.timedelta(minutes=99))
        return early, quick
    early, quick = asyncpg_run(server, "bob", body)
    assert abs(early - 48) < 30 and abs(quick - 100) < 30
    assert Fraction(spent(server.engine, "bob")) == before + 1


def test_bad_temporal_input_is_refused_with_nothing_charged(server):
    before = ledger_rows(server.engine)

    async def body(c):
        await c.set_type_codec("interval", schema="pg_catalog", encoder=str, decoder=str,
                               format="text")
        with pytest.raises(asyncpg.PostgresError, match="not PostgreSQL's text of an interval"):
            await c.fetchval("SELECT COUNT(*) FROM logins WHERE took <= $1 WITH EPSILON 0.5",
                             "P1D")
        with pytest.raises(asyncpg.PostgresError, match="time zone 'Mars/Olympus' is not known"):
            await c.execute("SET TimeZone = 'Mars/Olympus'")
        return await c.fetchval("SHOW TimeZone")
    assert asyncpg_run(server, "ann", body) == "UTC"
    assert ledger_rows(server.engine) == before


def test_instants_are_shown_in_the_session_time_zone(server):
    """``SET TimeZone`` is reported to the client (ParameterStatus, as PostgreSQL does) and a
    ``timestamptz`` in text is shown in it: psycopg gives the same instant at +02:00 in text and
    in binary (where it converts by the reported zone)."""
    with psycopg.connect(dsn(server, "ann"), autocommit=True) as c:
        c.execute("SET TimeZone = 'Europe/Paris'")
        assert c.info.parameter_status("TimeZone") == "Europe/Paris"
        for binary in (False, True):
            (ts,), = c.execute("SELECT ts FROM moments WHERE id = 1", binary=binary).fetchall()
            assert ts == datetime.datetime(2020, 6, 1, 10, tzinfo=UTC), binary
            assert ts.utcoffset() == datetime.timedelta(hours=2), binary


def test_time_zone_as_a_start_up_option(server):
    async def body(c):
        await c.set_type_codec("timestamptz", schema="pg_catalog", encoder=str, decoder=str,
                               format="text")
        return await c.fetchval("SELECT id FROM moments WHERE ts = $1", "2020-06-02 12:00:00")

    async def main(tz):
        c = await asyncpg.connect(host="127.0.0.1", port=server.port, user="ann",
                                  password=PASSWORDS["ann"], database="demo", ssl=False,
                                  server_settings={"TimeZone": tz})
        try:
            return await body(c)
        finally:
            await c.close()
    assert asyncio.run(main("Europe/Paris")) == 2
    with pytest.raises(asyncpg.PostgresError, match="time zone 'Nowhere/Land' is not known"):
        asyncio.run(main("Nowhere/Land"))
