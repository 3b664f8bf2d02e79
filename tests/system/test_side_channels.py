"""The side-channel rule (DESIGN §8, issue "No side channels"), as neighbour-pair properties: the
corpus's size, PEP 249 errors only, the analyst statement kinds, the issue's statements and
random expression trees. The rule, its checks and the harness are in ``side_channel_checks``;
the corpus's neighbour pairs are checked in ``test_side_channels_neighbours_<k>.py`` (split over
files so that pytest-xdist's workers share them).
"""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from side_channel_checks import CORPUS, fail_with, harness, problems  # noqa: F401 - harness: a fixture
from side_channel_corpus import ANALYST_PUBLIC, ANALYST_REFUSED, REGRESSIONS, columns_of, plants_for

# ----------------------------------------------------------------------------------------------
# the corpus: its size, and no non-PEP 249 error on any database (its neighbour pairs are
# checked in test_side_channels_neighbours_<k>.py)


def test_the_corpus_is_large_and_varied():
    assert len(CORPUS) >= 200
    categories = {c for c, _ in CORPUS}
    assert {"where-numeric", "where-string", "where-date", "where-boolean", "join", "sum",
            "group-by", "policy-histogram", "policy-ranges", "policy-cumulative",
            "explain-privacy", "analyst-public", "analyst-refused"} <= categories
    assert all(plants_for(sql) for _, sql in CORPUS)


@pytest.mark.slow  # runs every corpus statement: CI's second step (the default run: a sample)
def test_only_pep249_errors_escape_execute(harness):
    """No exception outside provsql_dp's PEP 249 hierarchy escapes execute, for any corpus
    statement on any database (outcomes are shared with test_side_channels_neighbours_<k>.py,
    across the run's test processes)."""
    escaped = []
    for _, sql in CORPUS:
        for name, o in harness.run(sql).items():
            if not o.pep249:
                escaped.append(f"{o.kind} on {name}: {sql}\n      {o.short()}")
    assert not escaped, f"{len(escaped)} non-PEP 249 exceptions escaped execute:\n  " + \
        "\n  ".join(escaped[:40])


@pytest.mark.parametrize("sql", ANALYST_REFUSED + ANALYST_PUBLIC)
def test_analyst_statement_kinds_on_every_neighbour(harness, sql):
    """Issue 26: every analyst statement kind is compiled, never passed through. A read of
    protected rows or of a file is refused on every neighbour, nothing charged; a public read,
    DESCRIBE, SHOW, SUMMARIZE, EXPLAIN or PIVOT of public tables answers on every neighbour
    (identically: they are corpus statements)."""
    want = "PrivacyError" if sql in ANALYST_REFUSED else "answer"
    for name, o in harness.run(sql).items():
        assert (o.kind, o.epsilon) == (want, 0), f"{name}: {o.short()}"


# ----------------------------------------------------------------------------------------------
# the issue's statements, each with the neighbour that triggers it


@pytest.mark.parametrize("what, sql, plants", REGRESSIONS, ids=[r[0] for r in REGRESSIONS])
def test_issue_statements_have_a_data_independent_outcome(harness, what, sql, plants):
    outcomes = harness.run(sql, dbs=("base",) + plants)
    found = problems(sql, outcomes)
    if found:
        fail_with(sql, found)
    base = outcomes["base"]
    if base.kind == "answer":
        assert base.rows == 1 and base.kinds == (("number",),), base.short()
        assert base.epsilon > 0
    else:
        # refused at plan time: before any protected row is read, so nothing is charged
        assert base.epsilon == 0, f"refused after the ledger was charged: {base.short()}"
        if what == "error":
            assert "error" in base.message.lower(), f"the refusal should name error(): {base.short()}"


# ----------------------------------------------------------------------------------------------
# random expression trees over the same columns, functions and edge literals

COLUMNS = {"num": ("i", "salary", "h", "dec", "x", "age"), "str": ("name",), "date": ("born",)}
LITERALS = {
    "num": ("0", "1", "-1", "2", "50000", "2147483647", "9223372036854775807",
            "(-9223372036854775808)", "'NaN'::DOUBLE", "'inf'::DOUBLE", "1e308", "NULL",
            "CAST('170141183460469231731687303715884105727' AS HUGEINT)"),
    "str": ("''", "'a'", "'CAN'", "repeat('x', 10000)", "NULL"),
    "date": ("DATE '1970-01-01'", "DATE '9999-12-31'", "DATE '0001-01-01'"),
}
VISIT_COLUMNS = {"num": ("amount", "pid"), "str": ("tag",), "date": ("vday",)}

ARITH = ("+", "-", "*", "/", "//", "%")
NUM_FUNCS1 = ("abs", "sign", "round", "floor", "ceil", "sqrt", "ln", "log", "exp", "-")
NUM_FUNCS2 = ("pow", "least", "greatest", "round")
STR_FUNCS1 = ("lower", "upper", "trim")
CMP = ("=", "<>", "<", "<=", ">", ">=")


def _fmt(template: str):
    return lambda *args: template.format(*args)


