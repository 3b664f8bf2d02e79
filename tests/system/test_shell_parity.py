"""The shell at parity with the duckdb and sqlite3 shells (issue 13, item 4), one test a
feature, through a pseudo-terminal where the feature is about the terminal (completion, progress,
Ctrl-C) and through pipes or in process otherwise; the analyst's refusals alongside."""

from __future__ import annotations

import csv
import io
import os
import re
import signal
import subprocess
import time

import pytest

import provsql_dp
from provsql_dp.interfaces.shell import MODES, Shell, render
from provsql_dp.interfaces.shell.dump import dump
from provsql_dp.interfaces.shell.statement_help import STATEMENTS, did_you_mean, statements_help
from provsql_dp.sql import dialect as d

from test_shell import PRIVATE_LINE, PtyShell, curator, example_db, make_shell, run_pipe, shell_env


def pty_session(args, env):
    sh = PtyShell(args, env)
    sh.expect("provsql_dp> ")
    return sh


def pty_close(sh):
    if sh.proc.poll() is None:
        sh.proc.kill()
        sh.proc.wait()


# ---------------------------------------------------------------------- tab completion
def test_tab_completes_tables_columns_keywords_and_dot_commands(tmp_path):
    db = example_db(tmp_path)
    sh = pty_session([db], shell_env(tmp_path))
    try:
        os.write(sh.master, b"SELECT COUNT(*) FROM empl\t")
        sh.expect("employees")
        os.write(sh.master, b" WHERE sal\t")
        sh.expect("salary")
        os.write(sh.master, b" > 0 WITH EPSI\t")
        sh.expect("EPSILON")
        os.write(sh.master, b" 0.5;\n")
        got = sh.expect("provsql_dp> ")
        assert re.search(r"private answer: .* ε charged 0\.5", got), got
        os.write(sh.master, b".tab\t\n")
        got = sh.expect("provsql_dp> ")
        assert "employees  (protected)" in got
        sh.send(".quit")
        assert sh.close() == 0
    finally:
        pty_close(sh)


# ---------------------------------------------------------------------- progress and Ctrl-C
LONG_QUERY = "SELECT COUNT(*) FROM e a JOIN e b ON a.dst = b.src WITH EPSILON 1;"


def long_db(tmp_path) -> str:
    """A node-private path count whose LPs run for many seconds (far longer than the test)."""
    db = str(tmp_path / "long.duckdb")
    con = provsql_dp.connect(db, user="cur")
    con.execute("CREATE TABLE e AS SELECT DISTINCT least(a, b) AS src, greatest(a, b) AS dst FROM "
                "(SELECT (hash(i) % 3000)::INT AS a, (hash(i + 1000000) % 3000)::INT AS b "
                "FROM range(20000) r(i)) WHERE a <> b")
    con.execute("PROTECT TABLE e BY (src, dst) AS node; SET PRIVACY BUDGET 5; "
                "SET PRIVACY BUDGET 5 FOR USER 'ann'")
    con.commit()
    con.close()
    return db


def test_progress_shows_phase_and_count_and_ctrl_c_keeps_the_charge(tmp_path):
    db = long_db(tmp_path)
    sh = pty_session([db, "--user", "cur"], shell_env(tmp_path))
    try:
        sh.send(LONG_QUERY)
        sh.expect("solving LPs: 1")  # the curator's status line: phase and count
        sh.proc.send_signal(signal.SIGINT)  # Ctrl-C (the pty is not the child's controlling tty)
        got = sh.expect("provsql_dp> ")
        assert "Error: interrupted after the release was charged: that ε stays spent" in got, got
        assert "Traceback" not in got
        sh.send(".budget")
        got = sh.expect("provsql_dp> ")
        assert re.search(r"\| cur +\| 5 +\| 1 +\| 4 +\|", got), got  # ε = 1 stays spent
        sh.send("SELECT 41 + 1 AS still_alive;")
        assert "42" in sh.expect("provsql_dp> ")
        sh.send(".quit")
        assert sh.close() == 0
    finally:
        pty_close(sh)


def test_analyst_progress_shows_no_data_dependent_phase(tmp_path):
    db = long_db(tmp_path)
    sh = pty_session([db, "--role", "analyst", "--user", "ann"], shell_env(tmp_path))
    try:
        sh.send(LONG_QUERY)
        seen = sh.expect("ε charged; releasing… ")
        time.sleep(3)  # long enough for the curator's display to reach the LPs
        sh.proc.send_signal(signal.SIGINT)
        seen += sh.expect("provsql_dp> ")
        assert "interrupted after the release was charged" in seen
        for private in ("LPs", "capturing", "captured", "group"):
            assert private not in seen, seen
        sh.send(".quit")
        assert sh.close() == 0
    finally:
        pty_close(sh)
