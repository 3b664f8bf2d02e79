"""Neighbour databases, an analyst-statement corpus and an outcome harness for the side-channel
suite (``test_side_channels.py``; DESIGN §8, "the side-channel rule").

The rule: once the planner accepts a private statement, everything an analyst observes — answer
or error, the error's class and text, the ε charged, the shape of the result — is a function of
the statement, the schema, the declarations and the budget only. So any two databases with the
same schema and declarations must give an analyst the same *outcome* for the same statement;
only the noisy values may differ.

The databases
-------------
``people`` (protected, one participant per row by its primary key), ``visits`` (protected BY
(pid) AS people: a visit belongs to the person it names), ``depts`` (public, for GROUP BY keys)
and a Blowfish policy on ``people.age``. The *base* database holds five ordinary people. Every
*plant* is a neighbour of the base: it adds one person (id 1000, and one visit of theirs) or
changes one person, holding a canary string and extreme values — a type's min/max, 0, -1, NULL,
NaN, ±inf, a 10k-character string, far dates, values whose products overflow.

Databases are named in-memory DuckDB databases (``:memory:sc_…``): the curator connection kept
in :class:`Database` keeps one alive, and analyst connections open the same database by name.

The harness
-----------
:func:`run_analyst` runs one statement as a fresh analyst (a user of its own with a fresh budget,
the noise seeded from Python) and returns an :class:`Outcome`: the observable facts that must
not depend on the data. :func:`differences` compares two outcomes; :func:`leaks` looks for
protected values in what an analyst saw. :class:`Harness` runs statements in worker processes
that each hold every database, so that a statement that hangs (an LP that never ends) becomes a
``Timeout`` outcome instead of a hung session.

:func:`corpus` generates the analyst statements: scalar functions and operators applied to edge
values in WHERE, join conditions, SUM arguments, GROUP BY over a public table, and the policy
routes (histograms, ranges, COUNT RANGES, COUNT CUMULATIVE, EXPLAIN PRIVACY).
"""

from __future__ import annotations

import hashlib
import itertools
import math
import os
import pickle
import re
import time
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import numpy as np

import provsql_dp

# ----------------------------------------------------------------------------------------------
# schema, base rows, plants

CANARY = "CANARY_7f3a"
LONG = CANARY + "x" * 10_000  # a 10k-character string
WEIRD = CANARY + "'(%_\\[{}*+?.|^$%d%s"  # regex, LIKE and format metacharacters

INT_MAX, INT_MIN = 2**31 - 1, -(2**31)
BIG_MAX, BIG_MIN = 2**63 - 1, -(2**63)
HUGE_MAX, HUGE_MIN = 2**127 - 1, -(2**127)
DEC_MAX = "999999999999999.999"  # DECIMAL(18,3)
DATE_MAX, DATE_MIN = "5881580-07-10", "-5877641-06-25"  # DuckDB's DATE range

SCHEMA = [
    """CREATE TABLE people(id INT PRIMARY KEY, name VARCHAR, salary BIGINT, age INT, dept INT,
           i INT, h HUGEINT, dec DECIMAL(18,3), x DOUBLE, born DATE)""",
    "CREATE TABLE visits(vid INT, pid INT, amount BIGINT, vday DATE, tag VARCHAR)",
    "CREATE TABLE depts(dept_id INT PRIMARY KEY, dname VARCHAR)",
    # owned along foreign keys: a stay belongs to its person (one hop, the key read from spid),
    # a charge to the person of its stay (two hops, resolved by a join; its FOREIGN KEY declared)
    "CREATE TABLE stays(sid INT PRIMARY KEY, spid INT, nights BIGINT)",
    "CREATE TABLE charges(csid INT REFERENCES stays(sid), fee BIGINT, note VARCHAR)",
    "INSERT INTO depts VALUES (1, 'eng'), (2, 'ops'), (3, 'hr')",
]

BASE_PEOPLE = [
    (1, "Alice", 50001, 34, 1, 3, 10, "1.500", 0.5, "1990-01-01"),
    (2, "Bob", 62000, 45, 2, -2, 20, "2.250", 1.5, "1980-05-05"),
    (3, "Carol", 71000, 29, 1, 7, 30, "3.000", 2.0, "1995-07-07"),
    (4, "Dave", 48000, 61, 3, 1, 40, "4.500", -1.0, "1963-03-03"),
    (5, "Eve", 90000, 52, 2, 5, 50, "5.750", 3.25, "1972-12-12"),
]
BASE_VISITS = [
    (1, 1, 10, "2020-01-01", "a"), (2, 1, 20, "2020-02-01", "b"), (3, 2, 5, "2021-01-01", "c"),
    (4, 3, 7, "2021-03-01", "d"), (5, 5, 1, "2022-01-01", "e"),
]

DECLARATIONS = [
    "PROTECT TABLE people",
    "PROTECT TABLE visits BY (pid) AS people",
    "PROTECT TABLE stays BY (spid) REFERENCES people (id)",
    "PROTECT TABLE charges REFERENCES stays",
    "CREATE POLICY age_line ON people (age) AS LINE DOMAIN [0, 100) WIDTH 10",
    # quantiles (MEDIAN / QUANTILE_*): a bounded δ policy on i, bounds on x
    "CREATE POLICY near_i ON people (i) AS DELTA 1 DOMAIN [-20, 20) WIDTH 1 BOUNDED",
    "SET BOUNDS ON people (x) BETWEEN -10 AND 10",
    # COUNT(DISTINCT name) over declared keys: the presence route (issue 28)
    "SET GROUP KEYS ON people (name) VALUES ('Alice', 'Bob', 'Zed')",
    "SET GROUP KEYS ON visits (tag) VALUES ('a', 'b', 'CANARY_7f3a')",  # owned rows: Δ = |keys|
]


def _lit(v) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    if isinstance(v, float):
        if math.isnan(v):
            return "'NaN'::DOUBLE"
        if math.isinf(v):
            return "'inf'::DOUBLE" if v > 0 else "'-inf'::DOUBLE"
        return repr(v)
    return str(v)


def _person(id_, name, salary, age, dept, i, h, dec, x, born) -> str:
    vals = [_lit(id_), _lit(name), _lit(salary), _lit(age), _lit(dept), _lit(i),
            "NULL" if h is None else f"CAST('{h}' AS HUGEINT)",
            "NULL" if dec is None else f"CAST('{dec}' AS DECIMAL(18,3))", _lit(x),
            "NULL" if born is None else f"CAST('{born}' AS DATE)"]
    return f"INSERT INTO people VALUES ({', '.join(vals)})"


def _visit(vid, pid, amount, vday, tag) -> str:
    return (f"INSERT INTO visits VALUES ({_lit(vid)}, {_lit(pid)}, {_lit(amount)}, "
            f"{'NULL' if vday is None else f'CAST({_lit(vday)} AS DATE)'}, {_lit(tag)})")


@dataclass(frozen=True)
class Plant:
    """One neighbour of the base database: the statements that plant the edge-case participant,
    the columns whose values it makes extreme (None: all of them), and the texts of the planted
    values an analyst must never see."""

    name: str
    what: str
    statements: tuple[str, ...]
    secrets: tuple[str, ...]
    columns: frozenset | None = None

    def triggers(self, sql: str) -> bool:
        """Whether ``sql`` reads a column this plant makes extreme."""
        return self.columns is None or bool(self.columns & columns_of(sql))


def _stay(sid, pid, amount, tag) -> tuple[str, str]:
    """A stay of person ``pid`` and its one charge (fee ``amount``, note ``tag``)."""
    return (f"INSERT INTO stays VALUES ({sid}, {pid}, {_lit(amount)})",
            f"INSERT INTO charges VALUES ({sid}, {_lit(amount)}, {_lit(tag)})")


def _extra(name, what, person, visit, secrets, columns=None) -> Plant:
    return Plant(name, what, (_person(1000, *person), _visit(1000, 1000, *visit),
                              *_stay(1000, 1000, visit[0], visit[2])),
                 tuple(s for s in secrets if s), None if columns is None else frozenset(columns))


_ORDINARY = (55555, 40, 2, 4, 60, "6.125")  # salary, age, dept, i, h, dec of a plain person

PLANTS: tuple[Plant, ...] = (
    _extra("max", "one more person holding every type's maximum",
           (CANARY, BIG_MAX, INT_MAX, INT_MAX, INT_MAX, HUGE_MAX, DEC_MAX, 1.7976931348623157e308,
            "9999-12-31"), (BIG_MAX, "9999-12-31", CANARY),
           (CANARY, str(HUGE_MAX), "9223372036854775807", "2147483647", DEC_MAX, "9999-12-31")),
    _extra("min", "one more person holding every type's minimum",
           (CANARY, BIG_MIN, INT_MIN, INT_MIN, INT_MIN, HUGE_MIN, "-" + DEC_MAX,
            -1.7976931348623157e308, "0001-01-01"), (BIG_MIN, "0001-01-01", CANARY),
           (CANARY, str(HUGE_MIN)[1:], "9223372036854775808", "2147483648", DEC_MAX, "0001-01-01")),
    _extra("zero", "one more person holding zeros, an empty name and 1970-01-01",
           ("", 0, 0, 0, 0, 0, "0", 0.0, "1970-01-01"), (0, "1970-01-01", ""), ("1970-01-01",)),
    _extra("null", "one more person whose every column but the key is NULL",
           (None, None, None, None, None, None, None, None, None), (None, None, None), ()),
    _extra("neg", "one more person holding -1 everywhere (age outside the policy's domain)",
           (CANARY + "-1", -1, -1, -1, -1, -1, "-1", -1.0, "1969-12-31"), (-1, "1969-12-31", CANARY),
           (CANARY, "1969-12-31")),
    _extra("mult", "one more person whose values overflow when multiplied (x*x, salary*salary, …)",
           (CANARY, 3037000500, 46341, 46341, 46341, 2**64, "999999999.999", 1e200, "2999-12-31"),
           (3037000500, "2999-12-31", CANARY),
           (CANARY, "3037000500", "46341", "18446744073709551616", "999999999.999", "2999-12-31")),
    Plant("changed", "Alice changed: salary 50000, i 0, x NaN, h max, a canary name",
          (("UPDATE people SET name = 'CANARY_7f3a', salary = 50000, i = 0, x = 'NaN'::DOUBLE, "
            "h = CAST('170141183460469231731687303715884105727' AS HUGEINT) WHERE id = 1"),
           "UPDATE visits SET amount = 0, tag = 'CANARY_7f3a' WHERE vid = 1"),
          (CANARY, str(HUGE_MAX))),
    _extra("nan", "one more person with x = NaN", (CANARY, *_ORDINARY, float("nan"), "1985-06-15"),
           (55555, "1985-06-15", CANARY), (CANARY, "55555", "1985-06-15"), {"x"}),
    _extra("inf", "one more person with x = +inf", (CANARY, *_ORDINARY, float("inf"), "1985-06-15"),
           (55555, "1985-06-15", CANARY), (CANARY, "55555", "1985-06-15"), {"x"}),
    _extra("ninf", "one more person with x = -inf", (CANARY, *_ORDINARY, float("-inf"), "1985-06-15"),
           (55555, "1985-06-15", CANARY), (CANARY, "55555", "1985-06-15"), {"x"}),
    _extra("long", "one more person with a 10k-character name and tag",
           (LONG, *_ORDINARY, 4.5, "1985-06-15"), (55555, "1985-06-15", LONG),
           (CANARY, "x" * 40, "55555", "1985-06-15"), {"name", "tag"}),
    _extra("punct", "one more person whose name and tag are regex/LIKE/format metacharacters",
           (WEIRD, *_ORDINARY, 4.5, "1985-06-15"), (55555, "1985-06-15", WEIRD),
           (CANARY, "55555", "1985-06-15"), {"name", "tag"}),
    _extra("fardate", "one more person born on DuckDB's last date, visiting on its first",
           (CANARY, *_ORDINARY, 4.5, DATE_MAX), (55555, DATE_MIN, CANARY),
           (CANARY, "55555", "5881580", "5877641"), {"born", "vday"}),
    _extra("infdate", "one more person born on date 'infinity', visiting on '-infinity'",
           (CANARY, *_ORDINARY, 4.5, "infinity"), (55555, "-infinity", CANARY),
           (CANARY, "55555"), {"born", "vday"}),
)

