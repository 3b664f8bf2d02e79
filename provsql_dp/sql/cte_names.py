"""Which CTE names are visible where a table is named: a name that is one of them is the CTE,
not the database's table.

In the main query of a ``WITH``, all of its CTEs; in a CTE's body, the CTEs defined before it
(all of them under ``RECURSIVE``): ``WITH people AS (SELECT * FROM people)`` reads the table.

>>> import sqlglot
>>> tree = sqlglot.parse_one("WITH a AS (SELECT * FROM a), b AS (SELECT * FROM a) SELECT * FROM b",
...                          read="duckdb")
>>> sorted((t.name, sorted(visible_ctes(t))) for t in tree.find_all(sqlglot.exp.Table))
[('a', []), ('a', ['a']), ('b', ['a', 'b'])]
"""

from __future__ import annotations

from sqlglot import exp

__all__ = ["visible_ctes"]


def visible_ctes(table: exp.Expression) -> set[str]:
    """The lower-case CTE names visible where ``table`` is named."""
    seen: set[str] = set()
    child, node = table, table.parent
    while node is not None:
        if isinstance(node, exp.With):
            ctes = list(node.expressions)
            k = next((i for i, c in enumerate(ctes) if c is child), len(ctes))
            if node.args.get("recursive"):
                k = len(ctes)
            seen |= {c.alias_or_name.lower() for c in ctes[:k]}
        else:
            w = node.args.get("with_") or node.args.get("with")
            if isinstance(w, exp.With) and child is not w:
                seen |= {c.alias_or_name.lower() for c in w.expressions}
        child, node = node, node.parent
    return seen
