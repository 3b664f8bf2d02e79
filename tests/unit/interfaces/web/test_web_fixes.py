"""The explorer's request-level fixes of issue 27 (the browser side is
tests/system/test_web_browser_fixes.py): accuracy-first on the Laplace route, forms that name no
table or an absurd budget refused, the audit log's client for the explorer."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from test_web_routes import app, db, sign_in, spent  # noqa: E402,F401


def test_accuracy_first_for_a_plain_count(app):
    c, token = sign_in(app, "ann")
    r = c.post("/api/query", json={"template": "sql", "sql": "SELECT COUNT(*) FROM employees",
                                   "mode": "accuracy", "alpha": 10, "beta": 0.05},
               headers={"X-CSRF-Token": token})
    a = r.json()
    assert r.status_code == 200, a
    assert a["mechanism"] == "laplace" and a["statement"].endswith("WITH ACCURACY 10.0 CONFIDENCE 0.95;")
    [[[lo, hi]]] = a["intervals"]
    assert hi - lo <= 20 and lo <= a["rows"][0][0] <= hi
    assert spent(app) == str(a["epsilon"]).rstrip("0").rstrip(".")


@pytest.mark.parametrize("form, message", [
    ({"action": "protect", "table": ""}, "choose the table to protect"),
    ({"action": "unprotect"}, "choose the table to unprotect"),
    ({"action": "set_budget", "user": "zed", "epsilon": "1e308"}, "at most 1000"),
    ({"action": "set_budget", "user": "zed", "epsilon": 0}, "a positive ε"),
])
def test_declaration_forms_refuse_an_empty_table_and_an_absurd_budget(app, form, message):
    c, token = sign_in(app, "curator")
    before = app.state.engine.run("curator", "_t", "SHOW PROTECTED").rows
    r = c.post("/api/curator/declare", json=form, headers={"X-CSRF-Token": token})
    assert r.status_code == 400 and message in r.json()["error"]
    assert app.state.engine.run("curator", "_t", "SHOW PROTECTED").rows == before
    assert app.state.engine.run("curator", "_t", "SHOW PRIVACY BUDGET FOR USER 'zed'").rows == []


def test_the_audit_log_names_the_explorer(app):
    c, token = sign_in(app, "ann")
    c.post("/api/query", json={"template": "sql", "sql": "SELECT COUNT(*) FROM employees", "mode": "epsilon",
                               "epsilon": 0.5}, headers={"X-CSRF-Token": token})
    rows = app.state.engine.run("curator", "_t", "SELECT user_name, role, client, outcome, epsilon "
                                "FROM _provsql_dp.audit_log").rows
    assert rows == [("ann", "analyst", "explorer", "released", "1/2")]


def test_a_rho_budget_is_labelled_rho(app):
    """On a zCDP budget the explorer says ρ: the budget carries its unit (the page labels ε
    only for a pure-ε budget), an answer says ρ was charged, and the history shows ρ."""
    c, token = sign_in(app, "ann")
    assert c.get("/api/budget").json()["unit"] == "epsilon"
    app.state.engine.run("curator", "_t", "SET PRIVACY BUDGET RHO 2 FOR USER 'ann'")
    a = c.post("/api/query", json={"template": "sql", "sql": "SELECT COUNT(*) FROM employees",
                                   "mode": "epsilon", "epsilon": 1},
               headers={"X-CSRF-Token": token}).json()
    assert (a["unit"], a["epsilon"]) == ("rho", 0.5)  # ρ = ε²/2
    assert a["budget"]["unit"] == "rho" and a["budget"]["spent"] == "ρ = 0.5"
    assert c.get("/api/history").json()["entries"][0]["epsilon"] == "ρ = 0.5"
