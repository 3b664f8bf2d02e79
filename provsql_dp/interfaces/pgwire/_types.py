"""Values between Python and PostgreSQL's wire formats: type OIDs, text and binary encodings.

Result columns carry PostgreSQL type OIDs chosen from DuckDB's type names, so a client decodes
them as it would a PostgreSQL server's (psycopg gives back ``int``, ``float``, ``Decimal``,
``date``…). Parameters arrive in text or binary format with the client's OID (0: unspecified,
read as text).

A list of a scalar type (``INTEGER[]``, ``VARCHAR[]``, ``DATE[3]``…) is PostgreSQL's array of that
type (``int4[]``, ``text[]``…), in its text (``{1,2,NULL}``) and binary formats; a list of lists,
structs or maps is sent as JSON text.

>>> type_oid("INTEGER"), type_oid("DECIMAL(10,2)"), type_oid("VARCHAR"), type_oid("STRUCT(a INT)")
(23, 1700, 25, 25)
>>> type_oid("INTEGER[]"), type_oid("VARCHAR[]"), type_oid("INTEGER[][]"), type_oid("STRUCT(a INT)[]")
(1007, 1009, 25, 25)
>>> encode_text(True), encode_text(2.5), encode_text(b"\\x01"), encode_text(None)
(b't', b'2.5', b'\\\\x01', None)
>>> encode_text([1, None, 3], 1007), encode_text(["a b", "", 'q"', "NULL", "x"], 1009)
(b'{1,NULL,3}', b'{"a b","","q\\\\"","NULL",x}')
>>> decode_param(23, b"42", 0), decode_param(20, (7).to_bytes(8, "big"), 1), decode_param(0, b"O'Hare", 0)
(42, 7, "O'Hare")
"""

from __future__ import annotations

import datetime
import decimal
import json
import math
import re
import struct
import uuid

from . import _temporal

__all__ = ["type_oid", "type_size", "encode_text", "encode_binary", "decode_param", "OIDS"]

#: DuckDB type name (its first word) → PostgreSQL type OID
OIDS = {
    "BOOLEAN": 16, "TINYINT": 21, "SMALLINT": 21, "INTEGER": 23, "BIGINT": 20,
    "UTINYINT": 21, "USMALLINT": 23, "UINTEGER": 20, "UBIGINT": 1700, "HUGEINT": 1700,
    "UHUGEINT": 1700, "FLOAT": 700, "DOUBLE": 701, "DECIMAL": 1700, "VARCHAR": 25, "BLOB": 17,
    "DATE": 1082, "TIME": 1083, "TIMESTAMP": 1114, "TIMESTAMP_NS": 1114, "TIMESTAMP_MS": 1114,
    "TIMESTAMP_S": 1114, "TIMESTAMP WITH TIME ZONE": 1184, "TIMESTAMPTZ": 1184,
    "INTERVAL": 1186, "UUID": 2950, "JSON": 114,
}
_SIZES = {16: 1, 21: 2, 23: 4, 20: 8, 700: 4, 701: 8, 1082: 4, 1083: 8, 1114: 8, 1184: 8, 2950: 16}
#: element OID → the OID of PostgreSQL's array of it (pg_type's typarray)
_ARRAYS = {16: 1000, 17: 1001, 21: 1005, 23: 1007, 20: 1016, 25: 1009, 700: 1021, 701: 1022,
           1082: 1182, 1083: 1183, 1114: 1115, 1184: 1185, 1186: 1187, 1700: 1231, 2950: 2951,
           114: 199, 26: 1028}
_ELEMENTS = {a: e for e, a in _ARRAYS.items()}
_EPOCH_DATE = datetime.date(2000, 1, 1)
_EPOCH = datetime.datetime(2000, 1, 1)


