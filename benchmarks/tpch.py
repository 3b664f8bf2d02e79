"""Benchmark: TPC-H as TPC-H writes it, the customer as the participant (issue 28).

Q3, Q5, Q7, Q8, Q10, Q11, Q12, Q18, Q20 and Q21 with their semi-joins, ``HAVING``, ``ORDER BY``
and ``LIMIT`` (:mod:`_tpch_queries`, which also holds who owns what: ownership along foreign keys
where the checkout has it, else the tables carrying a customer key). The data is made offline
by ``tpchgen-cli`` (the ``test`` extra), the same way as ``benchmarks/r2t_tpch.py``.

Per query one subprocess (so the peak memory is the query's own) loads the tables it reads,
declares the ownership and TPC-H's public facts (bounds, the ship modes' domain; an (ε, δ)
budget where the checkout has one, and ``DELTA 1e-6 OPTIONS (max_groups …, max_rows …)`` for
the queries grouped by private keys),
runs the query on plain DuckDB (the truth and its time), then releases it ``--releases`` times
at ε = ``--eps``
and prints: answered or ``refused: <reason>`` (nothing charged), the route(s), the median time
per release and its ratio to DuckDB's, the process's peak RSS (a parent thread also kills a
child past ``--max-rss-gb``), the true answer's first row and the median relative error over
the releases (the mean over the groups released and true; ``groups`` = released / true).
A query that reads no table the ownership protects (Q11: ``partsupp``, ``supplier``, ``nation``)
is refused by provsql_dp as having nothing to protect; it is then run without its privacy clause
and printed ``public`` (exact, nothing charged).

Usage::

    nice -n 19 python benchmarks/tpch.py --sf 1            # the issue's target, 5 releases
    nice -n 19 python benchmarks/tpch.py --sf 0.1 --queries Q5 Q12 --releases 3
    nice -n 19 python benchmarks/tpch.py --smoke           # SF 0.01, 4 queries, 2 releases

The last measured run is ``benchmarks/tpch_measured.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(_HERE.parent), str(_HERE)]  # this checkout's provsql_dp, the helpers

import _tpch_queries as tq  # noqa: E402
from r2t_tpch import make_data  # noqa: E402  (tpchgen-cli → Parquet, once per scale factor)

DELTA = 1e-6  # per query whose groups need private partition selection (Query.selection)


def declare(con, sql: str, ownership: str) -> str:
    """Load-time declarations on ``con``; returns the ownership model used (``auto``: the
    first of :data:`_tpch_queries.OWNERSHIP` this checkout accepts)."""
    from provsql_dp.errors import Error

    models = list(tq.OWNERSHIP) if ownership == "auto" else [ownership]
    for model in models:
        done = []
        try:
            for stmt in tq.OWNERSHIP[model]:
                con.execute(stmt)
                done.append(stmt.split()[2])
        except Error:
            if model == models[-1]:
                raise
            for t in reversed(done):
                con.execute(f"UNPROTECT TABLE {t}")
            continue
        break
    for stmt in tq.PUBLIC:  # the table named after ON (SET BOUNDS ON t …, SET GROUP KEYS ON t …)
        words = stmt.split()
        if words[words.index("ON") + 1] in tq.tables_read(sql):
            con.execute(stmt)
    return model


def run_child(data: Path, name: str, releases: int, eps: float, ownership: str) -> dict:
    import duckdb

    import provsql_dp
    from provsql_dp.errors import Error

    sql = tq.QUERIES[name].sql
    con = provsql_dp.connect(":memory:")
    for t in tq.TABLES:  # every table: a declaration may reference one the query does not read
        con.execute(f"CREATE TABLE {t} AS SELECT * FROM read_parquet('{data / (t + '.parquet')}')")
        if t in tq.PRIMARY_KEYS:
            con.execute(f"ALTER TABLE {t} ADD PRIMARY KEY ({tq.PRIMARY_KEYS[t]})")
    model = declare(con, sql, ownership)
    try:  # an (ε, δ) budget where the checkout has one (issue 28's accounting), else pure ε
        con.execute(f"SET PRIVACY BUDGET EPSILON {10 * eps * releases:g} DELTA 0.01")
        sel = tq.QUERIES[name].selection
        clause = f"WITH EPSILON {eps:g}" + (f" DELTA {DELTA:g} {sel}" if sel else "")
    except Error:
        con.execute(f"SET PRIVACY BUDGET {10 * eps * releases:g}")
        clause = f"WITH EPSILON {eps:g}"
    plain = duckdb.connect()
    for t in tq.tables_read(sql):
        plain.execute(f"CREATE TABLE {t} AS SELECT * FROM read_parquet('{data / (t + '.parquet')}')")
    t0 = time.perf_counter()
    truth = plain.execute(sql).fetchall()
    duck_s = time.perf_counter() - t0
    plain.close()
    out = {"query": name, "ownership": model, "duckdb_s": duck_s, "truth": _plain(truth[:1]),
           "true_rows": len(truth), "clause": clause}
    runs, routes = [], ()
    try:
        for _ in range(releases):
            t0 = time.perf_counter()
            cur = con.execute(f"{sql}\n{clause}")
            rows = cur.fetchall()
            runs.append((rows, time.perf_counter() - t0))
            routes = cur.privacy.routes
    except Error as e:
        out["status"] = "refused: " + " ".join(str(e).split())
        if "reads no protected table" in str(e):  # public under this ownership: run it plainly
            runs = []
            for _ in range(releases):
                t0 = time.perf_counter()
                rows = con.execute(sql).fetchall()
                runs.append((rows, time.perf_counter() - t0))
            q = tq.QUERIES[name]
            out.update(status="public", routes=["public (no clause)"],
                       seconds=statistics.median(s for _, s in runs),
                       rel_err=relative_error(q, runs[0][0], truth)[0],
                       groups=relative_error(q, runs[0][0], truth)[1],
                       answer=_plain(runs[0][0][:1]))
    else:
        q = tq.QUERIES[name]
        errs = [relative_error(q, rows, truth) for rows, _ in runs]
        released = runs[len(runs) // 2][0]
        same = [r for r in released if truth and _group(q, r) == _group(q, truth[0])]
        out.update(status="answered", routes=sorted(set(routes)),
                   seconds=statistics.median(s for _, s in runs),
                   rel_err=statistics.median(e for e, _ in errs), groups=errs[0][1],
                   answer=_plain((same or released)[:1]))
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def _plain(rows):
    return [[v if isinstance(v, (int, float, str)) or v is None else str(v) for v in r]
            for r in rows]


def _group(q: tq.Query, row) -> tuple:
    return tuple(str(v) for i, v in enumerate(row) if i not in q.aggregates)


def relative_error(q: tq.Query, rows, truth) -> tuple[float, str]:
    """The mean of |released − true| / |true| over the aggregate cells of the groups both
    have, and ``released/true`` groups.

    >>> q = tq.Query("", (1,))
    >>> relative_error(q, [("a", 11.0), ("b", 5.0), ("z", 1.0)], [("a", 10), ("b", 5)])
    (0.05, '2/2')
    """
    def split(r):
        return _group(q, r), [r[i] for i in q.aggregates]
    t = dict(split(r) for r in truth)
    errs, hit = [], 0
    for k, vals in map(split, rows):
        if k in t:
            hit += 1
            errs += [abs(float(v) - float(tv)) / abs(float(tv)) if tv else math.inf
                     for v, tv in zip(vals, t[k]) if v is not None and tv is not None]
    return (statistics.fmean(errs) if errs else math.nan), f"{hit}/{len(t)}"


def _watch(proc: subprocess.Popen, limit_mb: float, peak: list) -> None:
    """Poll the child's RSS; kill it past ``limit_mb`` (others share the machine)."""
    status = Path(f"/proc/{proc.pid}/status")
    while proc.poll() is None:
        try:
            kb = next(int(line.split()[1]) for line in status.read_text().splitlines()
                      if line.startswith("VmRSS:"))
        except (OSError, StopIteration):
            break
        peak[0] = max(peak[0], kb / 1024)
        if kb / 1024 > limit_mb:
            peak[1] = True
            proc.kill()
            break
        time.sleep(0.25)


