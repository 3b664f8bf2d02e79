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
import sys
import time

import pytest

import provsql_dp
from provsql_dp.interfaces.shell import MODES, Shell, render
from provsql_dp.interfaces.shell.dump import dump
from provsql_dp.interfaces.shell.statement_help import STATEMENTS, did_you_mean, statements_help
from provsql_dp.sql import dialect as d

from test_shell import PRIVATE_LINE, PtyShell, curator, example_db, make_shell, run_pipe, shell_env


def pty_session(args, env, command=None):
    sh = PtyShell(args, env) if command is None else PtyShell(args, env, command)
    sh.expect("provsql_dp> ")
    return sh


def pty_close(sh):
    if sh.proc.poll() is None:
        sh.proc.kill()
        sh.proc.wait()


# ---------------------------------------------------------------------- tab completion
def test_tab_completes_tables_columns_keywords_and_dot_commands(tmp_path):
    db = example_db(tmp_path)
    sh = pty_session([db, "--user", "ann"], shell_env(tmp_path))
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
#: the shell with the recursive mechanism's plain LPs (``_lp.CUTS = False``): the cutting planes
#: release ``LONG_QUERY`` in ~4 s, too soon for an interrupt in the middle; the plain LPs take
#: ~24 s on a loaded 2-core machine (the same release, only slower)
PLAIN_LP_SHELL = [sys.executable, "-c",
                  "import sys; import provsql_dp.mechanisms.recursive._lp as lp; lp.CUTS = False; "
                  "from provsql_dp.interfaces.cli import main; sys.exit(main(['shell'] + sys.argv[1:]))"]


def long_db(tmp_path) -> str:
    """A node-private path count whose plain LPs (:data:`PLAIN_LP_SHELL`) run for many seconds
    (longer than the test waits): ~24 s on a loaded 2-core machine; a sparser graph finished in
    under a second, before the status line could show its LPs."""
    db = str(tmp_path / "long.duckdb")
    con = provsql_dp.connect(db, user="cur")
    con.execute("CREATE TABLE e AS SELECT DISTINCT least(a, b) AS src, greatest(a, b) AS dst FROM "
                "(SELECT (hash(i) % 1000)::INT AS a, (hash(i + 1000000) % 1000)::INT AS b "
                "FROM range(40000) r(i)) WHERE a <> b")
    con.execute("PROTECT TABLE e BY (src, dst) AS node; SET PRIVACY BUDGET 5; "
                "SET PRIVACY BUDGET 5 FOR USER 'ann'")
    con.commit()
    con.close()
    return db


@pytest.mark.slow  # 4-10 s (a rate or brute-force check): CI's second step
def test_progress_shows_phase_and_count_and_ctrl_c_keeps_the_charge(tmp_path):
    db = long_db(tmp_path)
    sh = pty_session([db, "--user", "cur"], shell_env(tmp_path), PLAIN_LP_SHELL)
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


@pytest.mark.slow  # ~5-16 s: CI's second step (the default suite neared 15 min)
def test_analyst_progress_shows_no_data_dependent_phase(tmp_path):
    db = long_db(tmp_path)
    sh = pty_session([db, "--role", "analyst", "--user", "ann"], shell_env(tmp_path),
                     PLAIN_LP_SHELL)
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


# ---------------------------------------------------------------------- output modes and headers
def test_line_box_list_html_modes_and_headers():
    rows, names = [(1, "a<b", None), (22, "x|y", 1.5)], ["n", "s", "f"]
    assert render("line", names, rows).split("\n\n") == ["n = 1\ns = a<b\nf = NULL",
                                                        "n = 22\ns = x|y\nf = 1.5"]
    assert render("list", names, rows) == "n|s|f\n1|a<b|NULL\n22|x|y|1.5"
    assert render("html", names, rows[:1]) == ("<tr><th>n</th><th>s</th><th>f</th></tr>\n"
                                               "<tr><td>1</td><td>a&lt;b</td><td>NULL</td></tr>")
    assert render("box", names, rows[:1]).splitlines() == [
        "┌───┬─────┬──────┐", "│ n │ s   │ f    │", "├───┼─────┼──────┤", "│ 1 │ a<b │ NULL │",
        "└───┴─────┴──────┘"]
    assert render("box", names, rows[:1], headers=False).splitlines()[1] == "│ 1 │ a<b │ NULL │"
    for mode in ("table", "markdown", "csv", "list", "html"):
        assert "n" not in render(mode, names, [(1, "x", 2)], headers=False), mode
    assert {"line", "box", "list", "html"} <= set(MODES)


