"""The explorer end to end in a real browser: Playwright driving Debian's Chromium.

Never downloads a browser: Playwright is pointed at ``/usr/bin/chromium`` (``.ci/run`` installs the
Debian package when it is missing). Screenshots of both tabs go to ``test-screenshots/``
(git-ignored). Scenarios of issue 14: the curator's trade-off exploration (papers/001 Demo 1),
the analyst's Demo 2 with (α, β) and a comparison of two answers, sign-in failure, an analyst
calling curator endpoints, a request without its CSRF token, an over-budget query.
"""

from __future__ import annotations

import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # .ci/run's second step: pytest tests -m 'slow or spark'

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
if not Path(CHROMIUM).exists():
    pytest.skip("Debian's chromium is not installed (apt-get install chromium; .ci/run does it)",
                allow_module_level=True)
pytest.importorskip("uvicorn")
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

from provsql_dp.interfaces.web import example  # noqa: E402
from provsql_dp.interfaces.web.app import create_app  # noqa: E402

SHOTS = Path(__file__).resolve().parents[2] / "test-screenshots"
PASSWORDS = {"curator": "curator-pass", "ann": "ann-pass-1"}
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    import uvicorn

    db = str(tmp_path_factory.mktemp("web") / "demo.duckdb")
    example.prepare(db, PASSWORDS)
    app = create_app(db)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    for _ in range(200):
        if srv.started:
            break
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}", app
    srv.should_exit = True
    thread.join(10)
    app.state.engine.close()


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield b
        b.close()


def signed_in(browser, base, user, password=None, bypass_csp=False):
    # bypass_csp only where the test itself evaluates script in the page (our CSP forbids eval)
    page = browser.new_page(viewport={"width": 1280, "height": 1000}, bypass_csp=bypass_csp)
    page.set_default_timeout(20000)
    page.console_errors = []  # CSP violations and script errors end up here
    page.on("console", lambda m: m.type == "error" and page.console_errors.append(m.text))
    page.on("pageerror", lambda e: page.console_errors.append(str(e)))
    page.goto(base + "/")
    assert page.url.endswith("/login")
    page.fill("#user", user)
    page.fill("#password", password or PASSWORDS[user])
    page.click("#signin")
    return page


def remaining(app, user="ann") -> str:
    return app.state.engine.run("curator", "_test", f"SHOW PRIVACY BUDGET FOR USER '{user}'").rows[0][3]


def test_curator_tradeoff_exploration(server, browser):
    base, app = server
    page = signed_in(browser, base, "curator")
    page.wait_for_selector("#policies table")
    page.select_option("#h-table", "employees")
    page.select_option("#h-column", "salary")
    assert page.input_value("#h-lo") == "0" and page.input_value("#h-hi") == "200000"
    page.select_option("#f-hist select[name=query]", "cumulative")
    page.select_option("#h-graph", "FULL")
    page.click("#h-run")
    page.wait_for_selector("#chart-tradeoff g.point_marks path")
    assert page.locator("#chart-true g.bars_marks path").count() == 20
    assert page.locator("#chart-noisy g.bars_marks path").count() == 20
    assert "FULL at ε = 0.5" in page.text_content("#noisy-caption")
    assert "95% intervals of the true count" in page.text_content("#noisy-caption")
    assert page.locator("#chart-noisy g.interval_marks line").count() == 20
    full_edges = page.locator("#chart-graph g.edge path").count()
    # click the θ = 4, ε = 1 point of the trade-off chart: that policy's noisy histogram
    page.click('#chart-tradeoff g.point_marks path[aria-label^="ε: 1;"][aria-label$="policy: theta=4"]')
    expect(page.locator("#noisy-caption")).to_contain_text("THRESHOLD 4 at ε = 1")
    assert page.locator("#chart-graph g.edge path").count() < full_edges
    assert "AS THRESHOLD 4 DOMAIN [0, 200000) BINS 20 BOUNDED" in page.text_content("#policy-sql")
    # the declared 2-D policy, projected to the department: FULL on 5 values
    page.click('button.draw-policy[data-policy="employees_dept_salary"][data-column="dept_id"]')
    expect(page.locator("#graph-caption")).to_contain_text("projected to dept_id")
    assert page.locator("#chart-graph g.edge path").count() == 10
    page.click('button.draw-policy[data-policy="employees_dept_salary"][data-column="salary"]')
    expect(page.locator("#graph-caption")).to_contain_text("projected to salary")
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / "curator.png"), full_page=True)
    assert page.console_errors == []
    page.close()


