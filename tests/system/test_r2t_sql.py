"""R2T end to end: OPTIONS (mechanism = 'r2t') from SQL, its refusals, its fallback, graph.count."""

from __future__ import annotations

from fractions import Fraction

import networkx as nx
import numpy as np
import pytest

from provsql_dp.errors import InterfaceError, ProgrammingError, SolverError
from provsql_dp.graph import count, true_count
from provsql_dp.mechanisms.r2t import race as r2t
from provsql_dp.mechanisms.r2t import truncation as r2t_lp

from graph_sql_kit import TRIANGLES, example_db


@pytest.fixture
def con():
    return example_db(budget=5, seed=7)


def state(c):
    return c.ledger.budget(c.user), len(c.ledger.entries())


def test_r2t_from_sql_charges_and_reports(con):
    cur = con.execute(TRIANGLES + " WITH EPSILON 1 OPTIONS (mechanism = 'r2t', max_contribution = 64)")
    (row,) = cur.fetchall()
    info = cur.privacy
    assert info.mechanism == "r2t" and info.epsilon == Fraction(1)
    (rel,) = info.releases
    assert rel.params["thresholds"] == r2t.thresholds(64) == (8.0, 64.0)  # the rule's L = 2
    assert row[0] == rel.value >= 0 and info.noise_bound(0.95)[0] > 0
    assert con.ledger.entries()[-1].mechanism == "r2t"


def test_lp_gap_is_a_public_option_that_widens_the_noise(con):
    cur = con.execute(TRIANGLES + " WITH EPSILON 1 OPTIONS (mechanism = 'r2t', "
                      "max_contribution = 64, lp_gap = 0.25)")
    (row,) = cur.fetchall()
    (rel,) = cur.privacy.releases
    exact = r2t.plan(1.0, 64, r2t.DEFAULT_BETA)[0]
    assert rel.params["lp_gap"] == 0.25 and row[0] == rel.value >= 0
    assert rel.params["noise_scales"] == pytest.approx([1.25 * p.noise_scale for p in exact])


def test_group_by_splits_epsilon(con):
    con.execute("SET GROUP KEYS ON employees (dept_id) VALUES (1, 2, 3)")
    cur = con.execute("SELECT dept_id, SUM(salary) FROM employees GROUP BY dept_id WITH EPSILON 1 "
                      "OPTIONS (mechanism = 'r2t', lower = 0, upper = 200000, "
                      "max_contribution = 262144)")
    rows = cur.fetchall()
    assert len(rows) == 3 and cur.privacy.mechanism == "r2t"
    assert all(r.epsilon == pytest.approx(1 / len(rows)) for r in cur.privacy.releases)


@pytest.mark.parametrize("options, match", [
    ("mechanism = 'r2t', theta = 2", "does not apply to mechanism = 'r2t'"),
    ("mechanism = 'r2t', max_contribution = 'x'", "positive number"),
    ("mechanism = 'r2t', beta = 2", "strictly between 0 and 1"),
    ("mechanism = 'r2t', max_contribution = 1e30", "at most 2"),
    ("mechanism = 'r2t', lp_gap = -0.5", "nonnegative number"),
    ("mechanism = 'r2t', lp_gap = 'x'", "nonnegative number"),
])
def test_bad_options_are_refused_before_any_charge(con, options, match):
    before = state(con)
    with pytest.raises(ProgrammingError, match=match):
        con.execute(TRIANGLES + f" WITH EPSILON 1 OPTIONS ({options})")
    assert state(con) == before


def test_a_signed_sum_is_refused(con):
    before = state(con)
    with pytest.raises(ProgrammingError, match="nonnegative sums"):
        con.execute("SELECT SUM(salary) FROM employees WITH EPSILON 1 OPTIONS (mechanism = 'r2t')")
    assert state(con) == before


def test_lp_failure_releases_the_data_independent_fallback(con, monkeypatch):
    def boom(*a, **k):
        raise SolverError("time limit")

    monkeypatch.setattr(r2t_lp, "solve_lp", boom)
    # loose bounds, so that the race must solve an LP (and meet the failure)
    monkeypatch.setattr(r2t_lp.R2TModel, "bounds", lambda self, tau: (0.0, self.total))
    monkeypatch.setattr(r2t_lp.R2TModel, "dual_bound", lambda self, tau: self.total)
    con._rng = np.random.default_rng(3)
    cur = con.execute(TRIANGLES + " WITH EPSILON 4 OPTIONS (mechanism = 'r2t', max_contribution = 8)")
    rng = np.random.default_rng(3)
    r2t.fallback(4.0, max_contribution=8, rng=rng)  # the race's draws, made before its LP fails
    expected = r2t.fallback(4.0, max_contribution=8, rng=rng).value
    assert cur.fetchall()[0][0] == expected
    assert cur.privacy.epsilon == Fraction(4)  # spent either way
    incidents = con._duck.execute("SELECT what FROM _provsql_dp.incidents").fetchall()
    assert any("R2T" in w for (w,) in incidents), incidents