COLUMNS = ("name", "salary", "age", "dept", "i", "h", "dec", "x", "born",
           "vid", "pid", "amount", "vday", "tag", "nights", "fee", "note")
_COLUMN_RE = re.compile(r"\b(" + "|".join(COLUMNS) + r")\b", re.IGNORECASE)
_STRING_RE = re.compile(r"'(?:[^']|'')*'")


def columns_of(sql: str) -> set[str]:
    """The column names a statement mentions (outside string literals)."""
    return {m.lower() for m in _COLUMN_RE.findall(_STRING_RE.sub("''", sql))}


def plants_for(sql: str) -> tuple[str, ...]:
    """The plants whose extreme values ``sql`` reads."""
    return tuple(p.name for p in PLANTS if p.triggers(sql))


PLANT_NAMES = tuple(p.name for p in PLANTS)
PLANTS_BY_NAME = {p.name: p for p in PLANTS}

#: texts of the base data an analyst must never see either (long enough not to occur by chance)
BASE_SECRETS = tuple(
    {str(v) for row in BASE_PEOPLE for v in (row[1], row[2], row[9])}
    | {str(v) for row in BASE_VISITS for v in (row[3],)}
)


def secrets_of(db: str) -> tuple[str, ...]:
    """The protected texts of database ``db`` ("base" or a plant's name)."""
    return BASE_SECRETS + (PLANTS_BY_NAME[db].secrets if db != "base" else ())


_counter = itertools.count()


@dataclass
class Database:
    """A named in-memory database, kept alive by its curator connection."""

    name: str
    plant: Plant | None
    curator: object = field(repr=False)


def build_database(plant: Plant | None) -> Database:
    """The base database, or its neighbour with ``plant`` applied (data before declarations,
    as a curator would load it)."""
    name = f":memory:sc_{next(_counter)}_{plant.name if plant else 'base'}"
    cur = provsql_dp.connect(name)
    cur.autocommit = True
    for stmt in SCHEMA:
        cur.execute(stmt)
    for row in BASE_PEOPLE:
        cur.execute(_person(*row))
    for row in BASE_VISITS:
        cur.execute(_visit(*row))
    for vid, pid, amount, _, tag in BASE_VISITS:
        for stmt in _stay(vid, pid, amount, tag):
            cur.execute(stmt)
    for stmt in plant.statements if plant else ():
        cur.execute(stmt)
    for stmt in DECLARATIONS:
        cur.execute(stmt)
    return Database(name, plant, cur)


# ----------------------------------------------------------------------------------------------
# outcomes


#: result columns that carry released (noisy) values; every other column must be identical
NOISY_COLUMNS = {"count", "cumulative_count"}
#: the columns of an ``EXPLAIN PRIVACY … ESTIMATE ERROR`` row computed from its noisy release
#: (its note is compared with its numbers masked: :func:`_masked`)
ESTIMATE_COLUMNS = {"expected_rmse", "alpha"}


def _masked(v):
    """A released note's words: every number in it (a function of the noise) replaced by #."""
    return re.sub(r"\d[\d.e+-]*", "#", v) if isinstance(v, str) else _norm(v)


def _is_noisy(column: str) -> bool:
    return "(" in column or column.lower() in NOISY_COLUMNS


def _value_kind(v) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, (bool, np.bool_)):
        return "bool"
    if isinstance(v, (int, np.integer)):
        return "number"
    if isinstance(v, (float, np.floating)):
        return "number" if math.isfinite(v) else ("NaN" if math.isnan(v) else "inf")
    return type(v).__name__


def _norm(v):
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    return v


@dataclass(frozen=True)
class Outcome:
    """What an analyst observed for one statement."""

    kind: str                          # "answer", or the exception's class name
    pep249: bool                       # an answer, or a provsql_dp.Error
    message: str | None                # the error's text
    epsilon: Fraction | None           # ε charged (None: the ledger could not be read)
    columns: tuple[str, ...] | None    # description column names
    rows: int                          # number of rows
    keys: tuple = ()                   # the non-noisy cells, row by row
    kinds: tuple = ()                  # finite number / NaN / inf / NULL, per released cell
    seconds: float = 0.0               # wall time of execute + fetch (compared by ratio only)

    def short(self) -> str:
        if self.kind == "answer":
            return f"answer {list(self.columns or ())} × {self.rows} rows, ε charged {self.epsilon}"
        msg = (self.message or "").replace("\n", " ")
        if len(msg) > 160:
            msg = msg[:160] + "…"
        return f"{self.kind}({msg!r}), ε charged {self.epsilon}"


def budget_for(sql: str) -> str:
    """The fresh budget a corpus statement runs on: (ε, δ) for ``… DELTA δ``, ρ for ``WITH RHO``,
    else pure ε (every database gets the same one, so the unit is public)."""
    upper = sql.upper()
    if " DELTA " in upper:
        return "EPSILON 1000 DELTA 0.001"
    if "WITH RHO" in upper:
        return "RHO 1000"
    return "1000"


def run_analyst(db: Database, sql: str, user: str, *, budget: str | None = None,
                seed: int = 0) -> Outcome:
    """Run ``sql`` as a fresh analyst ``user`` (fresh budget set by the curator first) on ``db``."""
    budget = budget if budget is not None else budget_for(sql)
    db.curator.execute(f"SET PRIVACY BUDGET {budget} FOR USER '{user}'")
    an = provsql_dp.connect(db.name, role="analyst", user=user)
    an._rng = np.random.default_rng(seed)
    try:
        before = an.ledger.remaining()
        started = time.perf_counter()
        try:
            cur = an.execute(sql)
            desc = cur.description
            rows = cur.fetchall() if desc is not None else []
        except Exception as e:  # noqa: BLE001 - every escaping exception is an observation
            out = {"kind": type(e).__name__, "pep249": isinstance(e, provsql_dp.Error),
                   "message": str(e), "columns": None, "rows": 0}
        else:
            names = tuple(str(c[0]) for c in desc) if desc else ()
            estimate = "ESTIMATE ERROR" in sql.upper()  # its rows are released values
            centres = sql.lstrip().upper().startswith("KMEANS")  # every column but cluster
            noisy = [j for j, c in enumerate(names)
                     if _is_noisy(c) or estimate and c.lower() in ESTIMATE_COLUMNS
                     or centres and c != "cluster"]
            keys = tuple(tuple(_masked(r[j]) if estimate and names[j].lower() == "note"
                               else _norm(r[j]) for j in range(len(names)) if j not in noisy)
                         for r in rows)
            kinds = tuple(tuple(_value_kind(r[j]) for j in noisy) for r in rows)
            out = {"kind": "answer", "pep249": True, "message": None,
                   "columns": names if desc is not None else None, "rows": len(rows),
                   "keys": keys, "kinds": kinds}
        out["seconds"] = time.perf_counter() - started
        try:
            spent = before - an.ledger.remaining()
        except Exception:  # noqa: BLE001
            spent = None
        return Outcome(epsilon=spent, **out)
    finally:
        an.close()


def differences(a: Outcome, b: Outcome) -> list[str]:
    """What differs between two outcomes of one statement (empty: indistinguishable)."""
    out = []
    if a.kind != b.kind:
        out.append(f"outcome {a.kind} vs {b.kind}")
    elif a.message != b.message:
        out.append("error text differs")
    if a.epsilon != b.epsilon:
        out.append(f"ε charged {a.epsilon} vs {b.epsilon}")
    if a.kind == b.kind == "answer":
        if a.columns != b.columns:
            out.append(f"columns {a.columns} vs {b.columns}")
        if a.rows != b.rows:
            out.append(f"{a.rows} vs {b.rows} rows")
        elif a.keys != b.keys:
            out.append("group keys differ")
        if a.kinds != b.kinds:
            out.append(f"released values {a.kinds} vs {b.kinds}")
    return out


def seen_text(outcome: Outcome) -> str:
    """Everything textual an analyst saw: the error, the column names, the non-noisy cells."""
    return " ".join([outcome.message or "", *(outcome.columns or ()),
                     *(str(c) for row in outcome.keys for c in row)])


def leaks(outcome: Outcome, sql: str, secrets, public: str = "") -> list[str]:
    """Protected values found in what the analyst saw, other than texts the statement itself
    spells and texts in ``public`` (what the analyst saw on a database without that value: a
    text seen there too cannot come from it)."""
    seen = seen_text(outcome)
    return sorted({s if len(s) <= 40 else s[:40] + "…" for s in secrets
                   if len(s) >= 4 and s in seen and s not in sql and s not in public})


# ----------------------------------------------------------------------------------------------
# the harness: worker processes that hold the databases, so that a statement that hangs (an LP
# that never ends) is a recorded outcome, not a hung test session

TIMEOUT = 6.0  #: seconds one statement may take on a database of six people (~0.03 s expected)


def _worker(conn) -> None:  # pragma: no cover - runs in a child process
    dbs = {"base": build_database(None)}
    dbs.update((p.name, build_database(p)) for p in PLANTS)
    conn.send("ready")
    while True:
        job = conn.recv()
        if job is None:
            return
        db, sql, user, seed = job
        try:
            out = run_analyst(dbs[db], sql, user, seed=seed)
        except BaseException as e:  # noqa: BLE001 - the harness itself failed: report it
            out = Outcome(kind=f"HarnessError:{type(e).__name__}", pep249=False,
                          message=str(e), epsilon=None, columns=None, rows=0)
        conn.send(out)


class _Worker:
    def __init__(self, ctx):
        self.ctx = ctx
        self.proc = None
        self.conn = None
        self.job = None
        self.started = 0.0

    def ensure(self) -> None:
        if self.proc is not None and self.proc.is_alive():
            return
        parent, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_worker, args=(child,), daemon=True)
        self.proc.start()
        child.close()
        self.conn = parent
        if not parent.poll(120) or parent.recv() != "ready":
            raise RuntimeError("the side-channel worker did not start")

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.join(5)
        self.proc = self.conn = self.job = None

    def close(self) -> None:
        if self.proc is not None and self.proc.is_alive():
            try:
                self.conn.send(None)
                self.proc.join(5)
            except (OSError, EOFError):
                pass
        self.kill()


