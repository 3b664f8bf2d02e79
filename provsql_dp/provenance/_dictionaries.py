"""The participant dictionaries of a capture: per domain, the distinct keys of every protected
table involved, numbered in sorted order (:mod:`provsql_dp.provenance.participants`).

Two places build them:

* **the driver** (:class:`~provsql_dp.provenance.participants.Domain`): the engine returns the
  distinct keys, numpy sorts them and looks slots up in them (DuckDB; Spark for key types it
  does not rank);
* **the engine** (:class:`Ranked`): a backend with ``rank_keys`` (Spark) ranks the distinct keys
  itself and registers them with their ids as a view the capture query joins every slot to —
  slots read from their own column and slots read from output values alike — so that only ids
  cross back and the driver never holds the keys. The keys are fetched (sorted, once) only if
  someone reads a participant's key from the K-relation's
  :class:`~provsql_dp.provenance.participant_list.ParticipantList`.

Both number the keys alike (numbers by value, text by code point, composite keys
lexicographically), so both give the same participant ids.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import DataError
from ..sql.plan import Node, Scan, Slot, walk
from .participant_list import ParticipantList
from .participants import Domain, engine_keyable

__all__ = ["Ranked", "dictionaries", "key_views", "participant_list"]


@dataclass
class Ranked:
    """A domain ranked by the engine: its size, its dictionary view ``(__k0, …, __id)`` and how
    to fetch its sorted keys when they are asked for."""

    name: str
    size: int
    view: str
    fetch: Callable[[], list]

    def __len__(self) -> int:
        return self.size

    def part(self) -> tuple:
        return (self.name, self.size, self.fetch)


def _key_query(items: list, q: Callable, slot_expr: Callable) -> tuple[str, int, str, bool]:
    """The DISTINCT query of a domain's keys (columns ``__k0, …``), their width, the error text
    of a NULL key, and whether the engine's ORDER BY sorts them (else numpy does)."""
    composite = [it for it in items if it[1].kind == "composite"]
    if composite:
        table, slot = composite[0]
        keys = ", ".join(f"{q(c)} AS __k{j}" for j, c in enumerate(slot.key_columns))
        return (f"SELECT DISTINCT {keys} FROM {table}", len(slot.key_columns),
                f"the primary key of protected table {table} has NULLs; every row needs a key", True)
    union = " UNION ALL ".join(f"SELECT {slot_expr(slot)} AS k FROM {table}" for table, slot in items)
    cols = ", ".join(f"{t}.{s.column}" for t, s in items if s.kind == "column")
    return (f"SELECT DISTINCT k AS __k0 FROM ({union}) AS keys", 1,
            f"a protected owner column ({cols}) holds NULL; every protected row needs its owners. "
            "Delete or fill those rows, or protect the table without BY", False)


def _sorted_keys(be, sql: str, width: int, ordered: bool, null_error: str) -> list:
    """The sorted distinct keys of a domain, fetched from the engine (one array per column)."""
    names = [f"__k{j}" for j in range(width)]
    if ordered:
        sql = f"SELECT * FROM ({sql}) AS d ORDER BY {', '.join(names)}"
    data, _ = be.fetchnumpy(sql)
    comps = [data[c] for c in names]
    if any(isinstance(c, np.ma.MaskedArray) and c.mask.any() for c in comps):
        raise DataError(null_error)
    comps = [np.asarray(np.ma.getdata(c)) for c in comps]
    return comps if ordered else [np.sort(comps[0])]


def dictionaries(be, plan: Node, q: Callable, slot_expr: Callable) -> dict[str, Domain | Ranked]:
    """Per domain (in name order), its dictionary: ranked by the engine where it can, else on
    the driver (see the module docstring). ``q`` quotes an identifier, ``slot_expr`` is a
    slot's key expression (:mod:`provsql_dp.provenance.capture`'s)."""
    sources: dict[str, set[tuple[str, Slot]]] = {}
    for n in walk(plan):
        if isinstance(n, Scan):
            for s in n.slots:
                sources.setdefault(s.domain, set()).add((n.from_sql, s))
    out: dict[str, Domain | Ranked] = {}
    for domain in sorted(sources):
        items = sorted(sources[domain],
                       key=lambda x: (x[0], x[1].kind, x[1].column or "", x[1].key_columns))
        sql, width, null_error, ordered = _key_query(items, q, slot_expr)
        ranked = be.rank_keys(sql, width) if hasattr(be, "rank_keys") else None
        if ranked is not None:
            if ranked.nulls:
                raise DataError(null_error)

            def fetch(sql=sql, width=width, ordered=ordered, null_error=null_error):
                return _sorted_keys(be, sql, width, ordered, null_error)

            out[domain] = Ranked(domain, ranked.size, ranked.view, fetch)
            continue
        out[domain] = Domain(domain, _sorted_keys(be, sql, width, ordered, null_error))
    return out


def participant_list(domains: dict[str, Domain | Ranked]) -> tuple[ParticipantList, dict]:
    """The participants of the domains, in order, and every domain's first id."""
    offsets, start = {}, 0
    for name, d in domains.items():
        offsets[name] = start
        start += len(d)
    return ParticipantList([d.part() for d in domains.values()]), offsets


def key_views(be, slots, sources, domains: dict[str, Domain | Ranked]) -> dict[int, str]:
    """The dictionary view of every slot (``slots`` of the compiled capture, read from
    ``sources``: :func:`~provsql_dp.provenance.slots.slot_sources`) the engine maps to ids:
    every slot of a ranked domain (read from its own column or from output values); a slot read
    from its own column of a driver dictionary the backend can take back as a view
    (``be.key_view``); none otherwise."""
    views, out = {}, {}
    for k, (kind, _) in enumerate(sources):
        if kind == "drop":
            continue
        d = domains[slots[k].domain]
        if isinstance(d, Ranked):
            out[k] = d.view
        elif kind == "column" and hasattr(be, "key_view") and engine_keyable(d):
            if d.name not in views:
                views[d.name] = be.key_view(d.components)
            out[k] = views[d.name]
    return out
