"""Load graphs into DuckDB as edge tables, in bulk.

The edge table has columns ``src BIGINT, dst BIGINT`` (plus any requested edge attributes),
primary key ``(src, dst)``, ``CHECK (src < dst)``, and holds every undirected edge **once, with src < dst**: self-loops are dropped and duplicate or
reverse-direction records merged. That is the format :func:`provsql_dp.graph.pattern_sql`
compiles against, and one row per edge is what edge privacy (``PROTECT TABLE edge``) needs.

The optional node table has a column ``id BIGINT`` (primary key; one row per node, isolated nodes included),
``label VARCHAR`` when a networkx graph's node labels are not all integers (they are then
numbered ``0 … n-1`` in iteration order), and one column per requested node attribute.

Rows cross from Python to DuckDB as whole numpy arrays (``unnest`` of one list parameter per
column); edge-list files are read by DuckDB's CSV reader with explicit options (its sniffer
trips over ``#`` comment lines), or by numpy if the file is not single-space separated.

Examples
--------
>>> import duckdb, networkx as nx
>>> duck = duckdb.connect()
>>> g = nx.Graph([("ann", "bob"), ("bob", "cy"), ("cy", "ann"), ("cy", "cy")])
>>> nx.set_node_attributes(g, {"ann": 34, "bob": 29, "cy": 41}, "age")
>>> info = load_edges(duck, g, node_table="node", node_attributes=["age"])
>>> info.n_nodes, info.n_edges
(3, 3)
>>> duck.execute("SELECT src, dst FROM edge ORDER BY ALL").fetchall()
[(0, 1), (0, 2), (1, 2)]
>>> duck.execute("SELECT id, label, age FROM node ORDER BY id").fetchall()
[(0, 'ann', 34), (1, 'bob', 29), (2, 'cy', 41)]
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import networkx as nx
import numpy as np

from ..errors import DataError, InterfaceError
from ._compile import _ident, _table

__all__ = ["LoadedGraph", "load_edges", "read_edge_list", "duck_of"]


@dataclass(frozen=True)
class LoadedGraph:
    """What :func:`load_edges` wrote.

    Attributes
    ----------
    table, node_table : str or None
        The tables created (``node_table`` is None unless requested).
    n_nodes : int
        Nodes of the graph, isolated ones included (as far as the source lists them).
    n_edges : int
        Undirected edges written (self-loops dropped, duplicates merged).
    labels : tuple or None
        For a networkx graph whose labels are not all integers: ``labels[id]`` is the label.
    """

    table: str
    node_table: str | None
    n_nodes: int
    n_edges: int
    labels: tuple | None = field(default=None, repr=False)


def duck_of(con) -> duckdb.DuckDBPyConnection:
    """The DuckDB connection behind ``con`` (a provsql_dp connection or a DuckDB one)."""
    if isinstance(con, duckdb.DuckDBPyConnection):
        return con
    duck = getattr(con, "_duck", None)
    if isinstance(duck, duckdb.DuckDBPyConnection):
        return duck
    raise InterfaceError(
        f"expected a provsql_dp or duckdb connection, got {type(con).__name__}"
    )


def _check_graph(g) -> None:
    if not isinstance(g, nx.Graph):
        raise InterfaceError(f"expected a networkx graph, got {type(g).__name__}")
    if g.is_directed():
        raise InterfaceError(
            "subgraph counting needs an undirected graph; convert with G.to_undirected() "
            "(decide first whether a pair linked both ways is one edge)"
        )
    if g.is_multigraph():
        raise InterfaceError(
            "subgraph counting needs a simple graph; collapse parallel edges with nx.Graph(G)"
        )


def read_edge_list(path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Read an edge-list file: ``#`` comment lines, then ``u v`` (integers) per line.

    ``# isolated: a b c`` comment lines (as in ``shared/data/graphs/*.edges``) name nodes without
    edges. Returns ``(u, v, isolated)`` as int64 arrays, records as they are in the file.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".edges", delete=False) as f:
    ...     _ = f.write("# a graph\\n# isolated: 7 9\\n1 2\\n2 3\\n")
    >>> u, v, iso = read_edge_list(f.name)
    >>> u.tolist(), v.tolist(), iso.tolist()
    ([1, 2], [2, 3], [7, 9])
    >>> os.unlink(f.name)
    """
    path = os.fspath(path)
    if not Path(path).is_file():
        raise InterfaceError(f"no edge-list file at {path!r}")
    isolated: list[int] = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line.startswith("#"):
                break
            body = line[1:].strip()
            if body.startswith("isolated:"):
                try:
                    isolated.extend(int(x) for x in body[len("isolated:") :].split())
                except ValueError:
                    raise DataError(f"{path}: bad '# isolated:' line {line.strip()!r}") from None
    duck = duckdb.connect()
    try:
        arrays = duck.execute(
            "SELECT u, v FROM read_csv(?, delim=' ', header=false, comment='#',"
            " columns={'u': 'BIGINT', 'v': 'BIGINT'}, auto_detect=false)",
            [path],
        ).fetchnumpy()
        u = np.asarray(arrays["u"], dtype=np.int64)
        v = np.asarray(arrays["v"], dtype=np.int64)
    except duckdb.Error:
        try:
            arr = np.loadtxt(path, comments="#", dtype=np.int64, usecols=(0, 1), ndmin=2)
        except ValueError as err:
            raise DataError(
                f"{path}: expected '#' comment lines and 'u v' integer pairs per line ({err})"
            ) from None
        u, v = arr[:, 0].copy(), arr[:, 1].copy()
    finally:
        duck.close()
    return u, v, np.asarray(isolated, dtype=np.int64)


