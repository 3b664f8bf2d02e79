"""The explorer's noise bound and plotted column follow the released value wherever the select
list puts it (``SELECT count(*) AS n, dept_id … GROUP BY dept_id``: the key last is public, the
bound is ``n``'s), not the answer's last column."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

import provsql_dp  # noqa: E402
from provsql_dp.interfaces.web import accounts  # noqa: E402
from provsql_dp.interfaces.web.app import create_app  # noqa: E402

from test_web_routes import PASSWORDS, sign_in, spent  # noqa: E402  (its helpers)


@pytest.fixture()
def app(tmp_path):
    path = str(tmp_path / "t.duckdb")
    con = provsql_dp.connect(path)
    con.execute("CREATE TABLE employees(id INT PRIMARY KEY, dept_id INT)")
    con.execute("INSERT INTO employees SELECT range, range % 5 + 1 FROM range(500)")
    con.execute("PROTECT TABLE employees; SET PRIVACY BUDGET 5 FOR USER 'ann'")
    con.execute("SET GROUP KEYS ON employees (dept_id) VALUES (1, 2, 3, 4, 5)")
    accounts.add_account(con._duck, "ann", "analyst", PASSWORDS["ann"])
    con.commit()
    con.close()
    a = create_app(path)
    yield a
    a.state.engine.close()


@pytest.mark.parametrize("sql, value_column, public", [
    ("SELECT count(*) AS n, dept_id FROM employees GROUP BY dept_id", -2, [1]),
    ("SELECT dept_id, count(*) AS n FROM employees GROUP BY dept_id", -1, []),
    ("SELECT count(*) AS n FROM employees GROUP BY dept_id", -1, []),
])
def test_the_bound_is_the_released_columns_wherever_it_is(app, sql, value_column, public):
    c, token = sign_in(app, "ann")
    r = c.post("/api/query", json={"template": "sql", "sql": sql, "mode": "epsilon", "epsilon": 1},
               headers={"X-CSRF-Token": token})
    a = r.json()
    assert r.status_code == 200, a
    assert a["mechanism"] == "laplace" and len(a["rows"]) == 5
    # a count at ε 1, sensitivity 1: the 95 % bound of the discrete Laplace noise, every group
    assert len(set(a["bounds"])) == 1 and 2 <= a["bounds"][0] <= 4
    assert a["value_column"] == value_column and a["public_columns"] == public
    k = len(a["columns"])
    assert a["columns"][k + value_column] == "n"
    for row, ivs in zip(a["rows"], a["intervals"]):
        lo, hi = ivs[value_column]
        assert lo <= row[k + value_column] <= hi
    assert spent(app) == "1"


def test_several_released_columns_bound_the_last_released_one(app):
    c, token = sign_in(app, "ann")
    r = c.post("/api/query", json={"template": "sql", "sql": "SELECT count(*) AS n, count(*) * 2 AS m, "
                                   "dept_id FROM employees GROUP BY dept_id", "mode": "epsilon", "epsilon": 1},
               headers={"X-CSRF-Token": token})
    a = r.json()
    assert r.status_code == 200, a
    assert a["value_column"] == -2 and a["public_columns"] == [2]
    # m = 2n: its interval's ends are n's doubled, so its bound is twice n's
    assert all(b is not None and 4 <= b <= 8 for b in a["bounds"])
