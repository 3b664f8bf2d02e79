"""``KMEANS CLUSTERS k OF (c₁, …) FROM t [ITERATIONS n] [WITH EPSILON ε]``: Blowfish k-means.

The centres of SuLQ k-means (He et al. §6, :func:`provsql_dp.policies.blowfish.clustering.kmeans`)
over the points ``(c₁, …)`` of a row-per-participant protected table, under the neighbourhood its
declarations give those columns (:func:`provsql_dp.policies.blowfish.kmeans_policy.kmeans_policy`:
a ``FULL``, ``(FULL, FULL)``, ``DELTA`` or ``PARTITION BY WIDTH`` policy on exactly those columns,
or ``SET BOUNDS`` on each). Each of the ``n`` rounds (default 10) spends ε/n, half on the noisy
cluster counts and half on the noisy coordinate sums, with exact discrete Laplace noise at the
sensitivity the project proves (pairs split by a cluster boundary included; He et al. Lemma 6.1's
same-cluster bound alone is not private). The initial centres are drawn uniformly in the public
box, the points are clamped into it (a contraction: neighbours stay neighbours), rows with a NULL
or NaN coordinate are not read (as a policy's domain treats NULL: an absent record).

Everything that decides the release — the policy, the box, k, n, ε — is read from the catalog
before the ledger is charged; the table is read once after the charge, by a query built from the
catalog's names only (no text of the statement reaches DuckDB). A refused statement charges
nothing and returns at once; an accepted one is padded to the connection's ``release_seconds``
(:mod:`provsql_dp.privacy.release_clock`), as private queries are. The output: one row per cluster (``cluster`` 1 … k, then one column per clustered
column); a cluster whose noisy count falls below 1 keeps its previous centre.

>>> import numpy as np, provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE pts(id INT PRIMARY KEY, x DOUBLE, y DOUBLE)")
>>> _ = con.execute("INSERT INTO pts SELECT i, CASE WHEN i % 2 = 0 THEN 0.2 ELSE 0.8 END "
...                 "+ (i % 7) / 100, 0.5 FROM range(4000) t(i)")
>>> _ = con.execute("PROTECT TABLE pts")
>>> _ = con.execute("SET PRIVACY BUDGET 10")
>>> _ = con.execute("CREATE POLICY near ON pts (x, y) AS DELTA 0.01 METRIC L1 "
...                 "DOMAIN [0, 1) WIDTH 0.01, [0, 1) WIDTH 0.01 BOUNDED")
>>> con._rng = np.random.default_rng(2)
>>> cur = con.execute("KMEANS CLUSTERS 2 OF (x, y) FROM pts ITERATIONS 5 WITH EPSILON 10")
>>> [c[0] for c in cur.description]
['cluster', 'x', 'y']
>>> sorted(round(r[1], 1) for r in cur.fetchall())      # the true centres: x = 0.23, 0.83
[0.2, 0.8]
"""

from __future__ import annotations

import numpy as np

from .._numbers import format_eps
from ..errors import ProgrammingError, UnsupportedQueryError
from ..policies.blowfish.clustering import kmeans
from ..policies.blowfish.kmeans_policy import SUPPORTED, bounds_policy, kmeans_policy
from ..provenance.backends import engine_of
from ..provenance.capture import q
from ..sql.column_declarations import ColumnDeclarations
from ..sql.expressions import exact_number
from .policy_route import row_per_participant, table_policies
from ._session_settings import check_session_settings
from .failures import release_failure
from .no_data import read_or_nothing
from .precheck import check_epsilon
from .release_clock import ReleaseClock

__all__ = ["run_kmeans", "describe_kmeans", "kmeans_columns", "MAX_CLUSTERS", "MAX_ITERATIONS"]

MAX_CLUSTERS = 1000
MAX_ITERATIONS = 1000
_NUMERIC = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
            "UINTEGER", "UBIGINT", "UHUGEINT", "FLOAT", "DOUBLE", "REAL"}