def type_oid(duck_type) -> int:
    """The PostgreSQL OID for a DuckDB type (its name or type object); text for the rest (a
    list of a scalar type: the array of its element's OID)."""
    name = str(duck_type).upper().strip('"')
    if name in OIDS:
        return OIDS[name]
    if m := _LIST.fullmatch(name):  # of a scalar type named in OIDS (or a DECIMAL(p, s))
        inner = m[1].strip()
        element = OIDS.get("DECIMAL" if re.fullmatch(r"DECIMAL\(\d+,\s*\d+\)", inner) else inner)
        return _ARRAYS.get(element, 25)
    return OIDS.get(name.split("(")[0].strip(), 25)


_LIST = re.compile(r"(.+)\[\d*\]")  # LIST (T[]) or ARRAY (T[n]) of T


def _array_text(v, element: int) -> bytes:
    """PostgreSQL's text form of a one-dimensional array of ``element`` values."""
    parts = []
    for e in v:
        if e is None:
            parts.append("NULL")
            continue
        t = encode_text(e).decode()
        if t == "" or t.upper() == "NULL" or any(c in t for c in '{}",\\') or \
                any(c.isspace() for c in t):
            t = '"' + t.replace("\\", "\\\\").replace('"', '\\"') + '"'
        parts.append(t)
    return ("{" + ",".join(parts) + "}").encode()


def _array_binary(v, element: int) -> bytes:
    """PostgreSQL's binary form of a one-dimensional array (lower bound 1)."""
    if not v:
        return struct.pack("!iiI", 0, 0, element)
    out = [struct.pack("!iiIii", 1, any(e is None for e in v), element, len(v), 1)]
    for e in v:
        b = encode_binary(e, element)
        out.append(struct.pack("!i", -1) if b is None else struct.pack("!i", len(b)) + b)
    return b"".join(out)


def type_size(oid: int) -> int:
    """``typlen`` of the OID for RowDescription (-1: variable)."""
    return _SIZES.get(oid, -1)


