"""``EXPLAIN PRIVACY <query> WITH EPSILON ε ESTIMATE ERROR WITH EPSILON e``: charged exactly e
(before any read), refused with the ledger unchanged where it does not apply, open to analysts,
with a fixed message when it fails after the charge, and shown by the shell."""

from __future__ import annotations

from fractions import Fraction

import pytest

import provsql_dp
from provsql_dp.errors import BudgetExceededError, DataError, ProgrammingError, SolverError
from provsql_dp.mechanisms.recursive import error_estimate as ee
from provsql_dp.privacy.failures import ANALYST_FAILURE

JOIN = "SELECT COUNT(*) FROM e a JOIN e b ON a.dst = b.src"


def _db(path=":memory:"):
    con = provsql_dp.connect(str(path))
    con.execute("CREATE TABLE e(src INT, dst INT); "
                "INSERT INTO e SELECT (i * 7) % 30, (i * 13 + 1) % 30 FROM range(120) t(i)")
    con.execute("PROTECT TABLE e BY (src, dst) AS node")
    con.execute("CREATE TABLE p(id INT, owner INT, v DOUBLE, city VARCHAR); INSERT INTO p "
                "SELECT i, i % 40, (i % 17) - 5, CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END "
                "FROM range(400) t(i)")
    con.execute("PROTECT TABLE p BY (owner) AS person")
    con.execute("SET BOUNDS ON p (v) BETWEEN -5 AND 20")
    con.execute("SET GROUP KEYS ON p (city) VALUES ('a', 'b')")
    con.execute("CREATE TABLE q(id INT PRIMARY KEY, age INT); INSERT INTO q SELECT i, i % 90 "
                "FROM range(200) t(i); PROTECT TABLE q")
    con.execute("CREATE TABLE pub(a INT); INSERT INTO pub VALUES (1), (2)")
    con.execute("SET PRIVACY BUDGET 10; SET PRIVACY BUDGET 3 FOR USER 'ann'")
    return con


def _spent(con, user="default"):
    return dict((u, s) for u, _, s in con._ledger.users())[user]


def test_the_ledger_is_charged_exactly_e_before_the_rows_come_back():
    con = _db()
    before = _spent(con)
    cur = con.execute(f"EXPLAIN PRIVACY {JOIN} WITH EPSILON 1 ESTIMATE ERROR WITH EPSILON 0.15 "
                      "CONFIDENCE 0.9")
    (row,) = cur.fetchall()
    assert _spent(con) - before == Fraction(15, 100)
    assert cur.privacy.mechanism == "error-estimate" and cur.privacy.epsilon_exact == Fraction(3, 20)
    assert con.privacy is cur.privacy
    last = con._duck.execute("SELECT mechanism, epsilon, statement FROM _provsql_dp.ledger "
                             "ORDER BY id DESC LIMIT 1").fetchone()
    assert last[0] == "error-estimate" and Fraction(last[1]) == Fraction(3, 20)
    assert "ESTIMATE ERROR" in last[2]
    assert row[0] == "recursive" and row[4] == "1" and row[7] == 0.9
    assert row[6] > 0 and row[5] > 0 and "PRIVATE ESTIMATE" in row[9] and "truncation" in row[9]
    (est,), = cur.privacy.estimates
    assert row[6] == est.alpha(0.9) and est.params["eps2"] == 0.5  # the release's parameters


def test_the_rows_come_as_dataframes_too():
    pytest.importorskip("pandas")
    con = _db()
    cur = con.execute(f"EXPLAIN PRIVACY {JOIN} WITH EPSILON 1 ESTIMATE ERROR WITH EPSILON 0.1")
    df = cur.fetchdf()  # no interval columns: an estimate is not a value with an interval
    assert list(df.columns) == [c[0] for c in cur.description] and len(df) == 1
    assert cur.privacy.intervals() == [] and cur.privacy.noise_bound() == []


