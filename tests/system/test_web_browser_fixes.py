"""The explorer's fixes of issue 27 in a real browser (Playwright on Debian's Chromium, as
test_web_browser.py): no old answer under a new error, accuracy-first for a plain count, the
Protect form starting empty, an absurd budget refused, Demo 1 opening on a declared policy."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow  # .ci/run's second step

from test_web_browser import browser, expect, remaining, server, signed_in  # noqa: E402,F401


def run_sql(page, sql: str, *, alpha: str | None = None, epsilon: str | None = None) -> None:
    page.select_option("#a-template", "sql")
    page.fill("#a-sql", sql)
    if alpha is not None:
        page.check("input[name=mode][value=accuracy]")
        page.fill("#a-alpha", alpha)
        page.fill("#a-beta", "0.05")
    else:
        page.check("#a-mode-eps")
        page.fill("#a-eps", epsilon)
    page.click("#a-run")


def test_an_error_leaves_no_earlier_answer_on_screen(server, browser):
    base, app = server
    page = signed_in(browser, base, "ann")
    page.wait_for_selector("#history table")
    run_sql(page, "SELECT dept_id, COUNT(*) FROM employees GROUP BY dept_id", epsilon="0.2")
    page.wait_for_selector("#a-chart g.bars_marks path", state="attached")
    assert page.locator("#a-table-out td").count() > 0
    before = remaining(app)
    run_sql(page, "SELECT * FROM employees", epsilon="0.2")  # refused: a protected table's rows
    expect(page.locator("#a-error")).to_contain_text("Error: ")
    assert page.locator("#a-chart *").count() == 0 and page.locator("#a-table-out *").count() == 0
    assert page.text_content("#a-statement") == ""
    assert remaining(app) == before
    # the refusal's own 400 is the only console message: no script error
    assert [m for m in page.console_errors if "status of 400" not in m] == []
    page.close()


def test_accuracy_first_for_a_plain_count_and_refused_where_the_error_is_private(server, browser):
    base, app = server
    page = signed_in(browser, base, "ann")
    page.wait_for_selector("#history table")
    run_sql(page, "SELECT COUNT(*) FROM employees", alpha="10")
    expect(page.locator("#a-statement")).to_contain_text("WITH ACCURACY 10.0 CONFIDENCE 0.95")
    assert "laplace" in page.text_content("#a-statement") and page.text_content("#a-error") == ""
    assert page.locator("#a-table-out td", has_text="[").count() == 1  # the value's interval
    before = remaining(app)
    run_sql(page, "SELECT COUNT(*) FROM friendship", alpha="10")  # recursive mechanism: refused
    expect(page.locator("#a-error")).to_contain_text("WITH ACCURACY is not available")
    assert remaining(app) == before
    page.close()


def test_protect_form_starts_empty_and_an_absurd_budget_is_refused(server, browser):
    base, app = server
    page = signed_in(browser, base, "curator")
    page.wait_for_selector("#policies table")
    protected = app.state.engine.run("curator", "_test", "SHOW PROTECTED").rows
    assert page.input_value("#p-table") == ""
    page.click("#f-protect button:not([type=button])")
    expect(page.locator("#declare-error")).to_contain_text("choose the table to protect")
    assert app.state.engine.run("curator", "_test", "SHOW PROTECTED").rows == protected
    page.fill("#f-budget input[name=user]", "zed")
    page.fill("#f-budget input[name=epsilon]", "1e308")
    page.click("#f-budget button")
    expect(page.locator("#declare-error")).to_contain_text("at most 1000")
    assert app.state.engine.run("curator", "_test", "SHOW PRIVACY BUDGET FOR USER 'zed'").rows == []
    page.close()


def test_demo1_opens_on_the_declared_policy_and_a_key_column_gets_one_bin_per_value(server, browser):
    base, _ = server
    page = signed_in(browser, base, "curator")
    page.wait_for_selector("#policies table")
    assert (page.input_value("#h-table"), page.input_value("#h-column")) == ("employees", "salary")
    assert (page.input_value("#h-lo"), page.input_value("#h-hi"), page.input_value("#h-bins")) == ("0", "200000", "20")
    assert page.input_value("#h-graph") == "THRESHOLD 2"
    page.select_option("#h-table", "departments")  # ids 1..5: five bins, not twenty
    assert page.input_value("#h-column") == "id"
    assert (page.input_value("#h-lo"), page.input_value("#h-hi"), page.input_value("#h-bins")) == ("1", "6", "5")
    assert page.console_errors == []
    page.close()


def test_the_sql_editor_reads_a_public_table_as_written(server, browser):
    base, app = server
    page = signed_in(browser, base, "ann")
    page.wait_for_selector("#history table")
    assert page.is_hidden("#a-written")
    page.select_option("#a-template", "sql")
    page.fill("#a-sql", "SELECT name FROM departments ORDER BY name")
    page.check("#a-mode-written")
    before = remaining(app)
    page.click("#a-run")
    expect(page.locator("#a-statement")).to_contain_text("public data, no ε")
    assert page.locator("#a-table-out td").count() == 5 and remaining(app) == before
    page.select_option("#a-template", "histogram")  # the option is the SQL editor's only
    assert page.is_hidden("#a-written") and page.is_checked("#a-mode-eps")
    assert page.console_errors == []
    page.close()