class Harness:
    """Runs statements as fresh analysts on the base database and every plant, on ``workers``
    child processes (each holds all the databases); a run longer than ``timeout`` seconds is
    recorded as a ``Timeout`` outcome and its worker replaced. Outcomes are cached per
    statement; with ``shared`` (a directory of this test run, e.g. beside the workers' pytest
    temporary directories), also in files there, which the other test processes of the run read
    instead of running the statement again."""

    def __init__(self, workers: int = 2, timeout: float = TIMEOUT, shared: Path | None = None):
        import multiprocessing as mp

        self.ctx = mp.get_context("spawn")
        self.timeout = timeout
        self.workers = [_Worker(self.ctx) for _ in range(workers)]
        self.cache: dict[str, dict[str, Outcome]] = {}
        self._users = itertools.count()
        self.shared = shared
        if shared is not None:
            shared.mkdir(parents=True, exist_ok=True)

    def _shared_file(self, sql: str) -> Path:
        return self.shared / f"{hashlib.sha256(sql.encode()).hexdigest()}.pickle"

    def _load(self, sql: str) -> None:
        """Adds the outcomes another process of the run stored for ``sql`` to the cache."""
        try:
            stored = pickle.loads(self._shared_file(sql).read_bytes())
        except FileNotFoundError:
            return
        entry = self.cache.setdefault(sql, {})
        for db, o in stored.items():
            entry.setdefault(db, o)

    def _store(self, sql: str) -> None:
        path = self._shared_file(sql)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(pickle.dumps(self.cache[sql]))
        os.replace(tmp, path)  # whole or absent for a reader

    def close(self) -> None:
        for w in self.workers:
            w.close()

    def run(self, sql: str, dbs=None, seed: int = 0) -> dict[str, Outcome]:
        """Outcomes of ``sql`` on each database in ``dbs`` (default: the base and every plant
        whose extreme values ``sql`` reads), as one fresh analyst user. After a timeout the
        statement's remaining runs are skipped (recorded as such)."""
        import time
        from multiprocessing.connection import wait

        if dbs is None:
            dbs = ("base",) + plants_for(sql)
        if self.shared is not None and not all(d in self.cache.get(sql, {}) for d in dbs):
            self._load(sql)
        if sql in self.cache and all(d in self.cache[sql] for d in dbs):
            return {d: self.cache[sql][d] for d in dbs}
        user = f"analyst_{next(self._users)}"
        pending = list(dbs)
        out: dict[str, Outcome] = {}
        timed_out = False
        while pending or any(w.job for w in self.workers):
            for w in self.workers:
                if w.job is None and pending and not timed_out:
                    w.ensure()
                    db = pending.pop(0)
                    w.conn.send((db, sql, user, seed))
                    w.job, w.started = db, time.monotonic()
            if timed_out and pending:
                for db in pending:
                    out[db] = Outcome(kind="Skipped", pep249=True, message="another run timed out",
                                      epsilon=None, columns=None, rows=0)
                pending = []
            busy = [w for w in self.workers if w.job is not None]
            if not busy:
                continue
            now = time.monotonic()
            left = min(w.started + self.timeout - now for w in busy)
            ready = wait([w.conn for w in busy], timeout=max(left, 0))
            for w in busy:
                if w.conn in ready:
                    try:
                        out[w.job] = w.conn.recv()
                    except (EOFError, OSError):
                        out[w.job] = Outcome(kind="Crash", pep249=False,
                                             message="the process running the statement died",
                                             epsilon=None, columns=None, rows=0)
                        w.kill()
                    else:
                        w.job = None
                elif time.monotonic() - w.started >= self.timeout:
                    out[w.job] = Outcome(kind="Timeout", pep249=True,
                                         message=f"no outcome within {self.timeout:g} s",
                                         epsilon=None, columns=None, rows=0)
                    w.kill()
                    timed_out = True
        self.cache.setdefault(sql, {}).update(out)
        if self.shared is not None:
            self._store(sql)
        return out


# ----------------------------------------------------------------------------------------------
# the corpus

EPS = "WITH EPSILON 0.1"

#: numeric columns of people, their edge literals, and a "zero here" shift for each plant
NUMERIC = {
    "i": ("2147483647", "(-2147483648)", "0", "-1"),
    "salary": ("9223372036854775807", "(-9223372036854775808)", "0", "-1"),
    "h": ("CAST('170141183460469231731687303715884105727' AS HUGEINT)", "0", "-1"),
    "dec": ("CAST('999999999999999.999' AS DECIMAL(18,3))", "0", "-1"),
    "x": ("'NaN'::DOUBLE", "'inf'::DOUBLE", "'-inf'::DOUBLE", "1e308", "0", "-1"),
}
NUMERIC_COLUMNS = tuple(NUMERIC)

#: numeric expressions of one column c (arithmetic, functions, casts), each compared with 0
NUMERIC_TEMPLATES = (
    "{c} + {hi}", "{c} * {c}", "{c} * {c} * {c} * {c}", "{c} / {c}", "1 / {c}", "1 // {c}",
    "1 // ({c} + 1)", "1 // ({c} - {hi})", "1 % {c}", "-{c}", "abs({c})", "sign({c})",
    "round({c}, 2)", "floor({c})", "ceil({c})", "sqrt({c})", "ln({c})", "log({c})", "exp({c})",
    "pow({c}, 2)", "pow(10, {c})", "least({c}, {hi})", "greatest({c}, {lo})", "CAST({c} AS INT)",
    "TRY_CAST({c} AS INT)", "CAST({c} AS DOUBLE) * 1e308", "length(CAST({c} AS VARCHAR))",
    "COALESCE(1 // {c}, 0)", "NULLIF({c}, 0) * 2", "CASE WHEN {c} = 0 THEN 0 ELSE 1 // {c} END",
)

#: string predicates over name (and the literals an analyst might use)
STRING_PREDICATES = (
    "error(name) IS NULL", "lower(name) = 'alice'", "upper(name) LIKE 'A%'",
    "length(name) > 3", "length(name) * 922337203685477 > 0",
    "CAST(length(name) AS INT) * 1000000 > 0", "substring(name, 1, 3) = 'Ali'",
    "substring(name, -9223372036854775808, 2) = 'x'", "substring(name, 2, 9223372036854775807) <> ''",
    "trim(name) = name", "concat(name, name) <> ''", "name || repeat('y', 10000) <> ''",
    "name LIKE '%e%'", "name ILIKE '%E%'", "name NOT LIKE 'A%'", "starts_with(name, 'A')",
    "contains(name, 'o')", "replace(name, 'e', repeat('z', 1000)) <> ''",
    "CAST(name AS INT) > 0", "CAST(name AS DOUBLE) > 0", "CAST(name AS DATE) > DATE '2000-01-01'",
    "TRY_CAST(name AS INT) IS NULL", "TRY_CAST(name AS DATE) IS NULL",
    "CAST(substring(name, 1, 1) AS INT) = 1", "name = ''", "name IS NULL", "name IS NOT NULL",
    "name IN ('', 'Alice', NULL)", "name BETWEEN 'A' AND 'M'",
    "COALESCE(name, 'none') <> 'none'", "NULLIF(name, '') IS NULL",
    "CASE WHEN name = '' THEN 1 // 0 ELSE 1 END = 1", "ascii(name) > 60",
    "CAST(ascii(name) AS INT) * 100000000 > 0", "ord(name) > 60", "left(name, 1) = 'A'",
)

#: date predicates over born
DATE_PREDICATES = (
    "date_part('year', born) > 1980", "extract(year FROM born) > 1980", "year(born) > 1980",
    "year(born) * 1000000 > 0", "CAST(year(born) AS INT) * 1000 > 0", "born + 1 > DATE '1980-01-01'",
    "born - 1 < DATE '2000-01-01'", "born + INTERVAL 1 DAY > DATE '1980-01-01'",
    "born + INTERVAL 10000 YEAR > DATE '1980-01-01'", "born - DATE '2000-01-01' > 0",
    "(born - DATE '2000-01-01') * 1000000 > 0", "date_diff('day', born, DATE '2000-01-01') > 0",
    "CAST(born AS VARCHAR) LIKE '19%'", "CAST(CAST(born AS VARCHAR) AS DATE) > DATE '1980-01-01'",
    "CAST(born AS TIMESTAMP) > TIMESTAMP '1980-01-01 00:00:00'", "born BETWEEN DATE '0001-01-01' AND DATE '9999-12-31'",
    "born + i > DATE '1980-01-01'", "born IS NULL", "born IN (DATE '1990-01-01', NULL)",
    "CAST(date_part('epoch', born) AS BIGINT) * 1000000 > 0",
)

#: boolean structure over risky parts
BOOLEAN_PREDICATES = (
    "i = 0 OR 1 // i > 0", "i <> 0 AND 1 // i > 0", "NOT (1 // i > 0)", "i IS NULL OR i * i > 0",
    "i BETWEEN -2147483648 AND 2147483647", "i BETWEEN 1 // i AND 10", "i IN (0, 2147483647, NULL)",
    "i NOT IN (1, 2)", "x IN ('NaN'::DOUBLE, 'inf'::DOUBLE)", "x BETWEEN '-inf'::DOUBLE AND 'inf'::DOUBLE",
    "x = x", "x <> x", "x IS NOT NULL AND x * x > 1e308", "salary IS DISTINCT FROM 50000",
    "(salary > 0) = (x > 0)", "NOT (salary * 2 > 0 OR salary * 2 < 0)",
    "h > 0 AND h * h > 0", "dec * dec > 0", "dec * 1000 > 0", "age < 18 OR age > 2147483646",
)

JOIN = "FROM people p JOIN visits v ON p.id = v.pid"

JOIN_PREDICATES = (
    "p.id = v.pid", "p.id = v.pid AND v.amount * p.salary > 0",
    "p.id = v.pid AND 1 // (v.amount - 1) > 0", "p.id = v.pid AND 1 // v.amount > 0",
    "p.id * p.i = v.pid * p.i", "p.id + p.i = v.pid + p.i", "CAST(p.name AS INT) = v.pid",
    "p.id = TRY_CAST(v.tag AS INT)", "p.id = v.pid AND v.vday + 1 > DATE '2000-01-01'",
    "p.id = v.pid AND lower(v.tag) LIKE '%x%'", "p.id = v.pid AND p.x / v.amount > 0",
    "p.id = v.pid AND error(v.tag) IS NULL", "p.id = v.pid AND CAST(v.tag AS INT) > 0",
    "p.id = v.pid AND v.amount * v.amount * v.amount > 0", "p.id = v.pid + 0 * v.amount",
    "p.id = v.pid AND length(v.tag) * 922337203685477 > 0",
    "p.id = v.pid AND year(v.vday) * 1000000 > 0", "p.id = COALESCE(v.pid, 1 // 0)",
    "p.id = v.pid AND p.born < v.vday", "p.name = v.tag",
)

SUM_ARGUMENTS = (
    "salary", "i", "age", "h", "dec", "x", "salary * salary", "salary * salary * salary * salary",
    "i * i", "h * h", "x * x", "dec * dec", "abs(salary)", "-salary", "CAST(h AS BIGINT)",
    "CAST(x AS BIGINT)", "CAST(name AS INT)", "TRY_CAST(name AS INT)", "length(name)",
    "1 // i", "1 // (salary - 50000)", "salary % i", "CASE WHEN x > 0 THEN x ELSE 0 END",
    "pow(10, age)", "exp(x)", "ln(x)", "sqrt(i)", "year(born)", "born - DATE '2000-01-01'",
    "COALESCE(x, 0)", "greatest(i, 0)", "1e308 * x", "h + 170141183460469231731687303715884105727",
)

GROUPED = "FROM people p JOIN depts d ON p.dept = d.dept_id"


