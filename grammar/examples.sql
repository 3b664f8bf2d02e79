-- Examples of every production of grammar/provsql_dp.ebnf, tested by tests/unit/test_grammar.py.
--
-- Each example is preceded by one annotation line:
--   -- covers: <productions> | parses: <statement classes> [| <field>=<value>; ...]
-- * covers:  the productions the example exercises; every production of the grammar must be
--            named in at least one covers: line;
-- * parses:  the class each statement must parse to with provsql_dp.sql.dialect.parse (the classes
--            of provsql_dp.sql.dialect, else sqlglot.exp), comma-separated when the example is a
--            script of several statements;
-- * fields:  the intended contents of the (single) statement: table (dotted name), columns
--            (comma-separated), domain, epsilon (an exact fraction, e.g. 1/1000), user, query
--            (the class of the inner query). A field a statement class has but that is not
--            listed must be absent.
-- The example runs from the line after its annotation to the next annotation. Other comment
-- lines are prose. The file also runs top to bottom on a fresh connection (private queries
-- are planned, not released), so the examples stay consistent with what the engine does.

-- ---------------------------------------------------------------- plain DuckDB passes through

-- covers: statement, duckdb_statement | parses: Create
CREATE TABLE edge (src INTEGER, dst INTEGER);

-- covers: script, duckdb_statement | parses: Insert, Create, Insert
INSERT INTO edge VALUES (1, 2), (2, 3), (1, 3), (3, 4);
CREATE TABLE employee (id INTEGER PRIMARY KEY, dept VARCHAR, salary INTEGER);
INSERT INTO employee VALUES (1, 'R&D', 100), (2, 'Sales', 80), (3, 'R&D', 120);

-- covers: script, duckdb_statement | parses: Create, Create, Create, Create
CREATE SCHEMA hr;
CREATE TABLE hr.visit (person_id INTEGER, place VARCHAR);
CREATE TABLE "Order Lines" ("Customer Id" INTEGER, amount INTEGER);
CREATE TABLE trips (rider VARCHAR, driver VARCHAR, fare INTEGER);

-- A string that merely contains our keywords is not ours.
-- covers: duckdb_statement | parses: Select
SELECT 'WITH EPSILON 1' AS s, src FROM edge;

-- ---------------------------------------------------------------- declarations

-- Each row of employee is one participant, keyed by its primary key id; the domain is 'employee'.
-- covers: statement, privacy_statement, declaration_stmt, protect_stmt, table_name, identifier, regular_identifier | parses: Protect | table=employee
PROTECT TABLE employee;

-- covers: privacy_statement, declaration_stmt, show_protected_stmt | parses: ShowProtected
SHOW PROTECTED;

-- covers: show_protected_stmt | parses: ShowProtected
SHOW PROTECTED TABLES;

-- covers: privacy_statement, declaration_stmt, unprotect_stmt, table_name | parses: Unprotect | table=employee
UNPROTECT TABLE employee;

-- Node privacy on a graph: an edge exists only if both of its end points contribute.
-- covers: protect_stmt, by_clause, column_name, domain_clause, domain_name | parses: Protect | table=edge; columns=src, dst; domain=person
PROTECT TABLE edge BY (src, dst) AS person;

-- Keywords are case-insensitive; employee shares the domain person with edge (same key type).
-- covers: protect_stmt, by_clause, domain_clause | parses: Protect | table=employee; columns=id; domain=person
protect table employee by (id) as person;

-- A schema- and catalog-qualified table name.
-- covers: protect_stmt, table_name, by_clause, domain_clause | parses: Protect | table=memory.hr.visit; columns=person_id; domain=person
PROTECT TABLE memory.hr.visit BY (person_id) AS person;

-- covers: unprotect_stmt, table_name | parses: Unprotect | table=hr.visit
UNPROTECT TABLE hr.visit;

-- BY without AS: the domain defaults to the table's name ('trips'); a trip needs both people.
-- covers: protect_stmt, by_clause, column_name | parses: Protect | table=trips; columns=rider, driver
PROTECT TABLE trips BY (rider, driver);

-- AS without BY: each row is a participant, in the domain visits.
-- covers: protect_stmt, domain_clause, domain_name | parses: Protect | table=hr.visit; domain=visits
PROTECT TABLE hr.visit AS visits;

