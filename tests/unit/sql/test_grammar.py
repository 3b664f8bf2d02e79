"""The formal grammar (``grammar/provsql_dp.ebnf``) against its examples and the dialect.

* the EBNF file is read with a small ISO 14977 reader (below): every production is well formed,
  defined once, every name it references is defined, and every production is reachable;
* every production is named in the ``covers:`` line of some example in ``grammar/examples.sql``
  (being reached transitively is not enough);
* every example parses with :func:`provsql_dp.sql.dialect.parse_one` to its annotated class with the
  intended fields, and the whole file runs top to bottom on a fresh connection;
* every statement in ``grammar/invalid.sql`` is rejected with a helpful message, as a
  ``ProgrammingError`` through the connection, leaving the catalog and the ledger unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import pytest
from sqlglot import exp
from sqlglot.errors import ParseError

import provsql_dp
from provsql_dp.errors import ProgrammingError, UnsupportedQueryError
from provsql_dp.sql import dialect as d

GRAMMAR_DIR = Path(__file__).resolve().parents[3] / "grammar"
EBNF = GRAMMAR_DIR / "provsql_dp.ebnf"
EXAMPLES = GRAMMAR_DIR / "examples.sql"
INVALID = GRAMMAR_DIR / "invalid.sql"
README = GRAMMAR_DIR / "README.md"
START = "script"


# ====================================================================== a small ISO 14977 reader
_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<comment>\(\*)
  | (?P<terminal>"[^"]*"|'[^']*')
  | (?P<special>\?[^?]*\?)
  | (?P<name>[A-Za-z][A-Za-z0-9_]*)
  | (?P<symbol>[=,|;\[\]{}()\-])
    """,
    re.VERBOSE | re.DOTALL,
)


class EbnfError(ValueError):
    pass


@dataclass
class Production:
    name: str
    line: int
    references: set[str] = field(default_factory=set)
    terminals: set[str] = field(default_factory=set)


def _tokens(text: str) -> list[tuple[str, str, int]]:
    out, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            line = text.count("\n", 0, pos) + 1
            raise EbnfError(f"line {line}: cannot read {text[pos:pos + 20]!r}")
        kind = m.lastgroup
        if kind == "comment":  # comments nest: (* a (* b *) c *)
            pos = _comment_end(text, pos)
            continue
        if kind != "ws":
            out.append((kind, m.group(), text.count("\n", 0, pos) + 1))
        pos = m.end()
    return out


def _comment_end(text: str, pos: int) -> int:
    depth, i = 0, pos
    while i < len(text):
        if text.startswith("(*", i):
            depth, i = depth + 1, i + 2
        elif text.startswith("*)", i):
            depth, i = depth - 1, i + 2
            if depth == 0:
                return i
        else:
            i += 1
    raise EbnfError(f"line {text.count(chr(10), 0, pos) + 1}: unterminated comment")


class _Reader:
    """Recursive descent over ISO 14977: definitions-list = single-definition {'|' ...};
    single-definition = term {',' term}; term = factor ['-' factor]; factor = name | terminal |
    special | '[' list ']' | '{' list '}' | '(' list ')'."""

    def __init__(self, tokens):
        self.toks = tokens
        self.i = 0

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else ("eof", "", -1)

    def take(self, value=None, kind=None):
        tok = self.peek()
        if (value is not None and tok[1] != value) or (kind is not None and tok[0] != kind):
            want = value or kind
            raise EbnfError(f"line {tok[2]}: expected {want!r}, found {tok[1]!r}")
        self.i += 1
        return tok

    def productions(self) -> list[Production]:
        out = []
        while self.peek()[0] != "eof":
            _, name, line = self.take(kind="name")
            self.take("=")
            prod = Production(name, line)
            self.definitions(prod)
            self.take(";")
            out.append(prod)
        return out

    def definitions(self, prod):
        self.single(prod)
        while self.peek()[1] == "|":
            self.take("|")
            self.single(prod)

    def single(self, prod):
        self.term(prod)
        while self.peek()[1] == ",":
            self.take(",")
            self.term(prod)

    def term(self, prod):
        self.factor(prod)
        if self.peek()[1] == "-":
            self.take("-")
            self.factor(prod)

    def factor(self, prod):
        kind, value, line = self.peek()
        if kind == "name":
            prod.references.add(value)
            self.i += 1
        elif kind == "terminal":
            prod.terminals.add(value[1:-1])
            self.i += 1
        elif kind == "special":
            self.i += 1
        elif value in ("[", "{", "("):
            close = {"[": "]", "{": "}", "(": ")"}[value]
            self.i += 1
            self.definitions(prod)
            self.take(close)
        else:
            raise EbnfError(f"line {line}: expected a name, a terminal or a bracket, found {value!r}")


