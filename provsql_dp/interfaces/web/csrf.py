"""CSRF protection: every state-changing request carries a token the page got from the server.

A signed-in session has its own token (:class:`.accounts.Session`); the page reads it from
``GET /api/me`` (a same-origin JSON response other sites cannot read) and sends it in the
``X-CSRF-Token`` header of each ``POST``. The sign-in form, which has no session yet, uses a
double-submit token: a random value both in a ``SameSite=Strict`` cookie and in the form.

>>> same("abc", "abc"), same("abc", "abd"), same(None, "abc"), same("", "")
(True, False, False, False)
"""

from __future__ import annotations

import hmac

__all__ = ["same", "HEADER", "LOGIN_COOKIE", "REFUSED"]

HEADER = "x-csrf-token"
LOGIN_COOKIE = "pdp_login"
REFUSED = ("refused: this request has no valid CSRF token (reload the page; requests from other "
           "sites are not accepted)")


def same(expected: str | None, given: str | None) -> bool:
    """Constant-time comparison of two non-empty tokens."""
    if not expected or not given:
        return False
    return hmac.compare_digest(expected.encode(), given.encode())