def test_groups_and_several_aggregates_split_e_and_charge_it_once():
    con = _db()
    before = _spent(con)
    cur = con.execute("EXPLAIN PRIVACY SELECT city, COUNT(*), SUM(v) FROM p GROUP BY city "
                      "WITH EPSILON 1 ESTIMATE ERROR WITH EPSILON 0.4")
    rows = cur.fetchall()
    assert _spent(con) - before == Fraction(2, 5)
    assert [r[3] for r in rows] == [2, 2] and [r[4] for r in rows] == ["0.5", "0.5"]
    per_part = [sum(e.epsilon for e in groups) for groups in cur.privacy.estimates]
    assert per_part == pytest.approx([0.2, 0.2])
    # an owner's rows span both cities: one ℓ1 bound across the groups (privacy.group_l1), so
    # one j per aggregate, estimated once at its whole share; SUM(v) with v in [-5, 20] is
    # signed, and its two parts share that one norm (no halving)
    assert [len(groups) for groups in cur.privacy.estimates] == [1, 1]
    signed = cur.privacy.estimates[1][0]
    assert isinstance(signed, ee.NoiseEstimate) and signed.params["eps2"] == 0.25


def test_a_laplace_column_beside_keeps_its_public_row_and_e_goes_to_the_others():
    con = _db()
    cur = con.execute("EXPLAIN PRIVACY SELECT COUNT(*), SUM(age) FROM q WITH EPSILON 1 "
                      "ESTIMATE ERROR WITH EPSILON 0.3")
    laplace, recursive = cur.fetchall()
    assert laplace[0] == "laplace" and "PRIVATE ESTIMATE" not in laplace[-1]
    public = con.execute("EXPLAIN PRIVACY SELECT COUNT(*), SUM(age) FROM q WITH EPSILON 1").fetchall()
    assert laplace == public[0]  # the same public statement as without the estimate
    assert recursive[0] == "recursive" and "PRIVATE ESTIMATE" in recursive[-1]
    assert sum(e.epsilon for e in cur.privacy.estimates[0]) == pytest.approx(0.3)
    assert _spent(con) == Fraction(3, 10)


@pytest.mark.parametrize("sql, message", [
    ("SELECT COUNT(*) FROM q WITH EPSILON 1", "Laplace mechanism"),
    (f"{JOIN} WITH EPSILON 1 OPTIONS (mechanism = 'r2t')", "not R2T"),
    ("SELECT city, COUNT(*) FROM p GROUP BY city WITH EPSILON 1 OPTIONS (max_groups = 1)",
     "max_groups"),
    ("SELECT MEDIAN(age) FROM q WITH EPSILON 1", "quantile"),
    ("SELECT COUNT(*) FROM pub WITH EPSILON 1", "no protected table"),
])
def test_refusals_spend_nothing(sql, message):
    con = _db()
    before = con._duck.execute("SELECT count(*) FROM _provsql_dp.ledger").fetchone()
    with pytest.raises(ProgrammingError, match=message) as err:
        con.execute(f"EXPLAIN PRIVACY {sql} ESTIMATE ERROR WITH EPSILON 0.2")
    assert "nothing was spent" in str(err.value) or "nothing" in str(err.value)
    assert con._duck.execute("SELECT count(*) FROM _provsql_dp.ledger").fetchone() == before
    assert _spent(con) == 0


@pytest.mark.parametrize("tail, message", [
    ("WITH EPSILON 1 ESTIMATE ERROR WITH EPSILON 0", "at least"),
    ("WITH EPSILON 1 ESTIMATE ERROR WITH EPSILON 0.1 CONFIDENCE 1.5", "confidence"),
    ("WITH ACCURACY 5 ESTIMATE ERROR WITH EPSILON 0.1", "not with WITH ACCURACY"),
    ("WITH EPSILON 1 ESTIMATE WITH EPSILON 0.1", "ESTIMATE ERROR WITH EPSILON e"),
    ("WITH EPSILON 1 ESTIMATE ERROR WITH EPSILON 20", "budget"),
])
def test_bad_statements_and_an_exhausted_budget_leave_the_ledger_unchanged(tail, message):
    con = _db()
    with pytest.raises((ProgrammingError, BudgetExceededError), match=message):
        con.execute(f"EXPLAIN PRIVACY {JOIN} {tail}")
    assert _spent(con) == 0


