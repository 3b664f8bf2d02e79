-- Statements that must be rejected with a helpful message, tested by tests/unit/test_grammar.py.
--
-- Each statement is preceded by one annotation line:
--   -- error: <text the message must contain> | at: parse|run [| bug: <why this fails today>]
-- * at: parse — the grammar rejects it: provsql_dp.sql.dialect.parse_one raises sqlglot's
--   ParseError containing the text, and Connection.execute raises ProgrammingError containing it;
-- * at: run — it parses, but running it raises ProgrammingError containing the text;
-- * error: * — any message (used where the helpful wording is not settled yet);
-- * bug: — a known defect; the test is an expected failure (strict: it starts failing loudly
--   when the defect is fixed, so the marker gets removed).
-- In every case the privacy catalog and the budget ledger are left unchanged, and no other
-- exception type escapes. The tests run these on a connection holding
--   CREATE TABLE t (a INTEGER, b VARCHAR); CREATE TABLE p (a INTEGER); PROTECT TABLE p;
--   CREATE VIEW v AS SELECT a FROM t;
--   SET BOUNDS ON p (a) BETWEEN 0 AND 10; SET GROUP KEYS ON p (a) VALUES (1, 2);

-- ---------------------------------------------------------------- PROTECT / UNPROTECT

-- error: Expected a table name | at: parse
PROTECT TABLE;

-- error: Expected '(' and a list of columns after BY | at: parse
PROTECT TABLE t BY a;

-- error: Expected a column name in BY | at: parse
PROTECT TABLE t BY ();

-- error: Expected ')' to close the BY column list | at: parse
PROTECT TABLE t BY (a b);

-- error: Expected ')' to close the BY column list | at: parse
PROTECT TABLE t BY (t.a);

-- error: Expected a domain name after AS | at: parse
PROTECT TABLE t AS;

-- error: Unexpected token | at: parse
PROTECT TABLE t BY (a) AS person extra;

-- BY comes before AS.
-- error: Unexpected token | at: parse
PROTECT TABLE t AS person BY (a);

-- error: Unexpected token | at: parse
PROTECT TABLE t BY (a) BY (b);

-- error: Expected TABLE after PROTECT | at: parse
PROTECT VIEW v;

-- error: Expected a table name | at: parse
UNPROTECT TABLE;

-- error: Unexpected token | at: parse
UNPROTECT TABLE t BY (a);

-- error: Unexpected token | at: parse
SHOW PROTECTED t;

-- error: Expected a column name after ',' | at: parse
PROTECT TABLE t BY (a,);

-- error: Expected a column name in BY | at: parse
PROTECT TABLE t BY (1);

-- error: Expected a domain name after AS | at: parse
PROTECT TABLE t BY (a) AS 'person';

-- error: Expected TABLE after PROTECT | at: parse
PROTECT t;

-- ---------------------------------------------------------------- budgets and ε

-- error: Expected a number for the privacy budget | at: parse
SET PRIVACY BUDGET;

-- error: the privacy budget must be positive | at: parse
SET PRIVACY BUDGET -1;

-- error: Expected a number for the privacy budget | at: parse
SET PRIVACY BUDGET '1';

-- Digits are required before the point.
-- error: Expected a number for the privacy budget | at: parse
SET PRIVACY BUDGET .5;

-- Only SET PRIVACY EPSILON takes an optional "=".
-- error: Expected a number for the privacy budget | at: parse
SET PRIVACY BUDGET = 1;

-- error: Expected USER after FOR | at: parse
SET PRIVACY BUDGET 1 FOR 'bob';

-- error: Expected a user name after FOR USER | at: parse
SET PRIVACY BUDGET 1 FOR USER;

-- error: Expected a user name after FOR USER | at: parse
SHOW PRIVACY BUDGET FOR USER;

-- error: Unexpected token | at: parse
SHOW PRIVACY BUDGET 1;

-- error: must be positive | at: run
SET PRIVACY BUDGET 0;

-- error: Expected a number for the budget's ρ | at: parse
SET PRIVACY BUDGET RHO;

-- error: strictly between 0 and 1 | at: run
SET PRIVACY BUDGET EPSILON 1 DELTA 2;

-- error: Expected a number for rho | at: parse
SELECT COUNT(*) FROM p WITH RHO;

-- error: rho must be positive | at: run
SELECT COUNT(*) FROM p WITH RHO 0;

