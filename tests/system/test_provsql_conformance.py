"""A peer's test suite: ProvSQL's regression cases against our provenance capture.

``tests/data/provsql-conformance/cases.json`` (a copy of ``../shared/data/provsql-conformance``;
see its SOURCE.md) holds 54 cases from the
regression suite of ProvSQL, each with the formula ProvSQL printed per output row. For every case
whose semiring reads as a Boolean function (formula, boolexpr, why, how, boolean) we set the case's
database up in a fresh :func:`provsql_dp.connect`, declare ``PROTECT TABLE t BY (label column)``
for every table that carries provenance (each row is the participant its label names), capture
``con.provenance(query)`` and compare, as multisets of (row, Boolean function) pairs, ProvSQL's
formula with our annotation — both put in canonical form: the set of minimal satisfying sets of
labels (a participant is compared by its label, i.e. its key).

Why comparing over labels is sound even where labels repeat: ProvSQL's printed formula is its
provenance with every tuple variable renamed to the tuple's label; our annotation under
``BY (label)`` is the same provenance with every tuple renamed to the participant its label names.
Positive relational algebra provenance commutes with such renamings, so the two Boolean functions
over labels must be equal.

Cases of the other semirings (counting, which, where) are not Boolean functions: for them we
check the rows (and, for which-provenance, that our variables are among the lineage). Cases using
a construct we refuse are asserted to be refused with ``UnsupportedQueryError``. Cases that hit a
defect of the core are strict expected failures naming it.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

import provsql_dp
from provsql_dp.errors import DataError, ProgrammingError, UnsupportedQueryError

# A copy of ../shared/data/provsql-conformance (MIT, see its SOURCE.md), so the suite always runs
DATA = Path(__file__).resolve().parents[1] / "data" / "provsql-conformance" / "cases.json"

BOOLEAN = {"formula", "boolexpr", "why", "how", "boolean"}
ROWS_ONLY = {"counting", "which", "where"}

# Cases that use a construct the planner refuses: (construct named in the message).
# (VALUES lists and SELECT without FROM, refused before, are public relations: sql.values)
REFUSED: dict = {}

_ENUM_BUG = (
    "core bug (provsql_dp/provenance/capture.py): the capture query's result is read with "
    "DuckDB's fetchnumpy(), which needs pandas for an ENUM column; pandas is not a dependency, so "
    "projecting an ENUM column fails with ProgrammingError \"'pandas' is required for this "
    "operation\""
)
# Cases that reveal a defect of the core: (exception raised today, reason).
KNOWN_BUGS: dict = {}  # case name -> (exception, reason) for a strict xfail; none open


def _load():
    if not DATA.exists():
        return []
    return json.loads(DATA.read_text(encoding="utf-8"))["cases"]


CASES = _load()


def _variants():
    """(case, query key) pairs: the query, and the SELECT DISTINCT form where one is given."""
    out = []
    for case in CASES:
        for key, suffix in (("query", ""), ("query_distinct_equivalent", "[distinct]")):
            if not case.get(key):
                continue
            marks = []
            if case["name"] in KNOWN_BUGS:
                exc, reason = KNOWN_BUGS[case["name"]]
                marks.append(pytest.mark.xfail(strict=True, raises=exc, reason=reason))
            if case["name"] in REFUSED:
                suffix += "[refused]"
            elif case["semiring"] in ROWS_ONLY:
                suffix += "[rows-only]"
            out.append(pytest.param(case, key, id=case["name"] + suffix, marks=marks))
    return out


# ====================================================================== canonical forms
Dnf = frozenset  # of frozensets of labels


def minimal(monomials) -> Dnf:
    """Canonical form of a positive DNF: its minimal monomials (absorption, no duplicates)."""
    monos = sorted({frozenset(m) for m in monomials}, key=len)
    out: list[frozenset] = []
    for m in monos:
        if not any(k <= m for k in out):
            out.append(m)
    return frozenset(out)


_OPS = {
    # semiring: (OR symbols, AND symbols, TRUE symbols, FALSE symbols)
    "formula": ("⊕", "⊗", "𝟙", "𝟘"),
    "boolexpr": ("∨", "∧", "⊤", "⊥"),
    "how": ("+", "⋅", "𝟙", "𝟘"),
}


def parse_formula(text: str, semiring: str) -> Dnf:
    """ProvSQL's printed provenance as a canonical DNF over labels.

    ``formula``: ``⊕`` OR, ``⊗`` AND, ``𝟙``/``𝟘``; ``boolexpr``: ``∨``, ``∧``, ``⊤``/``⊥``;
    ``how``: N[X] polynomials (``+``, ``⋅``; coefficients and exponents dropped);
    ``why``: a set of witness sets ``{{a,b},{c}}``. Labels may contain spaces.
    """
    if semiring == "why":
        inner = text.strip()
        assert inner.startswith("{") and inner.endswith("}"), text
        groups = re.findall(r"\{([^{}]*)\}", inner[1:-1])
        return minimal(frozenset(x.strip() for x in g.split(",") if x.strip()) for g in groups)
    or_, and_, true, false = _OPS[semiring]
    pattern = "(" + "|".join(re.escape(s) for s in (or_, and_, true, false, "(", ")")) + ")"
    tokens = [t.strip() for t in re.split(pattern, text) if t.strip()]
    pos = 0

    def peek():
        return tokens[pos] if pos < len(tokens) else None

    def expr():
        nonlocal pos
        acc = term()
        while peek() == or_:
            pos += 1
            acc = acc | term()
        return acc

    def term():
        nonlocal pos
        acc = factor()
        while peek() == and_:
            pos += 1
            right = factor()
            acc = {a | b for a in acc for b in right}
        return acc

    def factor():
        nonlocal pos
        tok = peek()
        assert tok is not None and tok not in (or_, and_, ")"), f"bad formula {text!r}"
        pos += 1
        if tok == "(":
            inner = expr()
            assert peek() == ")", f"unbalanced formula {text!r}"
            pos += 1
            return inner
        if tok == true:
            return {frozenset()}
        if tok == false:
            return set()
        if semiring == "how":
            tok = re.sub(r"\^\d+$", "", tok)  # exponents: x^2 is x as a Boolean
            if re.fullmatch(r"\d+", tok):  # a coefficient: 2⋅x is x as a Boolean
                return {frozenset()}
        return {frozenset([tok])}

    dnf = expr()
    assert pos == len(tokens), f"trailing tokens in {text!r}"
    return minimal(dnf)


def our_dnf(kr, i: int) -> Dnf:
    """Our annotation of row i over labels: a participant (domain, key) is compared by its key."""
    return minimal(frozenset(_label(p[1]) for p in mono) for mono in kr.annotation(i))


def evaluate(dnf: Dnf, valuation: dict[str, bool]) -> bool:
    return any(all(valuation[x] for x in mono) for mono in dnf)


def _label(value) -> str:
    return str(value.item() if hasattr(value, "item") else value)


def _row(values) -> tuple:
    return tuple(None if v is None else _label(v) for v in values)


def _valuation(case) -> dict[str, bool]:
    return {str(k): bool(v) for k, v in case["valuation"].items()}


def _expected_value(case, entry):
    semiring = case["semiring"]
    if semiring == "boolean":
        assert entry["formula"] in ("t", "f"), entry
        return entry["formula"] == "t"
    return parse_formula(entry["formula"], semiring)


def _our_value(case, kr, i):
    dnf = our_dnf(kr, i)
    if case["semiring"] == "boolean":
        return evaluate(dnf, _valuation(case))
    return dnf


# ====================================================================== the database of a case
def _connect(case):
    con = provsql_dp.connect(":memory:")
    for stmt in case["setup_sql"]:
        con.execute(stmt)
    for n, (table, column) in enumerate(case["provenance_tables"].items()):
        # ProvSQL prints a tuple whose label is NULL as an unnamed leaf: a variable of its own.
        # Our owner columns must not be NULL (see test_null_owner_is_refused), so such a label is
        # replaced by a fresh name before the declaration; it can then match no printed label.
        con.execute(
            f'UPDATE "{table}" SET "{column}" = \'⊥unnamed{n}_\' || CAST(rowid AS VARCHAR) '
            f'WHERE "{column}" IS NULL'
        )
        _labels_public(con, table)
        con.execute(f'PROTECT TABLE "{table}" BY ("{column}")')
    return con


def _labels_public(con, table: str) -> None:
    """ProvSQL's ENUM columns (``classification``) have labels its schema writes: declared
    public, as PROTECT TABLE requires of an ENUM column (:mod:`provsql_dp.sql.enum_labels`)."""
    for column, sql_type in con._duck.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? "
            "AND data_type LIKE 'ENUM(%'", [table]).fetchall():
        labels = con._duck.execute(f"SELECT unnest(enum_range(NULL::{sql_type}))").fetchall()
        values = ", ".join("'" + v[0].replace("'", "''") + "'" for v in labels)
        con.execute(f'SET GROUP KEYS ON "{table}" ("{column}") VALUES ({values})')


# ====================================================================== the tests
@pytest.mark.parametrize(("case", "key"), _variants())
def test_case(case, key):
    name, semiring = case["name"], case["semiring"]
    con = _connect(case)
    query = case[key]
    if name in REFUSED:
        with pytest.raises(UnsupportedQueryError, match=re.escape(REFUSED[name])) as err:
            con.provenance(query)
        assert "not supported" in str(err.value)
        return
    kr = con.provenance(query)
    expected_rows = Counter(_row(e["row"]) for e in case["expected"])
    ours_rows = Counter(_row(r) for r in kr.rows)
    assert ours_rows == expected_rows, "the rows differ from ProvSQL's (as multisets)"
    if semiring in ROWS_ONLY:
        if semiring == "which":  # lineage: every variable of ours occurs in ProvSQL's lineage
            lineage = {_row(e["row"]): set(e["formula"].strip("{}").split(",")) for e in case["expected"]}
            for i, row in enumerate(kr.rows):
                assert set().union(*our_dnf(kr, i)) <= lineage[_row(row)]
        return
    assert semiring in BOOLEAN, f"unknown semiring {semiring}"
    expected = Counter((_row(e["row"]), _expected_value(case, e)) for e in case["expected"])
    ours = Counter((_row(r), _our_value(case, kr, i)) for i, r in enumerate(kr.rows))
    assert ours == expected


def test_the_data_is_what_we_expect():
    """Guards the bookkeeping above: every case is compared, checked by rows, refused or a known
    bug, and every name listed above exists."""
    names = {c["name"] for c in CASES}
    assert len(CASES) == 54
    assert set(REFUSED) <= names and set(KNOWN_BUGS) <= names
    assert {c["semiring"] for c in CASES} <= BOOLEAN | ROWS_ONLY


def test_null_owner_is_refused():
    """Our model has no unnamed participant: a protected row whose owner column is NULL makes
    every query over its table refuse with a clear DataError (ProvSQL would print an unnamed leaf)."""
    con = provsql_dp.connect(":memory:")
    con.execute("CREATE TABLE d (photo INTEGER, species VARCHAR)")
    con.execute("INSERT INTO d VALUES (1, 'Red Deer'), (1, NULL)")
    con.execute("PROTECT TABLE d BY (species)")
    with pytest.raises(DataError, match="holds NULL"):
        con.provenance("SELECT photo FROM d WHERE species = 'Red Deer'")


# ---------------------------------------------------------------------- the canonical forms
_FORMULAS = [
    ("(Dave ⊗ Magdalen) ⊕ (Dave ⊗ Nancy) ⊕ (Magdalen ⊗ Nancy)", "formula",
     [{"Dave", "Magdalen"}, {"Dave", "Nancy"}, {"Magdalen", "Nancy"}]),
    ("((Ellen ⊗ Susan))", "formula", [{"Ellen", "Susan"}]),
    ("Nancy ⊕ Nancy ⊕ Paul", "formula", [{"Nancy"}, {"Paul"}]),
    ("Red Deer ⊗ Red Fox", "formula", [{"Red Deer", "Red Fox"}]),
    ("1 ⊗ 1 ⊗ 0 ⊗ 1", "formula", [{"0", "1"}]),
    ("𝟙", "formula", [set()]),
    ("𝟘", "formula", []),
    ("a ⊕ (a ⊗ b)", "formula", [{"a"}]),
    ("(a ⊕ b) ⊗ c", "formula", [{"a", "c"}, {"b", "c"}]),
    ("(Dave ∧ Nancy) ∨ (Dave ∧ Magdalen)", "boolexpr", [{"Dave", "Nancy"}, {"Dave", "Magdalen"}]),
    ("⊤ ∧ x", "boolexpr", [{"x"}]),
    ("2⋅Ellen⋅Susan + Ellen^2 + Susan^2", "how", [{"Ellen"}, {"Susan"}]),
    ("Dave⋅Magdalen + Dave⋅Nancy", "how", [{"Dave", "Magdalen"}, {"Dave", "Nancy"}]),
    ("{{Dave,Magdalen},{Dave,Nancy}}", "why", [{"Dave", "Magdalen"}, {"Dave", "Nancy"}]),
    ("{{Smith2018},{Williams2021}}", "why", [{"Smith2018"}, {"Williams2021"}]),
    ("{}", "why", []),
]


@pytest.mark.parametrize(("text", "semiring", "expected"), _FORMULAS,
                         ids=[f"{f[1]}-{i}" for i, f in enumerate(_FORMULAS)])
def test_parse_formula(text, semiring, expected):
    assert parse_formula(text, semiring) == minimal(frozenset(m) for m in expected)


def test_minimal_and_evaluate():
    dnf = minimal([{"a", "b"}, {"a"}, {"b", "c"}, {"a"}])
    assert dnf == frozenset({frozenset({"a"}), frozenset({"b", "c"})})
    assert evaluate(dnf, {"a": False, "b": True, "c": True})
    assert not evaluate(dnf, {"a": False, "b": True, "c": False})
    assert not evaluate(frozenset(), {})
    assert evaluate(frozenset({frozenset()}), {})
