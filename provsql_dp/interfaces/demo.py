"""The main job on the embedded default: private answers next to the curator's true answers.

``provsql-dp demo`` opens an in-process DuckDB, loads the bundled example database
(:mod:`provsql_dp.interfaces.example_data`), declares who is protected, sets a budget, and runs private
queries through the SQL front door, printing each noisy answer with its 95% noise bound and the
ε it spent beside the true answer only the curator may see.

>>> lines = run(epsilon=1.0, seed=1, out=None)
>>> lines[0].startswith("provsql_dp demo")
True
"""

from __future__ import annotations

import sys
import time

import numpy as np

from .. import connect
from ..privacy.intervals import shown
from . import example_data

__all__ = ["run", "QUERIES"]

TRIANGLES = (
    "SELECT COUNT(*) FROM friendship a JOIN friendship b ON a.dst = b.src "
    "JOIN friendship c ON a.src = c.src AND b.dst = c.dst"
)

# (title, SQL[, OPTIONS]) — each released WITH EPSILON ε; the curator's true answer is the same
# SQL without it.
QUERIES = [
    ("friendships", "SELECT COUNT(*) FROM friendship"),
    ("friendship triangles", TRIANGLES),
    ("paths of length 2 (u<v<w)", "SELECT COUNT(*) FROM friendship a JOIN friendship b ON a.dst = b.src"),
    ("friendships across factions",
     "SELECT COUNT(*) FROM friendship f JOIN member a ON f.src = a.id JOIN member b ON f.dst = b.id "
     "WHERE a.faction <> b.faction"),
    ("employees earning over 100k", "SELECT COUNT(*) FROM employees WHERE salary > 100000"),
    ("total payroll (salaries declared in [0, 300k])", "SELECT SUM(salary) FROM employees"),
    ("colleague pairs, same department",
     "SELECT COUNT(*) FROM employees a JOIN employees b ON a.dept_id = b.dept_id AND a.id < b.id"),
    ("reports of managers hired before 2017",
     "SELECT COUNT(*) FROM employees e JOIN employees m ON e.manager_id = m.id "
     "WHERE m.hired < DATE '2017-01-01'"),
]

GROUPED = ("headcount by department",
           "SELECT d.name, COUNT(*) FROM employees e JOIN departments d ON e.dept_id = d.id "
           "GROUP BY d.name")


def run(epsilon: float = 1.0, seed: int | None = None, out=sys.stdout) -> list[str]:
    """Run the demo; returns the printed lines. ``seed`` fixes the noise (tests only)."""
    lines: list[str] = []

    def emit(s: str = "") -> None:
        lines.append(s)
        if out is not None:
            print(s, file=out, flush=True)

    con = connect(":memory:", user="demo")
    if seed is not None:
        con._rng = np.random.default_rng(seed)
    example_data.load(con)
    con.execute("PROTECT TABLE friendship BY (src, dst) AS member")  # node privacy
    con.execute("PROTECT TABLE employees")  # each employee is a participant
    con.execute("SET PRIVACY BUDGET 20")
    con.execute("SET BOUNDS ON employees (salary) BETWEEN 0 AND 300000")
    emit(f"provsql_dp demo — an in-process DuckDB with the bundled example database, ε = {epsilon} per query")
    emit("protected: " + "; ".join(f"{p.table} {p.describe()}" for p in con.protected()))
    emit("")
    header = f"{'query':<46} {'privacy':<8} {'true':>12} {'private':>12} {'95% interval (truth)':>28} {'ε':>5} {'time s':>7}"
    emit(header)
    emit("-" * len(header))

    def show(title: str, sql: str, privacy: str, options: str = "") -> None:
        truth = con.execute(sql).fetchall()
        t = time.perf_counter()
        cur = con.execute(f"{sql} WITH EPSILON {epsilon} {options}")
        dt = time.perf_counter() - t
        private = cur.fetchall()
        bounds = cur.privacy.intervals(0.95)
        for (tv, pv, (iv,)) in zip(truth or [(0,)], private, bounds):
            label = title if len(private) == 1 else f"{title}: {pv[0]}"
            true_value = tv[-1] if tv[-1] is not None else 0
            emit(f"{label[:46]:<46} {privacy:<8} {_num(true_value):>12} {_num(pv[-1]):>12} {_shown(iv):>28} "
                 f"{float(cur.privacy.epsilon) / len(private):>5.2g} {dt:>7.2f}")

    for title, sql, *options in QUERIES:
        show(title, sql, "node" if "friendship" in sql else "row", *options)
    title, sql = GROUPED
    show(title, sql, "row")
    con.execute("UNPROTECT TABLE friendship")
    con.execute("PROTECT TABLE friendship")  # edge privacy: each friendship is a participant
    show("friendship triangles", TRIANGLES, "edge")
    emit("")
    left = con.execute("SHOW PRIVACY BUDGET").fetchall()[0]
    emit(f"budget of user {left[0]!r}: total {left[1]}, spent {left[2]}, remaining {left[3]}")
    emit("The true answers are visible to the curator only; an analyst sees the private column.")
    emit("Node privacy protects a member and all their friendships; edge privacy one friendship.")
    return lines


def _num(x) -> str:
    """A count as a whole number (as released: post-processed COUNTs are integers), else one
    decimal.

    >>> _num(12), _num(2913500), _num(3651860.5)
    ('12', '2913500', '3651860.5')
    """
    return str(x) if isinstance(x, int) else f"{float(x):.1f}"


def _shown(interval) -> str:
    """The interval as the shell prints it (:func:`provsql_dp.privacy.intervals.shown`)."""
    return shown(interval)
