"""The analyst statement compiler (provsql_dp.sql.analyst): what it emits for each statement
kind, how it resolves names by scope, and what it refuses (statement by statement, no DB-API)."""

from __future__ import annotations

import duckdb
import pytest
import sqlglot
from sqlglot import exp

from provsql_dp.errors import PrivacyError
from provsql_dp.sql import dialect as d
from provsql_dp.sql.analyst import compile_statement
from provsql_dp.sql.analyst._query import _cte_targets
from provsql_dp.sql.catalog import Catalog


@pytest.fixture(scope="module")
def catalog():
    con = duckdb.connect()
    con.execute("""
        CREATE TABLE pub(k INT PRIMARY KEY, v VARCHAR);
        CREATE TABLE other(k INT);
        CREATE SCHEMA s; CREATE TABLE s.inner_t(x INT);
        CREATE VIEW pv AS WITH c AS (SELECT k FROM pub) SELECT k FROM c;
        CREATE VIEW s.sv AS SELECT x FROM inner_t;
    """)
    return Catalog(con)


def emit(catalog, sql):
    return compile_statement(catalog, d.parse_one(sql)).sql


def test_real_tables_are_fully_qualified_and_keep_their_name_as_alias(catalog):
    assert emit(catalog, "SELECT pub.k FROM pub") == 'SELECT pub.k FROM "memory"."main"."pub" AS pub'
    assert emit(catalog, 'SELECT x.k FROM "PUB" AS x') == 'SELECT x.k FROM "memory"."main"."pub" AS x'
    assert '"memory"."s"."inner_t"' in emit(catalog, "SELECT * FROM s.inner_t")


def test_ctes_are_renamed_in_their_definition_and_their_references(catalog):
    sql = emit(catalog, "WITH pub AS (SELECT 1 AS k), b AS (SELECT k FROM pub) SELECT * FROM b, other")
    assert sql == ('WITH "_pdp_cte_1" AS (SELECT 1 AS k), "_pdp_cte_2" AS (SELECT k FROM '
                   '"_pdp_cte_1" AS pub) SELECT * FROM "_pdp_cte_2" AS b, "memory"."main"."other" AS other')


def test_a_cte_resolves_only_in_its_scope(catalog):
    """sqlglot's scope analysis: a CTE of a subquery is not visible to its sibling."""
    tree = d.parse_one("SELECT * FROM (WITH other AS (SELECT 1) SELECT * FROM other) a, other")
    inner = [t for t in tree.find_all(exp.Table) if t.find_ancestor(exp.Subquery)]
    outer = [t for t in tree.find_all(exp.Table) if not t.find_ancestor(exp.Subquery)]
    targets = _cte_targets(tree)
    assert [id(t) in targets for t in inner + outer] == [True, False]
    sql = emit(catalog, "SELECT * FROM (WITH other AS (SELECT 1) SELECT * FROM other) a, other")
    assert '"_pdp_cte_1" AS other' in sql and '"memory"."main"."other" AS other' in sql


def test_recursive_cte_references_resolve_to_the_cte(catalog):
    sql = emit(catalog, "WITH RECURSIVE pub(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM pub "
                        "WHERE n < 3) SELECT * FROM pub")
    assert '"memory"' not in sql and sql.count('"_pdp_cte_1"') == 3


def test_a_non_recursive_cte_body_naming_itself_reads_the_table(catalog):
    sql = emit(catalog, "WITH pub AS (SELECT k FROM pub) SELECT * FROM pub")
    assert 'FROM "memory"."main"."pub" AS pub)' in sql


def test_views_are_inlined_and_their_names_looked_up_in_their_schema(catalog):
    sql = emit(catalog, "SELECT * FROM pv")
    assert "pv" in sql and '"memory"."main"."pub"' in sql and "FROM pv" not in sql
    assert '"memory"."s"."inner_t"' in emit(catalog, "SELECT * FROM s.sv")


