"""The example database shipped with the package (small, real where it matters).

* ``friendship(src, dst)`` — Zachary's karate club: 34 members, 78 friendships, 45 triangles;
* ``member(id, faction)`` — the faction each member joined after the club split (public);
* ``employees(id, name, dept_id, salary, manager_id, hired)`` — 30 invented employees;
* ``departments(id, name)`` — their five departments (public reference data).

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> load(con)
['friendship', 'member', 'employees', 'departments']
>>> con.execute("SELECT COUNT(*) FROM friendship").fetchone()
(78,)
"""

from __future__ import annotations

from importlib import resources

__all__ = ["load", "TABLES"]

TABLES = {
    "friendship": ("karate.csv", "src INTEGER NOT NULL, dst INTEGER NOT NULL, PRIMARY KEY (src, dst)"),
    "member": ("karate_members.csv", "id INTEGER PRIMARY KEY, faction VARCHAR"),
    "employees": (
        "employees.csv",
        "id INTEGER PRIMARY KEY, name VARCHAR, dept_id INTEGER, salary INTEGER, "
        "manager_id INTEGER, hired DATE",
    ),
    "departments": ("departments.csv", "id INTEGER PRIMARY KEY, name VARCHAR"),
}


def load(con) -> list[str]:
    """Create and fill the example tables on a provsql_dp (or duckdb) connection."""
    duck = getattr(con, "_duck", con)
    for table, (filename, schema) in TABLES.items():
        path = resources.files("provsql_dp") / "data" / filename
        with resources.as_file(path) as p:
            duck.execute(f"CREATE TABLE {table} ({schema})")
            duck.execute(
                f"INSERT INTO {table} SELECT * FROM read_csv(?, header = true, comment = '#', "
                "auto_detect = true)",
                [str(p)],
            ).fetchall()
    return list(TABLES)
