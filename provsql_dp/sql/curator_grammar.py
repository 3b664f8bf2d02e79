"""Two curator statements for clients that speak only SQL (the wire server, the shell):
``ATTACH SPARK TABLE`` and ``SHOW AUDIT LOG``.

* ``ATTACH SPARK TABLE name [FROM 'source' [VERSION n]] [PRIMARY KEY (c, …)] [CHECK (expr)] …
  [SNAPSHOT 'path']`` — :meth:`provsql_dp.Connection.attach` as a statement: the table (or
  view) ``source`` of the Spark session (default: ``name``; ``'delta:/path'`` a Delta table at
  ``VERSION n``; ``'iceberg:/…/metadata/….metadata.json'`` an Iceberg table at snapshot
  ``VERSION n``; ``'parquet.`/path`'`` Parquet files through Spark's SQL on files) is snapshotted
  once and keyed to the catalog under ``name``, with the declared key and CHECK expressions
  checked on its rows.
* ``SHOW AUDIT LOG [LIMIT n]`` — the last ``n`` rows of the audit log (default 20), oldest
  first, with the unit of each charge (:mod:`provsql_dp.privacy.audit`).

Both are the curator's (an analyst is refused, :mod:`provsql_dp.privacy.roles`). Formal grammar:
``grammar/provsql_dp.ebnf``, section "curator statements"; they are run by
:mod:`provsql_dp.interfaces.dbapi.curator_statements`.

>>> from provsql_dp.sql.dialect import parse_one
>>> a = parse_one("ATTACH SPARK TABLE edge FROM 'delta:/data/edge' VERSION 3 "
...               "PRIMARY KEY (src, dst) CHECK (src < dst)")
>>> type(a).__name__, a.name, a.text("source"), a.text("version")
('AttachSparkTable', 'edge', 'delta:/data/edge', '3')
>>> [c.name for c in a.args["key"]], [c.sql() for c in a.args["checks"]]
(['src', 'dst'], ['src < dst'])
>>> s = parse_one("SHOW AUDIT LOG LIMIT 5")
>>> type(s).__name__, s.text("limit")
('ShowAuditLog', '5')
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.tokens import TokenType

__all__ = ["AttachSparkTable", "ShowAuditLog", "CURATOR_STATEMENTS", "CURATOR_KEYWORD_PAIRS",
           "parse_curator_statement"]


class AttachSparkTable(exp.Expression):
    """``ATTACH SPARK TABLE name [FROM 'source' [VERSION n]] [PRIMARY KEY (…)] [CHECK (…)]…
    [SNAPSHOT 'path']``."""

    arg_types = {"this": True, "source": False, "version": False, "key": False, "checks": False,
                 "snapshot": False}


class ShowAuditLog(exp.Expression):
    """``SHOW AUDIT LOG [LIMIT n]``."""

    arg_types = {"limit": False}


CURATOR_STATEMENTS: tuple = (AttachSparkTable, ShowAuditLog)
CURATOR_KEYWORD_PAIRS: set[tuple[str, str]] = {("ATTACH", "SPARK"), ("SHOW", "AUDIT")}


def _whole(parser, what: str, least: int = 1):
    tok = parser._curr
    if (tok is None or tok.token_type != TokenType.NUMBER or not tok.text.isdigit()
            or int(tok.text) < least):
        parser.raise_error(f"Expected a whole number of at least {least} for {what}")
    parser._advance()
    return exp.Literal.number(tok.text)


def _string(parser, what: str):
    if parser._curr is None or parser._curr.token_type != TokenType.STRING:
        parser.raise_error(f"Expected a 'string' for {what}")
    return parser._parse_string()


def _attach(parser):
    name = parser._parse_plain_identifier("a table name after ATTACH SPARK TABLE")
    out = AttachSparkTable(this=name)
    if parser._match(TokenType.FROM):
        out.set("source", _string(parser, "the Spark source after FROM (a table name, "
                                  "'delta:/path', 'iceberg:/path' or 'parquet.`/path`')"))
        if parser._match_text_seq("VERSION"):
            out.set("version", _whole(parser, "the Delta version or Iceberg snapshot id", least=0))
    if parser._match(TokenType.PRIMARY_KEY):
        if not parser._match(TokenType.L_PAREN):
            parser.raise_error("Expected '(' and the key's columns after PRIMARY KEY")
        key = [parser._parse_plain_identifier("a key column")]
        while parser._match(TokenType.COMMA):
            key.append(parser._parse_plain_identifier("a key column after ','"))
        if not parser._match(TokenType.R_PAREN):
            parser.raise_error("Expected ')' to close the PRIMARY KEY columns")
        out.set("key", key)
    checks = []
    while parser._match_text_seq("CHECK"):
        if not parser._match(TokenType.L_PAREN):
            parser.raise_error("Expected '(' and an expression after CHECK")
        checks.append(parser._parse_disjunction())
        if not parser._match(TokenType.R_PAREN):
            parser.raise_error("Expected ')' to close CHECK (…)")
    if checks:
        out.set("checks", checks)
    if parser._match_text_seq("SNAPSHOT"):
        out.set("snapshot", _string(parser, "the snapshot's path after SNAPSHOT"))
    return parser.expression(out)


def parse_curator_statement(parser):
    """Parse a curator statement at the parser's position, or return None (consuming nothing)."""
    if parser._match_text_seq("ATTACH", "SPARK"):
        if not parser._match(TokenType.TABLE):
            parser.raise_error("Expected TABLE after ATTACH SPARK (ATTACH SPARK TABLE name …)")
        return _attach(parser)
    if parser._match_text_seq("SHOW", "AUDIT"):
        if not parser._match_text_seq("LOG"):
            parser.raise_error("Expected LOG after SHOW AUDIT (SHOW AUDIT LOG [LIMIT n])")
        limit = _whole(parser, "LIMIT (how many of the last rows)") if parser._match(TokenType.LIMIT) else None
        return parser.expression(ShowAuditLog(limit=limit))
    return None