def _attribute_arrays(items, keys, what: str) -> dict[str, np.ndarray]:
    """Column arrays for attribute ``keys`` over ``items`` (an iterable of attribute dicts)."""
    items = list(items)
    out = {}
    for key in keys:
        if not isinstance(key, str) or not key:
            raise InterfaceError(f"{what} names must be non-empty strings, got {key!r}")
        values = [d.get(key) for d in items]
        if any(val is None for val in values) or not values:
            arr = np.empty(len(values), dtype=object)
            arr[:] = values
        else:
            arr = np.asarray(values)
            if arr.dtype.kind not in "biuf":
                arr = np.empty(len(values), dtype=object)
                arr[:] = [str(x) if not isinstance(x, (int, float, bool)) else x for x in values]
        out[key] = arr
    return out


def _all_keys(dicts) -> list[str]:
    keys: dict[str, None] = {}
    for d in dicts:
        for key in d:
            keys.setdefault(key, None)
    return list(keys)


def _create(
    duck, table: str, columns: dict[str, np.ndarray], casts: dict[str, str], key: tuple[str, ...],
    check: str | None = None,
) -> None:
    """CREATE OR REPLACE ``table`` from whole column arrays in one statement, with primary key
    ``key`` (so that ``PROTECT TABLE`` names an edge participant by ``(src, dst)``) and, when
    given, a ``CHECK`` constraint (the edge table's ``src < dst``: a declaration the SQL k-star
    route reads, :mod:`provsql_dp.privacy.kstar_route`). DuckDB cannot add a CHECK to an existing
    table, so the table is then declared with the column types of the data and filled after."""
    params = {f"p{i}": arr for i, arr in enumerate(columns.values())}
    select = ", ".join(
        f"unnest($p{i})" + (f"::{casts[name]}" if name in casts else "") + f" AS {_ident(name)}"
        for i, name in enumerate(columns)
    )
    pk = f"PRIMARY KEY ({', '.join(_ident(c) for c in key)})"
    if check is None:
        duck.execute(f"CREATE OR REPLACE TABLE {_table(table)} AS SELECT {select}", params)
        duck.execute(f"ALTER TABLE {_table(table)} ADD {pk}")
        return
    types = duck.execute(f"DESCRIBE SELECT {select}", params).fetchall()
    cols = ", ".join(f"{_ident(name)} {typ}" for name, typ, *_ in types)
    duck.execute(f"CREATE OR REPLACE TABLE {_table(table)} ({cols}, {pk}, CHECK ({check}))")
    duck.execute(f"INSERT INTO {_table(table)} SELECT {select}", params)


