"""The exception hierarchy: PEP 249's names, with ours beneath the closest of them.

Every error raised to a user derives from :class:`Error`; messages name the problem and how to
fix it. DuckDB's own errors are translated at the connection boundary (see ``connection``).

>>> from provsql_dp.errors import BudgetExceededError, Error
>>> issubclass(BudgetExceededError, Error)
True
"""

from __future__ import annotations

__all__ = [
    "Warning",
    "Error",
    "InterfaceError",
    "DatabaseError",
    "DataError",
    "OperationalError",
    "IntegrityError",
    "InternalError",
    "ProgrammingError",
    "NotSupportedError",
    "UnsupportedQueryError",
    "DeclarationError",
    "BudgetExceededError",
    "PrivacyError",
    "SolverError",
    "CaptureTooLarge",
    "StatementCancelled",
]


class Warning(Exception):  # noqa: A001 - the name is fixed by PEP 249
    """Important warnings (PEP 249)."""


class Error(Exception):
    """Base class of every provsql_dp error (PEP 249)."""


class InterfaceError(Error):
    """Misuse of the interface rather than of the database (PEP 249)."""


class DatabaseError(Error):
    """Errors related to the database (PEP 249)."""


class DataError(DatabaseError):
    """Problems with the processed data: division by zero, out-of-range values (PEP 249)."""


class OperationalError(DatabaseError):
    """Errors in the database's operation, not necessarily under the programmer's control."""


class IntegrityError(DatabaseError):
    """Relational integrity is affected, e.g. a constraint fails (PEP 249)."""


class InternalError(DatabaseError):
    """The database hit an internal error (PEP 249)."""


class ProgrammingError(DatabaseError):
    """Programming errors: a missing table, a syntax error, a wrong number of parameters."""


class NotSupportedError(DatabaseError):
    """A method or a database API is not supported (PEP 249)."""


class UnsupportedQueryError(NotSupportedError):
    """A query construct cannot be answered privately (non-monotone, or not supported yet)."""


class DeclarationError(ProgrammingError):
    """A privacy declaration (PROTECT, policy, budget) is malformed or inconsistent."""


class BudgetExceededError(OperationalError):
    """A release would exceed the remaining privacy budget; nothing was spent."""


class PrivacyError(ProgrammingError):
    """An operation would reveal private data (e.g. an analyst asking for raw protected rows)."""


class SolverError(InternalError):
    """A linear program failed (infeasible, time limit, numerical trouble); nothing was released."""


class CaptureTooLarge(OperationalError):
    """A provenance capture has more derivation rows than the connection's ``max_capture_rows``.

    Raised before the rows reach Python (the capture query is cut off one row past the limit), so
    a query whose provenance would not fit in memory fails cleanly instead of exhausting it. A
    private release never shows it: the release reads no data instead (see
    :mod:`provsql_dp.privacy.answer`); curators meet it in ``provenance`` and ``explain``."""

    def __init__(self, limit: int):
        self.limit = int(limit)
        super().__init__(
            f"the provenance of this query has more than {self.limit:,} derivation rows "
            f"(max_capture_rows = {self.limit:,}), more than this connection may hold in memory; "
            "narrow the query, or on a machine with more memory raise the limit: "
            "provsql_dp.connect(..., max_capture_rows=N) or con.max_capture_rows = N "
            "(None: no limit), or provsql-dp shell/serve --max-capture-rows N")


class StatementCancelled(OperationalError):
    """The statement was cancelled while it ran (``con.cancel()``: the shell's Ctrl-C, the
    explorer's Cancel) — by the caller, not because of the data. Nothing of it was released; ε
    that a release had charged before the cancel stays spent (see :mod:`provsql_dp._cancel`)."""

    def __init__(self):
        super().__init__(
            "the statement was interrupted (cancelled) before it finished; nothing was released. "
            "ε already charged for a release stays spent (SHOW PRIVACY BUDGET shows what is left)")
