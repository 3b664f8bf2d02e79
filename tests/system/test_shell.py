"""The SQL shell (``provsql-dp shell``): in process, through pipes and through a pseudo-terminal.

The pseudo-terminal tests use the standard library only (``os.openpty`` + ``subprocess``): the
shell's stdin, stdout and stderr are the pty's slave end, so the shell sees a terminal (prompts,
readline, history) exactly as under a user's terminal emulator. The read timeouts only guard
against a hung shell; nothing asserts on time.
"""

from __future__ import annotations

import inspect
import io
import json
import os
import re
import select
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import provsql_dp
from provsql_dp.interfaces import example_data
from provsql_dp.interfaces.shell import (
    MODES,
    Progress,
    Shell,
    render,
    statement_complete,
    statements,
)

HAS_ROLES = "role" in inspect.signature(provsql_dp.connect).parameters
needs_roles = pytest.mark.skipif(not HAS_ROLES, reason="roles are not in provsql_dp.connect yet")

PRIVATE_LINE = re.compile(
    r"private answer: -?[\d.]+, 95% interval (?:\[-?[\d.]+, -?[\d.]+\]|≥ -?[\d.]+|—), "
    r"(?:recursive|laplace) mechanism, ε charged ([\d./]+), "
    r"budget left ([\d./]+) of user '(\w+)'"
)


# ---------------------------------------------------------------------- helpers
def curator(tmp_path=None, *, seed=1):
    con = provsql_dp.connect(":memory:" if tmp_path is None else str(tmp_path / "db.duckdb"), user="cur")
    con._rng = np.random.default_rng(seed)
    return con


def make_shell(con, **kw):
    out, err = io.StringIO(), io.StringIO()
    return Shell(con, out, err, **kw), out, err


def example_db(path) -> str:
    """A database file with the example tables, employees protected, budgets for two users."""
    db = str(path / "example.duckdb")
    con = provsql_dp.connect(db)
    example_data.load(con)
    con.execute("PROTECT TABLE employees")
    con.execute("PROTECT TABLE friendship BY (src, dst) AS member")
    con.execute("SET PRIVACY BUDGET 1 FOR USER 'ann'")
    con.execute("SET PRIVACY BUDGET 1 FOR USER 'bob'")
    con.close()
    return db


def shell_env(tmp_path) -> dict:
    env = dict(os.environ)
    env.update(HOME=str(tmp_path), PROVSQL_DP_HISTORY=str(tmp_path / "history"), TERM="dumb",
               PYTHONIOENCODING="utf-8", LC_ALL="C.UTF-8")
    return env


SHELL = [sys.executable, "-m", "provsql_dp.interfaces.cli", "shell"]


def run_pipe(tmp_path, args, stdin=""):
    return subprocess.run(SHELL + args, input=stdin, capture_output=True, text=True, timeout=120,
                          env=shell_env(tmp_path), encoding="utf-8")


# ---------------------------------------------------------------------- input splitting
@pytest.mark.parametrize("text, complete", [
    ("SELECT 1;", True),
    ("SELECT 1", False),
    ("SELECT ';'", False),
    ("SELECT 'a;\nb';", True),
    ("SELECT 'unterminated;", False),
    ("SELECT 1 /* ; */", False),
    ("SELECT 1 /* unterminated ;", False),
    ("SELECT 1; -- trailing comment", True),
    ("SELECT 1 -- ;", False),
    ("SELECT $$a;b$$;", True),
    ("   ", False),
])
def test_statement_complete(text, complete):
    assert statement_complete(text) is complete


def test_comment_only_pieces_are_not_statements():
    assert statements("SELECT 1; -- done") == ["SELECT 1"]
    assert statements("-- nothing here\n/* at all */") == []


