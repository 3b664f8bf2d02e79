"""The explorer's routes through Starlette's TestClient: sign-in, CSRF, roles, budget refusals."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.testclient import TestClient  # noqa: E402

from provsql_dp.interfaces.web import example  # noqa: E402
from provsql_dp.interfaces.web.app import SESSION_COOKIE, create_app  # noqa: E402

PASSWORDS = {"curator": "curator-pass", "ann": "ann-pass-1"}


@pytest.fixture()
def db(tmp_path):
    path = str(tmp_path / "demo.duckdb")
    example.prepare(path, PASSWORDS)
    return path


@pytest.fixture()
def app(db):
    a = create_app(db)
    yield a
    a.state.engine.close()


def client(app) -> TestClient:
    return TestClient(app, base_url="http://127.0.0.1")


def sign_in(app, user: str, password: str | None = None) -> tuple[TestClient, str]:
    c = client(app)
    page = c.get("/login")
    token = re.search(r'name="token" value="([^"]+)"', page.text).group(1)
    r = c.post("/login", data={"user": user, "password": password or PASSWORDS[user], "token": token},
               follow_redirects=False)
    assert r.status_code == 303, r.text
    return c, c.get("/api/me").json()["csrf"]


def budget(app, user="ann") -> tuple:
    """(total, spent) read through the server's own curator connection (the file is open there)."""
    return tuple(app.state.engine.run("curator", "_test", f"SHOW PRIVACY BUDGET FOR USER '{user}'").rows[0][1:3])


def spent(app, user="ann") -> str:
    return budget(app, user)[1]


def test_sign_in_sets_httponly_samesite_cookie(app):
    c = client(app)
    page = c.get("/login")
    token = re.search(r'name="token" value="([^"]+)"', page.text).group(1)
    r = c.post("/login", data={"user": "ann", "password": PASSWORDS["ann"], "token": token},
               follow_redirects=False)
    cookie = r.headers["set-cookie"]
    assert SESSION_COOKIE in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert c.get("/api/me").json()["role"] == "analyst"
    assert "default-src 'self'" in c.get("/").headers["content-security-policy"]


@pytest.mark.parametrize("user,password", [("ann", "wrong-password"), ("nobody", "whatever1"), ("ann", "")])
def test_sign_in_failure(app, user, password):
    c = client(app)
    token = re.search(r'name="token" value="([^"]+)"', c.get("/login").text).group(1)
    r = c.post("/login", data={"user": user, "password": password, "token": token}, follow_redirects=False)
    assert r.status_code == 401 and "Sign-in failed" in r.text
    assert SESSION_COOKIE not in r.headers.get("set-cookie", "")
    assert c.get("/api/me").status_code == 401


def test_sign_in_without_login_token_refused(app):
    c = client(app)
    r = c.post("/login", data={"user": "ann", "password": PASSWORDS["ann"], "token": "forged"},
               follow_redirects=False)
    assert r.status_code == 403 and "CSRF" in r.text


def test_api_needs_session(app):
    c = client(app)
    assert c.get("/api/catalog").status_code == 401
    assert c.get("/", follow_redirects=False).headers["location"] == "/login"


def test_csrf_missing_or_wrong_refused_nothing_spent(app, db):
    c, token = sign_in(app, "ann")
    body = {"template": "histogram", "table": "employees", "column": "salary", "mode": "epsilon", "epsilon": 0.5}
    for headers in ({}, {"X-CSRF-Token": "not-the-token"}):
        r = c.post("/api/query", json=body, headers=headers)
        assert r.status_code == 403 and "CSRF" in r.json()["error"]
    assert spent(app) == "0"
    r = c.post("/api/query", json=body, headers={"X-CSRF-Token": token})
    assert r.status_code == 200, r.text
    assert spent(app) == "0.5"


