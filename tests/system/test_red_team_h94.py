"""Red team h94attack: the ledger as the audit log, its dump and restore, kept texts, pooled
noise, last session's fixes and the wire server, attacked as an analyst and a careless curator.

Finding 1: ``.dump`` wrote every budget as ``SET PRIVACY BUDGET <total>`` (pure ε) and only the
ε part of what was spent. A ρ budget of 10 restored as a pure-ε budget of 10, which pays a single
ε = 10 release: ρ = ε²/2 = 50 on a budget of ρ = 10 (the conversion out of ρ that
``accounting.converted_spending`` refuses); an (ε, δ) budget lost its δ and the δ spent, so the
curator's next ``SET PRIVACY BUDGET EPSILON … DELTA …`` handed the spent δ back. The dump now
writes each budget in its unit and restores δ spent with ε spent."""

from __future__ import annotations

import io
import warnings
from fractions import Fraction

import pytest

import provsql_dp
from provsql_dp.interfaces.shell import Shell
from provsql_dp.interfaces.shell.dump import dump
from provsql_dp.privacy.accounting import Cost


def _protected(con):
    con.autocommit = True
    con.execute("CREATE TABLE p(id INT PRIMARY KEY, x DOUBLE CHECK (x >= 0))")
    con.execute("INSERT INTO p SELECT range, range % 50 FROM range(200)")
    con.execute("PROTECT TABLE p")


def _restored(con):
    fresh = provsql_dp.connect(user="cur")
    fresh.autocommit = True
    err = io.StringIO()
    assert Shell(fresh, io.StringIO(), err).run_text("\n".join(dump(con))), err.getvalue()
    return fresh


# ------------------------------------------------------------------ finding 1: budget units
def test_a_dumped_rho_budget_restores_as_rho_not_as_pure_epsilon():
    con = provsql_dp.connect(user="cur")
    _protected(con)
    con.execute("SET PRIVACY BUDGET RHO 10 FOR USER 'zed'")
    con.execute("SET PRIVACY BUDGET RHO 2 FOR USER 'cur'")
    con.execute("SELECT COUNT(*) FROM p WITH RHO 0.5").fetchall()
    fresh = _restored(con)
    assert fresh.ledger.accounts() == con.ledger.accounts()
    # ε = 10 is ρ = 50: the restored ρ = 10 budget refuses it, as the original does
    for c in (con, fresh):
        with pytest.raises(provsql_dp.errors.BudgetExceededError):
            c.ledger.charge("zed", Fraction(10), "SELECT …", "laplace")


def test_a_dumped_epsilon_delta_budget_keeps_its_delta_and_the_delta_spent():
    con = provsql_dp.connect(user="cur")
    _protected(con)
    con.execute("SET PRIVACY BUDGET EPSILON 3 DELTA 0.000001 FOR USER 'cur'")
    con.ledger.charge("cur", None, "SELECT …", "gaussian",
                      cost=Cost(epsilon=Fraction(1), delta=Fraction(1, 2 * 10**6)))
    fresh = _restored(con)
    assert fresh.ledger.accounts() == con.ledger.accounts()


def test_a_budget_without_a_decimal_spelling_keeps_its_unit():
    con = provsql_dp.connect(user="cur")
    _protected(con)
    con.ledger.set_budget("thirds", Fraction(1, 3), unit="rho")
    con.ledger.set_budget("sevenths", Fraction(1, 7), unit="epsilon-delta", delta=Fraction(1, 3**9))
    fresh = _restored(con)
    assert fresh.ledger.accounts() == con.ledger.accounts()


# ------------------------------------------------------------------ finding 2 (open): macros
def _same_config(con) -> dict:
    return {"allow_unsigned_extensions": True} if getattr(con, "_native", False) else {}


@pytest.mark.xfail(strict=True, reason=(
    "a macro shadowing a built-in, created by a plain DuckDB connection (no generation bump), "
    "is not seen by a connection that kept its catalog reads: Catalog.shadowed_builtins is "
    "kept with the snapshot and the fingerprint reads no function; reading duckdb_functions() "
    "in the fingerprint costs ~30 ms a statement (DuckDB 2.0, 3234 rows), against < 1 ms now. "
    "No cheaper sign was found (h104follow): filtered on function_type = 'macro', or with "
    "LIMIT 1, it costs the same (28-29 ms: the table function lists every built-in first); of "
    "DuckDB's 46 duckdb_*/pragma_* table functions only duckdb_functions() and "
    "duckdb_connection_count() change on a CREATE MACRO; DuckDB exposes no catalog version to "
    "SQL. A way that needs no detection: provsql_dp's SQL calling built-ins as "
    "system.main.f(…), which no user macro shadows"))
