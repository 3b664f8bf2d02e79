"""Names in the planner's messages: output names of select items and column aliases, and the
analyst's own column names in place of plan ids (``v12``) in a refusal's text.

>>> import sqlglot
>>> from provsql_dp.sql.scope import Scope, Source
>>> scope = Scope([Source("p", ("name", "salary"), ("v0", "v1"))])
>>> analyst_names("the comparison v0 = v1 mixes VARCHAR and BIGINT", scope)
'the comparison p.name = p.salary mixes VARCHAR and BIGINT'
>>> output_name(sqlglot.parse_one("SELECT a AS b", read="duckdb").expressions[0])
'b'
"""

from __future__ import annotations

import re

from sqlglot import exp

__all__ = ["alias_columns", "analyst_names", "output_name"]

_ID = re.compile(r"\bv\d+\b")


def analyst_names(message: str, scope) -> str:
    """``message`` with each plan id of ``scope`` written as ``alias.column``."""
    names = {i: f"{s.alias}.{n}" for s in scope.sources for n, i in zip(s.names, s.ids)}
    return _ID.sub(lambda m: names.get(m.group(0), m.group(0)), message)


def alias_columns(alias: exp.Expression | None) -> tuple[str, ...]:
    if alias is None:
        return ()
    cols = alias.args.get("columns") or []
    return tuple(c.name for c in cols)


def output_name(item: exp.Expression) -> str:
    if isinstance(item, exp.Alias):
        return item.alias
    if isinstance(item, exp.Column):
        return item.name
    return item.sql(dialect="duckdb")
