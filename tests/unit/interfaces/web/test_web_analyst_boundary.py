"""The analyst boundary through the explorer's SQL editor (issue 26): the statements that read
protected rows or files for free before (a CTE hiding a real reference, ``DESCRIBE PIVOT``,
``DESCRIBE SELECT … read_csv``) are refused with a 4xx and no protected value or file line in
the response; public reads still answer; neighbouring databases (one employee's name
changed to a canary) give the same responses."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")

from test_web_side_channels import session  # noqa: E402  (one sign-in helper for both suites)

CANARY = "CANARY_e41d"
FILE_CANARY = "FILE_CANARY_9b7e"


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
    app, c, h = session(tmp_path, "a", f"UPDATE employees SET name = '{CANARY}' WHERE id = 1")
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
        a_app, a, ha = session(tmp_path, "a")
        b_app, b, hb = session(tmp_path, "b", f"UPDATE employees SET name = '{CANARY}', "
                                               "salary = 1 WHERE id = 1")
        apps = [a_app, b_app]
        for sql in _attacks(tmp_path) + ["SHOW TABLES", "DESCRIBE employees",
                                         "SELECT * FROM departments", "SUMMARIZE departments"]:
            assert _post(a, ha, sql) == _post(b, hb, sql), sql
    finally:
        for app in apps:
            app.state.engine.close()
