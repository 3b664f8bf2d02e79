"""Stream statements: sustainable publishing of a growing table from SQL (Fang & Chang §6).

* ``CREATE STREAM name WINDOW δ STEPS WITH EPSILON ε [ALLOCATE …]`` — a series of releases in
  which any δ consecutive time steps spend at most ε (Theorem 2). Creating it charges the
  curator's ledger ε once; the series then runs for as long as the windows allow. ``ALLOCATE
  OFFLINE WEIGHTS (w₁, …, wₙ)`` or ``ALLOCATE ONLINE HORIZON n PROBABILITY p [SAMPLES N]`` lets
  the stream pick each step's ε by Fang & Chang §7's algorithms (public weights only).
* ``PUBLISH STREAM name STEP t [SENSITIVITY s] [WEIGHT w] [WITH EPSILON ε] AS query`` — releases
  the one number ``query`` returns (the exact statistic of step ``t``, computed by the curator)
  with Laplace noise of scale ``s/ε`` (``s`` at least the planner's sensitivity where it derives
  one: :mod:`provsql_dp.privacy.stream_sensitivity`); refused, spending nothing, when a window holding ``t``
  would spend more than the stream's ε. ``WITH EPSILON`` is required without an allocation and
  refused with one (the stream's allocation gives ε; ``WEIGHT``: the step's weight, online).
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
>>> a = parse_one("CREATE STREAM s WINDOW 2 STEPS WITH EPSILON 1 ALLOCATE OFFLINE WEIGHTS (1, 0, 2.5)")
>>> a.args["allocate"].text("mode"), [w.sql() for w in a.args["allocate"].expressions]
('OFFLINE', ['1', '0', '2.5'])
>>> o = parse_one("CREATE STREAM s WINDOW 2 STEPS WITH EPSILON 1 ALLOCATE ONLINE HORIZON 30 PROBABILITY 0.5")
>>> o.args["allocate"].text("horizon"), o.args["allocate"].text("probability")
('30', '0.5')
>>> q = parse_one("PUBLISH STREAM s STEP 1 WEIGHT 2 AS SELECT 1")
>>> q.args.get("epsilon") is None, q.text("weight")
(True, '2')
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.tokens import TokenType

from .expressions import PrivateQuery

__all__ = [
    "STREAM_KEYWORD_PAIRS",
    "STREAM_STATEMENTS",
    "Allocate",
    "CreateStream",
    "Publish",
    "ShowStreams",
    "parse_stream_statement",
]


class CreateStream(exp.Expression):
    """``CREATE STREAM name WINDOW δ STEPS WITH EPSILON ε [ALLOCATE …]``."""

    arg_types = {"this": True, "window": True, "epsilon": True, "allocate": False}


class Allocate(exp.Expression):
    """``ALLOCATE OFFLINE WEIGHTS (w, …)`` or ``ALLOCATE ONLINE HORIZON n PROBABILITY p
    [SAMPLES N]``: ``mode`` is ``OFFLINE`` or ``ONLINE``; the weights are ``expressions``."""

    arg_types = {"mode": True, "expressions": False, "horizon": False, "probability": False,
                 "samples": False}


class Publish(exp.Expression):
    """``PUBLISH STREAM name STEP t [SENSITIVITY s] [WEIGHT w] [WITH EPSILON ε] AS query``."""

    arg_types = {"this": True, "step": True, "epsilon": False, "query": True, "sensitivity": False,
                 "weight": False}


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
    eps = _epsilon(parser, "WINDOW δ STEPS")
    allocate = _allocate(parser) if parser._match_text_seq("ALLOCATE") else None
    return CreateStream(this=name, window=window, epsilon=eps, allocate=allocate)


def _allocate(parser):
    """After ``ALLOCATE``: ``OFFLINE WEIGHTS (w, …)`` or ``ONLINE HORIZON n PROBABILITY p
    [SAMPLES N]`` (Fang & Chang §7)."""
    if parser._match_text_seq("OFFLINE"):
        if not parser._match_text_seq("WEIGHTS") or not parser._match(TokenType.L_PAREN):
            parser.raise_error("Expected WEIGHTS (w₁, w₂, …) after ALLOCATE OFFLINE: one public "
                               "weight per step 1, 2, … (0: nothing published at that step)")
        weights = [parser._parse_privacy_number("a weight")]
        while parser._match(TokenType.COMMA):
            weights.append(parser._parse_privacy_number("a weight"))
        if not parser._match(TokenType.R_PAREN):
            parser.raise_error("Expected ) after the weights")
        return Allocate(mode=exp.Var(this="OFFLINE"), expressions=weights)
    if parser._match_text_seq("ONLINE"):
        if not parser._match_text_seq("HORIZON"):
            parser.raise_error("Expected HORIZON n after ALLOCATE ONLINE (the number of steps)")
        horizon = _integer(parser, "the horizon (a number of time steps)")
        if not parser._match_text_seq("PROBABILITY"):
            parser.raise_error("Expected PROBABILITY p after HORIZON n (the chance that a future "
                               "step is published, weight 1)")
        prob = parser._parse_privacy_number("the probability")
        samples = None
        if parser._match_text_seq("SAMPLES"):
            samples = _integer(parser, "the number of sampled futures")
        return Allocate(mode=exp.Var(this="ONLINE"), horizon=horizon, probability=prob,
                        samples=samples)
    parser.raise_error("Expected OFFLINE WEIGHTS (…) or ONLINE HORIZON n PROBABILITY p after "
                       "ALLOCATE")
    return None  # pragma: no cover


def _publish(parser):
    name = parser._parse_plain_identifier("a stream name after PUBLISH STREAM")
    if not parser._match_text_seq("STEP"):
        parser.raise_error("Expected STEP t after the stream name (the time step released)")
    step = _integer(parser, "the time step", signed=True)
    sensitivity = weight = eps = None
    if parser._match_text_seq("SENSITIVITY"):
        sensitivity = parser._parse_privacy_number("the sensitivity")
    if parser._match_text_seq("WEIGHT"):
        weight = parser._parse_privacy_number("the step's weight")
    if parser._match_text_seq("WITH", "EPSILON"):
        eps = parser._parse_privacy_number("epsilon")
    if not parser._match(TokenType.ALIAS):
        parser.raise_error("Expected AS and the query computing the step's statistic (after "
                           "[WEIGHT w] [WITH EPSILON ε])")
    parser._pdp_depth = getattr(parser, "_pdp_depth", 0) + 1  # the statistic is plain SQL
    try:
        query = parser._parse_statement()
    finally:
        parser._pdp_depth -= 1
    if (isinstance(query, PrivateQuery) or not isinstance(query, exp.Query)
            or parser._match_text_seq("WITH", "EPSILON")):
        parser.raise_error("PUBLISH STREAM … AS takes a query returning one number (no WITH "
                           "EPSILON of its own: ε is given after STEP)")
    return Publish(this=name, step=step, epsilon=eps, query=query, sensitivity=sensitivity,
                   weight=weight)


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
