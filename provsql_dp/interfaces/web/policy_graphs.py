"""Declared policies drawn: a policy's graph over its bins, projected to the column being viewed.

For a policy on two columns (``GRID``, a composition, ``FULL`` over pairs) the graph over the
pairs of bins is projected onto one column (Liu et al. Thm 3's projected policy): two bins of
that column are joined when some secret pair of records differs in them; ⊥ stays joined to each
bin it reaches. Declarations are public; this reads no data.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE t(id INT PRIMARY KEY, a INT, b INT); PROTECT TABLE t")
>>> _ = con.execute("CREATE POLICY g ON t (a, b) AS GRID 1 DOMAIN [0, 3) BINS 3, [0, 2) BINS 2 BOUNDED")
>>> g = declared_graph(con, "g", "a")
>>> g["nodes"], sorted(map(tuple, g["edges"]))
(['0', '1', '2'], [(0, 1), (1, 2)])
>>> len(declared_graph(con, "g", "b")["nodes"])
2
"""

from __future__ import annotations

import numpy as np

from ...errors import ProgrammingError
from ...policies.blowfish.catalog import PolicyCatalog
from ...policies.blowfish.sql import TablePolicy

__all__ = ["declared_graph"]


def declared_graph(con, name: str, column: str | None = None) -> dict:
    """Nodes (bin labels, and ``⊥`` when present) and edges of policy ``name`` on ``column``."""
    row = PolicyCatalog(con._duck, read_only=True).get(name) if name else None
    if row is None:
        raise ProgrammingError(f"no policy named {name!r} (SHOW POLICIES lists them)")
    tp = TablePolicy.from_row(row)
    pol = tp.policy()
    axis = 0
    if column is not None:
        if column not in tp.columns:
            raise ProgrammingError(f"policy {name} is on ({', '.join(tp.columns)}), not on {column!r}")
        axis = tp.columns.index(column)
    shape = tp.shape
    labels = [str(v) for v in tp.domains[axis].labels()]
    a, b = pol.value_edges()
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    if len(shape) == 2:  # row-major pairs of bins → the bin of the viewed column
        a, b = np.unravel_index(a, shape)[axis], np.unravel_index(b, shape)[axis]
    keep = a != b
    pairs = np.unique(np.sort(np.stack([a[keep], b[keep]], axis=1), axis=1), axis=0) if keep.any() else np.empty((0, 2), int)
    edges = pairs.tolist()
    nodes = list(labels)
    if pol.has_bottom:
        reach = np.asarray(pol.bottom_neighbours(), dtype=np.int64)
        if len(shape) == 2:
            reach = np.unravel_index(reach, shape)[axis]
        nodes.append("⊥")
        edges += [[len(labels), int(j)] for j in np.unique(reach)]
    what = f"projected to {tp.columns[axis]}: " if len(shape) == 2 else ""
    return {"nodes": nodes, "edges": edges, "meaning": f"{name} — {what}{pol.describe()}"}
