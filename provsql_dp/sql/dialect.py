"""Our SQL extension as a sqlglot dialect: DuckDB's grammar plus the privacy statements.

The statements (formal grammar: ``grammar/provsql_dp.ebnf``) parse to the expression classes below;
every other statement parses as DuckDB. Parsing is token-based, through sqlglot's parser.

>>> stmt = parse_one("PROTECT TABLE edge BY (src, dst) AS person")
>>> type(stmt).__name__, stmt.this.name, [c.name for c in stmt.expressions], stmt.text("domain")
('Protect', 'edge', ['src', 'dst'], 'person')
>>> q = parse_one("SELECT COUNT(*) FROM edge WITH EPSILON 0.5")
>>> type(q).__name__, q.text("epsilon")
('PrivateQuery', '0.5')
"""

from __future__ import annotations

import logging
import threading

from sqlglot import exp
from sqlglot.dialects.duckdb import DuckDB
from sqlglot.errors import ParseError
from sqlglot.tokens import TokenType
from sqlglot.transforms import preprocess

from . import policy_grammar as _policy_grammar
from .curator_grammar import (  # noqa: F401 - the classes, as the other statements'
    CURATOR_STATEMENTS,
    AttachSparkTable,
    ShowAuditLog,
    parse_curator_statement,
)
from .expressions import (
    COLUMN_DECLARATIONS,
    DropBounds,
    DropGroupKeys,
    PrivateQuery,
    Protect,
    SetBounds,
    SetGroupKeys,
    SetPrivacyBudget,
    SetPrivacyEpsilon,
    ShowBounds,
    ShowGroupKeys,
    ShowPrivacyBudget,
    ShowProtected,
    Unprotect,
    exact_number,
    mechanism_options,
)
from .policy_grammar import _number, _table, _value_list
from .show_names import show_of_a_table

__all__ = [
    "ProvDP",
    "Protect",
    "Unprotect",
    "ShowProtected",
    "SetPrivacyBudget",
    "ShowPrivacyBudget",
    "SetPrivacyEpsilon",
    "PrivateQuery",
    "SetBounds",
    "DropBounds",
    "ShowBounds",
    "SetGroupKeys",
    "DropGroupKeys",
    "ShowGroupKeys",
    "mechanism_options",
    "parse",
    "parse_one",
    "PRIVACY_STATEMENTS",
    "COLUMN_DECLARATIONS",
    "exact_number",
]


PRIVACY_STATEMENTS = (
    Protect,
    Unprotect,
    ShowProtected,
    SetPrivacyBudget,
    ShowPrivacyBudget,
    SetPrivacyEpsilon,
    *COLUMN_DECLARATIONS,
    *_policy_grammar.POLICY_STATEMENTS,
    *CURATOR_STATEMENTS,
)


def _unqualify_pivot_own(pivot: exp.Expression) -> exp.Expression:
    """A PIVOT's own columns (ON, USING, GROUP BY, IN) unqualified, as DuckDB requires them —
    but not those of the query it pivots: sqlglot's DuckDB generator unqualifies every column
    under the PIVOT, so ``PIVOT (SELECT a.k FROM a JOIN b ON a.i = b.i) ON k …`` was emitted
    ``… ON i = i``, an ambiguous reference (red team h147)."""
    for key, value in pivot.args.items():
        if key == "this":  # the relation pivoted: its columns keep their tables
            continue
        for arg in value if isinstance(value, list) else [value]:
            if not isinstance(arg, exp.Expression):
                continue
            for col in arg.find_all(exp.Column, bfs=False):
                if col.find_ancestor(exp.Query, exp.Pivot) is pivot or not isinstance(
                        col.find_ancestor(exp.Query, exp.Pivot), exp.Query):
                    for part in col.parts[:-1]:
                        part.pop()
    return pivot


