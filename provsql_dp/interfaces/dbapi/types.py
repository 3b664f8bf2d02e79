"""PEP 249 type objects and constructors.

Type codes in :attr:`Cursor.description` are DuckDB types; they compare equal to the type objects
here (DuckDB's own), e.g. ``cur.description[0][1] == provsql_dp.NUMBER`` for a count.

>>> import provsql_dp
>>> cur = provsql_dp.connect().execute("SELECT 1.5::DOUBLE AS x, 'a' AS s")
>>> cur.description[0][1] == NUMBER, cur.description[1][1] == STRING
(True, True)
>>> Date(2024, 1, 31)
datetime.date(2024, 1, 31)
"""

from __future__ import annotations

import datetime
import time
from functools import lru_cache

import duckdb

__all__ = [
    "STRING", "BINARY", "NUMBER", "DATETIME", "ROWID", "Date", "Time", "Timestamp",
    "DateFromTicks", "TimeFromTicks", "TimestampFromTicks", "Binary", "sqltype",
]

STRING = duckdb.STRING
BINARY = duckdb.BINARY
NUMBER = duckdb.NUMBER
DATETIME = duckdb.DATETIME
ROWID = duckdb.ROWID

Date = datetime.date
Time = datetime.time
Timestamp = datetime.datetime
Binary = bytes


def DateFromTicks(ticks: float) -> datetime.date:  # noqa: N802 - name fixed by PEP 249
    return Date(*time.localtime(ticks)[:3])


def TimeFromTicks(ticks: float) -> datetime.time:  # noqa: N802
    return Time(*time.localtime(ticks)[3:6])


def TimestampFromTicks(ticks: float) -> datetime.datetime:  # noqa: N802
    return Timestamp(*time.localtime(ticks)[:6])


@lru_cache(maxsize=256)
def sqltype(name: str):
    """The DuckDB type object for a type name (used for our own result sets; a function of the
    name, kept: DuckDB parses it in ~35 µs)."""
    return duckdb.sqltype(name)
