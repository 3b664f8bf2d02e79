"""Random statements over the allow-list on neighbouring databases — outcome, message, ε and time
(issue 26) — and regressions for the attacks of that issue that the planner now closes.

A grammar (hypothesis strategies) builds private statements from every family of the allow-list:
arithmetic and math, comparisons and logic, nested string functions (``replace``,
``regexp_replace``, ``||``, ``upper``, ``left``, …), dates, ``CASE``, and **set operations whose
branches have different types** (``UNION``/``UNION ALL``/``INTERSECT`` of a string and a number, a
date and a timestamp, …), including the shape of the timing attack (``CASE WHEN <predicate> THEN
<growing string> ELSE '' END``). Each statement runs as a fresh analyst on the base database and
on every neighbour whose extreme values it reads (``side_channel_corpus``); the side-channel
rule's checks of ``side_channel_checks.problems`` apply (same outcome, message, ε, shape, no
canary), and so does **time**: a neighbour on which the statement is more than
:data:`MAX_RATIO` times slower (or faster) than on the base fails — but only if it is so on each of
:data:`ATTEMPTS` measurements, since the machine is shared (times below :data:`FLOOR` seconds count
as :data:`FLOOR`: a few milliseconds of jitter is not a ratio).

The examples are derandomized and bounded (:data:`EXAMPLES`), so the suite is stable and takes
about a minute on two cores.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from side_channel_corpus import Harness, columns_of, plants_for
from side_channel_checks import fail_with, problems

MAX_RATIO = 5.0
FLOOR = 0.05  # seconds: times below it compare as FLOOR
ATTEMPTS = 3
EXAMPLES = 30
EPS = "WITH EPSILON 0.1"


@pytest.fixture(scope="module")
def harness():
    h = Harness(workers=2)
    yield h
    h.close()


def ratio(a: float, b: float) -> float:
    return max(a, b) / max(min(a, b), FLOOR)


def slow_neighbours(outcomes: dict) -> dict[str, float]:
    base = outcomes["base"].seconds
    return {name: ratio(base, o.seconds) for name, o in outcomes.items()
            if name != "base" and o.kind not in ("Skipped", "Timeout") and ratio(base, o.seconds) > MAX_RATIO}


def timing_problems(harness: Harness, sql: str, outcomes: dict) -> list[str]:
    """Neighbours whose time differs from the base's by more than MAX_RATIO on every attempt."""
    suspects = slow_neighbours(outcomes)
    seen = {name: [r] for name, r in suspects.items()}
    for _ in range(ATTEMPTS - 1):
        if not suspects:
            return []
        harness.cache.pop(sql, None)  # measure again, not from the cache
        again = harness.run(sql, dbs=("base", *suspects))
        suspects = slow_neighbours(again)
        for name, r in suspects.items():
            seen[name].append(r)
    return [f"{name}: {len(rs)} measurements {MAX_RATIO:g}× or more apart from the base "
            f"({', '.join(f'{r:.1f}×' for r in rs)})" for name, rs in seen.items() if name in suspects]


def check(harness: Harness, sql: str, dbs=None) -> dict:
    outcomes = harness.run(sql, dbs=dbs)
    found = problems(sql, outcomes) + timing_problems(harness, sql, outcomes)
    if found:
        fail_with(sql, found)
    return outcomes


# ----------------------------------------------------------------------------------------------
# the grammar

NUM_COLUMNS = ("i", "salary", "h", "dec", "x", "age")
NUM_LITERALS = ("0", "1", "-1", "7", "2147483647", "'NaN'::DOUBLE", "1e308", "NULL",
                "CAST('170141183460469231731687303715884105727' AS HUGEINT)")
STR_LITERALS = ("''", "'a'", "'x'", "'CAN'", "','", "NULL")
DATE_LITERALS = ("DATE '1970-01-01'", "DATE '9999-12-31'", "DATE '0001-01-01'")
GROWING = ("'xx'", "'xxxxxxxxxx'", "'xxxxxxxxxxxxxxxxxxxx'")  # replacements that grow a string
PATTERNS = ("'%a%'", "'A%'", "'%_x%x%'", "'%'")