class ProvDP(DuckDB):
    """DuckDB's dialect with the provsql_dp privacy statements (and its generator, but for the
    columns of a PIVOT's source: :func:`_unqualify_pivot_own`)."""

    class Generator(DuckDB.Generator):
        TRANSFORMS = {**DuckDB.Generator.TRANSFORMS,
                      exp.Pivot: preprocess([_unqualify_pivot_own])}

    class Parser(DuckDB.Parser):
        def _parse_statement(self):
            if self._curr is None:
                return None
            # Our statements and the WITH EPSILON clause exist only at the top level; nested
            # statements (a CTE's body, a subquery) are plain DuckDB.
            depth = getattr(self, "_pdp_depth", 0)
            if depth == 0 and self._curr.token_type != TokenType.STRING:
                stmt = self._parse_privacy_statement()
                if stmt is not None:
                    return stmt
            self._pdp_depth = depth + 1
            try:
                stmt = super()._parse_statement()
            finally:
                self._pdp_depth = depth
            if depth == 0 and isinstance(stmt, exp.Query) and self._match_text_seq("WITH", "EPSILON"):
                eps = self._parse_privacy_number("epsilon")
                delta = (self._parse_privacy_number("delta") if self._match_text_seq("DELTA")
                         else None)
                options = self._parse_mechanism_options() if self._match_text_seq("OPTIONS") else None
                return self.expression(PrivateQuery(this=stmt, epsilon=eps, delta=delta,
                                                    options=options))
            if depth == 0 and isinstance(stmt, exp.Query) and self._match_text_seq("WITH", "RHO"):
                rho = self._parse_privacy_number("rho")
                options = self._parse_mechanism_options() if self._match_text_seq("OPTIONS") else None
                return self.expression(PrivateQuery(this=stmt, rho=rho, options=options))
            if depth == 0 and isinstance(stmt, exp.Query) and self._match_text_seq("WITH", "ACCURACY"):
                alpha = self._parse_privacy_number("the accuracy α")
                conf = (self._parse_privacy_number("the confidence")
                        if self._match_text_seq("CONFIDENCE") else None)
                return self.expression(PrivateQuery(this=stmt, accuracy=alpha, confidence=conf))
            return stmt

        def _parse_mechanism_options(self):
            """``OPTIONS (name = value [, …])``: mechanism parameters of one private query."""
            if not self._match(TokenType.L_PAREN):
                self.raise_error("Expected '(' after OPTIONS")
            pairs = []
            while True:
                name = self._parse_plain_identifier("an option name (theta, beta, mu, split, privacy)")
                if not self._match(TokenType.EQ):
                    self.raise_error(f"Expected '=' after option {name.name}")
                if self._curr is not None and self._curr.token_type == TokenType.STRING:
                    value = self._parse_string()
                elif self._curr is not None and self._curr.token_type in (TokenType.TRUE,
                                                                          TokenType.FALSE):
                    value = exp.Boolean(this=self._curr.token_type == TokenType.TRUE)
                    self._advance()  # OPTIONS (raw = true)
                else:
                    # signed: OPTIONS (lower = -5); each option checks its own range when applied
                    value = self._parse_privacy_number(f"option {name.name}", signed=True)
                pairs.append(exp.EQ(this=name, expression=value))
                if not self._match(TokenType.COMMA):
                    break
            if not self._match(TokenType.R_PAREN):
                self.raise_error("Expected ')' to close OPTIONS")
            return exp.Tuple(expressions=pairs)

        def _parse_privacy_statement(self):
            word = self._curr.text.upper()
            if word == "PROTECT":
                self._advance()
                if not self._match_text_seq("TABLE"):
                    self.raise_error("Expected TABLE after PROTECT (PROTECT TABLE name …)")
                return self._parse_protect()
            if word == "UNPROTECT":
                self._advance()
                if not self._match_text_seq("TABLE"):
                    self.raise_error("Expected TABLE after UNPROTECT (UNPROTECT TABLE name)")
                return self.expression(Unprotect(this=self._parse_privacy_table()))
            if show_of_a_table(self._tokens[self._index:self._index + 3]):
                return None  # SHOW audit: DuckDB's SHOW of the user's table (sql.show_names)
            if self._match_text_seq("SHOW", "PROTECTED"):
                self._match_text_seq("TABLES")
                return self.expression(ShowProtected())
            if self._match_text_seq("SET", "PRIVACY"):
                if self._match_text_seq("BUDGET"):
                    # SET PRIVACY BUDGET ε | EPSILON ε [DELTA δ] | RHO ρ (privacy.accounting)
                    if self._match_text_seq("RHO"):
                        rho = self._parse_privacy_number("the budget's ρ")
                        return self.expression(
                            SetPrivacyBudget(rho=rho, user=self._parse_for_user()))
                    self._match_text_seq("EPSILON")
                    eps = self._parse_privacy_number("the privacy budget")
                    delta = (self._parse_privacy_number("the budget's δ")
                             if self._match_text_seq("DELTA") else None)
                    return self.expression(
                        SetPrivacyBudget(epsilon=eps, delta=delta, user=self._parse_for_user())
                    )
                if self._match_text_seq("EPSILON"):
                    self._match(TokenType.EQ)
                    eps = self._parse_privacy_number("epsilon")
                    return self.expression(SetPrivacyEpsilon(epsilon=eps))
                self.raise_error("Expected BUDGET or EPSILON after SET PRIVACY")
            if self._match_text_seq("SHOW", "PRIVACY"):
                if not self._match_text_seq("BUDGET"):
                    self.raise_error("Expected BUDGET after SHOW PRIVACY")
                return self.expression(ShowPrivacyBudget(user=self._parse_for_user()))
            declaration = self._parse_column_declaration()
            if declaration is not None:
                return self.expression(declaration)
            return parse_curator_statement(self) or _policy_grammar.parse_policy_statement(self)

        def _parse_column_declaration(self):
            """``SET``/``DROP``/``SHOW BOUNDS`` and ``SET``/``DROP``/``SHOW GROUP KEYS``, or None.

            ``SET BOUNDS = …`` / ``SET BOUNDS TO …`` stay DuckDB settings."""
            words = [t.text.upper() if t.token_type != TokenType.STRING else ""
                     for t in self._tokens[self._index:self._index + 3]]
            verb, what = (words + ["", ""])[:2]
            if verb not in ("SET", "DROP", "SHOW") or what not in ("BOUNDS", "GROUP"):
                return None
            if what == "BOUNDS" and verb == "SET" and len(words) > 2 and words[2] in ("=", "TO"):
                return None
            self._advance(2)
            if what == "GROUP" and not self._match_text_seq("KEYS"):
                self.raise_error(f"Expected KEYS after {verb} GROUP ({verb} GROUP KEYS ON t (c) …)")
            name = "BOUNDS" if what == "BOUNDS" else "GROUP KEYS"
            if verb == "SHOW":
                table = _table(self) if self._match(TokenType.ON) else None
                return (ShowBounds if what == "BOUNDS" else ShowGroupKeys)(table=table)
            if not self._match(TokenType.ON):
                self.raise_error(f"Expected ON table (column) after {verb} {name}")
            table, column = _table(self), self._parse_one_column(f"{verb} {name} ON table")
            if verb == "DROP":
                return (DropBounds if what == "BOUNDS" else DropGroupKeys)(this=table, column=column)
            if what == "BOUNDS":
                if not self._match(TokenType.BETWEEN):
                    self.raise_error("Expected BETWEEN lower AND upper after the column")
                lower = _number(self, "the lower bound", signed=True)
                if not self._match(TokenType.AND):
                    self.raise_error("Expected AND and the upper bound")
                upper = _number(self, "the upper bound", signed=True)
                return SetBounds(this=table, column=column, lower=lower, upper=upper)
            if self._match(TokenType.VALUES):
                return SetGroupKeys(this=table, column=column,
                                    expressions=_value_list(self, "key value"))
            if self._match(TokenType.FROM):
                source = _table(self)
                return SetGroupKeys(this=table, column=column, source=source,
                                    source_column=self._parse_one_column("the public table"))
            self.raise_error("Expected VALUES (v, …) or FROM public_table (column) after the column")

        def _parse_one_column(self, after: str):
            if not self._match(TokenType.L_PAREN):
                self.raise_error(f"Expected '(' and a column name after {after}")
            column = self._parse_plain_identifier("a column name in (…)")
            if not self._match(TokenType.R_PAREN):
                self.raise_error("Expected ')' after the column name (one column)")
            return column

        # -------------------------------------------------------------- helpers
        def _parse_privacy_table(self):
            if self._curr is None or self._curr.token_type == TokenType.SENTINEL:
                self.raise_error("Expected a table name")
            table = self._parse_table_parts()
            if not isinstance(table, exp.Table) or not table.name:
                self.raise_error("Expected a table name")
            return table

        def _parse_plain_identifier(self, what: str):
            """A column, domain or user name: an identifier, never a string or a number."""
            if self._curr is None or self._curr.token_type in (
                TokenType.STRING, TokenType.NUMBER, TokenType.SENTINEL
            ):
                self.raise_error(f"Expected {what}")
            ident = self._parse_id_var(any_token=False)
            if not isinstance(ident, exp.Identifier):
                self.raise_error(f"Expected {what}")
            return ident

        def _parse_protect(self):
            table = self._parse_privacy_table()
            columns = None
            if self._match_text_seq("BY"):
                if not self._match(TokenType.L_PAREN):
                    self.raise_error("Expected '(' and a list of columns after BY")
                columns = [self._parse_plain_identifier("a column name in BY (…)")]
                while self._match(TokenType.COMMA):
                    columns.append(self._parse_plain_identifier("a column name after ','"))
                if not self._match(TokenType.R_PAREN):
                    self.raise_error("Expected ')' to close the BY column list")
            references = None
            if self._match(TokenType.REFERENCES) or self._match_text_seq("REFERENCES"):
                parts = [self._parse_plain_identifier("the referenced table's name")]
                while self._match(TokenType.DOT):
                    parts.append(self._parse_plain_identifier("a name after '.'"))
                references = exp.Table(this=parts[-1], db=parts[-2] if len(parts) > 1 else None,
                                       catalog=parts[-3] if len(parts) > 2 else None)
                if self._match(TokenType.L_PAREN):
                    references.set("expressions", [self._parse_plain_identifier("a column")])
                    while self._match(TokenType.COMMA):
                        references.args["expressions"].append(
                            self._parse_plain_identifier("a column after ','"))
                    if not self._match(TokenType.R_PAREN):
                        self.raise_error("Expected ')' to close the REFERENCES column list")
            domain = None
            if self._match(TokenType.ALIAS):
                domain = self._parse_plain_identifier("a domain name after AS")
            return self.expression(Protect(this=table, expressions=columns, domain=domain,
                                           references=references))

        def _parse_for_user(self):
            if not self._match(TokenType.FOR):
                return None
            if not self._match_text_seq("USER"):
                self.raise_error("Expected USER after FOR")
            if self._curr is not None and self._curr.token_type == TokenType.STRING:
                return self._parse_string()
            return self._parse_plain_identifier("a user name after FOR USER")

        def _parse_privacy_number(self, what: str, signed: bool = False):
            negative = self._match(TokenType.DASH)
            number = self._parse_number()
            if not isinstance(number, exp.Literal) or number.is_string:
                self.raise_error(f"Expected a number for {what}")
            if negative:
                if not signed:
                    self.raise_error(f"{what} must be positive")
                return exp.Literal.number(f"-{number.this}")
            return number