def _float_text(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return repr(v)


def _interval_text(v: datetime.timedelta) -> str:
    sign = "-" if v < datetime.timedelta(0) else ""
    v = abs(v)
    secs = v.seconds + v.microseconds / 1e6
    h, rem = divmod(v.seconds, 3600)
    m, s = divmod(rem, 60)
    frac = f".{v.microseconds:06d}" if v.microseconds else ""
    days = f"{sign}{v.days} days " if v.days else ""
    return f"{days}{sign if not v.days and secs else ''}{h:02d}:{m:02d}:{s:02d}{frac}"


def encode_text(v, oid: int | None = None, tz: datetime.tzinfo | None = None) -> bytes | None:
    """A value in PostgreSQL's text format (None: SQL NULL; ``oid`` an array's: its text form; an
    instant, ``timestamptz``, shown in ``tz``, the session's ``TimeZone``, as PostgreSQL shows it)."""
    if v is None:
        return None
    if oid in _ELEMENTS and isinstance(v, (list, tuple)):
        return _array_text(v, _ELEMENTS[oid])
    if isinstance(v, bool):
        return b"t" if v else b"f"
    if isinstance(v, float):
        return _float_text(v).encode()
    if isinstance(v, (bytes, bytearray, memoryview)):
        return b"\\x" + bytes(v).hex().encode()
    if isinstance(v, datetime.datetime):
        v = v.astimezone(tz) if tz is not None and v.tzinfo is not None else v
        return v.isoformat(sep=" ").encode()
    if isinstance(v, (datetime.date, datetime.time)):
        return v.isoformat().encode()
    if isinstance(v, datetime.timedelta):
        return _interval_text(v).encode()
    if isinstance(v, (dict, list, tuple)):
        return json.dumps(v, default=str).encode()
    return str(v).encode()


def encode_binary(v, oid: int) -> bytes | None:
    """A value in PostgreSQL's binary format for the common OIDs (others: text's bytes)."""
    if v is None:
        return None
    if oid in _ELEMENTS and isinstance(v, (list, tuple)):
        return _array_binary(v, _ELEMENTS[oid])
    if oid == 16:
        return b"\1" if v else b"\0"
    if oid in (21, 23, 20):
        return struct.pack({21: "!h", 23: "!i", 20: "!q"}[oid], int(v))
    if oid == 700:
        return struct.pack("!f", float(v))
    if oid == 701:
        return struct.pack("!d", float(v))
    if oid == 17:
        return bytes(v)
    if oid == 1082:
        return struct.pack("!i", (v - _EPOCH_DATE).days)
    if oid == 1114:
        d = v - _EPOCH
        return struct.pack("!q", (d.days * 86400 + d.seconds) * 10 ** 6 + d.microseconds)
    if oid == 2950:
        return uuid.UUID(str(v)).bytes
    if oid == 1700:
        return _numeric_to_binary(decimal.Decimal(v))
    if oid == 1083:
        return struct.pack("!q", ((v.hour * 60 + v.minute) * 60 + v.second) * 10 ** 6 + v.microsecond)
    if oid == 1184:
        d = v.astimezone(datetime.timezone.utc).replace(tzinfo=None) - _EPOCH if v.tzinfo else v - _EPOCH
        return struct.pack("!q", (d.days * 86400 + d.seconds) * 10 ** 6 + d.microseconds)
    if oid == 1186:
        return struct.pack("!qii", v.seconds * 10 ** 6 + v.microseconds, v.days, 0)
    return encode_text(v)  # text, varchar, json: their binary format is their text


def _numeric_to_binary(v: decimal.Decimal) -> bytes:
    """PostgreSQL's binary NUMERIC: base-10000 digits, weight, sign, display scale."""
    if not v.is_finite():
        return struct.pack("!hhHH", 0, 0, 0xC000, 0)
    sign, digits, exp = v.as_tuple()
    dscale = max(-exp, 0)
    text = "".join(map(str, digits)) or "0"
    if exp > 0:
        text += "0" * exp
        exp = 0
    point = len(text) + exp  # digits before the decimal point
    int_part, frac_part = text[:max(point, 0)] or "0", ("0" * max(-point, 0)) + text[max(point, 0):]
    int_part = int_part.zfill((len(int_part) + 3) // 4 * 4)
    frac_part = frac_part + "0" * (-len(frac_part) % 4)
    groups = [int(int_part[i:i + 4]) for i in range(0, len(int_part), 4)]
    weight = len(groups) - 1
    groups += [int(frac_part[i:i + 4]) for i in range(0, len(frac_part), 4)]
    while groups and groups[0] == 0:  # leading zero groups lower the weight
        groups.pop(0)
        weight -= 1
    while groups and groups[-1] == 0:
        groups.pop()
    if not groups:
        weight = 0
    return struct.pack(f"!hhHH{len(groups)}H", len(groups), weight, 0x4000 if sign else 0, dscale, *groups)


def _numeric_binary(data: bytes) -> decimal.Decimal:
    ndigits, weight, sign, dscale = struct.unpack("!hhHH", data[:8])
    if sign == 0xC000:
        return decimal.Decimal("NaN")
    digits = struct.unpack(f"!{ndigits}H", data[8:8 + 2 * ndigits])
    value = decimal.Decimal(0)
    for i, dgt in enumerate(digits):
        value += decimal.Decimal(dgt).scaleb(4 * (weight - i))
    value = value.quantize(decimal.Decimal(1).scaleb(-dscale)) if dscale else value.to_integral_value()
    return -value if sign == 0x4000 else value


def _array_param(oid: int, data: bytes, fmt: int, tz: str | None = None) -> list:
    """A one-dimensional array parameter as a list of its elements' values (``fmt``: 0 text
    ``{1,NULL,"a b"}``, 1 binary); a ValueError for anything else (several dimensions; the
    caller names the parameter)."""
    element = _ELEMENTS[oid]
    if fmt == 1:
        ndim, _, _ = struct.unpack("!iiI", data[:12])
        if ndim == 0:
            return []
        if ndim != 1:
            raise ValueError(f"an array parameter of {ndim} dimensions: send one dimension")
        n, _ = struct.unpack("!ii", data[12:20])
        out, pos = [], 20
        for _ in range(n):
            (size,) = struct.unpack("!i", data[pos:pos + 4])
            pos += 4
            out.append(None if size < 0 else decode_param(element, data[pos:pos + size], 1, tz))
            pos += max(size, 0)
        return out
    text = data.decode()
    if not (text.startswith("{") and text.endswith("}")):
        raise ValueError(f"array parameter {text[:40]!r} is not {{…}}")
    items, i, body = [], 0, text[1:-1]
    while i < len(body):
        while i < len(body) and body[i].isspace():  # PostgreSQL allows spaces around one
            i += 1
        if i == len(body):
            break
        if body[i] == '"':
            j, value = i + 1, []
            while body[j] != '"':
                if body[j] == "\\":
                    j += 1
                value.append(body[j])
                j += 1
            items.append(decode_param(element, "".join(value).encode(), 0, tz))
            i = j + 1
            while i < len(body) and body[i].isspace():
                i += 1
        else:
            j = body.find(",", i)
            j = len(body) if j < 0 else j
            word = body[i:j].strip()
            if word.startswith("{"):
                raise ValueError("an array parameter of several dimensions: send one")
            items.append(None if word.upper() == "NULL" else
                         decode_param(element, word.encode(), 0, tz))
            i = j
        if i < len(body) and body[i] == ",":
            i += 1
    return items


def decode_param(oid: int, data: bytes | None, fmt: int, tz: str | None = None):
    """A bound parameter as a Python value (its OID tells how; 0 or a text type: a string; an
    array OID: a list; ``time``, ``timestamptz``, ``interval``: :mod:`._temporal`, a
    ``timestamptz`` in text without an offset read in ``tz``, the session's ``TimeZone``).

    >>> decode_param(1007, b"{1,NULL,3}", 0), decode_param(1009, b'{"a b", x ,"q\\\\"",""}', 0)
    ([1, None, 3], ['a b', 'x', 'q"', ''])
    >>> decode_param(1007, encode_binary([1, None, 3], 1007), 1)
    [1, None, 3]
    """
    if data is None:
        return None
    if oid in _ELEMENTS:
        return _array_param(oid, bytes(data), fmt, tz)
    if oid in (1083, 1184, 1186):
        return (_temporal.time_of_day(data, fmt) if oid == 1083 else
                _temporal.timestamptz(data, fmt, tz) if oid == 1184 else
                _temporal.interval(data, fmt))
    if fmt == 1:
        if oid in (21, 23, 20, 26):
            return struct.unpack({2: "!h", 4: "!i", 8: "!q"}[len(data)], data)[0]
        if oid == 700:
            return struct.unpack("!f", data)[0]
        if oid == 701:
            return struct.unpack("!d", data)[0]
        if oid == 16:
            return data != b"\0"
        if oid == 17:
            return bytes(data)
        if oid == 1700:
            return _numeric_binary(data)
        if oid == 1082:
            return _EPOCH_DATE + datetime.timedelta(days=struct.unpack("!i", data)[0])
        if oid == 1114:
            return _EPOCH + datetime.timedelta(microseconds=struct.unpack("!q", data)[0])
        if oid == 2950:
            return str(uuid.UUID(bytes=bytes(data)))
        return data.decode()
    text = data.decode()
    if oid in (21, 23, 20, 26):
        return int(text)
    if oid in (700, 701):
        return float(text)
    if oid == 1700:
        return decimal.Decimal(text)
    if oid == 16:
        return text.lower() in ("t", "true", "1", "on", "yes", "y")
    if oid == 17:
        return bytes.fromhex(text[2:]) if text.startswith("\\x") else text.encode()
    if oid == 1082:
        return datetime.date.fromisoformat(text)
    if oid == 1114:
        return datetime.datetime.fromisoformat(text)
    return text
