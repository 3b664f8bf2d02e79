"""Through plain PEP 249: a misspelt keyword of ours gets "did you mean" in the ProgrammingError
(the shell shows the same message), and ``interval_columns`` puts a private answer's interval
into the rows, so ``pd.read_sql`` keeps it (issue 13)."""

from __future__ import annotations

import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import provsql_dp
from provsql_dp.errors import ProgrammingError
from provsql_dp.sql.suggest import KEYWORDS, did_you_mean, with_hint


def _db(path=":memory:", **kw):
    con = provsql_dp.connect(str(path), **kw)
    con.execute("CREATE TABLE emp(id INT PRIMARY KEY, dept VARCHAR, salary DOUBLE)")
    con.execute("INSERT INTO emp SELECT range, ['a', 'b', 'c'][range % 3 + 1], (range * 37) % 1000 "
                "FROM range(600)")
    con.execute("PROTECT TABLE emp; SET PRIVACY BUDGET 20; SET PRIVACY BUDGET 5 FOR USER 'ann'; "
                "SET BOUNDS ON emp (salary) BETWEEN 0 AND 1000; "
                "SET GROUP KEYS ON emp (dept) VALUES ('a', 'b', 'c')")
    return con


# ------------------------------------------------------------------------------- did you mean
@pytest.mark.parametrize("sql, hint", [
    ("SELECT COUNT(*) FROM emp WITH EPSLON 0.1", "EPSILON"),
    ("PROTCT TABLE emp", "PROTECT"),
    ("SET PRIVACY BUGDET 1", "BUDGET"),
    ("SELECT COUNT(*) FROM emp WITH EPSILON 1 OPTINS (theta = 1)", "OPTIONS"),
    ("SHOW POLICES", "POLICIES"),
    ("EXPLAIN PRIVACY SELECT COUNT(*) FROM emp WITH ACCURCY 5", "ACCURACY"),
    ("EXPLAIN PRIVACY SELECT COUNT(*) FROM emp WITH EPSILON 1 ESTIMATE EROR WITH EPSILON 1",
     "ERROR"),
])
def test_the_dbapi_names_the_keyword_and_spends_nothing(sql, hint):
    con = _db()
    with pytest.raises(ProgrammingError) as err:
        con.cursor().execute(sql)
    first = str(err.value).splitlines()[0]
    assert first.endswith(f"(did you mean {hint}?)"), str(err.value)
    assert con._ledger.remaining("default") == 20


def test_an_analysts_typo_is_a_syntax_error_with_the_hint_not_a_refusal(tmp_path):
    _db(tmp_path / "db.duckdb").close()
    an = provsql_dp.connect(str(tmp_path / "db.duckdb"), role="analyst", user="ann")
    with pytest.raises(ProgrammingError, match=r"syntax error.*did you mean EPSILON\?"):
        an.execute("SELECT COUNT(*) FROM emp WITH EPSLON 0.1")
    with pytest.raises(ProgrammingError, match="an analyst cannot run DELETE"):
        an.execute("DELETE FROM emp")  # a real refusal keeps its message


def test_no_hint_for_errors_that_are_not_about_our_words():
    con = _db()
    with pytest.raises(ProgrammingError) as err:
        con.execute("SELECT nonexistent FROM emp")
    assert "(did you mean" not in str(err.value).splitlines()[0]
    assert with_hint("Binder Error: x", "SELECT 1 WITH EPSLON 1") == "Binder Error: x"


def test_the_shell_shows_the_cursors_hint_once():
    from test_shell import make_shell

    sh, out, err = make_shell(_db())
    sh.run_statement("SELECT COUNT(*) FROM emp WITH EPSLON 0.1")
    assert err.getvalue().count("did you mean EPSILON?") == 1, err.getvalue()


@settings(max_examples=40, deadline=None)
@given(word=st.sampled_from([k for k in KEYWORDS if len(k) >= 7]), seed=st.integers(0, 100))
def test_a_transposed_pair_of_letters_is_named(word, seed):
    i = 1 + seed % (len(word) - 3)
    typo = word[:i] + word[i + 1] + word[i] + word[i + 2:]
    hint = did_you_mean(f"SELECT 1 {typo} 2")
    assert typo in KEYWORDS or (hint is not None and word in hint), (word, typo, hint)