def test_analyst_demo2_accuracy_and_compare(server, browser):
    base, app = server
    page = signed_in(browser, base, "ann")
    page.wait_for_selector("#history table")
    assert page.is_hidden("#tab-curator")
    before = remaining(app)
    page.select_option("#a-template", "histogram")
    page.select_option("#a-table", "employees")
    page.select_option("#a-column", "salary")
    page.fill("#a-alpha", "10")
    page.fill("#a-beta", "0.05")
    page.click("#a-run")
    page.wait_for_selector("#a-chart g.bars_marks path", state="attached")
    assert "WITH ACCURACY 10.0 CONFIDENCE 0.95" in page.text_content("#a-statement")
    assert page.locator("#a-chart g.bars_marks path").count() == 20
    # each bar carries the honest interval (privacy.intervals), also in the table
    assert page.locator("#a-chart g.interval_marks line").count() == 20
    assert "95% intervals of the true count" in page.text_content("#a-statement")
    assert "95% interval" in page.text_content("#a-table-out")
    assert page.locator("#a-table-out td", has_text="[").count() >= 20
    expect(page.locator("#budget")).not_to_contain_text(f"{before} of")
    # a 2-D histogram at a given ε, drawn as a heatmap of the public 5 × 20 domain
    page.select_option("#a-template", "histogram2d")
    page.select_option("#a-column", "dept_id")
    page.select_option("#a-column2", "salary")
    page.check("#a-mode-eps")
    page.fill("#a-eps", "0.3")
    page.click("#a-run")
    page.wait_for_selector("#a-chart g.cell_marks path", state="attached")
    assert page.locator("#a-chart g.cell_marks path").count() == 100
    # the 1-D histogram again at granularity 4 (COUNT RANGES over the policy's public bins)
    page.select_option("#a-template", "histogram")
    page.select_option("#a-column", "salary")
    page.select_option("#a-granularity", "4")
    page.check("input[name=mode][value=accuracy]")
    page.click("#a-run")
    page.wait_for_selector("#history tr:nth-child(4)")
    assert "COUNT RANGES" in page.text_content("#a-statement")
    assert page.locator("#a-chart g.bars_marks path").count() == 5
    boxes = page.locator("input.pick")  # newest first: the coarse and the first histogram
    boxes.nth(0).check()
    boxes.nth(2).check()
    page.click("#compare")
    page.wait_for_selector("#cmp-a g.bars_marks path", state="attached")
    page.wait_for_selector("#cmp-b g.bars_marks path", state="attached")
    assert "COUNT RANGES" in page.text_content("#cmp-a") and "GROUP BY" in page.text_content("#cmp-b")
    assert page.locator("#cmp-a g.bars_marks path").count() == 5 and page.locator("#cmp-b g.bars_marks path").count() == 20
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / "analyst.png"), full_page=True)
    assert page.console_errors == []
    page.close()


def test_sign_in_failure(server, browser):
    base, _ = server
    page = signed_in(browser, base, "ann", "not-the-password")
    assert "Sign-in failed" in page.text_content("#login-error")
    assert page.url.endswith("/login")
    assert page.request.get(base + "/api/me").status == 401
    page.close()


def test_analyst_on_curator_endpoints_and_csrf(server, browser):
    base, app = server
    page = signed_in(browser, base, "ann", bypass_csp=True)
    page.wait_for_selector("#history table")
    before = remaining(app)
    got = page.evaluate("""async () => {
        const me = await (await fetch('/api/me')).json();
        const post = (path, body, headers) => fetch(path, {method: 'POST', body: JSON.stringify(body),
            headers: Object.assign({'Content-Type': 'application/json'}, headers)}).then(r => r.status);
        return {
          overview: (await fetch('/api/curator/overview')).status,
          budget: await post('/api/curator/declare', {action: 'set_budget', user: 'ann', epsilon: 99},
                             {'X-CSRF-Token': me.csrf}),
          histogram: await post('/api/curator/histogram', {table: 'employees', column: 'salary', lo: 0,
                                hi: 200000, bins: 20, epsilon: 1}, {'X-CSRF-Token': me.csrf}),
          nocsrf: await post('/api/query', {template: 'histogram', table: 'employees', column: 'salary',
                             mode: 'epsilon', epsilon: 0.5}, {}),
        };
    }""")
    assert got == {"overview": 403, "budget": 403, "histogram": 403, "nocsrf": 403}
    assert remaining(app) == before
    page.close()


def test_over_budget_refused_nothing_spent(server, browser):
    base, app = server
    page = signed_in(browser, base, "ann")
    page.wait_for_selector("#history table")
    before = remaining(app)
    n_rows = page.locator("#history tr").count()
    page.select_option("#a-template", "histogram")
    page.check("#a-mode-eps")
    page.fill("#a-eps", "50")
    page.click("#a-run")
    expect(page.locator("#a-error")).to_contain_text("budget")
    assert page.text_content("#a-error").startswith("Error: ") and "budget" in page.text_content("#a-error")
    assert remaining(app) == before
    assert page.locator("#history tr").count() == n_rows
    page.close()
