"""DB-API 2.0 with roles and a privacy budget: a curator and an analyst on one database file.

1. The **curator** creates the database file (in a temporary directory), loads the example
   tables, declares the employees protected and gives the analyst ``ann`` a budget of ε = 1.
2. The **analyst** connects to the same file with ``role="analyst"``: ordinary PEP 249 calls
   (``cursor``, ``execute`` with ``?`` parameters, ``description``, ``fetchmany``) on the public
   departments table; a private count, whose metadata rides on ``cursor.privacy``; reading the
   protected rows is refused; a query that would overspend is refused and **spends nothing**.
3. The curator reads the whole ledger, and raises ann's budget.

Run: ``python examples/dbapi_roles_budget.py``
"""

from __future__ import annotations

import os
import tempfile

import provsql_dp
from provsql_dp import format_eps
from provsql_dp.interfaces import example_data


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="provsql_dp_example_") as tmp:
        db = os.path.join(tmp, "company.duckdb")

        # 1. the curator sets the database up
        curator = provsql_dp.connect(db, role="curator", user="carol")
        example_data.load(curator)
        cur = curator.cursor()
        cur.execute("PROTECT TABLE employees")
        print("curator:", cur.fetchone()[0])
        cur.execute("SET PRIVACY BUDGET 1 FOR USER 'ann'")
        print("curator:", cur.fetchone()[0])
        curator.commit()
        curator.close()

        # 2. the analyst works through the same PEP 249 interface
        analyst = provsql_dp.connect(db, role="analyst", user="ann")
        cur = analyst.cursor()
        cur.execute("SELECT id, name FROM departments WHERE id <= ? ORDER BY id", (3,))
        print("\nanalyst: public table, columns", [d[0] for d in cur.description])
        cur.arraysize = 2
        print("analyst: fetchmany() ->", cur.fetchmany(), "then", cur.fetchmany())

        cur.execute("SELECT COUNT(*) FROM employees WHERE salary > 100000 WITH EPSILON 0.4")
        (value,) = cur.fetchone()
        info = cur.privacy
        print(f"analyst: private count of salaries over 100k = {value:.1f} "
              f"± {info.noise_bound(0.95)[0]:.1f} (95%), mechanism {info.mechanism}, "
              f"ε charged {format_eps(info.epsilon_exact)}, remaining {format_eps(info.remaining_exact)}")

        try:
            cur.execute("SELECT name, salary FROM employees")
        except provsql_dp.PrivacyError as e:
            print(f"analyst: reading protected rows is refused: {type(e).__name__}: {e}")

        before = analyst.ledger.entries("ann")
        left = analyst.ledger.remaining("ann")
        try:
            cur.execute("SELECT SUM(salary) FROM employees WITH EPSILON 0.8 OPTIONS (theta = 200000)")
        except provsql_dp.BudgetExceededError as e:
            print(f"analyst: over-budget query refused: {e}")
        after = analyst.ledger.entries("ann")
        assert after == before and analyst.ledger.remaining("ann") == left
        print(f"analyst: the ledger is unchanged: {len(after)} charge(s), "
              f"{format_eps(analyst.ledger.remaining('ann'))} remaining")
        analyst.close()

        # 3. the curator sees every charge and can raise the budget
        curator = provsql_dp.connect(db, role="curator", user="carol")
        print("\ncurator: the ledger")
        for c in curator.ledger.entries():
            print(f"  #{c.id} {c.user} ε={format_eps(c.epsilon)} {c.mechanism}: {c.statement}")
        cur = curator.cursor()
        cur.execute("SET PRIVACY BUDGET 2 FOR USER 'ann'")
        cur.execute("SHOW PRIVACY BUDGET FOR USER 'ann'")
        user, total, spent, remaining = cur.fetchone()
        print(f"curator: raised {user}'s budget: total {total}, spent {spent}, remaining {remaining}")
        curator.close()


if __name__ == "__main__":
    main()
