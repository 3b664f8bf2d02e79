"""Red team (issues 28/29): does a GROUP BY released at full ε per group (parallel composition:
"each participant's rows fall in one group", :mod:`provsql_dp.privacy.group_epsilon` from
:func:`provsql_dp.sql.owner_fd.owner_determined`) really put each participant in one group?

Brute force over neighbours: for each participant of a small database, the exact (pre-noise)
per-group answer of the statement with and without that participant (their row and every row
they own removed, the project's neighbour definition). When the release charged ε and released
every group at that same ε, at most one group may change per neighbour; otherwise the L1 change
is spread over several groups that each spent the whole ε, and the true privacy loss is a
multiple of the ε charged.

The case ``test_collated_join_key_is_not_an_owner_fd`` was a finding for
``sql/owner_fd.py`` (rule 1 "equal values are the same value" is false for a VARCHAR compared
under a collation: ``'eng' = 'ENG'`` under ``COLLATE NOCASE``, yet ``depts`` may hold both
keys under a binary PRIMARY KEY). Fixed: the planner records each scan's collated
string columns (``Scan.collated``: a ``COLLATE`` in the table's DDL, or a session
``default_collation``), and owner_fd equates none of them (findings 1, 1b and 2 below).
"""

from __future__ import annotations

import numpy as np
import pytest

import provsql_dp


def _database(setup: list[str], protect: list[str]):
    con = provsql_dp.connect()
    for s in setup:
        con.execute(s)
    for s in protect:
        con.execute(s)
    con.execute("SET PRIVACY BUDGET 1000")
    con._rng = np.random.default_rng(7)
    return con


def _exact(con, sql: str) -> dict:
    return {r[:-1]: r[-1] for r in con.execute(sql).fetchall()}


def _changed_groups(setup, deletes_for, sql, people) -> list[int]:
    """For each participant, how many groups' exact answers differ on the neighbour without it."""
    base = _exact(_plain(setup), sql)
    out = []
    for p in people:
        con = _plain(setup)
        for d in deletes_for(p):
            con.execute(d)
        other = _exact(con, sql)
        keys = set(base) | set(other)
        out.append(sum(1 for k in keys if (base.get(k) or 0) != (other.get(k) or 0)))
    return out


def _plain(setup):
    import duckdb
    con = duckdb.connect()
    for s in setup:
        con.execute(s)
    return con


def _released_per_group_at_full_epsilon(con, sql: str, eps: float = 1.0) -> int:
    """Release ``sql`` at ``eps``; 0 unless it has several groups each released at the whole ε,
    else the number of groups one participant may move by the release's own noise plan (1 for
    parallel composition; ``changed`` for a vector release with one ℓ1 bound across groups)."""
    cur = con.cursor()
    cur.execute(f"{sql} WITH EPSILON {eps}")
    rows = cur.fetchall()
    info = cur.privacy
    assert info.epsilon == pytest.approx(eps)
    rels = [getattr(r, "release", r) for r in info.releases]
    if len(rows) < 2 or not all(r.epsilon == pytest.approx(eps) for r in rels):
        return 0
    return min(int(getattr(r, "changed", 1) or 1) for r in rels)


COLLATED = [
    "CREATE TABLE people(id INT PRIMARY KEY, dept VARCHAR COLLATE NOCASE, salary DOUBLE)",
    "CREATE TABLE depts(dept_id VARCHAR PRIMARY KEY, dname VARCHAR)",
    "INSERT INTO depts VALUES ('eng', 'E1'), ('ENG', 'E2'), ('Eng', 'E3'), ('ops', 'O')",
    "INSERT INTO people VALUES (1, 'eng', 10), (2, 'ops', 20), (3, 'ops', 30)",
]
PLAIN = [s.replace(" COLLATE NOCASE", "") for s in COLLATED]


def _person(p):
    return [f"DELETE FROM people WHERE id = {p}"]