def test_graph_count_with_r2t():
    g = nx.gnp_random_graph(60, 0.3, seed=2)
    truth = true_count(g, "triangle")
    vals = [count(g, "triangle", privacy="edge", epsilon=2.0, mechanism="r2t",
                  max_contribution=64, rng=np.random.default_rng(s)).value for s in range(5)]
    assert all(v <= truth * 1.5 for v in vals) and np.median(vals) > 0.3 * truth
    with pytest.raises(InterfaceError, match="does not apply to R2T"):
        count(g, "triangle", epsilon=1.0, mechanism="r2t", mu=1.0)
    with pytest.raises(InterfaceError, match="mechanism must be"):
        count(g, "triangle", epsilon=1.0, mechanism="laplace")
    rel = count(g, "triangle", privacy="node", epsilon=2.0, mechanism="r2t", max_contribution=64,
                lp_gap=0.25, rng=np.random.default_rng(0))
    assert rel.params["lp_gap"] == 0.25 and rel.value <= truth * 1.5
    with pytest.raises(InterfaceError, match="lp_gap"):
        count(g, "triangle", epsilon=1.0, mechanism="r2t", lp_gap=-1.0)


def test_a_wrong_option_names_how_gs_drives_the_error(con):
    """The refusal lists R2T's options; max_contribution's entry says how GS sets the error."""
    before = state(con)
    with pytest.raises(ProgrammingError, match=r"races L thresholds .* chosen from GS and β.*error grows like log\(GS\)"):
        con.execute(TRIANGLES + " WITH EPSILON 1 OPTIONS (mechanism = 'r2t', mu = 1)")
    assert state(con) == before


def test_merged_and_plain_lps_agree_on_the_sql_capture(con):
    """The triangle K-relation captured from SQL: the reduced (merged, interior point) LP value
    equals the plain LP's at every threshold."""
    kr = con.provenance(TRIANGLES.replace("COUNT(*)", "a.src, b.src, b.dst"))
    m = r2t_lp.R2TModel(kr)
    for tau in r2t.thresholds(max(2.0, 2 * m.max_load)):
        assert m.value(tau) == pytest.approx(m.plain_value(tau), abs=1e-6)


def test_the_declarations_give_the_default_bound():
    """One row per participant: GS = 1 for a COUNT, the declared upper bound for a SUM; a join
    that multiplies rows keeps the default; a stated max_contribution wins."""
    import provsql_dp

    con = provsql_dp.connect()
    con.execute("CREATE TABLE people(id INT PRIMARY KEY, x DOUBLE); "
                "INSERT INTO people SELECT i, i % 7 FROM range(200) t(i)")
    con.execute("CREATE TABLE visits(pid INT, d INT); "
                "INSERT INTO visits SELECT i % 200, i FROM range(600) t(i)")
    con.execute("PROTECT TABLE people; PROTECT TABLE visits BY (pid) AS people; "
                "SET PRIVACY BUDGET 100")
    r2t_ = " OPTIONS (mechanism = 'r2t')"
    (rel,) = con.execute("SELECT COUNT(*) FROM people WITH EPSILON 1" + r2t_).privacy.releases
    assert rel.params["max_contribution"] == 1.0 and rel.params["thresholds"] == (1.0,)
    (rel,) = con.execute("SELECT SUM(x) FROM people WITH EPSILON 1 OPTIONS (mechanism = 'r2t', "
                         "lower = 0, upper = 6)").privacy.releases
    assert rel.params["max_contribution"] == 6.0
    (rel,) = con.execute("SELECT COUNT(*) FROM people p JOIN visits v ON p.id = v.pid "
                         "WITH EPSILON 1" + r2t_).privacy.releases
    assert rel.params["max_contribution"] == r2t.DEFAULT_MAX_CONTRIBUTION
    (rel,) = con.execute("SELECT COUNT(*) FROM people WITH EPSILON 1 OPTIONS (mechanism = 'r2t', "
                         "max_contribution = 4)").privacy.releases
    assert rel.params["max_contribution"] == 4.0
    row = con.execute("EXPLAIN PRIVACY SELECT COUNT(*) FROM people WITH EPSILON 1" + r2t_).fetchall()[0]
    assert "more than max_contribution = 1," in row[-1] and "1 thresholds" in row[-1]
    assert row[6] == pytest.approx(r2t.fallback(1.0, max_contribution=1.0).error_bound(row[7]))
