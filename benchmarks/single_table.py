"""Benchmark: the everyday single-table workload at engine speed, next to plain DuckDB.

The issue "The everyday workload at engine speed" sets these targets:

* ``COUNT(*) WHERE age > 40``, bounded ``SUM(salary)`` clamped to [0, 100000] and ``AVG(salary)``
  over 10^6 and 10^7 rows of a one-row-per-person ``people`` table: ≤ 3× plain DuckDB on the same
  query, peak memory ≤ 1.5 GB;
* people ⋈ visits ``COUNT(*)`` at 10^6 people / 10^7 visits: ≤ 3×;
* ``GROUP BY city`` (50 declared keys) over 10^7 rows, and a 1,000-group public-table GROUP BY over
  10^6 people (``people JOIN depts ON people.dept_id = depts.id GROUP BY depts.name, depts.id``):
  ≤ 3× plain, median relative error per group ≤ 5 % at ε = 1;
* accuracy: median relative error of COUNT at 10^6 rows ≤ 1e-4 at ε = 1; the bounded SUM's median
  absolute error over the Laplace mechanism's with the same bounds (b·ln 2, b = 100000/ε) ≤ 1.5.

How it measures
---------------
* The data is built inside DuckDB (``INSERT … SELECT … FROM range(N)``, hash-based columns) on an
  in-memory ``provsql_dp.connect()``; plain DuckDB runs on the same tables through ``con._duck``.
* Timing: one subprocess per size. Per query: one warm-up of every contender, then ``--repeats``
  interleaved rounds (plain DuckDB, provsql_dp, smartnoise-sql, OpenDP); medians of
  ``time.perf_counter`` wall times, ratio = median(provsql_dp) / median(plain), from that process.
  A query whose warm-up exceeds ``--query-budget`` seconds gets fewer rounds (noted).
* Accuracy: the releases of the timed runs plus more, up to ``--releases`` (≥ 20) or until
  ``--accuracy-budget`` seconds; relative error |released − true| / |true|, median over releases
  (per group: median over releases, then median over groups with a nonzero true count). The
  true values come from plain DuckDB (for SUM/AVG: of the clamped values, which the mechanism
  estimates). The bounded SUM takes 200 releases (within the budget): its median absolute error
  is compared with the Laplace mechanism's, b·ln 2, and a median of 20 draws varies by ±30 %.
* Peak memory: a separate subprocess per (size, query) builds only the tables it needs, resets
  the kernel's RSS high-water mark (``/proc/self/clear_refs``; ``ru_maxrss`` where that is not
  available, then including the build), runs the private query once and reads ``VmHWM``: the
  resident peak while the query runs, data included. tracemalloc would not see DuckDB.
* Peers: if ``snsql`` (smartnoise-sql) imports, COUNT and SUM run through it on the same DuckDB
  tables (its Postgres dialect over a tiny DB-API adapter on ``con._duck``); if ``opendp``
  imports, through an OpenDP measurement (clamp → sum/count → Laplace, on 64-bit integers) on the
  column fetched from DuckDB as a Python list — fetch and conversion included in its time. ``pip install '.[bench]'`` installs both.

Usage::

    python benchmarks/single_table.py                        # --sizes 1e6,1e7
    python benchmarks/single_table.py --quick                # 10^5 rows only, a smoke test
    python benchmarks/single_table.py --sizes 1e6 --only count,sum
    python benchmarks/single_table.py --sizes 1e6 --profile dept   # cProfile of one private query

Rows that provsql_dp refuses print ``refused: <first line of the error>``; the others still run.
After the table: the machine's 1-minute load average over the run (sampled every 15 s) and one
``met`` / ``NOT met`` line per target of the issue (``not measured`` when this run's sizes or
``--only`` leave it out); both are also in the JSON.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # this checkout's provsql_dp, not an installed copy
    sys.path.insert(0, str(REPO))
EPSILON = 1.0
LOWER, UPPER = 0, 100000
N_CITIES, N_DEPTS, VISITS_PER_PERSON = 50, 1000, 10
MEMORY_TARGET_MB = 1536.0
RATIO_TARGET = 3.0

CITY_KEYS = ", ".join(f"'city_{i:02d}'" for i in range(N_CITIES))
CLAMPED = f"LEAST(GREATEST(salary, {LOWER}), {UPPER})"
DEPT_JOIN = "people JOIN depts ON people.dept_id = depts.id"

# Each query: the private statement, the same query for plain DuckDB, the truth the mechanism
# estimates, the tables it needs, the declarations it relies on, and its targets.
QUERIES = [
    {"key": "count", "label": "COUNT(*) WHERE age > 40", "kind": "scalar", "tables": ("people",),
     "private": "SELECT COUNT(*) FROM people WHERE age > 40 WITH EPSILON 1",
     "plain": "SELECT COUNT(*) FROM people WHERE age > 40",
     "truth": "SELECT COUNT(*) FROM people WHERE age > 40",
     "memory_target": True, "rel_target": 1e-4, "peers": True,
     "snsql": "SELECT COUNT(*) FROM people WHERE age > 40",
     "opendp": ("count", "SELECT id FROM people WHERE age > 40")},
    {"key": "sum", "label": f"SUM(salary) clamped [{LOWER}, {UPPER}]", "kind": "scalar",
     "tables": ("people",),
     "private": f"SELECT SUM(salary) FROM people WITH EPSILON 1 "
                f"OPTIONS (lower = {LOWER}, upper = {UPPER})",
     "plain": "SELECT SUM(salary) FROM people",
     "plain_same": f"SELECT SUM({CLAMPED}) FROM people",
     "truth": f"SELECT SUM({CLAMPED}) FROM people",
     "memory_target": True, "laplace_scale": (UPPER - LOWER) / EPSILON, "peers": True,
     "releases": 200,  # the ratio to b·ln 2 of a median of 20 |Lap| draws varies by ±30 %
     "snsql": "SELECT SUM(salary) FROM people",
     "opendp": ("sum", "SELECT salary::BIGINT FROM people")},
    {"key": "avg", "label": "AVG(salary) (SET BOUNDS 0..100000)", "kind": "scalar",
     "tables": ("people",),
     "private": "SELECT AVG(salary) FROM people WITH EPSILON 1",
     "plain": "SELECT AVG(salary) FROM people",
     "plain_same": f"SELECT AVG({CLAMPED}) FROM people",
     "truth": f"SELECT AVG({CLAMPED}) FROM people",
     "setup": (f"SET BOUNDS ON people (salary) BETWEEN {LOWER} AND {UPPER}",),
     "memory_target": True},
    {"key": "join", "label": "people ⋈ visits COUNT(*)", "kind": "scalar",
     "tables": ("people", "visits"), "max_size": 10**6,
     "private": "SELECT COUNT(*) FROM people JOIN visits ON people.id = visits.pid "
                "WITH EPSILON 1",
     "plain": "SELECT COUNT(*) FROM people JOIN visits ON people.id = visits.pid",
     "truth": "SELECT COUNT(*) FROM people JOIN visits ON people.id = visits.pid"},
    {"key": "city", "label": f"GROUP BY city ({N_CITIES} declared keys)", "kind": "group",
     "tables": ("people",),
     "private": "SELECT city, COUNT(*) FROM people GROUP BY city WITH EPSILON 1",
     "plain": "SELECT city, COUNT(*) FROM people GROUP BY city",
     "truth": "SELECT city, COUNT(*) FROM people GROUP BY city",
     "setup": (f"SET GROUP KEYS ON people (city) VALUES ({CITY_KEYS})",),
     "group_target": 0.05},
    {"key": "dept", "label": f"JOIN depts GROUP BY depts.name, depts.id ({N_DEPTS} groups)",
     "kind": "group", "tables": ("people", "depts"), "max_size": 10**6,
     "private": f"SELECT depts.name, COUNT(*) FROM {DEPT_JOIN} "
                "GROUP BY depts.name, depts.id WITH EPSILON 1",
     "plain": f"SELECT depts.name, COUNT(*) FROM {DEPT_JOIN} GROUP BY depts.name, depts.id",
     "truth": f"SELECT depts.name, depts.id, COUNT(*) FROM {DEPT_JOIN} "
              "GROUP BY depts.name, depts.id",
     "group_target": 0.05},
    # Diagnostic: the same public-table GROUP BY on one key column.
    {"key": "dept_name", "label": "(info) JOIN depts GROUP BY depts.name", "kind": "group",
     "tables": ("people", "depts"), "max_size": 10**6,
     "private": f"SELECT depts.name, COUNT(*) FROM {DEPT_JOIN} GROUP BY depts.name "
                "WITH EPSILON 1",
     "plain": f"SELECT depts.name, COUNT(*) FROM {DEPT_JOIN} GROUP BY depts.name",
     "truth": f"SELECT depts.name, COUNT(*) FROM {DEPT_JOIN} GROUP BY depts.name",
     "group_target": 0.05},
]
BY_KEY = {q["key"]: q for q in QUERIES}


# ------------------------------------------------------------------------------------ data

def build(con, n: int, tables) -> None:
    """The workload's tables, built inside DuckDB from hash-based pseudo-random columns."""
    duck = con._duck
    duck.execute(
        "CREATE TABLE people(id INTEGER PRIMARY KEY, age INTEGER, salary DOUBLE, "
        "city VARCHAR, dept_id INTEGER)")
    duck.execute(
        f"""INSERT INTO people SELECT
                range::INTEGER,
                (18 + hash(range * 2 + 1) % 80)::INTEGER,
                (hash(range * 3 + 2) % 120000)::DOUBLE,   -- 1/6 of the salaries exceed the bound
                'city_' || lpad((hash(range * 5 + 3) % {N_CITIES})::VARCHAR, 2, '0'),
                (hash(range * 7 + 4) % {N_DEPTS})::INTEGER
            FROM range({n})""")
    if "depts" in tables:
        duck.execute("CREATE TABLE depts(id INTEGER PRIMARY KEY, name VARCHAR)")
        duck.execute(f"INSERT INTO depts SELECT range, 'dept_' || range FROM range({N_DEPTS})")
    if "visits" in tables:
        duck.execute("CREATE TABLE visits(pid INTEGER, day INTEGER)")
        duck.execute(
            f"INSERT INTO visits SELECT (hash(range * 11 + 5) % {n})::INTEGER, "
            f"(range % 365)::INTEGER FROM range({n * VISITS_PER_PERSON})")
    con.execute("PROTECT TABLE people")
    if "visits" in tables:
        con.execute("PROTECT TABLE visits BY (pid) AS people")
    con.execute("SET PRIVACY BUDGET 1e9")


