"""The wire server driven by JDBC (Debian's libpostgresql-jdbc-java) from a small Java program
(tests/system/jdbc/WireClient.java, compiled by the test): prepared statements with parameters,
a private answer, a refusal with its SQLSTATE, DatabaseMetaData's tables and columns."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from pgwire_support import PASSWORDS, make_database, running_server, spent

JAR = next((p for p in ("/usr/share/java/postgresql.jar",) if os.path.exists(p)), None)
JAVA, JAVAC = shutil.which("java"), shutil.which("javac")
pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not (JAR and JAVA and JAVAC),
    reason="JDBC needs a JDK (java, javac) and Debian's libpostgresql-jdbc-java (/usr/share/java/postgresql.jar)")]
SOURCE = Path(__file__).parent / "jdbc" / "WireClient.java"


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    out = tmp_path_factory.mktemp("jdbc")
    subprocess.run([JAVAC, "-d", str(out), str(SOURCE)], check=True, capture_output=True, timeout=180)
    return str(out)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("pgwire_jdbc") / "jdbc.duckdb")
    make_database(path)
    with running_server(path) as srv:
        yield srv


def run(client, server, user, *statements, columns="emp", repeat=1, fetch=0):
    url = f"jdbc:postgresql://127.0.0.1:{server.port}/demo"
    out = subprocess.run([JAVA, "-cp", f"{client}:{JAR}", f"-Dcolumns={columns}", f"-Drepeat={repeat}",
                          f"-Dfetch={fetch}", f"-Dcount={'true' if fetch else 'false'}",
                          "WireClient", url, user,
                          PASSWORDS[user], *statements], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_jdbc_analyst(client, server):
    lines = run(client, server, "ann",
                "SELECT COUNT(*) AS n FROM emp WHERE salary > ? WITH EPSILON 0.5||100",
                "SELECT name FROM depts WHERE floor = ? ORDER BY name||2",
                "SELECT * FROM emp",
                "SELECT COUNT(*) FROM emp WITH EPSILON 40",
                "SHOW LAST RELEASE")
    assert lines[0] == "COLUMNS n:int8 n_low:float8 n_high:float8"
    n, lo, hi = lines[1].split()[1:]
    assert float(lo) <= int(n) <= float(hi)
    assert lines[2:5] == ["COLUMNS name:text", "ROW d1", "ROW d2"]
    assert lines[5].startswith("ERROR 42501 ERROR: table 'emp' is protected")
    assert lines[6].startswith("ERROR 53400 ERROR: privacy budget exceeded") and "nothing was spent" in lines[6]
    assert lines[7].startswith("COLUMNS mechanism:text epsilon:float8") and lines[8].startswith("ROW laplace 0.5")
    assert {"TABLE main.emp", "TABLE main.depts", "TABLE main.pub"} <= set(lines)
    assert not any("_provsql_dp" in line for line in lines)
    assert [x for x in lines if x.startswith("COLUMN ")] == ["COLUMN id int4", "COLUMN dept varchar",
                                                               "COLUMN salary float8"]
    assert spent(server.engine, "ann") == "1/2"


def test_jdbc_curator(client, server):
    lines = run(client, server, "cu", "CREATE TABLE jt(a INT, b VARCHAR)",
                "INSERT INTO jt VALUES (?, ?)||1||one", "SELECT b FROM jt WHERE a = ?||1",
                "SELECT COUNT(*) AS n FROM emp", columns="jt")
    assert lines[:5] == ["OK 0", "OK 1", "COLUMNS b:text", "ROW one", "COLUMNS n:int8"]
    assert lines[5] == "ROW 200" and "TABLE main.jt" in lines
    assert [x for x in lines if x.startswith("COLUMN ")] == ["COLUMN a int4", "COLUMN b varchar"]


def test_jdbc_binary_results_of_a_server_prepared_statement(client, server):
    # the seventh run of a PreparedStatement is server-prepared and asks for binary results
    lines = run(client, server, "cu",
                "SELECT 12345.678::DECIMAL(12,3) AS d, -0.5::DECIMAL(5,4) AS e, DATE '2026-11-28' AS day, "
                "TIMESTAMP '2026-11-28 13:05:01.25' AS ts, 2.5::DOUBLE AS f, 7::BIGINT AS i, true AS b, "
                "TIME '10:11:12' AS t, 'x' AS s WHERE ? = 1||1", repeat=7)
    assert lines[0] == ("COLUMNS d:numeric e:numeric day:date ts:timestamp f:float8 i:int8 b:bool t:time "
                        "s:text")
    assert lines[1] == "ROW 12345.678 -0.5000 2026-11-28 2026-11-28 13:05:01.25 2.5 7 true 10:11:12 x"


def test_jdbc_fetch_size_reads_a_large_result_in_batches(client, server):
    # setFetchSize in a transaction: Execute with max_rows, PortalSuspended between batches
    lines = run(client, server, "cu", "SELECT range FROM range(25003) ORDER BY range", fetch=1000)
    assert lines[0] == "COUNTED 25003 LAST 25002"
    lines = run(client, server, "ann", "SELECT x FROM pub ORDER BY x", fetch=7)
    assert lines[0] == "COUNTED 3000 LAST 2999"


def test_jdbc_a_private_group_by_key_has_its_type_in_text_and_binary(client, server):
    # a key from a public table's INTEGER column: int4, not text (the routes said VARCHAR); the
    # seventh run is server-prepared and reads it in binary
    statement = ("SELECT depts.floor, COUNT(*) AS n FROM emp JOIN depts ON depts.name = emp.dept "
                 "GROUP BY depts.floor WITH EPSILON 0.1")
    for repeat in (1, 7):
        lines = run(client, server, "bob", statement, repeat=repeat)
        assert lines[0] == "COLUMNS floor:int4 n:int8 n_low:float8 n_high:float8"
        assert [x.split()[1] for x in lines[1:3]] == ["1", "2"]
