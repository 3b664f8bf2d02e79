"""A curator's copy of protected rows into a protected table of another unit, and the
``UNPROTECT`` of a table that received such copies: refused.

Participants are named by ``(domain, key)``: ``PROTECT TABLE people`` makes each row the
participant ``people:id``, ``PROTECT TABLE fam BY (family) AS family`` each family. ``INSERT
INTO fam SELECT … FROM people`` put one person's rows in two tables under two participants
that nothing links, ``people:7`` and ``family:3``: a query reading both takes them for two
people and adds noise for one, so what one person changes is under-stated (group privacy: ε
multiplied by the number of units that hold their rows). A copy from a protected table into a
protected table of another domain is refused; the way out names the source's domain: ``PROTECT
TABLE copy BY (c) AS people``, ``c`` holding the source's key (that the values are the owners'
own keys is the curator's to keep: not checked). A TEMP table stays the curator's own.

A staging table (created ``WITH NO DATA``, protected, filled from another protected table) holds
copies of rows still protected elsewhere: ``UNPROTECT TABLE`` of it would publish them. The
connection remembers the protected tables it copied rows into from another table
(:func:`refuse_other_unit`), and refuses their ``UNPROTECT`` while they hold rows (once
emptied, it passes); a copy made by another connection or session is out of reach.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE people(id INT PRIMARY KEY, fam INT); PROTECT TABLE people; "
...                 "CREATE TABLE f(fam INT); PROTECT TABLE f BY (fam) AS family")
>>> con.execute("INSERT INTO f SELECT fam FROM people")
Traceback (most recent call last):
...
provsql_dp.errors.DeclarationError: cannot copy the protected rows of people (participants of the domain people) into f, protected in the domain family: one participant's rows would count as another participant's too, and a query reading both tables would under-state what one participant changes. Protect f in people's domain (UNPROTECT TABLE f; PROTECT TABLE f BY (<the column holding people's key id>) AS people), or copy into a TEMP table
"""

from __future__ import annotations

import re

from sqlglot import exp

from ...errors import DeclarationError
from ...sql.cte_names import visible_ctes

__all__ = ["refuse_other_unit", "refuse_staged_unprotect", "unit_hint"]


def _protection(cat, parts: list[str], with_info: bool = False):
    info = cat.find_table(parts)
    p = None if info is None else cat.protection(info.schema, info.name)
    return (info, p) if with_info else p


def _sources(cat, tree: exp.Expression, target: exp.Table, first: str | None) -> list:
    """The protections of the protected tables ``tree`` reads by name, and of the table
    ``first`` names (what :func:`.protected_copies._protected_source` found, maybe through a
    view, a macro, a TEMP table or a file: its name comes first)."""
    found = {}
    for t in tree.find_all(exp.Table):
        if t is target or not isinstance(t.this, exp.Identifier):
            continue
        parts = [p.name for p in t.parts]
        if len(parts) == 1 and parts[0].lower() in visible_ctes(t):
            continue
        p = _protection(cat, parts)
        if p is not None:
            found[p.schema.lower(), p.table.lower()] = p
    if first is not None:
        m = re.match(r"'?([^\s'(]+)", first)
        name = m[1].lower() if m else ""
        for p in cat.list_protected():
            if p.table.lower() == name:
                found.setdefault((p.schema.lower(), p.table.lower()), p)
    return list(found.values())


def unit_hint(con, tree: exp.Expression, target: exp.Table, first: str) -> str:
    """How to protect ``target`` in the unit of the protected table ``tree`` reads: ``BY (id)
    AS people`` (its owners' key columns, by the source's names), or ``""`` if none is found."""
    sources = _sources(con._catalog, tree, target, first)
    if not sources:
        return ""
    s = sources[0]
    return f" BY ({', '.join(s.by_columns or s.key_columns) or '<a column of its keys>'}) AS {s.domain}"


def refuse_other_unit(con, tree: exp.Expression, target: exp.Table, first: str | None) -> None:
    """Refuse ``tree``, a write into the protected table ``target``, when it reads a protected
    table of another domain; else remember it for :func:`refuse_staged_unprotect`."""
    if isinstance(tree, exp.Delete):
        return  # a removal copies nothing into the table: no participant takes another's rows
    cat = con._catalog
    mine = _protection(cat, [p.name for p in target.parts])
    sources = _sources(cat, tree, target, first)
    for s in sources:
        if s.domain.lower() != mine.domain.lower():
            key = ", ".join(s.by_columns or s.key_columns) or "rowid"
            raise DeclarationError(
                f"cannot copy the protected rows of {s.table} (participants of the domain "
                f"{s.domain}) into {mine.table}, protected in the domain {mine.domain}: one "
                "participant's rows would count as another participant's too, and a query "
                "reading both tables would under-state what one participant changes. Protect "
                f"{mine.table} in {s.table}'s domain (UNPROTECT TABLE {mine.table}; PROTECT "
                f"TABLE {mine.table} BY (<the column holding {s.table}'s key {key}>) AS "
                f"{s.domain}), or copy into a TEMP table")
    key = (mine.schema.lower(), mine.table.lower())
    others = [s.table for s in sources if (s.schema.lower(), s.table.lower()) != key]
    if others:  # remembered for refuse_staged_unprotect
        _staged(con).setdefault(key, others[0])


def _staged(con) -> dict[tuple[str, str], str]:
    staged = getattr(con, "_protected_staged", None)
    if staged is None:
        staged = con._protected_staged = {}
    return staged


def refuse_staged_unprotect(con, parts: list[str]) -> None:
    """Refuse ``UNPROTECT TABLE parts`` when this connection copied another protected table's
    rows into it: unprotected, they would be public while their source's stay protected."""
    info, p = _protection(con._catalog, parts, with_info=True)
    if p is None or (p.schema.lower(), p.table.lower()) not in _staged(con):
        return
    name = ".".join('"' + n.replace('"', '""') + '"' for n in (info.catalog, info.schema, info.name))
    if con._duck.execute(f"SELECT count(*) FROM {name}").fetchone()[0] == 0:
        _staged(con).pop((p.schema.lower(), p.table.lower()))  # emptied: nothing copied left
        return
    source = _staged(con)[p.schema.lower(), p.table.lower()]
    raise DeclarationError(
        f"cannot unprotect {p.table}: it holds rows copied from the protected table {source} "
        "(through this connection), which unprotected every analyst could read while "
        f"{source}'s stay protected. Empty it first (DELETE FROM {p.table}), then unprotect or "
        f"drop it; to publish those rows, UNPROTECT TABLE {source} itself")