def _numeric_where() -> list[tuple[str, str]]:
    out = []
    for c, lits in NUMERIC.items():
        hi, lo = lits[0], lits[1]
        for t in NUMERIC_TEMPLATES:
            expr = t.format(c=c, hi=hi, lo=lo)
            out.append(("where-numeric", f"SELECT COUNT(*) FROM people WHERE {expr} > 0 {EPS}"))
    return out


def corpus() -> list[tuple[str, str]]:
    """(category, statement) pairs: analyst statements over the neighbour databases."""
    out: list[tuple[str, str]] = []
    out += [("quantile", f"{q} {EPS}") for q in (
        "SELECT MEDIAN(i) FROM people", "SELECT QUANTILE_CONT(i, 0.9) FROM people",
        "SELECT QUANTILE_DISC(x, 0.25) FROM people", "SELECT MEDIAN(x) FROM people",
        "SELECT MEDIAN(salary) FROM people", "SELECT MEDIAN(h) FROM people",
        "SELECT MEDIAN(i) FROM people WHERE x > 0")]
    out += [("quantile", "EXPLAIN PRIVACY SELECT MEDIAN(i) FROM people WITH ACCURACY 0.5"),
            ("quantile", "SELECT QUANTILE_CONT(x, 0.5) FROM people WITH ACCURACY 2")]
    # issue 28: variance, presence, SUM of a proved range, FILTER (WHERE …)
    out += [("aggregates", f"{q} {EPS}") for q in (
        "SELECT VAR_POP(x) FROM people", "SELECT STDDEV(x) FROM people WHERE 1 // i > 0",
        "SELECT VAR_SAMP(x) FROM people WHERE CAST(name AS INT) > 0",
        "SELECT STDDEV_SAMP(salary) FROM people",  # no bounds: refused alike everywhere
        "SELECT COUNT(DISTINCT name) FROM people WHERE 1 // i > 0",
        "SELECT COUNT(DISTINCT tag) FROM visits", "SELECT COUNT(DISTINCT tag) FROM visits "
        "WHERE 1 // amount > 0",
        "SELECT SUM(CASE WHEN x > 0 THEN 1 ELSE 0 END) FROM people",
        "SELECT SUM((name = 'Bob')::INT) FROM people",
        "SELECT SUM(LEAST(GREATEST(salary, 0), 100000)) FROM people",
        "SELECT SUM(x * 2 + 1) FROM people", "SELECT SUM(x / (i * 0 + 2)) FROM people",
        "SELECT COUNT(*) FILTER (WHERE 1 // i > 0) FROM people",
        "SELECT MEDIAN(x) FILTER (WHERE 1 // i > 0) FROM people",
        "SELECT STDDEV_POP(x) FILTER (WHERE CAST(name AS INT) > 0) FROM people",
        "SELECT COUNT(*) FILTER (WHERE x > 0), SUM(x) FILTER (WHERE CAST(name AS INT) > 0) "
        "FROM people")]
    # session 15: keys the statement lists (a CASE of constants, a predicate, a function of a
    # bounded step) over edge values, DuckDB's shorthands, PostgreSQL's ordered-set quantile
    out += [("listed-keys", f"{q} {EPS}") for q in (
        "SELECT CASE WHEN x > 0 THEN 'pos' WHEN x < 0 THEN 'neg' END AS s, COUNT(*) FROM people "
        "GROUP BY 1",
        "SELECT x > 1 AS big, SUM(x) FROM people GROUP BY 1",
        "SELECT CASE WHEN 1 // i > 0 THEN 1 ELSE 2 END, COUNT(*) FROM people GROUP BY 1",
        "SELECT FLOOR(x / 5) * 5 AS b, COUNT(*) FROM people GROUP BY 1 ORDER BY ALL",
        "SELECT d.dname, count_if(p.x > 0) FROM people p JOIN depts d ON p.dept = d.dept_id "
        "GROUP BY ALL",
        "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x DESC) FROM people")]
    out += [("aggregates", "EXPLAIN PRIVACY SELECT STDDEV(x) FROM people WITH EPSILON 1"),
            ("aggregates", "EXPLAIN PRIVACY SELECT COUNT(DISTINCT name) FROM people "
                           "WITH EPSILON 1")]
    out += _numeric_where()
    out += [("where-string", f"SELECT COUNT(*) FROM people WHERE {p} {EPS}") for p in STRING_PREDICATES]
    out += [("where-date", f"SELECT COUNT(*) FROM people WHERE {p} {EPS}") for p in DATE_PREDICATES]
    out += [("where-boolean", f"SELECT COUNT(*) FROM people WHERE {p} {EPS}") for p in BOOLEAN_PREDICATES]
    out += [("join", f"SELECT COUNT(*) FROM people p JOIN visits v ON {p} {EPS}") for p in JOIN_PREDICATES]
    out += [("join", f"SELECT SUM(v.amount * p.salary) {JOIN} {EPS}"),
            ("join", f"SELECT SUM(v.amount) {JOIN} WHERE p.x > 0 {EPS}"),
            ("join", f"SELECT COUNT(DISTINCT p.id) {JOIN} WHERE 1 // p.i > 0 {EPS}"),
            ("join", f"SELECT COUNT(*) FROM people a JOIN people b ON a.id = b.id + 0 * b.salary * a.salary {EPS}")]
    out += [("sum", f"SELECT SUM({a}) FROM people {EPS}") for a in SUM_ARGUMENTS]
    out += [("sum", f"SELECT SUM(salary) FROM people {EPS} OPTIONS (theta = 100000)"),
            ("sum", f"SELECT SUM(h) FROM people {EPS} OPTIONS (theta = 10)"),
            ("sum", f"SELECT SUM(x) FROM people {EPS} OPTIONS (theta = 1)"),
            ("count", f"SELECT COUNT(name) FROM people {EPS}"),
            ("count", f"SELECT COUNT(1 // i) FROM people {EPS}"),
            ("count", f"SELECT COUNT(DISTINCT name) FROM people {EPS}"),
            ("count", f"SELECT COUNT(DISTINCT x) FROM people {EPS}"),
            ("count", f"SELECT COUNT(DISTINCT CAST(name AS INT)) FROM people {EPS}"),
            ("count", f"SELECT COUNT(*) FROM (SELECT DISTINCT salary * salary AS s FROM people) t {EPS}"),
            ("count", f"SELECT COUNT(*) FROM (SELECT id FROM people WHERE x > 0 UNION SELECT pid FROM visits WHERE 1 // amount > 0) u {EPS}")]
    # GROUP BY keys over the public depts table
    grouped_preds = ("TRUE", "1 // p.i > 0", "CAST(p.name AS INT) > 0", "p.salary * p.salary > 0",
                     "error(p.name) IS NULL", "p.x * 2 > 0", "year(p.born) > 1980",
                     "length(p.name) > 4")
    out += [("group-by", f"SELECT d.dname, COUNT(*) {GROUPED} WHERE {p} GROUP BY d.dname {EPS}")
            for p in grouped_preds]
    out += [("group-by", f"SELECT d.dname, SUM({a}) {GROUPED} GROUP BY d.dname {EPS}")
            for a in ("p.salary", "p.h", "p.x", "p.salary * p.salary", "1 // p.i", "p.dec * p.dec")]
    out += [("group-by", f"SELECT d.dname, COUNT(*) FROM people p JOIN depts d ON {on} GROUP BY d.dname {EPS}")
            for on in ("p.dept + 1 = d.dept_id + 1", "p.dept * 1000 = d.dept_id * 1000",
                       "CAST(p.name AS INT) = d.dept_id", "p.dept = d.dept_id AND p.x > 0",
                       "1 // (p.dept - 2) = d.dept_id")]
    out += [("group-by", f"SELECT d.dname, d.dept_id, COUNT(*) {GROUPED} GROUP BY d.dname, d.dept_id {EPS}"),
            ("group-by", f"SELECT d.dname, COUNT(*) {GROUPED} JOIN visits v ON v.pid = p.id GROUP BY d.dname {EPS}")]
    # the policy routes
    hist_preds = ("", "WHERE 1 // i > 0", "WHERE CAST(name AS INT) > 0", "WHERE error(name) IS NULL",
                  "WHERE x * x > 0", "WHERE salary * salary > 0", "WHERE age * age > 0",
                  "WHERE age BETWEEN 20 AND 39", "WHERE year(born) > 1980", "WHERE name LIKE 'A%'")
    out += [("policy-histogram", f"SELECT age, COUNT(*) FROM people {w} GROUP BY age {EPS}") for w in hist_preds]
    out += [("policy-range", f"SELECT COUNT(*) FROM people WHERE {w} {EPS}") for w in (
        "age BETWEEN 20 AND 39", "age < 2147483647", "age >= -2147483648 AND age < 50",
        "age BETWEEN 20 AND 39 AND 1 // i > 0", "age >= 30 AND CAST(name AS INT) > 0")]
    ranges = "age BETWEEN 20 AND 39, age < 20, age >= 90"
    out += [("policy-ranges", f"COUNT RANGES ({ranges}) FROM people {w} {EPS}") for w in (
        "", "WHERE 1 // i > 0", "WHERE CAST(name AS INT) > 0", "WHERE salary * salary > 0",
        "WHERE x * 2 > 0")]
    out += [("policy-ranges", f"COUNT RANGES (age < 30 AND 1 // i > 0, age >= 30) FROM people {EPS}"),
            ("policy-ranges", f"COUNT RANGES (age * age < 900, age >= 30) FROM people {EPS}")]
    out += [("policy-cumulative", f"COUNT CUMULATIVE age FROM people {w} {EPS}") for w in (
        "", "WHERE 1 // i > 0", "WHERE CAST(name AS INT) > 0", "WHERE error(name) IS NULL",
        "WHERE x * x > 0")]
    out += [("explain-privacy", f"EXPLAIN PRIVACY {q}") for q in (
        "SELECT age, COUNT(*) FROM people GROUP BY age WITH ACCURACY 10",
        "SELECT age, COUNT(*) FROM people WHERE 1 // i > 0 GROUP BY age WITH EPSILON 0.5",
        "SELECT COUNT(*) FROM people WHERE CAST(name AS INT) > 0 WITH EPSILON 0.5",
        "SELECT COUNT(*) FROM people WHERE error(name) IS NULL WITH EPSILON 0.5",
        "SELECT SUM(salary * salary) FROM people WITH EPSILON 0.5",
        "COUNT CUMULATIVE age FROM people WHERE x * x > 0 WITH ACCURACY 10 CONFIDENCE 0.9",
        f"COUNT RANGES ({ranges}) FROM people WITH EPSILON 0.5",
        "SELECT d.dname, COUNT(*) FROM people p JOIN depts d ON p.dept = d.dept_id GROUP BY d.dname WITH EPSILON 0.5")]
    # the session default ε instead of WITH EPSILON
    out += [("session-epsilon", f"SET PRIVACY EPSILON 0.1; SELECT COUNT(*) FROM people WHERE {p}")
            for p in ("1 // i > 0", "CAST(name AS INT) > 0", "error(name) IS NULL", "x * x > 1")]
    out += [("session-epsilon", "SET PRIVACY EPSILON 0.1; SELECT SUM(salary * salary * salary) FROM people")]
    # more functions an analyst might reach for (accepted ones must be total; the rest refused
    # identically), DISTINCT over extreme values, self-joins, extreme OPTIONS and ε
    out += [("misc", f"SELECT COUNT(*) FROM people WHERE {p} {EPS}") for p in (
        "regexp_matches(name, 'A.*')", "regexp_matches('abc', name)", "'abc' LIKE name",
        "name SIMILAR TO 'A.*'", "name GLOB 'A*'", "strftime(born, '%Y') = '1990'",
        "strftime(born, name) = '1990'", "date_trunc('month', born) > DATE '2000-01-01'",
        "make_date(i, 1, 1) > DATE '2000-01-01'", "md5(name) > 'a'", "hash(name) > 0",
        "printf('%d', i) = '1'", "repeat(name, i) <> ''", "lpad(name, i, 'x') <> ''",
        "name[1] = 'A'", "CAST(x AS DECIMAL(4,2)) > 0", "CAST(dec AS DECIMAL(4,2)) > 0",
        "CAST(salary AS SMALLINT) > 0", "CAST(i AS UTINYINT) > 0", "CAST(name AS BOOLEAN)",
        "CAST(born AS TIMESTAMP) > TIMESTAMP '2000-01-01 00:00:00'", "CAST(name AS BLOB) IS NOT NULL",
        "log(i, x) > 0", "i / 0 > 0", "CAST(CAST(i AS VARCHAR) AS INT) > 0", "TRY(1 // i) > 0",
        "CASE WHEN i > 0 THEN error('boom') ELSE 1 END = 1", "id IN (1, 2, 1000)", "id = 1000")]
    out += [("misc", sql) for sql in (
        f"SELECT COUNT(DISTINCT born) FROM people {EPS}",
        f"SELECT COUNT(DISTINCT v.vday) {JOIN} {EPS}",
        f"SELECT COUNT(DISTINCT h) FROM people {EPS}",
        f"SELECT COUNT(*) FROM people a JOIN people b ON a.name = b.name {EPS}",
        f"SELECT COUNT(*) FROM people a JOIN people b ON a.x = b.x {EPS}",
        f"SELECT COUNT(*) FROM people a JOIN people b ON a.born = b.born {EPS}",
        f"SELECT COUNT(*), SUM(salary) FROM people {EPS}",
        f"SELECT SUM(i) FROM people {EPS} OPTIONS (theta = 1e308)",
        f"SELECT SUM(x) FROM people {EPS} OPTIONS (theta = 1e-300)",
        f"SELECT SUM(salary) FROM people {EPS} OPTIONS (theta = 1e-300)",
        "SELECT SUM(h) FROM people WITH EPSILON 1e-300",
        "SELECT COUNT(*) FROM people WITH EPSILON 1e308",
        "SELECT COUNT(*) FROM people WITH EPSILON 0.000001",
        f"SELECT AVG(x) FROM people {EPS}")]
    out += _foreign_owned()
    out += _owner_local()
    out += _recursive_choice()
    # post-processing of released values (issue 28): ORDER BY, LIMIT, HAVING, arithmetic
    g = f"{GROUPED} GROUP BY d.dname"
    out += [("post-processing", sql) for sql in (
        f"SELECT d.dname, COUNT(*) AS n {g} ORDER BY n DESC LIMIT 2 {EPS}",
        f"SELECT d.dname, COUNT(*) {g} HAVING COUNT(*) > 1 {EPS}",
        f"SELECT d.dname {g} HAVING COUNT(*) > 1 ORDER BY d.dname {EPS}",
        f"SELECT d.dname, SUM(p.salary) / COUNT(*) AS r {g} ORDER BY r DESC {EPS}",
        f"SELECT d.dname, 1 // COUNT(*) AS q {g} HAVING 1 // COUNT(*) > 0 ORDER BY q {EPS}",
        f"SELECT d.dname, COUNT(*) {g} WHERE 1 // p.i > 0 ORDER BY 2 LIMIT 1 OFFSET 1 {EPS}"
        .replace(f" GROUP BY d.dname WHERE 1 // p.i > 0", " WHERE 1 // p.i > 0 GROUP BY d.dname"),
        f"SELECT ROUND(COUNT(*), -1), -SUM(p.salary) {GROUPED} {EPS}",
        f"SELECT upper(d.dname), COUNT(*) * 2 AS twice {g} ORDER BY twice {EPS}",
        f"SELECT COUNT(*) FROM people WHERE CAST(name AS INT) > 0 LIMIT 1 {EPS}",
        f"SELECT d.dname, COUNT(*) {g} HAVING p.name > 'a' {EPS}",
        f"SELECT d.dname, COUNT(*) {g} LIMIT d.dname {EPS}",
        f"EXPLAIN PRIVACY SELECT d.dname, SUM(p.salary) / COUNT(*) AS r {g} ORDER BY r LIMIT 1 "
        "WITH EPSILON 0.5")]
    # semi-joins (IN / EXISTS), constants as public relations, and the non-monotone refusals
    out += [("semi-join", f"{sql} {EPS}") for sql in (
        "SELECT COUNT(*) FROM people WHERE id IN (SELECT pid FROM visits WHERE 1 // amount > 0)",
        "SELECT COUNT(*) FROM people p WHERE EXISTS (SELECT 1 FROM visits v WHERE v.pid = p.id "
        "AND CAST(v.tag AS INT) > 0)",
        "SELECT COUNT(*) FROM visits WHERE pid IN (SELECT id FROM people WHERE error(name) IS NULL)",
        "SELECT COUNT(*) FROM people WHERE dept IN (SELECT dept_id FROM depts WHERE dname = 'eng')",
        "SELECT COUNT(*) FROM people WHERE id IN (SELECT x FROM (VALUES (1), (1000)) v(x))",
        "SELECT SUM(salary) FROM people p WHERE EXISTS (SELECT * FROM visits v WHERE v.pid = p.id "
        "AND v.amount * v.amount > 0)",
        "SELECT COUNT(*) FROM people WHERE NOT EXISTS (SELECT 1 FROM visits WHERE pid = id)",
        "SELECT COUNT(*) FROM people WHERE id NOT IN (SELECT pid FROM visits)",
        "SELECT COUNT(*) FROM (SELECT id FROM people EXCEPT SELECT pid FROM visits) t",
        f"SELECT d.dname, COUNT(*) AS n {GROUPED} WHERE p.id IN (SELECT pid FROM visits) "
        "GROUP BY d.dname ORDER BY n DESC",
        # GROUP BY … HAVING below the top: one participant per group, or refused
        "SELECT COUNT(*) FROM people WHERE id IN (SELECT pid FROM visits GROUP BY pid "
        "HAVING SUM(amount * amount) > 10 AND MAX(CAST(tag AS INT)) IS NULL)",
        "SELECT COUNT(*) FROM visits WHERE tag IN (SELECT tag FROM visits GROUP BY tag "
        "HAVING COUNT(*) > 1)")]
    out += _beyond_pure()
    out += _sql_leftovers()
    out += _proved_keys()
    out += _public_groups()
    out += _groups_l1()
    out += _aggregates_l1()
    out += _red_team_h49()
    out += _hardening_h55()
    out += _red_team_h63()
    out += _red_team_h94()
    out += _analyst_kinds()
    seen, unique = set(), []
    for cat, sql in out:
        if sql not in seen:
            seen.add(sql)
            unique.append((cat, sql))
    return unique


