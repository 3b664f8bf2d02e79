"""The explorer plots and tabulates a released value wherever the select list puts it (a real
browser, as test_web_browser.py): ``SELECT COUNT(*) AS n, dept_id … GROUP BY dept_id`` draws the
bars of ``n`` labelled by the key after it, and the key gets no interval column."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow  # .ci/run's second step

from test_web_browser import browser, server, signed_in  # noqa: E402,F401
from test_web_browser_fixes import run_sql  # noqa: E402


def test_a_count_before_its_key_is_plotted_and_its_key_has_no_interval(server, browser):
    base, _ = server
    page = signed_in(browser, base, "ann")
    page.wait_for_selector("#history table")
    run_sql(page, "SELECT COUNT(*) AS n, dept_id FROM employees GROUP BY dept_id", epsilon="0.2")
    page.wait_for_selector("#a-chart g.bars_marks path", state="attached")
    assert page.locator("#a-chart g.bars_marks path").count() == 5  # one bar per department
    headers = page.locator("#a-table-out th").all_text_contents()
    assert headers == ["n", "dept_id", "n 95% interval"]
    assert page.console_errors == []
    page.close()
