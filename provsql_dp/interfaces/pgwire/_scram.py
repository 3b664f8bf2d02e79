"""The server side of SCRAM-SHA-256 (RFC 5802, RFC 7677) as PostgreSQL runs it over the wire.

The server holds only the account's verifier (:class:`~provsql_dp.interfaces.web.accounts.Verifier`);
the client proves it knows the password without sending it. An unknown account gets the same
exchange with a salt derived from a per-server secret, and fails at the same step as a wrong
password, so the exchange does not reveal which accounts exist.

**Channel binding** (RFC 5802 §6, RFC 5929): on a TLS connection whose certificate has a known
signature hash, the server also offers ``SCRAM-SHA-256-PLUS`` with ``tls-server-end-point`` — the
client's proof then covers the hash of the certificate it saw (:func:`tls_server_end_point`), so a
man in the middle holding another certificate cannot relay the sign-in (libpq's
``channel_binding=require``). A client that could bind but was not offered it while the server
offers it (``y,,``) is refused, as RFC 5802 asks (a downgrade).

>>> from provsql_dp.interfaces.web.accounts import make_verifier
>>> v = make_verifier("analyst", "pencil-pencil", iterations=4096)
>>> ex = Exchange(v, b"secret")
>>> first = ex.server_first("n,,n=,r=rOprNGfwEbeRWgbNEkqO")
>>> first.startswith("r=rOprNGfwEbeRWgbNEkqO") and ",i=4096" in first
True
>>> ex.client_final(client_final_for("pencil-pencil", "n,,n=,r=rOprNGfwEbeRWgbNEkqO", first)) is not None
True
>>> ex2 = Exchange(v, b"secret"); f2 = ex2.server_first("n,,n=,r=abc")
>>> ex2.client_final(client_final_for("wrong-password", "n,,n=,r=abc", f2)) is None
True

With channel binding, the proof holds only for the certificate hash the server has:

>>> cb = b"hash-of-the-server-certificate"
>>> ex3 = Exchange(v, b"secret", binding=cb, plus=True)
>>> f3 = ex3.server_first("p=tls-server-end-point,,n=,r=xyz")
>>> ex3.client_final(client_final_for("pencil-pencil", "p=tls-server-end-point,,n=,r=xyz", f3, cb)) is not None
True
>>> ex4 = Exchange(v, b"secret", binding=cb, plus=True)
>>> f4 = ex4.server_first("p=tls-server-end-point,,n=,r=xyz")
>>> ex4.client_final(client_final_for("pencil-pencil", "p=tls-server-end-point,,n=,r=xyz", f4, b"another"))
Traceback (most recent call last):
...
provsql_dp.interfaces.pgwire._scram.ScramError: SCRAM channel-binding data mismatch
>>> Exchange(v, b"secret", binding=cb).server_first("y,,n=,r=xyz")
Traceback (most recent call last):
...
provsql_dp.interfaces.pgwire._scram.ScramError: the client supports channel binding and this server offers it (SCRAM-SHA-256-PLUS), yet the client did not use it: a downgrade, refused
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from ..web.accounts import ITERATIONS, Verifier, saslprep

__all__ = ["Exchange", "MECHANISM", "MECHANISM_PLUS", "ScramError", "client_final_for",
           "tls_server_end_point"]

MECHANISM = "SCRAM-SHA-256"
MECHANISM_PLUS = "SCRAM-SHA-256-PLUS"
_BINDING = "tls-server-end-point"

#: DER of the signature algorithms' OIDs → the hash of tls-server-end-point (RFC 5929 §4.1: the
#: certificate's own hash, SHA-256 in place of MD5 and SHA-1)
_SIGNATURE_HASH = {
    bytes.fromhex(h): name for h, name in (
        ("2a864886f70d010104", "sha256"), ("2a864886f70d010105", "sha256"),  # md5/sha1 with RSA
        ("2a864886f70d01010e", "sha224"), ("2a864886f70d01010b", "sha256"),
        ("2a864886f70d01010c", "sha384"), ("2a864886f70d01010d", "sha512"),
        ("2a8648ce3d0401", "sha256"), ("2a8648ce3d040301", "sha224"),  # ECDSA
        ("2a8648ce3d040302", "sha256"), ("2a8648ce3d040303", "sha384"), ("2a8648ce3d040304", "sha512"),
        ("2a8648ce380403", "sha256"), ("608648016503040302", "sha256"),  # DSA
    )}


def _tlv(der: bytes, i: int) -> tuple[int, int, int]:
    """(tag, start of the content, end) of the DER element at ``i``."""
    tag, n = der[i], der[i + 1]
    if n < 0x80:
        return tag, i + 2, i + 2 + n
    k = n & 0x7F
    length = int.from_bytes(der[i + 2:i + 2 + k], "big")
    return tag, i + 2 + k, i + 2 + k + length


def tls_server_end_point(cert_der: bytes) -> bytes | None:
    """The ``tls-server-end-point`` channel-binding data of a certificate (DER): its hash under
    its signature's hash function; None when that function is not one RFC 5929 names (Ed25519,
    RSA-PSS…: then no ``-PLUS`` is offered)."""
    try:
        _, body, _ = _tlv(cert_der, 0)  # Certificate ::= SEQUENCE {
        _, _, tbs_end = _tlv(cert_der, body)  # tbsCertificate,
        _, alg, _ = _tlv(cert_der, tbs_end)  # signatureAlgorithm AlgorithmIdentifier {
        tag, oid, oid_end = _tlv(cert_der, alg)  # algorithm OBJECT IDENTIFIER
    except IndexError:
        return None
    name = _SIGNATURE_HASH.get(cert_der[oid:oid_end]) if tag == 0x06 else None
    return None if name is None else hashlib.new(name, cert_der).digest()


class ScramError(ValueError):
    """A malformed or refused SCRAM message (the sign-in fails)."""


def _attrs(text: str) -> dict[str, str]:
    out = {}
    for part in text.split(","):
        if len(part) < 2 or part[1] != "=":
            raise ScramError(f"malformed SCRAM attribute {part[:10]!r}")
        out[part[0]] = part[2:]
    return out


class Exchange:
    """One sign-in: :meth:`server_first` then :meth:`client_final` (the ServerSignature
    message to send on success, None on a wrong password or an unknown account)."""

    def __init__(self, verifier: Verifier | None, secret: bytes, name: str = "", *,
                 binding: bytes | None = None, plus: bool = False):
        #: the channel-binding data this connection offers (None: no TLS, or no known hash), and
        #: whether the client chose SCRAM-SHA-256-PLUS
        self.binding, self.plus = binding, plus
        if verifier is None:  # a decoy with a stable salt per name; it never succeeds
            salt = hmac.digest(secret, b"salt:" + name.encode(), "sha256")[:16]
            verifier = Verifier("", salt, ITERATIONS, secrets.token_bytes(32), secrets.token_bytes(32))
            self.real = False
        else:
            self.real = True
        self.v = verifier

    def server_first(self, client_first: str, server_nonce: str | None = None) -> str:
        """The server-first message (``server_nonce``: a fixed nonce, for test vectors only)."""
        if self.plus:
            if not client_first.startswith(f"p={_BINDING},"):
                raise ScramError(f"{MECHANISM_PLUS} needs the channel binding {_BINDING} (p={_BINDING})")
        elif client_first.startswith("p="):
            raise ScramError("channel binding is not offered on this connection (it needs TLS and "
                             f"{MECHANISM_PLUS}); connect with sslmode=require, or channel_binding=prefer")
        elif client_first.startswith("y,") and self.binding is not None:
            raise ScramError(f"the client supports channel binding and this server offers it ({MECHANISM_PLUS}), "
                             "yet the client did not use it: a downgrade, refused")
        elif not client_first.startswith(("n,", "y,")):
            raise ScramError("malformed SCRAM client-first message")
        gs2_end = client_first.index(",", client_first.index(",") + 1) + 1
        self.gs2_header = client_first[:gs2_end]
        self.client_first_bare = client_first[gs2_end:]
        nonce = _attrs(self.client_first_bare).get("r")
        if not nonce:
            raise ScramError("SCRAM client-first message without a nonce")
        self.nonce = nonce + (server_nonce or base64.b64encode(secrets.token_bytes(18)).decode())
        self.server_first_msg = (f"r={self.nonce},s={base64.b64encode(self.v.salt).decode()},"
                                 f"i={self.v.iterations}")
        return self.server_first_msg

    def client_final(self, client_final: str) -> str | None:
        attrs = _attrs(client_final)
        if attrs.get("r") != self.nonce:
            raise ScramError("SCRAM nonce mismatch")
        expected = self.gs2_header.encode() + (self.binding if self.plus else b"")
        if not hmac.compare_digest(base64.b64decode(attrs.get("c", "")), expected):
            raise ScramError("SCRAM channel-binding data mismatch")
        without_proof = client_final[:client_final.rindex(",p=")]
        auth_message = f"{self.client_first_bare},{self.server_first_msg},{without_proof}".encode()
        proof = base64.b64decode(attrs.get("p", ""))
        signature = hmac.digest(self.v.stored_key, auth_message, "sha256")
        if len(proof) != len(signature):
            return None
        client_key = bytes(a ^ b for a, b in zip(proof, signature))
        ok = hmac.compare_digest(hashlib.sha256(client_key).digest(), self.v.stored_key)
        if not (ok and self.real):
            return None
        return "v=" + base64.b64encode(hmac.digest(self.v.server_key, auth_message, "sha256")).decode()


def client_final_for(password: str, client_first: str, server_first: str, binding: bytes = b"") -> str:
    """The client's final message (what libpq computes; ``binding``: the channel-binding data
    the client saw, with ``p=`` in its header): for tests and doctests."""
    attrs = _attrs(server_first)
    salted = hashlib.pbkdf2_hmac("sha256", saslprep(password), base64.b64decode(attrs["s"]), int(attrs["i"]))
    client_key = hmac.digest(salted, b"Client Key", "sha256")
    gs2 = client_first[:client_first.index(",", client_first.index(",") + 1) + 1]
    without_proof = f"c={base64.b64encode(gs2.encode() + binding).decode()},r={attrs['r']}"
    auth_message = f"{client_first[len(gs2):]},{server_first},{without_proof}".encode()
    signature = hmac.digest(hashlib.sha256(client_key).digest(), auth_message, "sha256")
    proof = bytes(a ^ b for a, b in zip(client_key, signature))
    return f"{without_proof},p={base64.b64encode(proof).decode()}"
