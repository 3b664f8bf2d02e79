"""Policy statements of our SQL dialect: Blowfish policies, range counts and privacy EXPLAIN.

``dialect.ProvDP.Parser`` calls :func:`parse_policy_statement` for any top-level statement that
is not one of the core privacy statements; it returns the parsed expression, or None when the
statement is not ours (it then parses as DuckDB); the stream statements
(:mod:`provsql_dp.sql.stream_grammar`) come through it too. ``POLICY_STATEMENTS`` lists the expression
classes the connection dispatches to ``provsql_dp.privacy.policy_statements``; ``KEYWORD_PAIRS`` the leading keyword
pairs that mark a statement as ours. Parsing is token-based, with sqlglot's parser helpers.

Statements (formal grammar: ``grammar/provsql_dp.ebnf``, section "policies"):

* ``CREATE POLICY name ON table (col [, col]) AS graph [DOMAIN dom [, dom]]
  [BOUNDED | UNBOUNDED [SOURCES (v, …)]] [KNOWN COUNTS TOTAL | BY (col) | ((v, …), …)]``
* ``DROP POLICY [IF EXISTS] name`` and ``SHOW POLICIES [ON table]``
* ``COUNT RANGES (cond, …) FROM table [WHERE …] [WITH EPSILON ε]`` and
  ``COUNT CUMULATIVE col FROM table [WHERE …] [WITH EPSILON ε]``: a batch of range counts or a
  cumulative histogram, released under the table's policy (a private query);
* ``KMEANS CLUSTERS k OF (col, …) FROM table [ITERATIONS n] [WITH EPSILON ε]``: the centres of
  SuLQ k-means under the table's Blowfish policy on those columns, or under its bounds
  (He et al. §6; :mod:`provsql_dp.privacy.kmeans_statement`);
* ``EXPLAIN PRIVACY query (WITH EPSILON ε | WITH ACCURACY α [CONFIDENCE c])``: the strategy and
  the expected error of a release, or the smallest ε meeting an accuracy — reads no data and
  spends nothing; ``… WITH EPSILON ε ESTIMATE ERROR WITH EPSILON e [CONFIDENCE c]`` instead
  releases a private estimate of a recursive-mechanism release's error, charged e.

Policy graph kinds are a registry (:data:`POLICY_KINDS`), so a new kind — e.g. ``DELTA δ`` —
is one function: ``register_policy_kind("DELTA", parse_params)`` where ``parse_params(parser)``
reads the kind's parameters after its keyword and returns a list of expressions.

>>> from provsql_dp.sql.dialect import parse_one
>>> s = parse_one("CREATE POLICY p ON people (age) AS THRESHOLD 3 DOMAIN [0, 100) WIDTH 5")
>>> type(s).__name__, s.name, s.args["graph"].name, s.args["domains"][0].text("width")
('CreatePolicy', 'p', 'THRESHOLD', '5')
>>> type(parse_one("COUNT RANGES (age BETWEEN 20 AND 29) FROM people WITH EPSILON 1")).__name__
'PrivateQuery'
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.tokens import TokenType

from .expressions import PrivateQuery
from .stream_grammar import STREAM_KEYWORD_PAIRS, STREAM_STATEMENTS, parse_stream_statement

__all__ = [
    "parse_policy_statement", "POLICY_STATEMENTS", "KEYWORD_PAIRS", "POLICY_KINDS",
    "register_policy_kind", "CreatePolicy", "DropPolicy", "ShowPolicies", "ExplainPrivacy", "KMeans",
    "PolicyGraph", "PolicyDomain", "range_spec",
]


class CreatePolicy(exp.Expression):
    """``CREATE POLICY name ON table (cols) AS graph [DOMAIN …] [BOUNDED|UNBOUNDED [SOURCES …]]``.

    ``bounded`` is an ``exp.Boolean`` or absent (the default, unbounded); ``sources`` a tuple of
    values (1-D) or of tuples (2-D)."""

    arg_types = {"this": True, "table": True, "expressions": True, "graph": True,
                 "domains": False, "bounded": False, "sources": False, "known": False}


class PolicyGraph(exp.Expression):
    """A policy graph: ``this`` is the kind keyword (``FULL``, ``LINE``, ``THRESHOLD``, ``GRID``,
    ``PARTITION``, ``COMPOSE`` or a registered kind), ``expressions`` its parameters; for
    ``COMPOSE`` (attribute composition) the per-column graphs."""

    arg_types = {"this": True, "expressions": False}

    @property
    def name(self) -> str:
        return self.this


class PolicyDomain(exp.Expression):
    """One column's domain: explicit ``expressions`` (values in order), or ``[low, high)`` cut
    into bins of ``width`` or into ``bins`` equal bins."""

    arg_types = {"expressions": False, "low": False, "high": False, "width": False, "bins": False}


class DropPolicy(exp.Expression):
    """``DROP POLICY [IF EXISTS] name``."""

    arg_types = {"this": True, "exists": False}


class ShowPolicies(exp.Expression):
    """``SHOW POLICIES [ON table]``."""

    arg_types = {"table": False}


class ExplainPrivacy(exp.Expression):
    """``EXPLAIN PRIVACY query WITH EPSILON ε [ESTIMATE ERROR WITH EPSILON e [CONFIDENCE c]]``
    or ``… WITH ACCURACY α [CONFIDENCE c]``.

    ``this`` is the query (a ``PrivateQuery`` when ``WITH EPSILON`` was given); ``estimate`` the
    ε of a privately released error estimate (charged; :mod:`provsql_dp.privacy.error_estimate`)."""

    arg_types = {"this": True, "accuracy": False, "confidence": False, "estimate": False}


class KMeans(exp.Expression):
    """``KMEANS CLUSTERS k OF (col, …) FROM table [ITERATIONS n] [WITH EPSILON ε]``: ``this`` the
    number of clusters, ``expressions`` the columns, ``table``, ``iterations``, ``epsilon``."""

    arg_types = {"this": True, "expressions": True, "table": True, "iterations": False,
                 "epsilon": False}


def range_spec(query) -> dict | None:
    """The batch a ``COUNT RANGES`` / ``COUNT CUMULATIVE`` query carries, or None.

    Those statements parse to an ordinary ``SELECT COUNT(*) FROM t [WHERE …]`` (so the planner
    and the privacy checks see a plain count) whose ``meta`` holds ``{"ranges": [cond, …]}`` or
    ``{"cumulative": column}``. Only the policy route answers such a query; it never falls
    through to the recursive mechanism."""
    meta = getattr(query, "_meta", None) or {}
    return meta.get("provsql_dp_ranges")


POLICY_STATEMENTS: tuple = (CreatePolicy, DropPolicy, ShowPolicies, ExplainPrivacy, KMeans,
                            *STREAM_STATEMENTS)
KEYWORD_PAIRS: set[tuple[str, str]] = {
    ("CREATE", "POLICY"), ("DROP", "POLICY"), ("SHOW", "POLICIES"), ("EXPLAIN", "PRIVACY"),
    ("COUNT", "RANGES"), ("COUNT", "CUMULATIVE"), ("KMEANS", "CLUSTERS"), *STREAM_KEYWORD_PAIRS,
}


# ---------------------------------------------------------------------- small token helpers
def _at(parser, *types) -> bool:
    return parser._curr is not None and parser._curr.token_type in types


def _word(parser, *words) -> bool:
    return parser._curr is not None and parser._curr.text.upper() in words \
        and parser._curr.token_type not in (TokenType.STRING, TokenType.IDENTIFIER)


def _expect(parser, ttype, message):
    if not parser._match(ttype):
        parser.raise_error(message)


def _number(parser, what, *, signed=False, integer=False):
    """A numeric literal (a leading minus only when ``signed``)."""
    negative = parser._match(TokenType.DASH)
    if negative and not signed:
        parser.raise_error(f"{what} must be positive")
    if not _at(parser, TokenType.NUMBER):
        parser.raise_error(f"Expected a number for {what}")
    tok = parser._curr
    parser._advance()
    text = ("-" if negative else "") + tok.text
    if integer and not _is_integer(tok.text):
        parser.raise_error(f"{what} must be a whole number, got {text}")
    return exp.Literal.number(text)


def _is_integer(text: str) -> bool:
    try:
        return float(text) == int(float(text)) and "." not in text and "e" not in text.lower()
    except ValueError:
        return False


def _table(parser):
    """``[catalog.][schema.]table`` — read part by part (a following ``(`` is not a call)."""
    if parser._curr is None or parser._curr.token_type == TokenType.SENTINEL:
        parser.raise_error("Expected a table name")
    parts = [parser._parse_plain_identifier("a table name")]
    while parser._match(TokenType.DOT):
        parts.append(parser._parse_plain_identifier("a name after '.'"))
    if len(parts) > 3:
        parser.raise_error("a table name has at most three parts: catalog.schema.table")
    parts = [None] * (3 - len(parts)) + parts
    return exp.Table(this=parts[2], db=parts[1], catalog=parts[0])


def _value(parser, what):
    """A domain or source value: a (signed) number or a string literal."""
    if _at(parser, TokenType.STRING):
        return parser._parse_string()
    if _at(parser, TokenType.NUMBER, TokenType.DASH):
        return _number(parser, what, signed=True)
    if _at(parser, TokenType.TRUE, TokenType.FALSE):
        return parser._parse_primary()
    parser.raise_error(f"Expected {what} (a number or a 'string')")


def _value_list(parser, what):
    _expect(parser, TokenType.L_PAREN, f"Expected '(' and a list of {what}s")
    values = [_value(parser, what)]
    while parser._match(TokenType.COMMA):
        values.append(_value(parser, what))
    _expect(parser, TokenType.R_PAREN, f"Expected ')' to close the list of {what}s")
    return values


# ---------------------------------------------------------------------- policy graph kinds
def _no_params(parser):
    return []


def _theta(parser):
    return [_number(parser, "the threshold θ", integer=True)]


def _partition(parser):
    """``PARTITION BY ((v, …), (v, …), …)`` (groups of values) or ``PARTITION BY WIDTH w``."""
    if _word(parser, "WIDTH"):
        parser._advance()
        return [exp.Var(this="WIDTH"), _number(parser, "the partition width")]
    _expect(parser, TokenType.L_PAREN, "Expected '((v, …), …)' or WIDTH w after PARTITION BY")
    groups = [exp.Tuple(expressions=_value_list(parser, "partition value"))]
    while parser._match(TokenType.COMMA):
        groups.append(exp.Tuple(expressions=_value_list(parser, "partition value")))
    _expect(parser, TokenType.R_PAREN, "Expected ')' to close the partition groups")
    return groups


#: keyword → parameter parser (called after the keyword); extend with register_policy_kind
POLICY_KINDS: dict = {
    "FULL": _no_params,
    "LINE": _no_params,
    "THRESHOLD": _theta,
    "GRID": _theta,
    "PARTITION": _partition,
}

#: kinds that describe one attribute (allowed inside an attribute composition)
ATTRIBUTE_KINDS = {"FULL", "LINE", "THRESHOLD", "PARTITION"}


def register_policy_kind(keyword: str, parse_params, *, attribute: bool = True) -> None:
    """Add a policy graph kind ``AS KEYWORD params…`` to ``CREATE POLICY``.

    ``parse_params(parser)`` reads the parameters after the keyword (with the parser's token
    helpers) and returns a list of expressions; ``attribute`` allows the kind inside an
    attribute composition ``(g1, g2)``. The executor builds the policy from the parsed
    :class:`PolicyGraph` through :data:`provsql_dp.policies.blowfish.sql.BUILDERS`."""
    POLICY_KINDS[keyword.upper()] = parse_params
    if attribute:
        ATTRIBUTE_KINDS.add(keyword.upper())


def _graph_kind(parser, nested=False):
    if parser._match(TokenType.PARTITION_BY) or parser._match_text_seq("PARTITION", "BY"):
        return PolicyGraph(this="PARTITION", expressions=_partition(parser))
    if not nested and parser._match(TokenType.L_PAREN):
        parts = [_graph_kind(parser, nested=True)]
        while parser._match(TokenType.COMMA):
            parts.append(_graph_kind(parser, nested=True))
        _expect(parser, TokenType.R_PAREN, "Expected ')' to close the attribute graphs")
        return PolicyGraph(this="COMPOSE", expressions=parts)
    kinds = sorted(ATTRIBUTE_KINDS if nested else POLICY_KINDS)
    if parser._curr is None or parser._curr.token_type in (TokenType.STRING, TokenType.NUMBER):
        parser.raise_error(f"Expected a policy graph: {', '.join(kinds)}"
                           + ("" if nested else " or (g1, g2) for attribute composition"))
    word = parser._curr.text.upper()
    if nested and word in POLICY_KINDS and word not in ATTRIBUTE_KINDS:
        parser.raise_error(f"{word} cannot be composed with other attribute graphs inside (g1, g2); "
                           f"a composition takes {', '.join(kinds)}, and {word} is a policy of "
                           "its own (AS " + word + " …)")
    if word not in POLICY_KINDS or (nested and word not in ATTRIBUTE_KINDS):
        parser.raise_error(f"Expected a policy graph: {', '.join(kinds)}"
                           + ("" if nested else " or (g1, g2) for attribute composition"))
    parser._advance()
    return PolicyGraph(this=word, expressions=POLICY_KINDS[word](parser))


def _domain(parser):
    """``(v, …)`` or ``[lo, hi) WIDTH w`` / ``[lo, hi) BINS n``."""
    if parser._match(TokenType.L_BRACKET):
        low = _number(parser, "the domain's lower bound", signed=True)
        _expect(parser, TokenType.COMMA, "Expected ',' between the bounds of [lo, hi)")
        high = _number(parser, "the domain's upper bound", signed=True)
        _expect(parser, TokenType.R_PAREN, "Expected ')' to close [lo, hi) (the upper bound is excluded)")
        if _word(parser, "WIDTH"):
            parser._advance()
            return PolicyDomain(low=low, high=high, width=_number(parser, "the bin width"))
        if _word(parser, "BINS"):
            parser._advance()
            return PolicyDomain(low=low, high=high, bins=_number(parser, "the bin count", integer=True))
        parser.raise_error("Expected WIDTH w or BINS n after [lo, hi)")
    if _at(parser, TokenType.L_PAREN):
        return PolicyDomain(expressions=_value_list(parser, "domain value"))
    parser.raise_error("Expected a domain: (v, …) or [lo, hi) WIDTH w or [lo, hi) BINS n")


def _parse_create_policy(parser):
    name = parser._parse_plain_identifier("a policy name after CREATE POLICY")
    if not parser._match(TokenType.ON):
        parser.raise_error("Expected ON table (columns) after the policy name")
    table = _table(parser)
    _expect(parser, TokenType.L_PAREN, "Expected '(' and the policy's columns after the table")
    cols = [parser._parse_plain_identifier("a column name")]
    while parser._match(TokenType.COMMA):
        cols.append(parser._parse_plain_identifier("a column name after ','"))
    _expect(parser, TokenType.R_PAREN, "Expected ')' to close the policy's columns")
    if not parser._match(TokenType.ALIAS):
        parser.raise_error("Expected AS and a policy graph (FULL, LINE, THRESHOLD θ, GRID θ, "
                           "PARTITION BY …, or (g1, g2))")
    graph = _graph_kind(parser)
    domains = None
    if _word(parser, "DOMAIN"):
        parser._advance()
        domains = [_domain(parser)]
        while parser._match(TokenType.COMMA):
            domains.append(_domain(parser))
    bounded = sources = None
    if _word(parser, "BOUNDED"):
        parser._advance()
        bounded = exp.Boolean(this=True)
    elif _word(parser, "UNBOUNDED"):
        parser._advance()
        bounded = exp.Boolean(this=False)
    if _word(parser, "SOURCES"):
        if bounded is not None and bounded.this:
            parser.raise_error("SOURCES needs an UNBOUNDED policy (records appear and disappear "
                               "at the sources)")
        parser._advance()
        _expect(parser, TokenType.L_PAREN, "Expected '(' and a list of source values after SOURCES")
        items = []
        while True:
            if _at(parser, TokenType.L_PAREN):
                items.append(exp.Tuple(expressions=_value_list(parser, "source value")))
            else:
                items.append(_value(parser, "a source value"))
            if not parser._match(TokenType.COMMA):
                break
        _expect(parser, TokenType.R_PAREN, "Expected ')' to close the SOURCES list")
        sources = exp.Tuple(expressions=items)
    known = _known_counts(parser)
    return CreatePolicy(this=name, table=table, expressions=cols, graph=graph, domains=domains,
                        bounded=bounded, sources=sources, known=known)


def _known_counts(parser):
    """``KNOWN COUNTS TOTAL | BY (column) | ((v, …), (v, …), …)`` (He et al. §8): counts
    published exactly, which the policy's neighbours must keep. ``TOTAL`` is an ``exp.Var``, the
    marginal over a column an ``exp.Column``, groups of values an ``exp.Tuple`` of tuples."""
    if not _word(parser, "KNOWN"):
        return None
    parser._advance()
    if not _word(parser, "COUNTS"):
        parser.raise_error("Expected COUNTS after KNOWN (KNOWN COUNTS TOTAL, KNOWN COUNTS BY "
                           "(column) or KNOWN COUNTS ((v, …), …))")
    parser._advance()
    if _word(parser, "TOTAL"):
        parser._advance()
        return exp.Var(this="TOTAL")
    if _word(parser, "BY"):
        parser._advance()
        _expect(parser, TokenType.L_PAREN, "Expected '(' and a column after KNOWN COUNTS BY")
        col = parser._parse_plain_identifier("a column name after KNOWN COUNTS BY (")
        _expect(parser, TokenType.R_PAREN, "Expected ')' after the column of KNOWN COUNTS BY")
        return exp.Column(this=col)
    if _at(parser, TokenType.L_PAREN):
        parser._advance()
        groups = [exp.Tuple(expressions=_value_list(parser, "known-count value"))]
        while parser._match(TokenType.COMMA):
            groups.append(exp.Tuple(expressions=_value_list(parser, "known-count value")))
        _expect(parser, TokenType.R_PAREN, "Expected ')' to close the groups of KNOWN COUNTS")
        return exp.Tuple(expressions=groups)
    parser.raise_error("Expected TOTAL, BY (column) or ((v, …), …) after KNOWN COUNTS")


# ---------------------------------------------------------------------- range counts
def _parse_epsilon_suffix(parser, query):
    """``WITH EPSILON ε [OPTIONS (…)]`` or ``WITH ACCURACY α [CONFIDENCE c]`` after our own
    query forms, as the dialect does."""
    if parser._match_text_seq("WITH", "EPSILON"):
        eps = parser._parse_privacy_number("epsilon")
        options = parser._parse_mechanism_options() if parser._match_text_seq("OPTIONS") else None
        return PrivateQuery(this=query, epsilon=eps, options=options)
    if parser._match_text_seq("WITH", "ACCURACY"):
        alpha = parser._parse_privacy_number("the accuracy α")
        conf = (parser._parse_privacy_number("the confidence")
                if parser._match_text_seq("CONFIDENCE") else None)
        return PrivateQuery(this=query, accuracy=alpha, confidence=conf)
    return query


def _parse_count_ranges(parser, cumulative: bool):
    if cumulative:
        column = parser._parse_plain_identifier("a column after COUNT CUMULATIVE")
        ranges = None
    else:
        _expect(parser, TokenType.L_PAREN,
                "Expected '(' and a list of range conditions after COUNT RANGES")
        ranges = [parser._parse_disjunction()]
        while parser._match(TokenType.COMMA):
            ranges.append(parser._parse_disjunction())
        if any(r is None for r in ranges):
            parser.raise_error("Expected a range condition such as c BETWEEN a AND b")
        _expect(parser, TokenType.R_PAREN, "Expected ')' to close the range conditions")
        column = None
    if not parser._match(TokenType.FROM):
        parser.raise_error("Expected FROM table")
    table = parser._parse_privacy_table()
    where = parser._parse_where()
    sel = exp.Select(expressions=[exp.Count(this=exp.Star())])
    sel.set("from_", exp.From(this=table))
    if where is not None:
        sel.set("where", where)
    sel.meta["provsql_dp_ranges"] = {"ranges": ranges, "cumulative": column}
    return _parse_epsilon_suffix(parser, sel)


# ---------------------------------------------------------------------- EXPLAIN PRIVACY
def _parse_explain_privacy(parser):
    if parser._curr is None:
        parser.raise_error("Expected a query after EXPLAIN PRIVACY")
    inner = parser._parse_statement()
    if not isinstance(inner, (exp.Query, PrivateQuery)):
        parser.raise_error("EXPLAIN PRIVACY takes a query (SELECT … or COUNT RANGES …)")
    accuracy = confidence = None
    if isinstance(inner, PrivateQuery) and inner.args.get("accuracy") is not None:
        # the query parsed its own WITH ACCURACY clause (an accuracy-first query)
        _no_estimate(parser)
        return ExplainPrivacy(this=inner.this, accuracy=inner.args["accuracy"],
                              confidence=inner.args.get("confidence"))
    if parser._match_text_seq("WITH", "ACCURACY"):
        if isinstance(inner, PrivateQuery):
            parser.raise_error("give either WITH EPSILON or WITH ACCURACY, not both")
        accuracy = parser._parse_privacy_number("the accuracy α")
        if parser._match_text_seq("CONFIDENCE"):
            confidence = parser._parse_privacy_number("the confidence")
        _no_estimate(parser)
    elif not isinstance(inner, PrivateQuery):
        parser.raise_error("Expected WITH EPSILON ε or WITH ACCURACY α [CONFIDENCE c] after "
                           "the query")
    elif parser._match_text_seq("ESTIMATE"):
        if not parser._match_text_seq("ERROR", "WITH", "EPSILON"):
            parser.raise_error("Expected ESTIMATE ERROR WITH EPSILON e (the ε the estimate "
                               "spends)")
        estimate = parser._parse_privacy_number("the estimate's epsilon")
        if parser._match_text_seq("CONFIDENCE"):
            confidence = parser._parse_privacy_number("the confidence")
        return ExplainPrivacy(this=inner, confidence=confidence, estimate=estimate)
    return ExplainPrivacy(this=inner, accuracy=accuracy, confidence=confidence)


def _no_estimate(parser):
    if _word(parser, "ESTIMATE"):
        parser.raise_error("ESTIMATE ERROR estimates a release at a given ε: write EXPLAIN "
                           "PRIVACY <query> WITH EPSILON ε ESTIMATE ERROR WITH EPSILON e (not "
                           "with WITH ACCURACY)")


# ---------------------------------------------------------------------- KMEANS
def _parse_kmeans(parser):
    """After ``KMEANS CLUSTERS``: ``k OF (col, …) FROM table [ITERATIONS n] [WITH EPSILON ε]``."""
    tok = parser._curr
    if tok is None or tok.token_type != TokenType.NUMBER or not tok.text.isdigit():
        parser.raise_error("Expected the number of clusters after KMEANS CLUSTERS")
    parser._advance()
    k = exp.Literal.number(tok.text)
    if not _word(parser, "OF"):
        parser.raise_error("Expected OF (col, …) after the number of clusters")
    parser._advance()
    _expect(parser, TokenType.L_PAREN, "Expected ( and the columns to cluster after OF")
    cols = [parser._parse_plain_identifier("a column name")]
    while parser._match(TokenType.COMMA):
        cols.append(parser._parse_plain_identifier("a column name"))
    _expect(parser, TokenType.R_PAREN, "Expected ) after the columns")
    if not parser._match(TokenType.FROM):
        parser.raise_error("Expected FROM table after the columns")
    table = _table(parser)
    iterations = None
    if _word(parser, "ITERATIONS"):
        parser._advance()
        tok = parser._curr
        if tok is None or tok.token_type != TokenType.NUMBER or not tok.text.isdigit():
            parser.raise_error("Expected a whole number of iterations after ITERATIONS")
        parser._advance()
        iterations = exp.Literal.number(tok.text)
    eps = None
    if parser._match_text_seq("WITH", "EPSILON"):
        eps = parser._parse_privacy_number("epsilon")
        if _word(parser, "OPTIONS"):
            parser.raise_error("KMEANS takes no OPTIONS")
    elif parser._match_text_seq("WITH", "ACCURACY"):
        parser.raise_error("KMEANS has no accuracy-first form (its error depends on the data): "
                           "give WITH EPSILON ε")
    return KMeans(this=k, expressions=[exp.to_identifier(c) if isinstance(c, str) else c
                                       for c in cols],
                  table=table, iterations=iterations, epsilon=eps)


# ---------------------------------------------------------------------- entry point
def parse_policy_statement(parser):
    """Parse a policy statement at the parser's position, or return None (consuming nothing)."""
    if parser._match_text_seq("CREATE", "POLICY"):
        return parser.expression(_parse_create_policy(parser))
    if parser._match_text_seq("DROP", "POLICY"):
        exists = bool(parser._match_text_seq("IF", "EXISTS"))
        name = parser._parse_plain_identifier("a policy name after DROP POLICY")
        return parser.expression(DropPolicy(this=name, exists=exists or None))
    if parser._match_text_seq("SHOW", "POLICIES"):
        table = _table(parser) if parser._match(TokenType.ON) else None
        return parser.expression(ShowPolicies(table=table))
    if parser._match_text_seq("COUNT", "RANGES"):
        return _parse_count_ranges(parser, cumulative=False)
    if parser._match_text_seq("COUNT", "CUMULATIVE"):
        return _parse_count_ranges(parser, cumulative=True)
    if parser._match_text_seq("EXPLAIN", "PRIVACY"):
        return parser.expression(_parse_explain_privacy(parser))
    if parser._match_text_seq("KMEANS", "CLUSTERS"):
        return parser.expression(_parse_kmeans(parser))
    if _explain_command(parser):
        return _parse_explain_command(parser)
    return parse_stream_statement(parser)


def _explain_command(parser) -> bool:
    """DuckDB's tokenizer reads ``EXPLAIN …`` as a command: the keyword, then the rest of the
    statement as one string token. ``EXPLAIN PRIVACY …`` is ours."""
    cur, nxt = parser._curr, parser._next
    if cur is None or nxt is None or cur.token_type != TokenType.COMMAND:
        return False
    if cur.text.upper() != "EXPLAIN" or nxt.token_type != TokenType.STRING:
        return False
    words = nxt.text.split(None, 1)
    return bool(words) and words[0].upper() == "PRIVACY"


def _parse_explain_command(parser):
    text = parser._next.text.split(None, 1)
    rest = text[1] if len(text) > 1 else ""
    parser._advance(2)
    dialect = parser.dialect
    sub = dialect.parser()
    stmts = sub._parse(_parse_explain_privacy, dialect.tokenize(rest), rest)
    return parser.expression(stmts[0])