def declare(con, queries) -> dict:
    """Runs each query's declarations; returns {query key: first error line} for those refused."""
    refused = {}
    done = {}
    for q in queries:
        for stmt in q.get("setup", ()):
            if stmt not in done:
                try:
                    con.execute(stmt)
                    done[stmt] = None
                except Exception as e:  # noqa: BLE001 - reported in the table
                    done[stmt] = first_line(e)
            if done[stmt] is not None:
                refused[q["key"]] = done[stmt]
    return refused


def first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"


def tables_for(queries) -> set:
    return {t for q in queries for t in q["tables"]}


def applicable(q, n: int) -> bool:
    return n <= q.get("max_size", n)


# ------------------------------------------------------------------------------------ peers

class _DuckCursor:
    """The part of a DB-API cursor that smartnoise-sql's Postgres reader uses."""

    def __init__(self, cur):
        self._cur, self.description = cur, None

    def execute(self, sql):
        self._cur.execute(sql)
        self.description = self._cur.description

    def __iter__(self):
        return iter(self._cur.fetchall())


class _DuckConn:
    def __init__(self, duck):
        self._duck = duck

    def cursor(self):
        return _DuckCursor(self._duck.cursor())

    def commit(self):
        pass

    def rollback(self):
        pass


def smartnoise_reader(duck, n: int):
    try:
        import warnings

        import snsql
    except ImportError:
        return None, "not installed"
    warnings.filterwarnings("ignore", module="snsql")
    meta = {"": {"": {"people": {
        "row_privacy": True, "rows": n, "max_ids": 1, "censor_dims": False,
        "id": {"type": "int"},
        "age": {"type": "int", "lower": 18, "upper": 98},
        "salary": {"type": "float", "lower": float(LOWER), "upper": float(UPPER)},
    }}}}
    try:
        reader = snsql.from_connection(_DuckConn(duck), engine="postgres", metadata=meta,
                                       privacy=snsql.Privacy(epsilon=EPSILON, delta=1e-9))
    except Exception as e:  # noqa: BLE001
        return None, f"error: {first_line(e)}"
    return reader, None


