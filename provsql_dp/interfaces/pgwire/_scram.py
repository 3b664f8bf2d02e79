"""The server side of SCRAM-SHA-256 (RFC 5802, RFC 7677) as PostgreSQL runs it over the wire.

The server holds only the account's verifier (:class:`~provsql_dp.interfaces.web.accounts.Verifier`);
the client proves it knows the password without sending it. An unknown account gets the same
exchange with a salt derived from a per-server secret, and fails at the same step as a wrong
password, so the exchange does not reveal which accounts exist. No channel binding is offered
(``SCRAM-SHA-256`` only, not ``-PLUS``); a client that asks for it (``p=``) is refused.

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
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from ..web.accounts import ITERATIONS, Verifier, saslprep

__all__ = ["Exchange", "MECHANISM", "ScramError", "client_final_for"]

MECHANISM = "SCRAM-SHA-256"


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

    def __init__(self, verifier: Verifier | None, secret: bytes, name: str = ""):
        if verifier is None:  # a decoy with a stable salt per name; it never succeeds
            salt = hmac.digest(secret, b"salt:" + name.encode(), "sha256")[:16]
            verifier = Verifier("", salt, ITERATIONS, secrets.token_bytes(32), secrets.token_bytes(32))
            self.real = False
        else:
            self.real = True
        self.v = verifier

    def server_first(self, client_first: str, server_nonce: str | None = None) -> str:
        """The server-first message (``server_nonce``: a fixed nonce, for test vectors only)."""
        if not client_first.startswith(("n,", "y,")):
            if client_first.startswith("p="):
                raise ScramError("channel binding is not offered by this server; connect with "
                                 "channel_binding=disable or prefer")
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
        if base64.b64decode(attrs.get("c", "")) != self.gs2_header.encode():
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


def client_final_for(password: str, client_first: str, server_first: str) -> str:
    """The client's final message (what libpq computes): for tests and doctests."""
    attrs = _attrs(server_first)
    salted = hashlib.pbkdf2_hmac("sha256", saslprep(password), base64.b64decode(attrs["s"]), int(attrs["i"]))
    client_key = hmac.digest(salted, b"Client Key", "sha256")
    gs2 = client_first[:client_first.index(",", client_first.index(",") + 1) + 1]
    without_proof = f"c={base64.b64encode(gs2.encode()).decode()},r={attrs['r']}"
    auth_message = f"{client_first[len(gs2):]},{server_first},{without_proof}".encode()
    signature = hmac.digest(hashlib.sha256(client_key).digest(), auth_message, "sha256")
    proof = bytes(a ^ b for a, b in zip(client_key, signature))
    return f"{without_proof},p={base64.b64encode(proof).decode()}"