def test_a_macro_created_outside_provsql_dp_stops_a_connection_that_kept_its_reads():
    import duckdb

    name = ":memory:h94_macro"
    cur = provsql_dp.connect(name)
    cur.autocommit = True
    cur.execute("CREATE TABLE p(id INT PRIMARY KEY, name VARCHAR)")
    cur.execute("INSERT INTO p VALUES (1, 'Alice'), (2, 'Bob')")
    cur.execute("PROTECT TABLE p; SET PRIVACY BUDGET 5 FOR USER 'ann'")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        an = provsql_dp.connect(name, role="analyst", user="ann")
    sql = "SELECT COUNT(*) FROM p WHERE upper(name) = 'ALICE' WITH EPSILON 1"
    an.execute(sql).fetchall()
    raw = duckdb.connect(name, config=_same_config(cur))
    raw.execute("CREATE MACRO upper(x) AS (SELECT max(name) FROM p)")
    with pytest.raises(provsql_dp.errors.UnsupportedQueryError, match="name of a DuckDB built-in"):
        an.execute(sql)  # a fresh connection refuses it
    assert an.ledger.remaining("ann") == 4


# ------------------------------------------------------------------ finding 3: the audit on screen
#: what an analyst's refused statement carries into the log: a carriage return and ANSI
#: sequences (erase the line, move up, conceal), which redraw the curator's terminal
_ESCAPES = "SELECT 1 FROM p -- \r\x1b[2K\x1b[1A\x1b[8m\x9b2J\x07\x7f"


@pytest.mark.parametrize("mode", ["table", "box", "markdown", "line", "list", "html"])
def test_an_analysts_statement_cannot_redraw_the_curators_audit_screen(mode):
    """``.audit`` (and any query of the log) printed an analyst's statement as written: a
    carriage return, ANSI escapes (ESC, CSI), BEL or DEL in it went to the curator's terminal,
    which then erased or hid the rows it drew (the analyst's own among them). The shell's
    display modes show control characters escaped (``\\r``, ``\\x1b``)."""
    _, cur, an = _audited_analyst(f"audit_{mode}")
    with pytest.raises(provsql_dp.Error):  # refused, and logged as written
        an.execute(_ESCAPES)
    out, err = io.StringIO(), io.StringIO()
    shell = Shell(cur, out, err)
    assert shell.run_text(f".mode {mode}\n.audit 5"), err.getvalue()
    shown = out.getvalue()
    assert "SELECT 1 FROM p" in shown
    bad = [c for c in shown if (ord(c) < 32 and c != "\n") or 0x7f <= ord(c) < 0xa0]
    assert not bad, repr(shown)
    assert "\\x1b[2K" in shown


# ------------------------------------------------------------------ finding 4: KMEANS and NaN
def _kmeans_outcome(special, declare):
    con = provsql_dp.connect()
    con.autocommit = True
    con.execute("CREATE TABLE pts(id INT PRIMARY KEY, x DOUBLE, y DOUBLE)")
    con.execute("INSERT INTO pts SELECT i, (i % 10) / 10.0, 0.5 FROM range(300) t(i)")
    if special is not None:
        con.execute(f"INSERT INTO pts VALUES (9999, {special}, 0.5)")
    con.execute("PROTECT TABLE pts")
    con.execute(declare)
    con.execute("SET PRIVACY BUDGET 100")
    try:
        rows = con.execute("KMEANS CLUSTERS 2 OF (x, y) FROM pts ITERATIONS 2 "
                           "WITH EPSILON 1").fetchall()
        out = ("released", len(rows))
    except provsql_dp.Error as e:
        out = (type(e).__name__, str(e))
    return out, con.ledger.remaining("default")


@pytest.mark.parametrize("declare", [
    "SET BOUNDS ON pts (x) BETWEEN 0 AND 1; SET BOUNDS ON pts (y) BETWEEN 0 AND 1",
    "CREATE POLICY near ON pts (x, y) AS DELTA 0.1 METRIC L1 DOMAIN [0, 1) WIDTH 0.1, "
    "[0, 1) WIDTH 0.1 BOUNDED"])
def test_kmeans_releases_alike_with_and_without_a_nan_participant(declare):
    """One participant whose x is NaN (not NULL: it was read) made the release fail after the
    charge ("cannot release NaN or infinite values"), every time, while the same table without
    that participant released: the outcome told the analyst, with certainty, whether some
    participant's coordinate is NaN, a fact ε does not pay for. A NaN coordinate is now not
    read, as a NULL one is (an absent record); ±inf is clamped into the box as before."""
    base = _kmeans_outcome(None, declare)
    assert base[0][0] == "released"
    for special in ("'nan'::DOUBLE", "'-nan'::DOUBLE", "'inf'::DOUBLE", "'-inf'::DOUBLE"):
        assert _kmeans_outcome(special, declare) == base, special


