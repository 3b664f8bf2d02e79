"""EXPLAIN PRIVACY of an R2T query: the number of thresholds (LPs at most) and the error R2T
states, from the statement alone (the same on two databases with different data, nothing spent);
the curator also sees the private sizes; bad options are refused as the release refuses them."""

from __future__ import annotations

import numpy as np
import pytest

import provsql_dp
from provsql_dp.errors import ProgrammingError
from provsql_dp.mechanisms.r2t import race as r2t
from provsql_dp.privacy.explain_r2t import PUBLIC_NOTE

TRI = ("SELECT COUNT(*) FROM e e1 JOIN e e2 ON e1.dst = e2.src "
       "JOIN e e3 ON e1.src = e3.src AND e2.dst = e3.dst "
       "WHERE e1.src < e1.dst AND e2.src < e2.dst WITH EPSILON 0.5 "
       "OPTIONS (mechanism = 'r2t', max_contribution = 1000, beta = 0.05)")


def _db(path, edges):
    con = provsql_dp.connect(str(path))
    con.execute("CREATE TABLE e(src INT, dst INT)")
    rows = [(a, b) for a, b in edges] + [(b, a) for a, b in edges]
    con.execute("INSERT INTO e VALUES " + ", ".join(f"({a}, {b})" for a, b in rows))
    con.execute("PROTECT TABLE e BY (src, dst) AS node; SET PRIVACY BUDGET 1 FOR USER 'ann'")
    return con


def test_public_row_is_data_independent_and_states_the_bound(tmp_path):
    rng = np.random.default_rng(4)
    small = [(1, 2), (2, 3), (1, 3)]
    big = sorted({tuple(sorted(rng.choice(12, 2, replace=False).tolist())) for _ in range(40)})
    rows = []
    for k, edges in enumerate((small, big)):
        path = tmp_path / f"db{k}.duckdb"
        cur = _db(path, edges)
        note = cur.execute("EXPLAIN PRIVACY " + TRI).fetchall()[0][-1]
        assert "Curator only" in note and PUBLIC_NOTE in note
        cur.close()
        an = provsql_dp.connect(str(path), role="analyst", user="ann")
        rows.append(an.execute("EXPLAIN PRIVACY " + TRI).fetchall())
        assert an.execute("SHOW PRIVACY BUDGET").fetchall()[0][2] == "0"  # nothing spent
        an.close()
    assert rows[0] == rows[1]
    (mech, _, strategy, queries, eps, _, alpha, conf, route, note), = rows[0]
    assert mech == route == "r2t" and queries == 1 and eps == "0.5" and conf == 0.95
    n = len(r2t.thresholds(1000, 0.05))
    assert n == r2t.threshold_count(1000, 0.05) == 4
    assert "Curator only" not in note and f"{n} thresholds" in note and f"race over {n}" in strategy
    rel = r2t.fallback(0.5, max_contribution=1000, beta=0.05)
    assert alpha == pytest.approx(rel.error_bound(0.95))
    assert f"c = {rel.error_factor(0.95):.4g}" in note


def test_the_stated_bound_holds_on_releases(tmp_path):
    cur = _db(tmp_path / "db.duckdb", [(a, b) for a in range(7) for b in range(a + 1, 7)])
    alpha = cur.execute("EXPLAIN PRIVACY " + TRI).fetchall()[0][6]
    kr = cur.provenance(TRI.split(" WITH EPSILON")[0].replace("COUNT(*)", "e1.src"))
    truth = kr.true_answer()  # every contribution ≤ 1000 here: the bound is about Q(I) itself
    assert r2t.R2TModel(kr).max_load <= 1000
    vals = [r2t.release(kr, 0.5, max_contribution=1000, beta=0.05,
                        rng=np.random.default_rng(s)).value for s in range(100)]
    assert np.mean([v >= truth - alpha for v in vals]) >= 0.9  # stated ≥ 95 %; 100 draws
    # the curator's bound at the true largest contribution holds too, and is tighter
    note = cur.execute("EXPLAIN PRIVACY " + TRI).fetchall()[0][-1]
    at = float(note.split("(α at it: ")[1].split(")")[0])
    assert at <= alpha
    assert np.mean([v >= truth - at for v in vals]) >= 0.9


def test_bad_options_are_refused_before_anything(tmp_path):
    cur = _db(tmp_path / "db.duckdb", [(1, 2), (2, 3), (1, 3)])
    with pytest.raises(ProgrammingError, match="does not apply to mechanism = 'r2t'"):
        cur.execute("EXPLAIN PRIVACY " + TRI.replace("beta = 0.05", "theta = 2"))


def test_lp_gap_is_stated_and_widens_alpha(tmp_path):
    cur = _db(tmp_path / "db.duckdb", [(1, 2), (2, 3), (1, 3)])
    gap_q = TRI.replace("beta = 0.05)", "beta = 0.05, lp_gap = 0.25)")
    exact_q = TRI.replace("beta = 0.05)", "beta = 0.05, lp_gap = 0)")
    (row,) = cur.execute("EXPLAIN PRIVACY " + gap_q).fetchall()
    (default,) = cur.execute("EXPLAIN PRIVACY " + TRI).fetchall()
    (exact,) = cur.execute("EXPLAIN PRIVACY " + exact_q).fetchall()
    assert "lp_gap γ = 0.25" in row[-1] and "lp_gap" not in exact[-1]
    assert f"lp_gap γ = {r2t.DEFAULT_LP_GAP:g}" in default[-1]
    expect = r2t.fallback(0.5, max_contribution=1000, beta=0.05, lp_gap=0.25).error_bound(0.95)
    assert row[6] == pytest.approx(expect) and row[6] > default[6] > exact[6]