def read_ebnf(text: str) -> dict[str, Production]:
    """The productions of an ISO 14977 EBNF text, by name (a name defined twice is an error)."""
    grammar: dict[str, Production] = {}
    for prod in _Reader(_tokens(text)).productions():
        if prod.name in grammar:
            raise EbnfError(f"line {prod.line}: {prod.name} is defined twice")
        grammar[prod.name] = prod
    return grammar


# ====================================================================== the annotated SQL files
@dataclass
class Example:
    line: int
    sql: str
    covers: list[str]
    classes: list[str]
    fields: dict[str, str]

    @property
    def id(self) -> str:
        return f"L{self.line}:{' '.join(self.sql.split()[:4])}"


@dataclass
class Invalid:
    line: int
    sql: str
    message: str
    at: str
    bug: str | None

    @property
    def id(self) -> str:
        return f"L{self.line}:{' '.join(self.sql.split())[:40]}"


def _blocks(path: Path, marker: str):
    """(line, annotation, sql) for each annotation line ``-- marker: ...`` and the SQL after it."""
    blocks, current = [], None
    for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        stripped = line.strip()
        m = re.match(rf"--\s*{marker}:\s*(.*)$", stripped)
        if m:
            current = [no, m.group(1), []]
            blocks.append(current)
        elif stripped.startswith("--") or not stripped:
            continue
        elif current is None:
            raise AssertionError(f"{path.name}:{no}: SQL before any '-- {marker}:' annotation")
        else:
            current[2].append(line)
    return [(no, ann, "\n".join(sql).strip()) for no, ann, sql in blocks]


def read_examples(path: Path = EXAMPLES) -> list[Example]:
    out = []
    for no, ann, sql in _blocks(path, "covers"):
        parts = [p.strip() for p in ann.split("|")]
        if len(parts) < 2 or not parts[1].startswith("parses:"):
            raise AssertionError(f"{path.name}:{no}: expected 'covers: … | parses: …'")
        fields = {}
        for item in filter(None, (x.strip() for x in "|".join(parts[2:]).split(";"))):
            key, _, value = item.partition("=")
            fields[key.strip()] = value.strip()
        assert sql, f"{path.name}:{no}: annotation without a statement"
        out.append(Example(
            line=no,
            sql=sql,
            covers=[c.strip() for c in parts[0].split(",") if c.strip()],
            classes=[c.strip() for c in parts[1][len("parses:"):].split(",") if c.strip()],
            fields=fields,
        ))
    return out


def read_invalid(path: Path = INVALID) -> list[Invalid]:
    out = []
    for no, ann, sql in _blocks(path, "error"):
        parts = {}
        message, *rest = [p.strip() for p in ann.split("|")]
        for p in rest:
            key, _, value = p.partition(":")
            parts[key.strip()] = value.strip()
        assert parts.get("at") in ("parse", "run"), f"{path.name}:{no}: 'at: parse' or 'at: run'"
        out.append(Invalid(no, sql, message, parts["at"], parts.get("bug")))
    return out


GRAMMAR = read_ebnf(EBNF.read_text(encoding="utf-8"))
EXAMPLE_LIST = read_examples()
INVALID_LIST = read_invalid()


# ====================================================================== the grammar itself
def test_reader_understands_iso_ebnf():
    g = read_ebnf("""(* c (* nested *) *) a = "X", [ b | c ], { "," , b } ; b = ? prose ? ; c = ( b - "Y" ) ;""")
    assert set(g) == {"a", "b", "c"}
    assert g["a"].references == {"b", "c"} and g["a"].terminals == {"X", ","}
    assert g["c"].references == {"b"}
    with pytest.raises(EbnfError, match="defined twice"):
        read_ebnf('a = "x" ; a = "y" ;')
    with pytest.raises(EbnfError, match="expected"):
        read_ebnf('a = "x" , ;')
    with pytest.raises(EbnfError, match="expected"):
        read_ebnf('a = [ "x" ;')
    with pytest.raises(EbnfError, match="unterminated comment"):
        read_ebnf('(* a (* b *) a = "x" ;')


def test_every_referenced_name_is_defined():
    undefined = {
        (p.name, ref) for p in GRAMMAR.values() for ref in p.references if ref not in GRAMMAR
    }
    assert not undefined, f"referenced but not defined: {sorted(undefined)}"


