"""Stream statements: sustainable publishing of a growing table from SQL (papers/004 §6).

* ``CREATE STREAM name WINDOW δ STEPS WITH EPSILON ε`` — a series of releases in which any δ
  consecutive time steps spend at most ε (Theorem 2). Creating it charges the curator's ledger ε
  once; the series then runs for as long as the windows allow.
* ``PUBLISH STREAM name STEP t [SENSITIVITY s] WITH EPSILON ε AS query`` — releases the one
  number ``query`` returns (the exact statistic of step ``t``, computed by the curator) with
  Laplace noise of scale ``s/ε``; refused, spending nothing, when a window holding ``t`` would
  spend more than the stream's ε.
* ``SHOW STREAMS [name]`` — the streams, or one stream's releases.

Formal grammar: ``grammar/provsql_dp.ebnf``, section "streams". The statements are run by
:mod:`provsql_dp.privacy.stream_statements`.

>>> from provsql_dp.sql.dialect import parse_one
>>> s = parse_one("CREATE STREAM daily WINDOW 7 STEPS WITH EPSILON 1")
>>> type(s).__name__, s.name, s.text("window"), s.text("epsilon")
('CreateStream', 'daily', '7', '1')
>>> p = parse_one("PUBLISH STREAM daily STEP 3 WITH EPSILON 0.2 AS SELECT count(*) FROM v WHERE day = 3")
>>> type(p).__name__, p.text("step"), p.args["query"].sql()
('Publish', '3', 'SELECT COUNT(*) FROM v WHERE day = 3')
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.tokens import TokenType

from .expressions import PrivateQuery

__all__ = [
    "STREAM_KEYWORD_PAIRS",
    "STREAM_STATEMENTS",
    "CreateStream",
    "Publish",
    "ShowStreams",
    "parse_stream_statement",
]


class CreateStream(exp.Expression):
    """``CREATE STREAM name WINDOW δ STEPS WITH EPSILON ε``."""

    arg_types = {"this": True, "window": True, "epsilon": True}


class Publish(exp.Expression):
    """``PUBLISH STREAM name STEP t [SENSITIVITY s] WITH EPSILON ε AS query``."""

    arg_types = {"this": True, "step": True, "epsilon": True, "query": True, "sensitivity": False}


class ShowStreams(exp.Expression):
    """``SHOW STREAMS [name]``."""

    arg_types = {"this": False}


STREAM_STATEMENTS: tuple = (CreateStream, Publish, ShowStreams)
STREAM_KEYWORD_PAIRS: set[tuple[str, str]] = {("CREATE", "STREAM"), ("PUBLISH", "STREAM"),
                                              ("SHOW", "STREAMS")}


def _integer(parser, what: str, *, signed: bool = False):
    negative = signed and parser._match(TokenType.DASH)
    tok = parser._curr
    if tok is None or tok.token_type != TokenType.NUMBER or not tok.text.isdigit():
        parser.raise_error(f"Expected a whole number for {what}")
    parser._advance()
    return exp.Literal.number(("-" if negative else "") + tok.text)


def _epsilon(parser, after: str):
    if not parser._match_text_seq("WITH", "EPSILON"):
        parser.raise_error(f"Expected WITH EPSILON ε after {after}")
    return parser._parse_privacy_number("epsilon")


def _create(parser):
    name = parser._parse_plain_identifier("a stream name after CREATE STREAM")
    if not parser._match_text_seq("WINDOW"):
        parser.raise_error("Expected WINDOW δ STEPS after the stream name (δ: how many "
                           "consecutive time steps an entity's data may span)")
    window = _integer(parser, "the window δ (a number of time steps)")
    if not (parser._match_text_seq("STEPS") or parser._match_text_seq("STEP")):
        parser.raise_error("Expected STEPS after the window δ")
    return CreateStream(this=name, window=window, epsilon=_epsilon(parser, "WINDOW δ STEPS"))


def _publish(parser):
    name = parser._parse_plain_identifier("a stream name after PUBLISH STREAM")
    if not parser._match_text_seq("STEP"):
        parser.raise_error("Expected STEP t after the stream name (the time step released)")
    step = _integer(parser, "the time step", signed=True)
    sensitivity = None
    if parser._match_text_seq("SENSITIVITY"):
        sensitivity = parser._parse_privacy_number("the sensitivity")
    eps = _epsilon(parser, "STEP t [SENSITIVITY s]")
    if not parser._match(TokenType.ALIAS):
        parser.raise_error("Expected AS and the query computing the step's statistic")
    parser._pdp_depth = getattr(parser, "_pdp_depth", 0) + 1  # the statistic is plain SQL
    try:
        query = parser._parse_statement()
    finally:
        parser._pdp_depth -= 1
    if (isinstance(query, PrivateQuery) or not isinstance(query, exp.Query)
            or parser._match_text_seq("WITH", "EPSILON")):
        parser.raise_error("PUBLISH STREAM … AS takes a query returning one number (no WITH "
                           "EPSILON of its own: ε is given after STEP)")
    return Publish(this=name, step=step, epsilon=eps, query=query, sensitivity=sensitivity)


def parse_stream_statement(parser):
    """Parse a stream statement at the parser's position, or return None (consuming nothing)."""
    if parser._match_text_seq("CREATE", "STREAM"):
        return parser.expression(_create(parser))
    if parser._match_text_seq("PUBLISH", "STREAM"):
        return parser.expression(_publish(parser))
    if parser._match_text_seq("SHOW", "STREAMS"):
        name = None
        if parser._curr is not None and parser._curr.token_type not in (TokenType.SEMICOLON,
                                                                        TokenType.SENTINEL):
            name = parser._parse_plain_identifier("a stream name after SHOW STREAMS")
        return parser.expression(ShowStreams(this=name))
    return None
