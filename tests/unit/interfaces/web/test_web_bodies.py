"""The explorer's JSON endpoints under odd bodies (issue 26): missing fields, wrong types, huge
numbers, NaN, non-objects — always a 4xx naming the problem, never a 500; and the accuracy and ε
extremes of the issue come back as 400s through the HTTP API."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from test_web_routes import PASSWORDS, app, db, sign_in  # noqa: E402,F401  (fixtures)

ENDPOINTS = {
    "/api/query": {"template": "sql", "sql": "SELECT COUNT(*) FROM employees", "epsilon": 0.1,
                   "mode": "epsilon"},
    "/api/curator/declare": {"action": "set_budget", "user": "ann", "epsilon": 1},
    "/api/curator/histogram": {"table": "employees", "column": "salary", "lo": 0, "hi": 200000,
                               "bins": 10, "epsilon": 1},
    "/api/curator/tradeoff": {"bins": 10, "thetas": [1, 2], "epsilons": [0.5]},
    "/api/curator/policy_graph": {"name": "employees_salary", "column": "salary"},
}
EXTRA_FIELDS = ("name", "alpha", "granularity", "graph")
ODD = (None, 10**20, float("nan"), [1, "a"], {"a": 1}, "1e999")
RAW = ("", "null", "[]", '"x"', "{", "1e999", '{"epsilon": NaN}', '{"sql": Infinity}')


def post(c, token, path, content: str):
    return c.post(path, content=content, headers={"X-CSRF-Token": token,
                                                  "content-type": "application/json"})


def test_odd_bodies_are_4xx(app):  # noqa: F811
    curator, ctoken = sign_in(app, "curator")
    analyst, atoken = sign_in(app, "ann")
    bad = []
    for path, base in ENDPOINTS.items():
        c, token = (curator, ctoken) if "curator" in path else (analyst, atoken)
        for raw in RAW:
            r = post(c, token, path, raw)
            if not 400 <= r.status_code < 500:
                bad.append((path, raw, r.status_code, r.text[:120]))
        for field in (*base, *EXTRA_FIELDS):
            bodies = [{k: v for k, v in base.items() if k != field}]
            bodies += [{**base, field: v} for v in ODD]
            for body in bodies:
                r = post(c, token, path, json.dumps(body))
                if r.status_code >= 500 or "error" not in r.json() and r.status_code != 200:
                    bad.append((path, body, r.status_code, r.text[:120]))
    assert not bad, f"{len(bad)} odd bodies got no 4xx:\n" + "\n".join(map(str, bad[:20]))


@pytest.mark.parametrize("body, match", [
    ({"template": "sql", "sql": "SELECT COUNT(*) FROM employees WITH EPSILON 1e999",
      "mode": "as_written"}, "too large"),
    ({"template": "sql", "sql": "SELECT COUNT(*) FROM employees WITH ACCURACY 1e-320",
      "mode": "as_written"}, "out of range"),
    ({"template": "sql", "sql": "SELECT COUNT(*) FROM employees WITH ACCURACY 1 "
      "CONFIDENCE 0.99999999999999999999", "mode": "as_written"}, "too close to 1"),
    ({"template": "sql", "sql": "SELECT COUNT(*) FROM employees", "mode": "accuracy",
      "alpha": 1e-300, "beta": 0.05}, ""),
])
def test_extremes_are_400_and_charge_nothing(app, body, match):  # noqa: F811
    from test_web_routes import spent

    c, token = sign_in(app, "ann")
    before = spent(app)
    r = c.post("/api/query", json=body, headers={"X-CSRF-Token": token})
    assert r.status_code == 400, r.text
    assert match in r.json()["error"]
    assert spent(app) == before
