"""``release_seconds``: every accepted private release takes the same public wall-clock time.

An answer and a failure are both padded to the connection's ``release_seconds`` (so the time
does not tell how much protected data was read); a refusal, decided before any protected row is
read, is not. Only lower bounds on time are asserted (a padded release cannot return early); the
refusal's bound is 20× the time it takes.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

import provsql_dp
from provsql_dp.errors import BudgetExceededError, Error, InterfaceError
from provsql_dp.interfaces import cli
from provsql_dp.privacy import routing
from provsql_dp.privacy.failures import ANALYST_FAILURE

from graph_sql_kit import TRIANGLES, example_db

PAD = 0.4


def timed(con, sql):
    t = time.monotonic()
    rows = con.execute(sql).fetchall()
    return rows, time.monotonic() - t


def test_validation():
    con = provsql_dp.connect()
    assert con.release_seconds is None
    con.release_seconds = np.float64(1.5)
    assert con.release_seconds == 1.5
    con.release_seconds = None
    for bad in (0, -1, float("inf"), float("nan"), "2", True):
        with pytest.raises(InterfaceError, match="release_seconds"):
            con.release_seconds = bad
    with pytest.raises(InterfaceError, match="release_seconds"):
        provsql_dp.connect(release_seconds=-2)


@pytest.mark.parametrize("options", ["", " OPTIONS (mechanism = 'r2t')"])
def test_answers_are_padded(options):
    con = example_db(budget=10, seed=5)
    con.release_seconds = PAD
    rows, took = timed(con, TRIANGLES + " WITH EPSILON 0.5" + options)
    assert len(rows) == 1 and took >= PAD
    assert con.ledger.remaining("default") == 9.5  # padding spends nothing more


def test_estimate_error_is_padded():
    con = example_db(budget=10, seed=5)
    con.release_seconds = PAD
    _, took = timed(con, "EXPLAIN PRIVACY " + TRIANGLES + " WITH EPSILON 0.5 ESTIMATE ERROR WITH EPSILON 0.1")
    assert took >= PAD


def test_a_failure_is_padded_and_says_nothing(tmp_path, monkeypatch):
    path = str(tmp_path / "db.duckdb")
    cur = provsql_dp.connect(path)
    from provsql_dp.interfaces import example_data

    example_data.load(cur)
    cur.execute("PROTECT TABLE friendship BY (src, dst) AS member; SET PRIVACY BUDGET 2 FOR USER 'ann'")
    cur.close()
    con = provsql_dp.connect(path, role="analyst", user="ann", release_seconds=PAD)

    def failing(*args, **kwargs):  # a failure while protected rows are read
        raise RuntimeError("could not convert 'Alice'")

    monkeypatch.setattr(routing, "release", failing)  # the release of every route
    t = time.monotonic()
    with pytest.raises(Error) as err:
        con.execute(TRIANGLES + " WITH EPSILON 0.5")
    assert time.monotonic() - t >= PAD
    assert str(err.value) == ANALYST_FAILURE and "Alice" not in str(err.value)


def test_refusals_are_not_padded():
    con = example_db(budget=0.5, seed=5)
    t = time.monotonic()
    con.execute(TRIANGLES + " WITH EPSILON 0.5").fetchall()  # spends the whole budget
    unpadded = time.monotonic() - t
    con.release_seconds = 20 * unpadded + 5
    t = time.monotonic()
    with pytest.raises(BudgetExceededError):
        con.execute(TRIANGLES + " WITH EPSILON 0.5")
    assert time.monotonic() - t < con.release_seconds


def test_public_statements_are_not_padded():
    con = example_db(budget=10, seed=5)
    con.release_seconds = 30.0
    t = time.monotonic()
    con.execute("SELECT COUNT(*) FROM member").fetchall()  # a public table: no release
    assert time.monotonic() - t < 30.0


def test_cli_flag(monkeypatch):
    seen = {}

    def shell_main(database, **kw):
        seen.update(kw)
        return 0

    monkeypatch.setattr("provsql_dp.interfaces.shell.command.main", shell_main)
    monkeypatch.setattr("provsql_dp.interfaces.shell.main", shell_main, raising=False)
    assert cli.main(["shell", "--release-seconds", "2.5", "-c", "SELECT 1"]) == 0
    assert seen["release_seconds"] == 2.5
    with pytest.raises(SystemExit):
        cli.main(["shell", "--release-seconds", "0", "-c", "SELECT 1"])


def test_an_interrupt_is_not_padded(monkeypatch):
    """Ctrl-C (KeyboardInterrupt) ends the statement at once: the caller's own act, not data."""
    con = example_db(budget=10, seed=5)
    con.release_seconds = 30.0

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(routing, "release", interrupted)
    t = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        con.execute(TRIANGLES + " WITH EPSILON 0.5")
    assert time.monotonic() - t < 30.0