# ---------------------------------------------------------------------- in process
def test_multi_line_statements_and_quoted_semicolons():
    sh, out, err = make_shell(curator())
    assert sh.run_text("CREATE TABLE t(a INT, s VARCHAR);\nINSERT INTO t VALUES\n (1, 'x;y'),\n (2, NULL);\n"
                       "SELECT a, s\n  FROM t\n ORDER BY a; -- the end")
    assert err.getvalue() == ""
    assert out.getvalue().splitlines() == [
        "+---+------+", "| a | s    |", "+---+------+", "| 1 | x;y  |", "| 2 | NULL |", "+---+------+",
    ]


def test_modes():
    rows = [(1, "x", None), (22, "y,z", 1.5)]
    names = ["a", "b", "c"]
    assert render("csv", names, rows) == 'a,b,c\n1,x,\n22,"y,z",1.5'
    assert json.loads(render("json", names, rows)) == [{"a": 1, "b": "x", "c": None},
                                                        {"a": 22, "b": "y,z", "c": 1.5}]
    assert render("markdown", names, rows).splitlines() == [
        "| a  | b   | c    |", "|---:|-----|-----:|", "|  1 | x   | NULL |", "| 22 | y,z |  1.5 |",
    ]
    assert render("table", names, []).splitlines() == ["+---+---+---+", "| a | b | c |", "+---+---+---+"]
    sh, out, err = make_shell(curator())
    for mode in MODES:
        sh.dot(f".mode {mode}")
        assert sh.mode == mode
    sh.dot(".mode xml")
    assert err.getvalue().startswith("Error: unknown mode 'xml'")


def test_private_answer_shows_value_bound_epsilon_and_budget():
    con = curator()
    sh, out, err = make_shell(con)
    assert sh.run_text("CREATE TABLE t(a INT); INSERT INTO t SELECT range FROM range(40);"
                       "PROTECT TABLE t; SET PRIVACY BUDGET 2;"
                       "SELECT COUNT(*) FROM t WITH EPSILON 0.5;"), err.getvalue()
    text = out.getvalue()
    assert "protected t: each row (key rowid) AS t" in text
    assert "privacy budget of 'cur' set to 2" in text
    assert "| COUNT(*) | 95% interval" in text
    m = PRIVATE_LINE.search(text)
    assert m and m.groups() == ("0.5", "1.5", "cur"), text
    # the interval printed is cursor.privacy's (one computation), and says what it covers
    assert "the 95% interval holds the true count with probability ≥ 95%" in text
    value = int(re.search(r"private answer: (\d+),", text).group(1))
    lo, hi = map(int, re.search(r"95% interval \[(\d+), (\d+)\]", text).groups())
    assert lo <= value <= hi
    cur = con.execute("SELECT COUNT(*) FROM t WITH EPSILON 0.5")
    (iv,), = cur.privacy.intervals(0.95)
    assert iv[1] - iv[0] == hi - lo  # the Laplace interval's width depends on ε only


def test_shell_interval_of_the_recursive_mechanism_is_one_sided():
    con = curator()
    sh, out, err = make_shell(con)
    assert sh.run_text("CREATE TABLE e(src INT, dst INT); INSERT INTO e VALUES (1,2),(2,3),(1,3);"
                       "PROTECT TABLE e BY (src, dst); SET PRIVACY BUDGET 2;"
                       "SELECT COUNT(*) FROM e a JOIN e b ON a.dst = b.src WITH EPSILON 0.5;"
                       ), err.getvalue()
    text = out.getvalue()
    assert "± 95%" not in text
    assert re.search(r"95% interval ≥ \d+, recursive mechanism", text), text
    assert "holds the true answer, from below only" in text


def test_shell_signed_sum_says_no_interval():
    con = curator()
    sh, out, err = make_shell(con)
    assert sh.run_text("CREATE TABLE v(o INT, x INT); INSERT INTO v VALUES (1,-2),(1,3),(2,5);"
                       "PROTECT TABLE v BY (o); SET PRIVACY BUDGET 2;"
                       "SELECT SUM(x) FROM v WITH EPSILON 0.5 OPTIONS (mechanism = 'recursive');"
                       ), err.getvalue()
    text = out.getvalue()
    assert "95% interval —" in text and "no interval: a signed SUM" in text, text


