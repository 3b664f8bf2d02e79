"""The unbounded SUM's pass texts (the weight, the direct totals' SQL, the native pass's SQL)
kept next to their plan (``privacy/_kept_texts``, ``fast_path.release_single_owner``): a repeat
reuses them, two plans whose other inputs coincide (the same weight over two tables) never share
them, and every statement runs exactly the text a fresh connection builds for it — for another
ε (its parameters are in the native pass's spec), the default ε under the same text, after a
change of the declarations or of the schema."""

from __future__ import annotations

import pytest

import provsql_dp
from provsql_dp.privacy import fast_path


def _connect():
    c = provsql_dp.connect()
    c.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, x DOUBLE, y DOUBLE)")
    c.execute("INSERT INTO t SELECT range, range % 17, range % 5 FROM range(300)")
    c.execute("PROTECT TABLE t")
    c.execute("SET PRIVACY BUDGET 1000")
    return c


@pytest.fixture
def passes(monkeypatch):
    """Every bucket pass's (totals SQL, native pass), and the texts freshly built."""
    seen, built = [], []
    real_eb, real_direct = fast_path.engine_buckets, fast_path.direct_totals_sql

    def eb(run, sql, *a, native=None, **k):
        seen.append((sql, native))
        return real_eb(run, sql, *a, native=native, **k)

    def direct(*a):
        out = real_direct(*a)
        built.append(out)
        return out

    monkeypatch.setattr(fast_path, "engine_buckets", eb)
    monkeypatch.setattr(fast_path, "direct_totals_sql", direct)
    return seen, built


def _fresh(statements):
    """The (totals SQL, native pass) a fresh connection runs for the last of ``statements``."""
    c = _connect()
    for s in statements[:-1]:
        c.execute(s)
    return _fresh_on(c, statements[-1])


def test_repeats_reuse_the_texts_and_each_epsilon_gets_its_own(passes):
    seen, built = passes
    con = _connect()
    stmts = [f"SELECT SUM(x) FROM t WITH EPSILON {e}" for e in (1, 0.5, 1, 0.5, 1, 0.5)]
    for s in stmts:
        assert con.execute(s).privacy.mechanism.startswith("recursive")
    assert len(built) <= 3  # the catalog starts afresh once; then one build per statement text
    for s, got in zip(stmts[:2], seen[:2]):
        assert got == _fresh([s])
    assert seen[0] == seen[2] == seen[4] and seen[1] == seen[3] == seen[5]
    if seen[0][1] is not None:  # the native pass: ε's parameters in its spec
        assert seen[0][1] != seen[1][1]


def test_two_tables_with_the_same_weight_never_share_a_text(passes):
    seen, _ = passes
    con = _connect()
    con.execute("CREATE TABLE t2(id INTEGER PRIMARY KEY, x DOUBLE)")
    con.execute("INSERT INTO t2 SELECT range, 3 FROM range(50)")
    con.execute("PROTECT TABLE t2")
    for _ in range(2):
        for table in ("t", "t2"):
            con.execute(f"SELECT SUM(x) FROM {table} WITH EPSILON 1")
    assert seen[0] == seen[2] != seen[1] == seen[3]
    assert "t2" in seen[1][0] and "t2" not in seen[0][0]


def test_the_default_epsilon_under_one_text_gets_its_own_native_pass(passes):
    seen, _ = passes
    con = _connect()
    runs = []
    for eps in (1, 0.25, 1):
        con.execute(f"SET PRIVACY EPSILON {eps}")
        con.execute("SELECT SUM(x) FROM t")
        runs.append(seen[-1])
    assert runs[0] == _fresh(["SET PRIVACY EPSILON 1", "SELECT SUM(x) FROM t"])
    assert runs[1] == _fresh(["SET PRIVACY EPSILON 0.25", "SELECT SUM(x) FROM t"])
    assert runs[2] == runs[0]


def test_a_schema_change_outside_provsql_dp_and_a_declaration_make_new_texts(passes):
    seen, built = passes
    con = _connect()
    q = "SELECT SUM(x) FROM t WITH EPSILON 1"
    for _ in range(3):
        con.execute(q)
    before = len(built)
    con._duck.execute("ALTER TABLE t ADD COLUMN u DOUBLE")  # behind provsql_dp's back
    con.execute(q)
    assert len(built) > before  # a new plan: its texts built afresh, never the old plan's
    alter = ["ALTER TABLE t ADD COLUMN u DOUBLE"]
    fresh = _connect()
    fresh._duck.execute(alter[0])
    assert seen[-1] == _fresh_on(fresh, q)
    # a new declaration: each y value a participant owning several rows (the GROUP BY owner path)
    for s in ("UNPROTECT TABLE t", "PROTECT TABLE t BY (y) AS person"):
        con.execute(s)
    con.execute(q)
    assert "GROUP BY" in seen[-1][0] and seen[-1] != seen[0]
    other = _connect()
    other._duck.execute(alter[0])
    for s in ("UNPROTECT TABLE t", "PROTECT TABLE t BY (y) AS person"):
        other.execute(s)
    assert seen[-1] == _fresh_on(other, q)


def _fresh_on(c, statement):
    """The (totals SQL, native pass) connection ``c`` runs for ``statement``."""
    seen = []
    real = fast_path.engine_buckets

    def eb(run, sql, *a, native=None, **k):
        seen.append((sql, native))
        return real(run, sql, *a, native=native, **k)

    fast_path.engine_buckets = eb
    try:
        c.execute(statement)
    finally:
        fast_path.engine_buckets = real
    return seen[-1]
