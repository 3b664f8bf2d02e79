"""The aggregates analysts use (issue 28, item 4), from SQL: SUM of an expression whose range
the statement proves, FILTER (WHERE …), VAR/STDDEV of a bounded column, COUNT(DISTINCT) over
declared keys, and quantiles on a grid — routes, ε split, intervals, refusals that charge
nothing, and the route's true parts checked on neighbouring databases."""

import numpy as np
import pytest

import provsql_dp
from provsql_dp.errors import ProgrammingError, UnsupportedQueryError
from provsql_dp.privacy import distinct_route, variance_route


def budget(con):
    return con.execute("SHOW PRIVACY BUDGET").fetchall()[0][2]


def _penguins(c, n=300, table="penguins"):
    c.execute(f"CREATE TABLE {table}(id INT PRIMARY KEY, species VARCHAR, sex VARCHAR, "
              "body_mass_g DOUBLE, flipper DOUBLE)")
    c.execute(f"""INSERT INTO {table} SELECT i,
        ['Adelie', 'Gentoo', 'Chinstrap'][i % 3 + 1], CASE WHEN i % 2 = 0 THEN 'male'
        ELSE 'female' END, 3000 + (i * 37) % 3000, 170 + (i * 13) % 60 FROM range({n}) t(i)""")


@pytest.fixture
def con():
    c = provsql_dp.connect()
    _penguins(c)
    c.execute("PROTECT TABLE penguins")
    c.execute("SET PRIVACY BUDGET 100")
    c.execute("SET BOUNDS ON penguins (body_mass_g) BETWEEN 2500 AND 6500")
    c.execute("SET GROUP KEYS ON penguins (species) VALUES ('Adelie', 'Gentoo', 'Chinstrap')")
    c._rng = np.random.default_rng(5)
    return c


def explain(con, sql):
    return con.execute("EXPLAIN PRIVACY " + sql).fetchall()


@pytest.mark.parametrize("expr", ["CASE WHEN sex = 'male' THEN 1 ELSE 0 END",
                                  "(sex = 'male')::INT", "IF(sex = 'male', 1, 0)",
                                  "COALESCE(CASE WHEN sex = 'male' THEN 1 END, 0)"])
def test_sum_of_a_bounded_expression_is_as_noisy_as_the_count(con, expr):
    sql = f"SELECT SUM({expr}) FROM penguins WITH EPSILON 1"
    row = explain(con, sql)[0]
    count = explain(con, "SELECT COUNT(*) FROM penguins WHERE sex = 'male' WITH EPSILON 1")[0]
    assert row[8] == "laplace" and "sensitivity 1" in row[2]
    assert row[5] == pytest.approx(count[5], rel=0.05)  # the same noise (the count: on integers)
    cur = con.execute(sql)
    (v,), = cur.fetchall()
    lo, hi = cur.privacy.intervals()[0][0]
    assert lo <= 150 <= hi and abs(v - 150) < 15


def test_sum_of_a_clamp_and_a_product(con):
    cur = con.execute("SELECT SUM(LEAST(GREATEST(flipper, 180), 220) * 2) FROM penguins "
                      "WITH EPSILON 1")
    assert cur.privacy.routes == ("laplace",)
    truth = float((np.clip(170 + (np.arange(300) * 13) % 60, 180, 220) * 2).sum())
    (v,), = cur.fetchall()
    lo, hi = cur.privacy.intervals()[0][0]
    assert lo <= truth <= hi and hi - lo < 0.03 * truth


def test_filtered_aggregates_compose(con):
    sql = ("SELECT COUNT(*) FILTER (WHERE sex = 'male') AS m, "
           "SUM(body_mass_g) FILTER (WHERE species = 'Adelie') AS s, "
           "AVG(body_mass_g) FILTER (WHERE sex = 'female') AS a FROM penguins WITH EPSILON 1")
    rows = explain(con, sql)
    assert [r[8] for r in rows] == ["laplace"] * 4  # m, s, AVG's SUM and COUNT
    cur = con.execute(sql)
    (m, s, a), = cur.fetchall()
    i = np.arange(300)
    mass = 3000 + (i * 37) % 3000
    truth = (150, mass[i % 3 == 0].sum(), mass[i % 2 == 1].mean())
    for got, want, (lo, hi) in zip((m, s, a), truth, cur.privacy.intervals()[0]):
        assert lo <= want <= hi and lo <= got <= hi
    assert cur.privacy.epsilon == 1.0 and budget(con) == "1"
    # the count alone, filtered, is the COUNT … WHERE
    one = explain(con, "SELECT COUNT(*) FILTER (WHERE sex = 'male') FROM penguins WITH EPSILON 1")
    alone = explain(con, "SELECT COUNT(*) FROM penguins WHERE sex = 'male' WITH EPSILON 1")
    assert one[0][5] == pytest.approx(alone[0][5])