HEADER = (f"{'query':<5} {'status':<9} {'route':<22} {'s/release':>9} {'× DuckDB':>9} "
          f"{'peak MB':>8} {'groups':>7} {'rel. err':>9}  true answer (first row) → a release")


def _pct(x: float) -> str:
    return "—" if math.isnan(x) else f"{x:.2%}"


def fmt(r: dict) -> str:
    if r["status"] not in ("answered", "public"):
        return (f"{r['query']:<5} {'refused':<9} {'':<22} {'':>9} {'':>9} "
                f"{r['peak_rss_mb']:8.0f} {'':>7} {'':>9}  {r['status'][9:]}")
    return (f"{r['query']:<5} {r['status']:<9} {','.join(r['routes']):<22.22} "
            f"{r['seconds']:9.2f} {r['seconds'] / max(r['duckdb_s'], 1e-4):9.1f} "
            f"{r['peak_rss_mb']:8.0f} {r['groups']:>7} {_pct(r['rel_err']):>9}  "
            f"{r['truth'][:1]} → {r['answer'][:1]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sf", type=float, default=1.0)
    ap.add_argument("--queries", nargs="+", default=list(tq.QUERIES), choices=list(tq.QUERIES))
    ap.add_argument("--releases", type=int, default=5)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--ownership", default="auto", choices=["auto", *tq.OWNERSHIP])
    ap.add_argument("--max-rss-gb", type=float, default=8.0, help="kill a query's process past it")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per query")
    ap.add_argument("--data", type=Path, default=_HERE / ".tpch", help="where the Parquet goes")
    ap.add_argument("--smoke", action="store_true",
                    help="SF 0.01, Q3 Q5 Q12 Q21, 2 releases: seconds")
    ap.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        d, q, n, eps, own = a.child
        print(json.dumps(run_child(Path(d), q, int(n), float(eps), own)))
        return
    if a.smoke:  # one query of each kind: partition selection (Q3), single-owner (Q5, Q12), owner-local NOT EXISTS (Q21)
        a.sf, a.releases, a.queries = 0.01, 2, ["Q3", "Q5", "Q12", "Q21"]
        a.data = Path(tempfile.mkdtemp(prefix="tpch_smoke_"))  # never beside the repository
    data = make_data(a.sf, a.data)
    print(f"\nTPC-H SF {a.sf:g} as written, customer as the participant, ε = {a.eps:g} per "
          f"query, {a.releases} releases; ownership: {a.ownership}", flush=True)
    print(HEADER, flush=True)
    failed = False
    for q in a.queries:
        cmd = [sys.executable, __file__, "--child", str(data), q, str(a.releases), str(a.eps),
               a.ownership]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        peak = [0.0, False]
        watcher = threading.Thread(target=_watch, args=(proc, a.max_rss_gb * 1024, peak),
                                   daemon=True)
        watcher.start()
        try:
            out, err = proc.communicate(timeout=a.timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            print(f"{q:<5} timeout   (over {a.timeout:g} s)", flush=True)
            continue
        if peak[1]:
            print(f"{q:<5} killed    (resident memory over {a.max_rss_gb:g} GB)", flush=True)
            continue
        if proc.returncode:
            print(f"{q:<5} failed    {err.strip().splitlines()[-1:]}", flush=True)
            failed = True
            continue
        r = json.loads(out.strip().splitlines()[-1])
        print(fmt(r), flush=True)
    print(f"(ownership used: {r['ownership'] if a.queries else '—'}; refused statements "
          f"charge nothing)" if not failed else "", flush=True)
    if failed and a.smoke:
        sys.exit(1)  # a smoke run fails loudly (tests/system/test_benchmarks_smoke.py)


if __name__ == "__main__":
    main()