def test_every_production_is_reachable_from_the_start_symbol():
    seen, todo = set(), [START]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(GRAMMAR[name].references)
    assert set(GRAMMAR) - seen == set(), "unreachable productions"


def test_the_statements_we_add_are_in_the_grammar():
    for name in ("protect_stmt", "by_clause", "domain_clause", "unprotect_stmt",
                 "show_protected_stmt", "set_budget_stmt", "show_budget_stmt", "user_clause",
                 "set_epsilon_stmt", "private_query", "epsilon_clause"):
        assert name in GRAMMAR


def test_every_production_is_named_in_some_example():
    covered = {c for ex in EXAMPLE_LIST for c in ex.covers}
    assert not covered - set(GRAMMAR), f"covers: names no production: {sorted(covered - set(GRAMMAR))}"
    assert not set(GRAMMAR) - covered, f"no example covers: {sorted(set(GRAMMAR) - covered)}"


def test_every_keyword_appears_in_some_example():
    words = {t for p in GRAMMAR.values() for t in p.terminals if re.fullmatch(r"[A-Z]{2,}", t)}
    text = " ".join(ex.sql.upper() for ex in EXAMPLE_LIST)
    missing = {w for w in words if not re.search(rf"\b{w}\b", text)}
    assert not missing, f"keywords without an example: {sorted(missing)}"


def test_every_statement_class_has_an_example():
    classes = {c for ex in EXAMPLE_LIST for c in ex.classes}
    for cls in d.PRIVACY_STATEMENTS + (d.PrivateQuery,):
        assert cls.__name__ in classes, f"no example parses to {cls.__name__}"


def test_the_reference_mentions_every_production():
    text = README.read_text(encoding="utf-8")
    missing = [name for name in GRAMMAR if not re.search(rf"\b{name}\b", text)]
    assert not missing, f"grammar/README.md does not document {missing}"


# ====================================================================== examples
def _class(name: str) -> type:
    cls = (getattr(d, name, None) or getattr(pg, name, None) or getattr(sg, name, None)
           or getattr(exp, name, None))
    assert isinstance(cls, type) and issubclass(cls, exp.Expression), f"unknown class {name}"
    return cls


from provsql_dp.sql import policy_grammar as pg  # noqa: E402
from provsql_dp.sql import stream_grammar as sg  # noqa: E402

# per-class argument of a field, where it differs from _FIELD_ARG (policy statements)
_CLASS_ARGS = {
    pg.CreatePolicy: {"policy": "this", "table": "table", "graph": "graph", "presence": "bounded"},
    pg.DropPolicy: {"policy": "this"},
    pg.ShowPolicies: {"table": "table"},
    pg.ExplainPrivacy: {"query": "this", "accuracy": "accuracy", "estimate": "estimate"},
    d.ShowBounds: {"table": "table"},
    d.ShowGroupKeys: {"table": "table"},
    sg.CreateStream: {"stream": "this"},
    sg.Publish: {"stream": "this", "query": "query"},
    sg.ShowStreams: {"stream": "this"},
}

_FIELD_ARG = {"table": "this", "columns": "expressions", "domain": "domain",
              "epsilon": "epsilon", "user": "user", "query": "this", "values": "expressions"}
_CLASS_FIELDS = {
    d.Protect: ("table", "columns", "domain"),
    d.Unprotect: ("table",),
    d.ShowProtected: (),
    d.SetPrivacyBudget: ("epsilon", "delta", "rho", "user"),
    d.ShowPrivacyBudget: ("user",),
    d.SetPrivacyEpsilon: ("epsilon",),
    d.PrivateQuery: ("query", "epsilon", "delta", "rho", "options"),
    pg.CreatePolicy: ("policy", "table", "columns", "graph", "presence"),
    pg.DropPolicy: ("policy",),
    pg.ShowPolicies: ("table",),
    pg.ExplainPrivacy: ("query", "accuracy", "estimate"),
    d.SetBounds: ("table", "column", "lower", "upper"),
    d.DropBounds: ("table", "column"),
    d.ShowBounds: ("table",),
    d.SetGroupKeys: ("table", "column", "values", "source", "source_column"),
    d.DropGroupKeys: ("table", "column"),
    d.ShowGroupKeys: ("table",),
    sg.CreateStream: ("stream", "window", "epsilon"),
    sg.Publish: ("stream", "step", "sensitivity", "weight", "epsilon", "query"),
    sg.ShowStreams: ("stream",),
}