@pytest.mark.slow  # ~5-16 s: CI's second step (the default suite neared 15 min)
def test_modes_and_headers_from_the_command_line(tmp_path):
    r = run_pipe(tmp_path, ["--mode", "line", "-c", "SELECT 1 AS a, 'x' AS bb;"])
    assert r.returncode == 0 and r.stdout == " a = 1\nbb = x\n", r
    r = run_pipe(tmp_path, ["--mode", "list", "--no-headers", "-c", "SELECT 1 AS a, 'x' AS b;"])
    assert r.stdout == "1|x\n"
    r = run_pipe(tmp_path, ["-c", ".mode html\n.headers off\nSELECT 2 AS a;"])
    assert r.stdout == "<tr><td>2</td></tr>\n"


def test_private_answer_in_line_mode_keeps_stdout_clean(tmp_path):
    db = example_db(tmp_path)
    r = run_pipe(tmp_path, [db, "--user", "ann", "--mode", "line", "-c",
                            "SELECT COUNT(*) AS n FROM employees WITH EPSILON 0.25;"])
    assert r.returncode == 0, r.stderr
    assert re.fullmatch(r"           n = \d+\n95% interval = \[\d+, \d+\]\n", r.stdout), r.stdout
    assert PRIVATE_LINE.search(r.stderr).groups() == ("0.25", "0.75", "ann")


# ---------------------------------------------------------------------- .output, .once, .show
def test_output_once_and_show(tmp_path):
    out_file, once_file = tmp_path / "all.txt", tmp_path / "once.csv"
    sh, out, err = make_shell(curator())
    assert sh.run_text(f".output {out_file}\nSELECT 1 AS a;\nSELECT 2 AS b;\n.output\nSELECT 3 AS c;\n"
                       f".mode csv\n.once {once_file}\nSELECT 4 AS d;\nSELECT 5 AS e;\n.show"), err.getvalue()
    assert out_file.read_text().count("+---+") == 6 and "| b |" in out_file.read_text()
    assert once_file.read_text() == "d\n4\n"
    text = out.getvalue()
    assert text.startswith("+---+\n| c |") and "e\n5\n" in text and "a" not in text.split("\n")[1]
    assert re.search(r"^\s*mode: csv$", text, re.M) and re.search(r"^\s*output: stdout$", text, re.M)
    assert re.search(r"^\s*role: curator$", text, re.M) and re.search(r"^\s*headers: on$", text, re.M)
    tables = tmp_path / "tables.txt"
    sh.run_text(f"CREATE TABLE z(a INT);\n.once {tables}\n.tables\n.tables")
    assert tables.read_text() == "z\n" and out.getvalue().endswith("z\n")
    sh.dot(f".output {tmp_path / 'no' / 'dir' / 'x.txt'}")
    assert err.getvalue().startswith("Error: cannot write ")


# ---------------------------------------------------------------------- .import
def test_import_csv_and_parquet_for_the_curator(tmp_path):
    src = tmp_path / "people.csv"
    with open(src, "w", newline="") as f:
        csv.writer(f).writerows([("name", "age"), ("ann", 31), ("bob", 45), ("o'neil", 28)])
    parquet = tmp_path / "more.parquet"
    con = curator()
    con._duck.execute(f"COPY (SELECT 'cy' AS name, 50 AS age) TO '{parquet}' (FORMAT parquet)")
    sh, out, err = make_shell(con)
    assert sh.run_text(f".import {src} people\n.import {parquet} people\n"
                       "SELECT name, age FROM people ORDER BY age;"), err.getvalue()
    text = out.getvalue()
    assert "imported 3 rows from people.csv into new table people" in text
    assert "imported 1 row from more.parquet into existing table people" in text
    assert re.search(r"o'neil\s+\|\s+28 \|(.|\n)*cy\s+\|\s+50 \|", text)
    sh.dot(f".import {tmp_path / 'missing.csv'} t")
    sh.dot(".import onlyonearg")
    sh.dot(f".import --xml {src} t")
    errors = err.getvalue().splitlines()
    assert errors[0].startswith("Error: cannot read ") and "no such file" in errors[0]
    assert errors[1] == "Error: usage: .import [--csv|--parquet|--json] FILE TABLE"
    assert errors[2].startswith("Error: unknown option --xml")


