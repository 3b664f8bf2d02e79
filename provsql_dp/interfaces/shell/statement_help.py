"""What ``.help`` says about our statements (each with an example), and the "did you mean"
hint for a misspelt keyword of ours.

:data:`STATEMENTS` lists every statement of ``grammar/provsql_dp.ebnf`` — the privacy
statements of :data:`provsql_dp.sql.dialect.PRIVACY_STATEMENTS` and the private query — with its
syntax, what it does, who may run it and an example that parses to it (a test checks that no
statement is missing and that every example parses).

:func:`did_you_mean` (from :mod:`provsql_dp.sql.suggest`, which the DB-API cursor uses too, so
the shell shows the cursor's hinted message) looks at the words of a statement that failed to
parse and names the keyword of ours each one was probably meant to be, so ``WITH EPSLON 0.1``
gets "did you mean EPSILON?". It reads only the statement's text.

>>> did_you_mean("SELECT COUNT(*) FROM t WITH EPSLON 0.1")
'did you mean EPSILON?'
>>> did_you_mean("PROTCT TABLE people"), did_you_mean("SELECT 1")
('did you mean PROTECT?', None)
"""

from __future__ import annotations

from ...sql import suggest as _suggest

__all__ = ["STATEMENTS", "statements_help", "did_you_mean", "KEYWORDS"]

#: (syntax, what it does, example) for each statement of ours, in the grammar's order.
STATEMENTS: list[tuple[str, str, str]] = [
    ("PROTECT TABLE t [BY (c, ...)] [AS domain]",
     "declare who is protected: each row of t, or the owners named by the BY columns (curator)",
     "PROTECT TABLE friendship BY (src, dst) AS member"),
    ("UNPROTECT TABLE t", "remove t's declaration (curator)", "UNPROTECT TABLE friendship"),
    ("SHOW PROTECTED [TABLES]", "the protected tables", "SHOW PROTECTED"),
    ("SET PRIVACY BUDGET eps [FOR USER name]", "a user's total privacy budget (curator)",
     "SET PRIVACY BUDGET 1 FOR USER 'ann'"),
    ("SHOW PRIVACY BUDGET [FOR USER name]", "budgets: total, spent, remaining",
     "SHOW PRIVACY BUDGET"),
    ("SET PRIVACY EPSILON [=] eps", "the session's default ε for aggregate queries",
     "SET PRIVACY EPSILON 0.1"),
    ("<query> WITH EPSILON eps [OPTIONS (name = value, ...)]",
     "release a COUNT, SUM or AVG privately (ε charged first; OPTIONS: mechanism ('laplace', "
     "'recursive', 'r2t'), theta, beta, mu, split, privacy, lower, upper, max_groups, "
     "max_contribution, lp_gap, raw = true (keep a COUNT's raw float release; by default counts are "
     "whole and never negative)); the answer comes with its 95% interval and what it covers",
     "SELECT COUNT(*) FROM friendship WITH EPSILON 0.5 OPTIONS (raw = true)"),
    ("<query> WITH ACCURACY a [CONFIDENCE c]",
     "release at the smallest ε meeting accuracy a (policy routes and the Laplace route; refused "
     "when the error depends on the data: the recursive mechanism, R2T)",
     "SELECT age, COUNT(*) FROM people GROUP BY age WITH ACCURACY 10"),
    ("SELECT MEDIAN(c) | QUANTILE_CONT(c, q) | QUANTILE_DISC(c, q) FROM t WITH EPSILON eps",
     "a private quantile of one column: noise δ/ε under a BOUNDED DELTA policy on (c), else "
     "(hi − lo)/ε with SET BOUNDS on c (refused without either)",
     "SELECT QUANTILE_CONT(km, 0.9) FROM trips WITH EPSILON 1"),
    ("SET BOUNDS ON t (c) BETWEEN lo AND hi",
     "a SUM/AVG of c is clamped to [lo, hi]; a MEDIAN/QUANTILE of c uses them (curator)",
     "SET BOUNDS ON employees (salary) BETWEEN 0 AND 200000"),
    ("DROP BOUNDS ON t (c)", "remove c's bounds (curator)", "DROP BOUNDS ON employees (salary)"),
    ("SHOW BOUNDS [ON t]", "the declared bounds", "SHOW BOUNDS ON employees"),
    ("SET GROUP KEYS ON t (c) VALUES (v, ...) | FROM pub (col)",
     "the public groups of GROUP BY c, listed or from a public table's column (curator)",
     "SET GROUP KEYS ON employees (dept_id) FROM departments (id)"),
    ("DROP GROUP KEYS ON t (c)", "remove c's group keys (curator)",
     "DROP GROUP KEYS ON employees (dept_id)"),
    ("SHOW GROUP KEYS [ON t]", "the declared group keys", "SHOW GROUP KEYS"),
    ("CREATE POLICY p ON t (c [, c]) AS graph DOMAIN ... [BOUNDED | UNBOUNDED [SOURCES (...)]] "
     "[KNOWN COUNTS TOTAL | BY (c) | ((v, ...), ...)]",
     "a Blowfish policy: which values of c must stay indistinguishable (graph: FULL, LINE, "
     "THRESHOLD k, GRID k, PARTITION BY ..., DELTA d [METRIC L1|EUCLIDEAN], or (g1, g2) one per "
     "column); KNOWN COUNTS: counts published exactly, the histogram projected onto them "
     "(curator)",
     "CREATE POLICY age_line ON people (age) AS LINE DOMAIN [0, 120) WIDTH 1"),
    ("DROP POLICY [IF EXISTS] p", "remove a policy (curator)", "DROP POLICY IF EXISTS age_line"),
    ("SHOW POLICIES [ON t]", "the declared policies and what each protects", "SHOW POLICIES"),
    ("COUNT RANGES (cond, ...) FROM t [WHERE ...] [WITH EPSILON eps | WITH ACCURACY a [CONFIDENCE c]]",
     "a batch of range counts released under t's policy",
     "COUNT RANGES (age BETWEEN 18 AND 29, age >= 65) FROM people WITH EPSILON 0.5"),
    ("COUNT CUMULATIVE c FROM t [WHERE ...] [WITH EPSILON eps | WITH ACCURACY a [CONFIDENCE c]]",
     "a cumulative histogram of c under t's policy",
     "COUNT CUMULATIVE age FROM people WITH EPSILON 1"),
    ("KMEANS CLUSTERS k OF (c, ...) FROM t [ITERATIONS n] [WITH EPSILON eps]",
     "Blowfish k-means centres of t's points (c, ...) under their policy (FULL, (FULL, FULL), "
     "DELTA, PARTITION BY WIDTH) or each column's declared range",
     "KMEANS CLUSTERS 3 OF (x, y) FROM checkins WITH EPSILON 1"),
    ("EXPLAIN PRIVACY <query> (WITH EPSILON eps | WITH ACCURACY a [CONFIDENCE c])",
     "the strategy and expected error of a release, or the ε an accuracy needs; reads no data, "
     "charges nothing",
     "EXPLAIN PRIVACY SELECT COUNT(*) FROM people WITH ACCURACY 5 CONFIDENCE 0.95"),
    ("EXPLAIN PRIVACY <query> WITH EPSILON eps ESTIMATE ERROR WITH EPSILON e [CONFIDENCE c]",
     "for a recursive-mechanism query, whose error depends on the data: a private estimate of "
     "the release's noise (Δ, a guaranteed noise bound α, a point RMSE), CHARGED e first (e "
     "about ε/2 for a useful estimate); the truncation (the release errs low) is bounded only "
     "in participants",
     "EXPLAIN PRIVACY SELECT COUNT(*) FROM friendship a JOIN friendship b ON a.dst = b.src "
     "WITH EPSILON 1 ESTIMATE ERROR WITH EPSILON 0.2"),
    ("CREATE STREAM s WINDOW d STEPS WITH EPSILON eps [ALLOCATE OFFLINE WEIGHTS (w, ...) | "
     "ALLOCATE ONLINE HORIZON n PROBABILITY p [SAMPLES N]]",
     "a series of releases where any d consecutive steps spend at most ε; the ledger is "
     "charged ε once; ALLOCATE: the stream picks each step's ε (Fang & Chang §7) (curator)",
     "CREATE STREAM daily WINDOW 7 STEPS WITH EPSILON 1"),
    ("PUBLISH STREAM s STEP t [SENSITIVITY x] [WEIGHT w] [WITH EPSILON eps] AS <query>",
     "release step t's statistic under the stream's window rule (curator)",
     "PUBLISH STREAM daily STEP 1 WITH EPSILON 0.1 AS SELECT COUNT(*) FROM visits WHERE day = 1"),
    ("SHOW STREAMS [s]", "the streams, or one stream's releases", "SHOW STREAMS"),
    ("ATTACH SPARK TABLE t [FROM 'source' [VERSION n]] [PRIMARY KEY (c, ...)] [CHECK (expr)] ... "
     "[SNAPSHOT 'path']",
     "on the Spark engine (serve --engine spark): snapshot a Spark table, 'delta:/path' or "
     "'parquet.`/path`' once and key it to the catalog as t (curator)",
     "ATTACH SPARK TABLE visits FROM 'parquet.`/data/visits`' PRIMARY KEY (id)"),
    ("SHOW AUDIT LOG [LIMIT n]",
     "the audit log's last n rows (default 20): every release and refusal, its ε and unit "
     "(curator)", "SHOW AUDIT LOG LIMIT 5"),
]


