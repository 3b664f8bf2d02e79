"""The Spark backend agrees with DuckDB: same K-relations, same released values under a fixed
generator, and the same data-independent outcomes for analysts (the side-channel rule).

One local Spark session (``local[2]``, the ``spark`` fixture of ``tests/conftest.py``) serves the
module; every test copies a small DuckDB database to a Spark-engine connection
(:func:`spark_support.on_spark`). Subsets of the possible-worlds oracle and of the ProvSQL
conformance cases keep the module to about a minute.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from spark_support import canonical, on_spark
from test_possible_worlds import QUERIES, make_db, random_worlds, world_rows
from test_provsql_conformance import CASES, KNOWN_BUGS, REFUSED, _connect

import provsql_dp
from provsql_dp.errors import NotSupportedError, UnsupportedQueryError

pytestmark = pytest.mark.spark

# every fourth query of the oracle (joins, DISTINCT, unions, CTEs, COUNT and SUM among them)
ORACLE = list(range(0, len(QUERIES), 4))


@pytest.mark.parametrize("qi", ORACLE)
def test_possible_worlds_on_spark(spark, tmp_path, qi):
    """Spark's K-relation equals DuckDB's, and passes the possible-worlds oracle itself."""
    con, rng = make_db(7000 + qi)
    template, kind = QUERIES[qi]
    a = rng.randint(0, 6)
    sql = template.format(a=a, b=a + rng.randint(0, 4))
    sc = on_spark(con, spark, tmp_path / "c.duckdb")
    ours, theirs = con.provenance(sql), sc.provenance(sql)
    assert canonical(theirs) == canonical(ours), sql
    assert theirs.participant_list == ours.participant_list
    for world in random_worlds(rng, theirs.participants, k=3):
        expected = world_rows(con, sql, world)
        if kind == "rows":
            assert Counter(theirs.present(world)) == Counter(expected), (sql, world)
        else:
            got = float(theirs.weights[theirs.present_mask(world)].sum())
            assert got == pytest.approx(float(expected[0][0] or 0)), (sql, world)


def _conformance_params():
    out = []
    for case in CASES[::8]:
        if case["name"] in KNOWN_BUGS or case["name"] in REFUSED:
            continue
        out.append(pytest.param(case, id=case["name"]))
    return out


@pytest.mark.parametrize("case", _conformance_params())
def test_provsql_conformance_on_spark(spark, tmp_path, case):
    con = _connect(case)
    con.commit()
    sc = on_spark(con, spark, tmp_path / "c.duckdb")
    assert canonical(sc.provenance(case["query"])) == canonical(con.provenance(case["query"]))


# ---------------------------------------------------------------------- released values
def _released_db():
    con = provsql_dp.connect(":memory:")
    con.execute("CREATE TABLE person(id INT PRIMARY KEY, dept INT, age INT, salary DOUBLE)")
    con.execute("INSERT INTO person SELECT range, range % 3, range % 80, 1000.0 + range * 7.5 "
                "FROM range(200)")
    con.execute("CREATE TABLE visit(pid INT, place VARCHAR, amount INT)")
    con.execute("INSERT INTO visit SELECT range % 150, 'p' || (range % 5), range % 40 FROM range(600)")
    con.execute("CREATE TABLE dept(id INT, name VARCHAR)")
    con.execute("INSERT INTO dept VALUES (0, 'eng'), (1, 'ops'), (2, 'hr')")
    con.execute("CREATE TABLE edge(src INT, dst INT)")
    con.execute("INSERT INTO edge SELECT range % 30, (range * 7) % 30 FROM range(90)")
    con.execute("PROTECT TABLE person BY (id) AS people")
    con.execute("PROTECT TABLE visit BY (pid) AS people")
    con.execute("PROTECT TABLE edge BY (src, dst) AS node")
    con.execute("SET BOUNDS ON person (salary) BETWEEN 0 AND 5000")
    con.execute("SET GROUP KEYS ON visit (place) VALUES ('p0', 'p1', 'p2', 'p3', 'p4')")
    con.execute("CREATE POLICY age_line ON person (age) AS LINE DOMAIN [0, 100) WIDTH 10")
    con.execute("SET PRIVACY BUDGET 1000")
    con.commit()
    return con


RELEASES = [
    "SELECT COUNT(*) FROM person WHERE dept = 1",  # Laplace
    "SELECT SUM(salary) FROM person WHERE dept < 2",  # Laplace, bounded SUM
    "SELECT COUNT(*) FROM visit v JOIN person p ON p.id = v.pid",  # single-owner
    "SELECT SUM(v.amount) FROM visit v JOIN person p ON p.id = v.pid",  # single-owner SUM
    "SELECT place, SUM(amount - 20) FROM visit GROUP BY place",  # signed, per group
    "SELECT place, COUNT(*) FROM visit GROUP BY place",  # declared group keys
    "SELECT d.name, COUNT(*) FROM person p JOIN dept d ON d.id = p.dept GROUP BY d.name",
    "SELECT COUNT(*) FROM edge e1 JOIN edge e2 ON e1.dst = e2.src",  # recursive mechanism (LP)
    "SELECT COUNT(*) FROM person WHERE age < 30",  # the Blowfish policy route
]


def test_same_released_values(spark, tmp_path):
    """Every path (Laplace, single-owner, GROUP BY, LP, policy) releases the same values on
    both engines when the generator is seeded alike, and charges the same ε."""
    con = _released_db()
    sc = on_spark(con, spark, tmp_path / "c.duckdb")
    mechanisms = set()
    for sql in RELEASES:
        outs = []
        for c in (con, sc):
            c._rng = np.random.default_rng(12345)
            cur = c.execute(f"{sql} WITH EPSILON 0.5")
            outs.append((cur.fetchall(), cur.privacy.mechanism, cur.privacy.epsilon))
        assert outs[0] == outs[1], sql
        mechanisms.add(outs[0][1])
    assert {"laplace", "recursive", "blowfish"} <= mechanisms, mechanisms


# ---------------------------------------------------------------------- side channels
# Neighbouring databases: the base, and plants that add one person with extreme values
PLANTS = {
    "base": [],
    "overflow": ["(1000, 'CANARY_9q', 2147483647, 9223372036854775807, 1e308, DATE '9999-12-31')"],
    "nan": ["(1000, 'CANARY_9q', -2147483648, -9223372036854775808, 'NaN'::DOUBLE, NULL)"],
    "text": ["(1000, 'CANARY_9q' || repeat('x', 5000), NULL, NULL, 'inf'::DOUBLE, DATE '0001-01-01')"],
}

STATEMENTS = [
    "SELECT COUNT(*) FROM people WHERE 100 // age > 1",
    "SELECT COUNT(*) FROM people WHERE age * 2147483647 > 0",
    "SELECT COUNT(*) FROM people WHERE big + 1 > big",
    "SELECT COUNT(*) FROM people WHERE CAST(name AS INTEGER) IS NULL",
    "SELECT SUM(x * 1e300) FROM people",
    "SELECT COUNT(*) FROM people WHERE born + INTERVAL 1 DAY > DATE '2000-01-01'",
    "SELECT COUNT(*) FROM people p JOIN visits v ON v.pid = p.id WHERE v.amount / p.age > 2",
    "SELECT COUNT(*) FROM people WHERE random() > 0.5",  # refused, with the same text
]


def _neighbour(plant: str):
    con = provsql_dp.connect(":memory:")
    con.execute("CREATE TABLE people(id INT, name VARCHAR, age INT, big BIGINT, x DOUBLE, born DATE)")
    con.execute("INSERT INTO people VALUES (1, 'Alice', 34, 10, 0.5, DATE '1990-01-01'), "
                "(2, 'Bob', 45, 20, 1.5, DATE '1980-05-05'), (3, 'Carol', 29, 30, 2.0, DATE '1995-07-07')")
    for row in PLANTS[plant]:
        con.execute(f"INSERT INTO people VALUES {row}")
    con.execute("CREATE TABLE visits(pid INT, amount BIGINT)")
    con.execute("INSERT INTO visits VALUES (1, 10), (2, 20), (3, 5)")
    if PLANTS[plant]:
        con.execute("INSERT INTO visits VALUES (1000, 9223372036854775807)")
    con.execute("PROTECT TABLE people BY (id) AS people")
    con.execute("PROTECT TABLE visits BY (pid) AS people")
    con.execute("SET PRIVACY BUDGET 1000 FOR USER analyst")
    con.commit()
    return con


def _outcome(con, sql):
    try:
        cur = con.execute(f"{sql} WITH EPSILON 0.5")
        rows = cur.fetchall()
        return ("ok", len(rows), [type(v).__name__ for v in rows[0]], cur.privacy.mechanism,
                cur.privacy.epsilon)
    except provsql_dp.Error as e:
        return ("error", type(e).__name__, str(e))


def test_outcomes_do_not_depend_on_the_data_on_spark(spark, tmp_path):
    """An analyst's outcome (answer shape, mechanism and ε, or error class and text) is the same
    on every neighbouring database on Spark, never quotes a planted value — and it is the
    outcome DuckDB gives."""
    per_db = {}
    for plant in PLANTS:
        con = _neighbour(plant)
        sc = on_spark(con, spark, tmp_path / f"{plant}.duckdb", role="analyst", user="analyst")
        per_db[plant] = [_outcome(sc, s) for s in STATEMENTS]
        if plant == "base":
            duck = provsql_dp.connect(str(tmp_path / "base.duckdb"), role="analyst", user="analyst")
            on_duck = [_outcome(duck, s) for s in STATEMENTS]
            duck.close()
        assert "CANARY" not in repr(per_db[plant])
        sc.close()
    assert [o[0] for o in per_db["base"]] == ["ok"] * (len(STATEMENTS) - 1) + ["error"]
    for plant, outcomes in per_db.items():
        for sql, a, b in zip(STATEMENTS, per_db["base"], outcomes):
            assert a == b, (plant, sql, a, b)
    assert per_db["base"] == on_duck


# ---------------------------------------------------------------------- the engine itself
def test_catalog_of_record_reattaches_by_name(spark, tmp_path):
    """Declarations, budgets and the ledger stay in the DuckDB file; a new connection — an
    analyst's — finds the Spark tables again by name."""
    spark.range(100).selectExpr("id", "id % 7 AS g").createOrReplaceTempView("reattach_t")
    path = str(tmp_path / "ledger.duckdb")
    cur = provsql_dp.connect(path, engine=spark)
    cur.attach("t", "reattach_t")
    cur.execute("PROTECT TABLE t")  # each row a participant, identified by its rowid
    cur.execute("SET PRIVACY BUDGET 2 FOR USER ann")
    cur.commit()
    with pytest.raises(NotSupportedError, match="attached from Spark"):  # not the empty mirror
        cur.execute("SELECT count(*) FROM t")
    cur.close()
    ann = provsql_dp.connect(path, engine=spark, role="analyst", user="ann")
    res = ann.execute("SELECT COUNT(*) FROM t WHERE g = 3 WITH EPSILON 1")
    assert res.privacy.mechanism == "laplace" and res.privacy.remaining == 1
    ann.close()
    with pytest.raises(NotSupportedError, match="engine=spark_session"):
        provsql_dp.connect().attach("t")


