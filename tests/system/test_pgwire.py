"""The wire server driven by psycopg (libpq's protocol): simple and extended query, parameters,
roles, refusals with their SQLSTATE, budgets, sign-in, TLS, cancel, limits and catalog queries."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
import time

import pytest

pytestmark = pytest.mark.slow  # real clients end to end: .ci/run's second step

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install '.[test]')")

from pgwire_support import dsn, make_database, running_server, spent  # noqa: E402


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("pgwire") / "wire.duckdb")
    make_database(path)
    return path


@pytest.fixture(scope="module")
def server(db):
    with running_server(db, max_concurrent=1) as srv:
        yield srv


def test_analyst_private_count_with_intervals_notice_and_last_release(server):
    notices = []
    with psycopg.connect(dsn(server, "ann"), autocommit=True) as c:
        c.add_notice_handler(lambda d: notices.append(d.message_primary))
        cur = c.execute("SELECT COUNT(*) AS n FROM emp WITH EPSILON 0.25")
        assert [d.name for d in cur.description] == ["n", "n_low", "n_high"]
        assert [d.type_code for d in cur.description] == [20, 701, 701]
        n, lo, hi = cur.fetchone()
        assert isinstance(n, int) and lo <= n <= hi
        assert notices and "ε charged 0.25" in notices[-1]
        rows = c.execute("SHOW LAST RELEASE").fetchall()
        assert rows[0][:5] == ("laplace", 0.25, rows[0][2], 1, "n") and rows[0][5:7] == (lo, hi)
        assert rows[0][8] == "the true count"
        c.execute("SET provsql_dp.interval_columns = off")
        cur = c.execute("SELECT COUNT(*) AS n FROM emp WITH EPSILON 0.25")
        assert [d.name for d in cur.description] == ["n"]
        assert c.execute("SHOW PRIVACY BUDGET").fetchone()[1:] == ("3", "0.5", "2.5")
    assert spent(server.engine, "ann") == "1/2"


def test_extended_protocol_parameters_private_and_public(server):
    with psycopg.connect(dsn(server, "bob"), autocommit=True) as c:
        cur = c.execute("SELECT dept, COUNT(*) AS n FROM emp WHERE salary > %s GROUP BY dept "
                        "WITH EPSILON 0.5", [100.0])
        assert [r[0] for r in cur.fetchall()] == ["d0", "d1", "d2"]
        for _ in range(6):  # psycopg prepares the statement server-side after 5 runs
            assert c.execute("SELECT name FROM depts WHERE floor = %s ORDER BY name", [2]).fetchall() == \
                [("d1",), ("d2",)]
        assert c.execute("SELECT %s::VARCHAR AS s, %s AS i, %s AS b", ["O'Hare; DROP", 7, True],
                         prepare=True).fetchone() == ("O'Hare; DROP", 7, True)
        cur = c.execute("SELECT %s AS t", ["x"], binary=True)
        assert cur.fetchone() == ("x",)


def test_a_large_public_result_crosses_in_chunks(server):
    with psycopg.connect(dsn(server, "cu"), autocommit=True) as c:
        rows = c.execute("SELECT range AS i FROM range(25003) ORDER BY i").fetchall()
        assert len(rows) == 25003 and rows[-1] == (25002,)
    with psycopg.connect(dsn(server, "ann"), autocommit=True) as c:
        cur = c.execute("SELECT x FROM pub ORDER BY x")
        assert cur.rowcount == 3000 and cur.fetchall()[-1] == (2999,)


def test_refusals_carry_sqlstate_and_spend_nothing(server):
    with psycopg.connect(dsn(server, "ann"), autocommit=True) as c:
        before = spent(server.engine, "ann")
        with pytest.raises(psycopg.errors.InsufficientPrivilege) as e:
            c.execute("SELECT * FROM emp")
        assert "protected" in str(e.value)
        with pytest.raises(psycopg.errors.ConfigurationLimitExceeded) as e:
            c.execute("SELECT COUNT(*) FROM emp WITH EPSILON 100")
        assert "nothing was spent" in str(e.value)
        with pytest.raises(psycopg.errors.SyntaxError):
            c.execute("SELEC 1")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            c.execute("CREATE TABLE t(x INT)")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            c.execute("SET PRIVACY BUDGET 100 FOR USER 'ann'")
        assert spent(server.engine, "ann") == before
        assert c.execute("SELECT floor FROM depts WHERE name = 'd0'").fetchone() == (1,)  # still usable


def test_curator_reads_writes_and_transactions(server):
    with psycopg.connect(dsn(server, "cu")) as c:  # psycopg's default: a transaction per block
        c.execute("CREATE TABLE IF NOT EXISTS notes(id INT, body VARCHAR)")
        c.execute("INSERT INTO notes VALUES (%s, %s)", [1, "kept"])
        c.commit()
        c.execute("INSERT INTO notes VALUES (2, 'rolled back')")
        c.rollback()
        assert c.execute("SELECT * FROM notes ORDER BY id").fetchall() == [(1, "kept")]
        c.execute("INSERT INTO notes VALUES (3, 'lost with the failed transaction')")
        with pytest.raises(psycopg.errors.UndefinedTable):
            c.execute("SELECT * FROM no_such_table")
        c.rollback()
        assert c.execute("SELECT count(*) FROM notes").fetchone() == (1,)
        assert c.execute("SELECT salary FROM emp WHERE id = 7").fetchone() == (70.0,)
        c.execute("SET PRIVACY BUDGET 1 FOR USER 'cu'")
        cur = c.execute("SELECT COUNT(*) FROM emp WITH EPSILON 0.1")
        assert cur.fetchone()[0] > 0
        c.commit()


def test_sign_in_refused_alike_for_wrong_password_and_unknown_account(server):
    msgs = []
    for user, pw in (("ann", "wrong-password"), ("nobody", "wrong-password")):
        with pytest.raises(psycopg.OperationalError) as e:
            psycopg.connect(dsn(server, user, password=pw))
        msgs.append(str(e.value).replace(user, "U"))
    assert msgs[0] == msgs[1] and "password authentication failed" in msgs[0]


def test_catalog_queries_come_from_a_replica_without_rows(server):
    with psycopg.connect(dsn(server, "ann"), autocommit=True) as c:
        tables = {r[0] for r in c.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall()}
        assert {"emp", "depts", "pub"} <= tables
        everything = c.execute("SELECT table_schema || '.' || table_name FROM information_schema.tables"
                               ).fetchall()
        assert not any("_provsql_dp" in r[0] or "web_accounts" in r[0] for r in everything)
        cols = c.execute("SELECT attname FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c "
                         "ON a.attrelid = c.oid WHERE c.relname = 'emp' ORDER BY attnum").fetchall()
        assert [r[0] for r in cols] == ["id", "dept", "salary"]
        # a query naming a table of the database is no catalog query (the replica has no rows: it
        # answered [] here): it takes every statement's path, where a protected table is refused
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            c.execute("SELECT * FROM emp, pg_catalog.pg_namespace")
        try:
            pub = c.execute("SELECT count(*) FROM pub WHERE pg_catalog.version() IS NOT NULL").fetchall()
        except psycopg.Error as refused:  # refused by the boundary: never the replica's empty answer
            pub = type(refused).__name__
        assert pub != [(0,)], pub
        assert c.execute("SELECT reltuples FROM pg_catalog.pg_class WHERE relname = 'emp'").fetchone() == (0,)
        with pytest.raises(psycopg.errors.UndefinedTable) as e:
            c.execute("SELECT * FROM pg_catalog.pg_no_such_thing")
        assert "answered from the server's catalog" in str(e.value)
        assert "PostgreSQL" in c.execute("SELECT pg_catalog.version()").fetchone()[0]


def _slow(c, sql):
    try:
        c.execute(sql)
    except psycopg.Error as e:
        return e
    return None


SLOW = "SELECT COUNT(*) FROM pub a, pub b, pub c WHERE (a.x * 7 + b.x * 13 + c.x) % 1000003 = 1"


def test_cancel_request_stops_the_statement(server):
    with psycopg.connect(dsn(server, "ann"), autocommit=True) as c:
        out = {}
        t = threading.Thread(target=lambda: out.setdefault("e", _slow(c, SLOW)))
        t.start()
        time.sleep(1.0)
        c.cancel_safe()  # (cancel() would hold the GIL the in-process server needs)
        t.join(30)
        assert not t.is_alive() and isinstance(out["e"], psycopg.errors.QueryCanceled)
        assert c.execute("SELECT 1 AS one").fetchone() == (1,)


def test_disconnect_stops_the_statement_and_the_limit_per_analyst(server):
    client = subprocess.Popen([sys.executable, "-c", f"import psycopg; psycopg.connect({dsn(server, 'bob')!r})"
                               f".execute({SLOW!r})"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    while time.time() < deadline and not server.engine._running.get("bob"):
        time.sleep(0.1)
    assert server.engine._running.get("bob"), "the slow statement did not start"
    before = spent(server.engine, "bob")
    with psycopg.connect(dsn(server, "bob"), autocommit=True) as c2:  # max_concurrent=1 here
        with pytest.raises(psycopg.errors.TooManyConnections) as e:
            c2.execute("SELECT COUNT(*) FROM emp WITH EPSILON 0.1")
        assert "nothing was run or charged" in str(e.value)
    assert spent(server.engine, "bob") == before
    with server.engine.checkout("curator", "_test") as cur:  # the refusal is in the audit log
        assert cur.execute("SELECT client, outcome, epsilon, statement FROM _provsql_dp.audit_log WHERE "
                           "user_name = 'bob' AND reason = 'TooManyStatements'").fetchall() == [
            ("wire", "refused", "0", "SELECT COUNT(*) FROM emp WITH EPSILON 0.1")]
    client.kill()  # the client goes away without a word
    client.wait()
    deadline = time.time() + 20
    while time.time() < deadline and server.engine._running.get("bob"):
        time.sleep(0.1)
    assert not server.engine._running.get("bob")


def test_statement_time_limit(db):
    with running_server(db, statement_timeout=0.5) as srv:
        with psycopg.connect(dsn(srv, "cu"), autocommit=True) as c:
            t0 = time.time()
            with pytest.raises(psycopg.errors.QueryCanceled) as e:
                c.execute(SLOW)
            assert "time limit" in str(e.value) and time.time() - t0 < 20


def test_a_session_sets_its_own_statement_timeout(server):
    with psycopg.connect(dsn(server, "cu"), autocommit=True) as c:
        c.execute("SET statement_timeout = '300ms'")
        assert c.execute("SHOW statement_timeout").fetchone() == ("300ms",)
        with pytest.raises(psycopg.errors.QueryCanceled) as e:
            c.execute(SLOW)
        assert "time limit (0.3 s" in str(e.value)
        c.execute("SET statement_timeout = 0")
        assert c.execute("SELECT 1 AS one").fetchone() == (1,)
        with pytest.raises(psycopg.errors.SyntaxErrorOrAccessRuleViolation):
            c.execute("SET statement_timeout = 'soon'")


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is needed to make a test certificate")
def test_tls_when_the_operator_gives_a_certificate(db, tmp_path):
    from provsql_dp.interfaces.pgwire import WireServer, tls_context
    from provsql_dp.interfaces.web.engine import Engine

    cert, key = tmp_path / "c.pem", tmp_path / "k.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                    "/CN=localhost", "-keyout", str(key), "-out", str(cert)], check=True,
                   capture_output=True)
    engine = Engine(db)
    srv = WireServer(engine, "127.0.0.1", 0, tls=tls_context(str(cert), str(key)), require_tls=True).start()
    try:
        with psycopg.connect(dsn(srv, "ann", sslmode="require"), autocommit=True) as c:
            assert c.pgconn.ssl_in_use
            assert c.execute("SELECT floor FROM depts WHERE name = 'd1'").fetchone() == (2,)
        with pytest.raises(psycopg.OperationalError) as e:
            psycopg.connect(dsn(srv, "ann", sslmode="disable"))
        assert "TLS" in str(e.value)
    finally:
        srv.close()
        engine.close()
