"""How the shell reads its input: when the lines typed so far end a statement, and which
statements a text holds.

Both go by our SQL dialect's tokenizer, so a ``;`` inside a string, a ``$$`` string or a comment
ends nothing, and an unterminated string or block comment means more lines follow.

>>> statement_complete("SELECT 'a;"), statement_complete("SELECT 'a;b';")
(False, True)
>>> statements("SELECT 1; SELECT 2 -- two\\n;")
['SELECT 1', 'SELECT 2 -- two']
"""

from __future__ import annotations

from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from ...sql import dialect as d
from ..dbapi.statements import split_statements

__all__ = ["statement_complete", "statements", "only_comments", "tokenizes"]


def statement_complete(text: str) -> bool:
    """Whether ``text`` ends a statement: its last token is a top-level ``;``.

    An unterminated string or block comment is incomplete (more lines follow); a ``;`` inside a
    string or after ``--`` does not count.

    >>> statement_complete("SELECT 1;"), statement_complete("SELECT ';'"), statement_complete("SELECT 'a;")
    (True, False, False)
    >>> statement_complete("SELECT 1; -- done"), statement_complete("SELECT 1 -- ;")
    (True, False)
    """
    if not text.strip():
        return False
    try:
        tokens = d.ProvDP().tokenize(text)
    except (TokenError, ParseError):
        return False
    return bool(tokens) and tokens[-1].token_type == TokenType.SEMICOLON


def statements(text: str) -> list[str]:
    """The statements of ``text``: :func:`provsql_dp.interfaces.dbapi.statements.split_statements`
    without the pieces that hold only comments (``SELECT 1; -- done`` is one statement).

    >>> statements("SELECT 1; -- done\\nSELECT ';' /* x */;")
    ['SELECT 1', "-- done\\nSELECT ';' /* x */"]
    """
    out = []
    for piece in split_statements(text):
        try:
            if not d.ProvDP().tokenize(piece):
                continue
        except (TokenError, ParseError):
            pass
        out.append(piece)
    return out


def only_comments(text: str) -> bool:
    """Whether ``text`` holds nothing but whitespace and complete comments."""
    try:
        return not d.ProvDP().tokenize(text)
    except (TokenError, ParseError):
        return False


def tokenizes(text: str) -> bool:
    """Whether ``text`` is complete for the tokenizer (no unterminated string or comment)."""
    try:
        d.ProvDP().tokenize(text)
    except (TokenError, ParseError):
        return False
    return True
