"""The clock is real and a cancel stops the whole release (issue 26, items 3 and 6).

A release's DuckDB step is interrupted at ``release_seconds`` / ``release_time_limit`` (not
awaited): the release returns the data-independent fallback, same shape and ε. A cancel
(``con.cancel()`` from another thread, the explorer's Cancel) stops a DuckDB step and the LPs
within moments; ε charged before stays charged, a cancel before the charge charges nothing, and
the ledger is whole. Wall times are asserted with wide margins only (below 5× the limit).
"""

from __future__ import annotations

import threading
import time

import pytest

import provsql_dp
import provsql_dp.mechanisms.recursive._lp as lp
from provsql_dp.errors import StatementCancelled
from provsql_dp.interfaces.web.engine import Engine, error_text
from provsql_dp.privacy import answer as answer_module
from provsql_dp.privacy import fast_path

#: a cross product of 200,000² pairs that no pair passes: a DuckDB step of many minutes that
#: yields no row (so neither the capture limit nor memory cuts it short)
SLOW = "SELECT COUNT(*) FROM t a JOIN t b ON (a.x * b.x + a.id) % 1000003 = 1000004"
LIMIT = 0.5


def slow_db(path=":memory:", budget=10):
    con = provsql_dp.connect(path)
    con.execute("CREATE TABLE t AS SELECT i AS id, i % 1000 AS x FROM range(200000) r(i)")
    con.execute(f"PROTECT TABLE t; SET PRIVACY BUDGET {budget}; "
                f"SET PRIVACY BUDGET {budget} FOR USER 'ann'")
    con.commit()
    return con


def incidents(con) -> list[str]:
    return [r[0] for r in con._duck.execute("SELECT what FROM _provsql_dp.incidents").fetchall()]


def timed(fn):
    t = time.monotonic()
    try:
        return fn(), time.monotonic() - t
    except Exception as e:  # noqa: BLE001 - the caller looks at it
        return e, time.monotonic() - t


def cancel_later(con, when):
    """Call ``con.cancel()`` from another thread once ``when()`` holds; the time it was called."""
    called = {}

    def run():
        while not when():
            time.sleep(0.01)
        called["at"] = time.monotonic()
        called["ok"] = con.cancel()

    th = threading.Thread(target=run, daemon=True)
    th.start()
    return called, th


def test_the_slow_step_is_slow():
    """Unbounded, the step runs far past the limit (interrupted here after 5× the limit)."""
    con = slow_db()
    timer = threading.Timer(5 * LIMIT, con._duck.interrupt)
    timer.start()
    out, took = timed(lambda: con._duck.execute(SLOW).fetchall())
    timer.cancel()
    assert took >= 5 * LIMIT and "nterrupt" in str(out)


@pytest.mark.parametrize("setting", ["release_seconds", "release_time_limit"])
def test_a_duckdb_step_past_the_clock_is_interrupted_with_the_fallback(setting):
    con = slow_db()
    small = slow_db()
    small.execute("DELETE FROM t WHERE id > 10")
    normal = small.execute(SLOW + " WITH EPSILON 1")
    setattr(con, setting, LIMIT)
    cur, took = timed(lambda: con.execute(SLOW + " WITH EPSILON 1"))
    assert not isinstance(cur, Exception), cur
    assert LIMIT * 0.9 <= took < 5 * LIMIT, took  # returns at the clock, not minutes later
    rows = cur.fetchall()
    assert cur.description == normal.description and len(rows) == 1 and len(rows[0]) == 1
    assert cur.privacy.mechanism == normal.privacy.mechanism == "recursive"
    assert cur.privacy.epsilon == 1 and con.ledger.remaining("default") == 9
    (what,) = incidents(con)
    assert f"time budget of {LIMIT:g} s during the reading of the protected rows" in what
    assert "data-independent fallback" in what


def test_the_laplace_read_is_interrupted_too(monkeypatch):
    con = slow_db()
    normal = con.execute("SELECT COUNT(*) FROM t WITH EPSILON 1")
    assert normal.privacy.mechanism == "laplace"
    real = fast_path._kept_laplace_sql
    monkeypatch.setattr(fast_path, "_kept_laplace_sql",  # the same read, made slow
                        lambda *a, **k: (SLOW.replace("COUNT(*)", "COUNT(*) AS n"),
                                         real(*a, **k)[1]))
    con.release_seconds = LIMIT
    cur, took = timed(lambda: con.execute("SELECT COUNT(*) FROM t WITH EPSILON 1"))
    assert not isinstance(cur, Exception), cur
    assert took < 5 * LIMIT
    assert cur.description == normal.description and cur.privacy.mechanism == "laplace"
    assert len(cur.fetchall()) == 1 and con.ledger.remaining("default") == 8
    assert any("Laplace release of 0" in w for w in incidents(con))