-- Quoted identifiers keep case, spaces and reserved words.
-- covers: protect_stmt, table_name, column_name, domain_name, identifier, quoted_identifier | parses: Protect | table=Order Lines; columns=Customer Id; domain=Customers
PROTECT TABLE "Order Lines" BY ("Customer Id") AS "Customers";

-- A TPC-H-like star protected by customer alone.
-- covers: script, duckdb_statement | parses: Create, Create, Create, Insert, Insert, Insert
CREATE TABLE customer (c_custkey INTEGER PRIMARY KEY, c_name VARCHAR);
CREATE TABLE orders (o_orderkey INTEGER PRIMARY KEY, o_custkey INTEGER REFERENCES customer);
CREATE TABLE lineitem (l_orderkey INTEGER, l_quantity INTEGER);
INSERT INTO customer VALUES (1, 'ann'), (2, 'bob');
INSERT INTO orders VALUES (10, 1), (11, 2), (12, 1);
INSERT INTO lineitem VALUES (10, 5), (10, 1), (11, 7), (12, 2);

-- covers: protect_stmt | parses: Protect | table=customer
PROTECT TABLE customer;

-- Ownership along a foreign key, without BY: the columns of orders' declared FOREIGN KEY to
-- customer; without (…), the columns it references (else customer's primary key).
-- covers: protect_stmt, references_clause | parses: Protect | table=orders
PROTECT TABLE orders REFERENCES customer;

-- A lineitem belongs to the participant of its order, the customer: two hops, one participant
-- table. The chain is followed by joins inside DuckDB when a query reads lineitem.
-- covers: protect_stmt, by_clause, references_clause, table_name, column_name | parses: Protect | table=lineitem; columns=l_orderkey
PROTECT TABLE lineitem BY (l_orderkey) REFERENCES orders (o_orderkey);

-- ---------------------------------------------------------------- budgets

-- The connection's own user.
-- covers: privacy_statement, budget_stmt, set_budget_stmt, epsilon, unsigned_number, digits, digit | parses: SetPrivacyBudget | epsilon=1
SET PRIVACY BUDGET 1;

-- Budgets are exact: 0.001 is 1/1000.
-- covers: set_budget_stmt, epsilon, unsigned_number, digits | parses: SetPrivacyBudget | epsilon=1/1000
SET PRIVACY BUDGET 0.001;

-- covers: set_budget_stmt, user_clause, user_name, string_literal | parses: SetPrivacyBudget | epsilon=5/2; user=alice
SET PRIVACY BUDGET 2.5 FOR USER 'alice';

-- covers: set_budget_stmt, user_clause, user_name, identifier, unsigned_number, exponent | parses: SetPrivacyBudget | epsilon=1/1000; user=bob
SET PRIVACY BUDGET 1e-3 FOR USER bob;

-- covers: set_budget_stmt, unsigned_number, exponent, digits | parses: SetPrivacyBudget | epsilon=30; user=carol
SET PRIVACY BUDGET 3.E+1 FOR USER 'carol';

-- A zCDP budget: ρ adds up (a pure-ε release costs ρ = ε²/2).
-- covers: set_budget_stmt, budget_amount, rho, unsigned_number | parses: SetPrivacyBudget | rho=1/2; user=dana
SET PRIVACY BUDGET RHO 0.5 FOR USER 'dana';

-- An (ε, δ) budget: ε and δ each add up.
-- covers: set_budget_stmt, budget_amount, epsilon, delta, exponent | parses: SetPrivacyBudget | epsilon=2; delta=1/100000; user=erin
SET PRIVACY BUDGET EPSILON 2 DELTA 1e-5 FOR USER 'erin';

-- covers: privacy_statement, budget_stmt, show_budget_stmt | parses: ShowPrivacyBudget
SHOW PRIVACY BUDGET;

-- covers: show_budget_stmt, user_clause, user_name, string_literal | parses: ShowPrivacyBudget | user=alice
SHOW PRIVACY BUDGET FOR USER 'alice';

-- ---------------------------------------------------------------- private queries
-- (with the session default still unset: only WITH EPSILON makes a query private)

-- Paths of length two, counted with node privacy.
-- covers: statement, private_query, query, privacy_clause, epsilon_clause, epsilon | parses: PrivateQuery | query=Select; epsilon=1/2
SELECT COUNT(*) FROM edge e1 JOIN edge e2 ON e1.dst = e2.src WITH EPSILON 0.5;

-- A GROUP BY histogram of a sum.
-- covers: private_query, query, privacy_clause, epsilon_clause | parses: PrivateQuery | query=Select; epsilon=1/4
SELECT dept, SUM(salary) FROM employee GROUP BY dept WITH EPSILON 0.25;

-- A SUM with the mechanism's θ set to the scale of one salary, and ε₁ = 0.3·ε.
-- covers: private_query, epsilon_clause, options_clause, option, option_name | parses: PrivateQuery | query=Select; epsilon=1; options=theta=200000,split=3/10
SELECT SUM(salary) FROM employee WITH EPSILON 1 OPTIONS (theta = 200000, split = 0.3);

-- Signed options: a SUM clamped to [-50, 200] (a value below -50 counts as -50).
-- covers: epsilon_clause, options_clause, option, signed_number | parses: PrivateQuery | query=Select; epsilon=1; options=lower=-50,upper=200
SELECT SUM(salary) FROM employee WITH EPSILON 1 OPTIONS (lower = -50, upper = 200);

-- The raw release of a count (no rounding, no clipping at zero): a boolean option.
-- covers: option, boolean_literal | parses: PrivateQuery | query=Select; epsilon=1/2; options=raw=True
SELECT COUNT(*) FROM edge WITH EPSILON 0.5 OPTIONS (raw = true);

-- An option with a string value.
-- covers: epsilon_clause, options_clause, option, string_literal | parses: PrivateQuery | query=Select; epsilon=1/2; options=privacy=edge
SELECT COUNT(*) FROM edge WITH EPSILON 0.5 OPTIONS (privacy = 'edge');

-- Gaussian noise at ρ-zCDP (a ρ budget): many such counts compose in ρ.
-- covers: private_query, privacy_clause, rho_clause, rho | parses: PrivateQuery | query=Select; rho=1/100
SELECT COUNT(*) FROM employee WITH RHO 0.01;

-- Partition selection: the departments are not declared, so the groups released are those
-- whose noisy number of employees clears a threshold fixed by ε and δ.
-- covers: private_query, epsilon_clause, delta, options_clause | parses: PrivateQuery | query=Select; epsilon=1; delta=1/1000000; options=max_groups=1
SELECT dept, COUNT(*) FROM employee GROUP BY dept WITH EPSILON 1 DELTA 1e-6 OPTIONS (max_groups = 1);

-- COUNT(DISTINCT …) merges equal rows (OR-ing their annotations).
-- covers: private_query, query, epsilon_clause | parses: PrivateQuery | query=Select; epsilon=1
SELECT COUNT(DISTINCT src) FROM edge WITH EPSILON 1;

-- A set operation below the aggregate.
-- covers: private_query, query, epsilon_clause, unsigned_number, exponent | parses: PrivateQuery | query=Select; epsilon=1/100
SELECT COUNT(*) FROM (SELECT src AS v FROM edge UNION SELECT dst FROM edge) AS nodes WITH EPSILON 1E-2;

-- A k-star count (here 3-stars) on a table that stores both directions of a friendship, with a
-- key on (person, friend): a self-join on a common centre with strictly ordered leaves. It is
-- released with the degree construction (grammar/README.md, "k-stars"), whatever the number of stars.
-- covers: script, duckdb_statement, protect_stmt, by_clause, domain_clause | parses: Create, Protect
CREATE TABLE friend (person INTEGER, friend INTEGER, PRIMARY KEY (person, friend));
PROTECT TABLE friend BY (person, friend) AS person;

-- covers: private_query, query, epsilon_clause | parses: PrivateQuery | query=Select; epsilon=1
SELECT COUNT(*) FROM friend a JOIN friend b ON a.person = b.person
  JOIN friend c ON c.person = a.person
  WHERE a.friend < b.friend AND b.friend < c.friend WITH EPSILON 1;

-- A k-triangle count (here 2-triangles: two triangles on one edge) on a table storing each link
-- once (key, CHECK (a < b)), protected row by row: released with the triangle construction
-- (grammar/README.md, "k-triangles"), whatever the number of 2-triangles.
-- covers: script, duckdb_statement, protect_stmt | parses: Create, Protect
CREATE TABLE link (a INTEGER, b INTEGER, PRIMARY KEY (a, b), CHECK (a < b));
PROTECT TABLE link;

-- covers: private_query, query, epsilon_clause | parses: PrivateQuery | query=Select; epsilon=1
SELECT COUNT(*) FROM link AS e
  JOIN (SELECT a, b FROM link UNION ALL SELECT b, a FROM link) AS p0 ON p0.a = e.a
  JOIN (SELECT a, b FROM link UNION ALL SELECT b, a FROM link) AS q0 ON q0.a = e.b AND q0.b = p0.b
  JOIN (SELECT a, b FROM link UNION ALL SELECT b, a FROM link) AS p1 ON p1.a = e.a
  JOIN (SELECT a, b FROM link UNION ALL SELECT b, a FROM link) AS q1 ON q1.a = e.b AND q1.b = p1.b
  WHERE p0.b < p1.b WITH EPSILON 1;

-- ---------------------------------------------------------------- session

-- From here on, aggregate queries over protected tables are released at ε = 1/10.
-- covers: privacy_statement, session_stmt, set_epsilon_stmt, epsilon | parses: SetPrivacyEpsilon | epsilon=1/10
SET PRIVACY EPSILON 0.1;

-- covers: session_stmt, set_epsilon_stmt | parses: SetPrivacyEpsilon | epsilon=1/4
SET PRIVACY EPSILON = 0.25;

-- ---------------------------------------------------------------- Blowfish policies

-- A table whose rows are single participants (keyed by its primary key).
-- covers: script, duckdb_statement | parses: Create, Protect
CREATE TABLE people (id INTEGER PRIMARY KEY, age INTEGER, income INTEGER, state VARCHAR, member BOOLEAN);
PROTECT TABLE people;

-- Adjacent ages are secrets; ages 0 … 119, one bin per year; unbounded (the default).
-- covers: privacy_statement, policy_stmt, create_policy_stmt, policy_name, policy_graph, attribute_graph, line_graph, domain_spec, column_domain, interval, signed_number, unsigned_number | parses: CreatePolicy | policy=age_line; table=people; columns=age; graph=LINE
CREATE POLICY age_line ON people (age) AS LINE DOMAIN [0, 120) WIDTH 1;

-- Incomes within two bins (of 2000) are secrets; the row count is public.
-- covers: create_policy_stmt, threshold_graph, positive_integer, column_domain, interval, presence_clause | parses: CreatePolicy | policy=income_t; table=people; columns=income; graph=THRESHOLD; presence=BOUNDED
CREATE POLICY income_t ON people (income) AS THRESHOLD 2 DOMAIN [0, 200000) BINS 100 BOUNDED;

-- Secrets only within a group of states; the groups list the domain.
-- covers: create_policy_stmt, partition_graph, value_group, value, string_literal | parses: CreatePolicy | policy=state_p; table=people; columns=state; graph=PARTITION
CREATE POLICY state_p ON people (state) AS PARTITION BY (('CA', 'OR', 'WA'), ('NY', 'NJ'));

-- Plain differential privacy over an explicit domain.
-- covers: create_policy_stmt, full_graph, domain_spec, value_group, value, presence_clause | parses: CreatePolicy | policy=member_full; table=people; columns=member; graph=FULL; presence=UNBOUNDED
CREATE POLICY member_full ON people (member) AS FULL DOMAIN (FALSE, TRUE) UNBOUNDED;

-- Two columns: cells at L1 distance 1 are secrets; records appear only at two sources.
-- covers: create_policy_stmt, grid_graph, domain_spec, presence_clause, sources_clause, source, value_group | parses: CreatePolicy | policy=age_income; table=people; columns=age, income; graph=GRID; presence=UNBOUNDED
CREATE POLICY age_income ON people (age, income) AS GRID 1 DOMAIN [0, 120) WIDTH 10, [0, 200000) BINS 20 UNBOUNDED SOURCES ((20, 0), (60, 100000));

-- Attribute composition: a threshold on age, any change of state; SOURCES implies UNBOUNDED.
-- covers: create_policy_stmt, composed_graph, attribute_graph, threshold_graph, full_graph, signed_number, presence_clause, sources_clause, source | parses: CreatePolicy | policy=age_state; table=people; columns=age, state; graph=COMPOSE
CREATE POLICY age_state ON people (age, state) AS (THRESHOLD 5, FULL) DOMAIN [-10, 110) WIDTH 1, ('CA', 'OR', 'WA', 'NY', 'NJ') SOURCES ((30, 'CA'));

-- A δ-neighbourhood on two coordinates (provsql_dp.policies.delta): points within 0.01 (L1) are secrets.
-- covers: script, duckdb_statement | parses: Create, Protect
CREATE TABLE checkins (id INTEGER PRIMARY KEY, x DOUBLE, y DOUBLE);
PROTECT TABLE checkins;

-- covers: create_policy_stmt, delta_graph, domain_spec, column_domain, interval, unsigned_number, presence_clause | parses: CreatePolicy | policy=near; table=checkins; columns=x, y; graph=DELTA; presence=BOUNDED
CREATE POLICY near ON checkins (x, y) AS DELTA 0.01 METRIC L1 DOMAIN [0, 1) WIDTH 0.005, [0, 1) WIDTH 0.005 BOUNDED;

-- One coordinate, Euclidean (the default, spelled out); records appear near x = 0.
-- covers: create_policy_stmt, delta_graph, domain_spec, column_domain, interval, presence_clause, sources_clause, source | parses: CreatePolicy | policy=near_x; table=checkins; columns=x; graph=DELTA; presence=UNBOUNDED
CREATE POLICY near_x ON checkins (x) AS DELTA 0.02 METRIC EUCLIDEAN DOMAIN [0, 1) WIDTH 0.01 UNBOUNDED SOURCES (0);

-- Partition cells of ten consecutive ids.
-- covers: create_policy_stmt, partition_graph, unsigned_number | parses: CreatePolicy | policy=id_p; table=people; columns=id; graph=PARTITION; presence=BOUNDED
CREATE POLICY id_p ON people (id) AS PARTITION BY WIDTH 10 DOMAIN [0, 1000) WIDTH 1 BOUNDED;

-- covers: policy_stmt, show_policies_stmt | parses: ShowPolicies
SHOW POLICIES;

-- covers: show_policies_stmt, table_name | parses: ShowPolicies | table=people
SHOW POLICIES ON people;

-- covers: policy_stmt, drop_policy_stmt, policy_name | parses: DropPolicy | policy=id_p
DROP POLICY id_p;

-- covers: drop_policy_stmt | parses: DropPolicy | policy=nothing_here
DROP POLICY IF EXISTS nothing_here;

-- Count constraints: the state marginal is public (published exactly); the histogram's
-- sensitivity under it is 2 × 5 states = 10.
-- covers: create_policy_stmt, known_counts_clause, column_name, presence_clause | parses: CreatePolicy | policy=member_state; table=people; columns=member, state; graph=FULL; presence=BOUNDED
CREATE POLICY member_state ON people (member, state) AS FULL DOMAIN (FALSE, TRUE), ('CA', 'OR', 'WA', 'NY', 'NJ') BOUNDED KNOWN COUNTS BY (state);

-- Released as the full histogram, projected onto the known marginal.
-- covers: private_query, query, epsilon_clause | parses: PrivateQuery | query=Select; epsilon=1/2
SELECT member, state, COUNT(*) FROM people GROUP BY member, state WITH EPSILON 0.5;

-- Known totals of groups of values (and of the total: KNOWN COUNTS TOTAL).
-- covers: create_policy_stmt, known_counts_clause, value_group, value | parses: CreatePolicy | policy=id_groups; table=people; columns=id; graph=LINE
CREATE POLICY id_groups ON people (id) AS LINE DOMAIN [0, 40) WIDTH 10 KNOWN COUNTS ((0, 10), (20));

-- The row count public under DP: the histogram's sensitivity is 2 (bounded DP).
-- covers: create_policy_stmt, known_counts_clause | parses: CreatePolicy | policy=income_member; table=people; columns=income, member; graph=FULL; presence=UNBOUNDED
CREATE POLICY income_member ON people (income, member) AS FULL DOMAIN [0, 200000) BINS 4, (FALSE, TRUE) UNBOUNDED KNOWN COUNTS TOTAL;

-- A histogram over the policy's domain: every bin is released, empty ones too.
-- covers: private_query, query, epsilon_clause | parses: PrivateQuery | query=Select; epsilon=1/2
SELECT age, COUNT(*) FROM people GROUP BY age WITH EPSILON 0.5;

-- The same histogram by a named strategy: DAWA on the transformed data (data dependent).
-- covers: private_query, epsilon_clause, options_clause, option, option_name, string_literal | parses: PrivateQuery | query=Select; epsilon=1/2; options=strategy=dawa
SELECT age, COUNT(*) FROM people GROUP BY age WITH EPSILON 0.5 OPTIONS (strategy = 'dawa');

-- Several range counts in one release.
-- covers: policy_stmt, range_stmt, range_query, range_head, range_condition, epsilon_clause | parses: PrivateQuery | query=Select; epsilon=1/2
COUNT RANGES (age BETWEEN 18 AND 29, age >= 65) FROM people WITH EPSILON 0.5;

-- Rectangles over the two columns of a policy; other conditions filter the rows.
-- covers: range_stmt, range_query, range_head, range_condition, condition | parses: PrivateQuery | query=Select; epsilon=1/10
COUNT RANGES (age < 30 AND income < 50000, income >= 100000) FROM people WHERE member WITH EPSILON 0.1;

-- A cumulative histogram (CDF).
-- covers: range_stmt, range_query, range_head, column_name | parses: PrivateQuery | query=Select; epsilon=1
COUNT CUMULATIVE age FROM people WITH EPSILON 1;

-- The expected error at ε, without releasing anything.
-- covers: policy_stmt, explain_privacy_stmt, query, epsilon_clause | parses: ExplainPrivacy | query=PrivateQuery
EXPLAIN PRIVACY SELECT age, COUNT(*) FROM people GROUP BY age WITH EPSILON 0.5;

-- Accuracy first: the smallest ε with every count within 10 with probability 0.9.
-- covers: explain_privacy_stmt, range_query, range_head, accuracy_clause | parses: ExplainPrivacy | query=Select; accuracy=10
EXPLAIN PRIVACY COUNT CUMULATIVE age FROM people WITH ACCURACY 10 CONFIDENCE 0.9;

-- covers: explain_privacy_stmt, query, accuracy_clause | parses: ExplainPrivacy | query=Select; accuracy=5
EXPLAIN PRIVACY SELECT COUNT(*) FROM people WHERE age BETWEEN 30 AND 39 WITH ACCURACY 5;

-- A recursive-mechanism query's error depends on the data: estimated privately at the release's
-- ε = 0.5, CHARGED 0.0005 (a release, so, like the private queries, planned only when this file
-- is run top to bottom); α at 90 % confidence.
-- covers: explain_privacy_stmt, epsilon_clause, estimate_clause | parses: ExplainPrivacy | query=PrivateQuery; estimate=1/2000
EXPLAIN PRIVACY SELECT COUNT(*) FROM edge e1 JOIN edge e2 ON e1.dst = e2.src WITH EPSILON 0.5 ESTIMATE ERROR WITH EPSILON 0.0005 CONFIDENCE 0.9;

-- Accuracy first in one step: released at the ε EXPLAIN PRIVACY finds for α = 10 at 90 %.
-- covers: private_query, privacy_clause, accuracy_clause | parses: PrivateQuery | query=Select; accuracy=10
SELECT age, COUNT(*) FROM people GROUP BY age WITH ACCURACY 10 CONFIDENCE 0.9;

-- covers: range_stmt, privacy_clause, accuracy_clause | parses: PrivateQuery | query=Select; accuracy=5
COUNT CUMULATIVE age FROM people WITH ACCURACY 5;

-- ---------------------------------------------------------------- column declarations

-- A public table (not protected): the list of states.
-- covers: script, duckdb_statement | parses: Create, Insert
CREATE TABLE states (code VARCHAR PRIMARY KEY, name VARCHAR);
INSERT INTO states VALUES ('CA', 'California'), ('OR', 'Oregon'), ('WA', 'Washington'), ('NY', 'New York'), ('NJ', 'New Jersey'), ('TX', 'Texas');

-- One person's income lies in [0, 200000]: a SUM or AVG of income is clamped to it.
-- covers: privacy_statement, column_declaration_stmt, set_bounds_stmt, table_column, table_name, column_name, signed_number | parses: SetBounds | table=people; column=income; lower=0; upper=200000
SET BOUNDS ON people (income) BETWEEN 0 AND 200000;

-- A negative bound; SET again on the same column replaces the declaration.
-- covers: set_bounds_stmt, table_column, signed_number, unsigned_number, exponent | parses: SetBounds | table=people; column=age; lower=-1; upper=150
SET BOUNDS ON people (age) BETWEEN -1 AND 1.5E2;

-- The declared bounds make OPTIONS (lower, upper) unnecessary, for an AVG too.
-- covers: private_query, query, epsilon_clause | parses: PrivateQuery | query=Select; epsilon=1
SELECT SUM(income), AVG(income) FROM people WITH EPSILON 1;

-- covers: privacy_statement, column_declaration_stmt, show_bounds_stmt | parses: ShowBounds
SHOW BOUNDS;

-- covers: show_bounds_stmt, table_name | parses: ShowBounds | table=people
SHOW BOUNDS ON people;

-- covers: column_declaration_stmt, drop_bounds_stmt, table_column | parses: DropBounds | table=people; column=age
DROP BOUNDS ON people (age);

-- The groups of GROUP BY state are public: exactly these five, each released, empty or not.
-- covers: column_declaration_stmt, set_group_keys_stmt, table_column, key_source, value_group, value, string_literal | parses: SetGroupKeys | table=people; column=state; values=CA, OR, WA, NY, NJ
SET GROUP KEYS ON people (state) VALUES ('CA', 'OR', 'WA', 'NY', 'NJ');

-- Keys of a BOOLEAN column.
-- covers: set_group_keys_stmt, key_source, value_group, value | parses: SetGroupKeys | table=people; column=member; values=TRUE, FALSE
SET GROUP KEYS ON people (member) VALUES (TRUE, FALSE);

-- Keys from a column of a public table, read at query time; replaces the list above.
-- covers: set_group_keys_stmt, key_source, table_column | parses: SetGroupKeys | table=people; column=state; source=states; source_column=code
SET GROUP KEYS ON people (state) FROM states (code);

-- Every state of the public table is released; a row whose state is not one of them is dropped.
-- covers: private_query, query, epsilon_clause | parses: PrivateQuery | query=Select; epsilon=1
SELECT state, COUNT(*) FROM people GROUP BY state WITH EPSILON 1;

-- covers: privacy_statement, column_declaration_stmt, show_group_keys_stmt | parses: ShowGroupKeys
SHOW GROUP KEYS;

-- covers: show_group_keys_stmt, table_name | parses: ShowGroupKeys | table=people
SHOW GROUP KEYS ON people;

-- covers: column_declaration_stmt, drop_group_keys_stmt, table_column | parses: DropGroupKeys | table=people; column=member
DROP GROUP KEYS ON people (member);

-- Streams (Fang & Chang §6): a table growing day by day, published under Theorem 2.
-- covers: statement, duckdb_statement | parses: Create
CREATE TABLE daily_visits (day INTEGER, person INTEGER);

-- Any 7 consecutive days spend at most ε = 0.001 in all; the ledger is charged 0.001 once.
-- covers: privacy_statement, stream_stmt, create_stream_stmt, stream_name, positive_integer, epsilon_clause | parses: CreateStream | stream=daily; window=7; epsilon=1/1000
CREATE STREAM daily WINDOW 7 STEPS WITH EPSILON 0.001;

-- Day 1's count (sensitivity 1: one visit per person and day), at a tenth of the window.
-- covers: stream_stmt, publish_stmt, signed_integer, query | parses: Publish | stream=daily; step=1; epsilon=1/10000; query=Select
PUBLISH STREAM daily STEP 1 WITH EPSILON 0.0001 AS SELECT COUNT(*) FROM daily_visits WHERE day = 1;

-- A sum of visit lengths capped at 3 per person and day.
-- covers: publish_stmt, unsigned_number | parses: Publish | stream=daily; step=2; sensitivity=3; epsilon=1/5000; query=Select
PUBLISH STREAM daily STEP 2 SENSITIVITY 3 WITH EPSILON 0.0002 AS SELECT COUNT(*) * 1 FROM daily_visits WHERE day = 2;

-- Budget allocation (Fang & Chang §7): the stream picks each step's ε from public weights.
-- The curator raises the budget for two more streams.
-- covers: set_budget_stmt | parses: SetPrivacyBudget | epsilon=1/100
SET PRIVACY BUDGET 0.01;

-- covers: create_stream_stmt, allocate_clause, offline_allocation, unsigned_number | parses: CreateStream | stream=weekly; window=2; epsilon=1/1000
CREATE STREAM weekly WINDOW 2 STEPS WITH EPSILON 0.001 ALLOCATE OFFLINE WEIGHTS (1, 1, 0, 4);

-- Step 4 is published at the allocation's ε (no WITH EPSILON).
-- covers: publish_stmt | parses: Publish | stream=weekly; step=4; query=Select
PUBLISH STREAM weekly STEP 4 AS SELECT COUNT(*) FROM daily_visits WHERE day = 4;

-- covers: create_stream_stmt, allocate_clause, online_allocation, positive_integer | parses: CreateStream | stream=hourly; window=3; epsilon=1/1000
CREATE STREAM hourly WINDOW 3 STEPS WITH EPSILON 0.001 ALLOCATE ONLINE HORIZON 24 PROBABILITY 0.5 SAMPLES 50;

-- Online: the step's weight is given when it is published.
-- covers: publish_stmt, unsigned_number | parses: Publish | stream=hourly; step=1; weight=2; query=Select
PUBLISH STREAM hourly STEP 1 WEIGHT 2 AS SELECT COUNT(*) FROM daily_visits WHERE day = 1;

-- ---------------------------------------------------------------- curator statements

-- On the Spark engine (provsql-dp serve --engine spark); on this DuckDB connection it is refused.
-- covers: privacy_statement, curator_stmt, attach_spark_stmt, identifier, string_literal, digits, column_name | parses: AttachSparkTable
ATTACH SPARK TABLE visits_spark FROM 'delta:/data/visits' VERSION 3 PRIMARY KEY (id) CHECK (amount >= 0) SNAPSHOT '/data/snapshots/visits';

-- covers: curator_stmt, show_audit_stmt | parses: ShowAuditLog
SHOW AUDIT LOG;

-- covers: show_audit_stmt, positive_integer | parses: ShowAuditLog
SHOW AUDIT LOG LIMIT 5;

-- covers: stream_stmt, show_streams_stmt | parses: ShowStreams
SHOW STREAMS;

-- One stream's releases.
-- covers: show_streams_stmt, stream_name | parses: ShowStreams | stream=daily
SHOW STREAMS daily;

-- Blowfish k-means (He et al. §6) under the δ policy near on checkins (x, y): threshold θ = 0.01.
-- covers: privacy_statement, policy_stmt, kmeans_stmt, positive_integer, column_name, table_name, epsilon | parses: KMeans
KMEANS CLUSTERS 2 OF (x, y) FROM checkins WITH EPSILON 0.001;

-- covers: kmeans_stmt, positive_integer | parses: KMeans
KMEANS CLUSTERS 3 OF (x, y) FROM checkins ITERATIONS 5 WITH EPSILON 0.001;

-- Fang & Chang's shifted histograms for a rectangle under the δ policy near (checkins is empty).
-- covers: range_stmt, range_query, range_head, range_condition, privacy_clause, epsilon_clause, options_clause, option, option_name, string_literal | parses: PrivateQuery | query=Select; epsilon=1/1000; options=strategy=shifted_histograms
COUNT RANGES (x >= 0.1 AND x < 0.4 AND y >= 0.2 AND y < 0.6) FROM checkins WITH EPSILON 0.001 OPTIONS (strategy = 'shifted_histograms');