def fmt(template: str):
    return lambda *args: template.format(*args)


def grammar(depth: int):
    """Strategies for SQL text of the four kinds ("num", "str", "date", "bool"), ``depth`` deep."""
    if depth == 0:
        return {
            "num": st.sampled_from(NUM_COLUMNS + NUM_LITERALS),
            "str": st.sampled_from(("name", "name") + STR_LITERALS),
            "date": st.sampled_from(("born",) + DATE_LITERALS),
            "bool": st.builds(fmt("{} {} {}"), st.sampled_from(NUM_COLUMNS),
                              st.sampled_from(("=", "<", ">=", "<>")), st.sampled_from(NUM_LITERALS)),
        }
    g = grammar(depth - 1)
    n, s, d, b = g["num"], g["str"], g["date"], g["bool"]
    small = st.sampled_from(("0", "1", "3", "10", "-2", "100", "2147483647"))
    num = st.one_of(
        n,
        st.builds(fmt("({} {} {})"), n, st.sampled_from(("+", "-", "*", "/", "//", "%")), n),
        st.builds(fmt("{}({})"), st.sampled_from(("abs", "sign", "sqrt", "ln", "floor", "ceil")), n),
        st.builds(fmt("round({}, 2)"), n),
        st.builds(fmt("{}({})"), st.sampled_from(("length", "strlen", "ascii")), s),
        st.builds(fmt("strpos({}, 'a')"), s),
        st.builds(fmt("{}({})"), st.sampled_from(("year", "month", "dayofyear")), d),
        st.builds(fmt("TRY_CAST({} AS {})"), s, st.sampled_from(("INT", "BIGINT", "DOUBLE"))),
        st.builds(fmt("CAST({} AS {})"), n, st.sampled_from(("INT", "HUGEINT", "DECIMAL(18,3)"))),
        st.builds(fmt("CASE WHEN {} THEN {} ELSE {} END"), b, n, n),
        st.builds(fmt("COALESCE({}, {})"), n, n),
    )
    string = st.one_of(
        s,
        st.builds(fmt("{}({})"), st.sampled_from(("lower", "upper", "reverse", "trim", "ltrim", "md5")), s),
        st.builds(fmt("({} || {})"), s, s),
        st.builds(fmt("concat({}, {}, {})"), s, n, d),
        st.builds(fmt("concat_ws(',', {}, {})"), s, s),
        st.builds(fmt("replace({}, 'x', {})"), s, st.sampled_from(GROWING)),
        st.builds(fmt("replace({}, {}, 'yy')"), s, s),
        st.builds(fmt("regexp_replace({}, {}, 'zz', {})"), s, st.sampled_from(("'a'", "'x*'", "'(.)'")),
                  st.sampled_from(("'g'", "''"))),
        st.builds(fmt("{}({}, {})"), st.sampled_from(("left", "right")), s, small),
        st.builds(fmt("substring({}, {}, {})"), s, small, small),
        st.builds(fmt("split_part({}, ',', {})"), s, small),
        st.builds(fmt("regexp_extract({}, 'a+')"), s),
        st.builds(fmt("CAST({} AS VARCHAR)"), st.one_of(n, d)),
        st.builds(fmt("strftime({}, '%Y-%m %A')"), d),
        st.builds(fmt("dayname({})"), d),
        st.builds(fmt("CASE WHEN {} THEN {} ELSE '' END"), b, s),  # the timing attack's shape
        st.builds(fmt("{}({}, {})"), st.sampled_from(("coalesce", "nullif", "greatest", "least")), s, s),
    )
    date = st.one_of(
        d,
        st.builds(fmt("({} + CAST({} AS INT))"), d, n),
        st.builds(fmt("TRY_CAST({} AS DATE)"), s),
        st.builds(fmt("date_trunc('month', {})"), d),
        st.builds(fmt("last_day({})"), d),
    )
    boolean = st.one_of(
        b,
        st.builds(fmt("{} {} {}"), n, st.sampled_from(("=", "<>", "<", ">=")), n),
        st.builds(fmt("{} {} {}"), s, st.sampled_from(("=", "<", ">")), s),
        st.builds(fmt("{} {} {}"), d, st.sampled_from(("=", "<")), d),
        st.builds(fmt("{} {} {}"), s, st.sampled_from(("LIKE", "ILIKE", "NOT LIKE")), st.sampled_from(PATTERNS)),
        st.builds(fmt("{} GLOB 'C*'"), s),
        st.builds(fmt("{} SIMILAR TO 'C.*'"), s),
        st.builds(fmt("regexp_matches({}, 'a|x')"), s),
        st.builds(fmt("{}({}, 'a')"), st.sampled_from(("starts_with", "contains", "ends_with", "prefix")), s),
        st.builds(fmt("{} IN ({}, {})"), n, n, n),
        st.builds(fmt("{} BETWEEN {} AND {}"), n, n, n),
        st.builds(fmt("{} IS NULL"), st.one_of(n, s, d)),
        st.builds(fmt("({} AND {})"), b, b),
        st.builds(fmt("({} OR {})"), b, b),
        st.builds(fmt("NOT ({})"), b),
    )
    return {"num": num, "str": string, "date": date, "bool": boolean}


