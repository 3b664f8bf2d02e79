"""The audit log (provsql_dp.privacy.audit): every release and refusal, curator-only, and exactly
consistent with the ledger under concurrent releases."""

from __future__ import annotations

import io
import threading
import warnings
from fractions import Fraction

import pytest

import provsql_dp
from provsql_dp.errors import BudgetExceededError, Error, PrivacyError
from provsql_dp.interfaces.shell import Shell

LOG = "SELECT outcome, user_name, role, client, route, epsilon, reason FROM _provsql_dp.audit_log ORDER BY id"


@pytest.fixture
def path(tmp_path):
    p = str(tmp_path / "audit.duckdb")
    con = provsql_dp.connect(p)
    con.execute("CREATE TABLE t(x INT); INSERT INTO t SELECT range FROM range(50); PROTECT TABLE t")
    con.execute("SET PRIVACY BUDGET 1 FOR USER 'ann'")
    con.commit()
    con.close()
    return p


def analyst(path, user="ann"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the curator's connection in this process: no guard rails
        return provsql_dp.connect(path, role="analyst", user=user)


def test_release_and_refusals_are_logged_refusals_charge_nothing(path):
    cur = provsql_dp.connect(path)
    ann = analyst(path)
    ann.client = "wire"
    ann.execute("SELECT COUNT(*) FROM t WITH EPSILON 0.25")
    with pytest.raises(BudgetExceededError):
        ann.execute("SELECT COUNT(*) FROM t WITH EPSILON 5")
    with pytest.raises(PrivacyError):
        ann.execute("SELECT * FROM t")
    assert cur.ledger.budget("ann") == (Fraction(1), Fraction(1, 4))
    assert cur.execute(LOG).fetchall() == [
        ("released", "ann", "analyst", "wire", "laplace", "1/4", None),
        ("refused", "ann", "analyst", "wire", None, "0", "BudgetExceededError"),
        ("refused", "ann", "analyst", "wire", None, "0", "PrivacyError"),
    ]
    row = cur.execute("SELECT a.ledger_id, l.id, a.epsilon_value, a.statement, a.detail "
                      "FROM _provsql_dp.audit_log a JOIN _provsql_dp.ledger l ON a.ledger_id = l.id").fetchall()
    assert len(row) == 1 and row[0][0] == row[0][1] and row[0][2] == 0.25
    assert row[0][3] == "SELECT COUNT(*) FROM t WITH EPSILON 0.25"
    detail = cur.execute("SELECT detail FROM _provsql_dp.audit WHERE reason = 'BudgetExceededError'").fetchone()[0]
    assert "nothing was spent" in detail


def test_a_curators_failed_ddl_is_no_refusal_but_a_failed_release_is(path):
    cur = provsql_dp.connect(path)
    with pytest.raises(Error):
        cur.execute("CREATE TABLE t(x INT)")  # exists: not a refusal, not logged
    with pytest.raises(BudgetExceededError):
        cur.execute("SELECT COUNT(*) FROM t WITH EPSILON 1")  # the curator's user has no budget
    assert cur.execute(LOG).fetchall() == [
        ("refused", "default", "curator", "dbapi", None, "0", "BudgetExceededError")]


def test_analysts_cannot_read_the_audit_log(path):
    ann = analyst(path)
    for sql in ("SELECT * FROM _provsql_dp.audit", "SELECT * FROM _provsql_dp.audit_log",
                "SELECT COUNT(*) FROM _provsql_dp.audit WITH EPSILON 0.1"):
        with pytest.raises(Error):
            ann.execute(sql)
    out = io.StringIO()
    sh = Shell(ann, out=out, err=out)
    sh.dot(".audit")
    assert "Error: .audit is for the curator only" in out.getvalue()


def test_the_shells_audit_command_for_the_curator(path):
    curator = provsql_dp.connect(path)  # first: the analyst's then shares its configuration
    analyst(path).execute("SELECT COUNT(*) FROM t WITH EPSILON 0.5")
    out = io.StringIO()
    sh = Shell(curator, out=out, err=out, mode="csv")
    sh.dot(".audit 5")
    lines = out.getvalue().strip().splitlines()
    assert lines[0] == "id,at,user,role,client,outcome,route,epsilon,unit,reason,statement"
    assert lines[1].split(",")[2:8] == ["ann", "analyst", "dbapi", "released", "laplace", "1/2"]


def test_concurrent_releases_the_log_matches_the_ledger_exactly(path):
    """Eight analysts' connections charge at once until the budget runs out: every charge has
    its audit row (same ledger id, same ε), every refusal a row of its own charging nothing."""
    curator = provsql_dp.connect(path)
    cons = [analyst(path) for _ in range(8)]
    refused = []

    def work(con):
        for _ in range(6):
            try:
                con.execute("SELECT COUNT(*) FROM t WITH EPSILON 0.05")
            except BudgetExceededError:
                refused.append(1)

    threads = [threading.Thread(target=work, args=(c,)) for c in cons]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    ledger = curator.execute("SELECT id, epsilon FROM _provsql_dp.ledger WHERE audit_id IS NOT NULL "
                             "ORDER BY id").fetchall()  # (not the budget's numbered row)
    released = curator.execute("SELECT ledger_id, epsilon FROM _provsql_dp.audit WHERE outcome = 'released' "
                               "ORDER BY ledger_id").fetchall()
    assert released == ledger and len(ledger) == 20  # 1 / 0.05: the budget is spent exactly
    assert sum(Fraction(e) for _, e in ledger) == curator.ledger.budget("ann")[1] == 1
    n_refused = curator.execute("SELECT COUNT(*) FROM _provsql_dp.audit WHERE outcome = 'refused' "
                                "AND epsilon = '0' AND reason = 'BudgetExceededError'").fetchone()[0]
    assert n_refused == len(refused) == 8 * 6 - 20


def test_a_statement_failing_after_its_charge_is_logged_as_failed(path):
    """(A cancel during the LP, say: the charge keeps its released row, the statement its own.)"""
    from provsql_dp.interfaces.dbapi.audit_failures import audit_failure, worth_logging
    from provsql_dp.errors import StatementCancelled

    cur = provsql_dp.connect(path)
    assert worth_logging(cur, "CREATE TABLE x(a INT)", True) and not worth_logging(cur, "CREATE TABLE x(a INT)", False)
    audit_failure(cur, "SELECT COUNT(*) FROM t WITH EPSILON 0.5", StatementCancelled(), True)
    assert cur.execute(LOG).fetchall() == [
        ("failed", "default", "curator", "dbapi", None, "0", "StatementCancelled")]


def test_show_audit_log_for_the_curator_refused_to_analysts(path):
    """SHOW AUDIT LOG [LIMIT n]: the last rows, oldest first, with each charge's unit; an
    analyst is refused (nothing charged, the refusal itself logged); the shell runs it too."""
    from provsql_dp.privacy.audit import LOG_COLUMNS

    curator = provsql_dp.connect(path)
    ann = analyst(path)
    ann.execute("SELECT COUNT(*) FROM t WITH EPSILON 0.25")
    with pytest.raises(PrivacyError, match="SHOW AUDIT LOG is for the curator only"):
        ann.execute("SHOW AUDIT LOG")
    ann.execute("SELECT COUNT(*) FROM t WITH EPSILON 0.125")
    assert curator.ledger.budget("ann")[1] == Fraction(3, 8)
    cur = curator.execute("SHOW AUDIT LOG LIMIT 2")
    assert [c[0] for c in cur.description] == [c for c, _ in LOG_COLUMNS]
    rows = [dict(zip((c for c, _ in LOG_COLUMNS), r)) for r in cur.fetchall()]
    assert [(r["outcome"], r["epsilon"], r["unit"], r["reason"]) for r in rows] == [
        ("refused", "0", None, "PrivacyError"), ("released", "1/8", "epsilon", None)]
    assert rows[0]["id"] < rows[1]["id"] and rows[0]["statement"] == "SHOW AUDIT LOG"
    assert len(curator.execute("SHOW AUDIT LOG").fetchall()) == 3  # default: the last 20
    out = io.StringIO()
    sh = Shell(curator, out=out, err=out, mode="csv")
    sh.run_text("SHOW AUDIT LOG LIMIT 1;")
    assert out.getvalue().splitlines()[0] == ",".join(c for c, _ in LOG_COLUMNS)
    assert ",released,laplace,1/8,epsilon," in out.getvalue()
    out = io.StringIO()
    Shell(ann, out=out, err=out).run_text("SHOW AUDIT LOG;")
    assert "Error: SHOW AUDIT LOG is for the curator only" in out.getvalue()


def test_the_audit_log_says_when_its_epsilon_column_holds_rho(path):
    """On a ρ budget the ledger debits ρ = ε²/2: the audit row's epsilon is that ρ, and its
    unit says so; Ledger.users() and cursor.privacy carry the unit too."""
    curator = provsql_dp.connect(path)
    curator.execute("SET PRIVACY BUDGET RHO 1 FOR USER 'zed'")
    curator.commit()
    zed = analyst(path, "zed")
    info = zed.execute("SELECT COUNT(*) FROM t WITH EPSILON 1").privacy
    assert (info.unit, info.epsilon) == ("rho", 0.5)
    assert curator.execute("SELECT epsilon, unit FROM _provsql_dp.audit_log WHERE user_name = 'zed' "
                           "AND outcome = 'released'").fetchall() == [("1/2", "rho")]
    rows = {r[0]: r for r in curator.ledger.users()}
    assert rows["zed"] == ("zed", 1, Fraction(1, 2)) and rows["zed"].unit == "rho"
    assert rows["ann"].unit == "epsilon" and "unit='rho'" in repr(rows["zed"])
    user, total, spent = zed.ledger.users()[0]  # still a (user, total, spent) triple
    assert (user, spent) == ("zed", Fraction(1, 2))


def test_an_audit_view_made_before_the_unit_column_is_replaced(path):
    con = provsql_dp.connect(path)
    con.execute("CREATE OR REPLACE VIEW _provsql_dp.audit_log AS SELECT id, epsilon FROM _provsql_dp.audit")
    con.commit()
    con.close()
    con = provsql_dp.connect(path)
    cols = [r[0] for r in con.execute("DESCRIBE _provsql_dp.audit_log").fetchall()]
    assert "unit" in cols and "epsilon_value" in cols


def _as_before_audit_events(path):
    """The database at ``path`` as provsql_dp wrote it before a release's audit row was its
    ledger row: an audit table holding every row, a ledger without the audit columns (nor
    charge numbers)."""
    import duckdb

    raw = duckdb.connect(path)
    raw.execute("DROP VIEW _provsql_dp.audit; "
                "ALTER TABLE _provsql_dp.audit_events RENAME TO audit")
    rows = raw.execute("SELECT id, charged_at, user_name, role, client, statement, mechanism, "
                       "epsilon, audit_id FROM _provsql_dp.ledger WHERE audit_id IS NOT NULL").fetchall()
    for lid, at, user, role, client, stmt, mech, eps, aid in rows:
        raw.execute("INSERT INTO _provsql_dp.audit VALUES (?, ?, ?, ?, ?, 'released', ?, ?, ?, ?, "
                    "NULL, NULL)", [aid, at, user, role, client, stmt, mech, eps, lid])
    # and before charge numbers (its charges here are folded: one each, by the reading path)
    raw.execute("DROP INDEX _provsql_dp.ledger_charge_no; DELETE FROM _provsql_dp.ledger WHERE "
                "audit_id IS NULL; ALTER TABLE _provsql_dp.budget DROP COLUMN charge_no")
    for col in ("audit_id", "role", "client", "charge_no"):
        raw.execute(f"ALTER TABLE _provsql_dp.ledger DROP COLUMN {col}")
    raw.close()


def test_an_audit_table_made_before_the_ledger_rows_keeps_its_rows(path):
    """The old table becomes audit_events, rows and all (releases included, shown once); new
    releases come from their ledger rows and go on in the log's order; the charge of a
    release still has its audit row, and a refusal its own."""
    con = provsql_dp.connect(path)
    ann = analyst(path)
    ann.execute("SELECT COUNT(*) FROM t WITH EPSILON 0.25")
    with pytest.raises(BudgetExceededError):
        ann.execute("SELECT COUNT(*) FROM t WITH EPSILON 5")
    before = con.execute("SELECT * FROM _provsql_dp.audit_log ORDER BY id").fetchall()
    con.close()
    ann.close()
    _as_before_audit_events(path)
    con = provsql_dp.connect(path)
    assert con.execute("SELECT * FROM _provsql_dp.audit_log ORDER BY id").fetchall() == before
    ann = analyst(path)
    ann.execute("SELECT COUNT(*) FROM t WITH EPSILON 0.5")
    assert con.execute(LOG).fetchall() == [
        ("released", "ann", "analyst", "dbapi", "laplace", "1/4", None),
        ("refused", "ann", "analyst", "dbapi", None, "0", "BudgetExceededError"),
        ("released", "ann", "analyst", "dbapi", "laplace", "1/2", None),
    ]
    ids = [r[0] for r in con.execute("SELECT id FROM _provsql_dp.audit ORDER BY id").fetchall()]
    assert ids == [1, 2, 3]
    assert con.execute("SELECT ledger_id FROM _provsql_dp.audit WHERE outcome = 'released' "
                       "ORDER BY id").fetchall() == [(1,), (2,)]


def test_a_release_is_one_row_of_the_ledger_and_of_the_log(path):
    """The release's audit row is its ledger row: no table of the log grows with a release."""
    con = provsql_dp.connect(path)
    ann = analyst(path)
    n = con.execute("SELECT count(*) FROM _provsql_dp.audit_events").fetchone()[0]
    for eps in ("0.125", "0.25"):
        ann.execute(f"SELECT COUNT(*) FROM t WITH EPSILON {eps}")
    assert con.execute("SELECT count(*) FROM _provsql_dp.audit_events").fetchone()[0] == n
    assert con.execute("SELECT l.id, l.epsilon, a.id FROM _provsql_dp.ledger l JOIN "
                       "_provsql_dp.audit a ON a.ledger_id = l.id ORDER BY l.id").fetchall() == [
        (1, "1/8", 1), (2, "1/4", 2)]


def test_failed_or_refused_is_whether_this_statement_charged(path, monkeypatch):
    """The label was ``ledger.charges`` before and after the statement: another thread's charge
    on the connection meanwhile made a refusal read ``failed`` (follow-up of red team h94attack).
    The statement's own charge watch decides: another thread's charge leaves it ``refused``, a
    charge of its own makes it ``failed``."""
    from provsql_dp.interfaces.dbapi import cursor as cursor_module

    con = analyst(path)
    here = {"thread": False}

    def refuse_after_a_charge(connection, sql, parameters=None):
        def charge():
            connection._ledger.charge("ann", Fraction(1, 20), "SELECT 1", "test")
        if here["thread"]:
            charge()  # in the statement's own thread: its charge
        else:
            th = threading.Thread(target=charge)  # another thread's, on the same connection
            th.start()
            th.join()
        raise PrivacyError("refused for the test")

    monkeypatch.setattr(cursor_module, "check_statement", refuse_after_a_charge)
    for own in (False, True):
        here["thread"] = own
        with pytest.raises(PrivacyError):
            con.execute("SELECT COUNT(*) FROM t WITH EPSILON 0.1")
    monkeypatch.undo()
    assert [r[0] for r in con._duck.execute(
        "SELECT outcome FROM _provsql_dp.audit_log WHERE reason = 'PrivacyError' ORDER BY id").fetchall()] \
        == ["refused", "failed"]