_parsing = threading.local()


class _QuietWhileParsing(logging.Filter):
    """sqlglot logs "'…' contains unsupported syntax. Falling back to parsing as a 'Command'" for a
    statement it cannot read; we hand such a statement to DuckDB, whose error (with our did-you-mean
    hint) is the one to show, so the warning is dropped while :func:`parse` runs — and only then:
    other users of sqlglot in the process keep it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(_parsing, "active", False)


logging.getLogger("sqlglot").addFilter(_QuietWhileParsing())


def parse(sql: str) -> list[exp.Expression]:
    """Parse one or more ``;``-separated statements with the provsql_dp dialect."""
    _parsing.active = True
    try:
        return [s for s in ProvDP().parse(sql) if s is not None]
    finally:
        _parsing.active = False


#: statements parsed lately, by text (:func:`parse_one`): at most this many are kept
PARSED_KEPT = 256
_parsed: dict[str, exp.Expression] = {}
_parsed_lock = threading.Lock()


def parse_one(sql: str) -> exp.Expression:
    """Parse exactly one statement. A tree is a function of the text alone: the trees of the
    last :data:`PARSED_KEPT` texts are kept and each call returns a copy of the kept tree (a
    copy costs a fifth of a parse), never the kept tree itself, so a caller may change what it
    gets. Texts that do not parse are not kept (the error is raised again).

    >>> a = parse_one("SELECT 1 AS x")
    >>> b = parse_one("SELECT 1 AS x")
    >>> a == b and a is not b
    True
    """
    kept = _parsed.get(sql)
    if kept is None:
        stmts = parse(sql)
        if len(stmts) != 1:
            raise ParseError(f"expected exactly one statement, found {len(stmts)}")
        kept = stmts[0]
        with _parsed_lock:
            while len(_parsed) >= PARSED_KEPT:
                _parsed.pop(next(iter(_parsed)))  # the oldest first
            _parsed[sql] = kept
    return kept.copy()