def test_unsupported_function_is_refused_before_anything_runs(spark, tmp_path):
    from provsql_dp.provenance.backends.spark import SparkBackend

    be = SparkBackend(spark)
    with pytest.raises(NotSupportedError, match="not attached"):
        be.to_spark("SELECT * FROM nowhere")
    be._views["t"] = "v"
    with pytest.raises(UnsupportedQueryError, match="no total equivalent on the Spark engine"):
        be.to_spark("SELECT jaccard(x, 'ab') FROM t")


def test_results_cross_back_as_arrays(spark):
    """fetchnumpy gives numpy arrays (masked where NULL), never Python rows."""
    from provsql_dp.provenance.backends.spark import SparkBackend

    spark.sql("SELECT * FROM VALUES (1, 'a', DATE '2020-01-02', 1.5D), "
              "(NULL, NULL, NULL, NULL) AS t(a, s, d, x)").createOrReplaceTempView("arrays_t")
    be = SparkBackend(spark)
    be.attach("t", "arrays_t")
    before = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", "true")  # the analyst's session may be ANSI
    try:  # the shared session's setting is put back whatever fails (tests run in any order)
        cols, types = be.fetchnumpy(
            "SELECT a, s, d, x, CAST(a AS DECIMAL(10, 2)) AS dec FROM t ORDER BY a")
        assert types == ["INTEGER", "VARCHAR", "DATE", "DOUBLE", "DOUBLE"]
        assert all(isinstance(c, np.ma.MaskedArray) for c in cols.values())
        # ORDER BY keeps DuckDB's meaning (NULLS LAST) on Spark
        assert cols["a"].mask.tolist() == [False, True] and int(cols["a"][0]) == 1
        assert cols["d"].dtype == np.dtype("datetime64[D]")
        assert spark.conf.get("spark.sql.ansi.enabled") == "true"  # untouched by the query
        # under non-ANSI semantics a bad cast is NULL, not an error that a row's value decides
        cols, _ = be.fetchnumpy("SELECT CAST(s AS INT) AS n, 2147483647 + a AS o FROM t ORDER BY a")
        assert cols["n"].mask.all()
    finally:
        spark.conf.set("spark.sql.ansi.enabled", before)