def opendp_measurements():
    try:
        import opendp.prelude as dp
    except ImportError:
        return None, "not installed"
    try:
        dp.enable_features("contrib")
        # Integers: OpenDP's float sum over data of unknown size sums at most a fixed number of
        # records (here: a relative error of 0.9 at 10^7 rows); the salaries are whole numbers.
        ints = dp.vector_domain(dp.atom_domain(T="i64")), dp.symmetric_distance()
        count = ints >> dp.t.then_count() >> dp.m.then_laplace(scale=1.0 / EPSILON)
        total = (ints >> dp.t.then_clamp((LOWER, UPPER)) >> dp.t.then_sum()
                 >> dp.m.then_laplace(scale=(UPPER - LOWER) / EPSILON))
        assert count.map(1) <= EPSILON and total.map(1) <= EPSILON
    except Exception as e:  # noqa: BLE001
        return None, f"error: {first_line(e)}"
    return {"count": count, "sum": total}, None


# ------------------------------------------------------------------------------------ child: timing

def scalar_of(rows):
    return float(rows[0][-1])


def groups_of(rows, description, key_names):
    """{key tuple: value}, the key read from the named columns that the result has."""
    names = [d[0].split(".")[-1].lower() for d in description]
    idx = [names.index(k) for k in key_names]
    return {tuple(str(r[i]) for i in idx): float(r[-1]) for r in rows}


