"""Golden tests of the provenance rewrite, one per plan node.

Each case plans a small query, compiles it with :func:`provsql_dp.provenance.capture.capture_sql` and
compares the plan and the capture SQL with a golden file in ``tests/unit/provenance/golden/`` — so a change
to the rewrite shows up as a readable diff. The SQL is also executed, and the K-relation checked
against hand-computed annotations. Regenerate the files after an intended change with
``PROVSQL_DP_UPDATE_GOLDEN=1 pytest tests/unit/provenance/test_capture_golden.py`` and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import provsql_dp
from provsql_dp.provenance.capture import capture_sql
from provsql_dp.sql.plan import explain

GOLDEN = Path(__file__).parent / "golden"

# name -> (query, {row: set of monomials as sorted tuples of keys})
CASES = {
    "scan": ("SELECT a, b FROM r", {(1, 10): {("r:1",)}, (2, 20): {("r:2",)}}),
    "filter": ("SELECT a FROM r WHERE b > 10", {(2,): {("r:2",)}}),
    "project": ("SELECT a + b AS s FROM r", {(11,): {("r:1",)}, (22,): {("r:2",)}}),
    "join_two_owners": (
        "SELECT e.x, e.y FROM e JOIN r ON e.x = r.a",
        {(1, 2): {("p:1", "p:2", "r:1")}, (2, 1): {("p:1", "p:2", "r:2")}},
    ),
    "self_join_pruned_slots": (
        "SELECT e1.x, e2.y FROM e e1 JOIN e e2 ON e1.y = e2.x",
        {(1, 1): {("p:1", "p:2")}, (2, 2): {("p:1", "p:2")}},
    ),
    "union_all": (
        "SELECT a FROM r UNION ALL SELECT x FROM e",
        {(1,): {("r:1",), ("p:1", "p:2")}, (2,): {("r:2",), ("p:1", "p:2")}},
    ),
    "distinct": ("SELECT DISTINCT c FROM r", {("k",): {("r:1",), ("r:2",)}}),
    "aggregate_sum": ("SELECT SUM(b) FROM r", {(1, 10, "k", 10.0): {("r:1",)}, (2, 20, "k", 20.0): {("r:2",)}}),
}


def _db():
    con = provsql_dp.connect()
    con.execute("CREATE TABLE r(a INT PRIMARY KEY, b INT, c VARCHAR)")
    con.execute("INSERT INTO r VALUES (1, 10, 'k'), (2, 20, 'k')")
    con.execute("CREATE TABLE e(x INT, y INT)")
    con.execute("INSERT INTO e VALUES (1, 2), (2, 1)")
    con.execute("PROTECT TABLE r")
    con.execute("PROTECT TABLE e BY (x, y) AS p")
    con.commit()
    return con


def _render(con, sql: str) -> str:
    plan = con.plan(sql)
    capture, _, grouped, sources = capture_sql(plan)
    return (
        f"-- query: {sql}\n-- plan:\n"
        + "\n".join(f"--   {line}" for line in explain(plan).splitlines())
        + f"\n-- grouped: {grouped}; slots: {sources}\n{capture}\n"
    )


def _key(p) -> str:
    domain, key = p
    return f"{domain}:{key}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_rewrite_matches_golden_and_runs(name):
    sql, expected = CASES[name]
    con = _db()
    text = _render(con, sql)
    path = GOLDEN / f"{name}.sql"
    if os.environ.get("PROVSQL_DP_UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"rewrite of {name} changed; see {path}"
    kr = con.provenance(sql)
    got = {}
    for i, row in enumerate(kr.rows):
        monos = {tuple(sorted(_key(p) for p in m)) for m in kr.annotation(i)}
        got.setdefault(tuple(row), set()).update(monos)
    assert got == expected