def test_private_grouped_answer_and_machine_readable_modes():
    con = curator()
    example_data.load(con)
    sh, out, err = make_shell(con)
    assert sh.run_text("PROTECT TABLE employees; SET PRIVACY BUDGET 3;\n.mode csv\n"
                       "SELECT d.name, COUNT(*) FROM employees e JOIN departments d ON e.dept_id = d.id "
                       "GROUP BY d.name WITH EPSILON 1;"), err.getvalue()
    lines = out.getvalue().splitlines()
    header = lines.index("name,COUNT(*),95% interval")
    assert len(lines) - header - 1 == 5  # one row per department
    # csv stays parseable: the summary line goes to stderr
    assert ("ε charged 1 (every one of 5 groups at the full ε: a participant is in one group), "
            "budget left 2") in err.getvalue()
    assert not err.getvalue().startswith("Error")


def test_errors_are_one_line_and_the_shell_goes_on():
    sh, out, err = make_shell(curator())
    ok = sh.run_text("SELEC 1;\nSELECT * FROM nowhere;\nSELECT 42 AS answer;\n.nope\n"
                     "SELECT COUNT(*) FROM range(3) WITH EPSILON 1;")
    assert not ok and sh.failed
    errors = err.getvalue().splitlines()
    assert len(errors) == 4 and all(e.startswith("Error: ") for e in errors), errors
    assert "syntax error" in errors[0]
    assert "nowhere" in errors[1]
    assert "unknown command '.nope'" in errors[2]
    assert "is not supported in a private query" in errors[3]
    assert re.search(r"\|\s+42 \|", out.getvalue())
    assert "Traceback" not in out.getvalue() + err.getvalue()


def test_bail_stops_at_the_first_error():
    sh, out, err = make_shell(curator(), bail=True)
    sh.run_text("SELECT 1 AS a;\nSELEC 2;\nSELECT 3 AS c;")
    assert "| a |" in out.getvalue() and "| c |" not in out.getvalue()
    assert len(err.getvalue().splitlines()) == 1


def test_incomplete_input_at_the_end():
    sh, out, err = make_shell(curator())
    sh.run_text("SELECT 'never closed")
    assert err.getvalue().startswith("Error: incomplete input")
    sh, out, err = make_shell(curator())
    assert sh.run_text("SELECT 7 AS no_semicolon")  # complete SQL without ';' still runs
    assert "no_semicolon" in out.getvalue()


def test_dot_commands_tables_schema_protected_budget_ledger(tmp_path):
    con = curator()
    example_data.load(con)
    sh, out, err = make_shell(con)
    sh.run_text("PROTECT TABLE employees; SET PRIVACY BUDGET 2; SET PRIVACY BUDGET 1 FOR USER 'ann';"
                "SELECT COUNT(*) FROM employees WITH EPSILON 0.25;")
    for cmd in (".tables", ".schema employees", ".protected", ".budget", ".ledger"):
        out.truncate(0), out.seek(0)
        sh.dot(cmd)
        text = out.getvalue()
        if cmd == ".tables":
            assert text.split("\n")[:4] == ["departments", "employees  (protected)", "friendship", "member"]
            assert "_provsql_dp" not in text
        elif cmd == ".schema employees":
            assert text.startswith("CREATE TABLE employees(")
            assert "-- PROTECTED: each row" in text and "friendship" not in text
        elif cmd == ".protected":
            assert "| main   | employees |" in text
        elif cmd == ".budget":
            assert re.search(r"\| ann +\| 1 +\| 0 +\| 1 +\|", text) and re.search(r"\| cur +\| 2 +\| 0.25 ", text)
        else:
            assert "| cur  | 0.25    | laplace   | SELECT COUNT(*) FROM employees WITH EPSILON 0.25 |" in text
    sh.dot(".schema nothing")
    assert err.getvalue() == "Error: no table or view named 'nothing'\n"