def test_plain_explain_privacy_still_spends_nothing():
    con = _db()
    row = con.execute(f"EXPLAIN PRIVACY {JOIN} WITH EPSILON 1").fetchall()[0]
    assert "no error" in row[-1] and _spent(con) == 0


def test_an_analyst_may_estimate_and_a_failure_after_the_charge_says_nothing(tmp_path, monkeypatch):
    _db(tmp_path / "db.duckdb").close()
    an = provsql_dp.connect(str(tmp_path / "db.duckdb"), role="analyst", user="ann")
    cur = an.execute(f"EXPLAIN PRIVACY {JOIN} WITH EPSILON 1 ESTIMATE ERROR WITH EPSILON 0.5")
    assert cur.privacy.remaining == 2.5 and "Curator only" not in cur.fetchall()[0][-1]

    def boom(*a, **k):
        raise RuntimeError("Could not convert string 'Alice'")

    monkeypatch.setattr(ee, "estimate", boom)
    with pytest.raises(DataError) as err:
        an.execute(f"EXPLAIN PRIVACY {JOIN} WITH EPSILON 1 ESTIMATE ERROR WITH EPSILON 0.5")
    assert str(err.value) == ANALYST_FAILURE and err.value.__cause__ is None
    assert an.execute("SHOW PRIVACY BUDGET").fetchall()[0][2] == "1"  # charged: the rule


def test_a_failed_search_releases_a_data_free_index_in_the_same_shape(monkeypatch):
    con = _db()
    good = con.execute(f"EXPLAIN PRIVACY {JOIN} WITH EPSILON 1 ESTIMATE ERROR WITH EPSILON 0.5")
    shape = [(type(v), n) for v, (n, *_) in zip(good.fetchall()[0], good.description)]

    def fail(*a, **k):
        raise SolverError("the LP failed")

    monkeypatch.setattr(ee, "delta_index", fail)
    cur = con.execute(f"EXPLAIN PRIVACY {JOIN} WITH EPSILON 1 ESTIMATE ERROR WITH EPSILON 0.5")
    assert [(type(v), n) for v, (n, *_) in zip(cur.fetchall()[0], cur.description)] == shape
    incidents = con._duck.execute("SELECT count(*) FROM _provsql_dp.incidents").fetchone()[0]
    assert incidents >= 1


def test_the_shell_shows_the_rows_and_the_charge():
    from test_shell import make_shell

    con = _db()
    sh, out, err = make_shell(con)
    sh.run_statement(f"EXPLAIN PRIVACY {JOIN} WITH EPSILON 1 ESTIMATE ERROR WITH EPSILON 0.25")
    text = out.getvalue()
    assert "PRIVATE ESTIMATE" in text and "private error estimate: ε charged 0.25" in text
    sh.dot(".help estimate")
    assert "ESTIMATE ERROR WITH EPSILON e" in out.getvalue()


def test_the_charge_comes_before_any_protected_row_is_read(monkeypatch):
    from provsql_dp.privacy import error_estimate as pe

    con = _db()
    seen = []
    real = pe.capture

    def spy(*a, **k):
        seen.append(_spent(con))
        return real(*a, **k)

    monkeypatch.setattr(pe, "capture", spy)
    con.execute(f"EXPLAIN PRIVACY {JOIN} WITH EPSILON 1 ESTIMATE ERROR WITH EPSILON 0.3")
    assert seen == [Fraction(3, 10)]


NEIGHBOUR_STATEMENTS = (
    "SELECT COUNT(*) FROM people p JOIN visits v ON p.id = v.pid WITH EPSILON 0.5",
    "SELECT SUM(v.amount * p.salary) FROM people p JOIN visits v ON p.id = v.pid WITH EPSILON 0.5",
    "SELECT COUNT(*) FROM people p JOIN visits v ON p.id = v.pid WHERE 1 // p.i > 0 "
    "WITH EPSILON 0.5",
    "SELECT d.dname, SUM(p.x) FROM people p JOIN depts d ON p.dept = d.dept_id GROUP BY d.dname "
    "WITH EPSILON 0.5 OPTIONS (mechanism = 'recursive')",
)