-- error: delta must lie strictly between 0 and 1 | at: run
SELECT COUNT(*) FROM p WITH EPSILON 1 DELTA 1;

-- error: Expected a number for epsilon | at: parse
SET PRIVACY EPSILON;

-- error: epsilon must be positive | at: parse
SET PRIVACY EPSILON -0.5;

-- error: Unexpected token | at: parse
SET PRIVACY EPSILON 1 FOR USER bob;

-- error: epsilon must be positive | at: run
SET PRIVACY EPSILON 0;

-- error: Expected BUDGET or EPSILON after SET PRIVACY | at: parse
SET PRIVACY FOO 1;

-- error: Expected a number for epsilon | at: parse
SELECT COUNT(*) FROM p WITH EPSILON;

-- error: epsilon must be positive | at: parse
SELECT COUNT(*) FROM p WITH EPSILON -1;

-- error: Expected a number for epsilon | at: parse
SELECT COUNT(*) FROM p WITH EPSILON 'one';

-- error: Unexpected token | at: parse
SELECT COUNT(*) FROM p WITH EPSILON 1 FOR USER 'bob';

-- error: Unexpected token | at: parse
SELECT COUNT(*) FROM p WITH EPSILON 1 2;

-- ---------------------------------------------------------------- declarations that parse but are refused

-- error: no such table | at: run
PROTECT TABLE missing;

-- error: has no column 'nope' | at: run
PROTECT TABLE t BY (nope);

-- error: already protected | at: run
PROTECT TABLE p;

-- error: cannot protect view | at: run
PROTECT TABLE v;

-- error: different types | at: run
PROTECT TABLE t BY (a, b);

-- error: is not protected | at: run
UNPROTECT TABLE t;

-- error: is not protected | at: run
UNPROTECT TABLE missing;

-- error: Expected '(' after OPTIONS | at: parse
SELECT COUNT(*) FROM t WITH EPSILON 1 OPTIONS theta = 1;

-- error: Expected '=' after option theta | at: parse
SELECT COUNT(*) FROM t WITH EPSILON 1 OPTIONS (theta 1);