def statements_help(word: str | None = None) -> str:
    """The statements part of ``.help`` (only those mentioning ``word`` when given).

    >>> print(statements_help("bounds"))  # doctest: +NORMALIZE_WHITESPACE
    SELECT MEDIAN(c) | QUANTILE_CONT(c, q) | QUANTILE_DISC(c, q) FROM t WITH EPSILON eps
        a private quantile of one column: noise δ/ε under a BOUNDED DELTA policy on (c), else
        (hi − lo)/ε with SET BOUNDS on c (refused without either)
        e.g. SELECT QUANTILE_CONT(km, 0.9) FROM trips WITH EPSILON 1;
    SET BOUNDS ON t (c) BETWEEN lo AND hi
        a SUM/AVG of c is clamped to [lo, hi]; a MEDIAN/QUANTILE of c uses them (curator)
        e.g. SET BOUNDS ON employees (salary) BETWEEN 0 AND 200000;
    DROP BOUNDS ON t (c)
        remove c's bounds (curator)
        e.g. DROP BOUNDS ON employees (salary);
    SHOW BOUNDS [ON t]
        the declared bounds
        e.g. SHOW BOUNDS ON employees;
    """
    out = []
    for syntax, what, example in STATEMENTS:
        if word and word.lower() not in (syntax + " " + what).lower():
            continue
        out += [syntax, f"    {what}", f"    e.g. {example};"]
    return "\n".join(out)


#: The words "did you mean" suggests: :data:`provsql_dp.sql.suggest.KEYWORDS` (the DB-API cursor
#: uses the same hint; a test checks every word of the syntax lines above is there)
KEYWORDS = _suggest.KEYWORDS
did_you_mean = _suggest.did_you_mean
