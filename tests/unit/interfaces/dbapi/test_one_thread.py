"""A second thread's statement on a connection busy with another thread's is refused
(``provsql_dp.threadsafety = 1``; :mod:`provsql_dp.interfaces.dbapi.one_thread`): it planned from
the first statement's catalog snapshot (``Catalog._memo``), follow-up of red team h94attack."""

from __future__ import annotations

import threading

import pytest

import provsql_dp
from provsql_dp.errors import ProgrammingError
from provsql_dp.interfaces.dbapi import cursor as cursor_module


def _hold_the_first_thread(monkeypatch):
    """``(inside, release)``: this thread's next statement sets ``inside`` once under way, then
    waits for ``release``."""
    inside, release = threading.Event(), threading.Event()
    checked = cursor_module.check_statement
    first = threading.get_ident()

    def hold(connection, sql, parameters=None):  # the first thread's statement waits, under way
        if threading.get_ident() == first:
            inside.set()
            release.wait(10)
        return checked(connection, sql, parameters)

    monkeypatch.setattr(cursor_module, "check_statement", hold)
    return inside, release


def test_a_second_threads_statement_is_refused_while_the_first_runs(monkeypatch):
    con = provsql_dp.connect()
    con.execute("CREATE TABLE t(x INT); INSERT INTO t VALUES (1), (2)")
    inside, release = _hold_the_first_thread(monkeypatch)
    seen = {}

    def second():
        inside.wait(10)
        for name, call in (("execute", lambda: con.execute("SELECT COUNT(*) FROM t")),
                           ("cursor", lambda: con.cursor().execute("SELECT 1")),
                           ("plan", lambda: con.plan("SELECT x FROM t")),
                           ("commit", con.commit), ("rollback", con.rollback)):
            try:
                call()
                seen[name] = "ran"
            except ProgrammingError as e:
                seen[name] = str(e)
        release.set()

    th = threading.Thread(target=second)
    th.start()
    assert con.execute("SELECT COUNT(*) FROM t").fetchall() == [(2,)]  # the first one ends well
    th.join()
    assert set(seen) == {"execute", "cursor", "plan", "commit", "rollback"}
    for text in seen.values():
        assert text.startswith("this connection is running a statement in another thread"), text
        assert "threadsafety = 1" in text and "provsql_dp.connect" in text
    # once it ended, another thread may use the connection (as a pool hands it out)
    monkeypatch.undo()
    out = []
    th = threading.Thread(target=lambda: out.append(con.execute("SELECT COUNT(*) FROM t").fetchall()))
    th.start()
    th.join()
    assert out == [[(2,)]]
    assert not con._thread.busy_elsewhere()



def test_a_second_threads_fetch_is_refused_while_the_first_runs(monkeypatch):
    """A fetch reads its cursor's result, which a statement run on that cursor replaces field by
    field: refused while another thread's statement runs (h104 leftover 4); it moves nothing."""
    con = provsql_dp.connect()
    con.execute("CREATE TABLE t(x INT); INSERT INTO t SELECT * FROM range(5)")
    other = con.cursor().execute("SELECT x FROM t ORDER BY x")  # a result made before
    inside, release = _hold_the_first_thread(monkeypatch)
    seen = {}

    def second():
        inside.wait(10)
        for name in ("fetchone", "fetchmany", "fetchall", "fetchdf", "fetch_arrow_table"):
            try:
                getattr(other, name)()
                seen[name] = "fetched"
            except ProgrammingError as e:
                seen[name] = str(e)
        release.set()

    th = threading.Thread(target=second)
    th.start()
    assert other.execute("SELECT COUNT(*) FROM t").fetchall() == [(5,)]  # the same cursor
    th.join()
    assert set(seen) == {"fetchone", "fetchmany", "fetchall", "fetchdf", "fetch_arrow_table"}
    for text in seen.values():
        assert text.startswith("this connection is running a statement in another thread"), text
        assert "threadsafety = 1" in text and "Nothing was fetched" in text
    monkeypatch.undo()
    cur = con.cursor().execute("SELECT x FROM t ORDER BY x")
    out = []
    th = threading.Thread(target=lambda: out.append(cur.fetchall()))  # none runs: fetched
    th.start()
    th.join()
    assert out == [[(0,), (1,), (2,), (3,), (4,)]]