def test_collated_join_key_is_not_an_owner_fd():
    """Finding h49attack-1 (fixed: ``Scan.collated``, owner_fd rule 1): a collated join key."""
    sql = ("SELECT d.dname, COUNT(*) FROM people p, depts d WHERE p.dept = d.dept_id "
           "GROUP BY d.dname")
    changed = _changed_groups(COLLATED, _person, sql + " ORDER BY 1", [1, 2, 3])
    assert max(changed) == 3  # person 1 is in three groups (E1, E2, E3)
    con = _database(COLLATED, ["PROTECT TABLE people"])
    full = _released_per_group_at_full_epsilon(con, sql)
    assert not (full and max(changed) > full), (
        f"each group released at the whole ε, but one participant changes {max(changed)} groups")


@pytest.mark.parametrize("agg", ["COUNT(*)", "SUM(p.salary)"])
def test_binary_join_key_owner_fd_holds(agg):
    """The same statement without the collation: the claim holds (one group per person)."""
    sql = (f"SELECT d.dname, {agg} FROM people p, depts d WHERE p.dept = d.dept_id "
           "GROUP BY d.dname")
    changed = _changed_groups(PLAIN, _person, sql, [1, 2, 3])
    assert max(changed) == 1
    con = _database(PLAIN, ["PROTECT TABLE people"])
    assert _released_per_group_at_full_epsilon(con, sql) == 1


CHAIN = [
    "CREATE TABLE customer(ck INT PRIMARY KEY, nk INT)",
    "CREATE TABLE orders(ok INT PRIMARY KEY, ock INT)",
    "CREATE TABLE lineitem(lok INT, qty INT)",
    "CREATE TABLE nation(nk INT PRIMARY KEY, name VARCHAR)",
    "INSERT INTO nation VALUES (1, 'A'), (2, 'B'), (3, 'C')",
    "INSERT INTO customer VALUES (1, 1), (2, 2), (3, 1), (4, 3)",
    "INSERT INTO orders VALUES (10, 1), (11, 1), (12, 2), (13, 3), (14, 4)",
    "INSERT INTO lineitem VALUES (10, 5), (10, 6), (11, 7), (12, 1), (13, 2), (14, 3), (14, 4)",
]
CHAIN_PROTECT = ["PROTECT TABLE customer",
                 "PROTECT TABLE orders BY (ock) REFERENCES customer",
                 "PROTECT TABLE lineitem BY (lok) REFERENCES orders"]


def _customer(c):
    return [f"DELETE FROM lineitem WHERE lok IN (SELECT ok FROM orders WHERE ock = {c})",
            f"DELETE FROM orders WHERE ock = {c}", f"DELETE FROM customer WHERE ck = {c}"]


@pytest.mark.parametrize("sql", [
    # Q5's shape: the nation is the customer's, through two hops of ownership
    "SELECT n.name, COUNT(*) FROM customer c, orders o, lineitem l, nation n WHERE "
    "c.ck = o.ock AND o.ok = l.lok AND c.nk = n.nk GROUP BY n.name",
    "SELECT n.name, SUM(l.qty) FROM customer c, orders o, lineitem l, nation n WHERE "
    "c.ck = o.ock AND o.ok = l.lok AND c.nk = n.nk GROUP BY n.name",
    # an owner-local NOT EXISTS (self-join of lineitem through its order) under the same keys
    "SELECT n.name, COUNT(*) FROM customer c, orders o, lineitem l, nation n WHERE "
    "c.ck = o.ock AND o.ok = l.lok AND c.nk = n.nk AND NOT EXISTS (SELECT 1 FROM lineitem l2 "
    "WHERE l2.lok = l.lok AND l2.qty > l.qty) GROUP BY n.name",
])
def test_fk_chain_owner_fd_holds(sql):
    changed = _changed_groups(CHAIN, _customer, sql, [1, 2, 3, 4])
    assert max(changed) <= 1
    con = _database(CHAIN, CHAIN_PROTECT)
    assert _released_per_group_at_full_epsilon(con, sql) in (0, 1)


def test_group_by_order_key_is_not_parallel():
    """A customer has many orders: GROUP BY the order's key must not claim one group each."""
    sql = ("SELECT o.ok, COUNT(*) FROM customer c, orders o, lineitem l WHERE c.ck = o.ock AND "
           "o.ok = l.lok GROUP BY o.ok")
    changed = _changed_groups(CHAIN, _customer, sql, [1, 2, 3, 4])
    assert max(changed) == 2
    con = _database(CHAIN, CHAIN_PROTECT)
    try:
        full = _released_per_group_at_full_epsilon(con, sql)
    except provsql_dp.Error:
        return  # refused (no declared keys): nothing released
    assert not full or full >= max(changed)