def test_policies_command_is_clear_either_way():
    from provsql_dp.interfaces.shell import policies_available

    sh, out, err = make_shell(curator())
    sh.dot(".policies")
    if policies_available():
        assert not err.getvalue()
    else:
        assert err.getvalue().startswith("Error: policy statements (CREATE POLICY, SHOW POLICIES) are not available")


def test_explain_for_the_curator():
    con = curator()
    example_data.load(con)
    sh, out, err = make_shell(con)
    sh.run_text("PROTECT TABLE friendship BY (src, dst) AS member;\n"
                ".explain SELECT COUNT(*) FROM friendship a JOIN friendship b ON a.dst = b.src WITH EPSILON 0.5\n"
                ".explain SELECT src FROM friendship")
    text = out.getvalue()
    assert err.getvalue() == ""
    assert "Aggregate COUNT" in text and "protected member:src, member:dst" in text
    assert "recursive mechanism diagnostics at ε = 0.5 (curator only, nothing charged):" in text
    assert "true answer" in text and "truncation bias" in text
    assert "(not an aggregate: no mechanism diagnostics)" in text
    assert con.ledger.entries() == []  # explaining spends nothing


def test_timer_and_read(tmp_path):
    script = tmp_path / "inner.sql"
    script.write_text("CREATE TABLE r(a INT);\nINSERT INTO r VALUES (5);\n.timer on\nSELECT a FROM r;\n")
    sh, out, err = make_shell(curator())
    assert sh.run_text(f".read {script}\n.timer off\nSELECT 1 AS one;")
    text = out.getvalue()
    assert "| 5 |" in text
    assert len(re.findall(r"^Run Time: \d+\.\d{3} s$", text, re.M)) == 1
    sh.dot(f".read {tmp_path / 'missing.sql'}")
    assert err.getvalue().startswith("Error: cannot read ")


def test_quit_stops_reading():
    sh, out, err = make_shell(curator())
    sh.run_text("SELECT 1 AS a;\n.quit\nSELECT 2 AS b;")
    assert "| a |" in out.getvalue() and "| b |" not in out.getvalue()


class _FakeTTY(io.StringIO):
    def __init__(self):
        super().__init__()
        self.written = threading.Event()

    def isatty(self):
        return True

    def write(self, s):
        n = super().write(s)
        self.written.set()
        return n


def test_progress_spinner_on_a_terminal_only():
    tty = _FakeTTY()
    with Progress(tty, delay=0.0, interval=0.01) as p:
        assert tty.written.wait(60)  # the work outlasts the delay: the spinner shows
    assert p.shown
    text = tty.getvalue()
    assert "running…" in text and " s" in text and text.endswith("\r\x1b[K")
    pipe = io.StringIO()
    with Progress(pipe, delay=0.0) as p:
        pass
    assert not p.shown and pipe.getvalue() == ""


@needs_roles
def test_analyst_in_process(tmp_path):
    db = example_db(tmp_path)
    con = provsql_dp.connect(db, role="analyst", user="ann")
    sh, out, err = make_shell(con)
    sh.run_text("SELECT COUNT(*) FROM employees WITH EPSILON 0.25;\nSELECT * FROM employees;\n"
                "SELECT COUNT(*) FROM departments;\n.explain SELECT COUNT(*) FROM employees\n.ledger\n.budget")
    errors = err.getvalue().splitlines()
    assert errors[0].startswith("Error: ") and "employees" in errors[0]
    assert errors[1] == ("Error: .explain is for the curator only: its diagnostics are functions of the "
                         "private data")
    text = out.getvalue()
    assert PRIVATE_LINE.search(text).groups() == ("0.25", "0.75", "ann")
    assert re.search(r"\|\s+5 \|", text)  # a public table stays readable
    assert "| ann  | 0.25" in text and "bob" not in text  # own ledger and budget only
    con.close()


