"""``provsql-dp shell --server``: the shell signed in to a running wire server (in this process),
as an analyst and as the curator; statements pass through, releases are charged on the server's
ledger, intervals and the server's notices are shown, errors keep their PEP 249 class."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

pytest.importorskip("psycopg", reason="psycopg is not installed (pip install '.[client]')")

from pgwire_support import PASSWORDS, make_database, running_server, spent  # noqa: E402

from provsql_dp.interfaces.shell import main  # noqa: E402


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("remote") / "remote.duckdb")
    make_database(path)
    with running_server(path) as srv:
        yield srv


def run(server, user: str, command: str, mode: str = "table", password: str | None = None):
    out, err = io.StringIO(), io.StringIO()
    code = main(command=command, user=user, server=f"127.0.0.1:{server.port}", mode=mode,
                password=PASSWORDS[user] if password is None else password, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_analyst_release_is_charged_on_the_server_with_its_interval_and_notice(server):
    before = spent(server.engine, "ann")
    code, out, err = run(server, "ann", "SELECT COUNT(*) AS n FROM emp WITH EPSILON 0.25;")
    assert code == 0, err
    assert "n_low" in out and "n_high" in out  # the wire's interval columns
    assert "private release: mechanism laplace, ε charged 0.25" in out  # the server's notice
    from fractions import Fraction
    assert Fraction(spent(server.engine, "ann")) - Fraction(before) == Fraction(1, 4)
    with server.engine.checkout("curator", "_test") as cur:  # the audit log: a wire client's release
        last = cur.execute("SELECT user_name, role, client, outcome, route, epsilon "
                           "FROM _provsql_dp.audit_log ORDER BY id DESC LIMIT 1").fetchall()
    assert last == [("ann", "analyst", "wire", "released", "laplace", "1/4")]


def test_the_curator_reads_the_audit_log_over_the_server_and_an_analyst_cannot(server):
    run(server, "bob", "SELECT * FROM emp;")  # a refusal, logged
    code, out, err = run(server, "cu", ".audit 50", mode="csv")
    assert code == 0, err
    assert ",bob,analyst,wire,refused,,0,,PrivacyError," in out  # unit: none, nothing charged
    code, out, err = run(server, "cu", "SHOW AUDIT LOG LIMIT 1;", mode="csv")  # the statement too
    assert code == 0 and ",bob,analyst,wire,refused,,0,,PrivacyError," in out, err
    code, _, err = run(server, "bob", "SELECT * FROM _provsql_dp.audit_log;\n.audit\nSHOW AUDIT LOG;")
    assert code == 1 and err.count("Error: ") == 3 and ".audit is for the curator only" in err
    assert "SHOW AUDIT LOG is for the curator only" in err


def test_analyst_refusals_keep_their_class_and_charge_nothing(server):
    before = spent(server.engine, "bob")
    code, _, err = run(server, "bob", "SELECT * FROM emp;")
    assert code == 1 and err.startswith("Error: ") and "internal error" not in err
    code, _, err = run(server, "bob", "SELECT COUNT(*) FROM emp WITH EPSILON 100;")
    assert code == 1 and "budget exceeded" in err and "nothing was spent" in err
    assert spent(server.engine, "bob") == before
    code, _, err = run(server, "bob", ".dump")
    assert code == 1 and "curator only" in err


def test_curator_over_the_server_sees_the_role_and_public_rows_clipped(server):
    code, out, err = run(server, "cu", ".show\nSELECT x FROM pub ORDER BY x;")
    assert code == 0, err
    assert "role: curator" in out and "server 127.0.0.1" in out
    assert "3,000 rows (40 shown: .maxrows 0 shows every row)" in out
    assert "| 2999 |" in out and "| 1500 |" not in out
    code, out, _ = run(server, "cu", ".maxrows 0\nSELECT x FROM pub ORDER BY x;")
    assert "| 1500 |" in out
    code, out, _ = run(server, "cu", ".tables", mode="list")
    assert "emp  (protected)" in out and "pub" in out
    code, _, err = run(server, "cu", ".explain SELECT COUNT(*) FROM emp")
    assert code == 1 and "not available over --server" in err


def test_wrong_password_and_missing_client_library_are_clear(server):
    code, _, err = run(server, "ann", "SELECT 1;", password="wrong")
    assert code == 1 and "cannot sign in to the provsql_dp server" in err and "ann" in err


def test_open_leaves_the_server_for_a_local_file(server, tmp_path):
    local = str(tmp_path / "local.duckdb")
    code, out, err = run(server, "cu", f".open {local}\nCREATE TABLE here(a INT);\n.tables")
    assert code == 0, err
    assert f"opened {local} as curator" in out and "here" in out.splitlines()[-1]


@pytest.mark.slow
def test_the_command_line_signs_in_with_pgpassword(server):
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("PGPASSWORD", "PROVSQL_DP_PASSWORD")}
    cmd = [sys.executable, "-m", "provsql_dp.interfaces.cli", "shell", "--server", f"127.0.0.1:{server.port}",
           "--user", "ann", "-c", "SELECT COUNT(*) AS n FROM emp WITH EPSILON 0.1;"]
    r = subprocess.run(cmd, capture_output=True, text=True, env={**env, "PGPASSWORD": PASSWORDS["ann"]},
                       stdin=subprocess.DEVNULL, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "n_low" in r.stdout and "private release: mechanism laplace, ε charged 0.1" in r.stdout
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=120)
    assert r.returncode == 1 and "$PGPASSWORD" in r.stderr and "no password" in r.stderr


@pytest.mark.slow
def test_cli_refuses_a_role_with_server_and_needs_a_user():
    cmd = [sys.executable, "-m", "provsql_dp.interfaces.cli", "shell", "--server", "127.0.0.1:1"]
    r = subprocess.run(cmd + ["--role", "analyst", "--user", "a"], capture_output=True, text=True)
    assert r.returncode == 2 and "the role is the account's" in r.stderr
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 2 and "--server needs --user NAME" in r.stderr


def test_cancel_stops_the_servers_statement(server):
    """What Ctrl-C does over --server: a CancelRequest, and the server stops the statement."""
    import threading
    import time

    from provsql_dp.interfaces.shell import Shell
    from provsql_dp.interfaces.shell.remote import connect_remote

    con = connect_remote(f"127.0.0.1:{server.port}", "cu", PASSWORDS["cu"])
    out = io.StringIO()
    sh = Shell(con, out=out, err=out)
    t = threading.Thread(target=sh.run_text, args=("SELECT COUNT(*) FROM range(1000000000000) a, range(10) b;",))
    t0 = time.monotonic()
    t.start()
    time.sleep(0.5)
    assert con.cancel()
    t.join(30)
    assert not t.is_alive() and time.monotonic() - t0 < 30
    assert "Error: the statement was cancelled at the client's request" in out.getvalue()
    assert con.execute("SELECT 42").fetchall() == [(42,)]  # the session goes on
    con.close()
