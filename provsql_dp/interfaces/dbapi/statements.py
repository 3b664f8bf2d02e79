"""SQL text into statements, and what kind each is: the connection's dispatch decisions.

Statements are split on top-level ``;`` with our dialect's tokenizer (string literals and
comments respected); then their first words tell a privacy statement (ours), a private query
(``WITH EPSILON``), a data change (which opens the implicit transaction) or anything else.

>>> split_statements("SELECT ';' AS s; -- a comment\\nPROTECT TABLE t")
["SELECT ';' AS s", '-- a comment\\nPROTECT TABLE t']
>>> is_privacy_statement("PROTECT TABLE t"), is_privacy_statement("SELECT 1")
(True, False)
>>> is_privacy_statement("SET GROUP KEYS ON t (c) VALUES (1)"), is_privacy_statement("SET bounds TO 1")
(True, False)
>>> has_epsilon_clause("SELECT COUNT(*) FROM t WITH EPSILON 1"), has_epsilon_clause("SELECT 'WITH EPSILON'")
(True, False)
>>> statement_kind("INSERT INTO t VALUES (1)"), statement_kind("INSERT INTO t VALUES (1) RETURNING *")
('dml', 'query')
"""

from __future__ import annotations

import re
import threading
from fractions import Fraction

from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from ...errors import ProgrammingError
from ...sql import dialect as d
from ...sql import policy_grammar as _policy_grammar
from ...sql.curator_grammar import CURATOR_KEYWORD_PAIRS

__all__ = ["split_statements", "refuse_hidden_statements", "KeptTokens", "is_privacy_statement", "has_epsilon_clause", "looks_like_query",
           "statement_kind", "syntax_error", "epsilon_clause"]

_OUR_KEYWORDS = {"PROTECT", "UNPROTECT"}
_OUR_PAIRS = {("SHOW", "PROTECTED"), ("SET", "PRIVACY"), ("SHOW", "PRIVACY"),
              ("SET", "BOUNDS"), ("DROP", "BOUNDS"), ("SHOW", "BOUNDS"),
              ("SET", "GROUP"), ("DROP", "GROUP"), ("SHOW", "GROUP"),
              *_policy_grammar.KEYWORD_PAIRS, *CURATOR_KEYWORD_PAIRS}
# ``SET bounds = …`` / ``SET bounds TO …`` would be a DuckDB setting: never ours.
_SETTING = {"=", "TO"}

_DML = {"INSERT", "UPDATE", "DELETE", "MERGE", "UPSERT", "REPLACE"}
_QUERY = {"SELECT", "WITH", "FROM", "VALUES", "TABLE", "SHOW", "DESCRIBE", "SUMMARIZE", "EXPLAIN",
          "PRAGMA", "CALL", "(", "PIVOT", "UNPIVOT"}


#: texts up to this long have their tokens kept (a function of the text alone): a statement run
#: again is not tokenized again (twice per statement: its split and its WITH EPSILON)
_KEPT_CHARS = 4096


class KeptTokens:
    """The tokens of the last texts one connection ran (at most ``size``, the oldest dropped).

    One per connection, never shared: a process-wide cache (as this was) told analyst B, by the
    time a text of 4 KiB took (6 ms to tokenize, 0.08 ms kept), whether any session of the
    server — analyst A's, the curator's — had run that very text (red team h85attack-6).

    >>> kept = KeptTokens(size=1)
    >>> kept.tokens("SELECT 1") is kept.tokens("SELECT 1"), len(kept.tokens("SELECT 2"))
    (True, 2)
    """

    def __init__(self, size: int = 256):
        self.size = size
        self._kept: dict[str, tuple] = {}
        self._lock = threading.Lock()  # a connection's cursors may run on several threads

    def tokens(self, sql: str) -> tuple:
        with self._lock:
            found = self._kept.pop(sql, None)  # back in as the newest
        if found is None:
            found = tuple(d.ProvDP().tokenize(sql))
        with self._lock:
            while len(self._kept) >= self.size:
                self._kept.pop(next(iter(self._kept)))
            self._kept[sql] = found
        return found


def _tokens(sql: str, kept: KeptTokens | None):
    if kept is None or len(sql) > _KEPT_CHARS:
        return d.ProvDP().tokenize(sql)
    return kept.tokens(sql)


def split_statements(sql: str, kept: KeptTokens | None = None) -> list[str]:
    """Split SQL text on top-level semicolons (string literals and comments respected);
    ``kept``: the connection's :class:`KeptTokens`, if any."""
    try:
        tokens = _tokens(sql, kept)
    except (TokenError, ParseError) as e:
        raise ProgrammingError(f"could not read the SQL text: {e}") from e
    out, start, has_tokens = [], 0, False
    for tok in tokens:
        if tok.token_type == TokenType.SEMICOLON:
            piece = sql[start:tok.start].strip()
            if piece and has_tokens:  # a piece of comments only is no statement
                out.append(piece)
            start, has_tokens = tok.end + 1, False
        else:
            has_tokens = True
    tail = sql[start:].strip()
    if tail and has_tokens:
        out.append(tail)
    return out


