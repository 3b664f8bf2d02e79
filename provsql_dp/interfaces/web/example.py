"""The demo database for the explorer: the bundled example data, declared, with two accounts.

``provsql-dp serve demo.duckdb --example`` calls :func:`prepare` when the file has no tables: it
loads :mod:`provsql_dp.interfaces.example_data`, protects ``employees`` (one participant per
row) and ``friendship`` (node privacy, ``AS member``), declares the salary policies of Demo 2
(``THRESHOLD 2`` on 20 bins of ``[0, 200000)``, bounded; and the same composed with ``FULL`` on
the department for 2-D histograms), gives the analyst ``ann`` a budget
of 5, and creates the accounts ``curator`` and ``ann`` with the passwords given (or random ones,
printed once by the command).

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "demo.duckdb")
>>> sorted(prepare(path, {"curator": "curator-pass", "ann": "ann-pass-1"}))
['ann', 'curator']
"""

from __future__ import annotations

import secrets

from ... import connect
from .. import example_data
from . import accounts

__all__ = ["prepare", "STATEMENTS"]

STATEMENTS = [
    "PROTECT TABLE employees",
    "PROTECT TABLE friendship BY (src, dst) AS member",
    "CREATE POLICY employees_salary ON employees (salary) AS THRESHOLD 2 DOMAIN [0, 200000) BINS 20 BOUNDED",
    "CREATE POLICY employees_dept_salary ON employees (dept_id, salary) AS (FULL, THRESHOLD 2) "
    "DOMAIN (1, 2, 3, 4, 5), [0, 200000) BINS 20 BOUNDED",
    "SET PRIVACY BUDGET 5 FOR USER 'ann'",
]


def prepare(database: str, passwords: dict[str, str] | None = None) -> dict[str, str]:
    """Fill an empty database file with the demo; returns {account: password}."""
    passwords = dict(passwords or {})
    con = connect(database)
    try:
        tables = con.execute("SELECT COUNT(*) FROM information_schema.tables "
                             "WHERE table_schema = 'main' AND table_catalog = current_database()").fetchone()[0]
        if tables:
            raise ValueError(f"{database} already has tables: --example fills an empty database only")
        example_data.load(con)
        for sql in STATEMENTS:
            con.execute(sql)
        con.commit()
        for name, role in (("curator", "curator"), ("ann", "analyst")):
            passwords.setdefault(name, secrets.token_urlsafe(9))
            accounts.add_account(con._duck, name, role, passwords[name])
    finally:
        con.close()
    return passwords
