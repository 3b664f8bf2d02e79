"""Whether a recursive-mechanism (or R2T) release falls back to its data-independent release is decided by
the plan, the declarations and the release's own resources (solver status, time limit,
``max_capture_rows``) — never by an ``ArithmeticError``/``ValueError`` raised while protected
numbers are processed. Such an error after the charge is a failure of the statement, recorded as
such (incident, audit row ``failed``, the fixed message for an analyst), not a silently different
mechanism; parameters the release cannot take at a group's ε are refused before the charge
(:mod:`provsql_dp.privacy.group_epsilon`)."""

from __future__ import annotations

import math

import networkx as nx
import pytest
from graph_sql_kit import graph_db

import provsql_dp
from provsql_dp.errors import DataError, ProgrammingError
from provsql_dp.graph import pattern_sql
from provsql_dp.mechanisms.r2t import race as r2t
from provsql_dp.mechanisms.recursive import buckets, single_owner
from provsql_dp.mechanisms.recursive import efficient as recursive
from provsql_dp.mechanisms.recursive import error_estimate as ee
from provsql_dp.mechanisms.subgraph.kstar import KStarCount
from provsql_dp.privacy.failures import ANALYST_FAILURE


def _db(path):
    con = provsql_dp.connect(str(path / "f.db"))
    con.execute("CREATE TABLE c(id INT PRIMARY KEY, region VARCHAR)")
    con.execute("INSERT INTO c SELECT range, ['n', 's', 'e'][range % 3 + 1] FROM range(30)")
    con.execute("CREATE TABLE o(oid INT PRIMARY KEY, cid INT, v DOUBLE)")
    con.execute("INSERT INTO o SELECT range, range % 30, range % 7 - 2 FROM range(120)")
    con.execute("PROTECT TABLE c")
    con.execute("PROTECT TABLE o BY (cid) AS c")
    con.execute("SET GROUP KEYS ON c (region) VALUES ('n', 's', 'e')")
    con.execute("SET PRIVACY BUDGET 1e9 FOR USER 'ann'")
    con.execute("SET PRIVACY BUDGET 1e9")
    return con


STATEMENTS = {  # route: (statement, what to break)
    "single-owner": ("SELECT COUNT(*) FROM o WITH EPSILON 1", (single_owner, "release")),
    "single-owner buckets": ("SELECT SUM(v) FROM o WITH EPSILON 1 OPTIONS (lower = 0, upper = 9)",
                             (buckets, "release_buckets")),
    "signed": ("SELECT SUM(v) FROM o WITH EPSILON 1 OPTIONS (lower = -5, upper = 9)",
               (buckets, "release_buckets")),
    "recursive-lp": ("SELECT COUNT(*) FROM o a JOIN o b ON a.v = b.v AND a.oid < b.oid WITH EPSILON 1",
                     (recursive, "release")),
    "r2t": ("SELECT COUNT(*) FROM o a JOIN o b ON a.v = b.v AND a.oid < b.oid WITH EPSILON 1 "
            "OPTIONS (mechanism = 'r2t')", (r2t, "release")),
    "estimate": ("EXPLAIN PRIVACY SELECT COUNT(*) FROM o a JOIN o b ON a.v = b.v AND a.oid < b.oid WITH EPSILON 1 "
                 "ESTIMATE ERROR WITH EPSILON 0.5", (ee, "delta_index")),
}


@pytest.mark.parametrize("route", sorted(STATEMENTS))
@pytest.mark.parametrize("error", [OverflowError, ValueError])
def test_a_numeric_error_after_the_charge_is_a_recorded_failure(tmp_path, monkeypatch, route, error):
    sql, (module, name) = STATEMENTS[route]
    curator = _db(tmp_path)  # the analyst's view: test_an_analyst_sees_the_fixed_message

    def boom(*a, **k):
        raise error("per-participant totals are too large: 12345.678")

    monkeypatch.setattr(module, name, boom)
    before = curator.ledger.remaining("default")
    with pytest.raises(provsql_dp.InternalError, match="12345.678"):  # the curator sees why
        curator.execute(sql)
    assert curator.ledger.remaining("default") < before  # charged before any row was read
    incidents = [w for (w,) in curator.execute("SELECT what FROM _provsql_dp.incidents").fetchall()]
    assert any(w.startswith("release failed") for w in incidents), incidents
    assert not any("fallback" in w or "index of j = 0" in w for w in incidents), incidents
    (outcome,) = curator.execute("SELECT outcome FROM _provsql_dp.audit_log "
                                 "WHERE outcome = 'failed'").fetchall()[-1:]
    assert outcome == ("failed",)