def _field(stmt: exp.Expression, key: str):
    """The value of an intended field, in the form the annotations use."""
    arg = _CLASS_ARGS.get(type(stmt), {}).get(key) or _FIELD_ARG.get(key, key)
    node = stmt.args.get(arg)
    if node is None or node == []:
        return None
    if key in ("table", "source"):
        assert isinstance(node, exp.Table)
        return ".".join(p.name for p in node.parts)
    if key == "columns":
        return [c.name for c in node]
    if key == "presence":
        return "BOUNDED" if node.this else "UNBOUNDED"
    if key == "graph":
        return node.name
    if key in ("epsilon", "accuracy", "sensitivity", "estimate", "weight", "delta", "rho"):
        value = d.exact_number(node, "epsilon")
        assert type(value) is Fraction
        return value
    if key in ("lower", "upper"):
        neg = isinstance(node, exp.Neg)
        value = d.exact_number(node.this if neg else node, key)
        return -value if neg else value
    if key == "values":
        return [v.name if isinstance(v, exp.Literal) else v.sql() for v in node]
    if key == "query":
        return type(node).__name__
    if key == "options":
        return {k: (str(v) if not isinstance(v, str) else v)
                for k, v in d.mechanism_options(stmt).items()}
    if isinstance(node, list):
        return [n.name for n in node]
    return node.name


def _expected(key: str, text: str):
    if key == "options":
        return dict(pair.split("=", 1) for pair in text.split(","))
    if key in ("columns", "values"):
        return [c.strip() for c in text.split(",")]
    if key in ("epsilon", "accuracy", "lower", "upper", "sensitivity", "estimate", "weight",
               "delta", "rho"):
        return Fraction(text)
    return text


@pytest.mark.parametrize("example", EXAMPLE_LIST, ids=lambda e: e.id)
def test_example_parses_to_the_intended_statement(example):
    stmts = d.parse(example.sql)
    assert [type(s).__name__ for s in stmts] == [_class(c).__name__ for c in example.classes]
    if len(stmts) == 1:
        assert type(d.parse_one(example.sql)) is _class(example.classes[0])
    else:
        assert not example.fields, "fields are checked on single-statement examples only"
    if not example.fields and len(stmts) != 1:
        return
    stmt = stmts[0]
    known = _CLASS_FIELDS.get(type(stmt), ())
    for key, text in example.fields.items():
        assert _field(stmt, key) == _expected(key, text), f"field {key}"
    for key in known:
        if key not in example.fields:
            assert _field(stmt, key) is None, f"{key} should be absent"


def test_examples_run_top_to_bottom_on_a_fresh_connection():
    """The examples are consistent with the engine: run in order, they all succeed."""
    con = provsql_dp.connect(":memory:")
    for ex in EXAMPLE_LIST:
        tree = d.parse_one(ex.sql) if ex.classes == ["ExplainPrivacy"] else None
        if tree is not None and tree.args.get("estimate") is not None:
            # ESTIMATE ERROR is a release (it spends): its query is planned, like the private
            # queries (tests/system/test_error_estimate_sql.py runs such statements)
            assert con.plan(tree.this.this.sql(dialect="duckdb")) is not None
        elif ex.classes == ["PrivateQuery"]:
            plan = con.plan(ex.sql)  # planned, not released: nothing is spent
            assert plan is not None
        elif ex.classes == ["AttachSparkTable"]:  # the Spark engine's (test_pgwire_spark.py)
            with pytest.raises(provsql_dp.errors.NotSupportedError, match="needs the Spark engine"):
                con.execute(ex.sql)
        else:
            con.execute(ex.sql)
    protected = {(p.table, p.domain, p.by_columns) for p in con.protected()}
    assert protected == {
        ("edge", "person", ("src", "dst")),
        ("friend", "person", ("person", "friend")),
        ("link", "link", ()),
        ("employee", "person", ("id",)),
        ("trips", "trips", ("rider", "driver")),
        ("visit", "visits", ()),
        ("Order Lines", "Customers", ("Customer Id",)),
        ("people", "people", ()),
        ("checkins", "checkins", ()),
        ("customer", "customer", ()),
        ("orders", "customer", ("o_custkey",)),
        ("lineitem", "customer", ("l_orderkey",)),
    }
    budgets = {u: t for u, t, _ in con.ledger.users()}
    assert budgets["alice"] == Fraction(5, 2)
    assert budgets["bob"] == Fraction(1, 1000)
    assert budgets["carol"] == 30
    assert budgets[con.user] == Fraction(1, 100)  # raised before the allocated streams
    assert con.default_epsilon == Fraction(1, 4)
    from provsql_dp.policies.blowfish.catalog import PolicyCatalog

    assert {r.name for r in PolicyCatalog(con._duck).list()} == {
        "age_line", "income_t", "state_p", "member_full", "age_income", "age_state", "near",
        "near_x", "member_state", "id_groups", "income_member"}
    from provsql_dp.sql.column_declarations import ColumnDeclarations

    decl = ColumnDeclarations(con._catalog)
    assert [(b.table, b.column, b.lower, b.upper) for b in decl.list_bounds()] == [
        ("people", "income", 0, 200000)]
    assert [(k.column, k.values, k.source_table, k.source_column)
            for k in decl.list_group_keys()] == [("state", None, "states", "code")]