def test_cancel_stops_a_duckdb_step(tmp_path, monkeypatch):
    path = str(tmp_path / "c.duckdb")
    slow_db(path).close()
    an = provsql_dp.connect(path, role="analyst", user="ann")
    charged = threading.Event()  # the cancel must land in the read, after the charge: on a
    real_charge = type(an._ledger).charge  # loaded machine 0.3 s can still be before it

    def charge(self, *args, **kwargs):
        out = real_charge(self, *args, **kwargs)
        charged.set()
        return out

    monkeypatch.setattr(type(an._ledger), "charge", charge)
    start = time.monotonic()
    called, th = cancel_later(an, lambda: charged.is_set() and time.monotonic() - start > 0.3)
    out, took = timed(lambda: an.execute(SLOW + " WITH EPSILON 1"))
    th.join()
    assert called["ok"] and isinstance(out, StatementCancelled), out  # not the analyst failure
    assert time.monotonic() - called["at"] < 3.0  # measured: about 0.05 s
    # charged before the cancel (the read had begun): stays charged, written once and whole
    assert an.execute("SHOW PRIVACY BUDGET").fetchall() == [("ann", "10", "1", "9")]
    assert an.execute("SELECT COUNT(*) FROM t WITH EPSILON 1").fetchall()  # usable again
    an.close()


def test_cancel_stops_the_lps(monkeypatch):
    """A node-private path count solved by the plain LPs (long PDLP solves): cancelled while
    an LP runs, the release stops within moments."""
    monkeypatch.setattr(lp, "CUTS", False)
    con = provsql_dp.connect()
    con.execute("CREATE TABLE e AS SELECT DISTINCT least(a, b) AS src, greatest(a, b) AS dst "
                "FROM (SELECT (hash(i) % 1000)::INT AS a, (hash(i + 1000000) % 1000)::INT AS b "
                "FROM range(40000) r(i)) WHERE a <> b")
    con.execute("PROTECT TABLE e BY (src, dst) AS node; SET PRIVACY BUDGET 5")
    called, th = cancel_later(con, lambda: bool(con._cancel._solvers))  # an LP is running
    out, _ = timed(lambda: con.execute(
        "SELECT COUNT(*) FROM e a JOIN e b ON a.dst = b.src WITH EPSILON 1"))
    th.join()
    assert isinstance(out, StatementCancelled), out
    assert time.monotonic() - called["at"] < 3.0  # measured: about 0.03 s
    assert con.ledger.remaining("default") == 4 and len(con.ledger.entries()) == 1
    assert not con._cancel._solvers and not con._cancel.cancelled


def test_a_cancel_before_the_charge_charges_nothing(monkeypatch):
    con = slow_db()
    facts = answer_module.facts  # where every aggregate route's decision starts

    def cancelled_while_planning(c, *args, **kwargs):
        con.cancel()  # as if the caller's cancel arrived now
        return facts(c, *args, **kwargs)

    monkeypatch.setattr(answer_module, "facts", cancelled_while_planning)
    with pytest.raises(StatementCancelled):
        con.execute(SLOW + " WITH EPSILON 1")
    assert con.ledger.remaining("default") == 10 and con.ledger.entries() == []


def test_the_explorers_cancel_stops_a_release(tmp_path):
    path = str(tmp_path / "w.duckdb")
    slow_db(path).close()
    eng = Engine(path)
    out = {}

    def run():
        try:
            eng.run("analyst", "ann", SLOW + " WITH EPSILON 1")
        except provsql_dp.Error as e:
            out["error"] = error_text(e)

    th = threading.Thread(target=run)
    th.start()
    while "ann" not in eng._running:
        time.sleep(0.01)
    time.sleep(0.3)
    assert eng.cancel("ann")
    th.join(timeout=10)
    assert not th.is_alive() and "interrupted" in out["error"]
    eng.close()
