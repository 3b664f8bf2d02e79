-- A provsql-dp shell session, run as:  provsql-dp shell DB < examples/shell_session.sql
-- (DB: a new database file; the script creates its tables). Each step prints what it shows.

.help

-- 1. The curator's data: a small social network and a public list of cities.
CREATE TABLE person(id INTEGER PRIMARY KEY, city VARCHAR, age INTEGER);
INSERT INTO person SELECT i, ['Lyon', 'Oslo', 'Pune'][1 + i % 3], 20 + (i * 7) % 50
  FROM range(1, 31) t(i);
CREATE TABLE knows(src INTEGER, dst INTEGER, PRIMARY KEY (src, dst));
INSERT INTO knows
  SELECT a.id, b.id FROM person a, person b
  WHERE a.id < b.id AND (b.id - a.id) IN (1, 2, 7);   -- a ';' in a comment ends nothing
CREATE TABLE city(name VARCHAR PRIMARY KEY);
INSERT INTO city VALUES ('Lyon'), ('Oslo'), ('Pune');

-- 2. Who is protected: a friendship needs both people (node privacy), a person is one row.
PROTECT TABLE knows BY (src, dst) AS person;
PROTECT TABLE person;
SET PRIVACY BUDGET 3;
.tables
.protected
.schema knows

-- 3. Private answers: the value, its 95% interval (and what it covers), ε charged and budget left.
SELECT COUNT(*) FROM knows WITH EPSILON 0.5;
SELECT COUNT(*)
  FROM knows a JOIN knows b ON a.dst = b.src
  JOIN knows c ON a.src = c.src AND b.dst = c.dst
  WITH EPSILON 0.5;
-- grouped by a public table joined on its key: every city is released, each at the full ε
-- (a person is in one city: parallel composition, the Laplace mechanism)
SELECT c.name, COUNT(*) FROM person p JOIN city c ON p.city = c.name GROUP BY c.name
  WITH EPSILON 0.6;

-- 4. A session default: aggregates over protected tables are then private.
SET PRIVACY EPSILON 0.2;
SELECT COUNT(*) FROM person WHERE city = 'Oslo';

-- 5. The curator's view: the plan and the mechanism's private diagnostics (nothing charged).
.explain SELECT COUNT(*) FROM knows a JOIN knows b ON a.dst = b.src WITH EPSILON 0.5

-- 6. A Blowfish policy: neighbouring age bands are the secret (not every change of age);
--    cumulative counts are released under it.
CREATE POLICY age_bands ON person (age) AS LINE DOMAIN [20, 70) WIDTH 10;
.policies
COUNT CUMULATIVE age FROM person WITH EPSILON 0.4;

-- 7. Output modes, the timer, and what the ledger recorded.
.mode csv
SELECT name FROM city ORDER BY name;
.mode markdown
.timer on
SELECT COUNT(*) AS cities FROM city;
.timer off
.mode table
.budget
.ledger

-- 8. Ask for more than the budget left and the shell prints one 'Error: …' line, spends
--    nothing and goes on (the exit status is then 1), e.g.
--        SELECT COUNT(*) FROM knows WITH EPSILON 5;
.quit