def refuse_hidden_statements(duck, stmt: str) -> None:
    """Raise :class:`ProgrammingError` when DuckDB's parser reads ``stmt`` (one statement to
    :func:`split_statements`) as several: DuckDB quotes names in backticks, our tokenizer does
    not, so ``SELECT 1 `--`; DROP TABLE t`` was one statement here (``--`` a comment to the end of
    the line) and two there, the ``DROP`` run past every check read from the statement (red team
    h103attack, finding 1). A text DuckDB cannot parse (our own statements) is left to its path.

    >>> import duckdb
    >>> refuse_hidden_statements(duckdb.connect(), "SELECT 1 AS `a b`")
    >>> refuse_hidden_statements(duckdb.connect(), "SELECT 1 `--`; DROP TABLE t")
    Traceback (most recent call last):
    ...
    provsql_dp.errors.ProgrammingError: DuckDB reads this text as 2 statements where provsql_dp reads one (a name quoted in backticks, `…`, hides a ';' from provsql_dp): quote names in double quotes ("…"), or run each statement on its own
    """
    try:
        n = len(duck.extract_statements(stmt))
    except Exception:  # noqa: BLE001 - not DuckDB's SQL: the path of the statement judges it
        return
    if n > 1:
        raise ProgrammingError(
            f"DuckDB reads this text as {n} statements where provsql_dp reads one (a name quoted in "
            "backticks, `…`, hides a ';' from provsql_dp): quote names in double quotes (\"…\"), "
            "or run each statement on its own")


def is_privacy_statement(stmt: str) -> bool:
    """Whether the statement's first words are those of a privacy statement (ours to run)."""
    words = stmt.split(None, 3)
    if not words:
        return False
    first = words[0].upper()
    if first in _OUR_KEYWORDS:
        return True
    if len(words) < 2 or (first, words[1].upper().rstrip(";")) not in _OUR_PAIRS:
        return False
    return not (first == "SET" and len(words) > 2
                and (words[2].upper() in _SETTING or words[2].startswith("=")))


def has_epsilon_clause(stmt: str, kept: KeptTokens | None = None) -> bool:
    """Whether the statement's tokens contain ``WITH EPSILON`` or ``WITH ACCURACY`` (our
    private-query clauses); ``kept`` as for :func:`split_statements`."""
    upper = stmt.upper()
    if "EPSILON" not in upper and "ACCURACY" not in upper and "RHO" not in upper:
        return False
    try:
        tokens = _tokens(stmt, kept)
    except (TokenError, ParseError):
        return False
    return any(
        a.text.upper() == "WITH" and b.text.upper() in ("EPSILON", "ACCURACY", "RHO")
        and b.token_type != TokenType.STRING
        and b.token_type != TokenType.IDENTIFIER
        for a, b in zip(tokens, tokens[1:])
    )


def looks_like_query(stmt: str) -> bool:
    """Whether the statement starts like a query (a candidate for the session's default ε)."""
    first = stmt.lstrip("( \n\t").split(None, 1)
    return bool(first) and first[0].upper() in ("SELECT", "WITH", "FROM")


def statement_kind(stmt: str) -> str:
    """'query', 'dml', 'begin', 'end' or 'other', from the statement's first keyword."""
    head = stmt.lstrip().split(None, 1)
    word = head[0].upper().rstrip(";") if head else ""
    if word.startswith("("):
        return "query"
    if word in _DML:
        return "query" if " RETURNING " in f" {stmt.upper()} " else "dml"
    if word in ("BEGIN", "START"):
        return "begin"
    if word in ("COMMIT", "END", "ROLLBACK", "ABORT"):
        return "end"
    return "query" if word in _QUERY else "other"


_READ_ONLY = {"SELECT", "WITH", "FROM", "VALUES", "TABLE", "SHOW", "DESCRIBE", "SUMMARIZE",
              "EXPLAIN", "(", "PIVOT", "UNPIVOT"}
_WRITES = re.compile(r"\b(INSERT|UPDATE|DELETE|MERGE|UPSERT|REPLACE|CREATE|ALTER|DROP|ATTACH|"
                     r"DETACH|USE|SET|RESET|COPY|IMPORT|EXPORT|LOAD|INSTALL|CALL|PRAGMA|"
                     r"CHECKPOINT|VACUUM|COMMIT|ROLLBACK)\b", re.I)


def may_change_catalog(stmt: str) -> bool:
    """Whether a statement run as it is might change the schema, the declarations, the search
    path or a setting: anything but a plain read. Errs on the side of yes (a word in a string
    literal counts): a yes only makes the next private statement read the catalog afresh.

    >>> may_change_catalog("SELECT * FROM t"), may_change_catalog("PRAGMA threads=1")
    (False, True)
    >>> may_change_catalog("WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x")
    True
    """
    head = stmt.lstrip().split(None, 1)
    word = head[0].upper().rstrip(";") if head else ""
    if not (word in _READ_ONLY or word.startswith("(")):
        return True
    return _WRITES.search(stmt) is not None


def syntax_error(e: ParseError) -> ProgrammingError:
    """The error to raise for a statement of ours that does not parse: the parser's first line."""
    first = str(e).splitlines()[0] if str(e) else type(e).__name__
    return ProgrammingError(f"syntax error: {first}")


def epsilon_clause(tree: d.PrivateQuery) -> tuple[Fraction, dict]:
    """The ε and the mechanism OPTIONS of a parsed ``<query> WITH EPSILON ε [OPTIONS (…)]``
    (ε is None for an accuracy-first ``<query> WITH ACCURACY α``).

    >>> epsilon_clause(d.parse_one("SELECT COUNT(*) FROM t WITH EPSILON 0.5"))
    (Fraction(1, 2), {})
    """
    if tree.args.get("epsilon") is None and tree.args.get("rho") is None:
        return None, {}  # WITH ACCURACY α: ε comes from EXPLAIN PRIVACY
    eps = (d.exact_number(tree.args["epsilon"], "epsilon") if tree.args.get("epsilon") is not None
           else None)  # WITH RHO ρ: no ε (privacy.gaussian_route.cost_of reads ρ)
    try:
        options = d.mechanism_options(tree)
    except ParseError as e:
        raise ProgrammingError(str(e)) from e
    return eps, options