# ---------------------------------------------------------------------- through pipes
@pytest.mark.slow  # subprocesses, ~18 s: CI's second step
def test_pipe_script_exit_codes_and_no_traceback(tmp_path):
    db = example_db(tmp_path)
    ok = run_pipe(tmp_path, [db, "--user", "ann"], stdin=(
        "SELECT COUNT(*) FROM employees\n"
        "  WHERE salary > 100000 WITH EPSILON 0.5;\n"
        "SELECT name FROM departments ORDER BY id LIMIT 2;\n"))
    assert ok.returncode == 0, ok.stderr
    assert ok.stderr == ""
    assert PRIVATE_LINE.search(ok.stdout).groups() == ("0.5", "0.5", "ann")
    assert "provsql_dp>" not in ok.stdout  # no prompts when stdin is not a terminal
    bad = run_pipe(tmp_path, [db, "--user", "ann"], stdin=(
        "SELECT COUNT(*) FROM employees WITH EPSILON 0.75;\nSELECT 'still here' AS s;\n"))
    assert bad.returncode == 1
    assert bad.stderr.startswith("Error: privacy budget exceeded for user 'ann'")
    assert len(bad.stderr.splitlines()) == 1 and "Traceback" not in bad.stderr
    assert "still here" in bad.stdout  # the shell went on after the error