def median_rel(errors):
    return statistics.median(errors) if errors else None


def run_timing(n: int, keys, repeats: int, releases: int, query_budget: float,
               accuracy_budget: float) -> dict:
    import provsql_dp

    queries = [BY_KEY[k] for k in keys if applicable(BY_KEY[k], n)]
    con = provsql_dp.connect()
    t0 = time.perf_counter()
    build(con, n, tables_for(queries))
    build_s = time.perf_counter() - t0
    refused_setup = declare(con, queries)
    duck = con._duck
    need_peers = any(q.get("peers") for q in queries)
    sn_reader, sn_status = smartnoise_reader(duck, n) if need_peers else (None, None)
    od, od_status = opendp_measurements() if need_peers else (None, None)
    out = {"rows": n, "build_s": build_s, "smartnoise_status": sn_status,
           "opendp_status": od_status, "queries": {}}

    for q in queries:
        print(f"[{n:.0e}] {q['key']} …", file=sys.stderr, flush=True)
        res = {"label": q["label"], "notes": []}
        out["queries"][q["key"]] = res
        truth_cur = duck.execute(q["truth"])
        truth_rows = truth_cur.fetchall()
        truth_desc = truth_cur.description

        def plain(q=q):
            return duck.execute(q["plain"]).fetchall()

        def private(q=q):
            cur = con.execute(q["private"])
            return cur.fetchall(), cur.description, cur.privacy

        contenders = {"plain": plain, "private": private}
        if "plain_same" in q:  # the bounded aggregate as one writes it in plain DuckDB
            contenders["plain_same"] = lambda q=q: duck.execute(q["plain_same"]).fetchall()
        if q.get("peers"):
            if sn_reader is not None:
                contenders["smartnoise"] = lambda q=q: sn_reader.execute(q["snsql"])
            if od is not None:
                kind, fetch = q["opendp"]
                contenders["opendp"] = (
                    lambda kind=kind, fetch=fetch:
                    od[kind](next(iter(duck.execute(fetch).fetchnumpy().values())).tolist()))
        # warm-up, timed: a slow contender gets fewer rounds within the query budget
        warm = {}
        outputs = {}
        for name, fn in list(contenders.items()):
            t = time.perf_counter()
            try:
                outputs.setdefault(name, []).append(fn())
            except Exception as e:  # noqa: BLE001 - reported in the table
                if name == "private":
                    res["refused"] = first_line(e)
                else:
                    res[f"{name}_error"] = first_line(e)
                del contenders[name]
                outputs.pop(name, None)
                continue
            warm[name] = time.perf_counter() - t
        if q["key"] in refused_setup and "refused" in res:
            res["notes"].append(f"declaration refused: {refused_setup[q['key']]}")
        round_s = sum(warm.values())
        rounds = repeats
        if round_s * repeats > query_budget:
            rounds = max(1, int(query_budget // max(round_s, 1e-9)))
            res["notes"].append(f"{rounds} timed round(s) instead of {repeats}: one round "
                                f"takes {round_s:.1f} s (--query-budget {query_budget:.0f} s)")
        times = {name: [] for name in contenders}
        for i in range(rounds):
            order = list(contenders)
            for name in order:
                t = time.perf_counter()
                r = contenders[name]()
                times[name].append(time.perf_counter() - t)
                outputs[name].append(r)
        res["rounds"] = rounds
        for name, ts in times.items():
            res[f"{name}_s"] = statistics.median(ts) if ts else None
            res[f"{name}_times"] = ts
        if "private" not in contenders:
            continue
        res["ratio"] = res["private_s"] / res["plain_s"]
        last_privacy = outputs["private"][-1][2]
        res["mechanism"] = getattr(last_privacy, "mechanism", None)

        # accuracy: the timed releases, then more up to --releases or the accuracy budget
        rel = outputs["private"]
        t_acc = time.perf_counter()
        wanted = max(releases, q.get("releases", 0))
        while len(rel) < wanted and time.perf_counter() - t_acc < accuracy_budget:
            rel.append(private())
        if len(rel) < releases:
            res["notes"].append(f"accuracy from {len(rel)} releases instead of {releases} "
                                f"(--accuracy-budget {accuracy_budget:.0f} s)")
        res["releases"] = len(rel)
        if q["kind"] == "scalar":
            true = scalar_of(truth_rows)
            vals = [scalar_of(r[0]) for r in rel]
            res["true"] = true
            res["median_rel_err"] = median_rel([abs(v - true) / abs(true) for v in vals])
            res["median_abs_err"] = statistics.median(abs(v - true) for v in vals)
            if "laplace_scale" in q:
                ref = q["laplace_scale"] * math.log(2)  # median |Lap(b)| = b ln 2
                res["laplace_median_abs_err"] = ref
                res["vs_laplace"] = res["median_abs_err"] / ref
            for peer in ("smartnoise", "opendp"):
                if outputs.get(peer):
                    pv = [float(r[-1][-1]) if peer == "smartnoise" else float(r)
                          for r in outputs[peer]]
                    res[f"{peer}_median_rel_err"] = median_rel(
                        [abs(v - true) / abs(true) for v in pv])
        else:
            truth_names = [d[0].split(".")[-1].lower() for d in truth_desc][:-1]
            priv_names = {d[0].split(".")[-1].lower() for d in rel[0][1]}
            key_names = [k for k in truth_names if k in priv_names] or truth_names[:1]
            true = groups_of(truth_rows, truth_desc, key_names)
            per_group = {k: [] for k, v in true.items() if v != 0}
            extra = set()
            for rows, desc, _ in rel:
                got = groups_of(rows, desc, key_names)
                extra |= set(got) - set(true)
                for k, errs in per_group.items():
                    if k in got:
                        errs.append(abs(got[k] - true[k]) / abs(true[k]))
            meds = [statistics.median(v) for v in per_group.values() if v]
            res["groups_true"] = len(true)
            res["groups_released"] = len(rel[-1][0])
            res["groups_missing"] = sum(1 for v in per_group.values() if not v)
            res["groups_spurious"] = len(extra)
            res["median_rel_err"] = median_rel(meds)
            res["max_group_median_rel_err"] = max(meds) if meds else None
            if res["groups_released"] != len(true):
                res["notes"].append(
                    f"released {res['groups_released']} groups, plain DuckDB has {len(true)}"
                    f" ({len(extra)} released keys absent from the data, matched on "
                    f"{', '.join(key_names)})")
        del outputs
    return out


# ------------------------------------------------------------------------------------ child: memory

def _status_kb(field: str):
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def run_memory(n: int, key: str) -> dict:
    import provsql_dp

    q = BY_KEY[key]
    con = provsql_dp.connect()
    build(con, n, set(q["tables"]))
    declare(con, [q])
    build_peak_kb = _status_kb("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    method = "VmHWM after clear_refs"
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # reset the RSS high-water mark (Linux ≥ 4.0)
    except OSError:
        method = "ru_maxrss (includes the build)"
    before_kb = _status_kb("VmRSS")
    t = time.perf_counter()
    error = None
    try:
        con.execute(q["private"]).fetchall()
    except Exception as e:  # noqa: BLE001
        error = first_line(e)
    seconds = time.perf_counter() - t
    if method.startswith("VmHWM"):
        peak_kb = _status_kb("VmHWM")
    else:
        peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"rows": n, "key": key, "peak_mb": peak_kb / 1024, "before_mb": (before_kb or 0) / 1024,
            "build_peak_mb": build_peak_kb / 1024, "method": method, "seconds": seconds,
            "error": error}


# ------------------------------------------------------------------------------------ child: profile

def run_profile(n: int, key: str, top: int = 15) -> None:
    import cProfile
    import io
    import pstats

    import provsql_dp

    q = BY_KEY[key]
    con = provsql_dp.connect()
    build(con, n, set(q["tables"]))
    declare(con, [q])
    con.execute(q["private"]).fetchall()  # warm-up
    prof = cProfile.Profile()
    prof.enable()
    con.execute(q["private"]).fetchall()
    prof.disable()
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(top)
    print(f"cProfile of {q['private']!r} at {n} rows (top {top}, cumulative):")
    print(s.getvalue())


# ------------------------------------------------------------------------------------ parent

def _child(args, timeout):
    cmd = [sys.executable, os.path.abspath(__file__), *args]
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=None, text=True,
                              timeout=timeout, cwd=REPO, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    if proc.returncode != 0:
        return {"error": f"child exited with {proc.returncode}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _fmt_s(x):
    if x is None:
        return "—"
    return f"{x * 1000:.1f} ms" if x < 1 else f"{x:.2f} s"


def _fmt_rows(q, n):
    if q["key"] == "join":
        return f"{n:.0e} / {n * VISITS_PER_PERSON:.0e} visits"
    return f"{n:.0e}"


def _verdict(ok):
    return "met" if ok else "NOT met"


def _cell(text):
    return str(text).replace("|", "\\|")


def render(results, memory, sizes, keys) -> tuple[list[str], list[str]]:
    lines = [("| query | rows | plain DuckDB | provsql_dp | ratio | peak MB | median rel. err "
              "| mechanism | smartnoise | opendp |"),
             "|---|---|---|---|---|---|---|---|---|---|"]
    notes = []
    for n in sizes:
        r = results.get(n, {})
        for k in keys:
            q = BY_KEY[k]
            if not applicable(q, n):
                continue
            res = r.get("queries", {}).get(k)
            if res is None:
                lines.append(f"| {_cell(q['label'])} | {_fmt_rows(q, n)} | "
                             f"error: {_cell(r.get('error', 'not run'))} |||||||")
                continue
            mem = memory.get((n, k), {})
            plain = _fmt_s(res.get("plain_s"))
            if "refused" in res:
                ours = f"refused: {res['refused']}"
                ratio = peak = err = mech = "—"
            else:
                ours = _fmt_s(res.get("private_s"))
                ratio = (f"{res['ratio']:.2f}× (≤{RATIO_TARGET:g}×: "
                         f"{_verdict(res['ratio'] <= RATIO_TARGET)})")
                if res.get("plain_same_s"):
                    ratio += (f"; {res['private_s'] / res['plain_same_s']:.2f}× plain with the "
                              f"same clamp ({_fmt_s(res['plain_same_s'])})")
                if "peak_mb" in mem:
                    peak = f"{mem['peak_mb']:.0f}"
                    if q.get("memory_target"):
                        peak += (f" (≤{MEMORY_TARGET_MB:.0f}: "
                                 f"{_verdict(mem['peak_mb'] <= MEMORY_TARGET_MB)})")
                else:
                    peak = mem.get("error", "—")
                e = res.get("median_rel_err")
                err = "—" if e is None else f"{e:.2g}"
                if e is not None and "rel_target" in q:
                    err += f" (≤{q['rel_target']:g}: {_verdict(e <= q['rel_target'])})"
                if e is not None and "group_target" in q:
                    err += (f" per group (≤{q['group_target']:.0%}: "
                            f"{_verdict(e <= q['group_target'])})")
                if "vs_laplace" in res:
                    err += (f"; ×{res['vs_laplace']:.2f} Laplace's abs. err (≤1.5: "
                            f"{_verdict(res['vs_laplace'] <= 1.5)})")
                mech = res.get("mechanism") or "—"
            peers = []
            for peer in ("smartnoise", "opendp"):
                status = r.get(f"{peer}_status")
                if not q.get("peers"):
                    peers.append("—")
                elif status:
                    peers.append(status)
                elif f"{peer}_error" in res:
                    peers.append(f"error: {res[peer + '_error']}")
                elif res.get(f"{peer}_s") is not None:
                    cell = f"{_fmt_s(res[peer + '_s'])} ({res[peer + '_s'] / res['plain_s']:.1f}×)"
                    pe = res.get(f"{peer}_median_rel_err")
                    if pe is not None:
                        cell += f", err {pe:.2g}"
                    peers.append(cell)
                else:
                    peers.append("—")
            lines.append("| " + " | ".join(_cell(c) for c in (
                q["label"], _fmt_rows(q, n), plain, ours, ratio, peak, err, mech, *peers)) + " |")
            for note in res.get("notes", []):
                notes.append(f"{q['label']} @ {n:.0e}: {note}")
            if mem.get("error") and "peak_mb" in mem:
                notes.append(f"{q['label']} @ {n:.0e}: memory run: {mem['error']}")
    return lines, notes


def summary(results, memory) -> list[str]:
    """One line per target of the issue: met / NOT met (or not measured in this run)."""
    def res(n, k):
        return results.get(n, {}).get("queries", {}).get(k)

    def ratio_ok(n, k):
        r = res(n, k)
        if r is None or "ratio" not in r:
            return None, "not measured"
        return r["ratio"] <= RATIO_TARGET, f"{r['ratio']:.2f}×"

    lines = []

    def add(what, ok, detail):
        verdict = "not measured" if ok is None else _verdict(ok)
        lines.append(f"* {what}: **{verdict}** ({detail})")

    for k in ("count", "sum", "avg"):
        ok, d = ratio_ok(10**7, k)
        add(f"{BY_KEY[k]['label']} over 10^7 rows ≤ {RATIO_TARGET:g}× plain DuckDB", ok, d)
    peaks = [memory.get((10**7, k), {}).get("peak_mb") for k in ("count", "sum", "avg")]
    if any(p is None for p in peaks):
        add(f"peak memory ≤ {MEMORY_TARGET_MB:.0f} MB (COUNT, SUM, AVG at 10^7)", None, "—")
    else:
        add(f"peak memory ≤ {MEMORY_TARGET_MB:.0f} MB (COUNT, SUM, AVG at 10^7)",
            max(peaks) <= MEMORY_TARGET_MB, f"max {max(peaks):.0f} MB")
    ok, d = ratio_ok(10**6, "join")
    add("people ⋈ visits COUNT at 10^6 people / 10^7 visits ≤ 3×", ok, d)
    for n, k in ((10**7, "city"), (10**6, "dept")):
        r = res(n, k)
        ok, d = ratio_ok(n, k)
        e = None if r is None else r.get("median_rel_err")
        both = None if ok is None or e is None else (ok and e <= BY_KEY[k]["group_target"])
        add(f"{BY_KEY[k]['label']} at {n:.0e}: ≤ 3× and median relative error per group ≤ 5 %",
            both, f"{d}, error {'—' if e is None else f'{e:.2g}'}")
    r = res(10**6, "count")
    e = None if r is None else r.get("median_rel_err")
    add("COUNT median relative error at 10^6 rows ≤ 1e-4 at ε = 1", None if e is None else
        e <= 1e-4, "—" if e is None else f"{e:.2g}")
    for n in sorted(results):
        r = res(n, "sum")
        v = None if r is None else r.get("vs_laplace")
        add(f"bounded SUM error ≤ 1.5× Laplace's at {n:.0e} rows", None if v is None else v <= 1.5,
            "—" if v is None else f"×{v:.2f}, {r.get('releases')} releases")
    best = [(k, res(10**7, k)["ratio"]) for k in ("count", "sum", "avg")
            if res(10**7, k) and "ratio" in res(10**7, k)]
    if best:
        add("(moonshot) COUNT, SUM, AVG over 10^7 rows ≤ 1.5×", all(x <= 1.5 for _, x in best),
            ", ".join(f"{k} {x:.2f}×" for k, x in best))
    return lines


class LoadSampler:
    """The machine's 1-minute load average, sampled every ``every`` seconds in a thread."""

    def __init__(self, every: float = 15.0):
        import threading

        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._every = every
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while True:
            try:
                self.samples.append((time.time(), os.getloadavg()[0]))
            except OSError:
                return
            if self._stop.wait(self._every):
                return

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def describe(self) -> str:
        if not self.samples:
            return "load average unavailable"
        loads = [x for _, x in self.samples]
        t0, t1 = (time.strftime("%H:%M", time.gmtime(t)) for t in (self.samples[0][0],
                                                                    self.samples[-1][0]))
        return (f"1-minute load average {min(loads):.1f} to {max(loads):.1f} (median "
                f"{statistics.median(loads):.1f}, {len(loads)} samples, {t0}–{t1} UTC) on "
                f"{os.cpu_count()} CPUs")


def git_version() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, text=True,
                              capture_output=True, check=False).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "provsql_dp"], cwd=REPO,
                               text=True, capture_output=True, check=False).stdout.strip()
        return head + (" (+ uncommitted changes in provsql_dp/)" if dirty else "")
    except OSError:
        return "unknown"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e6,1e7", help="comma-separated row counts (1e6,1e7)")
    ap.add_argument("--quick", action="store_true", help="10^5 rows only, fewer runs: a smoke test")
    ap.add_argument("--only", default=None,
                    help="comma-separated query keys: " + ",".join(BY_KEY))
    ap.add_argument("--repeats", type=int, default=None, help="timed rounds per query (5)")
    ap.add_argument("--releases", type=int, default=None, help="releases for accuracy (20)")
    ap.add_argument("--query-budget", type=float, default=None,
                    help="seconds of timed rounds per query before fewer rounds are run (900)")
    ap.add_argument("--accuracy-budget", type=float, default=None,
                    help="seconds of extra releases per query for accuracy (240)")
    ap.add_argument("--memory-timeout", type=float, default=None,
                    help="seconds per memory subprocess (900)")
    ap.add_argument("--no-memory", action="store_true", help="skip the memory subprocesses")
    ap.add_argument("--out", default=None,
                    help="JSON results (default benchmarks/out/single_table_<timestamp>.json)")
    ap.add_argument("--profile", default=None, metavar="KEY",
                    help="print a cProfile (top 15 cumulative) of one private query and exit")
    ap.add_argument("--smoke", action="store_true",
                    help="seconds: 2,000 rows, one round, 2 releases, one memory subprocess, "
                         "JSON to a temporary directory (CI); the peers run when installed")
    ap.add_argument("--child-timing", nargs=6, help=argparse.SUPPRESS)
    ap.add_argument("--child-memory", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    smoke_memory = None
    if args.smoke:
        import _smoke

        args.sizes, args.repeats, args.releases = "2000", 1, 2
        args.query_budget, args.accuracy_budget, args.memory_timeout = 5.0, 1.0, 60.0
        args.out = str(_smoke.out_dir() / "single_table.json")
        smoke_memory = next(iter(BY_KEY))  # the memory path, for one query

    if args.child_timing:
        n, keys, repeats, releases, qb, ab = args.child_timing
        print(json.dumps(run_timing(int(float(n)), keys.split(","), int(repeats), int(releases),
                                    float(qb), float(ab))))
        return
    if args.child_memory:
        n, key = args.child_memory
        print(json.dumps(run_memory(int(float(n)), key)))
        return

    sizes = [10**5] if args.quick else [int(float(s)) for s in args.sizes.split(",")]
    keys = args.only.split(",") if args.only else list(BY_KEY)
    for k in keys:
        if k not in BY_KEY:
            ap.error(f"unknown query {k!r}; known: {', '.join(BY_KEY)}")
    if args.profile:
        run_profile(sizes[0], args.profile)
        return
    repeats = args.repeats or (3 if args.quick else 5)
    releases = args.releases or (10 if args.quick else 20)
    qbudget = args.query_budget or (10 if args.quick else 900)
    abudget = args.accuracy_budget or (5 if args.quick else 240)
    mtimeout = args.memory_timeout or (60 if args.quick else 900)
    stamp = time.strftime("%Y%m%d_%H%M%S")
    out_path = Path(args.out) if args.out else REPO / "benchmarks" / "out" / f"single_table_{stamp}.json"

    version = git_version()
    print(f"provsql_dp single-table benchmark — commit {version}, ε = {EPSILON:g}, "
          f"{os.cpu_count()} CPUs, {repeats} interleaved rounds after one warm-up, "
          f"{releases} releases for accuracy", flush=True)
    results, memory = {}, {}
    load = LoadSampler()
    load.__enter__()
    for n in sizes:
        t = time.perf_counter()
        results[n] = _child(["--child-timing", str(n), ",".join(keys), str(repeats),
                             str(releases), str(qbudget), str(abudget)], timeout=None)
        print(f"[{n:.0e}] timing done in {time.perf_counter() - t:.0f} s", file=sys.stderr,
              flush=True)
        if args.no_memory:
            continue
        for k in keys if smoke_memory is None else [smoke_memory]:
            if not applicable(BY_KEY[k], n):
                continue
            if "refused" in results[n].get("queries", {}).get(k, {}):
                continue
            print(f"[{n:.0e}] memory {k} …", file=sys.stderr, flush=True)
            memory[(n, k)] = _child(["--child-memory", str(n), k], timeout=mtimeout)

    load.__exit__(None, None, None)
    lines, notes = render(results, memory, sizes, keys)
    targets = summary(results, memory)
    print()
    print("\n".join(lines))
    if notes:
        print("\nNotes:")
        for note in notes:
            print(f"* {note}")
    print("\nratio = median provsql_dp / median plain DuckDB, same process, interleaved; peak MB ="
          " resident high-water mark of a separate process while the private query runs (data"
          " included); SUM/AVG errors against the clamped truth; Laplace's abs. err = b·ln 2,"
          f" b = {UPPER - LOWER}/ε; peers: time (× plain), median rel. err.")
    for n in sizes:
        r = results[n]
        if "build_s" in r:
            print(f"build at {n:.0e} rows: {r['build_s']:.1f} s")
    print(f"machine load during the run: {load.describe()}")
    print("\nTargets:")
    print("\n".join(targets))
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps({
        "commit": version, "epsilon": EPSILON, "repeats": repeats, "releases": releases,
        "sizes": sizes, "timing": {str(n): r for n, r in results.items()},
        "memory": {f"{n}:{k}": m for (n, k), m in memory.items()},
        "table": lines, "notes": notes, "targets": targets, "load": load.describe(),
        "load_samples": load.samples}, indent=2, default=str))
    print(f"results: {out_path}")


if __name__ == "__main__":
    main()
