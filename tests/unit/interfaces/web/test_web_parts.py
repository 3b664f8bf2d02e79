"""The explorer's parts: accounts, the curator's binning, input errors, the CLI, shell-identical errors."""

from __future__ import annotations

import io
from contextlib import redirect_stderr

import duckdb
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("starlette")

import provsql_dp  # noqa: E402
from provsql_dp.errors import ProgrammingError  # noqa: E402
from provsql_dp.interfaces import cli  # noqa: E402
from provsql_dp.interfaces.shell import main as shell_main  # noqa: E402
from provsql_dp.interfaces.web import accounts, curator, example, history, sandbox  # noqa: E402
from provsql_dp.interfaces.web.engine import INTERNAL, Engine, error_text  # noqa: E402


def test_accounts_hash_and_refuse_bad_input():
    duck = duckdb.connect()
    accounts.add_account(duck, "cu", "curator", "long enough")
    salt, stored, server, scrypt = duck.execute(
        f"SELECT scram_salt, stored_key, server_key, hash FROM {accounts.ACCOUNTS}").fetchone()
    assert len(bytes(salt)) == 16 and scrypt is None  # only the SCRAM verifier is kept
    assert b"long enough" not in bytes(stored) + bytes(server)
    assert accounts.verify(duck, "cu", "long enough") == "curator"
    assert accounts.verify(duck, "cu", "long enougH") is None
    for args in (("x", "admin", "long enough"), ("", "analyst", "long enough"), ("y", "analyst", "short")):
        with pytest.raises(ValueError):
            accounts.add_account(duck, *args)
    assert accounts.list_accounts(duck) == [("cu", "curator")]


def test_scrypt_account_of_before_gains_a_scram_verifier_at_sign_in():
    duck = duckdb.connect()
    duck.execute("CREATE SCHEMA _provsql_dp")
    duck.execute(f"CREATE TABLE {accounts.ACCOUNTS} (name VARCHAR PRIMARY KEY, role VARCHAR NOT NULL, "
                 "salt BLOB NOT NULL, hash BLOB NOT NULL)")
    salt = b"s" * 16
    duck.execute(f"INSERT INTO {accounts.ACCOUNTS} VALUES ('old', 'analyst', ?, ?)",
                 [salt, accounts._scrypt("old password", salt)])
    assert accounts.scram_verifier(duck, "old") is None  # the wire server cannot sign it in yet
    assert accounts.verify(duck, "old", "wrong password") is None
    assert accounts.verify(duck, "old", "old password") == "analyst"
    v = accounts.scram_verifier(duck, "old")
    assert v.role == "analyst" and v.stored_key == accounts.salted_keys("old password", v.salt, v.iterations)[0]
    assert accounts.verify(duck, "old", "old password") == "analyst"


def test_sessions_expire_and_close():
    s = accounts.Sessions()
    token, sess = s.open("ann", "analyst")
    assert s.get(token) is sess and s.get("other") is None and s.get(None) is None
    sess.expires = 0
    assert s.get(token) is None
    token, _ = s.open("ann", "analyst")
    s.close(token)
    assert s.get(token) is None


@pytest.mark.slow  # ~8 s idle (31 s loaded): CI's slow step (session 11)
@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-50, 250), max_size=60), st.integers(-20, 40), st.integers(1, 300),
       st.integers(2, 25))
def test_true_counts_bin_like_a_policy_domain(values, lo, span, bins):
    """Values below lo count in the first bin, at or above hi in the last (the DOMAIN rule)."""
    con = provsql_dp.connect()
    con.execute("CREATE TABLE t(a INTEGER)")
    if values:
        con.execute("INSERT INTO t SELECT * FROM (VALUES " + ", ".join(f"({v})" for v in values) + ")")
    h = sandbox.Histogram("t", "a", lo, lo + span, bins)
    idx = np.clip(np.floor((np.array(values, dtype=float) - lo) / h.width), 0, bins - 1).astype(int)
    assert sandbox.true_counts(con, h) == np.bincount(idx, minlength=bins).tolist()


@pytest.mark.parametrize("kw,message", [
    ({"lo": 5, "hi": 5, "bins": 4}, "lo < hi"),
    ({"lo": 0, "hi": 5, "bins": 1}, "bins must be between"),
    ({"lo": "x", "hi": 5, "bins": 4}, "lo must be a number"),
    ({"lo": 0, "hi": float("inf"), "bins": 4}, "finite"),
])
def test_histogram_domain_errors(kw, message):
    with pytest.raises(ProgrammingError, match=message):
        sandbox.Histogram("t", "a", **kw)


@pytest.mark.parametrize("graph", ["GRID 1", "THRESHOLD", "THRESHOLD 0", "FULL; DROP TABLE t", "LINE LINE"])
def test_policy_graph_must_be_one_of_the_kinds(graph):
    with pytest.raises(ProgrammingError, match="FULL, LINE or THRESHOLD"):
        sandbox.parse_graph(graph, 10)