def test_analyst_refused_on_curator_endpoints(app, db):
    c, token = sign_in(app, "ann")
    h = {"X-CSRF-Token": token}
    assert c.get("/api/curator/overview").status_code == 403
    for path, body in [("/api/curator/declare", {"action": "set_budget", "user": "ann", "epsilon": 100}),
                       ("/api/curator/declare", {"action": "unprotect", "table": "employees"}),
                       ("/api/curator/histogram", {"table": "employees", "column": "salary", "lo": 0,
                                                   "hi": 200000, "bins": 20, "epsilon": 1}),
                       ("/api/curator/tradeoff", {"bins": 20})]:
        r = c.post(path, json=body, headers=h)
        assert r.status_code == 403 and "curator only" in r.json()["error"], path
    con = app.state.engine.connection("curator", "_test")
    assert [p.table for p in con.protected()] == ["employees", "friendship"]
    assert budget(app) == ("5", "0")


def test_analyst_sql_refused_as_in_shell(app, db):
    c, token = sign_in(app, "ann")
    r = c.post("/api/query", json={"template": "sql", "sql": "SELECT * FROM employees", "mode": "as_written"},
               headers={"X-CSRF-Token": token})
    assert r.status_code == 400 and r.json()["error"].startswith("Error: ")
    assert "salary" not in r.json()["error"] or "protected" in r.json()["error"]


def test_over_budget_refused_nothing_spent(app, db):
    c, token = sign_in(app, "ann")
    h = {"X-CSRF-Token": token}
    r = c.post("/api/query", json={"template": "histogram", "table": "employees", "column": "salary",
                                   "mode": "epsilon", "epsilon": 4}, headers=h)
    assert r.status_code == 200 and r.json()["budget"]["remaining"] == "1"
    n_history = len(c.get("/api/history").json()["entries"])
    for body in ({"mode": "epsilon", "epsilon": 2}, {"mode": "accuracy", "alpha": 0.5, "beta": 0.05}):
        r = c.post("/api/query", json={"template": "histogram", "table": "employees", "column": "salary", **body},
                   headers=h)
        assert r.status_code == 400 and "budget" in r.json()["error"], r.text
    assert spent(app) == "4"
    assert len(c.get("/api/history").json()["entries"]) == n_history


def test_accuracy_first_answer_interval_and_history(app, db):
    c, token = sign_in(app, "ann")
    h = {"X-CSRF-Token": token}
    r = c.post("/api/query", json={"template": "cumulative", "table": "employees", "column": "salary",
                                   "mode": "accuracy", "alpha": 20, "beta": 0.1}, headers=h)
    a = r.json()
    assert r.status_code == 200, a
    assert a["mechanism"] == "blowfish" and len(a["rows"]) == 20 and len(a["bounds"]) == 20
    assert all(b <= 20 + 1e-9 for b in a["bounds"]) and a["confidence"] == pytest.approx(0.9)
    # the honest interval of each released count (privacy.intervals, as the shell shows it)
    assert a["covers"][0].startswith("the true count")
    for row, [[lo, hi]], [text] in zip(a["rows"], a["intervals"], a["interval_text"]):
        assert lo <= row[-1] <= hi and hi - lo <= 40 and text == f"[{lo:g}, {hi:g}]"
    assert a["statement"].startswith("COUNT CUMULATIVE") and "WITH ACCURACY 20.0 CONFIDENCE 0.9" in a["statement"]
    entries = c.get("/api/history").json()["entries"]
    got = c.get(f"/api/history/{entries[0]['id']}").json()
    assert got["answer"]["rows"] == a["rows"]
    # another user's history is not found
    c2, _ = sign_in(app, "curator")
    assert c2.get(f"/api/history/{entries[0]['id']}").status_code == 400


def test_curator_demo1_endpoints(app, db):
    c, token = sign_in(app, "curator")
    h = {"X-CSRF-Token": token}
    ov = c.get("/api/curator/overview").json()
    assert {t["name"] for t in ov["tables"]} >= {"employees", "friendship"}
    assert not any(t["name"].startswith("_provsql") for t in ov["tables"])
    r = c.post("/api/curator/histogram", json={"table": "employees", "column": "salary", "lo": 0, "hi": 200000,
                                               "bins": 20, "graph": "THRESHOLD 4", "bounded": True,
                                               "epsilon": 0.5}, headers=h).json()
    assert sum(r["true"]) == 30 and len(r["noisy"]) == 20 and r["labels"][1] == "10000"
    assert r["policy_sql"].endswith("AS THRESHOLD 4 DOMAIN [0, 200000) BINS 20 BOUNDED")
    assert len(r["graph"]["edges"]) == sum(min(4, 19 - i) for i in range(20))
    t = c.post("/api/curator/tradeoff", json={"bins": 20, "thetas": [1, 4], "epsilons": [0.5, 1],
                                              "query": "cumulative", "bounded": True}, headers=h).json()
    by = {(row["policy"], row["epsilon"]): row["expected_rmse"] for row in t["rows"]}
    assert by[("theta=1", 1)] < by[("full (DP)", 1)] and by[("theta=1", 0.5)] > by[("theta=1", 1)]
    assert spent(app) == "0"  # what-ifs spend no analyst's budget


