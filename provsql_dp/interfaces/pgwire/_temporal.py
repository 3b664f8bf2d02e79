"""Date and time parameters in PostgreSQL's wire formats: ``time`` (1083), ``timestamptz``
(1184) and ``interval`` (1186), binary (asyncpg) and text (psycopg, psql), read as Python values
that :func:`provsql_dp.interfaces.dbapi.parameters.literal` binds.

A ``timestamptz`` is an instant: binary, microseconds since 2000-01-01 UTC; text with its offset,
or without one in the session's ``TimeZone`` (``SET TimeZone = 'Europe/Paris'``), as PostgreSQL
reads it. An ``interval`` of months (which a ``timedelta`` cannot hold: a month is not a number
of days) is read as PostgreSQL's text of it, which DuckDB casts.

>>> import struct
>>> timestamptz(struct.pack("!q", 3_600_000_000), 1)
datetime.datetime(2000, 1, 1, 1, 0, tzinfo=datetime.timezone.utc)
>>> timestamptz(b"2020-06-01 12:00:00", 0, "Europe/Paris").isoformat()
'2020-06-01T12:00:00+02:00'
>>> interval(struct.pack("!qii", 5_000_000, 2, 0), 1), interval(struct.pack("!qii", 0, 1, 14), 1)
(datetime.timedelta(days=2, seconds=5), '14 months 1 days 0 microseconds')
>>> interval(b"-1 day 23:59:59.5", 0) == datetime.timedelta(seconds=-0.5)
True
>>> interval(b"5 ms", 0), interval(b"2 hours 30 mins", 0)
(datetime.timedelta(microseconds=5000), datetime.timedelta(seconds=9000))
>>> interval(b"1 year 2 mons 03:00:00", 0)
'14 months 0 days 10800000000 microseconds'
>>> interval(b"P1D", 0)
Traceback (most recent call last):
...
ValueError: interval 'P1D' is not PostgreSQL's text of an interval (such as '1 day 02:00:00' or '3 hours')
>>> time_of_day(struct.pack("!q", 3_723_000_001), 1), time_of_day(b"01:02:03", 0)
(datetime.time(1, 2, 3, 1), datetime.time(1, 2, 3))
"""

from __future__ import annotations

import datetime
import re
import struct
import zoneinfo

__all__ = ["time_of_day", "timestamptz", "interval", "zone"]

_EPOCH_UTC = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)
_OFFSET = re.compile(r"^(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?$", re.IGNORECASE)
#: PostgreSQL's interval units (text output, ``postgres`` style, and the words it reads)
_UNITS = {"microsecond": (0, 0, 1), "millisecond": (0, 0, 1000), "second": (0, 0, 10 ** 6),
          "minute": (0, 0, 60 * 10 ** 6), "hour": (0, 0, 3600 * 10 ** 6), "day": (0, 1, 0),
          "week": (0, 7, 0), "mon": (1, 0, 0), "month": (1, 0, 0), "year": (12, 0, 0),
          "decade": (120, 0, 0), "century": (1200, 0, 0), "millennium": (12000, 0, 0)}
_ALIASES = {"s": "second", "sec": "second", "ms": "millisecond", "msec": "millisecond",
            "us": "microsecond", "usec": "microsecond", "min": "minute", "m": "minute",
            "h": "hour", "hr": "hour", "d": "day", "y": "year", "yr": "year",
            "centurie": "century", "millennia": "millennium"}
_PART = re.compile(r"([+-]?\d+(?:\.\d+)?)\s*([a-z]+)"  # 3 days, 1.5 hours
                   r"|([+-])?(\d+):(\d{1,2})(?::(\d{1,2}(?:\.\d+)?))?",  # [+-]h:mm[:ss.f]
                   re.IGNORECASE)


def zone(name: str | None) -> datetime.tzinfo:
    """The session's ``TimeZone`` as a tzinfo: an IANA name (``Europe/Paris``), ``UTC``, or an
    offset (``+02``, ``-03:30``); a ValueError naming the forms taken for anything else."""
    text = (name or "UTC").strip().strip("'\"")
    if text.upper() in ("UTC", "GMT", "Z", "DEFAULT", "LOCAL"):
        return datetime.timezone.utc
    if m := _OFFSET.fullmatch(text):
        minutes = int(m[2]) * 60 + int(m[3] or 0)
        return datetime.timezone(datetime.timedelta(minutes=-minutes if m[1] == "-" else minutes))
    try:
        return zoneinfo.ZoneInfo(text)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"time zone {text!r} is not known: give an IANA name such as "
                         "'Europe/Paris', 'UTC', or an offset such as '+02:00'") from None


def time_of_day(data: bytes, fmt: int) -> datetime.time:
    """A ``time`` parameter (binary: microseconds since midnight)."""
    if fmt == 1:
        (us,) = struct.unpack("!q", data)
        seconds, us = divmod(us, 10 ** 6)
        return datetime.time(seconds // 3600, seconds // 60 % 60, seconds % 60, us)
    return datetime.time.fromisoformat(data.decode().strip())


def timestamptz(data: bytes, fmt: int, tz: str | None = None) -> datetime.datetime:
    """A ``timestamptz`` parameter as an aware datetime (text without an offset: in ``tz``, the
    session's ``TimeZone``)."""
    if fmt == 1:
        return _EPOCH_UTC + datetime.timedelta(microseconds=struct.unpack("!q", data)[0])
    value = datetime.datetime.fromisoformat(data.decode().strip())
    return value if value.tzinfo is not None else value.replace(tzinfo=zone(tz))


def interval(data: bytes, fmt: int) -> datetime.timedelta | str:
    """An ``interval`` parameter: a timedelta, or with months PostgreSQL's text of it (``14
    months 1 days 0 microseconds``), which DuckDB casts to its INTERVAL."""
    if fmt == 1:
        us, days, months = struct.unpack("!qii", data)
    else:
        months, days, us = _interval_text(data.decode())
    if months:
        return f"{months} months {days} days {us} microseconds"
    return datetime.timedelta(days=days, microseconds=us)


def _interval_text(text: str) -> tuple[int, int, int]:
    """(months, days, microseconds) of PostgreSQL's ``postgres`` interval text (``1 year 2
    mons -3 days +04:05:06.5``) and of Python's ``str(timedelta)`` (psycopg: ``-1 day
    23:59:59``)."""
    body = text.strip().lstrip("@").strip()
    ago = body.lower().endswith(" ago")
    body = body[:-4] if ago else body
    months = days = us = 0
    pos = 0
    for m in _PART.finditer(body):
        if body[pos:m.start()].strip(" ,"):
            break
        pos = m.end()
        if m[2]:
            word = m[2].lower()
            unit = _ALIASES.get(word) or _ALIASES.get(word.rstrip("s")) or word.rstrip("s")
            if unit not in _UNITS:
                raise ValueError(f"interval unit {m[2]!r} is not known")
            mo, d, u = _UNITS[unit]
            n = float(m[1]) if "." in m[1] else int(m[1])
            months, days, us = months + int(mo * n), days + int(d * n), us + round(u * n)
        else:
            sign = -1 if m[3] == "-" else 1
            secs = float(m[6] or 0)
            us += sign * (round((int(m[4]) * 3600 + int(m[5]) * 60) * 10 ** 6 + secs * 10 ** 6))
    if body[pos:].strip(" ,") or not body:
        raise ValueError(f"interval {text[:40]!r} is not PostgreSQL's text of an interval "
                         "(such as '1 day 02:00:00' or '3 hours')")
    sign = -1 if ago else 1
    return sign * months, sign * days, sign * us