def test_identifiers_are_quoted():
    assert sandbox.quote('a"; DROP TABLE x; --') == '"a""; DROP TABLE x; --"'
    assert curator.protect_sql({"table": "t", "by": 'a", b'}) == 'PROTECT TABLE "t" BY ("a""", "b")'
    with pytest.raises(ProgrammingError):
        curator.budget_sql({"user": "ann", "epsilon": "lots"})
    assert curator.budget_sql({"user": "o'neil", "epsilon": 1}) == "SET PRIVACY BUDGET 1 FOR USER 'o''neil'"


def test_history_is_per_user():
    duck = duckdb.connect()
    a = history.add(duck, "ann", "Q1", "0.5", {"rows": [[1]]})
    history.add(duck, "bob", "Q2", "0.5", {"rows": [[2]]})
    assert [e["sql"] for e in history.entries(duck, "ann")] == ["Q1"]
    assert history.get(duck, "bob", 2) is None and history.get(duck, "ann", a)["answer"] == {"rows": [[1]]}
    assert history.get(duck, "bob", 1)["sql"] == "Q2"  # bob's own first entry, not ann's


def test_history_numbers_tell_nothing_of_other_users():
    """An entry's number is its rank among its user's entries: with the table's row id (one
    sequence for every user) ann read from her two numbers that others ran 3 statements between
    them (follow-up of red team h94attack)."""
    duck = duckdb.connect()
    first = history.add(duck, "ann", "Q1", "0.5", {"rows": [[1]]})
    for i in range(3):
        history.add(duck, "bob", f"B{i}", "0.5", {"rows": [[i]]})
    second = history.add(duck, "ann", "Q2", "0.5", {"rows": [[2]]})
    assert (first, second) == (1, 2)
    assert [e["id"] for e in history.entries(duck, "ann")] == [2, 1]
    assert [e["id"] for e in history.entries(duck, "bob")] == [3, 2, 1]
    assert history.get(duck, "ann", 2)["sql"] == "Q2" and history.get(duck, "ann", 3) is None
    assert history.get(duck, "ann", 0) is None and history.get(duck, "ann", -1) is None
    assert history.get(duck, "ann", 10 ** 30) is None  # no BIGINT: not found, not an error


def test_errors_are_the_shells_line_internal_ones_fixed(tmp_path):
    db = str(tmp_path / "d.duckdb")
    example.prepare(db, {"curator": "curator-pass", "ann": "ann-pass-1"})
    stmt = "SELECT salary FROM employees"
    eng = Engine(db)
    try:
        with pytest.raises(provsql_dp.Error) as e:
            eng.run("analyst", "ann", stmt)
        web_line = error_text(e.value)
    finally:
        eng.close()
    err = io.StringIO()
    with redirect_stderr(err):
        shell_main(db, role="analyst", user="ann", command=stmt + ";")
    assert err.getvalue().strip() == web_line
    assert error_text(KeyError("secret value 42")) == INTERNAL and "42" not in INTERNAL


def test_cli_add_account_and_example(tmp_path, monkeypatch, capsys):
    db = str(tmp_path / "d.duckdb")
    made = example.prepare(db)
    assert sorted(made) == ["ann", "curator"] and all(len(p) >= 8 for p in made.values())
    monkeypatch.setenv("PROVSQL_DP_PASSWORD", "bob-password")
    assert cli.main(["serve", db, "--add-account", "bob", "--role", "analyst"]) == 0
    assert "account 'bob' (analyst) saved" in capsys.readouterr().out
    duck = duckdb.connect(db)
    assert accounts.verify(duck, "bob", "bob-password") == "analyst"
    duck.close()
    with pytest.raises(ValueError, match="already has tables"):
        example.prepare(db)
    monkeypatch.setenv("PROVSQL_DP_PASSWORD", "short")
    with pytest.raises(SystemExit):
        cli.main(["serve", db, "--add-account", "eve"])
    assert "at least 8 characters" in capsys.readouterr().err


def test_cancel_interrupts_only_that_users_statement():
    import threading
    import time

    eng = Engine(":memory:")
    out = {}

    def long_statement():
        try:
            eng.run("curator", "cu", "SELECT SUM(a.range * b.range) FROM range(200000) a, range(200000) b")
        except provsql_dp.Error as e:
            out["error"] = error_text(e)

    assert eng.cancel("cu") is False  # nothing running
    th = threading.Thread(target=long_statement)
    th.start()
    for _ in range(100):
        if "cu" in eng._running:
            break
        time.sleep(0.01)
    assert eng.cancel("someone else") is False
    assert eng.cancel("cu") is True
    th.join(30)
    assert not th.is_alive() and out["error"].startswith("Error: ") and "nterrupt" in out["error"]
    eng.close()