def test_analyst_import_and_dump_are_refused(tmp_path):
    db = example_db(tmp_path)
    src = tmp_path / "x.csv"
    src.write_text("a\n1\n")
    r = run_pipe(tmp_path, [db, "--role", "analyst", "--user", "ann", "-c",
                            f".import {src} x\n.dump\n.dump employees\n.tables"])
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        "Error: .import is for the curator only: an analyst cannot load files into the database",
        "Error: .dump is for the curator only: it writes every row of every table, protected ones included",
        "Error: .dump is for the curator only: it writes every row of every table, protected ones included"]
    assert "INSERT" not in r.stdout and "\nx\n" not in r.stdout  # nothing dumped, nothing imported
    assert "employees  (protected)" in r.stdout


# ---------------------------------------------------------------------- .dump
@pytest.mark.slow  # ~10 s idle: the default suite stays under 15 min
def test_dump_restores_data_declarations_and_spent_budget(tmp_path):
    db = example_db(tmp_path)
    con = provsql_dp.connect(db, user="cur")
    con.execute("SET BOUNDS ON employees (salary) BETWEEN 0 AND 250000.5; "
                "SET GROUP KEYS ON employees (dept_id) FROM departments (id); "
                "CREATE TABLE people(age INT, state VARCHAR, note VARCHAR, born DATE, x DOUBLE, "
                "tags VARCHAR[]); INSERT INTO people VALUES (30, 'CA', 'it''s', '1990-01-02', 'inf', "
                "['a', 'b''c']), (NULL, NULL, NULL, NULL, NULL, NULL); PROTECT TABLE people; "
                "CREATE POLICY age_line ON people (age) AS LINE DOMAIN [0, 120) WIDTH 1; "
                "SET GROUP KEYS ON people (state) VALUES ('CA', 'NY'); "
                "CREATE VIEW rich AS SELECT name FROM employees WHERE salary > 100000")
    con.commit()
    con.close()
    analyst = provsql_dp.connect(db, role="analyst", user="ann")
    analyst.execute("SELECT COUNT(*) FROM employees WITH EPSILON 0.25")
    analyst.close()
    script = tmp_path / "dump.sql"
    r = run_pipe(tmp_path, [db, "-c", f".output {script}\n.dump"])
    assert r.returncode == 0 and r.stderr == "", r.stderr
    text = script.read_text()
    for expected in ("PROTECT TABLE employees;", "PROTECT TABLE friendship BY (src, dst) AS member;",
                     "SET BOUNDS ON employees (salary) BETWEEN 0 AND 250000.5;",
                     "SET GROUP KEYS ON employees (dept_id) FROM departments (id);",
                     "CREATE POLICY age_line ON people (age) AS LINE DOMAIN [0, 120) WIDTH 1 UNBOUNDED;",
                     "SET PRIVACY BUDGET 1 FOR USER 'ann';",
                     "UPDATE _provsql_dp.budget SET spent = '1/4', spent_delta = '0/1' WHERE user_name = 'ann';"):
        assert expected in text, expected
    restored = str(tmp_path / "restored.duckdb")
    r = run_pipe(tmp_path, [restored, str(script)])  # the positional script argument
    assert r.returncode == 0 and r.stderr == "", r.stderr
    a, b = provsql_dp.connect(db, user="cur"), provsql_dp.connect(restored, user="cur")
    for q in ("SELECT * FROM people ORDER BY ALL", "SELECT * FROM employees ORDER BY id",
              "SELECT * FROM friendship ORDER BY ALL", "SELECT * FROM rich ORDER BY ALL",
              "SHOW PROTECTED", "SHOW BOUNDS", "SHOW GROUP KEYS", "SHOW POLICIES",
              "SHOW PRIVACY BUDGET", "SELECT id, user_name, statement, mechanism, epsilon "
              "FROM _provsql_dp.ledger WHERE mechanism <> '(budget set)' ORDER BY id",
              "SELECT * EXCLUDE (logged_at) FROM _provsql_dp.audit_log ORDER BY id"):
        assert a.execute(q).fetchall() == b.execute(q).fetchall(), q
    a_log = a.execute("SELECT id FROM _provsql_dp.audit_log").fetchall()
    a.close()
    # the restored ledger goes on where the original stopped: ann has 0.75 left, not a fresh 1
    b.close()
    again = provsql_dp.connect(restored, role="analyst", user="ann")
    again.execute("SELECT COUNT(*) FROM employees WITH EPSILON 0.5")
    assert str(again.execute("SHOW PRIVACY BUDGET").fetchall()[0][3]) == "0.25"
    assert [c.id for c in again.ledger.entries()] == [1, 2]
    # and so does the audit log: the new release's row after the restored ones
    assert again._duck.execute("SELECT id, outcome FROM _provsql_dp.audit ORDER BY id").fetchall()[-1] \
        == (len(a_log) + 1, "released")
    again.close()