def _sql_leftovers() -> list[tuple[str, str]]:
    """Issue 28's leftovers: ESTIMATE ERROR (charged; its expected_rmse and alpha are released
    values, compared as noisy, its note by its words — the route, strategy, groups, ε and
    confidence must not move, nor a refusal, nor the charge), EXPLAIN PRIVACY … DELTA with post-processing, SEMI/ANTI
    JOIN in FROM, and μ out of its range."""
    est = "ESTIMATE ERROR WITH EPSILON 0.5"
    out = [("estimate-error", f"EXPLAIN PRIVACY {q} {est}") for q in (
        "SELECT COUNT(*) FROM visits WITH EPSILON 1",
        "SELECT SUM(amount) FROM visits WITH EPSILON 1 OPTIONS (lower = 0, upper = 100)",
        "SELECT COUNT(*) FROM visits WHERE 1 // amount > 0 WITH EPSILON 1",
        "SELECT COUNT(*) FROM visits WHERE CAST(tag AS INT) > 0 WITH EPSILON 1",
        f"SELECT SUM(v.amount * p.x) {JOIN} WITH EPSILON 1",
        f"SELECT COUNT(*) {JOIN} WHERE p.salary * p.salary > 0 WITH EPSILON 1",
        f"SELECT d.dname, COUNT(*) {GROUPED} JOIN visits v ON v.pid = p.id GROUP BY d.dname "
        "WITH EPSILON 1",
        "SELECT COUNT(*) FROM visits a JOIN visits b ON a.vday = b.vday AND a.vid < b.vid "
        "WITH EPSILON 1",
        # refused alike everywhere, nothing charged: Laplace route, quantile, μ out of range
        "SELECT COUNT(*) FROM people WHERE 1 // i > 0 WITH EPSILON 1",
        "SELECT MEDIAN(i) FROM people WITH EPSILON 1",
        "SELECT COUNT(*) FROM visits WITH EPSILON 1 OPTIONS (mu = 1e15)",
        f"SELECT d.dname, COUNT(*) {GROUPED} JOIN visits v ON v.pid = p.id GROUP BY d.dname "
        "WITH EPSILON 1 OPTIONS (max_groups = 1)")]
    out.append(("estimate-error", f"EXPLAIN PRIVACY SELECT COUNT(*) FROM visits WITH EPSILON 1 "
                                  "ESTIMATE ERROR WITH EPSILON 0.5 CONFIDENCE 0.5"))
    ps = "WITH EPSILON 1 DELTA 1e-6"
    out += [("explain-delta-post", sql) for sql in (
        f"EXPLAIN PRIVACY SELECT d.dname, COUNT(*) AS n {GROUPED} WHERE 1 // p.i > 0 GROUP BY "
        f"d.dname ORDER BY n DESC LIMIT 2 {ps}",
        f"SELECT d.dname, COUNT(*) AS n {GROUPED} WHERE 1 // p.i > 0 GROUP BY d.dname "
        f"ORDER BY n DESC LIMIT 2 {ps}",
        f"EXPLAIN PRIVACY SELECT SUM(x) / COUNT(*) AS m FROM people WHERE CAST(name AS INT) > 0 "
        f"{ps} OPTIONS (lower = 0, upper = 10)",
        f"EXPLAIN PRIVACY SELECT name || '' AS g, COUNT(*) AS n FROM people GROUP BY 1 "
        f"HAVING COUNT(*) > 2 ORDER BY n {PS}",
        "EXPLAIN PRIVACY SELECT COUNT(*) * 2 FROM people WHERE 1 // i > 0 WITH RHO 0.1")]
    out += [("from-semijoin", f"{sql} {EPS}") for sql in (
        "SELECT COUNT(*) FROM people p SEMI JOIN visits v ON v.pid = p.id AND 1 // v.amount > 0",
        "SELECT COUNT(*) FROM people p ANTI JOIN visits v ON v.pid = p.id AND CAST(v.tag AS INT) > 0",
        "SELECT SUM(v.amount) FROM visits v SEMI JOIN people p ON p.id = v.pid AND p.x * 2 > 0",
        "SELECT COUNT(*) FROM people p ANTI JOIN visits v ON v.amount = p.salary",  # refused
        "SELECT COUNT(*) FROM people p SEMI JOIN depts d ON d.dept_id = 1 // (p.dept - 2)",
        "SELECT COUNT(*) FROM people p ANTI JOIN depts d USING (dname)",
        "SELECT COUNT(*) FROM charges c SEMI JOIN stays s ON c.csid = s.sid AND s.nights * s.nights > 0")]
    out += [("mu-range", f"SELECT SUM(amount) FROM visits {EPS} OPTIONS (lower = 0, upper = 100, "
                         f"mu = {mu})") for mu in ("1e15", "36", "5")]
    # issue 28 item 4: the peers' forms (a quantile or variance beside other aggregates, charged
    # once; constant subqueries; the statement's clock; APPROX_COUNT_DISTINCT; MIN/MAX as a
    # low/high quantile). Ranks 0, 5, 10 run in the default sample
    out += [("peer-forms", q) for q in (
        f"SELECT COUNT(*), AVG(x), STDDEV(x), MEDIAN(x) FROM people WHERE 1 // i > 0 {EPS}",
        f"SELECT COUNT(*) FROM people WHERE x > (SELECT 2 * 3) AND born < CURRENT_DATE {EPS}",
        f"SELECT approx_count_distinct(name) FROM people WHERE CAST(name AS INT) > 0 {EPS}",
        f"SELECT MIN(x), MAX(x) FROM people WHERE x * x > 0 {EPS}",
        f"SELECT COUNT(*) FROM people WHERE x > (SELECT MAX(x) FROM people) {EPS}",  # refused
        # (the WHERE spells the declared keys, public: the harness then knows them as such)
        f"SELECT name, COUNT(*), STDDEV(x), MEDIAN(x) FROM people WHERE name IN ('Alice', "
        f"'Bob', 'Zed') GROUP BY name {EPS}",
        f"SELECT COUNT(*), STDDEV(salary) FROM people {EPS}",  # no bounds: refused alike
        "EXPLAIN PRIVACY SELECT COUNT(*), STDDEV(x), MEDIAN(x) FROM people WITH EPSILON 1",
        f"SELECT COUNT(*) FROM people WHERE CAST(born AS TIMESTAMP) < NOW() AND 1 // i > 0 {EPS}",
        "SELECT COUNT(*), MEDIAN(x) FROM people WITH EPSILON 1 DELTA 1e-6",  # refused
        f"SELECT COUNT(*) AS n, STDDEV(x) * 2 AS s FROM people WHERE CAST(name AS INT) > 0 "
        f"HAVING COUNT(*) > 0 ORDER BY s {EPS}",
        f"SELECT MEDIAN(i), COUNT(*), MIN(x) FROM people {EPS}")]
    return out


