"""One thread at a time in a connection's statements, as ``provsql_dp.threadsafety = 1`` says.

PEP 249's level 1: threads may share the module, not connections. A statement of a connection
keeps state on it for its duration — the catalog reads it plans from (``Catalog._memo``, a
snapshot of the schema and declarations), its cancel token, its DuckDB connection — so a second
thread's statement run meanwhile planned from the first one's snapshot, and a ``con.cancel()``
stopped both. A statement (``Cursor.execute``, ``Connection.plan`` and what calls them; also
``commit`` and ``rollback``, which would end its transaction under it) entered by a thread while
another thread's is under way on the same connection is refused with a
:class:`~provsql_dp.errors.ProgrammingError`, as sqlite3's ``check_same_thread`` does (here only
*while* the other runs: a connection may pass from thread to thread, as a pool hands it out).
The same thread may enter again (a statement run from inside another); ``con.cancel()`` is no
statement and works from any thread. Open one connection per thread (``provsql_dp.connect``), as
the explorer's and the wire server's sessions do.

A fetch (``fetchone``, ``fetchmany``, ``fetchall``, ``fetchdf``, ``fetch_arrow_table``,
``fetchnumpy``) reads only its cursor's result, made whole when its statement ended (tuples, or
Arrow converted on a private in-memory DuckDB): it touches neither the connection's DuckDB nor
its catalog, ledger or cancel token. But a statement run on the same cursor replaces that result
field by field (description, rows, position, then the release's privacy information), so a fetch
meanwhile from another thread could read a torn result — the new description over the old rows,
a DataFrame without its interval columns. So a fetch is refused too while another thread's
statement runs on the connection (:data:`FETCHING`), as statements are; it moves nothing, and
fetches the same rows once that statement ended.

>>> guard = StatementThread()
>>> with guard.entered():
...     with guard.entered():  # the same thread, nested
...         pass
>>> import threading
>>> seen = []
>>> with guard.entered():
...     t = threading.Thread(target=lambda: seen.append(guard.busy_elsewhere()))
...     t.start(); t.join()
>>> seen, guard.busy_elsewhere()
([True], False)
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

from ...errors import ProgrammingError

__all__ = ["StatementThread", "SHARED", "FETCHING"]

#: the refusal's text
SHARED = ("this connection is running a statement in another thread: a provsql_dp connection "
          "serves one thread at a time (provsql_dp.threadsafety = 1: threads may share the module, "
          "not connections); open a connection per thread with provsql_dp.connect, or wait for "
          "the other statement to end. Nothing was run or charged")

#: a fetch's refusal
FETCHING = ("this connection is running a statement in another thread, which may be replacing "
            "this cursor's result: a provsql_dp connection serves one thread at a time "
            "(provsql_dp.threadsafety = 1); fetch in the thread that ran the statement, or once "
            "the other statement ends, and open a connection per thread with provsql_dp.connect. "
            "Nothing was fetched")


class StatementThread:
    """Which thread runs the connection's statement (none, or one, entered maybe several times)."""

    __slots__ = ("_lock", "_owner", "_depth")

    def __init__(self):
        self._lock = threading.Lock()
        self._owner: int | None = None
        self._depth = 0

    def busy_elsewhere(self) -> bool:
        """Whether another thread runs a statement on the connection now."""
        return self._owner not in (None, threading.get_ident())

    @contextmanager
    def entered(self):
        """The block is this thread's statement; refused while another thread's runs."""
        me = threading.get_ident()
        with self._lock:
            if self._owner not in (None, me):
                raise ProgrammingError(SHARED)
            self._owner = me
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if not self._depth:
                    self._owner = None
