"""The wire server's parts without a socket: SCRAM against RFC 7677's test vector, value
encodings, SQLSTATEs, which statements are catalog queries, message framing."""

from __future__ import annotations

import base64
import datetime
import decimal
import struct

import pytest

from provsql_dp import errors
from provsql_dp.interfaces.pgwire import _messages as m
from provsql_dp.interfaces.pgwire._catalog import compatible, is_catalog_query
from provsql_dp.interfaces.pgwire._scram import Exchange, ScramError
from provsql_dp.interfaces.pgwire._sqlstate import sqlstate
from provsql_dp.interfaces.pgwire._types import decode_param, encode_binary, encode_text, type_oid
from provsql_dp.interfaces.web.accounts import Verifier, salted_keys


def test_scram_sha256_rfc7677_test_vector():
    salt = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
    v = Verifier("analyst", salt, 4096, *salted_keys("pencil", salt, 4096))
    ex = Exchange(v, b"secret")
    first = ex.server_first("n,,n=user,r=rOprNGfwEbeRWgbNEkqO", server_nonce="%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0")
    assert first == "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    final = ex.client_final("c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                            "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
    assert final == "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def test_scram_refuses_tampering_and_unknown_accounts():
    salt = b"s" * 16
    v = Verifier("analyst", salt, 4096, *salted_keys("pencil", salt, 4096))
    ex = Exchange(v, b"secret")
    ex.server_first("n,,n=,r=abc")
    with pytest.raises(ScramError):
        ex.client_final("c=biws,r=abcOTHER,p=AAAA")  # the nonce must be the server's
    with pytest.raises(ScramError):
        Exchange(v, b"secret").server_first("p=tls-server-end-point,,n=,r=abc")  # no channel binding
    decoy = Exchange(None, b"secret", "nobody")
    first = decoy.server_first("n,,n=,r=abc")
    assert first == Exchange(None, b"secret", "nobody").server_first("n,,n=,r=abc", first.split(",")[0][5:])
    from provsql_dp.interfaces.pgwire._scram import client_final_for
    assert decoy.client_final(client_final_for("pencil", "n,,n=,r=abc", first)) is None


@pytest.mark.parametrize("oid, value", [
    (21, -7), (23, 2 ** 31 - 1), (20, -2 ** 63), (701, 2.5), (16, True), (17, b"\x00\xff"),
    (1082, datetime.date(1999, 12, 31)), (1114, datetime.datetime(2026, 11, 28, 13, 5, 1, 250000)),
])
def test_binary_encodings_round_trip(oid, value):
    assert decode_param(oid, encode_binary(value, oid), 1) == value


@pytest.mark.parametrize("text", ["12345.678", "-0.5000", "0", "0.00", "100000000", "0.0001", "-98765432.1",
                                  "1E+5", "3.14159265358979323846"])
def test_numeric_binary_round_trip(text):
    assert decode_param(1700, encode_binary(decimal.Decimal(text), 1700), 1) == decimal.Decimal(text)


def test_numeric_binary_and_text_parameters():
    # 12345.678 as PostgreSQL sends NUMERIC in binary: digits 1, 2345, 6780; weight 1; scale 3
    data = struct.pack("!hhHH3H", 3, 1, 0, 3, 1, 2345, 6780)
    assert decode_param(1700, data, 1) == decimal.Decimal("12345.678")
    neg = struct.pack("!hhHH1H", 1, -1, 0x4000, 4, 5000)
    assert decode_param(1700, neg, 1) == decimal.Decimal("-0.5000")
    assert decode_param(1700, b"3.25", 0) == decimal.Decimal("3.25")
    assert decode_param(16, b"t", 0) is True and decode_param(0, b"x'; DROP", 0) == "x'; DROP"
    assert encode_text(float("inf")) == b"Infinity" and encode_text(datetime.timedelta(days=1, seconds=5)) \
        == b"1 days 00:00:05"
    assert type_oid("TIMESTAMP WITH TIME ZONE") == 1184 and type_oid("INTEGER[]") == 1007 and type_oid("INTEGER[][]") == 25


def test_sqlstate_of_each_error_class():
    assert sqlstate(errors.PrivacyError("x")) == "42501"
    assert sqlstate(errors.BudgetExceededError("x")) == "53400"
    assert sqlstate(errors.UnsupportedQueryError("x")) == "0A000"
    assert sqlstate(errors.DeclarationError("x")) == "42P17"
    assert sqlstate(errors.ProgrammingError("Catalog Error: Table with name t does not exist!")) == "42P01"
    assert sqlstate(errors.ProgrammingError("no SQL statement to execute")) == "42000"
    assert sqlstate(errors.DataError("x")) == "22000" and sqlstate(errors.IntegrityError("x")) == "23000"
    assert sqlstate(errors.SolverError("x")) == "XX000" and sqlstate(errors.OperationalError("x")) == "58000"
    assert sqlstate(errors.CaptureTooLarge(10)) == "54000" and sqlstate(ValueError("x")) == "XX000"


def test_catalog_queries_are_told_apart_from_ours():
    assert is_catalog_query("SELECT * FROM information_schema.tables")
    assert is_catalog_query("  (SELECT c.oid FROM pg_class c)")
    assert is_catalog_query("SELECT current_schema()") and is_catalog_query("select version()")
    assert not is_catalog_query("SELECT COUNT(*) FROM pg_class WITH EPSILON 1")  # a private query is ours
    assert not is_catalog_query("SELECT versions FROM t")
    assert not is_catalog_query("DELETE FROM pg_catalog.pg_class")  # only queries go to the replica
    # a query that also names a table of the database is not answered from the rowless replica
    assert not is_catalog_query("SELECT * FROM emp WHERE version() IS NOT NULL")
    assert not is_catalog_query("SELECT e.id FROM emp e JOIN pg_catalog.pg_class c ON true")
    assert is_catalog_query("WITH n AS (SELECT oid FROM pg_namespace) SELECT * FROM n, unnest([1])")
    assert compatible("SELECT x::pg_catalog.regtype::pg_catalog.text FROM pg_catalog.pg_type") == \
        "SELECT x::text FROM pg_type"


def test_message_framing():
    assert m.data_row([b"1", None]) == b"D" + struct.pack("!ihi", 15, 2, 1) + b"1" + struct.pack("!i", -1)
    err = m.error_response("42501", "no", "try this")
    assert err.startswith(b"E") and b"C42501\0" in err and b"Htry this\0" in err
    r = m.Reader(b"name\0" + struct.pack("!hi", 2, -1))
    assert (r.cstring(), r.int16(), r.int32()) == ("name", 2, -1)
    with pytest.raises(ValueError):
        m.Reader(b"ab").bytes(3)
