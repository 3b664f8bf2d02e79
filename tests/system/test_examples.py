"""Every script in ``examples/`` runs to completion and prints what it claims to show.

Each runs in a subprocess (as a user would run it) with a generous timeout that only guards
against a hang; outputs are noisy, so the checks are on structure, never on noisy values.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NUMBER = r"-?\d+(?:\.\d+)?"


def run(args, tmp_path, stdin=None):
    env = dict(os.environ, PYTHONIOENCODING="utf-8", HOME=str(tmp_path),
               PROVSQL_DP_HISTORY=str(tmp_path / "history"),
               # this checkout's provsql_dp, whatever the interpreter has installed
               PYTHONPATH=os.pathsep.join(filter(None, [str(EXAMPLES.parent),
                                                        os.environ.get("PYTHONPATH")])))
    proc = subprocess.run(args, cwd=tmp_path, env=env, input=stdin, capture_output=True,
                          text=True, encoding="utf-8", timeout=300)
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert "Traceback" not in proc.stderr
    return proc.stdout


def test_every_example_is_tested():
    tested = {"graph_triangles.py", "blowfish_salary_histogram.py", "dbapi_roles_budget.py",
              "shell_session.sql", "spark_engine.py"}
    assert {p.name for p in EXAMPLES.iterdir() if p.suffix in (".py", ".sql")} == tested


@pytest.mark.slow  # an example script end to end, ~18 s loaded: CI's second step
def test_graph_triangles(tmp_path):
    out = run([sys.executable, str(EXAMPLES / "graph_triangles.py"), "--epsilon", "1"], tmp_path)
    assert "34 members, 78 friendships, 45 triangles (true count)" in out
    for route in ("SQL WITH EPSILON", "provsql_dp.graph.count"):
        for privacy in ("node", "edge"):
            assert re.search(rf"^{re.escape(route)}\s+{privacy}\s+{NUMBER}\s+{NUMBER}$", out, re.M), out
    assert "user 'curator' spent 2 of 10" in out


def test_blowfish_salary_histogram(tmp_path):
    from provsql_dp.interfaces.shell import policies_available

    out = run([sys.executable, str(EXAMPLES / "blowfish_salary_histogram.py")], tmp_path)
    assert "30 employees' salaries in 7 bands of 20k; ε = 0.5 per release" in out
    assert out.count("complete (standard DP): strategy") == 2
    assert out.count("line (adjacent bands): strategy") == 2
    # the true histogram is printed beside the noisy ones and sums to 30
    hist = out[out.index("histogram:"):out.index("cumulative counts:")]
    true = [int(m) for m in re.findall(rf"^\s+\d+–\d+k\s+(\d+)\s", hist, re.M)]
    assert len(true) == 7 and sum(true) == 30
    cumulative = out[out.index("cumulative counts:"):]
    full = float(re.search(r"complete \(standard DP\): strategy \w+, expected RMSE per query ([\d.]+)", cumulative)[1])
    line = float(re.search(r"line \(adjacent bands\): strategy \w+, expected RMSE per query ([\d.]+)", cumulative)[1])
    assert line < full  # the weaker secret buys accuracy on cumulative counts (data independent)
    if policies_available():
        assert "SQL: created policy salary_bands on employees (salary)" in out
        assert len(re.findall(rf"salary < \d+k\s+{NUMBER} ± {NUMBER}", out)) == 7
        assert "the release charged ε = 0.5 to the ledger; 1.5 of the budget remains" in out


def test_dbapi_roles_budget(tmp_path):
    out = run([sys.executable, str(EXAMPLES / "dbapi_roles_budget.py")], tmp_path)
    assert "curator: protected employees: each row (key id) AS employees" in out
    assert "analyst: fetchmany() -> [(1, 'Engineering'), (2, 'Sales')] then [(3, 'Support')]" in out
    assert re.search(rf"private count of salaries over 100k = {NUMBER} ± {NUMBER} \(95%\), "
                     r"mechanism \w+, ε charged 0.4, remaining 0.6", out), out
    assert "analyst: reading protected rows is refused: PrivacyError:" in out
    assert "analyst: over-budget query refused: privacy budget exceeded for user 'ann'" in out
    assert "analyst: the ledger is unchanged: 1 charge(s), 0.6 remaining" in out
    assert re.search(r"#\d+ ann ε=0.4 \w+: SELECT COUNT\(\*\) FROM employees", out)
    assert "raised ann's budget: total 2, spent 0.4, remaining 1.6" in out
    assert list(tmp_path.iterdir()) == []  # the database lived in its own temporary directory


def test_shell_session(tmp_path):
    script = (EXAMPLES / "shell_session.sql").read_text(encoding="utf-8")
    out = run([sys.executable, "-m", "provsql_dp.interfaces.cli", "shell", str(tmp_path / "session.duckdb")],
              tmp_path, stdin=script)
    assert "protected knows: BY (src, dst) AS person" in out
    assert "knows  (protected)" in out and "person  (protected)" in out
    private = re.findall(r"^private answer: .*ε charged ([\d.]+).*budget left ([\d.]+) of user 'default'$",
                         out, re.M)
    assert [eps for eps, _ in private][:4] == ["0.5", "0.5", "0.6", "0.2"]
    assert "ε charged 0.6 (every one of 3 groups at the full ε: a participant is in one group)" in out
    assert "recursive mechanism diagnostics at ε = 0.5 (curator only, nothing charged):" in out
    assert "name\nLyon\nOslo\nPune\n" in out  # csv mode
    assert re.search(r"^Run Time: \d+\.\d{3} s$", out, re.M)
    assert re.search(r"^\|\s+\d+ \| [\d-]+ [\d:]+ \| default \| 0.5 ", out, re.M)  # the ledger
    from provsql_dp.interfaces.shell import policies_available

    if policies_available():
        assert "| age_bands | main   | person | age " in out
        assert "private answer: blowfish mechanism, ε charged 0.4, budget left 0.8 of user 'default'" in out


@pytest.mark.spark
def test_spark_engine(tmp_path, spark):
    """The Spark example (skipped, with the reason, without pyspark or Java: the ``spark``
    fixture)."""
    out = run([sys.executable, str(EXAMPLES / "spark_engine.py"), str(tmp_path / "l.duckdb")],
              tmp_path)
    assert re.search(r"-> \[\(-?\d+,\)\]  \[laplace, remaining ε = 2\]", out), out
    assert len(re.findall(r"\('c\d', ", out)) == 5, out
    assert "remaining ε = 0]" in out, out
