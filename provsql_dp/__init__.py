"""provsql_dp: differentially private SQL over DuckDB by provenance tracking.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> con.execute("SELECT 42").fetchone()
(42,)
"""

from ._numbers import format_eps
from .errors import (
    BudgetExceededError,
    DatabaseError,
    DataError,
    DeclarationError,
    Error,
    IntegrityError,
    InterfaceError,
    InternalError,
    NotSupportedError,
    OperationalError,
    PrivacyError,
    ProgrammingError,
    SolverError,
    UnsupportedQueryError,
    Warning,
)
from .interfaces.dbapi.connection import Connection, Cursor, PrivacyInfo, connect
from .interfaces.dbapi.types import (
    BINARY,
    DATETIME,
    NUMBER,
    ROWID,
    STRING,
    Binary,
    Date,
    DateFromTicks,
    Time,
    TimeFromTicks,
    Timestamp,
    TimestampFromTicks,
)
from .provenance.krelation import KRelation

__version__ = "0.1.0"

apilevel = "2.0"
threadsafety = 1  # threads may share the module, not connections (interfaces.dbapi.one_thread)
paramstyle = "qmark"  # DuckDB's native style ($1 and named $name also work)

__all__ = [
    "connect", "Connection", "Cursor", "PrivacyInfo", "KRelation", "format_eps",
    "Warning", "Error", "InterfaceError", "DatabaseError", "DataError", "OperationalError",
    "IntegrityError", "InternalError", "ProgrammingError", "NotSupportedError",
    "UnsupportedQueryError", "DeclarationError", "BudgetExceededError", "PrivacyError",
    "SolverError", "apilevel", "threadsafety", "paramstyle",
    "STRING", "BINARY", "NUMBER", "DATETIME", "ROWID", "Date", "Time", "Timestamp",
    "DateFromTicks", "TimeFromTicks", "TimestampFromTicks", "Binary",
]