CASES = ["bob", "BOB", "Bob", "bOb", "boB", "BOb", "bOB", "BoB"]
ANTI = [
    "CREATE TABLE people(id VARCHAR PRIMARY KEY, salary INT)",
    "CREATE TABLE visits(pid VARCHAR COLLATE NOCASE, amount INT)",
    "INSERT INTO people VALUES " + ", ".join(f"('{c}', 1)" for c in CASES) + ", ('amy', 1)",
    "INSERT INTO visits VALUES ('bob', 5)",
]
ANTI_SQL = "SELECT COUNT(*) FROM people p WHERE NOT EXISTS (SELECT 1 FROM visits v WHERE v.pid = p.id)"


def _owner_of_visit(p):  # participant p: their people row and every visit whose pid is p
    return [f"DELETE FROM visits WHERE pid::VARCHAR COLLATE \"binary\" = '{p}'",
            f"DELETE FROM people WHERE id = '{p}'"]


def test_collated_anti_join_is_not_owner_local():
    """Finding h49attack-2 (fixed with -1). Removing participant 'bob' (one person and one visit) flips the seven other spellings of
    bob: the count moves by 7, released by Laplace at sensitivity 1 (or must be refused)."""
    base = _plain(ANTI).execute(ANTI_SQL).fetchone()[0]
    moves = []
    for p in CASES + ["amy"]:
        con = _plain(ANTI)
        for d in _owner_of_visit(p):
            con.execute(d)
        moves.append(abs(con.execute(ANTI_SQL).fetchone()[0] - base))
    assert max(moves) == 7
    try:  # refused when declared (h57attack: a collated owner column names no one participant)
        con = _database(ANTI, ["PROTECT TABLE people", "PROTECT TABLE visits BY (pid) AS people"])
        cur = con.cursor()
        cur.execute(ANTI_SQL + " WITH EPSILON 1")
    except provsql_dp.Error:
        return  # refused: the fix
    rel = cur.privacy.releases[0]
    sens = getattr(getattr(rel, "release", rel), "sensitivity", None)
    assert sens is None or sens >= max(moves), f"released at sensitivity {sens}, moves {max(moves)}"


RICH = [
    "CREATE TABLE people(id INT PRIMARY KEY, dept INT, salary INT, code VARCHAR UNIQUE)",
    "CREATE TABLE visits(vid INT, pid INT, amount INT)",
    "CREATE TABLE depts(dept_id INT PRIMARY KEY, dname VARCHAR, alt INT UNIQUE)",
    "CREATE TABLE dup(k INT, name VARCHAR)",  # no key: k repeats
    "INSERT INTO depts VALUES (1, 'eng', 10), (2, 'ops', NULL), (3, 'hr', NULL)",
    "INSERT INTO dup VALUES (1, 'x'), (1, 'y'), (2, 'z'), (3, 'x')",
    "INSERT INTO people VALUES (1, 1, 100, 'a'), (2, 2, 200, NULL), (3, 1, 300, NULL), "
    "(4, 3, 400, 'd')",
    "INSERT INTO visits VALUES (1, 1, 1), (2, 1, 2), (3, 2, 3), (4, 3, 1), (5, 4, 2), (6, 4, 3)",
]
RICH_PROTECT = ["PROTECT TABLE people", "PROTECT TABLE visits BY (pid) AS people"]


def _rich_person(p):
    return [f"DELETE FROM visits WHERE pid = {p}", f"DELETE FROM people WHERE id = {p}"]


