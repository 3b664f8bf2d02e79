"""Which failed statements the audit log records (:mod:`provsql_dp.privacy.audit`).

Every failed statement of an analyst (each is a refusal: of the statement, of the budget, or a
cancel), and a curator's failed privacy statements and private queries (a curator's failed
``CREATE TABLE`` is no refusal, and is not logged). A statement that failed after a charge is
always logged (``failed``). A refusal of the wire server's own — a protocol message it does not
take (an unknown prepared statement or portal, a bad parameter or format code), a statement it
will not run (a curator's ``ROLLBACK TO SAVEPOINT``) — is logged whatever the role
(:func:`audit_refusal`). Nothing is logged for a read-only connection, which can write nothing.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> worth_logging(con, "SELECT COUNT(*) FROM t WITH EPSILON 1", False), worth_logging(con, "SELEC 1", False)
(True, False)
"""

from __future__ import annotations

from ...privacy import audit
from .statements import has_epsilon_clause, is_privacy_statement

__all__ = ["audit_failure", "audit_refusal", "worth_logging"]


def worth_logging(con, sql: str, charged: bool) -> bool:
    if con.read_only:
        return False
    if charged or con.role != "curator":
        return True
    try:
        return is_privacy_statement(sql) or has_epsilon_clause(sql)
    except Exception:  # noqa: BLE001 - text that does not even tokenize: not ours
        return False


def audit_failure(con, sql: str, error: BaseException, charged: bool) -> None:
    """Record ``error`` of ``sql`` on ``con`` when :func:`worth_logging` says so."""
    if worth_logging(con, sql, charged):
        audit.record_failure(con._duck, con._ledger.source, con.user, sql, error, charged)


def audit_refusal(con, what: str, error: BaseException) -> None:
    """Record ``error``, a refusal of ``what`` (a statement's text, or the protocol message
    refused) on ``con``, for any role (nothing for a read-only connection)."""
    if con is not None and not con.read_only:
        audit.record_failure(con._duck, con._ledger.source, con.user, what, error, False)
