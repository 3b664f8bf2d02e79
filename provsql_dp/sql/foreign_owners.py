"""Ownership along foreign keys: ``PROTECT TABLE t [BY (c, …)] REFERENCES r [(k, …)]``.

A row of ``t`` belongs to the participants of the row of ``r`` whose key ``k`` equals the row's
columns ``c``. ``r`` is protected itself — by owner columns, row by row, or along a foreign key of
its own — so a chain of any length ends at a table protected directly, and a star or snowflake
schema is protected by one participant table::

    PROTECT TABLE customer;                                          -- the participants
    PROTECT TABLE orders BY (o_custkey) REFERENCES customer;         -- one hop
    PROTECT TABLE lineitem BY (l_orderkey) REFERENCES orders;        -- two hops, owner: customer

The rules (checked at declaration, from the schema, then once against the rows):

* ``r`` is protected before ``t``; ``t`` joins ``r``'s domain (``AS`` is refused).
* ``k`` defaults to the columns the declared ``FOREIGN KEY`` of ``t`` on ``c`` references, else
  ``r``'s primary key; ``c`` (when ``BY`` is left out) to the columns of ``t``'s one declared
  ``FOREIGN KEY`` referencing ``r``. ``k`` must be a declared ``PRIMARY KEY`` or ``UNIQUE`` of
  ``r``: DuckDB then keeps it unique, so a row of ``t`` never has two referenced rows.
* At declaration every row of ``t`` finds its referenced row (no NULL in ``c``, no key missing
  from ``r``); otherwise nothing is stored and the error counts the dangling rows.
* A query follows the chain inside DuckDB by joins, hop by hop, until the participant's key is
  known: at a hop whose referenced table is protected by columns among ``k`` (``orders BY
  (o_custkey) REFERENCES customer`` with ``customer`` protected by its key ``c_custkey``) the key
  *is* the row's own value and no join is needed. A row whose chain breaks later (a referenced
  row deleted since) belongs to no participant and is left out of private queries: the join
  drops it whichever participant is removed, so the rule is the same on neighbouring databases.
* Neighbouring databases differ by one participant and every row whose chain leads to it.

>>> import duckdb
>>> from provsql_dp.sql.catalog import Catalog
>>> con = duckdb.connect()
>>> _ = con.execute("CREATE TABLE customer(c_custkey INT PRIMARY KEY, c_name VARCHAR)")
>>> _ = con.execute("CREATE TABLE orders(o_orderkey INT PRIMARY KEY, o_custkey INT)")
>>> _ = con.execute("CREATE TABLE lineitem(l_orderkey INT, l_qty INT)")
>>> _ = con.execute("INSERT INTO customer VALUES (1, 'a'), (2, 'b')")
>>> _ = con.execute("INSERT INTO orders VALUES (10, 1), (11, 2)")
>>> _ = con.execute("INSERT INTO lineitem VALUES (10, 5), (10, 6), (11, 7)")
>>> cat = Catalog(con)
>>> cat.protect("customer", None, None).domain
'customer'
>>> cat.protect("orders", ["o_custkey"], None, (["customer"], None)).describe()
'BY (o_custkey) REFERENCES customer (c_custkey), owned by customer'
>>> cat.protect("lineitem", ["l_orderkey"], None, (["orders"], None)).domain
'customer'
>>> slots, source = owned_scan(cat, cat.protection("main", "orders"))
>>> slots, source is None                  # the key is the row's own o_custkey: no join
((Slot(domain='customer', kind='column', column='o_custkey', key_columns=()),), True)
>>> slots, source = owned_scan(cat, cat.protection("main", "lineitem"))
>>> sorted(con.execute(f"SELECT l_qty, {slots[0].column} FROM {source}").fetchall())
[(5, 1), (6, 1), (7, 2)]
"""

from __future__ import annotations

from ..errors import DeclarationError
from ._equal_values import family
from ._not_null import collated_columns
from .plan import Slot

__all__ = ["declare_reference", "owned_scan", "scan_owners", "refuse_collated_owners", "check_hop",
           "ROWID", "OWNER"]

#: the hidden columns of an owner-resolving source: the row's rowid, the owner keys
ROWID = "__pdp_rowid"
OWNER = "__pdp_owner"


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _qualified(info) -> str:
    return ".".join(_q(p) for p in (info.catalog, info.schema, info.name) if p)


