"""Name resolution for the planner: the tables and aliases in scope of one SELECT, and the
refusal every stage of planning raises for a construct outside positive relational algebra.

>>> from sqlglot import exp
>>> sc = Scope()
>>> sc.add(Source("e", ("src", "dst"), ("v0", "v1")))
>>> sc.resolve(exp.column("dst", table="e")), sc.star()
('v1', (('src', 'dst'), ('v0', 'v1')))
>>> str(refuse("EXCEPT", NON_MONOTONE)).split(":")[0]
'EXCEPT is not supported in a private query'
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from sqlglot import exp

from ..errors import ProgrammingError, UnsupportedQueryError

__all__ = ["Scope", "Source", "refuse", "NON_MONOTONE", "NOT_YET"]

NON_MONOTONE = "it is non-monotone (a participant leaving can add rows to the answer), so no sensitivity bound of the recursive mechanism holds"
NOT_YET = "it is not supported yet"


def refuse(construct: str, reason: str = NOT_YET, hint: str | None = None) -> UnsupportedQueryError:
    msg = f"{construct} is not supported in a private query: {reason}"
    if hint:
        msg += f". {hint[0].upper()}{hint[1:]}"
    return UnsupportedQueryError(msg)


@dataclass
class Source:
    alias: str
    names: tuple[str, ...]
    ids: tuple[str, ...]
    hidden: set[str] = field(default_factory=set)  # right-hand USING columns, hidden from *


@dataclass
class Scope:
    sources: list[Source] = field(default_factory=list)
    using: dict[str, str] = field(default_factory=dict)  # lower name -> id of the merged column

    def add(self, src: Source) -> None:
        if any(s.alias.lower() == src.alias.lower() for s in self.sources):
            raise ProgrammingError(
                f"duplicate table alias {src.alias!r} in one FROM clause; give each occurrence its own alias"
            )
        self.sources.append(src)

    def resolve(self, col: exp.Column) -> str:
        name = col.name
        if col.args.get("db") or col.args.get("catalog"):
            raise refuse(f"the qualified column reference {col.sql(dialect='duckdb')}",
                         hint="refer to columns as alias.column")
        if col.table:
            for s in self.sources:
                if s.alias.lower() == col.table.lower():
                    for n, i in zip(s.names, s.ids):
                        if n.lower() == name.lower():
                            return i
                    raise ProgrammingError(
                        f"table {s.alias!r} has no column {name!r} (its columns: {', '.join(s.names)})"
                    )
            raise ProgrammingError(
                f"unknown table or alias {col.table!r} in {col.sql(dialect='duckdb')}"
            )
        if name.lower() in self.using:
            return self.using[name.lower()]
        hits = [
            i for s in self.sources for n, i in zip(s.names, s.ids) if n.lower() == name.lower()
        ]
        if not hits:
            raise ProgrammingError(f"unknown column {name!r}{self.suggest(name)}")
        if len(set(hits)) > 1:
            raise ProgrammingError(
                f"column reference {name!r} is ambiguous; qualify it with a table alias"
            )
        return hits[0]

    def suggest(self, name: str) -> str:
        """The columns in scope, for an unknown column's message (the close ones first).

        >>> sc = Scope()
        >>> sc.add(Source("employees", ("id", "dept_id", "salary"), ("v0", "v1", "v2")))
        >>> sc.suggest("dept")
        ' (did you mean dept_id? in scope: employees(id, dept_id, salary))'
        """
        names = {n.lower(): n for s in self.sources for n in s.names}
        close = difflib.get_close_matches(name.lower(), list(names), n=3, cutoff=0.6)
        shown = "; ".join(f"{s.alias}({', '.join(s.names[:20])}{', …' if len(s.names) > 20 else ''})"
                          for s in self.sources[:5])
        mean = f"did you mean {' or '.join(names[c] for c in close)}? " if close else ""
        return f" ({mean}in scope: {shown})" if shown else ""

    def star(self, table: str | None = None) -> tuple[tuple[str, ...], tuple[str, ...]]:
        names, ids = [], []
        found = False
        for s in self.sources:
            if table is not None and s.alias.lower() != table.lower():
                continue
            found = True
            for n, i in zip(s.names, s.ids):
                if table is None and i in s.hidden:
                    continue
                names.append(n)
                ids.append(i)
        if table is not None and not found:
            raise ProgrammingError(f"unknown table or alias {table!r} in {table}.*")
        return tuple(names), tuple(ids)