def load_edges(
    con,
    source,
    table: str = "edge",
    *,
    node_table: str | None = None,
    node_attributes=None,
    edge_attributes=None,
) -> LoadedGraph:
    """Write a graph into ``table`` (``src < dst``, one row per undirected edge), replacing it.

    Parameters
    ----------
    con : provsql_dp connection or duckdb.DuckDBPyConnection
    source : str, os.PathLike or networkx.Graph
        An edge-list file (``#`` comments, ``u v`` integer ids per line, optional
        ``# isolated:`` lines) or an undirected simple networkx graph.
    table : str
        The edge table to (re)create.
    node_table : str, optional
        Also (re)create a node table ``(id, [label,] attributes…)`` with every node, isolated
        ones included. Needed for ``node_filter`` constraints.
    node_attributes, edge_attributes : list of str or True, optional
        networkx attributes to copy as columns (``True``: every key that occurs). Missing values
        become NULL. Edge attributes become columns of ``table``.

    Returns
    -------
    LoadedGraph

    Raises
    ------
    provsql_dp.errors.InterfaceError
        For a directed graph or a multigraph, or a missing file.
    provsql_dp.errors.DataError
        For a file that is not a list of integer pairs.
    """
    duck = duck_of(con)
    labels = None
    if isinstance(source, nx.Graph):
        _check_graph(source)
        nodes = list(source.nodes())
        if all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in nodes):
            ids = np.asarray(nodes, dtype=np.int64)
            index = None
        else:
            labels = tuple(nodes)
            ids = np.arange(len(nodes), dtype=np.int64)
            index = {x: i for i, x in enumerate(nodes)}
        m = source.number_of_edges()
        ends = (c for e in source.edges() for c in e)
        if index is not None:
            ends = (index[c] for c in ends)
        uv = np.fromiter(ends, dtype=np.int64, count=2 * m).reshape(m, 2)
        a, b = uv[:, 0], uv[:, 1]
        keep = a != b
        a, b = a[keep], b[keep]
        cols = {"src": np.minimum(a, b), "dst": np.maximum(a, b)}
        if edge_attributes:
            data = [d for x, y, d in source.edges(data=True) if x != y]
            keys = _all_keys(data) if edge_attributes is True else list(edge_attributes)
            extra = _attribute_arrays(data, keys, "edge attribute")
            for key in extra:
                if key in ("src", "dst"):
                    raise InterfaceError(f"edge attribute {key!r} clashes with an edge column")
            cols.update(extra)
        _create(duck, table, cols, {"src": "BIGINT", "dst": "BIGINT"}, ("src", "dst"),
                check="src < dst")
        n_edges = int(len(cols["src"]))
        if node_table is not None:
            ncols: dict[str, np.ndarray] = {"id": ids}
            if labels is not None:
                lab = np.empty(len(labels), dtype=object)
                lab[:] = [str(x) for x in labels]
                ncols["label"] = lab
            if node_attributes:
                data = [source.nodes[x] for x in nodes]
                keys = _all_keys(data) if node_attributes is True else list(node_attributes)
                extra = _attribute_arrays(data, keys, "node attribute")
                for key in extra:
                    if key in ncols:
                        raise InterfaceError(f"node attribute {key!r} clashes with a node column")
                ncols.update(extra)
            _create(duck, node_table, ncols, {"id": "BIGINT", "label": "VARCHAR"}, ("id",))
        n_nodes = len(nodes)
    else:
        if node_attributes or edge_attributes:
            raise InterfaceError("attributes can only be copied from a networkx graph")
        u, v, isolated = read_edge_list(source)
        keep = u != v
        a, b = np.minimum(u[keep], v[keep]), np.maximum(u[keep], v[keep])
        pairs = np.unique(np.stack([a, b], axis=1), axis=0) if len(a) else np.empty((0, 2), np.int64)
        _create(
            duck,
            table,
            {"src": pairs[:, 0], "dst": pairs[:, 1]},
            {"src": "BIGINT", "dst": "BIGINT"},
            ("src", "dst"),
            check="src < dst",
        )
        n_edges = int(len(pairs))
        all_ids = np.unique(np.concatenate([u, v, isolated]))
        n_nodes = int(len(all_ids))
        if node_table is not None:
            _create(duck, node_table, {"id": all_ids}, {"id": "BIGINT"}, ("id",))
    return LoadedGraph(
        table=table, node_table=node_table, n_nodes=n_nodes, n_edges=n_edges, labels=labels
    )