@pytest.mark.parametrize("sql", NEIGHBOUR_STATEMENTS)
def test_neighbours_give_an_analyst_the_same_outcome_up_to_the_noise(sql):
    """The side-channel rule on the estimate: on the base database and neighbours holding
    extreme values (tests/system/side_channel_corpus.py), the analyst sees the same outcome —
    kind, text, ε charged, columns, rows, the public cells and the note's words — and no
    protected text; only the released numbers differ."""
    import re

    from side_channel_corpus import PLANTS_BY_NAME, build_database, run_analyst, secrets_of

    stmt = f"EXPLAIN PRIVACY {sql} ESTIMATE ERROR WITH EPSILON 0.25"
    seen = {}
    for name in ("base", "max", "mult", "changed", "nan", "null"):
        db = build_database(None if name == "base" else PLANTS_BY_NAME[name])
        out = run_analyst(db, stmt, "ann", seed=1)
        assert out.pep249, (name, out.short())
        cur = provsql_dp.connect(db.name, role="analyst", user="ann")
        cur._rng = None
        rows = cur.execute(stmt).fetchall()
        cur.close()
        text = " ".join(str(c) for r in rows for c in r)
        assert not [s for s in secrets_of(name) if len(str(s)) >= 5 and str(s) in text], name
        shape = [(r[0], r[1], r[2], r[3], r[4], r[7], r[8], re.sub(r"[-+0-9.e]+", "#", r[9]))
                 for r in rows]
        seen[name] = (out.kind, out.message, out.epsilon, out.columns, out.rows, tuple(shape))
        db.curator.close()
    assert len(set(seen.values())) == 1, seen


@pytest.mark.parametrize("sql, prov", [
    (JOIN + " WITH EPSILON 1", "SELECT a.src, b.dst FROM e a JOIN e b ON a.dst = b.src"),
    ("SELECT city, COUNT(*) FROM p GROUP BY city WITH EPSILON 1", None),
])
def test_the_estimated_index_is_the_one_the_release_computes(sql, prov, monkeypatch):
    """Cross-check against the release: the same parameters per group, and (for the join) the
    same j as the curator's diagnostics of the release (recursive.explain on its K-relation)."""
    from provsql_dp.mechanisms.recursive import efficient as rm

    con = _db()
    seen = []
    real = ee.release_index

    def spy(j, epsilon, params, rng=None):
        seen.append((j, dict(params)))
        return real(j, epsilon, params, rng)

    monkeypatch.setattr(ee, "release_index", spy)
    con.execute(f"EXPLAIN PRIVACY {sql} ESTIMATE ERROR WITH EPSILON 0.5")
    released = con.execute(sql).privacy.releases
    params = [dict(r.params) for r in released]
    if len(released) > 1:  # GROUP BY city: one ℓ1 bound across the groups, one j, one estimate
        assert all(p == params[0] for p in params)
        params = params[:1]
    assert [p for _, p in seen] == params
    if prov is not None:
        kr = con.provenance(prov)
        (j, params), = seen
        assert j == rm.explain(kr, 1.0, "node").delta_j


@pytest.mark.parametrize("conf", ["0.5", "0.3", "0.01", "0.51"])
def test_a_confidence_at_or_below_one_half_is_answered(conf):
    """``truncation_participants`` asked a one-sided quantile at 1 − 2(1 − p) ≤ 0 for p ≤ ½ and
    raised a ValueError after the charge (found by the side-channel corpus); ``k = 0`` there."""
    con = _db()
    cur = con.execute(f"EXPLAIN PRIVACY {JOIN} WITH EPSILON 1 ESTIMATE ERROR WITH EPSILON 0.2 "
                      f"CONFIDENCE {conf}")
    row = cur.fetchall()[0]
    assert row[7] == float(conf) and row[6] > 0