@pytest.mark.slow  # subprocesses, ~15 s: CI's second step
def test_pipe_dash_c_and_bail(tmp_path):
    r = run_pipe(tmp_path, ["-c", "SELECT 6 * 7 AS x; .mode json\nSELECT 1 AS y;", "--mode", "csv"])
    assert r.returncode == 0 and r.stdout == 'x\n42\n[{"y": 1}]\n'  # a dot-command after ';'
    r = run_pipe(tmp_path, ["-c", "SELECT 6 * 7 AS x;\n.mode json\nSELECT 1 AS y", "--mode", "csv"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == 'x\n42\n[{"y": 1}]\n'
    r = run_pipe(tmp_path, ["--bail"], stdin="SELECT 1 AS a;\nSELEC 2;\nSELECT 3 AS c;\n")
    assert r.returncode == 1 and "| a |" in r.stdout and "| c |" not in r.stdout
    r = run_pipe(tmp_path, [str(tmp_path / "no" / "such" / "dir.duckdb"), "-c", "SELECT 1"])
    assert r.returncode == 1 and r.stderr.startswith("Error: ") and "Traceback" not in r.stderr


@needs_roles
def test_pipe_analyst_is_refused_back_doors(tmp_path):
    db = example_db(tmp_path)
    r = run_pipe(tmp_path, [db, "--role", "analyst", "--user", "bob"], stdin=(
        "SELECT * FROM friendship;\nPROTECT TABLE member;\nSET PRIVACY BUDGET 100;\n"
        f"COPY departments TO '{tmp_path / 'out.csv'}';\nATTACH ':memory:' AS other;\n"
        "PRAGMA database_list;\n.explain SELECT COUNT(*) FROM friendship\n"
        "SELECT COUNT(*) FROM friendship WITH EPSILON 0.5;\n.ledger\n"))
    assert r.returncode == 1
    errors = r.stderr.splitlines()
    assert len(errors) == 7 and all(e.startswith("Error: ") for e in errors), errors
    assert not (tmp_path / "out.csv").exists()
    assert PRIVATE_LINE.search(r.stdout).groups() == ("0.5", "0.5", "bob")
    assert "| bob " in r.stdout and "| ann " not in r.stdout


def test_cli_requires_a_user_for_an_analyst(tmp_path):
    r = run_pipe(tmp_path, ["--role", "analyst", "-c", "SELECT 1"])
    assert r.returncode == 2 and "an analyst needs --user NAME" in r.stderr


# ---------------------------------------------------------------------- through a pseudo-terminal
class PtyShell:
    """The shell on a pseudo-terminal: write lines, read until some text appears."""

    def __init__(self, args, env, command=SHELL):
        self.master, slave = os.openpty()
        # SIGINT back to its default in the child: a test run started in the background (`&`
        # in a non-interactive shell) inherits SIGINT ignored, and Python then installs no
        # KeyboardInterrupt handler, so the Ctrl-C tests would wait for the release to end
        self.proc = subprocess.Popen(command + args, stdin=slave, stdout=slave, stderr=slave,
                                     env=env, close_fds=True,
                                     preexec_fn=lambda: signal.signal(signal.SIGINT,
                                                                      signal.SIG_DFL))
        os.close(slave)
        self.seen = b""

    def expect(self, text: str, timeout: float = 120, deadline: float | None = None) -> str:
        """Read until ``text`` appears; returns what was read up to and including it.
        ``timeout``: the longest silence; ``deadline``: the longest wait in all (a status line
        that keeps redrawing never falls silent)."""
        needle = text.encode()
        end = None if deadline is None else time.monotonic() + deadline
        while needle not in self.seen:
            wait = timeout if end is None else max(0.0, min(timeout, end - time.monotonic()))
            ready, _, _ = select.select([self.master], [], [], wait)
            if not ready:
                raise AssertionError(f"the shell never printed {text!r}; it printed {self.seen!r}")
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # EIO: the shell exited
                chunk = b""
            if not chunk:
                raise AssertionError(f"the shell exited before printing {text!r}; it printed {self.seen!r}")
            self.seen += chunk
        i = self.seen.index(needle) + len(needle)
        got, self.seen = self.seen[:i], self.seen[i:]
        return got.decode("utf-8", "replace").replace("\r\n", "\n")

    def send(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def close(self) -> int:
        try:
            return self.proc.wait(timeout=120)
        finally:
            os.close(self.master)


def test_interactive_session_on_a_terminal(tmp_path):
    db = example_db(tmp_path)
    sh = PtyShell([db, "--user", "ann"], shell_env(tmp_path))
    try:
        banner = sh.expect("provsql_dp> ")
        assert "shell on" in banner and 'Enter ".help"' in banner
        sh.send("SELECT COUNT(*)")
        sh.expect("...> ")  # the continuation prompt: the statement is not finished
        sh.send("  FROM employees WITH EPSILON 0.5;")
        got = sh.expect("provsql_dp> ")
        assert PRIVATE_LINE.search(got).groups() == ("0.5", "0.5", "ann"), got
        sh.send("SELEC 1;")
        got = sh.expect("provsql_dp> ")
        assert "Error: Parser Error: syntax error" in got and "Traceback" not in got
        sh.send("SELECT 'a;")
        sh.expect("...> ")
        sh.send("b' AS s;")
        got = sh.expect("provsql_dp> ")
        assert "a;\\nb" in got
        sh.send(".help")
        assert ".timer on|off" in sh.expect("provsql_dp> ")
        sh.send(".quit")
        assert sh.close() == 0  # an interactive session exits 0 even after errors
    finally:
        if sh.proc.poll() is None:
            sh.proc.kill()
            sh.proc.wait()
    history = (tmp_path / "history").read_text()
    assert "SELECT COUNT(*)" in history and ".help" in history
    assert not (tmp_path / ".provsql_dp_history").exists()  # the env override was honoured


@pytest.mark.slow  # a terminal subprocess, ~15 s loaded: CI's second step
def test_interactive_eof_leaves_cleanly(tmp_path):
    env = shell_env(tmp_path)
    env["PROVSQL_DP_HISTORY"] = ""  # no history at all
    sh = PtyShell([], env)
    try:
        sh.expect("provsql_dp> ")
        os.write(sh.master, b"\x04")  # Ctrl-D at the prompt
        assert sh.close() == 0
    finally:
        if sh.proc.poll() is None:
            sh.proc.kill()
            sh.proc.wait()
    assert list(tmp_path.iterdir()) == []  # no history file anywhere under HOME


def test_comments_between_statements_do_not_swallow_dot_commands():
    sh, out, err = make_shell(curator())
    assert sh.run_text("-- a header comment\n/* and a block\n   comment */\n\n.mode csv\n"
                       "-- before a statement\nSELECT 1 AS a; -- after it\n-- trailing\n.mode json\nSELECT 2 AS b;")
    assert err.getvalue() == ""
    assert out.getvalue() == 'a\n1\n[{"b": 2}]\n'
