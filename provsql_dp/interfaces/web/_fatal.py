"""The server's second wall: a DuckDB database invalidated by one statement is reopened for all.

After an INTERNAL error (``duckdb.InternalException``: an assertion inside DuckDB, such as ``||``
past its 4 GiB string limit, red team h143) DuckDB invalidates the database instance: every
connection to it, every session's, then fails with ``FATAL Error: Failed: database has been
invalidated …`` (``duckdb.FatalException``), and a new connection to the same file gets the
same dead instance for as long as one connection to it stays open. The bounds of the analyst
boundary keep analysts from the errors known; this wall is for the next one (red team h147).

:meth:`Engine.recover <provsql_dp.interfaces.web.engine.Engine.recover>` (called on every
statement's failure) recognises such an error (:func:`is_fatal`, through ``__cause__`` and
``__context__``: the engine may have translated it), closes every connection the engine opened
— so DuckDB drops the instance — and bumps the engine's generation: each session then reopens its
connection before its next message (:meth:`Engine.fresh`), keeping its settings (``SET PRIVACY
EPSILON``, interval columns). The ledger needs nothing: each charge is one committed
transaction, in the file (and its WAL) before the release runs, so a charge committed before the
error is read back on reopening, and one the error interrupted was never committed; nothing is
retried, so nothing is charged twice. A database in memory cannot be reopened (its rows died
with the instance): the engine then refuses every statement with :data:`DEAD_IN_MEMORY` and logs
the error once.

>>> import duckdb
>>> is_fatal(duckdb.FatalException("FATAL Error: Failed: database has been invalidated"))
True
>>> try:
...     try:
...         raise duckdb.InternalException("INTERNAL Error: Scalar function ...")
...     except duckdb.Error as e:
...         raise ValueError("translated") from e
... except ValueError as e:
...     is_fatal(e)
True
>>> is_fatal(duckdb.InvalidInputException("Division by zero"))
False
"""

from __future__ import annotations

import duckdb

__all__ = ["is_fatal", "in_memory", "DEAD_IN_MEMORY", "REOPENED"]

DEAD_IN_MEMORY = ("the server's database failed (DuckDB invalidated it after an internal error) "
                  "and, held in memory, cannot be reopened: the operator must restart the server "
                  "(its log has the error); nothing was run or charged")
REOPENED = ("the server's database failed on an internal error and was reopened; this statement "
            "did not complete (ε a release charged before the failure stays spent, as on a "
            "cancel); run it again")


def is_fatal(e: BaseException | None) -> bool:
    """Whether ``e`` (or an exception it was raised from) is DuckDB's internal or fatal error,
    after which the database instance is invalidated. By the exception's type only, never its
    text: an analyst's value can be quoted in an error's text (``CAST('INTERNAL Error: x' AS
    INT)``), and a reopening stops every session's statement.

    >>> is_fatal(duckdb.ConversionException("Could not convert string 'FATAL Error: x' to INT32"))
    False
    """
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, (duckdb.FatalException, duckdb.InternalError)):
            return True
        e = e.__cause__ or e.__context__
    return False


def in_memory(database: str) -> bool:
    """Whether ``database`` names a DuckDB database held in memory (``:memory:``, ``:memory:x``,
    ``""``), which a reopening cannot bring back."""
    return database in ("", ":memory:") or database.startswith(":memory:")
