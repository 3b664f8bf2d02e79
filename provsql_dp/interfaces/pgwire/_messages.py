"""PostgreSQL frontend/backend protocol 3.0 framing: reading client messages, writing ours.

Only the framing lives here (lengths, type bytes, null-terminated strings); what a message means
is the session's business (:mod:`._session`).

>>> bytes(ready("I"))
b'Z\\x00\\x00\\x00\\x05I'
>>> bytes(command_complete("SELECT 3"))
b'C\\x00\\x00\\x00\\rSELECT 3\\x00'
>>> Reader(b"abc\\x00" + (7).to_bytes(4, "big") + b"\\x00\\x02").cstring(), Reader(b"\\x00\\x02").int16()
('abc', 2)
"""

from __future__ import annotations

import struct

from ...errors import InterfaceError

__all__ = ["Reader", "ProtocolViolation", "message", "ready", "command_complete", "error_response", "notice_response",
           "row_description", "data_row", "parameter_status", "auth", "backend_key",
           "parameter_description", "check_formats", "SSL_REQUEST", "CANCEL_REQUEST", "GSS_REQUEST", "PROTOCOL_3"]

SSL_REQUEST = 80877103
CANCEL_REQUEST = 80877102
GSS_REQUEST = 80877104
PROTOCOL_3 = 196608
MAX_MESSAGE = 64 * 2 ** 20  # a client message larger than this is refused (a protocol error)


class ProtocolViolation(ValueError):
    """The client's bytes break the protocol (a length out of range, a message shorter than its
    fields, a string without its terminator or not UTF-8). Its text describes only those bytes,
    so the session may send it back; any other exception's text stays in the server's log."""


class Reader:
    """Reads the fields of one message's payload in order.

    >>> Reader(b"\\x00").int32()
    Traceback (most recent call last):
    ...
    provsql_dp.interfaces.pgwire._messages.ProtocolViolation: message shorter than its fields
    """

    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def int16(self) -> int:
        (v,) = struct.unpack("!h", self.bytes(2))
        return v

    def int32(self) -> int:
        (v,) = struct.unpack("!i", self.bytes(4))
        return v

    def bytes(self, n: int) -> bytes:
        v = self.data[self.pos:self.pos + n]
        if len(v) != n:
            raise ProtocolViolation("message shorter than its fields")
        self.pos += n
        return v

    def cstring(self) -> str:
        end = self.data.find(b"\0", self.pos)
        if end < 0:
            raise ProtocolViolation("a string field has no terminating zero byte")
        try:
            v = self.data[self.pos:end].decode("utf-8")
        except UnicodeDecodeError:
            raise ProtocolViolation("a string field is not valid UTF-8") from None
        self.pos = end + 1
        return v

    def rest(self) -> bytes:
        v = self.data[self.pos:]
        self.pos = len(self.data)
        return v


def _cstr(s: str) -> bytes:
    return s.replace("\0", "").encode("utf-8") + b"\0"


def message(kind: bytes, payload: bytes = b"") -> bytes:
    """One backend message: its type byte, its length (itself included) and the payload."""
    return kind + struct.pack("!i", len(payload) + 4) + payload


def ready(status: str) -> bytes:
    """ReadyForQuery: ``I`` idle, ``T`` in a transaction, ``E`` in a failed transaction."""
    return message(b"Z", status.encode())


def command_complete(tag: str) -> bytes:
    return message(b"C", _cstr(tag))


def _fields(severity: str, code: str, text: str, hint: str | None, routine: str | None = None) -> bytes:
    out = b"S" + _cstr(severity) + b"V" + _cstr(severity) + b"C" + _cstr(code) + b"M" + _cstr(text)
    if hint:
        out += b"H" + _cstr(hint)
    if routine:  # PostgreSQL's source routine: clients recognise some errors by it (asyncpg's
        out += b"R" + _cstr(routine)  # re-prepare on RevalidateCachedQuery)
    return out + b"\0"


def error_response(code: str, text: str, hint: str | None = None, severity: str = "ERROR",
                   routine: str | None = None) -> bytes:
    return message(b"E", _fields(severity, code, text, hint, routine))


def notice_response(text: str, code: str = "00000") -> bytes:
    return message(b"N", _fields("NOTICE", code, text, None))


def row_description(columns: list[tuple[str, int, int]], formats: list[int]) -> bytes:
    """``columns``: (name, type OID, typlen) each; ``formats``: 0 text, 1 binary per column."""
    out = struct.pack("!h", len(columns))
    for (name, oid, size), fmt in zip(columns, formats):
        out += _cstr(name) + struct.pack("!ihihih", 0, 0, oid, size, -1, fmt)
    return message(b"T", out)


def data_row(values: list[bytes | None]) -> bytes:
    out = [struct.pack("!h", len(values))]
    for v in values:
        out.append(struct.pack("!i", -1) if v is None else struct.pack("!i", len(v)) + v)
    return message(b"D", b"".join(out))


def parameter_status(name: str, value: str) -> bytes:
    return message(b"S", _cstr(name) + _cstr(value))


def parameter_description(oids: list[int]) -> bytes:
    return message(b"t", struct.pack(f"!h{len(oids)}i", len(oids), *oids))


def auth(code: int, data: bytes = b"") -> bytes:
    """An Authentication message (0 ok, 10 SASL, 11 SASL continue, 12 SASL final)."""
    return message(b"R", struct.pack("!i", code) + data)


def backend_key(pid: int, secret: int) -> bytes:
    return message(b"K", struct.pack("!ii", pid, secret))


def read_exact(sock, n: int) -> bytes:
    """``n`` bytes from the socket; EOFError when the client went away first."""
    chunks, left = [], n
    while left:
        chunk = sock.recv(min(left, 1 << 16))
        if not chunk:
            raise EOFError("the client closed the connection")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_startup(sock) -> tuple[int, bytes]:
    """The first message (no type byte): its code and the rest of its payload."""
    (length,) = struct.unpack("!i", read_exact(sock, 4))
    if not 8 <= length <= 10000:
        raise ProtocolViolation(f"invalid startup packet length {length}")
    body = read_exact(sock, length - 4)
    return struct.unpack("!i", body[:4])[0], body[4:]


def read_message(sock) -> tuple[bytes, bytes]:
    """One frontend message: (type byte, payload)."""
    head = read_exact(sock, 5)
    (length,) = struct.unpack("!i", head[1:])
    if not 4 <= length <= MAX_MESSAGE:
        raise ProtocolViolation(f"invalid message length {length}")
    return head[:1], read_exact(sock, length - 4)


def check_formats(codes: list[int], n: int | None, what: str) -> None:
    """Refuse a Bind's format codes other than 0 (text) and 1 (binary), or a count of them other
    than none, one for all, or one for each of the ``n`` values (``n`` None: the columns', not
    yet known).

    >>> check_formats([0, 1], 2, "parameter")
    >>> check_formats([2], 1, "parameter")
    Traceback (most recent call last):
    ...
    provsql_dp.errors.InterfaceError: parameter format code 2 is neither 0 (text) nor 1 (binary)
    """
    bad = [c for c in codes if c not in (0, 1)]
    if bad:
        raise InterfaceError(f"{what} format code {bad[0]} is neither 0 (text) nor 1 (binary)")
    if n is not None and len(codes) not in (0, 1, n):
        raise InterfaceError(f"{len(codes)} {what} format codes for {n} values: send none (all "
                             "text), one (for all) or one for each")