G = grammar(2)
ANY = st.one_of(G["num"], G["str"], G["date"])


@st.composite
def statements(draw):
    """A private statement around random expressions that read at least one column."""
    reads = lambda s: s.filter(lambda e: bool(columns_of(e)))  # noqa: E731
    context = draw(st.sampled_from(("where", "sum", "set", "set", "group-by", "grow")))
    if context == "where":
        return f"SELECT COUNT(*) FROM people WHERE {draw(reads(G['bool']))} {EPS}"
    if context == "sum":
        return f"SELECT SUM({draw(reads(G['num']))}) FROM people {EPS}"
    if context == "group-by":
        return (f"SELECT d.dname, COUNT(*) FROM people p JOIN depts d ON p.dept = d.dept_id "
                f"WHERE {draw(reads(G['bool']))} GROUP BY d.dname {EPS}")
    if context == "grow":  # the timing attack's shape: cost paid only by matching rows
        return (f"SELECT COUNT(*) FROM people WHERE length(CASE WHEN {draw(G['bool'])} THEN "
                f"{draw(reads(G['str']))} ELSE '' END) > {draw(st.sampled_from(('0', '100', '100000')))} {EPS}")
    # set operations whose branches may have different types
    op = draw(st.sampled_from(("UNION ALL", "UNION", "INTERSECT")))
    left, right = draw(reads(ANY)), draw(ANY)
    return (f"SELECT COUNT(*) FROM (SELECT {left} AS v FROM people WHERE {draw(G['bool'])} {op} "
            f"SELECT {right} FROM people WHERE {draw(G['bool'])}) u {EPS}")


@pytest.mark.slow  # ~20 s idle (45 s loaded): the default suite stays under 15 min
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          phases=(Phase.explicit, Phase.generate),  # no shrinking: a run can take a timeout
          suppress_health_check=(HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.filter_too_much))
@given(data=st.data())
def test_random_statements_on_neighbours(harness, data):
    sql = data.draw(statements(), label="statement")
    check(harness, sql)


# ----------------------------------------------------------------------------------------------
# the issue's attacks


def nested_replace(levels: int) -> str:
    e = "name || 'xxxxxxxxxx'"
    for _ in range(levels):
        e = f"replace({e}, 'x', 'xxxxxxxxxx')"
    return e