-- error: Expected ')' to close OPTIONS | at: parse
SELECT COUNT(*) FROM t WITH EPSILON 1 OPTIONS (theta = 1;

-- ---------------------------------------------------------------- policies

-- error: Expected a policy graph | at: parse
CREATE POLICY pol ON p (a) AS WIGGLY DOMAIN [0, 10) WIDTH 1;

-- error: GRID cannot be composed | at: parse
CREATE POLICY pol ON p (a) AS (LINE, GRID 1) DOMAIN [0, 10) WIDTH 1;

-- error: Expected AS and a policy graph | at: parse
CREATE POLICY pol ON p (a) LINE DOMAIN [0, 10) WIDTH 1;

-- error: Expected '(' and the policy's columns | at: parse
CREATE POLICY pol ON p AS LINE;

-- error: Expected ')' to close [lo, hi) | at: parse
CREATE POLICY pol ON p (a) AS LINE DOMAIN [0, 10] WIDTH 1;

-- error: Expected WIDTH w or BINS n | at: parse
CREATE POLICY pol ON p (a) AS LINE DOMAIN [0, 10);

-- error: must be a whole number | at: parse
CREATE POLICY pol ON p (a) AS THRESHOLD 1.5 DOMAIN [0, 10) WIDTH 1;

-- error: the threshold θ must be positive | at: parse
CREATE POLICY pol ON p (a) AS THRESHOLD -2 DOMAIN [0, 10) WIDTH 1;

-- error: SOURCES needs an UNBOUNDED policy | at: parse
CREATE POLICY pol ON p (a) AS LINE DOMAIN [0, 10) WIDTH 1 BOUNDED SOURCES (1);

-- error: Expected a policy name | at: parse
DROP POLICY;

-- error: Unexpected token | at: parse
SHOW POLICIES p;

-- error: Expected '(' and a list of range conditions | at: parse
COUNT RANGES a BETWEEN 1 AND 2 FROM p WITH EPSILON 1;

-- error: Expected FROM | at: parse
COUNT RANGES (a BETWEEN 1 AND 2) WITH EPSILON 1;

-- error: Expected WITH EPSILON ε or WITH ACCURACY | at: parse
EXPLAIN PRIVACY SELECT COUNT(*) FROM p;

-- error: not both | at: parse
EXPLAIN PRIVACY SELECT COUNT(*) FROM p WITH EPSILON 1 WITH ACCURACY 2;

-- error: not with WITH ACCURACY | at: parse
EXPLAIN PRIVACY SELECT COUNT(*) FROM p WITH ACCURACY 2 ESTIMATE ERROR WITH EPSILON 0.1;

-- error: Expected ESTIMATE ERROR WITH EPSILON e | at: parse
EXPLAIN PRIVACY SELECT COUNT(*) FROM p WITH EPSILON 1 ESTIMATE WITH EPSILON 0.1;

-- error: no table | at: run
CREATE POLICY pol ON missing (a) AS LINE DOMAIN [0, 10) WIDTH 1;

-- error: on view | at: run
CREATE POLICY pol ON v (a) AS LINE DOMAIN [0, 10) WIDTH 1;

-- error: has no column 'nope' | at: run
CREATE POLICY pol ON p (nope) AS LINE DOMAIN [0, 10) WIDTH 1;

-- Blowfish assumes one record per individual: the table must be protected row by row.
-- error: is not protected | at: run
CREATE POLICY pol ON t (a) AS LINE DOMAIN [0, 10) WIDTH 1;

-- error: give the public domain | at: run
CREATE POLICY pol ON p (a) AS LINE;

-- error: GRID θ is a policy on two columns | at: run
CREATE POLICY pol ON p (a) AS GRID 1 DOMAIN [0, 10) WIDTH 1;

-- error: the domain does not fit the column types | at: run
CREATE POLICY pol ON p (a) AS FULL DOMAIN ('x', 'y');

-- error: is empty | at: run
CREATE POLICY pol ON p (a) AS LINE DOMAIN [10, 0) WIDTH 1;

-- error: outside the domain | at: run
CREATE POLICY pol ON p (a) AS LINE DOMAIN [0, 10) WIDTH 1 SOURCES (20);

-- error: in no partition group | at: run
CREATE POLICY pol ON p (a) AS PARTITION BY ((1, 2), (3)) DOMAIN (1, 2, 3, 4);

-- error: does not exist | at: run
DROP POLICY nothing;

-- ---------------------------------------------------------------- column declarations

-- error: Expected ON table (column) after SET BOUNDS | at: parse
SET BOUNDS p (a) BETWEEN 0 AND 1;

-- error: Expected '(' and a column name | at: parse
SET BOUNDS ON p BETWEEN 0 AND 1;

-- One column per declaration.
-- error: Expected ')' after the column name | at: parse
SET BOUNDS ON p (a, b) BETWEEN 0 AND 1;

-- error: Expected BETWEEN lower AND upper | at: parse
SET BOUNDS ON p (a) 0 AND 1;

-- error: Expected AND and the upper bound | at: parse
SET BOUNDS ON p (a) BETWEEN 0;

-- error: Expected a number for the lower bound | at: parse
SET BOUNDS ON p (a) BETWEEN 'zero' AND 1;

-- error: Unexpected token | at: parse
SET BOUNDS ON p (a) BETWEEN 0 AND 1 2;

-- error: Expected ON table (column) after DROP BOUNDS | at: parse
DROP BOUNDS p (a);

-- error: Unexpected token | at: parse
SHOW BOUNDS p;

-- error: Expected KEYS after SET GROUP | at: parse
SET GROUP p (a) VALUES (1);

-- error: Expected VALUES (v, …) or FROM public_table (column) | at: parse
SET GROUP KEYS ON p (a);

-- error: Expected key value | at: parse
SET GROUP KEYS ON p (a) VALUES ();

-- NULL is never a group key.
-- error: Expected key value | at: parse
SET GROUP KEYS ON p (a) VALUES (1, NULL);

-- error: Expected '(' and a list of key values | at: parse
SET GROUP KEYS ON p (a) VALUES 1, 2;

-- error: Expected '(' and a column name | at: parse
SET GROUP KEYS ON t (a) FROM p;

-- error: Expected ON table (column) after DROP GROUP KEYS | at: parse
DROP GROUP KEYS p (a);

-- error: Unexpected token | at: parse
SHOW GROUP KEYS p;

-- error: no such table | at: run
SET BOUNDS ON missing (a) BETWEEN 0 AND 1;

-- error: has no column 'nope' | at: run
SET BOUNDS ON p (nope) BETWEEN 0 AND 1;

-- error: is not numeric | at: run
SET BOUNDS ON t (b) BETWEEN 0 AND 1;

-- error: cannot declare bounds on view | at: run
SET BOUNDS ON v (a) BETWEEN 0 AND 1;

-- error: the lower bound must be below the upper bound | at: run
SET BOUNDS ON p (a) BETWEEN 5 AND 1;

-- error: the lower bound must be below the upper bound | at: run
SET BOUNDS ON p (a) BETWEEN 1 AND 1;

-- error: bounds must lie within ±1e+15 | at: run
SET BOUNDS ON p (a) BETWEEN 0 AND 1e16;

-- error: no bounds are declared on t (a) | at: run
DROP BOUNDS ON t (a);

-- error: does not fit column a (INTEGER) | at: run
SET GROUP KEYS ON p (a) VALUES (1, 'x');

-- error: not a whole number | at: run
SET GROUP KEYS ON p (a) VALUES (1.5);

-- error: has no column 'nope' | at: run
SET GROUP KEYS ON p (nope) VALUES (1);

-- Keys from a protected table would reveal its rows.
-- error: is protected: group keys must come from a public table | at: run
SET GROUP KEYS ON t (a) FROM p (a);

-- error: no such table | at: run
SET GROUP KEYS ON t (a) FROM missing (a);

-- error: cannot read group keys from view | at: run
SET GROUP KEYS ON p (a) FROM v (a);

-- error: no group keys are declared on t (a) | at: run
DROP GROUP KEYS ON t (a);

-- error: Expected WINDOW | at: parse
CREATE STREAM s WITH EPSILON 1;

-- error: Expected STEPS | at: parse
CREATE STREAM s WINDOW 3 WITH EPSILON 1;

-- error: Expected a whole number for the window | at: parse
CREATE STREAM s WINDOW 2.5 STEPS WITH EPSILON 1;

-- error: the window must be at least 1 step | at: run
CREATE STREAM s WINDOW 0 STEPS WITH EPSILON 1;

-- error: Expected AS and the query | at: parse
PUBLISH STREAM s STEP 1 WITH EPSILON 1;

-- error: no WITH EPSILON of its own | at: parse
PUBLISH STREAM s STEP 1 WITH EPSILON 1 AS SELECT 1 WITH EPSILON 1;

-- error: stream 'nope' does not exist | at: run
PUBLISH STREAM nope STEP 1 WITH EPSILON 1 AS SELECT 1;

-- error: Expected the number of clusters | at: parse
KMEANS CLUSTERS OF (a) FROM p WITH EPSILON 1;

-- error: Expected OF | at: parse
KMEANS CLUSTERS 2 (a) FROM p WITH EPSILON 1;

-- error: no accuracy-first form | at: parse
KMEANS CLUSTERS 2 OF (a) FROM p WITH ACCURACY 1;

-- error: table 'p' has no column 'b' | at: run
KMEANS CLUSTERS 2 OF (b) FROM p WITH EPSILON 1;

-- error: is not protected | at: run
KMEANS CLUSTERS 2 OF (a) FROM t WITH EPSILON 1;

-- error: Expected OFFLINE WEIGHTS (…) or ONLINE HORIZON n PROBABILITY p | at: parse
CREATE STREAM s WINDOW 2 STEPS WITH EPSILON 1 ALLOCATE EVENLY;

-- error: Expected WEIGHTS | at: parse
CREATE STREAM s WINDOW 2 STEPS WITH EPSILON 1 ALLOCATE OFFLINE (1, 2);

-- error: every weight is 0 | at: run
CREATE STREAM s WINDOW 2 STEPS WITH EPSILON 1 ALLOCATE OFFLINE WEIGHTS (0, 0);

-- error: Expected PROBABILITY p | at: parse
CREATE STREAM s WINDOW 2 STEPS WITH EPSILON 1 ALLOCATE ONLINE HORIZON 10;

-- error: PROBABILITY must be in [0, 1] | at: run
CREATE STREAM s WINDOW 2 STEPS WITH EPSILON 1 ALLOCATE ONLINE HORIZON 10 PROBABILITY 1.5;

-- The recursive mechanism's error depends on the data: no accuracy-first ε.
-- error: WITH ACCURACY is not available for this query | at: run
SELECT COUNT(*) FROM p p1 JOIN p p2 ON p1.a = p2.a WITH ACCURACY 5;