def test_variance_and_stddev(con):
    truth = 845.81  # stddev_samp of 3000 + (i*37) % 3000 over i < 300
    cur = con.execute("SELECT STDDEV(body_mass_g) AS sd FROM penguins WITH EPSILON 1")
    (v,), = cur.fetchall()
    assert cur.privacy.routes == ("variance",) and cur.description[0][0] == "sd"
    lo, hi = cur.privacy.intervals()[0][0]
    assert 0 <= lo <= truth <= hi <= 2000 and abs(v - truth) < 150
    row = explain(con, "SELECT VAR_POP(body_mass_g) FROM penguins WITH EPSILON 1")[0]
    assert row[8] == "variance" and "ε·1/4" in row[2] and "ε·1/2" in row[2]
    cur = con.execute("SELECT species, VAR_SAMP(body_mass_g) FROM penguins GROUP BY species "
                      "WITH EPSILON 1")
    rows = cur.fetchall()
    assert sorted(r[0] for r in rows) == ["Adelie", "Chinstrap", "Gentoo"]
    assert all(0 <= r[1] <= 2000 ** 2 * 2 for r in rows)
    assert budget(con) == "2"


def test_variance_refusals_charge_nothing(con):
    with pytest.raises(ProgrammingError, match="SET BOUNDS ON penguins \\(flipper\\)"):
        con.execute("SELECT VAR_POP(flipper) FROM penguins WITH EPSILON 1")
    with pytest.raises(UnsupportedQueryError, match="pure-ε"):  # beside a COUNT: answered
        con.execute("SELECT VAR_POP(body_mass_g), COUNT(*) FROM penguins WITH EPSILON 1 "
                    "DELTA 1e-6")  # under ε only (test_peer_sql_forms.py)
    assert budget(con) == "0"


def test_count_distinct_over_declared_keys(con):
    cur = con.execute("SELECT COUNT(DISTINCT species) FROM penguins WITH EPSILON 1")
    (v,), = cur.fetchall()
    assert cur.privacy.routes == ("distinct",) and v == 3
    lo, hi = cur.privacy.intervals()[0][0]
    assert lo <= 3 <= hi <= 3
    # without declared keys the column keeps its former route
    row = explain(con, "SELECT COUNT(DISTINCT sex) FROM penguins WITH EPSILON 1")[0]
    assert row[8] != "distinct"


def test_quantile_is_close_and_inside_the_bounds(con):
    cur = con.execute("SELECT MEDIAN(body_mass_g) FROM penguins WITH EPSILON 1")
    (v,), = cur.fetchall()
    assert abs(v - 4500) < 400
    assert cur.privacy.intervals()[0][0] == (2500.0, 6500.0)
    cur = con.execute("SELECT MEDIAN(body_mass_g) FROM penguins WITH EPSILON 0.5")
    lo, hi = cur.privacy.intervals()[0][0]
    assert 2500 <= lo and hi <= 6500


def _neighbour_pair(seed):
    """Two connections whose penguins differ by one participant's row (the last one)."""
    out = []
    for n in (60, 61):
        c = provsql_dp.connect()
        _penguins(c, n)
        c.execute(f"UPDATE penguins SET body_mass_g = {1000 + 997 * seed % 9000}, species = "
                  f"'{['Adelie', 'Gentoo', 'Chinstrap', 'Other'][seed % 4]}' WHERE id = 60")
        c.execute("PROTECT TABLE penguins")
        c.execute("SET BOUNDS ON penguins (body_mass_g) BETWEEN 2500 AND 6500")
        c.execute("SET GROUP KEYS ON penguins (species) VALUES ('Adelie', 'Gentoo', 'Chinstrap')")
        out.append(c)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_route_parts_move_by_their_sensitivity_on_neighbours(seed):
    """The true parts the routes read (through their own SQL), on databases one row apart."""
    import sqlglot
    a, b = _neighbour_pair(seed)
    tree = sqlglot.parse_one("SELECT VAR_POP(body_mass_g) FROM penguins WHERE sex = 'male' "
                             "OR id = 60", read="duckdb")
    pa, pb = (c.execute(variance_route.prepare(c, tree).sql().replace('"memory".', "")
                        ).fetchall()[0] for c in (a, b))
    assert abs(pa[0] - pb[0]) <= 1 and abs(pa[1] - pb[1]) <= 2000 + 1e-6
    assert abs(pa[2] - pb[2]) <= 2000 ** 2 + 1e-3
    tree = sqlglot.parse_one("SELECT COUNT(DISTINCT species) FROM penguins", read="duckdb")
    ca, cb = (dict(c.execute(distinct_route.prepare(c, tree).sql().replace('"memory".', "")
                             ).fetchall()) for c in (a, b))
    keys = set(ca) | set(cb)
    assert sum(abs(ca.get(k, 0) - cb.get(k, 0)) for k in keys) <= 1