def _proved_keys() -> list[tuple[str, str]]:
    """GROUP BY keys whose values the statement bounds (``sql.key_domain``: pure ε, every group
    released, rows outside dropped), their near-misses, a statement with nothing to protect
    and a comparison with an aggregate subquery (TPC-H Q8, Q11 and Q20's shapes)."""
    born = "born BETWEEN DATE '1960-01-01' AND DATE '1999-12-31'"
    return [("proved-keys", f"{sql} {EPS}") for sql in (
        f"SELECT year(born) AS y, COUNT(*) FROM people WHERE {born} GROUP BY 1",
        f"SELECT EXTRACT(year FROM born) AS y, SUM(CASE WHEN x > 0 THEN 1 ELSE 0 END) / COUNT(*) "
        f"AS share FROM people WHERE {born} AND 1 // i > 0 GROUP BY 1 ORDER BY y",
        # its months start where the statement does: the key column, named m since the answer
        # follows the select list (it was "date_trunc(…)", read as noisy), shows them, and a
        # month start the statement does not spell would read as a visit day seen (2020-02-01)
        "SELECT date_trunc('month', vday) AS m, COUNT(*) FROM visits WHERE vday >= DATE "
        "'2020-02-01' AND vday < DATE '2020-02-01' + INTERVAL '2' MONTH GROUP BY m",
        "SELECT FLOOR(x / 10) AS b, SUM(salary) FROM people WHERE x >= -100 AND x < 100 "
        "GROUP BY 1 OPTIONS (lower = 0, upper = 100000)",
        "SELECT ROUND(dec, -1) AS b, COUNT(*) FROM people WHERE dec BETWEEN 0 AND 100 GROUP BY 1",
        "SELECT i % 3 AS r, COUNT(*) FROM people WHERE i BETWEEN -5 AND 5 GROUP BY 1",
        "SELECT 100 // i AS r, COUNT(*) FROM people WHERE i BETWEEN -5 AND 5 GROUP BY 1",
        "SELECT year(born) AS y, COUNT(*) FROM people WHERE born > DATE '1990-01-01' GROUP BY 1",
        "SELECT FLOOR(salary / 1000) AS b, COUNT(*) FROM people GROUP BY 1",
        "SELECT dname, COUNT(*) FROM depts GROUP BY dname HAVING COUNT(*) > "
        "(SELECT COUNT(*) FROM depts)",
        "SELECT COUNT(*) FROM people p WHERE p.salary > (SELECT SUM(amount) FROM visits v "
        "WHERE v.pid = p.id)")]


def _public_groups() -> list[tuple[str, str]]:
    """GROUP BY a public column narrowed by the statement's public conditions
    (``sql/public_groups.py``), and conditions that must not narrow it (a protected column, a
    subquery's side)."""
    return [("public-groups", f"{sql} {EPS}") for sql in (
        f"SELECT d.dname, COUNT(*) {GROUPED} WHERE d.dname <> 'hr' GROUP BY d.dname",
        f"SELECT d.dname, COUNT(*) {GROUPED} WHERE d.dept_id < 3 AND p.age > 30 GROUP BY d.dname",
        f"SELECT d.dname, COUNT(*) {GROUPED} WHERE p.age > d.dept_id GROUP BY d.dname",
        f"SELECT d.dname, COUNT(*) {GROUPED} WHERE 1 // (d.dept_id - 1) > 0 GROUP BY d.dname",
        f"SELECT d.dname, COUNT(*) {GROUPED} WHERE EXISTS (SELECT 1 FROM depts e WHERE "
        "e.dept_id = d.dept_id AND e.dname = 'eng') GROUP BY d.dname")]


def _groups_l1() -> list[tuple[str, str]]:
    """Single-owner GROUP BY whose groups a participant may span (a visit's own column picks the
    department, not the person's row): one ℓ1 bound across the groups (``privacy.group_l1``),
    counts, unbounded and bounded SUMs (signed: one norm over both parts), its EXPLAIN PRIVACY,
    a failing predicate, and ``max_groups`` (its truncation kept)."""
    vis = "FROM visits v JOIN depts d ON v.vid % 3 + 1 = d.dept_id"
    return [("groups-l1", sql) for sql in (
        f"SELECT d.dname, COUNT(*) {vis} GROUP BY d.dname {EPS}",
        f"SELECT d.dname, SUM(v.amount) {vis} GROUP BY d.dname {EPS}",
        f"SELECT d.dname, SUM(v.amount) {vis} GROUP BY d.dname {EPS} OPTIONS (lower = 0, upper = 50)",
        f"SELECT d.dname, COUNT(*) {vis} WHERE 1 // v.amount > 0 GROUP BY d.dname {EPS}",
        f"SELECT d.dname, COUNT(*), SUM(v.amount) {vis} GROUP BY d.dname {EPS}",
        f"SELECT d.dname, COUNT(*) {vis} GROUP BY d.dname {EPS} OPTIONS (max_groups = 2)",
        f"EXPLAIN PRIVACY SELECT d.dname, COUNT(*) {vis} GROUP BY d.dname {EPS}")]


def _aggregates_l1() -> list[tuple[str, str]]:
    """Several aggregates of one statement on the single-owner route with one ℓ1 bound across
    them (``privacy.aggregates_l1``): TPC-H Q12's complementary CASE sums, counts with FILTER,
    signed SUMs, no GROUP BY, a failing predicate in one aggregate's FILTER, its EXPLAIN
    PRIVACY; and the near-misses that keep the ε split (unlike ranges, an AVG, max_groups)."""
    vis = "FROM visits v JOIN depts d ON v.vid % 3 + 1 = d.dept_id"
    hi, lo = ("SUM(CASE WHEN v.amount > 6 THEN 1 ELSE 0 END)",
              "SUM(CASE WHEN v.amount > 6 THEN 0 ELSE 1 END)")
    return [("aggregates-l1", sql) for sql in (
        f"SELECT d.dname, {hi}, {lo} {vis} GROUP BY d.dname {EPS}",
        f"SELECT d.dname, COUNT(*), COUNT(*) FILTER (WHERE v.tag = 'a') {vis} GROUP BY d.dname {EPS}",
        f"SELECT d.dname, SUM(v.amount), SUM(v.amount * 2) {vis} GROUP BY d.dname {EPS}",
        f"SELECT COUNT(*), COUNT(*) FILTER (WHERE 1 // v.amount > 0) FROM visits v {EPS}",
        f"SELECT d.dname, COUNT(*) FILTER (WHERE CAST(v.tag AS INT) > 0), COUNT(*) {vis} "
        f"GROUP BY d.dname {EPS}",
        f"SELECT d.dname, COUNT(*), SUM(v.amount) {vis} GROUP BY d.dname {EPS}",
        f"SELECT d.dname, AVG(v.amount), COUNT(*) {vis} GROUP BY d.dname {EPS} "
        "OPTIONS (lower = 0, upper = 20)",
        f"SELECT d.dname, {hi}, {lo} {vis} GROUP BY d.dname {EPS} OPTIONS (max_groups = 2)",
        f"EXPLAIN PRIVACY SELECT d.dname, {hi}, {lo} {vis} GROUP BY d.dname {EPS}")]


def _recursive_choice() -> list[tuple[str, str]]:
    """The recursive mechanism's choices that must follow the statement only: its fallback (never
    picked by a number the data produce), an explicit β outside its range and parameters invalid
    at a group's ε (refused before the charge everywhere), and an AVG whose COUNT counts what its
    SUM adds (single-owner, LP and Laplace routes). ESTIMATE ERROR is in :func:`_sql_leftovers`
    (its released columns compared as noisy)."""
    owned = "FROM visits v JOIN people p ON v.pid = p.id"
    return [("recursive-choice", sql) for sql in (
        f"SELECT SUM(amount) FROM visits {EPS} OPTIONS (lower = 0, upper = 100, beta = 1e15)",
        f"SELECT SUM(amount) FROM visits {EPS} OPTIONS (lower = -100, upper = 100, beta = 1)",
        f"SELECT COUNT(*) FROM visits a JOIN visits b ON a.vday = b.vday AND a.vid < b.vid {EPS} "
        "OPTIONS (beta = 1)",
        f"SELECT d.dname, COUNT(*) {owned} JOIN depts d ON p.dept = d.dept_id GROUP BY d.dname "
        "WITH EPSILON 4e7",
        f"SELECT d.dname, SUM(v.amount * p.x) {owned} JOIN depts d ON p.dept = d.dept_id "
        f"GROUP BY d.dname {EPS}",
        f"SELECT AVG(p.x * 2) {owned} {EPS}", f"SELECT AVG(x * 2), COUNT(*) FROM people {EPS}",
        f"SELECT AVG(v.amount * v.amount) FROM visits v {EPS} OPTIONS (lower = 0, upper = 1000)",
        f"SELECT AVG(a.amount) FROM visits a JOIN visits b ON a.vday = b.vday AND a.vid < b.vid "
        f"{EPS} OPTIONS (lower = 0, upper = 100)")]


#: charges with their stay and person (ownership along foreign keys: two hops to people)
CHAIN = "FROM charges c JOIN stays s ON c.csid = s.sid JOIN people p ON s.spid = p.id"