def declare_reference(cat, info, by: list[str] | None, domain: str | None,
                      ref_parts: list[str], ref_cols: list[str] | None):
    """``(domain, by columns, references)`` of ``PROTECT TABLE info BY (by) REFERENCES
    ref_parts (ref_cols)``, validated (module docstring; a key and the key it references are
    of one type family, :func:`._equal_values.family`); raises
    :class:`~provsql_dp.errors.DeclarationError` and stores nothing when a rule is broken."""
    what = f"cannot protect {info.name!r} along a foreign key"
    if domain is not None:
        raise DeclarationError(f"{what}: AS {domain} cannot be combined with REFERENCES — the rows "
                               "belong to the participants of the referenced table, in its domain")
    rinfo = cat.find_table(ref_parts)
    if rinfo is None or rinfo.view_sql is not None or rinfo.frame:
        raise DeclarationError(f"{what}: {'.'.join(ref_parts)!r} is not a table of the database")
    if (rinfo.schema, rinfo.name) == (info.schema, info.name):
        raise DeclarationError(f"{what}: a table cannot reference itself for its owners")
    rprot = cat.protection(rinfo.schema, rinfo.name)
    if rprot is None:
        raise DeclarationError(
            f"{what}: the referenced table {rinfo.name!r} is not protected. Protect it first "
            f"(PROTECT TABLE {rinfo.name} …), then {info.name}: its rows take their owners from it")
    mine = {c.lower(): c for c in info.columns}
    theirs = {c.lower(): c for c in rinfo.columns}
    for cols, tinfo, lower in ((by, info, mine), (ref_cols, rinfo, theirs)):
        missing = [c for c in cols or () if c.lower() not in lower]
        if missing:
            raise DeclarationError(f"table {tinfo.name!r} has no column {missing[0]!r}; its "
                                   f"columns are {', '.join(tinfo.columns)}")
    by = [mine[c.lower()] for c in by] if by else None
    ref_cols = [theirs[c.lower()] for c in ref_cols] if ref_cols else None
    fks = [(tuple(c), tuple(k)) for c, t, k in cat.con.execute(
        """SELECT constraint_column_names, referenced_table, referenced_column_names
             FROM duckdb_constraints() WHERE database_name = ? AND schema_name = ?
              AND table_name = ? AND constraint_type = 'FOREIGN KEY'""",
        [info.catalog, info.schema, info.name]).fetchall() if t.lower() == rinfo.name.lower()]
    if by is None:
        if len(fks) != 1:
            raise DeclarationError(
                f"{what}: name the referencing columns, PROTECT TABLE {info.name} BY (c, …) "
                f"REFERENCES {rinfo.name} (k, …) ({info.name!r} declares "
                f"{len(fks) or 'no'} FOREIGN KEY to {rinfo.name!r})")
        by = list(fks[0][0])
    if ref_cols is None:
        declared = [k for c, k in fks if [x.lower() for x in c] == [x.lower() for x in by]]
        ref_cols = list(declared[0]) if declared else list(cat.primary_key(rinfo))
    if len(ref_cols) != len(by):
        raise DeclarationError(
            f"{what}: BY names {len(by)} column(s) but the referenced key of {rinfo.name!r} "
            f"({', '.join(ref_cols) or 'none declared'}) has {len(ref_cols)}; name it: "
            f"REFERENCES {rinfo.name} (k, …)")
    check_hop(cat, info, by, rinfo, ref_cols, what)
    end = _chain_end(cat, rprot)
    if any(s.kind == "composite" for s in end.slots()):
        raise DeclarationError(
            f"{what}: its chain ends at {end.table!r}, whose participants are named by a "
            f"composite key; a chain must end at participants named by one column (or rowid)")
    _check_rows(cat, info, rinfo, by, ref_cols, what)
    return rprot.domain, tuple(by), (rinfo.schema, rinfo.name, tuple(ref_cols))