def test_describe_summarize_explain_and_show(catalog):
    assert compile_statement(catalog, d.parse_one("DESCRIBE pub")).sql is None
    assert emit(catalog, "DESCRIBE SELECT k FROM pub").startswith("DESCRIBE SELECT k FROM \"memory\"")
    assert emit(catalog, "SUMMARIZE pv").startswith("SUMMARIZE SELECT * FROM (WITH")
    assert emit(catalog, "EXPLAIN ANALYZE FROM pub").startswith("EXPLAIN ANALYZE SELECT * FROM \"memory\"")
    assert emit(catalog, "SHOW ALL TABLES").startswith("SELECT * FROM (SHOW ALL TABLES) WHERE")
    assert compile_statement(catalog, d.parse_one("COPY pub TO 'x'")) is None  # refused by roles


@pytest.mark.parametrize("sql", [
    "SELECT * FROM read_csv('x.csv')", "SELECT * FROM 'x.csv'", "SELECT * FROM nope",
    "SELECT * FROM pub AT (VERSION => 1)", "SELECT * FROM pub TABLESAMPLE (1 ROWS)",
    "SELECT getenv('HOME')", "SELECT * FROM pub, unnest([1])", "SELECT current_setting('threads')",
    "SELECT * FROM duckdb_tables()", "SELECT * FROM information_schema.tables",
    "EXPLAIN COPY pub TO 'x'", "DESCRIBE read_csv('x.csv')", "SUMMARIZE glob('*')",
])
def test_refused(catalog, sql):
    """Refused here, or not a kind the compiler knows (None: roles refuses it by name)."""
    try:
        out = compile_statement(catalog, d.parse_one(sql))
    except PrivacyError:
        return
    assert out is None, out


def test_the_emitted_text_is_read_back_and_checked(catalog):
    from provsql_dp.sql.analyst._query import _Compiler

    c = _Compiler(catalog)
    c.query(d.parse_one("SELECT k FROM pub"))
    c.verify('SELECT k FROM "memory"."main"."pub"')
    for bad in ("SELECT k FROM pub", 'SELECT * FROM "memory"."main"."other"',
                "SELECT * FROM read_text('x')", "SELECT getenv('x') FROM \"memory\".\"main\".\"pub\""):
        with pytest.raises(PrivacyError):
            c.verify(bad)
    assert sqlglot.parse_one(emit(catalog, "SELECT k /* a comment */ FROM pub"), read="duckdb").comments in (None, [])


def test_public_statements_have_the_size_models_caps():
    """A public statement cannot grow strings past the size model's caps (its cost per row is
    bounded at plan time, as a private query's): refused naming the expression, before DuckDB
    binds (and folds) it; capped with left(…, n) it is accepted."""
    import duckdb

    from provsql_dp.errors import UnsupportedQueryError
    from provsql_dp.sql import dialect as d
    from provsql_dp.sql.analyst import compile_statement
    from provsql_dp.sql.catalog import Catalog

    con = duckdb.connect()
    con.execute("CREATE TABLE pub(s VARCHAR)")
    grow = "replace(replace(replace(s, 'a', 'aaaaaaaaaa'), 'a', 'aaaaaaaaaa'), 'a', 'aaaaaaaaaa')"
    for sql in (f"SELECT {grow} FROM pub", f"SELECT count(*) FROM pub WHERE {grow} = 'x'",
                f"SELECT max({grow}) FROM pub", f"SELECT s FROM pub ORDER BY {grow}"):
        with pytest.raises(UnsupportedQueryError, match="(?i)replace.*bytes per byte"):
            compile_statement(Catalog(con), d.parse_one(sql))
    ok = "SELECT replace(left(s, 100), 'a', 'aaaaaaaaaa'), count(*) OVER () FROM pub"
    assert compile_statement(Catalog(con), d.parse_one(ok)).sql is not None