ATTACKS = (
    # a yes/no oracle through UNION typing: BIGINT ∪ DATE fails only when a row passes the WHERE
    ("union-typing", "SELECT COUNT(*) FROM (SELECT salary AS v FROM people WHERE salary = 9223372036854775807 "
     "UNION ALL SELECT born FROM people) u WITH EPSILON 0.001", ("max", "min"), "refused"),
    ("intersect-typing", "SELECT COUNT(*) FROM (SELECT salary AS v FROM people WHERE salary = 50000 "
     "INTERSECT SELECT name FROM people) u WITH EPSILON 0.001", ("changed", "max"), "answer"),
    ("union-far-date", "SELECT COUNT(*) FROM (SELECT CAST(born AS TIMESTAMP) AS v FROM people "
     "UNION ALL SELECT born FROM people) u WITH EPSILON 0.001", ("fardate", "infdate"), "answer"),
    ("union-hugeint-decimal", "SELECT COUNT(*) FROM (SELECT h AS v FROM people UNION ALL "
     "SELECT CAST(dec AS DECIMAL(38,10)) FROM people) u WITH EPSILON 0.001", ("max", "changed"), "answer"),
    # a timing oracle through output growth
    ("replace-growth", "SELECT COUNT(*) FROM people WHERE length(CASE WHEN name LIKE 'CANARY%' THEN "
     f"{nested_replace(7)} ELSE '' END) > 0 WITH EPSILON 0.001", ("long", "changed"), "refused"),
    ("replace-capped", "SELECT COUNT(*) FROM people WHERE length(CASE WHEN name LIKE 'CANARY%' THEN "
     "replace(left(replace(left(name, 1000), 'x', 'xxxxxxxxxx'), 1000), 'x', 'xxxxxxxxxx') "
     "ELSE '' END) > 0 WITH EPSILON 0.001", ("long", "changed"), "answer"),
    ("regexp-growth", "SELECT COUNT(*) FROM people WHERE length(CASE WHEN name LIKE 'CANARY%' THEN "
     "regexp_replace(regexp_replace(name, '', 'xxxxxxxxxx', 'g'), '', 'xxxxxxxxxx', 'g') "
     "ELSE '' END) > 0 WITH EPSILON 0.001", ("long",), "refused"),
    # everything the statement alone decides happens before the charge
    ("epsilon-1e999", "SELECT COUNT(*) FROM people WITH EPSILON 1e999", ("max",), "refused"),
    ("accuracy-tiny", "SELECT COUNT(*) FROM people WITH ACCURACY 1e-320", ("max",), "refused"),
    ("accuracy-huge", "SELECT COUNT(*) FROM people WITH ACCURACY 1e999", ("max",), "refused"),
    ("confidence-one", "SELECT COUNT(*) FROM people WITH ACCURACY 1 CONFIDENCE 0.99999999999999999999",
     ("max",), "refused"),
    ("tiny-sum-bounds", "SELECT SUM(salary) FROM people WITH EPSILON 0.1 OPTIONS (lower = 0, upper = 1e-300)",
     ("max", "zero"), "refused"),
    ("huge-sum-bounds", "SELECT SUM(x) FROM people WITH EPSILON 0.000001 OPTIONS (lower = -1e15, upper = 1e15)",
     ("nan", "inf"), "refused"),
)


@pytest.mark.parametrize("what, sql, plants, expected", ATTACKS, ids=[a[0] for a in ATTACKS])
def test_issue_attacks_are_closed(harness, what, sql, plants, expected):
    outcomes = check(harness, sql, dbs=("base",) + plants)
    base = outcomes["base"]
    if expected == "refused":
        assert base.kind in ("ProgrammingError", "UnsupportedQueryError"), base.short()
        assert base.epsilon == 0, f"refused after the ledger was charged: {base.short()}"
        assert "charged" not in base.message.replace("Nothing was charged", ""), base.short()
    else:
        assert base.kind == "answer" and base.epsilon > 0, base.short()


def test_every_plant_is_reachable():
    """The attacks name plants that exist and that their statements read."""
    names = set(plants_for("SELECT name, salary, born, x, h, dec FROM people"))
    for what, sql, plants, _ in ATTACKS:
        assert set(plants) <= names, what
