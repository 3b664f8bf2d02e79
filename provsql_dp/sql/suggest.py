""""Did you mean": the keyword of our dialect a misspelt word was probably meant to be.

Used wherever a statement is refused for its text — the DB-API cursor (a syntax error, or a
catalog error naming a near miss such as ``SHOW POLICES``) and the shell, which shows the
cursor's message. It reads only the statement's text (never data), so it may be shown to
anyone; suggestions come from :data:`KEYWORDS` by :mod:`difflib`.

>>> did_you_mean("SELECT COUNT(*) FROM t WITH EPSLON 0.1")
'did you mean EPSILON?'
>>> did_you_mean("PROTCT TABLE people"), did_you_mean("SELECT 1")
('did you mean PROTECT?', None)
>>> did_you_mean("COUNT RANGE (x < 3) FROM t WITH EPSILON 1")  # both words known: the phrase
'did you mean COUNT RANGES?'
>>> did_you_mean("SELECT 'show stream' FROM t") is None  # not in a string
True
>>> with_hint('Parser Error: syntax error at or near "WITH"', "SELECT 1 FROM t WITH EPSLON 1")
'Parser Error: syntax error at or near "WITH" (did you mean EPSILON?)'
"""

from __future__ import annotations

import difflib
import re

from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from . import dialect as d

__all__ = ["KEYWORDS", "did_you_mean", "with_hint"]

#: The words of our statements and clauses (``grammar/provsql_dp.ebnf``) that "did you mean"
#: suggests (a shell test checks that every word of the ``.help`` syntax lines is here).
KEYWORDS: list[str] = sorted({
    "ACCURACY", "ALLOCATE", "AND", "ATTACH", "AUDIT", "BETWEEN", "BINS", "BOUNDED", "BOUNDS",
    "BUDGET", "CLUSTERS", "CONFIDENCE", "COUNT", "COUNTS", "CREATE", "CUMULATIVE", "DELTA",
    "DOMAIN", "DROP", "EPSILON", "ERROR", "ESTIMATE", "EUCLIDEAN", "EXPLAIN", "FROM", "FULL",
    "GRID", "GROUP", "HORIZON", "KEY", "KEYS", "KMEANS", "KNOWN", "LINE", "LOG", "METRIC",
    "OFFLINE", "ONLINE", "OPTIONS", "PARTITION", "POLICIES", "POLICY", "PRIVACY", "PROBABILITY",
    "PROTECT", "PROTECTED", "PUBLISH", "RANGES", "SELECT", "SENSITIVITY", "SET", "SHOW",
    "SNAPSHOT", "SOURCES", "SPARK", "STEP", "STEPS", "STREAM", "STREAMS", "TABLE", "TABLES",
    "THRESHOLD", "TOTAL", "UNBOUNDED", "UNPROTECT", "USER", "VALUES", "WEIGHTS", "WIDTH", "WINDOW",
    "WITH",
})

#: two-word near misses that :func:`_close` cannot see, because each word is a known one (or an
#: SQL keyword): the singular where our statement says the plural
_PHRASES: dict[re.Pattern, str] = {
    re.compile(r"\bCOUNT\s+RANGE\b", re.I): "COUNT RANGES",
    re.compile(r"\bSHOW\s+STREAM\b", re.I): "SHOW STREAMS",
    re.compile(r"\bKNOWN\s+COUNT\b", re.I): "KNOWN COUNTS",
    re.compile(r"\bSHOW\s+POLICY\b", re.I): "SHOW POLICIES",
}

_NEAR = re.compile(r'at or near "([^"]+)"')
_MISSING = re.compile(r"with name (\S+) does not exist", re.I)


def did_you_mean(sql: str, near: str | None = None) -> str | None:
    """A hint naming our keywords that the words of ``sql`` look like misspellings of, or None.

    Only plain words are looked at (not SQL's own keywords, quoted names, strings or numbers);
    when the error names the word it stopped at (``near``) and that word is a near miss, only it
    is named.

    >>> did_you_mean("SELECT range FROM range(3) WITH EPSLON 1 OPTINS (theta = 1)", near="EPSLON")
    'did you mean EPSILON?'
    """
    known = set(KEYWORDS)
    hints: list[str] = []
    words = _words(sql)
    if near is not None and near.upper() in words:
        words = [near.upper()] if _close(near.upper(), known) else words
    for word in words:
        close = _close(word, known)
        if close and close not in hints:
            hints.append(close)
    hints += [p for p in _phrases(sql) if p not in hints]
    if not hints:
        return None
    return "did you mean " + " or ".join(hints) + "?"


def with_hint(message: str, sql: str) -> str:
    """``message`` with a "did you mean" hint appended when it is a syntax error (or a catalog
    error naming a near miss of our keywords) and a word of ``sql`` looks misspelt; else
    ``message`` unchanged.

    >>> with_hint("Catalog Error: Table with name POLICES does not exist!", "SHOW POLICES")
    'Catalog Error: Table with name POLICES does not exist! (did you mean POLICIES?)'
    >>> with_hint("Catalog Error: Table with name peple does not exist!", "SELECT * FROM peple")
    'Catalog Error: Table with name peple does not exist!'
    >>> with_hint("Catalog Error: Table with name STREAM does not exist!", "SHOW STREAM")
    'Catalog Error: Table with name STREAM does not exist! (did you mean SHOW STREAMS?)'
    """
    if "did you mean" in message.lower():
        return message
    hint = None
    if "syntax error" in message.lower() or "parser error" in message.lower():
        near = _NEAR.search(message)
        hint = did_you_mean(sql, near.group(1) if near else None)
    else:
        missing = _MISSING.search(message)
        if missing is not None:
            close = _close(missing.group(1).strip("\"'!.").upper(), set(KEYWORDS))
            close = [close] if close else _phrases(sql)  # SHOW STREAM: a table named STREAM
            hint = "did you mean " + " or ".join(close) + "?" if close else None
    if not hint:
        return message
    first, nl, rest = message.partition("\n")  # on the first line: what a shell shows
    return f"{first} ({hint}){nl}{rest}"


def _words(sql: str, depth: int = 0) -> list[str]:
    """The plain words of ``sql`` (upper case); the body of a statement the tokenizer keeps
    whole (``EXPLAIN …`` is one command token and one string) is read as well."""
    try:
        tokens = d.ProvDP().tokenize(sql)
    except (TokenError, ParseError):
        return []
    words = []
    for prev, t in zip([None, *tokens], tokens):
        if t.token_type == TokenType.VAR and t.text.isalpha():
            words.append(t.text.upper())
        elif (t.token_type == TokenType.STRING and prev is not None and depth < 2
              and prev.token_type == TokenType.COMMAND):
            words += _words(t.text, depth + 1)
    return words


def _phrases(sql: str) -> list[str]:
    """The statements' phrases (:data:`_PHRASES`) that ``sql`` has a near miss of."""
    code = _code(sql)
    return [meant for phrase, meant in _PHRASES.items() if phrase.search(code)]


def _code(sql: str) -> str:
    """``sql`` without its string literals and quoted names (a phrase inside one is not code)."""
    return re.sub(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"", " ", sql)


def _close(word: str, known: set[str]) -> str | None:
    if word in known or len(word) < 4:
        return None
    close = difflib.get_close_matches(word, KEYWORDS, n=1, cutoff=0.8)
    return close[0] if close else None