def _foreign_owned() -> list[tuple[str, str]]:
    """Statements over the tables owned along foreign keys (``stays``, ``charges``)."""
    return [("fk-owned", f"{sql} {EPS}") for sql in (
        "SELECT COUNT(*) FROM charges", "SELECT SUM(fee) FROM charges",
        "SELECT SUM(nights) FROM stays", "SELECT COUNT(*) FROM stays WHERE 1 // nights > 0",
        "SELECT COUNT(*) FROM charges WHERE 1 // fee > 0",
        "SELECT COUNT(*) FROM charges WHERE CAST(note AS INT) > 0",
        "SELECT COUNT(*) FROM charges WHERE error(note) IS NULL",
        "SELECT SUM(fee * fee * fee) FROM charges", "SELECT AVG(fee) FROM charges",
        "SELECT COUNT(DISTINCT note) FROM charges",
        "SELECT note, COUNT(*) FROM charges GROUP BY note",
        "SELECT COUNT(*) FROM charges c JOIN stays s ON c.csid = s.sid",
        "SELECT COUNT(*) FROM charges c JOIN stays s ON c.csid = s.sid WHERE s.nights > 2",
        f"SELECT SUM(c.fee) {CHAIN} WHERE p.x > 0",
        f"SELECT COUNT(*) {CHAIN} WHERE 1 // p.i > 0",
        f"SELECT d.dname, COUNT(*) {CHAIN} JOIN depts d ON p.dept = d.dept_id GROUP BY d.dname",
        f"SELECT d.dname, SUM(c.fee) {CHAIN} JOIN depts d ON p.dept = d.dept_id GROUP BY d.dname")]


def _owner_local() -> list[tuple[str, str]]:
    """What is a function of the participant (:mod:`provsql_dp.sql.owner_fd`): anti-joins and
    semi-joins whose matches are the outer row's owner's (or public), HAVING over groups whose
    keys determine the owner along foreign keys, GROUP BY keys the owner determines through
    WHERE equalities — and the near-misses that stay refused (a correlation on a column that is
    not the owner's key, an owner reached through a non-key column)."""
    chain = ("FROM charges c, stays s, people p, depts d WHERE c.csid = s.sid AND s.spid = p.id "
             "AND p.dept = d.dept_id")
    return [("owner-local", f"{sql} {EPS}") for sql in (
        # accepted
        "SELECT COUNT(*) FROM people p WHERE NOT EXISTS (SELECT 1 FROM visits v WHERE "
        "v.pid = p.id AND CAST(v.tag AS INT) > 0)",
        "SELECT SUM(salary) FROM people p WHERE NOT EXISTS (SELECT * FROM visits v WHERE "
        "v.pid = p.id AND 1 // v.amount > 0)",
        "SELECT COUNT(*) FROM stays s WHERE NOT EXISTS (SELECT 1 FROM charges c WHERE "
        "c.csid = s.sid AND 1 // c.fee > 0)",
        "SELECT COUNT(*) FROM charges c1 WHERE NOT EXISTS (SELECT 1 FROM charges c2 WHERE "
        "c2.csid = c1.csid AND c2.fee > c1.fee)",
        "SELECT COUNT(*) FROM charges c1 WHERE EXISTS (SELECT 1 FROM charges c2 WHERE "
        "c2.csid = c1.csid AND c2.note <> c1.note)",
        "SELECT COUNT(*) FROM stays WHERE sid IN (SELECT csid FROM charges GROUP BY csid "
        "HAVING SUM(fee * fee) > 10)",
        "SELECT COUNT(*) FROM people p WHERE NOT EXISTS (SELECT 1 FROM depts d WHERE "
        "d.dept_id = p.dept AND 1 // p.i > 0)",
        "SELECT COUNT(*) FROM people p WHERE p.age NOT IN (SELECT v.amount FROM visits v "
        "WHERE v.pid = p.id AND 1 // v.amount > 0)",
        "SELECT SUM(salary) FROM people WHERE dept NOT IN (SELECT dept_id FROM depts WHERE "
        "dname = 'eng')",
        "SELECT d.dname, SUM(p.salary) FROM people p, depts d WHERE p.dept = d.dept_id "
        "GROUP BY d.dname",
        f"SELECT d.dname, SUM(c.fee) {chain} GROUP BY d.dname",
        "SELECT d.dname, COUNT(*) FROM stays s, people p, depts d WHERE s.spid = p.id AND "
        "p.dept = d.dept_id AND EXISTS (SELECT 1 FROM charges c WHERE c.csid = s.sid) AND NOT "
        "EXISTS (SELECT 1 FROM charges c3 WHERE c3.csid = s.sid AND 1 // c3.fee < 0) "
        "GROUP BY d.dname",
        # near-misses: refused on every neighbour
        "SELECT COUNT(*) FROM people p WHERE NOT EXISTS (SELECT 1 FROM visits v WHERE "
        "v.amount = p.salary)",
        "SELECT COUNT(*) FROM people p WHERE NOT EXISTS (SELECT 1 FROM people p2 WHERE "
        "p2.dept = p.dept AND p2.id <> p.id)",
        "SELECT COUNT(*) FROM charges c1 WHERE NOT EXISTS (SELECT 1 FROM charges c2 WHERE "
        "c2.fee = c1.fee)",
        "SELECT COUNT(*) FROM stays s WHERE NOT EXISTS (SELECT 1 FROM charges c WHERE "
        "c.csid = s.spid)",
        "SELECT COUNT(*) FROM people p WHERE p.age NOT IN (SELECT v.amount FROM visits v "
        "WHERE v.amount = p.age)",
        "SELECT COUNT(*) FROM people WHERE dept IN (SELECT dept FROM people GROUP BY dept "
        "HAVING COUNT(*) > 1)",
        "SELECT COUNT(*) FROM stays WHERE sid IN (SELECT csid FROM charges GROUP BY fee, csid "
        "HAVING COUNT(*) > 1) AND NOT EXISTS (SELECT 1 FROM visits v WHERE v.vid = sid)")]


#: (ε, δ) at which no group of six people clears the partition-selection threshold (T ≈ 83 at
#: λ = 2): the answer is empty on every neighbour, so what is compared is the shape, the charge
#: and the errors (a GROUP BY expression failing on an extreme value must not show)
PS = "WITH EPSILON 0.5 DELTA 1e-18"


def _beyond_pure() -> list[tuple[str, str]]:
    """WITH EPSILON ε DELTA δ (partition selection over protected keys and binned expressions
    of them, the Gaussian/Laplace choice) and WITH RHO ρ (Gaussian), refusals included."""
    # name has declared keys (the presence route's): ``name || ''`` is the same text without them
    keys = ("name || ''", "age", "dept", "ROUND(salary, -3)", "FLOOR(x / 10)", "date_trunc('year', born)",
            "1 // i", "CAST(name AS INT)", "h * h", "dec * 1000", "length(name) * 922337203685477")
    out = [("partition-selection", f"SELECT {k} AS g, COUNT(*) FROM people GROUP BY {k} {PS}")
           for k in keys]
    out += [("partition-selection", sql) for sql in (
        f"SELECT FLOOR(age / 10) AS b, SUM(salary) FROM people GROUP BY 1 {PS} "
        "OPTIONS (lower = 0, upper = 100000)",
        f"SELECT name || '' AS n, SUM(x) FROM people GROUP BY 1 {PS}",
        f"SELECT v.tag, COUNT(*) FROM visits v GROUP BY v.tag {PS} OPTIONS (max_groups = 1, max_rows = 2)",
        f"SELECT v.vday, COUNT(*) FROM visits v WHERE 1 // v.amount > 0 GROUP BY v.vday {PS} "
        "OPTIONS (max_groups = 2, max_rows = 1)",
        f"SELECT p.name, COUNT(*) {JOIN} GROUP BY p.name {PS} OPTIONS (max_groups = 1, max_rows = 1)",
        f"SELECT v.tag, COUNT(*) FROM visits v GROUP BY v.tag {PS}",
        "SELECT name || '' AS n, COUNT(*) FROM people GROUP BY 1 WITH RHO 0.1",
        f"EXPLAIN PRIVACY SELECT ROUND(salary, -3), COUNT(*) FROM people GROUP BY 1 {PS}")]
    out += [("gaussian", sql) for sql in (
        "SELECT COUNT(*) FROM people WHERE 1 // i > 0 WITH RHO 0.1",
        "SELECT COUNT(*) FROM people WHERE CAST(name AS INT) > 0 WITH RHO 0.1",
        "SELECT SUM(salary) FROM people WITH RHO 0.1 OPTIONS (lower = 0, upper = 1000)",
        "SELECT SUM(x) FROM people WITH RHO 0.001",
        f"SELECT d.dname, COUNT(*) {GROUPED} WHERE p.x * 2 > 0 GROUP BY d.dname WITH RHO 0.1",
        "SELECT COUNT(*) FROM people WHERE error(name) IS NULL WITH EPSILON 20 DELTA 1e-9",
        "SELECT COUNT(*) FROM people WITH EPSILON 0.5 DELTA 1e-6",
        "SELECT MEDIAN(i) FROM people WITH RHO 0.1",
        # the smooth-sensitivity median (a bounded δ policy on i; x has bounds only)
        "SELECT MEDIAN(i) FROM people WITH EPSILON 1 DELTA 1e-6",
        "SELECT MEDIAN(x) FROM people WITH EPSILON 1 DELTA 1e-6",
        "SELECT MEDIAN(i) FROM people WHERE x > 0 WITH EPSILON 1 DELTA 1e-6",
        "SELECT QUANTILE_CONT(i, 0.9) FROM people WITH EPSILON 1 DELTA 1e-6",
        "EXPLAIN PRIVACY SELECT MEDIAN(i) FROM people WITH EPSILON 1 DELTA 1e-6",
        f"SELECT SUM(v.amount) {JOIN} WITH RHO 0.1",
        "SELECT COUNT(*), SUM(x) FROM people WITH RHO 0.1",
        "EXPLAIN PRIVACY SELECT COUNT(*) FROM people WHERE 1 // i > 0 WITH RHO 0.1")]
    return out