# ---------------------------------------------------------------------- ids and tuples in the engine
# grouped captures whose participants come back from slot columns of every key kind: integer
# owner columns, rowids, composite (int, int) and (int, text) keys, NULL slots of union branches
ENGINE_IDS = [
    "SELECT DISTINCT e1.src, e2.dst FROM edge e1, edge e2 WHERE e1.dst = e2.src AND e1.src <> e2.dst",
    "SELECT DISTINCT x FROM (SELECT src AS x FROM edge UNION ALL SELECT owner FROM item) t",
    "SELECT DISTINCT l.w FROM link l JOIN visit v ON v.person = l.a",
    "SELECT DISTINCT p.city FROM person p JOIN visit v ON v.person = p.id UNION SELECT name FROM item",
    "SELECT COUNT(*) FROM (SELECT DISTINCT src FROM edge) t",
    "SELECT i.name, v.place FROM item i JOIN visit v ON v.person = i.owner",
]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_engine_assigns_participant_and_tuple_ids(spark, tmp_path, seed):
    """On Spark the capture query returns participant ids (a join with the sorted dictionary)
    and numbers grouped tuples within hash partitions, not in one global window; the
    K-relations (participant numbering included) are DuckDB's, on random small databases."""
    from provsql_dp.provenance.capture import capture_sql

    con, _ = make_db(9100 + seed)
    sc = on_spark(con, spark, tmp_path / "c.duckdb")
    be = sc._engine
    seen = []
    real = be.fetchnumpy

    def spy(sql, **kw):
        seen.append(sql)
        return real(sql, **kw)

    be.fetchnumpy = spy
    ids_returned = 0
    for sql in ENGINE_IDS:
        seen.clear()
        ours, theirs = con.provenance(sql), sc.provenance(sql)
        # the dictionaries were ranked in Spark: the capture query is the only fetch
        assert len(seen) == 1, seen
        top = seen[-1]
        assert canonical(theirs) == canonical(ours), sql
        assert theirs.participant_list == ours.participant_list, sql  # keys fetched lazily
        grouped = capture_sql(con.plan(sql))[2]
        assert ("__pk" in top) == ("AS __i" in top), top
        ids_returned += top.count("AS __i")
        if grouped:
            assert "PARTITION BY hash(" in top and "__t" not in top, top
        assert be._key_views == set(), "dictionary views are dropped after the capture"
    assert ids_returned >= len(ENGINE_IDS)  # every query returns at least one slot as ids
