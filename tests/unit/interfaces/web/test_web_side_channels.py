"""Side-channel rule at the explorer's endpoints: on two neighbouring databases (one employee's
salary changed) everything an analyst sees except the noisy values is the same — status, error
text, statement, columns, bin labels, bounds (data independent for Blowfish and Laplace; the
recursive mechanism's scale with its noisy Δ̂), ε charged, budget, history titles."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("starlette")

from starlette.testclient import TestClient  # noqa: E402

from provsql_dp.interfaces.web import example  # noqa: E402
from provsql_dp.interfaces.web.app import create_app  # noqa: E402

PASSWORDS = {"curator": "curator-pass", "ann": "ann-pass-1"}
REQUESTS = [
    {"template": "histogram", "table": "employees", "column": "salary", "mode": "accuracy", "alpha": 15, "beta": 0.1},
    {"template": "cumulative", "table": "employees", "column": "salary", "mode": "epsilon", "epsilon": 0.2},
    {"template": "histogram", "table": "employees", "column": "salary", "granularity": 5, "mode": "epsilon",
     "epsilon": 0.2},
    {"template": "histogram2d", "table": "employees", "column": "dept_id", "column2": "salary", "mode": "epsilon",
     "epsilon": 0.2},
    {"template": "sql", "sql": "SELECT COUNT(*) FROM employees WHERE salary > 100000", "mode": "epsilon",
     "epsilon": 0.2},
    {"template": "sql", "sql": "SELECT SUM(salary) FROM employees", "mode": "epsilon", "epsilon": 0.2},
    {"template": "sql", "sql": "SELECT salary FROM employees", "mode": "as_written"},
    {"template": "sql", "sql": "SELECT COUNT(*) FROM employees WHERE 1 // (salary - 68000) > 0",
     "mode": "epsilon", "epsilon": 0.2},
    {"template": "sql", "sql": "SELECT COUNT(*) FROM employees WHERE salary > 1 WITH EPSILON 0.2",
     "mode": "as_written"},
    {"template": "histogram", "table": "employees", "column": "salary", "mode": "epsilon", "epsilon": 50},
]


def session(tmp_path, name, change=None):
    """A signed-in analyst (ann) on a fresh explorer database, ``change`` run by the curator first."""
    db = str(tmp_path / f"{name}.duckdb")
    example.prepare(db, PASSWORDS)
    app = create_app(db)
    if change:
        app.state.engine.run("curator", "_setup", change)
    c = TestClient(app, base_url="http://127.0.0.1")
    token = re.search(r'name="token" value="([^"]+)"', c.get("/login").text).group(1)
    c.post("/login", data={"user": "ann", "password": PASSWORDS["ann"], "token": token})
    return app, c, {"X-CSRF-Token": c.get("/api/me").json()["csrf"]}


def visible(r):
    """What the analyst sees of a response, noisy values removed."""
    body = r.json()
    if "rows" in body:
        body["rows"] = [row[:-1] for row in body["rows"]]  # the labels; the last column is noise
    body.pop("history_id", None)
    # intervals sit around the noisy values: noise too (their covers text is compared)
    body.pop("intervals", None)
    body.pop("interval_text", None)
    if str(body.get("mechanism", "")).startswith("recursive"):
        # the recursive mechanism's bound scales with its privately released Δ̂: noise too
        body["bounds"] = len(body["bounds"])
    return r.status_code, body


@pytest.mark.slow  # ~5-16 s: CI's second step (the default suite neared 15 min)
def test_neighbouring_databases_look_the_same_but_for_noise(tmp_path):
    apps = []
    try:
        a_app, a, ha = session(tmp_path, "a", None)
        b_app, b, hb = session(tmp_path, "b", "UPDATE employees SET salary = 190000 WHERE salary = "
                                                "(SELECT MIN(salary) FROM employees)")
        apps = [a_app, b_app]
        for req in REQUESTS:
            ra, rb = a.post("/api/query", json=req, headers=ha), b.post("/api/query", json=req, headers=hb)
            assert visible(ra) == visible(rb), req
        for path in ("/api/catalog", "/api/budget"):
            assert a.get(path).json() == b.get(path).json()
        ea, eb = a.get("/api/history").json()["entries"], b.get("/api/history").json()["entries"]
        strip = lambda es: [{k: v for k, v in e.items() if k != "at"} for e in es]  # noqa: E731
        assert strip(ea) == strip(eb) and len(ea) >= 6
    finally:
        for app in apps:
            app.state.engine.close()
