"""Column declarations (``SET``/``DROP``/``SHOW BOUNDS``, ``SET``/``DROP``/``SHOW GROUP KEYS``):
parsing, storage, validation (a refused declaration changes nothing), persistence across
reconnects, read-only connections, and the bounds the planner attaches to a SUM."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from sqlglot import exp
from sqlglot.errors import ParseError

import provsql_dp
from provsql_dp.errors import DeclarationError, OperationalError, ProgrammingError
from provsql_dp.interfaces.dbapi.statements import is_privacy_statement
from provsql_dp.sql import dialect as d
from provsql_dp.sql.column_declarations import ColumnDeclarations, base_column
from provsql_dp.sql.plan import Aggregates


def _con(path=":memory:"):
    con = provsql_dp.connect(path)
    con.execute("""
        CREATE TABLE people (id INTEGER PRIMARY KEY, city VARCHAR, salary DOUBLE, age TINYINT,
                             score DECIMAL(6, 2), member BOOLEAN);
        CREATE TABLE cities (name VARCHAR, country VARCHAR);
        INSERT INTO cities VALUES ('Lyon', 'FR');
        CREATE TABLE secret (name VARCHAR);
        CREATE VIEW public_cities AS SELECT name FROM cities;
        PROTECT TABLE people;
        PROTECT TABLE secret""")
    return con


def _decl(con) -> ColumnDeclarations:
    return ColumnDeclarations(con._catalog)


def _state(con):
    return _decl(con).list_bounds(), _decl(con).list_group_keys()


# ====================================================================== parsing
@pytest.mark.parametrize("sql, cls, args", [
    ("SET BOUNDS ON people (salary) BETWEEN 0 AND 100000", d.SetBounds,
     {"column": "salary", "lower": "0", "upper": "100000"}),
    ("set bounds on hr.people (salary) between -1.5 and 2E3", d.SetBounds,
     {"column": "salary", "lower": "-1.5", "upper": "2E3"}),
    ("DROP BOUNDS ON people (salary)", d.DropBounds, {"column": "salary"}),
    ("SHOW BOUNDS", d.ShowBounds, {}),
    ("SHOW BOUNDS ON people", d.ShowBounds, {}),
    ("SET GROUP KEYS ON people (city) VALUES ('Lyon', 'Oslo')", d.SetGroupKeys, {"column": "city"}),
    ("SET GROUP KEYS ON people (city) FROM cities (name)", d.SetGroupKeys, {"column": "city"}),
    ("DROP GROUP KEYS ON people (city)", d.DropGroupKeys, {"column": "city"}),
    ("SHOW GROUP KEYS ON people", d.ShowGroupKeys, {}),
    ('SET GROUP KEYS ON "Order Lines" ("City Name") VALUES (1, -2, TRUE)', d.SetGroupKeys,
     {"column": "City Name"}),
])
def test_statements_parse_to_their_classes(sql, cls, args):
    tree = d.parse_one(sql)
    assert type(tree) is cls and isinstance(tree, d.PRIVACY_STATEMENTS)
    assert is_privacy_statement(sql)
    for key, value in args.items():
        node = tree.args[key]
        text = node.name if key == "column" else node.sql()
        assert text.replace(" ", "") == value.replace(" ", "")


def test_parsed_fields():
    t = d.parse_one("SET GROUP KEYS ON s.people (city) FROM pub.cities (name)")
    assert [p.name for p in t.this.parts] == ["s", "people"]
    assert [p.name for p in t.args["source"].parts] == ["pub", "cities"]
    assert t.args["source_column"].name == "name" and not t.expressions
    v = d.parse_one("SET GROUP KEYS ON people (age) VALUES (1, -2, 'x', FALSE)")
    assert [type(e).__name__ for e in v.expressions] == ["Literal", "Neg", "Literal", "Boolean"]
    assert d.parse_one("SHOW GROUP KEYS ON people").args["table"].name == "people"
    assert d.parse_one("SHOW BOUNDS").args.get("table") is None


@pytest.mark.parametrize("sql", [
    "SET bounds = 1", "SET bounds TO 1", "SET threads TO 2", "SET search_path = 'main'",
    "DROP TABLE bounds", "SHOW TABLES", "SET VARIABLE x = 1",
])
def test_duckdb_statements_stay_duckdbs(sql):
    tree = d.parse_one(sql)
    assert not isinstance(tree, d.PRIVACY_STATEMENTS)


def test_duckdb_setting_named_bounds_is_not_claimed():
    assert not is_privacy_statement("SET bounds = 1")
    assert not is_privacy_statement("SET bounds TO 1")
    assert not is_privacy_statement("SET bounds=1")
    assert not is_privacy_statement("SET threads TO 2")
    assert not is_privacy_statement("DROP TABLE people")
    assert is_privacy_statement("SHOW BOUNDS") and is_privacy_statement("SHOW GROUP KEYS")


@pytest.mark.parametrize("sql, message", [
    ("SET BOUNDS ON people (salary) BETWEEN 0", "Expected AND"),
    ("SET BOUNDS ON people salary BETWEEN 0 AND 1", "Expected '(' and a column name"),
    ("SET GROUP KEYS ON people (city)", "Expected VALUES"),
    ("SET GROUP KEYS ON people (city) VALUES (NULL)", "Expected key value"),
    ("SET GROUP people (city) VALUES (1)", "Expected KEYS after SET GROUP"),
    ("DROP GROUP KEYS people (city)", "Expected ON table (column) after DROP GROUP KEYS"),
])
def test_syntax_errors(sql, message):
    with pytest.raises(ParseError, match=re.escape(message)):
        d.parse_one(sql)
    con = _con()
    with pytest.raises(ProgrammingError, match="syntax error"):
        con.execute(sql)


# ====================================================================== bounds
def test_set_show_replace_drop_bounds():
    con = _con()
    assert con.execute("SET BOUNDS ON people (salary) BETWEEN 0 AND 1e5").fetchall() == [
        ("bounds set: people.salary BETWEEN 0 AND 100000",)]
    con.execute("SET BOUNDS ON PEOPLE (AGE) BETWEEN -1.5 AND 120")
    cur = con.execute("SHOW BOUNDS")
    assert [c[0] for c in cur.description] == ["schema", "table", "column", "lower", "upper",
                                               "status"]
    assert cur.fetchall() == [("main", "people", "age", -1.5, 120.0, "ok"),
                              ("main", "people", "salary", 0.0, 100000.0, "ok")]
    con.execute("SET BOUNDS ON people (salary) BETWEEN 10 AND 20")  # replaces
    assert _decl(con).bounds("main", "people", "salary") == (10.0, 20.0)
    assert con.execute("SHOW BOUNDS ON cities").fetchall() == []
    assert len(con.execute("SHOW BOUNDS ON main.people").fetchall()) == 2
    con.execute("DROP BOUNDS ON people (age)")
    assert [r[2] for r in con.execute("SHOW BOUNDS").fetchall()] == ["salary"]


@pytest.mark.parametrize("sql, message", [
    ("SET BOUNDS ON missing (a) BETWEEN 0 AND 1", "no such table"),
    ("SET BOUNDS ON people (nope) BETWEEN 0 AND 1", "has no column 'nope'"),
    ("SET BOUNDS ON people (city) BETWEEN 0 AND 1", "is not numeric"),
    ("SET BOUNDS ON people (member) BETWEEN 0 AND 1", "is not numeric"),
    ("SET BOUNDS ON public_cities (name) BETWEEN 0 AND 1", "view"),
    ("SET BOUNDS ON people (salary) BETWEEN 3 AND 2", "lower bound must be below"),
    ("SET BOUNDS ON people (salary) BETWEEN 2 AND 2", "lower bound must be below"),
    ("SET BOUNDS ON people (salary) BETWEEN -2e15 AND 0", "within ±1e+15"),
    ("SET BOUNDS ON people (salary) BETWEEN 0 AND 1e400", "within ±1e+15"),
    ("DROP BOUNDS ON people (age)", "no bounds are declared"),
    ("SET BOUNDS ON _provsql_dp.protected (domain) BETWEEN 0 AND 1", "*"),
])
def test_invalid_bounds_change_nothing(sql, message):
    con = _con()
    con.execute("SET BOUNDS ON people (salary) BETWEEN 0 AND 10")
    before = _state(con)
    with pytest.raises(ProgrammingError) as err:
        con.execute(sql)
    if message != "*":
        assert message in str(err.value)
    assert _state(con) == before


def test_bounds_on_every_numeric_type():
    con = _con()
    for col in ("salary", "age", "score", "id"):
        con.execute(f"SET BOUNDS ON people ({col}) BETWEEN 0 AND 100")
    assert len(_decl(con).list_bounds()) == 4


# ====================================================================== group keys
def test_values_are_cast_to_the_column_type_and_deduplicated():
    con = _con()
    con.execute("SET GROUP KEYS ON people (age) VALUES (3, '4', 3.0, 1e1)")
    keys = _decl(con).group_keys("main", "people", "age")
    assert keys.values == ("3", "4", "10")
    assert _decl(con).key_values(keys, "TINYINT") == [3, 4, 10]
    con.execute("SET GROUP KEYS ON people (score) VALUES (1.25, -2)")
    keys = _decl(con).group_keys("main", "people", "score")
    assert _decl(con).key_values(keys, "DECIMAL(6,2)") == [Decimal("-2.00"), Decimal("1.25")]
    con.execute("SET GROUP KEYS ON people (member) VALUES (TRUE, FALSE, 'true')")
    keys = _decl(con).group_keys("main", "people", "member")
    assert _decl(con).key_values(keys, "BOOLEAN") == [False, True]


def test_show_and_drop_group_keys():
    con = _con()
    con.execute("SET GROUP KEYS ON people (city) VALUES ('Oslo', 'Lyon', 'O''Hare')")
    con.execute("CREATE TABLE ages (a INTEGER)")
    con.execute("SET GROUP KEYS ON people (age) FROM ages (a)")
    cur = con.execute("SHOW GROUP KEYS")
    assert [c[0] for c in cur.description] == ["schema", "table", "column", "keys", "source",
                                               "status"]
    assert cur.fetchall() == [
        ("main", "people", "age", None, "main.ages (a)", "ok"),
        ("main", "people", "city", "'Oslo', 'Lyon', 'O''Hare'", "VALUES", "ok")]
    assert con.execute("SHOW GROUP KEYS ON cities").fetchall() == []
    assert con.execute("DROP GROUP KEYS ON people (city)").fetchall() == [
        ("group keys dropped on people (city)",)]
    assert [r[2] for r in con.execute("SHOW GROUP KEYS ON people").fetchall()] == ["age"]


def test_keys_from_a_public_table_are_read_at_query_time():
    con = _con()
    con.execute("INSERT INTO cities VALUES ('Oslo', 'NO'), ('Lyon', 'FR'), (NULL, 'XX'), ('Oslo', 'NO')")
    con.execute("SET GROUP KEYS ON people (city) FROM cities (name)")
    decl = _decl(con)
    keys = decl.group_keys("main", "people", "city")
    assert decl.key_values(keys, "VARCHAR") == ["Lyon", "Oslo"]  # distinct, sorted, no NULL
    con.execute("INSERT INTO cities VALUES ('Pune', 'IN')")
    assert decl.key_values(keys, "VARCHAR") == ["Lyon", "Oslo", "Pune"]
    con.execute("PROTECT TABLE cities")  # a source that becomes protected is refused
    with pytest.raises(DeclarationError, match="is protected"):
        decl.key_values(keys, "VARCHAR")
    con.execute("UNPROTECT TABLE cities")
    with pytest.raises(DeclarationError, match="declarations name it"):
        con.execute("DROP TABLE cities")  # through provsql_dp: refused (declared_drops)
    con._duck.execute("DROP TABLE cities")  # DuckDB's own client: the read says so
    con._catalog.changed()
    with pytest.raises(ProgrammingError, match="no longer exists"):
        decl.key_values(keys, "VARCHAR")


@pytest.mark.parametrize("sql, message", [
    ("SET GROUP KEYS ON people (age) VALUES (1, 'x')", "the key 'x' does not fit column age"),
    ("SET GROUP KEYS ON people (age) VALUES (1000)", "the key 1000 does not fit column age"),
    ("SET GROUP KEYS ON people (id) VALUES (2.5)", "not a whole number"),
    ("SET GROUP KEYS ON people (member) VALUES ('maybe')", "does not fit column member"),
    ("SET GROUP KEYS ON missing (a) VALUES (1)", "no such table"),
    ("SET GROUP KEYS ON people (nope) VALUES (1)", "has no column 'nope'"),
    ("SET GROUP KEYS ON public_cities (name) VALUES ('a')", "view"),
    ("SET GROUP KEYS ON people (city) FROM secret (name)", "is protected"),
    ("SET GROUP KEYS ON people (city) FROM people (city)", "is protected"),
    ("SET GROUP KEYS ON people (city) FROM public_cities (name)", "view"),
    ("SET GROUP KEYS ON people (city) FROM missing (name)", "no such table"),
    ("SET GROUP KEYS ON people (city) FROM cities (nope)", "has no column 'nope'"),
    ("SET GROUP KEYS ON people (member) FROM cities (name)", "cannot be compared"),
    ("DROP GROUP KEYS ON people (age)", "no group keys are declared"),
])
def test_invalid_group_keys_change_nothing(sql, message):
    con = _con()
    con.execute("SET GROUP KEYS ON people (city) VALUES ('Oslo')")
    before = _state(con)
    with pytest.raises(ProgrammingError, match=re.escape(message)):
        con.execute(sql)
    assert _state(con) == before


# ====================================================================== persistence, roles
def test_declarations_survive_a_reconnect_and_read_only_refuses_changes(tmp_path):
    path = str(tmp_path / "db.duckdb")
    con = _con(path)
    con.execute("SET BOUNDS ON people (salary) BETWEEN 0 AND 100")
    con.execute("SET GROUP KEYS ON people (city) VALUES ('Lyon')")
    con.close()
    con = provsql_dp.connect(path)
    assert con.execute("SHOW BOUNDS").fetchall() == [
        ("main", "people", "salary", 0.0, 100.0, "ok")]
    assert con.execute("SHOW GROUP KEYS").fetchall() == [
        ("main", "people", "city", "'Lyon'", "VALUES", "ok")]
    assert con.plan("SELECT SUM(salary) FROM people").bounds == (0.0, 100.0)
    con.close()
    ro = provsql_dp.connect(path, read_only=True)
    assert len(ro.execute("SHOW BOUNDS").fetchall()) == 1
    for sql in ("SET BOUNDS ON people (salary) BETWEEN 0 AND 5", "DROP BOUNDS ON people (salary)",
                "SET GROUP KEYS ON people (city) VALUES ('Oslo')", "DROP GROUP KEYS ON people (city)"):
        with pytest.raises(OperationalError, match="read-only"):
            ro.execute(sql)
    assert len(ro.execute("SHOW GROUP KEYS").fetchall()) == 1
    ro.close()


def test_read_only_database_without_declarations_lists_nothing(tmp_path):
    path = str(tmp_path / "plain.duckdb")
    import duckdb

    duckdb.connect(path).execute("CREATE TABLE t (a INTEGER)").close()
    ro = provsql_dp.connect(path, read_only=True)
    assert ro.execute("SHOW BOUNDS").fetchall() == [] and ro.execute("SHOW GROUP KEYS").fetchall() == []
    assert ro.plan("SELECT SUM(a) FROM t").bounds is None


def test_the_store_refuses_changes_on_a_read_only_catalog():
    con = _con()
    con._catalog.read_only = True
    with pytest.raises(OperationalError, match="read-only"):
        _decl(con).set_bounds(["people"], "salary", 0, 1)


# ====================================================================== the planner
@pytest.mark.parametrize("sql, bounds", [
    ("SELECT SUM(salary) FROM people", (0.0, 100.0)),
    ("SELECT SUM(p.salary) FROM people p JOIN cities c ON p.city = c.name", (0.0, 100.0)),
    ("SELECT SUM(s) FROM (SELECT salary AS s FROM people WHERE age > 3) AS x", (0.0, 100.0)),
    ("SELECT city, SUM(salary) FROM people GROUP BY city", (0.0, 100.0)),
    # an expression of bounded columns: the range the statement proves (sql/expr_range.py)
    ("SELECT SUM(salary * 2) FROM people", (0.0, 200.0)),
    ("SELECT SUM(CAST(salary AS INTEGER)) FROM people", (0.0, 100.0)),
    ("SELECT SUM(salary + age) FROM people", None),  # age has no bounds
    ("SELECT SUM(age) FROM people", None),
    ("SELECT SUM(x) FROM (SELECT salary AS x FROM people UNION ALL SELECT salary FROM people) u",
     None),
])
def test_the_planner_attaches_declared_bounds_to_a_bare_column_sum(sql, bounds):
    con = _con()
    con.execute("SET BOUNDS ON people (salary) BETWEEN 0 AND 100")
    plan = con.plan(sql)
    assert plan.bounds == bounds
    if bounds:
        from provsql_dp.sql.plan import explain

        assert f"bounds=[0, {bounds[1]:g}]" in explain(plan)


def test_avg_parts_carry_the_bounds_and_counts_none():
    con = _con()
    con.execute("SET BOUNDS ON people (salary) BETWEEN 0 AND 100")
    plan = con.plan("SELECT AVG(salary), COUNT(*) FROM people")
    assert isinstance(plan, Aggregates)
    assert [p.bounds for p in plan.parts] == [(0.0, 100.0), None, None]


def test_base_column_follows_bare_columns_only():
    con = _con()
    # the weight column of a SUM holds its total rewrite, so look at the derived table's columns
    plan = con.plan("SELECT SUM(s) FROM (SELECT salary AS s, salary + 1 AS t FROM people) AS x")
    inner = plan.child.child
    ids = dict(zip(inner.names, inner.ids))
    scan, column = base_column(inner, ids["s"])
    assert (scan.table, column) == ("people", "salary")
    assert base_column(inner, ids["t"]) is None
    assert base_column(inner, "no-such-id") is None
    assert isinstance(plan.weight, exp.Column)