@pytest.mark.parametrize("sql", [
    "SELECT d.dname, COUNT(*) FROM people p, depts d WHERE p.dept = d.dept_id GROUP BY d.dname",
    "SELECT d.dname, COUNT(*) FROM people p, visits v, depts d WHERE v.pid = p.id AND "
    "p.dept = d.dept_id GROUP BY d.dname",
    "SELECT d.dname, COUNT(*) FROM visits v, depts d WHERE v.amount = d.dept_id GROUP BY d.dname",
    "SELECT x.name, COUNT(*) FROM people p, dup x WHERE p.dept = x.k GROUP BY x.name",
    "SELECT d.dname, COUNT(*) FROM people p, depts d WHERE p.dept = d.dept_id OR "
    "p.salary = d.dept_id * 100 GROUP BY d.dname",
    "SELECT d.dname, COUNT(*) FROM people p, depts d WHERE p.salary > d.dept_id * 100 "
    "GROUP BY d.dname",
    "SELECT d.dname, COUNT(*) FROM people p, people p2, depts d WHERE p2.id = p.id AND "
    "p2.dept = d.dept_id GROUP BY d.dname",
    "SELECT d.dname, COUNT(*) FROM people p, depts d WHERE EXISTS (SELECT 1 FROM visits v "
    "WHERE v.pid = p.id AND v.amount = d.dept_id) GROUP BY d.dname",
    "SELECT d.dname, COUNT(*) FROM people p, depts d WHERE p.dept = 1 AND d.dept_id = 1 "
    "GROUP BY d.dname",
    "SELECT d.dname, COUNT(*) FROM people p, depts d WHERE p.dept * 10 = d.alt GROUP BY d.dname",
    "SELECT d.dname, COUNT(*) FROM people p, depts d, people q WHERE q.code = p.code AND "
    "q.dept = d.dept_id GROUP BY d.dname",
    "SELECT d.dname, SUM(v.amount) FROM visits v, people p, depts d WHERE v.pid = p.id AND "
    "p.dept = d.dept_id AND NOT EXISTS (SELECT 1 FROM visits w WHERE w.pid = v.pid AND "
    "w.amount > v.amount) GROUP BY d.dname",
    "SELECT d.dname, COUNT(*) FROM visits v, depts d WHERE v.pid = d.dept_id GROUP BY d.dname",
    "SELECT d.dname, COUNT(*) FROM people p, visits v, depts d WHERE v.pid = p.id AND "
    "v.vid = d.dept_id GROUP BY d.dname",
])
def test_full_epsilon_groups_put_each_participant_in_one_group(sql):
    """Whatever a statement is released with, groups that each spent the whole ε are claimed
    disjoint in participants: brute force over every neighbour."""
    changed = _changed_groups(RICH, _rich_person, sql, [1, 2, 3, 4])
    con = _database(RICH, RICH_PROTECT)
    try:
        full = _released_per_group_at_full_epsilon(con, sql)
    except provsql_dp.Error:
        return  # refused on this database (refusals are compared across neighbours elsewhere)
    assert not (full and max(changed) > full), (
        f"every group at the whole ε for {full} moved group(s), yet a neighbour moves {changed}")


# The single-owner premise of every owner-local (NOT) EXISTS / NOT IN / grouped IN accepted by
# the planner (sql/owner_fd.py's docstring): removing participant q changes q's own total and
# no other participant's. Brute force: each participant's exact total (GROUP BY the owner key
# in plain DuckDB) on the database and on every neighbour without one participant.
CHAIN_NULLS = CHAIN + ["INSERT INTO lineitem VALUES (12, NULL), (13, 2), (14, NULL)"]
OWNER_LOCAL = [
    ("FROM orders o, lineitem l1 WHERE o.ok = l1.lok AND NOT EXISTS (SELECT 1 FROM lineitem l2 "
     "WHERE l2.lok = l1.lok AND l2.qty > l1.qty)", "o.ock"),
    ("FROM orders o WHERE NOT EXISTS (SELECT 1 FROM lineitem l WHERE l.lok = o.ok AND "
     "l.qty > 4)", "o.ock"),
    ("FROM orders o WHERE o.ok IN (SELECT lok FROM lineitem GROUP BY lok HAVING SUM(qty) > 5)",
     "o.ock"),
    ("FROM orders o, lineitem l WHERE o.ok = l.lok AND l.qty NOT IN (SELECT l2.qty + 1 FROM "
     "lineitem l2 WHERE l2.lok = l.lok)", "o.ock"),
    ("FROM customer c WHERE NOT EXISTS (SELECT 1 FROM orders o, lineitem l WHERE o.ock = c.ck "
     "AND l.lok = o.ok AND l.qty > 5)", "c.ck"),
    ("FROM customer c, orders o WHERE o.ock = c.ck AND EXISTS (SELECT 1 FROM orders o2 WHERE "
     "o2.ock = o.ock AND o2.ok <> o.ok)", "c.ck"),
]


