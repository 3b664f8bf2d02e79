"""SQLSTATE codes for provsql_dp's PEP 249 errors, so wire clients can tell failures apart.

The most specific class wins (``BudgetExceededError`` before ``OperationalError``). Codes are
PostgreSQL's own where one fits, so psycopg raises its matching exception class
(``psycopg.errors.InsufficientPrivilege`` for a refused analyst statement, …):

=====================================  =====  ==============================================
error                                  code   PostgreSQL's name
=====================================  =====  ==============================================
``PrivacyError`` (a refusal)           42501  insufficient_privilege
``BudgetExceededError``                53400  configuration_limit_exceeded (nothing spent)
``CaptureTooLarge``                    54000  program_limit_exceeded
``UnsupportedQueryError``              0A000  feature_not_supported
``NotSupportedError``                  0A000  feature_not_supported
``DeclarationError``                   42P17  invalid_object_definition
``ProgrammingError`` (syntax)          42601  syntax_error
``ProgrammingError`` (no such object)  42P01  undefined_table
``ProgrammingError``                   42000  syntax_error_or_access_rule_violation
``DataError``                          22000  data_exception
``IntegrityError``                     23000  integrity_constraint_violation
``SolverError``, ``InternalError``     XX000  internal_error
``OperationalError``                   58000  system_error
``InterfaceError``                     08P01  protocol_violation
cancelled / over the time limit        57014  query_canceled
too many statements at once            53300  too_many_connections
sign-in timed out, no connection       08006  connection_failure
anything else (details to the log)     XX000  internal_error
=====================================  =====  ==============================================

>>> from provsql_dp import errors
>>> sqlstate(errors.BudgetExceededError("no")), sqlstate(errors.PrivacyError("no"))
('53400', '42501')
>>> sqlstate(errors.ProgrammingError("Parser Error: syntax error at or near 'SELEC'"))
'42601'
"""

from __future__ import annotations

from ... import errors as e

__all__ = ["sqlstate", "QUERY_CANCELED", "TOO_MANY", "PROTOCOL", "INVALID_PASSWORD",
           "INVALID_AUTH", "INTERNAL", "CONNECTION_FAILURE"]

QUERY_CANCELED = "57014"
TOO_MANY = "53300"
PROTOCOL = "08P01"
INVALID_PASSWORD = "28P01"
INVALID_AUTH = "28000"
INTERNAL = "XX000"
CONNECTION_FAILURE = "08006"

_BY_CLASS = [  # most specific first
    (e.PrivacyError, "42501"), (e.BudgetExceededError, "53400"), (e.CaptureTooLarge, "54000"),
    (e.UnsupportedQueryError, "0A000"), (e.NotSupportedError, "0A000"),
    (e.DeclarationError, "42P17"), (e.DataError, "22000"), (e.IntegrityError, "23000"),
    (e.SolverError, INTERNAL), (e.InternalError, INTERNAL), (e.OperationalError, "58000"),
    (e.InterfaceError, PROTOCOL),
]


def sqlstate(err: BaseException) -> str:
    """The SQLSTATE of an exception raised by a provsql_dp connection."""
    for cls, code in _BY_CLASS:
        if isinstance(err, cls):
            return code
    if isinstance(err, e.ProgrammingError):
        text = str(err).lower()
        if "syntax" in text or "parser error" in text:
            return "42601"
        if "does not exist" in text or "catalog error" in text:
            return "42P01"
        return "42000"
    if isinstance(err, e.Error):
        return "58000"
    return INTERNAL
