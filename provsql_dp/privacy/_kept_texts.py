"""SQL text made from a plan, kept by the catalog next to the plan it was made from.

A private statement's plan is kept while the schema and the declarations are unchanged (the
catalog's fingerprint decides, :meth:`~provsql_dp.sql.catalog.Catalog.snapshot`), under the
statement's text (:mod:`provsql_dp.interfaces.dbapi.cursor`). The text a release generates
from that plan with sqlglot (~0.1 ms a piece: the unbounded SUM's direct and native passes, a
Laplace aggregate) is kept in the same memo, keyed by the plan's identity and by every other
input the caller names (bounds, the release's public parameters); the entry holds the plan
itself, so a new plan — another statement, catalog, role or declaration — never meets the text
made for another, even if it reuses the old one's ``id``. What is kept is a function of the
statement, the schema, the declarations and public parameters only, never of the data; outside
a statement's snapshot nothing is kept.

>>> class Catalog:  # keeps everything, as a catalog does within a statement's snapshot
...     def __init__(self):
...         self.memo = {}
...     def cached(self, key, read):
...         if key not in self.memo:
...             self.memo[key] = read()
...         return self.memo[key]
>>> class Con:
...     _catalog = Catalog()
>>> class Plan:
...     pass
>>> made = []
>>> def make(x):
...     made.append(x)
...     return f"SELECT {x}"
>>> p = Plan()
>>> kept_for_plan(Con, p, ("a", 1), lambda: make(1)), kept_for_plan(Con, p, ("a", 1), lambda: make(1))
('SELECT 1', 'SELECT 1')
>>> kept_for_plan(Con, p, ("a", 2), lambda: make(2)), made   # another parameter: made afresh
('SELECT 2', [1, 2])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["kept_for_plan"]


def kept_for_plan(con, plan, key: tuple, make: Callable[[], Any]):
    """``make()``, kept by ``con``'s catalog under ``(id(plan),) + key`` next to ``plan`` itself
    (served only to that very plan object); ``make()`` afresh without a catalog. ``key`` must
    name every input of ``make`` other than the plan, the schema and the declarations."""
    catalog = getattr(con, "_catalog", None)
    if catalog is None:
        return make()
    kept_plan, value = catalog.cached(("kept for plan", id(plan)) + tuple(key),
                                      lambda: (plan, make()))
    return value if kept_plan is plan else make()