@pytest.mark.parametrize("body,owner", OWNER_LOCAL)
def test_owner_local_subqueries_change_only_the_removed_participant(body, owner):
    con = _database(CHAIN_NULLS, CHAIN_PROTECT)
    try:
        con.execute(f"SELECT COUNT(*) {body} WITH EPSILON 1").fetchall()
    except provsql_dp.Error:
        pytest.fail("the planner refuses an owner-local subquery it is documented to accept")
    sql = f"SELECT {owner}, COUNT(*) {body} GROUP BY 1"
    base = _exact(_plain(CHAIN_NULLS), sql)
    for q in [1, 2, 3, 4]:
        con = _plain(CHAIN_NULLS)
        for d in _customer(q):
            con.execute(d)
        other = _exact(con, sql)
        moved = {k for k in set(base) | set(other) if k != (q,) and base.get(k) != other.get(k)}
        assert not moved, f"removing customer {q} changed the totals of {sorted(moved)}"


def test_default_collation_join_key_is_not_an_owner_fd():
    """``SET default_collation = 'nocase'`` (a DuckDB setting the curator may use): the DDL shows
    no collation, the binary PRIMARY KEY of depts keeps 'eng' and 'ENG', and p.dept = d.dept_id
    matches both. A fix that reads collations from the DDL alone misses this one."""
    setup = ["SET default_collation = 'nocase'"] + PLAIN
    sql = ("SELECT d.dname, COUNT(*) FROM people p, depts d WHERE p.dept = d.dept_id "
           "GROUP BY d.dname")
    changed = _changed_groups(setup, _person, sql, [1, 2, 3])
    assert max(changed) == 3
    con = _database(setup, ["PROTECT TABLE people"])
    # default_collation is a pinned setting since h86follow: the statement is refused outright
    with pytest.raises(provsql_dp.OperationalError, match="default_collation is nocase"):
        _released_per_group_at_full_epsilon(con, sql)


def test_foreign_key_ownership_over_collated_columns_is_refused():
    """Finding h49attack-1 along a foreign key: under a collation one order could match two
    customers ('a' and 'A' under a binary key). Refused when declared, and at each statement
    once the session's default_collation makes the hop collated — charging nothing."""
    con = provsql_dp.connect()
    con.execute("CREATE TABLE customer(ck VARCHAR PRIMARY KEY, n INT)")
    con.execute("CREATE TABLE orders(ok INT PRIMARY KEY, ock VARCHAR COLLATE NOCASE)")
    con.execute("INSERT INTO customer VALUES ('a', 1), ('A', 2)")
    con.execute("INSERT INTO orders VALUES (1, 'a')")
    con.execute("PROTECT TABLE customer")
    with pytest.raises(provsql_dp.Error, match="orders.ock compare"):
        con.execute("PROTECT TABLE orders BY (ock) REFERENCES customer")
    con = provsql_dp.connect()
    con.execute("CREATE TABLE customer(ck VARCHAR PRIMARY KEY, n INT)")
    con.execute("CREATE TABLE orders(ok INT PRIMARY KEY, ock VARCHAR)")
    con.execute("CREATE TABLE li(lok INT, q INT)")
    con.execute("INSERT INTO customer VALUES ('a', 1), ('A', 2)")
    con.execute("INSERT INTO orders VALUES (1, 'a')")
    con.execute("INSERT INTO li VALUES (1, 5)")
    for s in ["PROTECT TABLE customer", "PROTECT TABLE orders BY (ock) REFERENCES customer",
              "PROTECT TABLE li BY (lok) REFERENCES orders", "SET PRIVACY BUDGET 10"]:
        con.execute(s)
    assert con.execute("SELECT COUNT(*) FROM li WITH EPSILON 1").fetchall()
    con.execute("SET default_collation = 'nocase'")
    with pytest.raises(provsql_dp.Error, match="collation"):
        con.execute("SELECT COUNT(*) FROM li WITH EPSILON 1")
    assert con.execute("SHOW PRIVACY BUDGET").fetchall() == [("default", "10", "1", "9")]