# ------------------------------------------------------------------ finding 5: refusals unlogged
def _log_of(name):
    cur = provsql_dp.connect(name, user="cur")
    return cur.execute("SELECT user_name, outcome, reason, statement FROM _provsql_dp.audit_log "
                       "ORDER BY id").fetchall()


def _audited_analyst(tag):
    name = f":memory:h94_refusals_{tag}"
    cur = provsql_dp.connect(name, user="cur")
    _protected(cur)
    cur.execute("SET PRIVACY BUDGET 1 FOR USER 'ann'")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return name, cur, provsql_dp.connect(name, role="analyst", user="ann")


@pytest.mark.parametrize("text", [
    "SELECT * FROM p -- \ud800",                      # a lone surrogate (JSON's "\ud800")
    "SELECT * FROM p WHERE x = '\udcff'",
    "SELECT COUNT(*) FROM p WITH EPSILON 1 -- \ud800",
])
def test_a_statement_with_a_lone_surrogate_is_refused_and_logged(text):
    """A lone surrogate (the explorer's JSON body may carry one: ``"\\ud800"``) made the log's
    INSERT fail, so the refusal was not recorded (only a warning in the server's log): an
    analyst's probes went unaudited. A private query with one failed at its charge, as "the
    private query failed while it read protected data". Now such text is refused up front,
    naming the character, and the refusal is logged with the character escaped."""
    name, cur, an = _audited_analyst(abs(hash(text)))
    with pytest.raises(provsql_dp.ProgrammingError, match="lone surrogate"):
        an.execute(text)
    log = _log_of(name)
    assert [(u, o, r) for u, o, r, _ in log] == [("ann", "refused", "ProgrammingError")]
    assert "\\ud8" in log[0][3] or "\\udc" in log[0][3]
    assert an.ledger.remaining() == 1


def test_statements_refused_for_their_size_or_their_text_are_logged():
    """The size and depth limits and the tokenizer refused before the statement's audited
    block: nothing reached the log. Logged now (an oversize text cut, saying how long it was)."""
    name, cur, an = _audited_analyst("limits")
    an.max_statement_bytes = 200
    big = "SELECT COUNT(*) FROM p WHERE " + " OR ".join(f"x = {i}" for i in range(60)) + \
        " WITH EPSILON 1"
    deep = "SELECT " + "(" * 100 + "1" + ")" * 100
    for text in (big, deep, "SELECT 'unterminated"):
        with pytest.raises(provsql_dp.ProgrammingError):
            an.execute(text)
    log = _log_of(name)
    assert [(u, o) for u, o, _, _ in log] == [("ann", "refused")] * 3
    assert log[1][3] == deep and log[2][3] == "SELECT 'unterminated"
    assert an.ledger.remaining() == 1


# ------------------------------------------------------------------ finding 6: the analyst's timeout
def _wire_session(release_seconds, engine_limit=300.0):
    from types import SimpleNamespace as NS

    con = provsql_dp.connect(role="analyst", user="ann", release_seconds=release_seconds,
                             release_time_limit=engine_limit)
    return NS(con=con, settings={}, statement_timeout=None,
              server=NS(engine=NS(release_time_limit=engine_limit)))


def test_a_sessions_statement_timeout_does_not_undercut_the_curators_padding():
    """With ``--release-seconds S`` every release takes S (the curator closes the running-time
    channel), and its work stops at the connection's release time limit, after which the
    data-independent fallback answers. A wire session's ``SET statement_timeout`` lowered that
    limit to whatever the analyst chose: with S = 1 s and ``'30ms'``, an unbounded SUM over
    2 000 rows came back real and over 3 000 000 rows as the fallback (≈ 0), both after 1 s —
    the analyst picks the threshold, statement by statement, and reads whether the work took
    longer: the channel the padding closed (for any T in [S − 1 s, S): the session's watchdog
    stops the statement at T + 1 s, during the padding). The session's timeout now stops the statement as
    before but never brings the release's own limit below S."""
    from provsql_dp.interfaces.pgwire._execute import execute

    session = _wire_session(1.0)
    assert execute(session, "SET statement_timeout = '30ms'").tag == "SET"
    assert session.statement_timeout == pytest.approx(0.03)  # the statement still stops
    assert session.con.release_time_limit >= 1.0
    # without padding the running time is seen anyway: the session's limit applies as before
    session = _wire_session(None)
    execute(session, "SET statement_timeout = '30ms'")
    assert session.con.release_time_limit == pytest.approx(0.03)
