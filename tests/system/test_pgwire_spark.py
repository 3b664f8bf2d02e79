"""The wire server on Spark (issue 27, item 4): protected rows live in Spark, analysts reach them
only through the server.

The curator attaches a Parquet source through the wire (``ATTACH SPARK TABLE``), declares it and
sets budgets; an analyst's private COUNT and bounded SUM equal, under one seed, the releases of an
embedded ``connect(..., engine=spark)`` on the same catalog; refused and over-budget statements
charge nothing; the snapshot's path, the catalog that records it, DuckDB's and Spark's file
readers and the audit log are out of an analyst's reach. ``serve --engine spark`` itself starts
as a process of its own, reopens the attached tables and answers psycopg.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import warnings

import duckdb
import numpy as np
import pytest

import provsql_dp
from provsql_dp.interfaces.pgwire import WireServer
from provsql_dp.interfaces.web import accounts
from provsql_dp.interfaces.web.engine import Engine

from pgwire_support import PASSWORDS, dsn

psycopg = pytest.importorskip("psycopg")

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def _catalog(tmp_path) -> tuple[str, str]:
    """An empty catalog with accounts, and a Parquet file of 300 employees (the Spark source)."""
    parquet = str(tmp_path / "emp.parquet")
    raw = duckdb.connect()
    raw.execute(f"COPY (SELECT range AS id, 'd' || (range % 3) AS dept, (range * 7 % 1000)::DOUBLE "
                f"AS salary FROM range(300)) TO '{parquet}' (FORMAT parquet)")
    raw.close()
    path = str(tmp_path / "catalog.duckdb")
    con = provsql_dp.connect(path)
    for user, role in (("ann", "analyst"), ("bob", "analyst"), ("cu", "curator")):
        accounts.add_account(con._duck, user, role, PASSWORDS[user])
    con.commit()
    con.close()
    return path, parquet


def _session_of(server, user):
    for s in list(server._sessions.values()):
        if s.user == user and s.con is not None:
            return s
    raise AssertionError(f"no wire session of {user}")


def _spent(cur, user):
    return cur.execute(f"SHOW PRIVACY BUDGET FOR USER '{user}'").fetchall()[0][2]


@pytest.fixture
def spark_server(spark, tmp_path):
    path, parquet = _catalog(tmp_path)
    engine = Engine(path, spark=spark)
    server = WireServer(engine, "127.0.0.1", 0).start()
    try:
        yield server, path, parquet
    finally:
        server.close()
        engine.close()


def test_curator_attaches_analysts_release_as_embedded_spark(spark_server, spark):
    server, path, parquet = spark_server
    with psycopg.connect(dsn(server, "cu"), autocommit=True) as c:
        cur = c.cursor()
        cur.execute(f"ATTACH SPARK TABLE emp FROM 'parquet.`{parquet}`' PRIMARY KEY (id) "
                    "CHECK (salary >= 0)")
        assert "attached emp from Spark" in cur.fetchall()[0][0]
        for stmt in ("PROTECT TABLE emp", "SET BOUNDS ON emp (salary) BETWEEN 0 AND 1000",
                     "SET PRIVACY BUDGET 3 FOR USER 'ann'", "SET PRIVACY BUDGET 3 FOR USER 'bob'"):
            cur.execute(stmt)
        snapshot = cur.execute("SELECT snapshot FROM _provsql_dp.engine_tables").fetchone()[0]
    assert os.path.isdir(snapshot)
    queries = ["SELECT COUNT(*) FROM emp WHERE dept = 'd1' WITH EPSILON 0.5",
               "SELECT SUM(salary) FROM emp WITH EPSILON 0.5"]
    wire = []
    with psycopg.connect(dsn(server, "ann"), autocommit=True) as c:
        cur = c.cursor()
        _session_of(server, "ann").con._rng = np.random.default_rng(7)
        for q in queries:
            cur.execute(q)
            wire.append(cur.fetchall()[0][0])  # the value; its interval columns follow
        assert _spent(cur, "ann") == "1"
    # the embedded Spark connection on the same catalog and snapshot, same seed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        emb = provsql_dp.connect(path, engine=spark, role="analyst", user="bob", guard_rails=True)
    try:
        emb._rng = np.random.default_rng(7)
        embedded = [emb.execute(q).fetchall()[0][0] for q in queries]
        assert emb.execute(queries[0]).privacy.mechanism == "laplace"
    finally:
        emb.close()
    assert wire == embedded
    assert wire[0] != 100 or wire[1] != sum(i * 7 % 1000 for i in range(300))  # noise was drawn


def test_analysts_reach_spark_data_only_through_private_answers(spark_server):
    server, path, parquet = spark_server
    with psycopg.connect(dsn(server, "cu"), autocommit=True) as c:
        cur = c.cursor()
        cur.execute(f"ATTACH SPARK TABLE emp FROM 'parquet.`{parquet}`' PRIMARY KEY (id)")
        cur.execute("PROTECT TABLE emp")
        cur.execute("SET PRIVACY BUDGET 1 FOR USER 'ann'")
        snapshot = cur.execute("SELECT snapshot FROM _provsql_dp.engine_tables").fetchone()[0]
        # the curator through the server cannot read files either (DuckDB's guard rails)
        with pytest.raises(psycopg.Error):
            cur.execute(f"SELECT count(*) FROM read_parquet('{snapshot}/*.parquet')")
    refused = [
        "SELECT * FROM emp",
        "SELECT snapshot FROM _provsql_dp.engine_tables",
        f"SELECT count(*) FROM read_parquet('{snapshot}/*.parquet')",
        f"SELECT COUNT(*) FROM read_parquet('{snapshot}/*.parquet') WITH EPSILON 0.1",
        f"SELECT COUNT(*) FROM parquet.`{snapshot}` WITH EPSILON 0.1",
        f"SELECT * FROM read_csv('{parquet}')",
        f"ATTACH SPARK TABLE mine FROM 'parquet.`{parquet}`'",
        f"ATTACH '{path}' AS other",
        "SHOW AUDIT LOG",
        "SET PRIVACY BUDGET 100 FOR USER 'ann'",
    ]
    with psycopg.connect(dsn(server, "ann"), autocommit=True) as c:
        cur = c.cursor()
        for stmt in refused:
            with pytest.raises(psycopg.Error) as e:
                cur.execute(stmt)
            if snapshot not in stmt:  # no error names the snapshot's path unasked
                assert snapshot not in str(e.value) and "spark/emp" not in str(e.value), stmt
            assert _spent(cur, "ann") == "0", stmt
        with pytest.raises(psycopg.Error, match="curator only"):
            cur.execute("SHOW AUDIT LOG LIMIT 3")
        with pytest.raises(psycopg.Error, match="budget"):  # over budget: nothing spent
            cur.execute("SELECT COUNT(*) FROM emp WITH EPSILON 2")
        assert _spent(cur, "ann") == "0"
        cur.execute("SELECT COUNT(*) FROM emp WITH EPSILON 0.25")
        assert _spent(cur, "ann") == "0.25"
    with psycopg.connect(dsn(server, "cu"), autocommit=True) as c:
        cur = c.cursor()
        cur.execute("SHOW AUDIT LOG LIMIT 50")
        cols = [d.name for d in cur.description]
        rows = [dict(zip(cols, r)) for r in cur.fetchall() if r[cols.index("user_name")] == "ann"]
        assert [r["outcome"] for r in rows].count("released") == 1
        assert sum(r["outcome"] == "refused" for r in rows) == len(refused) + 2
        assert {r["epsilon"] for r in rows if r["outcome"] == "refused"} == {"0"}
        assert [(r["epsilon"], r["unit"]) for r in rows if r["outcome"] == "released"] == [("1/4", "epsilon")]
    # a snapshot gone from its path: an analyst is told so without the path, nothing charged
    os.rename(snapshot, snapshot + ".moved")
    try:
        with psycopg.connect(dsn(server, "ann"), autocommit=True) as c:
            with pytest.raises(psycopg.Error, match="cannot be read") as e:
                c.execute("SELECT COUNT(*) FROM emp WITH EPSILON 0.25")
            assert snapshot not in str(e.value) and ".spark" not in str(e.value)
            assert _spent(c.cursor(), "ann") == "0.25"
    finally:
        os.rename(snapshot + ".moved", snapshot)


def test_a_session_open_before_an_attach_sees_the_table(spark_server):
    """A wire session's connection opened before the curator's ATTACH reads the new table (the
    catalog's record is read again), and plain SQL on it is refused, never read from the
    empty mirror."""
    server, path, parquet = spark_server
    with psycopg.connect(dsn(server, "cu"), autocommit=True) as cu, \
            psycopg.connect(dsn(server, "ann"), autocommit=True) as ann:
        cu.execute("SET PRIVACY BUDGET 1 FOR USER 'ann'")
        ann.execute("SHOW PRIVACY BUDGET").fetchall()  # ann's session is open now
        cu.execute(f"ATTACH SPARK TABLE emp FROM 'parquet.`{parquet}`' PRIMARY KEY (id)")
        cu.execute("CREATE VIEW pub AS SELECT 1 AS x")
        with pytest.raises(psycopg.Error, match="attached from Spark"):
            cu.execute("SELECT count(*) FROM emp")  # the mirror is empty: refused, not 0
        cu.execute("PROTECT TABLE emp")
        row = ann.execute("SELECT COUNT(*) FROM emp WITH EPSILON 0.5").fetchall()[0]
        assert abs(row[0] - 300) < 60


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_engine_spark_starts_reopens_and_answers(spark, tmp_path):
    """``provsql-dp serve --engine spark`` as its own process: it reopens the table attached
    earlier (by an embedded curator connection) from the catalog's record and answers psycopg."""
    path, parquet = _catalog(tmp_path)
    cur = provsql_dp.connect(path, engine=spark)
    cur.execute("ATTACH SPARK TABLE emp FROM 'parquet.`" + parquet + "`' PRIMARY KEY (id)")
    cur.execute("PROTECT TABLE emp; SET PRIVACY BUDGET 1 FOR USER 'ann'")
    cur.commit()
    cur.close()
    pg, http = _free_port(), _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "provsql_dp.interfaces.cli", "serve", path, "--engine", "spark",
         "--spark-master", "local[1]", "--spark-conf", "spark.driver.memory=512m",
         "--pg-port", str(pg), "--port", str(http)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if "wire server on" in line:
                break
        out = "".join(lines)
        assert re.search(r"attached tables emp\b", out), (out, proc.poll())
        with psycopg.connect(f"host=127.0.0.1 port={pg} user=ann password={PASSWORDS['ann']} "
                             "dbname=x", autocommit=True) as c:
            row = c.execute("SELECT COUNT(*) FROM emp WITH EPSILON 0.5").fetchall()[0]
            assert abs(row[0] - 300) < 60
            with pytest.raises(psycopg.Error):
                c.execute("SELECT * FROM emp")
            assert c.execute("SHOW PRIVACY BUDGET").fetchall()[0][2] == "0.5"
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
