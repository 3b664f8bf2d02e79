"""SCRAM-SHA-256-PLUS with tls-server-end-point on the wire server, driven by libpq (psycopg):
``channel_binding=require`` signs in over TLS for RSA and ECDSA certificates (SHA-256 and
SHA-384), the binding data is the certificate's hash under its signature's hash function, and
without a hash RFC 5929 names (Ed25519) or without TLS no binding is offered."""

from __future__ import annotations

import hashlib
import shutil
import ssl
import subprocess

import pytest

pytestmark = [pytest.mark.slow,  # openssl makes the certificates: .ci/run's second step
              pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl makes the test certificates")]

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install '.[test]')")

from pgwire_support import dsn, make_database  # noqa: E402

from provsql_dp.interfaces.pgwire import WireServer, tls_context  # noqa: E402
from provsql_dp.interfaces.pgwire._scram import tls_server_end_point  # noqa: E402
from provsql_dp.interfaces.web.engine import Engine  # noqa: E402

KEYS = {"rsa": ["-newkey", "rsa:2048"], "ec": ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"],
        "ed25519": ["-newkey", "ed25519"]}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("cb") / "cb.duckdb")
    make_database(path)
    return path


def certificate(tmp_path, kind: str, digest: str = "-sha256"):
    cert, key = tmp_path / f"{kind}{digest}.pem", tmp_path / f"{kind}{digest}.key"
    extra = [] if kind == "ed25519" else [digest]
    subprocess.run(["openssl", "req", "-x509", *KEYS[kind], *extra, "-nodes", "-days", "1", "-subj",
                    "/CN=localhost", "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    return str(cert), str(key)


def serving(db, cert, key):
    engine = Engine(db)
    return engine, WireServer(engine, "127.0.0.1", 0, tls=tls_context(cert, key)).start()


@pytest.mark.parametrize("kind, digest", [("rsa", "-sha256"), ("rsa", "-sha384"), ("ec", "-sha256")])
def test_channel_binding_required_signs_in(db, tmp_path, kind, digest):
    cert, key = certificate(tmp_path, kind, digest)
    with open(cert) as f:
        der = ssl.PEM_cert_to_DER_cert(f.read())
    assert tls_server_end_point(der) == hashlib.new(digest[1:], der).digest()
    engine, srv = serving(db, cert, key)
    try:
        with psycopg.connect(dsn(srv, "ann", sslmode="require", channel_binding="require"),
                             autocommit=True) as c:
            assert c.pgconn.ssl_in_use
            assert c.execute("SELECT floor FROM depts WHERE name = 'd1'").fetchone() == (2,)
        with pytest.raises(psycopg.OperationalError) as e:  # the proof is checked with the binding
            psycopg.connect(dsn(srv, "ann", password="wrong", sslmode="require", channel_binding="require"))
        assert "password authentication failed" in str(e.value)
        with psycopg.connect(dsn(srv, "ann", sslmode="require", channel_binding="disable")) as c:
            assert c.execute("SELECT 1").fetchone() == (1,)  # plain SCRAM is still offered
    finally:
        srv.close()
        engine.close()


def test_no_binding_without_a_named_hash_or_without_tls(db, tmp_path):
    cert, key = certificate(tmp_path, "ed25519")
    with open(cert) as f:
        assert tls_server_end_point(ssl.PEM_cert_to_DER_cert(f.read())) is None
    engine, srv = serving(db, cert, key)
    try:
        with pytest.raises(psycopg.OperationalError) as e:
            psycopg.connect(dsn(srv, "ann", sslmode="require", channel_binding="require"))
        assert "channel binding" in str(e.value)
        with psycopg.connect(dsn(srv, "ann", sslmode="require", channel_binding="prefer")) as c:
            assert c.execute("SELECT 1").fetchone() == (1,)
        with pytest.raises(psycopg.OperationalError):  # no TLS: nothing to bind to
            psycopg.connect(dsn(srv, "ann", sslmode="disable", channel_binding="require"))
    finally:
        srv.close()
        engine.close()