@cache
def _exprs(kind: str, depth: int, visits: bool = False):
    """A strategy for SQL text of type ``kind`` ("num", "str", "date", "bool")."""
    if kind != "bool":
        # columns half of the time: a tree should read the planted values
        leaf = st.one_of(st.sampled_from(COLUMNS[kind] + (VISIT_COLUMNS[kind] if visits else ())),
                         st.sampled_from(LITERALS[kind]))
        if depth == 0:
            return leaf
    n, s, d = (_exprs(k, max(depth - 1, 0), visits) for k in ("num", "str", "date"))
    b = _exprs("bool", depth - 1, visits) if depth > 0 else None
    # above depth 0 every node is an operator: trees are as deep as asked
    if kind == "num":
        options = [
            st.builds(_fmt("({} {} {})"), n, st.sampled_from(ARITH), n),
            st.builds(lambda f, a: f"(-{a})" if f == "-" else f"{f}({a})", st.sampled_from(NUM_FUNCS1), n),
            st.builds(_fmt("{}({}, {})"), st.sampled_from(NUM_FUNCS2), n, n),
            st.builds(_fmt("length({})"), s),
            st.builds(_fmt("{}({})"), st.sampled_from(("year", "month")), d),
            st.builds(_fmt("date_part('year', {})"), d),
            st.builds(_fmt("extract(day FROM {})"), d),
            st.builds(_fmt("({} - {})"), d, d),
            st.builds(_fmt("{}({} AS {})"), st.sampled_from(("CAST", "TRY_CAST")), st.one_of(n, s),
                      st.sampled_from(("INT", "BIGINT", "DOUBLE", "HUGEINT", "DECIMAL(18,3)"))),
            st.builds(_fmt("COALESCE({}, {})"), n, n),
            st.builds(_fmt("NULLIF({}, {})"), n, n),
        ]
        if b is not None:
            options.append(st.builds(_fmt("CASE WHEN {} THEN {} ELSE {} END"), b, n, n))
        return st.one_of(options)
    if kind == "str":
        return st.one_of(
            st.builds(_fmt("{}({})"), st.sampled_from(STR_FUNCS1), s),
            st.builds(_fmt("substring({}, {}, {})"), s, n, n),
            st.builds(_fmt("concat({}, {})"), s, s),
            st.builds(_fmt("({} || {})"), s, s),
            st.builds(_fmt("replace({}, {}, {})"), s, s, s),
            st.builds(_fmt("{}({} AS VARCHAR)"), st.sampled_from(("CAST", "TRY_CAST")), st.one_of(n, d)),
        )
    if kind == "date":
        return st.one_of(
            st.builds(_fmt("({} + CAST({} AS INT))"), d, n),
            st.builds(_fmt("{}({} AS DATE)"), st.sampled_from(("CAST", "TRY_CAST")), s),
        )
    # bool
    atoms = [
        st.builds(_fmt("{} {} {}"), n, st.sampled_from(CMP), n),
        st.builds(_fmt("{} {} {}"), s, st.sampled_from(CMP), s),
        st.builds(_fmt("{} {} {}"), d, st.sampled_from(CMP), d),
        st.builds(_fmt("{} BETWEEN {} AND {}"), n, n, n),
        st.builds(lambda a, xs: f"{a} IN ({', '.join(xs)})", n, st.lists(n, min_size=1, max_size=3)),
        st.builds(_fmt("{} IS {}NULL"), st.one_of(n, s, d), st.sampled_from(("", "NOT "))),
        st.builds(_fmt("{} {} {}"), s, st.sampled_from(("LIKE", "ILIKE", "NOT LIKE")),
                  st.sampled_from(("'%a%'", "'A%'", "''", "'%'"))),
        st.builds(_fmt("{}({}, {})"), st.sampled_from(("starts_with", "contains")), s, s),
    ]
    if depth > 0:
        sub = _exprs("bool", depth - 1, visits)
        atoms += [st.builds(_fmt("({} {} {})"), sub, st.sampled_from(("AND", "OR")), sub),
                  st.builds(_fmt("NOT ({})"), sub)]
    return st.one_of(atoms)


EPS = "WITH EPSILON 0.1"


def _reads_columns(e: str) -> bool:
    return bool(columns_of(e))


@st.composite
def statements(draw):
    """A private statement around a random tree that reads at least one column."""
    context = draw(st.sampled_from(("where", "sum", "join", "group-by", "histogram", "cumulative")))
    depth = 2
    exprs = lambda kind, d, visits=False: _exprs(kind, d, visits).filter(_reads_columns)
    if context == "where":
        return f"SELECT COUNT(*) FROM people WHERE {draw(exprs('bool', depth))} {EPS}"
    if context == "sum":
        return f"SELECT SUM({draw(exprs('num', depth))}) FROM people {EPS}"
    if context == "join":
        return (f"SELECT COUNT(*) FROM people p JOIN visits v ON p.id = v.pid AND "
                f"{draw(exprs('bool', depth, True))} {EPS}")
    if context == "group-by":
        return (f"SELECT d.dname, COUNT(*) FROM people p JOIN depts d ON p.dept = d.dept_id "
                f"WHERE {draw(exprs('bool', depth))} GROUP BY d.dname {EPS}")
    if context == "histogram":
        return f"SELECT age, COUNT(*) FROM people WHERE {draw(exprs('bool', depth))} GROUP BY age {EPS}"
    return f"COUNT CUMULATIVE age FROM people WHERE {draw(exprs('bool', depth))} {EPS}"


@pytest.mark.slow  # ~20 s idle (45 s loaded): the default suite stays under 15 min
@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          phases=(Phase.explicit, Phase.generate),  # no shrinking: a run can take a timeout
          suppress_health_check=(HealthCheck.too_slow, HealthCheck.data_too_large))
@given(data=st.data())
def test_random_expressions_on_neighbours(harness, data):
    sql = data.draw(statements(), label="statement")
    found = problems(sql, harness.run(sql))
    if found:
        fail_with(sql, found)