def test_an_analyst_sees_the_fixed_message(tmp_path, monkeypatch):
    curator = _db(tmp_path)
    curator.close()
    analyst = provsql_dp.connect(str(tmp_path / "f.db"), role="analyst", user="ann",
                                 guard_rails=False)
    monkeypatch.setattr(single_owner, "release", lambda *a, **k: 1 / 0)
    with pytest.raises(DataError) as err:
        analyst.execute("SELECT COUNT(*) FROM o WITH EPSILON 1")
    assert str(err.value) == ANALYST_FAILURE and err.value.__cause__ is None


def test_kstar_numeric_error_is_a_failure(monkeypatch):
    con = graph_db(nx.karate_club_graph(), "edge")

    def boom(self, *a, **kw):
        raise FloatingPointError("overflow at 3.25")

    monkeypatch.setattr(KStarCount, "release", boom)
    with pytest.raises(provsql_dp.InternalError, match="overflow at 3.25"):
        con.execute(f"SELECT COUNT(*) FROM ({pattern_sql('2-star')}) WITH EPSILON 1")
    what = [w for (w,) in con._duck.execute("SELECT what FROM _provsql_dp.incidents").fetchall()]
    assert len(what) == 1 and what[0].startswith("release failed"), what


def test_parameters_invalid_at_a_groups_epsilon_are_refused_before_the_charge(tmp_path):
    """Grouped by a column of the owner's row, each group is released at the full ε (parallel
    composition): at ε = 4·10⁷ its ε₁ passes 2²⁴. This was validated at ε/3 only, charged, and
    every group silently released the fallback; it is now refused, nothing charged."""
    con = _db(tmp_path)
    before = con.ledger.remaining("default")
    sql = "SELECT c.region, COUNT(*) FROM o JOIN c ON o.cid = c.id GROUP BY c.region WITH EPSILON 4e7"
    with pytest.raises(ProgrammingError, match=r"eps1 = 2e\+07 .*maximum 2\*\*24.*nothing was charged"):
        con.execute(sql)
    with pytest.raises(ProgrammingError, match="maximum 2"):
        con.execute("EXPLAIN PRIVACY " + sql + " ESTIMATE ERROR WITH EPSILON 1")
    assert con.ledger.remaining("default") == before
    assert con.execute("SELECT count(*) FROM _provsql_dp.incidents").fetchone()[0] == 0
    rows = con.execute(sql.replace("4e7", "3e7")).fetchall()  # ε₁ = 1.5·10⁷: released
    assert len(rows) == 3 and all(math.isfinite(v) for _, v in rows)
    assert con.execute("SELECT count(*) FROM _provsql_dp.incidents").fetchone()[0] == 0


def test_the_deadline_still_selects_the_fallback(tmp_path, monkeypatch):
    """A group cut off at the release's deadline is data-independent: it keeps the fallback."""
    from provsql_dp._deadline import DeadlineExceeded

    con = _db(tmp_path)

    def late(*a, **k):
        raise DeadlineExceeded(1.0, "the closed forms")

    monkeypatch.setattr(single_owner, "release", late)
    (value,) = con.execute("SELECT COUNT(*) FROM o WITH EPSILON 1").fetchone()
    assert math.isfinite(value)
    what = [w for (w,) in con.execute("SELECT what FROM _provsql_dp.incidents").fetchall()]
    assert any("fallback" in w for w in what), what