def test_curator_declarations_as_sql(app, db):
    c, token = sign_in(app, "curator")
    h = {"X-CSRF-Token": token}
    r = c.post("/api/curator/declare", json={"action": "set_budget", "user": "bob", "epsilon": "2"}, headers=h)
    assert r.json() == {"sql": "SET PRIVACY BUDGET 2 FOR USER 'bob';"}
    r = c.post("/api/curator/declare", json={"action": "protect", "table": "no_such_table"}, headers=h)
    assert r.status_code == 400 and r.json()["error"].startswith("Error: ")
    r = c.post("/api/curator/declare", json={"action": "drop_policy", "name": "employees_salary"}, headers=h)
    assert r.status_code == 200
    r = c.post("/api/curator/declare", json={"action": "create_policy", "table": "employees", "column": "hired",
                                             "lo": 0, "hi": 10, "bins": 5, "graph": "LINE"}, headers=h)
    assert r.status_code == 400  # a DATE column cannot take a numeric domain: the engine's error
    r = c.post("/api/curator/declare", json={"action": "create_policy", "table": "employees", "column": "salary",
                                             "lo": 0, "hi": 200000, "bins": 10, "graph": "THRESHOLD 3",
                                             "bounded": True, "name": "sal"}, headers=h)
    assert r.json() == {"sql": 'CREATE POLICY "sal" ON "employees" ("salary") AS THRESHOLD 3 '
                               'DOMAIN [0, 200000) BINS 10 BOUNDED;'}
    names = [p["name"] for p in c.get("/api/curator/overview").json()["policies"]]
    assert sorted(names) == ["employees_dept_salary", "sal"]


def test_declared_policy_graph_projected(app):
    c, token = sign_in(app, "curator")
    h = {"X-CSRF-Token": token}
    g = c.post("/api/curator/policy_graph", json={"name": "employees_dept_salary", "column": "dept_id"},
               headers=h).json()
    assert g["nodes"] == ["1", "2", "3", "4", "5"] and len(g["edges"]) == 10  # FULL on departments
    g = c.post("/api/curator/policy_graph", json={"name": "employees_dept_salary", "column": "salary"},
               headers=h).json()
    assert len(g["nodes"]) == 20 and len(g["edges"]) == sum(min(2, 19 - i) for i in range(20))
    r = c.post("/api/curator/policy_graph", json={"name": "nope"}, headers=h)
    assert r.status_code == 400 and "no policy named" in r.json()["error"]
    a, atoken = sign_in(app, "ann")
    r = a.post("/api/curator/policy_graph", json={"name": "employees_salary"}, headers={"X-CSRF-Token": atoken})
    assert r.status_code == 403


def test_analyst_2d_histogram_and_graph_pattern(app):
    c, token = sign_in(app, "ann")
    h = {"X-CSRF-Token": token}
    r = c.post("/api/query", json={"template": "histogram2d", "table": "employees", "column": "dept_id",
                                   "column2": "salary", "mode": "epsilon", "epsilon": 0.5}, headers=h).json()
    assert len(r["rows"]) == 100 and r["mechanism"] == "blowfish" and len(r["bounds"]) == 100
    tri = ("SELECT COUNT(*) FROM friendship a JOIN friendship b ON a.dst = b.src "
           "JOIN friendship c ON a.src = c.src AND b.dst = c.dst")
    r = c.post("/api/query", json={"template": "sql", "sql": tri, "mode": "epsilon", "epsilon": 0.5}, headers=h).json()
    assert r["mechanism"] == "recursive" and len(r["rows"]) == 1 and r["budget"]["spent"] == "1"
    r = c.post("/api/query", json={"template": "sql", "sql": tri, "mode": "accuracy", "alpha": 5, "beta": 0.1},
               headers=h)
    assert r.status_code == 400 and "WITH ACCURACY is not available" in r.json()["error"]
    assert spent(app) == "1"