def test_dump_of_one_table_and_of_every_grammar_policy(tmp_path):
    con = curator()
    con.execute("CREATE TABLE people (id INTEGER PRIMARY KEY, age INTEGER, income INTEGER, "
                "state VARCHAR, member BOOLEAN); PROTECT TABLE people; CREATE TABLE checkins "
                "(id INTEGER PRIMARY KEY, x DOUBLE, y DOUBLE); PROTECT TABLE checkins; "
                "CREATE TABLE odd(v DOUBLE); PROTECT TABLE odd; "
                "CREATE POLICY thirds ON odd (v) AS LINE DOMAIN [0, 1) BINS 3")
    grammar = open(os.path.join(os.path.dirname(__file__), "..", "..", "grammar", "examples.sql")).read()
    for stmt in re.findall(r"^(?:CREATE|DROP) POLICY.*?;", grammar, re.M | re.S):  # in file order
        con.execute(stmt)
    lines = list(dump(con))
    fresh = provsql_dp.connect(user="cur")
    fresh.autocommit = True
    sh, out, err = make_shell(fresh)
    assert sh.run_text("\n".join(lines)), err.getvalue()
    q = "SELECT name, schema_name, table_name, columns, spec FROM _provsql_dp.policies ORDER BY name"
    assert con.execute(q).fetchall() == fresh.execute(q).fetchall()
    one = list(dump(con, "odd"))
    assert "CREATE POLICY thirds ON odd (v) AS LINE DOMAIN [0, 1) BINS 3 UNBOUNDED;" in one
    assert not any("people" in line for line in one)
    sh, out, err = make_shell(con)
    sh.dot(".dump nothing")
    assert err.getvalue() == "Error: no table or view named 'nothing'\n" and out.getvalue() == ""


