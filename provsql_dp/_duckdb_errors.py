"""DuckDB's exceptions onto PEP 249's hierarchy (:mod:`provsql_dp.errors`).

>>> import duckdb
>>> translate(duckdb.ConstraintException("duplicate key"))
IntegrityError('duplicate key')
>>> translate(duckdb.InvalidInputException("Division by zero"))
DataError('Division by zero')
"""

from __future__ import annotations

import duckdb

from .errors import (
    DatabaseError,
    DataError,
    Error,
    IntegrityError,
    InternalError,
    NotSupportedError,
    OperationalError,
    ProgrammingError,
)

__all__ = ["translate"]


def translate(e: Exception) -> Error:
    """Map a DuckDB exception onto the PEP 249 hierarchy."""
    msg = str(e)
    if isinstance(e, duckdb.InvalidInputException):
        # DuckDB reports both bad parameters and bad data (division by zero) this way
        return ProgrammingError(msg) if "parameter" in msg.lower() else DataError(msg)
    if isinstance(e, (duckdb.ParserException, duckdb.CatalogException, duckdb.BinderException,
                      duckdb.SyntaxException)):
        return ProgrammingError(msg)
    if isinstance(e, duckdb.ConstraintException):
        return IntegrityError(msg)
    if isinstance(e, (duckdb.ConversionException, duckdb.OutOfRangeException, duckdb.DataError)):
        return DataError(msg)
    if isinstance(e, duckdb.NotImplementedException):
        return NotSupportedError(msg)
    if isinstance(e, (duckdb.TransactionException, duckdb.IOException, duckdb.OperationalError)):
        return OperationalError(msg)
    if isinstance(e, duckdb.InternalException):
        return InternalError(msg)
    return DatabaseError(msg)