def _prepare(con, tree):
    """Everything but the data: (table SQL, columns, KMeansPolicy, k, iterations, ε)."""
    k = int(tree.this.name)
    if not 1 <= k <= MAX_CLUSTERS:
        raise ProgrammingError(f"the number of clusters must be 1 to {MAX_CLUSTERS}, got {k}")
    it = tree.args.get("iterations")
    iterations = int(it.name) if it is not None else 10
    if not 1 <= iterations <= MAX_ITERATIONS:
        raise ProgrammingError(f"ITERATIONS must be 1 to {MAX_ITERATIONS}, got {iterations}")
    eps_node = tree.args.get("epsilon")
    eps = exact_number(eps_node, "epsilon") if eps_node is not None else con.default_epsilon
    if eps is None:
        raise ProgrammingError("KMEANS needs WITH EPSILON ε (or a session default: SET PRIVACY "
                               "EPSILON ε)")
    check_epsilon(eps)  # as a private query's, before the charge (1e-13 failed after it: h85attack-5)
    t = tree.args["table"]
    info = con.catalog.find_table([p for p in (t.catalog, t.db, t.name) if p])
    if info is None:
        raise ProgrammingError(f"table {t.name!r} does not exist")
    prot = con.catalog.protection(info.schema, info.name)
    ok, why = row_per_participant(con, info, prot)
    if not ok:  # undeclared participants: a declaration is missing; several owners: unsupported
        raise (ProgrammingError if prot is None else UnsupportedQueryError)(
            f"KMEANS cannot be released: {why}")
    lower = {c.lower(): c for c in info.columns}
    cols = []
    for ident in tree.expressions:
        name = ident.name.lower()
        if name not in lower:
            raise ProgrammingError(f"table {info.name!r} has no column {ident.name!r}")
        col = lower[name]
        ctype = info.types[info.columns.index(col)].upper()
        if ctype not in _NUMERIC and not ctype.startswith("DECIMAL"):
            raise UnsupportedQueryError(f"KMEANS clusters numbers; {col!r} is {ctype}")
        if col in cols:
            raise ProgrammingError(f"column {col!r} is named twice")
        cols.append(col)
    want = sorted(c.lower() for c in cols)
    pols = [tp for tp in table_policies(con, info.schema, info.name)
            if sorted(c.lower() for c in tp.columns) == want]
    if pols:
        kp = kmeans_policy(pols[0], cols)
    else:
        decl = ColumnDeclarations(con._catalog)
        bounds = [decl.bounds(info.schema, info.name, c) for c in cols]
        if any(b is None for b in bounds):
            missing = [c for c, b in zip(cols, bounds) if b is None]
            raise ProgrammingError(
                f"KMEANS over {info.name!r} needs the points' public box and neighbourhood: a "
                f"policy on ({', '.join(cols)}) — {SUPPORTED} — or SET BOUNDS ON {info.name} "
                f"(c) BETWEEN lo AND hi for {', '.join(repr(c) for c in missing)}. Nothing was "
                "charged")
        kp = bounds_policy(bounds, cols)
    table_sql = ".".join(q(p) for p in (info.catalog, info.schema, info.name) if p)
    return table_sql, cols, kp, k, iterations, eps


def kmeans_columns(cols: list[str]) -> list[tuple[str, str]]:
    """A ``KMEANS`` release's columns: the cluster's number, then its centre's coordinates."""
    return [("cluster", "INTEGER")] + [(c, "DOUBLE") for c in cols]


def describe_kmeans(con, tree) -> list[tuple[str, str]]:
    """The columns of ``KMEANS …`` without running it (its checks, nothing charged)."""
    return kmeans_columns(_prepare(con, tree)[1])


def run_kmeans(con, tree, rng=None):
    """Charge, read, release: ``(description, rows)``."""
    table_sql, cols, kp, k, iterations, eps = _prepare(con, tree)
    rng = rng if rng is not None else getattr(con, "_rng", None)
    text = (f"KMEANS CLUSTERS {k} OF ({', '.join(cols)}) FROM {table_sql} ITERATIONS "
            f"{iterations} WITH EPSILON {format_eps(eps)}")
    # charged before the table is read: the ε charged never depends on the data; the accepted
    # release is padded to the connection's public release_seconds (the side-channel rule: the
    # work grows with the number of rows, which is private under an unbounded neighbourhood)
    check_session_settings(con)  # DuckDB's settings as releases assume them (h73attack-1)
    with ReleaseClock(getattr(con, "release_seconds", None),
                      getattr(con, "release_time_limit", None)):
        con._ledger.charge(con.user, eps, text, "kmeans")
        sel = ", ".join(f"CAST({q(c)} AS DOUBLE) AS c{j}" for j, c in enumerate(cols))
        # a NULL or NaN coordinate: the row is not read (an absent record). A NaN point made
        # the release fail after the charge, so the outcome said whether some participant's
        # coordinate is NaN (red team h94attack, finding 4); ±inf is clamped into the box
        where = " AND ".join(f"{q(c)} IS NOT NULL AND NOT isnan(CAST({q(c)} AS DOUBLE))"
                             for c in cols)
        try:  # a failure after the charge says nothing about the data (h73attack-1)
            # through the connection's engine (Spark reads its snapshot, not the empty mirror)
            # past the budget or out of memory: no points, the centres from noise alone
            data = read_or_nothing(con, lambda: engine_of(con).fetchnumpy(
                f"SELECT {sel} FROM {table_sql} WHERE {where}")[0], "centres from no points")
            X = np.column_stack([np.asarray([] if data is None else data[f"c{j}"], dtype=float)
                                 for j in range(len(cols))]).reshape(-1, len(cols))
            res = kmeans(X, k, float(eps), lo=kp.lo, hi=kp.hi, policy=kp.policy,
                         bounded=kp.bounded, iterations=iterations, rng=rng, **kp.kwargs)
        except Exception as e:  # noqa: BLE001 - DuckDB's, the engine's: the fixed failure
            raise release_failure(con, e) from (None if con.role == "analyst" else e)
    desc = kmeans_columns(cols)
    return desc, [(j + 1, *map(float, res.centers[j])) for j in range(k)]