# ---------------------------------------------------------------------- scripts: -f, positional, -c
@pytest.mark.slow  # ~5-16 s: CI's second step (the default suite neared 15 min)
def test_script_file_positional_and_dash_c_dot_commands(tmp_path):
    script = tmp_path / "setup.sql"
    script.write_text("CREATE TABLE t AS SELECT range AS a FROM range(3);\n.mode csv\n"
                      "SELECT SUM(a) AS s FROM t;\n")
    db = str(tmp_path / "s.duckdb")
    r = run_pipe(tmp_path, [db, str(script)])
    assert r.returncode == 0 and r.stdout == "s\n3\n", r
    r = run_pipe(tmp_path, [db, "-f", str(script), "-c", "SELECT 7 AS after; .tables"])
    assert r.returncode == 1 and "already exists" in r.stderr  # the script ran again, then -c
    assert r.stdout == "s\n3\nafter\n7\nt\n"
    r = run_pipe(tmp_path, ["-c", "SELECT 1 AS a; .mode json\nSELECT 2 AS b; .show;"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("+---+\n| a |") and '[{"b": 2}]' in r.stdout and "mode: json" in r.stdout
    r = run_pipe(tmp_path, ["-c", ".mode csv; SELECT 3 AS c; .headers off; SELECT 4 AS d;"])
    assert r.returncode == 0 and r.stdout == "c\n3\n4\n", r
    r = run_pipe(tmp_path, [str(script)])
    assert r.returncode == 2 and "looks like a SQL script, not a database" in r.stderr
    r = run_pipe(tmp_path, [db, str(script), "-f", str(script)])
    assert r.returncode == 2 and "either as SCRIPT or as -f FILE" in r.stderr
    r = run_pipe(tmp_path, ["-f", str(tmp_path / "missing.sql")])
    assert r.returncode == 1 and r.stderr.startswith("Error: cannot read ")


# ---------------------------------------------------------------------- .help and did you mean
def test_help_covers_every_statement_of_ours_with_an_example_that_parses():
    covered = set()
    for syntax, what, example in STATEMENTS:
        tree = d.parse_one(example)
        covered.add(type(tree))
        assert syntax.split()[0].strip("<") in example or syntax.startswith("<query>"), syntax
    assert covered >= set(d.PRIVACY_STATEMENTS) | {d.PrivateQuery}
    sh, out, err = make_shell(curator())
    sh.dot(".help")
    text = out.getvalue()
    for syntax, what, example in STATEMENTS:
        assert syntax in text and f"e.g. {example};" in text
    for word in ("CREATE POLICY", "COUNT RANGES", "EXPLAIN PRIVACY", "PROTECT TABLE", "SET BOUNDS",
                 "SET GROUP KEYS", "SET PRIVACY BUDGET", ".import", ".dump", ".output", ".once",
                 ".headers", ".show"):
        assert word in text, word
    out.truncate(0), out.seek(0)
    sh.dot(".help policy")
    assert "CREATE POLICY" in out.getvalue() and "SET GROUP KEYS" not in out.getvalue()
    assert statements_help("cumulative").startswith("COUNT CUMULATIVE")
    sh.dot(".help zzz")
    assert err.getvalue() == "Error: nothing in .help mentions 'zzz'\n"


@pytest.mark.parametrize("sql, hint", [
    ("SELECT COUNT(*) FROM t WITH EPSLON 0.1", "EPSILON"),
    ("PROTCT TABLE t", "PROTECT"),
    ("SET PRIVACY BUGDET 1", "BUDGET"),
    ("SELECT COUNT(*) FROM t WITH EPSILON 1 OPTINS (theta = 1)", "OPTIONS"),
    ("SHOW POLICES", "POLICIES"),
    ("EXPLAIN PRIVACY SELECT COUNT(*) FROM t WITH ACCURCY 5", "ACCURACY"),
])
def test_did_you_mean_names_our_keyword(sql, hint):
    assert did_you_mean(sql) == f"did you mean {hint}?"


def test_did_you_mean_on_a_terminal_and_not_for_other_errors(tmp_path):
    sh = pty_session([], shell_env(tmp_path))
    try:
        sh.send("CREATE TABLE t(a INT); PROTECT TABLE t; SELECT COUNT(*) FROM t WITH EPSLON 0.1;")
        got = sh.expect("provsql_dp> ")
        assert re.search(r"Error: .*syntax error.* \(did you mean EPSILON\?\)\n", got), got
        sh.send("SELECT * FROM range(3) WHERE nonexistant > 1;")  # not a syntax error: no hint
        got = sh.expect("provsql_dp> ")
        assert "Error: " in got and "did you mean EPSILON" not in got
        sh.send(".quit")
        assert sh.close() == 0
    finally:
        pty_close(sh)
    assert did_you_mean("SELECT 1") is None
    assert did_you_mean("SELECT range FROM range(3) WITH EPSLON 1", near="EPSLON") == "did you mean EPSILON?"


@pytest.mark.slow  # 4-10 s (a rate or brute-force check): CI's second step
def test_ctrl_c_in_a_plain_query_charges_nothing(tmp_path):
    sh = pty_session(["--user", "cur"], shell_env(tmp_path))
    try:
        sh.send("SELECT COUNT(*) FROM range(1000000000000) t(i) WHERE i % 7 = 3;")
        sh.expect("running… ")  # the status line of a plain statement
        got = None
        for _ in range(10):  # DuckDB looks at the interrupt between its tasks: press again if needed
            time.sleep(0.5)
            sh.proc.send_signal(signal.SIGINT)
            try:
                got = sh.expect("provsql_dp> ", timeout=5, deadline=5)
                break
            except AssertionError:
                continue
        assert got is not None, "Ctrl-C never stopped the query"
        assert "Error: interrupted (nothing was charged)" in got, got
        sh.send("SELECT 6 * 7 AS answer;")
        assert "42" in sh.expect("provsql_dp> ")
        sh.send(".quit")
        assert sh.close() == 0
    finally:
        pty_close(sh)