@pytest.mark.parametrize("seed", range(4))
def test_filtered_and_proved_range_parts_move_by_their_sensitivity(seed):
    """FILTER (WHERE …) and a SUM of a CASE of constants, through the Laplace route's own SQL on
    databases one row apart: each part's true value moves by at most its sensitivity (1, and
    max(|lo|, |hi|) of the proved range)."""
    from provsql_dp.privacy.fast_path import _laplace_sql
    from provsql_dp.sql.plan import Aggregates

    sql = ("SELECT COUNT(*) FILTER (WHERE sex = 'male' OR id = 60), "
           "SUM(CASE WHEN species = 'Gentoo' THEN 2 ELSE -1 END) FILTER (WHERE id % 2 = 0), "
           "SUM(LEAST(GREATEST(body_mass_g, 3000), 5000) / 1000) FROM penguins")
    a, b = _neighbour_pair(seed)
    values = []
    for c in (a, b):
        plan = c.plan(sql)
        parts = plan.parts if isinstance(plan, Aggregates) else (plan,)
        values.append([c._duck.execute(_laplace_sql(p, p.bounds, False)[0]).fetchone()[0] or 0
                       for p in parts])
        bounds = [p.bounds for p in parts]
    assert bounds[0] is None and bounds[1] == (-1.0, 2.0)
    assert bounds[2][0] <= 3 and 5 <= bounds[2][1] < 5.001
    sens = [1, 2, 5.001]
    for x, y, s in zip(*values, sens):
        assert abs(x - y) <= s


def test_count_distinct_when_participants_own_several_rows():
    c = provsql_dp.connect()
    c.execute("CREATE TABLE v(owner INT, s VARCHAR); INSERT INTO v SELECT range % 40, "
              "['a', 'b', 'c'][range % 3 + 1] FROM range(600); PROTECT TABLE v BY (owner)")
    c.execute("SET PRIVACY BUDGET 10; SET GROUP KEYS ON v (s) VALUES ('a', 'b', 'c', 'd')")
    c._rng = np.random.default_rng(1)
    row = explain(c, "SELECT COUNT(DISTINCT s) FROM v WITH EPSILON 2")[0]
    assert row[8] == "distinct" and "Δ = 4" in row[2]
    cur = c.execute("SELECT COUNT(DISTINCT s) FROM v WITH EPSILON 2")
    (v,), = cur.fetchall()
    lo, hi = cur.privacy.intervals()[0][0]
    assert lo <= 3 <= hi and v in (3, 4) and cur.privacy.releases[0].sensitivity == 4


def test_a_filter_on_a_single_table_statistic_is_its_where(con):
    for stat in ("MEDIAN(body_mass_g)", "STDDEV_POP(body_mass_g)", "COUNT(DISTINCT species)"):
        a = explain(con, f"SELECT {stat} FILTER (WHERE sex = 'male') FROM penguins "
                         "WITH EPSILON 1")[0]
        b = explain(con, f"SELECT {stat} FROM penguins WHERE sex = 'male' WITH EPSILON 1")[0]
        assert a == b
    cur = con.execute("SELECT MEDIAN(body_mass_g) FILTER (WHERE species = 'Gentoo') AS m "
                      "FROM penguins WITH EPSILON 1")
    assert cur.description[0][0] == "m" and cur.privacy.routes == ("quantile",)


@pytest.mark.parametrize("fn", ["VAR_POP", "STDDEV", "MEDIAN"])
def test_grouping_by_the_statistics_own_column_is_refused_in_its_words(con, fn):
    """The variance route shares the quantile route's GROUP BY checks: a refusal names the
    statistic asked for (it said "the quantile's own column" for a variance)."""
    con.execute("SET GROUP KEYS ON penguins (body_mass_g) VALUES (3000, 4000)")
    with pytest.raises(UnsupportedQueryError, match=f"{fn}(_SAMP)?\\(body_mass_g\\) GROUP BY "
                       "body_mass_g: "
                       f"grouping by {fn}(_SAMP)?'s own column .* Nothing was charged") as e:
        con.execute(f"SELECT body_mass_g, {fn}(body_mass_g) FROM penguins GROUP BY body_mass_g "
                    "WITH EPSILON 1")
    assert "quantile" not in str(e.value) or fn == "MEDIAN"
    assert budget(con) == "0"
