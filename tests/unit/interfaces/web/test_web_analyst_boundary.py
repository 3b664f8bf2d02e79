"""The analyst boundary through the explorer's SQL editor (issue 26): the statements that read
protected rows or files for free before (a CTE hiding a real reference, ``DESCRIBE PIVOT``,
``DESCRIBE SELECT … read_csv``) are refused with a 4xx and no protected value or file line in
the response; public reads still answer; neighbouring databases (one employee's name
changed to a canary) give the same responses."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("starlette")

from starlette.testclient import TestClient  # noqa: E402

from provsql_dp.interfaces.web import example  # noqa: E402
from provsql_dp.interfaces.web.app import create_app  # noqa: E402

PASSWORDS = {"curator": "curator-pass", "ann": "ann-pass-1"}
CANARY = "CANARY_e41d"
FILE_CANARY = "FILE_CANARY_9b7e"


def _session(tmp_path, name, change=None):
    db = str(tmp_path / name / "explorer.duckdb")
    (tmp_path / name).mkdir()
    example.prepare(db, PASSWORDS)
    app = create_app(db)
    if change:
        app.state.engine.run("curator", "_setup", change)
    c = TestClient(app, base_url="http://127.0.0.1")
    token = re.search(r'name="token" value="([^"]+)"', c.get("/login").text).group(1)
    c.post("/login", data={"user": "ann", "password": PASSWORDS["ann"], "token": token})
    return app, c, {"X-CSRF-Token": c.get("/api/me").json()["csrf"]}


def _attacks(tmp_path):
    csv = tmp_path / "secret.csv"
    csv.write_text(f"a,b\n1,{FILE_CANARY}\n")
    return [
        "SELECT * FROM (WITH employees AS (SELECT 1 AS one) SELECT * FROM employees) a, "
        "(SELECT name FROM employees) b",
        "SELECT b.name FROM departments AS employees, LATERAL (SELECT name FROM employees) b",
        "WITH employees AS (SELECT name FROM employees) SELECT * FROM employees",
        "DESCRIBE PIVOT employees ON name || '=' || salary USING count(*)",
        "PIVOT employees ON name USING sum(salary)",
        "SUMMARIZE employees",
        "EXPLAIN ANALYZE SELECT name FROM employees",
        f"DESCRIBE SELECT * FROM read_csv('{csv}', header = true, skip = 0)",
        f"SELECT * FROM '{csv}'",
        f"SELECT * FROM read_text('{csv}')",
        f"COPY employees TO '{tmp_path / 'out.csv'}'",
    ]


def _post(c, h, sql):
    r = c.post("/api/query", json={"template": "sql", "sql": sql, "mode": "as_written"}, headers=h)
    return r.status_code, r.text


def test_the_sql_editor_refuses_free_reads_and_answers_public_ones(tmp_path):
    app, c, h = _session(tmp_path, "a", f"UPDATE employees SET name = '{CANARY}' WHERE id = 1")
    try:
        names = [r[0] for r in app.state.engine.run("curator", "_setup",
                                                    "SELECT name FROM employees").rows]
        assert CANARY in names
        for sql in _attacks(tmp_path):
            status, text = _post(c, h, sql)
            assert 400 <= status < 500, (sql, status, text)
            assert CANARY not in text and FILE_CANARY not in text, (sql, text)
            assert not any(n in text for n in names if len(n) > 3 and n not in sql), (sql, text)
        assert not (tmp_path / "out.csv").exists()
        status, text = _post(c, h, "WITH employees AS (SELECT id, name FROM departments) "
                                   "SELECT name FROM employees ORDER BY id")
        assert status == 200, text
        body = c.post("/api/query", json={"template": "sql", "mode": "as_written",
                                          "sql": "SELECT name FROM departments ORDER BY id"},
                      headers=h).json()
        assert body["columns"] == ["name"] and len(body["rows"]) == 5
        status, text = _post(c, h, "DESCRIBE employees")  # schemas are public
        assert status == 200 and "salary" in text
    finally:
        app.state.engine.close()


def test_neighbours_give_the_same_responses(tmp_path):
    apps = []
    try:
        a_app, a, ha = _session(tmp_path, "a")
        b_app, b, hb = _session(tmp_path, "b", f"UPDATE employees SET name = '{CANARY}', "
                                               "salary = 1 WHERE id = 1")
        apps = [a_app, b_app]
        for sql in _attacks(tmp_path) + ["SHOW TABLES", "DESCRIBE employees",
                                         "SELECT * FROM departments", "SUMMARIZE departments"]:
            assert _post(a, ha, sql) == _post(b, hb, sql), sql
    finally:
        for app in apps:
            app.state.engine.close()