def check_hop(cat, info, by, rinfo, ref_cols, what, ref_name: str = "the referenced table"
              ) -> None:
    """Refuse a hop ``info (by) → rinfo (ref_cols)`` on which a row could match several
    referenced rows (and owners): ``rinfo`` is no table of the database (dropped, or a view
    since), ``ref_cols`` is no declared ``PRIMARY KEY``/``UNIQUE`` of it, a column is missing,
    a key and the key it references are of different type families, or they compare under a
    collation. From the schema only. Checked when declared and again at each scan (red team
    h85attack-1): ``CREATE OR REPLACE TABLE orders AS …`` keeps the declarations and drops the
    key, and a lineitem row then joined two orders rows, two tuples of one owner each, while
    removing either customer removes the row."""
    if rinfo is None or info is None or rinfo.view_sql is not None or rinfo.frame:
        name = rinfo.name if rinfo is not None else ref_name
        raise DeclarationError(
            f"{what}: {name!r} is no longer a table of the database (dropped, or replaced by a "
            "view), so its rows cannot name owners. Restore the table with its key, or "
            f"UNPROTECT TABLE {info.name if info is not None else '…'} and protect it again")
    types = {c.lower(): t for c, t in zip(info.columns, info.types)}  # DuckDB: any case
    rtypes = {c.lower(): t for c, t in zip(rinfo.columns, rinfo.types)}
    missing = [c for c in by if c.lower() not in types] + [
        k for k in ref_cols if k.lower() not in rtypes]
    if missing:
        raise DeclarationError(f"{what}: column {missing[0]!r} is gone from the schema; restore "
                               "it, or UNPROTECT the table and protect it again")
    if not any({c.lower() for c in key} == {c.lower() for c in ref_cols}
               for key in cat.unique_keys(rinfo)):
        raise DeclarationError(
            f"{what}: ({', '.join(ref_cols)}) is not a declared key of {rinfo.name!r}, so a row "
            f"could reference several rows (and owners). Declare it: ALTER TABLE {rinfo.name} "
            f"ADD PRIMARY KEY ({', '.join(ref_cols)}) (or UNIQUE in CREATE TABLE)")
    for c, k in zip(by, ref_cols):
        ct, kt = types[c.lower()], rtypes[k.lower()]
        if family(ct) != family(kt):
            raise DeclarationError(f"{what}: {c} ({ct}) and {rinfo.name}.{k} ({kt}) "
                                   "have different types; a key must equal the key it references")
    refuse_collated(cat, info, by, rinfo, ref_cols, what)


def _chain_end(cat, prot):
    seen = set()
    while prot.references is not None:
        if (prot.schema, prot.table) in seen:  # pragma: no cover - declarations are ordered
            raise DeclarationError(f"the ownership chain of {prot.table!r} loops")
        seen.add((prot.schema, prot.table))
        prot = cat.protection(*prot.references[:2])
    return prot


def refuse_collated(cat, info, by, rinfo, ref_cols, what) -> None:
    """Refuse a hop whose columns compare under a collation (``'eng' = 'ENG'`` under ``NOCASE``,
    or a session ``default_collation``): one row could then match several referenced rows, and
    its owner would not be one participant. Checked when declared and again at each scan (the
    curator may set ``default_collation`` later)."""
    bad = [f"{info.name}.{c}" for c in by if c in collated_columns(cat, info)] + [
        f"{rinfo.name}.{k}" for k in ref_cols if k in collated_columns(cat, rinfo)]
    if bad:
        raise DeclarationError(
            f"{what}: {', '.join(bad)} compare(s) under a collation, so a row could match several "
            "referenced rows (and owners). Use binary string columns for foreign-key ownership "
            "(no COLLATE, and no SET default_collation)")


def refuse_collated_owners(cat, prot):
    """Refuse participants named by a string column compared under a collation (its ``COLLATE``,
    or a session ``default_collation``) — of ``prot``'s table, or of its chain's end. DuckDB
    matches ``'bob'``, ``'Bob'`` and ``'BOB'`` in joins and groups them together, while a binary
    key holds each and the participant list keeps them apart: one person's rows would reach
    several participants' tuples (a visit of ``'BOB'`` joins ``'bob'`` and ``'Bob'``), which no
    route accounts for. Checked when declared and again at each scan (the curator may set
    ``default_collation`` later). Returns ``prot``."""
    end = _chain_end(cat, prot)
    info = cat.find_table([end.schema, end.table])
    if info is None:
        return prot
    cols = [c for s in end.slots() if s.kind in ("column", "composite")
            for c in ((s.column,) if s.kind == "column" else s.key_columns)]
    bad = [c for c in cols if c in collated_columns(cat, info)]
    if bad:
        raise DeclarationError(
            f"the participants of {prot.table!r} are named by {end.table}."
            f"{', '.join(bad)}, which compare(s) under a collation ('bob' = 'BOB'), so one "
            "person's rows could join several participants' rows. Name participants by binary "
            "string columns (no COLLATE, and no SET default_collation) or by integer keys, or "
            f"protect by a binary column holding lower({bad[0]}) if 'bob' and 'BOB' are one person")
    return prot


