"""What an analyst sees when a private release fails: nothing about the data.

Once the planner accepts a private statement, the outcome an analyst observes — answer or
error, the error's class and text, the ε charged — must be a function of the statement, the
schema, the declarations and the budget only (the side-channel rule, README, "No side channels"). Refusals are
decided before any protected row is read, so they keep their messages (:data:`REFUSALS`). Any
other failure happens while protected rows are read or released — after the ledger was charged,
so the ε charged is the same whatever the data; its message could quote a protected value
(DuckDB's "Could not convert string 'Alice'"), so an analyst gets one fixed message instead,
with nothing from the failure (not even as the exception's cause). The curator keeps the full
message, and every failure is recorded in ``_provsql_dp.incidents``.

The mechanisms make such failures unreachable for accepted statements (expressions are
evaluated totally, values clamped, solver failures replaced by a data-independent release):
this is the last line of defence, not the mechanism.

A statement cancelled by its caller (``con.cancel()``, :mod:`provsql_dp._cancel`) is not a
failure of the release: whatever the cancel interrupted (a DuckDB query, an LP, a loop) ends
as :class:`~provsql_dp.errors.StatementCancelled`, for an analyst as for the curator — the
caller's own act, which says nothing about the data.

>>> class Con:
...     role = "analyst"
...     class _catalog:
...         @staticmethod
...         def record_incident(what): pass
>>> str(release_failure(Con, ValueError("weights must be finite: 'Alice'")))[:48]
'the private query failed while it read protected'
"""

from __future__ import annotations

import duckdb

from .._cancel import current
from .._duckdb_errors import translate
from ..errors import (
    BudgetExceededError,
    DataError,
    Error,
    InternalError,
    NotSupportedError,
    ProgrammingError,
    StatementCancelled,
)

__all__ = ["MIN_EPSILON", "REFUSALS", "ANALYST_FAILURE", "release_failure"]

#: the smallest ε a private release accepts; below it the statement is refused before anything
#: is charged (the noise would drown any answer, and the recursive mechanism's Δ search grows
#: like 1/ε)
MIN_EPSILON = 1e-6

#: errors raised by our own checks before any protected row is read: data-independent (inside a
#: release DuckDB's own errors arrive untranslated, as duckdb.Error, never as one of these)
REFUSALS = (BudgetExceededError, ProgrammingError, NotSupportedError)

ANALYST_FAILURE = (
    "the private query failed while it read protected data; what went wrong is not shown to "
    "analysts, since it could reveal protected values. The ε of the statement was charged. "
    "Ask the curator (the failure is recorded for them)")


def release_failure(con, e: BaseException) -> Error:
    """The PEP 249 error to raise for a failure inside a release: a fixed message for an
    analyst, the full one (DuckDB's, mapped to PEP 249) for the curator; a cancelled
    statement's is :class:`~provsql_dp.errors.StatementCancelled` (nothing recorded)."""
    token = current()
    if isinstance(e, StatementCancelled) or (token is not None and token.cancelled):
        return e if isinstance(e, StatementCancelled) else StatementCancelled()
    what = f"{type(e).__name__}: {e}"
    try:
        con._catalog.record_incident(f"release failed: {what}"[:2000])
    except Exception:  # noqa: BLE001 - recording must never mask the failure
        pass
    if con.role == "analyst":
        return DataError(ANALYST_FAILURE)
    if isinstance(e, duckdb.Error):
        return translate(e)
    if isinstance(e, Error):
        return e
    return InternalError(f"the release failed: {what}")