def test_epsilon_literals_are_exact():
    values = [d.exact_number(d.parse_one(f"SET PRIVACY BUDGET {s}").args["epsilon"], "ε")
              for s in ("0.001", "1e-3", "1E-3", "0.1", "3.E+1", "2.")]
    assert values == [Fraction(1, 1000)] * 3 + [Fraction(1, 10), Fraction(30), Fraction(2)]
    assert sum([values[0]] * 1000) == 1  # no float drift
    with pytest.raises(ParseError, match="must be a number"):
        d.exact_number(exp.Literal.string("1"), "epsilon")


def test_keywords_in_strings_and_quoted_names_are_not_ours():
    assert type(d.parse_one("SELECT 'PROTECT TABLE t' AS s")) is exp.Select
    assert type(d.parse_one("SELECT 1 AS \"WITH\"")) is exp.Select


def test_private_query_with_a_cte():
    stmt = d.parse_one("WITH e AS (SELECT * FROM edge) SELECT COUNT(*) FROM e WITH EPSILON 0.5")
    assert type(stmt) is d.PrivateQuery
    assert type(stmt.this) is exp.Select and stmt.this.args.get("with_") is not None
    assert _field(stmt, "epsilon") == Fraction(1, 2)


def test_parenthesised_private_query_is_planned():
    stmt = d.parse_one("(SELECT COUNT(*) FROM edge) WITH EPSILON 1")
    assert type(stmt) is d.PrivateQuery and type(stmt.this) is exp.Subquery
    con = provsql_dp.connect(":memory:")
    con.execute("CREATE TABLE edge (src INTEGER, dst INTEGER); PROTECT TABLE edge")
    assert type(con.plan("(SELECT COUNT(*) FROM edge) WITH EPSILON 1")).__name__ == "Aggregate"


# ====================================================================== invalid statements
_INVALID_SETUP = (
    "CREATE TABLE t (a INTEGER, b VARCHAR); CREATE TABLE p (a INTEGER); PROTECT TABLE p; "
    "CREATE VIEW v AS SELECT a FROM t; "
    "SET BOUNDS ON p (a) BETWEEN 0 AND 10; SET GROUP KEYS ON p (a) VALUES (1, 2)"
)


def _state(con):
    from provsql_dp.policies.blowfish.catalog import PolicyCatalog
    from provsql_dp.sql.column_declarations import ColumnDeclarations

    decl = ColumnDeclarations(con._catalog)
    return (con.protected(), con.ledger.users(), con.default_epsilon,
            PolicyCatalog(con._duck).list(), decl.list_bounds(), decl.list_group_keys())


def _check_message(err: BaseException, expected: str) -> None:
    msg = str(err)
    assert msg.strip(), "empty error message"
    if expected != "*":
        assert expected.lower() in msg.lower(), f"{expected!r} not in {msg!r}"
    assert "Traceback" not in msg


@pytest.mark.parametrize(
    "case",
    [pytest.param(c, id=c.id, marks=[pytest.mark.xfail(strict=True, reason=c.bug)] if c.bug else [])
     for c in INVALID_LIST],
)
def test_invalid_statement_is_rejected(case):
    if case.at == "parse":
        with pytest.raises(ParseError) as err:
            d.parse_one(case.sql)
        _check_message(err.value, case.message)
    else:
        stmt = d.parse_one(case.sql)
        assert isinstance(stmt, d.PRIVACY_STATEMENTS + (d.PrivateQuery,))
    con = provsql_dp.connect(":memory:")
    con.execute(_INVALID_SETUP)
    before = _state(con)
    with pytest.raises(ProgrammingError) as err:
        con.execute(case.sql)
    _check_message(err.value, case.message)
    assert _state(con) == before, "a rejected statement changed the catalog or the ledger"