def _refuse_missing_owner_columns(cat, prot) -> None:
    """Refuse, from the schema, a scan whose participants are named by columns the table no
    longer has (``ALTER TABLE t RENAME COLUMN owner …``, ``DROP COLUMN``): every private query
    over it failed in DuckDB after its charge (red team h85attack-2). A table that is gone is
    DuckDB's own error, as for any missing table."""
    info = cat.find_table([prot.schema, prot.table])
    if info is None:
        return
    have = {c.lower() for c in info.columns}
    named = [c for s in prot.slots() for c in ((s.column,) if s.kind == "column" else
                                               s.key_columns if s.kind == "composite" else ())]
    missing = [c for c in named if c.lower() not in have]
    if missing:
        raise DeclarationError(
            f"the participants of {prot.table!r} are named by column {missing[0]!r}, which the "
            f"table no longer has (renamed or dropped since PROTECT TABLE). Restore the column, "
            f"or UNPROTECT TABLE {prot.table} and protect it again by the columns it has")


def _check_rows(cat, info, rinfo, by, ref_cols, what) -> None:
    """Every row of ``info`` finds its referenced row (the curator's data, checked once)."""
    on = " AND ".join(f"t.{_q(c)} = r.{_q(k)}" for c, k in zip(by, ref_cols))
    dangling = cat.con.execute(
        f"SELECT count(*) FROM {_qualified(info)} AS t WHERE NOT EXISTS "
        f"(SELECT 1 FROM {_qualified(rinfo)} AS r WHERE {on})").fetchone()[0]
    if dangling:
        raise DeclarationError(
            f"{what}: {dangling} row(s) of {info.name!r} reference no row of {rinfo.name!r} "
            f"(NULL in {', '.join(by)} or a key {rinfo.name!r} does not have), so they would have "
            f"no owner. Delete or fix them, or protect {info.name!r} by its own owner columns")


def owned_scan(cat, prot) -> tuple[tuple[Slot, ...], str | None]:
    """The slots of a scan of ``prot``'s table (owned along a foreign key) and the relation it
    reads: None when the owners are the row's own columns (no join), else a query selecting the
    table's columns, :data:`ROWID` and the owner keys ``__pdp_owner0, …`` through the chain's
    joins (see the module docstring)."""
    joins: list[str] = []
    ends = _owners(cat, prot, 0, joins)
    if not joins:
        return tuple(s for s, _ in ends), None
    info = cat.find_table([prot.schema, prot.table])
    slots, cols = [], []
    for k, (slot, expr) in enumerate(ends):
        slots.append(Slot(slot.domain, "column", f"{OWNER}{k}"))
        cols.append(f"{expr} AS {OWNER}{k}")
    source = (f"(SELECT t0.*, t0.rowid AS {ROWID}, {', '.join(cols)} FROM {_qualified(info)} AS t0"
              f"{''.join(joins)})")
    return tuple(slots), source


def _owners(cat, prot, depth: int, joins: list[str]) -> list[tuple[Slot, str]]:
    """(slot, SQL of its key over alias ``t{depth}``) for each owner of ``prot``'s rows,
    appending the joins the chain needs."""
    me = f"t{depth}"
    if prot.references is None:
        out = []
        for s in prot.slots():  # column or rowid (a composite chain end is refused)
            out.append((s, f"{me}.{_q(s.column)}" if s.kind == "column" else f"{me}.rowid"))
        return out
    rs, rt, rcols = prot.references
    check_hop(cat, cat.find_table([prot.schema, prot.table]), prot.by_columns,
              cat.find_table([rs, rt]), rcols, f"cannot read the owners of {prot.table!r}", rt)
    rprot = cat.protection(rs, rt)
    rslots = rprot.slots() if rprot.references is None else ()
    if rslots and all(s.kind == "column" and s.column in rcols for s in rslots):
        mapped = dict(zip(rcols, prot.by_columns))
        return [(Slot(s.domain, "column", mapped[s.column]), f"{me}.{_q(mapped[s.column])}")
                for s in rslots]
    rinfo = cat.find_table([rs, rt])
    nxt = f"t{depth + 1}"
    on = " AND ".join(f"{me}.{_q(c)} = {nxt}.{_q(k)}" for c, k in zip(prot.by_columns, rcols))
    joins.append(f" JOIN {_qualified(rinfo)} AS {nxt} ON {on}")
    return _owners(cat, rprot, depth + 1, joins)


def scan_owners(cat, prot) -> tuple[tuple[Slot, ...], str | None, tuple]:
    """The slots, source (:func:`owned_scan`) and first hop (``Scan.owner_ref``: the
    referencing columns, the referenced schema, table and columns; empty without a source) of a
    scan of a table with protection ``prot`` (None: a public table, no slots)."""
    if prot is None:
        return (), None, ()
    refuse_collated_owners(cat, prot)
    _refuse_missing_owner_columns(cat, _chain_end(cat, prot))
    if prot.references is None:
        return prot.slots(), None, ()
    slots, source = owned_scan(cat, prot)
    return slots, source, () if source is None else (prot.by_columns, *prot.references)