# ----------------------------------------------------------------------------- interval columns
pd = pytest.importorskip("pandas")


def _read_sql(sql, con):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas: "only SQLAlchemy connectables are tested"
        return pd.read_sql(sql, con)


def test_read_sql_gets_the_interval_columns_named_as_fetchdf_names_them():
    con = _db(interval_columns=True)
    df = _read_sql("SELECT dept, COUNT(*) AS n, AVG(salary) AS s FROM emp GROUP BY dept "
                   "WITH EPSILON 1", con)
    assert list(df.columns) == ["dept", "n", "n_low", "n_high", "s", "s_low", "s_high"]
    info = con.privacy
    assert info.value_names == ("n", "s")
    assert df.n_low.tolist() == [row[0][0] for row in info.intervals(0.95)]
    assert df.s_high.tolist() == [row[1][1] for row in info.intervals(0.95)]
    assert ((df.n_low <= df.n) & (df.n <= df.n_high)).all()
    cur = con.execute("SELECT COUNT(*) AS n FROM emp WITH EPSILON 1")
    assert list(cur.fetchdf().columns) == ["n", "n_low", "n_high"]  # not added twice


def test_a_one_sided_interval_has_a_null_end_and_the_coverage_is_the_one_asked():
    con = _db(interval_columns=0.9)
    cur = con.execute("SELECT COUNT(*) AS n FROM emp a JOIN emp b ON a.dept = b.dept "
                      "WITH EPSILON 1")  # a join: the recursive mechanism, one-sided
    (row,) = cur.fetchall()
    assert [c[0] for c in cur.description] == ["n", "n_low", "n_high"]
    assert row[2] is None and row[1] == cur.privacy.intervals(0.9)[0][0][0]
    assert cur.privacy.mechanism == "recursive"
    assert cur.privacy.covers() == ["the true answer, from below only (the mechanism's "
                                    "truncation is data-dependent and not released)"]


def test_per_statement_option_and_default_unchanged():
    con = _db()
    assert list(_read_sql("SELECT COUNT(*) AS n FROM emp WITH EPSILON 1", con).columns) == ["n"]
    got = _read_sql("SELECT COUNT(*) AS n FROM emp WITH EPSILON 1 OPTIONS (intervals = 0.8)", con)
    assert list(got.columns) == ["n", "n_low", "n_high"]
    assert got.n_low[0] == con.privacy.intervals(0.8)[0][0][0]
    on = _db(interval_columns=True)
    got = _read_sql("SELECT COUNT(*) AS n FROM emp WITH EPSILON 1 OPTIONS (intervals = false)", on)
    assert list(got.columns) == ["n"]
    cur = on.cursor()
    cur.interval_columns = False
    assert [c[0] for c in cur.execute("SELECT COUNT(*) AS n FROM emp WITH EPSILON 1").description] == ["n"]
    q = _read_sql("SELECT MEDIAN(salary) AS m FROM emp WITH EPSILON 1", on)
    assert list(q.columns) == ["m", "m_low", "m_high"]


@pytest.mark.parametrize("opt", ["'columns'", "1.5", "0.3"])
def test_a_bad_intervals_option_is_refused_before_the_charge(opt):
    con = _db()
    with pytest.raises(ProgrammingError, match="option intervals"):
        con.execute(f"SELECT COUNT(*) FROM emp WITH EPSILON 1 OPTIONS (intervals = {opt})")
    assert con._ledger.remaining("default") == 20


def test_a_bad_connection_setting_is_refused():
    with pytest.raises(ProgrammingError, match="interval_columns"):
        provsql_dp.connect(interval_columns=1.5)


def test_every_keyword_of_the_help_syntax_lines_can_be_suggested():
    from provsql_dp.interfaces.shell.statement_help import KEYWORDS as SHELL_KEYWORDS
    from provsql_dp.interfaces.shell.statement_help import STATEMENTS

    words = {w for syntax, _, _ in STATEMENTS for w in syntax.replace("|", " ").split()
             if w.isalpha() and w.isupper() and len(w) > 2}
    assert words <= set(KEYWORDS), sorted(words - set(KEYWORDS))
    assert SHELL_KEYWORDS is KEYWORDS  # one list for the shell, its completion and the DB-API