def test_analyst_granularity_coarsens_the_public_domain(app):
    c, token = sign_in(app, "ann")
    h = {"X-CSRF-Token": token}
    base = {"table": "employees", "column": "salary", "mode": "epsilon", "epsilon": 0.25}
    r = c.post("/api/query", json={"template": "histogram", "granularity": 4, **base}, headers=h).json()
    assert r["statement"].startswith('COUNT RANGES ("salary" >= 0 AND "salary" < 40000, ')
    assert len(r["rows"]) == 5 and r["columns"] == ["range", "count"]
    r = c.post("/api/query", json={"template": "cumulative", "granularity": 5, **base}, headers=h).json()
    assert len(r["rows"]) == 4 and r["statement"].startswith('COUNT RANGES ("salary" < 50000, ')
    r = c.post("/api/query", json={"template": "histogram", "granularity": 40, **base}, headers=h)
    assert r.status_code == 400 and "between 1 and the 20 bins" in r.json()["error"]
    r = c.post("/api/query", json={"template": "histogram", "granularity": 2, **base, "column": "dept_id"},
               headers=h)
    assert r.status_code == 400 and "needs a policy on 'dept_id' alone" in r.json()["error"]
    assert spent(app) == "0.5"


def test_the_chart_library_is_served_from_the_package_under_the_strict_csp(app):
    """Vega/Vega-Lite/vega-embed come from the installed vl-convert-python wheel (no CDN), as
    JavaScript, revalidated by ETag; the CSP allows no inline script or style and no eval."""
    c = client(app)
    r = c.get("/lib/vega-bundle.js")
    assert r.status_code == 200 and "javascript" in r.headers["content-type"]
    assert "vega" in r.text and len(r.text) > 100_000
    again = c.get("/lib/vega-bundle.js", headers={"If-None-Match": r.headers["etag"]})
    assert again.status_code == 304
    csp = c.get("/").headers["content-security-policy"]
    assert csp == "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'"
    assert "unsafe" not in csp


def test_analyst_sees_the_honest_interval_for_every_route(app, db):
    c, token = sign_in(app, "ann")
    h = {"X-CSRF-Token": token}
    # several aggregates (one interval per value column), a one-sided recursive interval
    r = c.post("/api/query", json={"template": "sql", "mode": "epsilon", "epsilon": 0.5,
                                   "sql": "SELECT COUNT(*), SUM(salary) FROM employees"}, headers=h)
    a = r.json()
    assert r.status_code == 200, a
    assert len(a["intervals"][0]) == 2 and len(a["covers"]) == 2 and len(a["interval_text"][0]) == 2
    assert a["covers"][0] == "the true count"
    tri = ("SELECT COUNT(*) FROM friendship a JOIN friendship b ON a.dst = b.src "
           "JOIN friendship c ON a.src = c.src AND b.dst = c.dst")
    a = c.post("/api/query", json={"template": "sql", "sql": tri, "mode": "epsilon", "epsilon": 0.5},
               headers=h).json()
    [[lo, hi]] = a["intervals"][0]
    assert hi is None and lo <= a["rows"][0][0] and a["interval_text"][0][0].startswith("≥ ")
    assert "from below" in a["covers"][0]


def test_curator_noisy_histogram_carries_intervals(app):
    c, token = sign_in(app, "curator")
    r = c.post("/api/curator/histogram", json={"table": "employees", "column": "salary", "lo": 0,
                                               "hi": 200000, "bins": 20, "graph": "LINE", "bounded": True,
                                               "query": "cumulative", "epsilon": 0.5},
               headers={"X-CSRF-Token": token})
    out = r.json()
    assert r.status_code == 200, out
    assert len(out["intervals"]) == 20 and out["covers"].startswith("the true count")
    assert all(lo <= v <= hi for (lo, hi), v in zip(out["intervals"], out["noisy"]))