# every analyst statement kind that is not a private query (issue 26: compiled, never passed
# through): public reads, the scoping corpus, DESCRIBE/SHOW/SUMMARIZE/EXPLAIN/PIVOT, table
# functions and file paths. On every neighbour the outcome and its text must be the same.
ANALYST_PUBLIC = (
    "SELECT * FROM depts ORDER BY dept_id", "FROM depts SELECT dname", "VALUES (1), (2)",
    "WITH people AS (SELECT dept_id FROM depts) SELECT * FROM people ORDER BY 1",
    "SELECT dname FROM depts UNION ALL SELECT 'x'", "PIVOT depts ON dname USING count(*)",
    "SELECT d.dname, row_number() OVER (ORDER BY d.dept_id) FROM depts d",
    "DESCRIBE depts", "DESCRIBE people", "DESCRIBE visits", "DESCRIBE charges", "DESCRIBE SELECT * FROM depts",
    "SHOW TABLES", "SHOW ALL TABLES", "SUMMARIZE depts", "EXPLAIN SELECT * FROM depts",
    "SHOW PROTECTED", "SHOW POLICIES", "SHOW BOUNDS", "SHOW PRIVACY BUDGET",
    # DuckDB's SHOW of a table, as DESCRIBE (sql.show_names)
    "SHOW people", 'SHOW "depts"', "SHOW main.visits",
)
ANALYST_REFUSED = (
    "SHOW audit",  # DuckDB's SHOW of provsql_dp's own audit table: hidden from analysts (h86follow)
    "SELECT * FROM people", "SELECT name FROM people", "TABLE people", "FROM visits",
    "SELECT * FROM (WITH people AS (SELECT 1 AS one) SELECT * FROM people) a, (SELECT name FROM people) b",
    "SELECT b.name FROM (WITH people AS (SELECT 1) SELECT * FROM people) a, LATERAL (SELECT name FROM people) b",
    "SELECT dname FROM depts WHERE EXISTS (WITH people AS (SELECT 1) SELECT 1 FROM people) "
    "AND EXISTS (SELECT 1 FROM people WHERE salary > 60000)",
    "SELECT dname FROM depts WHERE dept_id IN (SELECT dept FROM people WHERE age > 50)",
    "SELECT (SELECT max(name) FROM people), (WITH people AS (SELECT 'x' AS n) SELECT n FROM people)",
    "SELECT * FROM (WITH people AS (SELECT 'x' AS name) SELECT name FROM people) UNION ALL SELECT name FROM people",
    "FROM (WITH people AS (SELECT 1 AS one) FROM people) a, people SELECT name",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 2) SELECT name FROM r, people",
    "WITH people AS (SELECT name FROM people) SELECT name FROM people",
    "WITH a AS (WITH people AS (SELECT 1 AS one) SELECT * FROM people) SELECT name FROM a, people",
    'SELECT name FROM "PEOPLE"', "SELECT name FROM main.People", "SELECT name FROM memory.main.people",
    "WITH people AS (SELECT 'x' AS name) SELECT name FROM main.people",
    "PIVOT people ON name USING sum(salary)", "DESCRIBE PIVOT people ON name USING sum(salary)",
    "DESCRIBE SELECT * FROM (PIVOT people ON name USING count(*))", "SUMMARIZE people",
    "SUMMARIZE SELECT name FROM people", "EXPLAIN SELECT name FROM people WHERE salary > 60000",
    "EXPLAIN ANALYZE SELECT name FROM people", "SELECT * FROM people PIVOT (count(*) FOR name IN ('Alice'))",
    "SELECT * FROM read_csv('/etc/passwd')", "SELECT * FROM read_text('/etc/hostname')",
    "SELECT * FROM glob('/*')", "SELECT * FROM '/etc/passwd'",
    "DESCRIBE SELECT * FROM read_csv('/etc/passwd', header = true, skip = 1)",
    "COPY people TO '/tmp/people.csv'", "ATTACH ':memory:' AS other",
    "SELECT * FROM query('SELECT name FROM people')", "SELECT getenv('HOME')",
    "SELECT * FROM _provsql_dp.ledger", "SELECT * FROM duckdb_tables()",
    "SELECT * FROM charges", "SELECT note FROM charges c JOIN stays s ON c.csid = s.sid",
    "SUMMARIZE charges", "SELECT * FROM _provsql_dp.owner_references",
)


def _analyst_kinds() -> list[tuple[str, str]]:
    return [("analyst-public", s) for s in ANALYST_PUBLIC] + \
        [("analyst-refused", s) for s in ANALYST_REFUSED]


def _red_team_h49() -> list[tuple[str, str]]:
    """The red team's attacks on the new analyst SQL that held (h49attack; the brute-force
    checks are ``test_red_team_owner_groups.py``): GROUP BY keys reached through non-key joins,
    OR, inequalities, a self-join and an owner-local semi-join (must not claim one group per
    participant), nested owner-local subqueries, grouped IN subqueries, step keys whose cast
    overflows on an extreme value, quantified comparisons, and a SUM whose total a secret puts
    on a threshold of the Δ search (its outcome; its extra pass is finding h49attack-3)."""
    return [("red-team-h49", f"{sql} {EPS}") for sql in (
        "SELECT d.dname, COUNT(*) FROM visits v, depts d WHERE v.amount = d.dept_id "
        "GROUP BY d.dname",
        "SELECT d.dname, COUNT(*) FROM people p, depts d WHERE p.dept = d.dept_id OR "
        "p.age = d.dept_id GROUP BY d.dname",
        "SELECT d.dname, SUM(p.salary) FROM people p, depts d WHERE p.salary > d.dept_id * 10000 "
        "GROUP BY d.dname",
        "SELECT d.dname, COUNT(*) FROM people p, people p2, depts d WHERE p2.id = p.id AND "
        "p2.dept = d.dept_id GROUP BY d.dname",
        "SELECT d.dname, COUNT(*) FROM people p, depts d WHERE EXISTS (SELECT 1 FROM visits v "
        "WHERE v.pid = p.id AND v.amount = d.dept_id) GROUP BY d.dname",
        "SELECT COUNT(*) FROM people p WHERE NOT EXISTS (SELECT 1 FROM visits v WHERE "
        "v.pid = p.id AND v.pid IN (SELECT pid FROM visits w WHERE w.tag = 'x'))",
        "SELECT COUNT(*) FROM people p WHERE p.id IN (SELECT v.pid FROM visits v "
        "GROUP BY v.pid, v.amount HAVING COUNT(*) > 0)",
        "SELECT COUNT(*) FROM people p WHERE p.id IN (SELECT v.amount FROM visits v "
        "GROUP BY v.amount HAVING COUNT(*) > 0)",
        "SELECT COUNT(*) FROM people p WHERE p.salary > ALL (SELECT amount FROM visits v "
        "WHERE v.pid = p.id)",
        "SELECT COUNT(*) FROM people p WHERE (p.id IN (SELECT v.pid FROM visits v)) IS NOT TRUE",
        "SELECT CAST(x AS TINYINT) AS b, COUNT(*) FROM people WHERE x BETWEEN -200 AND 200 "
        "GROUP BY 1",
        "SELECT FLOOR(-x) AS b, COUNT(*) FROM people WHERE x > 0.5 AND x < 2.5 GROUP BY 1",
        "SELECT SUM(CASE WHEN id = 1 AND salary = 50001 THEN 0.6749294037880016 ELSE x END) "
        "FROM people")]


def _hardening_h55() -> list[tuple[str, str]]:
    """h55hard: totals a secret pushes onto the Δ search's thresholds and the Δ̂ lattice, many
    distinct ones (near-boundary buckets keyed by cell, not by exact value); collations on owner
    columns and group keys; TIMESTAMPTZ group keys (proved in the session's time zone)."""
    return [("hardening-h55", f"{sql} {EPS}") for sql in (
        "SELECT SUM(CASE WHEN salary > 60000 THEN 0.6749294037880016 * (1 + id * 1e-13) "
        "ELSE x END) FROM people",
        "SELECT SUM(CASE WHEN name LIKE 'C%' THEN exp(0.02 * 7) / 2 * (1 + id * 1e-12) "
        "ELSE 0 END) FROM people",
        "SELECT SUM(amount * 1e-13 + exp(1.0 + 0.02 * 5)) FROM visits",
        "SELECT name COLLATE NOCASE AS n, COUNT(*) FROM people GROUP BY 1",
        "SELECT COUNT(*) FROM visits v JOIN people p ON CAST(v.pid AS VARCHAR) COLLATE NOCASE "
        "= CAST(p.id AS VARCHAR)",
        "SELECT COUNT(DISTINCT tag COLLATE NOCASE) FROM visits",
        "SELECT date_trunc('day', CAST(vday AS TIMESTAMPTZ)) AS d, COUNT(*) FROM visits "
        "WHERE vday BETWEEN DATE '2020-01-01' AND DATE '2020-01-10' GROUP BY 1",
        "SELECT hour(CAST(vday AS TIMESTAMPTZ)) AS h, COUNT(*) FROM visits WHERE vday "
        "BETWEEN DATE '2020-03-01' AND DATE '2020-03-31' GROUP BY 1",
        "SELECT year(CAST(born AS TIMESTAMPTZ)) AS y, COUNT(*) FROM people WHERE born "
        "BETWEEN DATE '1990-01-01' AND DATE '1999-12-31' GROUP BY 1")]


def _red_team_h63() -> list[tuple[str, str]]:
    """h63attack: SUMs whose sign a *declared* bound seemed to prove (``x`` is declared in
    [-10, 10]: ``x + 10`` in [0, 20] — but the "min" plant holds -1.8e308, and only a SUM with
    bounds clamps its columns; finding 1, ``tests/system/test_red_team_nonnegative.py``) on the
    single-owner, ℓ1-across-groups and joint-aggregates routes; the joint release with a FILTER
    and a proved-nonnegative SUM; the centred single-owner AVG with bounds straddling 0."""
    vis = "FROM visits v JOIN depts d ON v.vid % 3 + 1 = d.dept_id"
    sign = "p.x + 10 + GREATEST(p.salary, 0)"
    return [("red-team-h63", f"{sql} {EPS}") for sql in (
        "SELECT SUM(x + 10 + GREATEST(salary, 0)) FROM people",
        f"SELECT SUM({sign}) {JOIN}",
        f"SELECT d.dname, SUM({sign}) FROM visits v JOIN people p ON v.pid = p.id JOIN depts d "
        "ON v.vid % 3 + 1 = d.dept_id GROUP BY d.dname",
        f"SELECT COUNT(*), SUM({sign}) {JOIN}",
        f"SELECT d.dname, SUM(GREATEST(v.amount, 0)), SUM(GREATEST(v.amount, 0) * 2) {vis} "
        "GROUP BY d.dname",
        "SELECT COUNT(*), SUM(GREATEST(amount, 0)) FILTER (WHERE 1 // amount > 0) FROM visits",
        f"SELECT d.dname, AVG(v.amount) {vis} GROUP BY d.dname OPTIONS (lower = -5, upper = 20)",
        "SELECT AVG(amount) FROM visits OPTIONS (lower = -5, upper = 20)")]


def _red_team_h94() -> list[tuple[str, str]]:
    """h94attack: KMEANS (finding 4: a NaN coordinate failed the release after the charge) under
    declared bounds (x), a δ policy (i), and the statements it refuses (a LINE policy, no
    declaration, columns declared apart, several rows per participant)."""
    return [("red-team-h94", f"KMEANS CLUSTERS {k} OF ({cols}) FROM {t} ITERATIONS 2 {EPS}")
            for k, cols, t in ((2, "x", "people"), (3, "i", "people"), (2, "age", "people"),
                               (2, "salary", "people"), (2, "x, i", "people"),
                               (2, "amount", "visits"), (1, "x", "people"))]


#: the issue's statements, with the plants that trigger each
REGRESSIONS = (
    ("error", "SELECT COUNT(*) FROM people WHERE error(name) WITH EPSILON 0.1", ("changed", "long")),
    ("cast", "SELECT COUNT(*) FROM people WHERE CAST(name AS INT) > 0 WITH EPSILON 0.1",
     ("changed", "long")),
    ("division", "SELECT COUNT(*) FROM people WHERE 1 // (salary - 50000) > 0 WITH EPSILON 0.1",
     ("changed",)),
    ("overflow", "SELECT SUM(salary * salary * salary * salary) FROM people WITH EPSILON 0.1",
     ("max", "mult")),
    ("hugeint-sum", "SELECT SUM(h) FROM people WITH EPSILON 0.1", ("max", "min", "mult", "changed")),
    ("double-nonfinite-sum", "SELECT SUM(x) FROM people WITH EPSILON 0.1",
     ("nan", "inf", "ninf", "mult")),
)
