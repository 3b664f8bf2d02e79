"""The analyst's workload of ``benchmarks/analyst_sql.py``: the Palmer penguins, statements as a
SmartNoise SQL or Tumult Analytics user writes them, our answers, the truth and the errors.

The data is the Palmer penguins (344 penguins, 3 species on 3 islands; Gorman, Williams & Fraser
2014, Palmer Station LTER; CC0), bundled as ``provsql_dp/data/penguins.csv`` (the CSV of the
``palmerpenguins`` package). Each penguin is one participant (``PROTECT TABLE penguins``, one row
each); the curator declares what a SmartNoise metadata file or a Tumult session would: the
columns' bounds and the species as public keys. The islands are *not* declared: a
``GROUP BY island`` needs private partition selection.

>>> import sys; sys.path.insert(0, "benchmarks")
>>> import _analyst_workload as w
>>> rows = w.penguin_rows()
>>> len(rows), rows[0][:3]
(344, (1, 'Adelie', 'Torgersen'))
>>> w.truth(w.STATEMENTS[0])          # SELECT COUNT(*) FROM penguins
[(344,)]
>>> err = w.errors(w.STATEMENTS[7], [("Adelie", 150), ("Gentoo", 125), ("Chinstrap", 68)],
...                w.truth(w.STATEMENTS[7]))
>>> err["abs"], err["groups"]
(1.0, '3/3')
"""

from __future__ import annotations

import math
import re
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CSV = ROOT / "provsql_dp" / "data" / "penguins.csv"
COLUMNS = ("id INTEGER PRIMARY KEY, species VARCHAR, island VARCHAR, bill_length_mm DOUBLE, "
           "bill_depth_mm DOUBLE, flipper_length_mm DOUBLE, body_mass_g DOUBLE, sex VARCHAR, "
           "year INTEGER")
#: the public bounds a curator declares (SmartNoise's metadata ``lower``/``upper``, Tumult's
#: clamping bounds): wide enough that clamping changes no value of the data
BOUNDS = {"bill_length_mm": (30, 60), "bill_depth_mm": (13, 22),
          "flipper_length_mm": (170, 235), "body_mass_g": (2500, 6500)}
SPECIES = ("Adelie", "Chinstrap", "Gentoo")
DELTA = 1e-6  # per statement, where one needs it (OpenDP's largest for partition selection)
#: the curator's declarations on our side (the same facts the peers' metadata states)
DECLARATIONS = (
    "PROTECT TABLE penguins",
    *(f"SET BOUNDS ON penguins ({c}) BETWEEN {lo} AND {hi}" for c, (lo, hi) in BOUNDS.items()),
    "SET GROUP KEYS ON penguins (species) VALUES ('Adelie', 'Chinstrap', 'Gentoo')",
)


@dataclass(frozen=True)
class Statement:
    """One analyst statement: ``sql`` without a privacy clause (we append ``WITH EPSILON ε``;
    the peers get it as it is), its first ``keys`` columns name the group, ``desc_col`` a
    column the rows must come back sorted by (descending), ``limit`` at most so many rows."""

    name: str
    sql: str
    keys: int = 0
    desc_col: int | None = None
    limit: int | None = None
    #: released under (ε, δ) where the checkout has it (private partition selection): the peers
    #: need δ for these too
    delta: bool = False


STATEMENTS = (
    Statement("count", "SELECT COUNT(*) FROM penguins"),
    Statement("count where", "SELECT COUNT(*) FROM penguins WHERE sex = 'female'"),
    Statement("count filter", "SELECT COUNT(*) FILTER (WHERE sex = 'female') FROM penguins"),
    Statement("sum case", "SELECT SUM(CASE WHEN sex = 'male' THEN 1 ELSE 0 END) FROM penguins"),
    Statement("sum", "SELECT SUM(flipper_length_mm) FROM penguins"),
    Statement("avg", "SELECT AVG(body_mass_g) FROM penguins"),
    Statement("sum / count", "SELECT SUM(body_mass_g) / COUNT(*) FROM penguins"),
    Statement("group keys", "SELECT species, COUNT(*) AS n FROM penguins GROUP BY species", 1),
    Statement("avg by group", "SELECT species, AVG(body_mass_g) AS mass FROM penguins "
              "GROUP BY species", 1),
    Statement("order by", "SELECT species, COUNT(*) AS n FROM penguins GROUP BY species "
              "ORDER BY n DESC", 1, desc_col=1),
    Statement("limit", "SELECT species, COUNT(*) AS n FROM penguins GROUP BY species "
              "ORDER BY n DESC LIMIT 2", 1, desc_col=1, limit=2),
    Statement("having", "SELECT species, COUNT(*) AS n FROM penguins GROUP BY species "
              "HAVING COUNT(*) > 100", 1),
    Statement("group no keys", "SELECT island, COUNT(*) AS n FROM penguins GROUP BY island", 1,
              delta=True),
    Statement("binning", "SELECT ROUND(body_mass_g, -3) AS mass, COUNT(*) AS n FROM penguins "
              "GROUP BY ROUND(body_mass_g, -3)", 1, delta=True),
    Statement("variance", "SELECT VARIANCE(body_mass_g) FROM penguins"),
    Statement("stddev", "SELECT STDDEV(body_mass_g) FROM penguins"),
    Statement("count distinct", "SELECT COUNT(DISTINCT species) FROM penguins"),
    Statement("median", "SELECT MEDIAN(body_mass_g) FROM penguins"),
    Statement("in (subquery)", "SELECT COUNT(*) FROM penguins WHERE species IN "
              "(SELECT species FROM penguins WHERE island = 'Dream')"),
    Statement("exists", "SELECT COUNT(*) FROM penguins p WHERE EXISTS (SELECT 1 FROM penguins q "
              "WHERE q.species = p.species AND q.island = 'Torgersen')"),
    Statement("not exists", "SELECT COUNT(*) FROM penguins p WHERE NOT EXISTS (SELECT 1 FROM "
              "penguins q WHERE q.species = p.species AND q.island = 'Torgersen')"),
)


def penguin_rows() -> list[tuple]:
    """The 344 penguins as tuples ``(id, species, island, …, year)`` (``NA`` read as NULL)."""
    import duckdb

    con = duckdb.connect()
    return con.execute(f"SELECT row_number() OVER () :: INTEGER AS id, * FROM read_csv("
                       f"'{CSV}', nullstr = 'NA', header = true)").fetchall()


def load(con) -> None:
    """Create and fill ``penguins`` on ``con`` (any DB-API connection over DuckDB)."""
    con.execute(f"CREATE TABLE penguins ({COLUMNS})")
    con.execute(f"INSERT INTO penguins SELECT row_number() OVER () :: INTEGER, * FROM "
                f"read_csv('{CSV}', nullstr = 'NA', header = true)")


def truth(st: Statement) -> list[tuple]:
    """The true answer: the statement on plain DuckDB."""
    import duckdb

    con = duckdb.connect()
    load(con)
    return con.execute(st.sql).fetchall()


def _split(row: tuple, keys: int) -> tuple[tuple, list[float]]:
    return tuple(row[:keys]), [float(v) if v is not None else math.nan for v in row[keys:]]


def errors(st: Statement, rows: list[tuple], true_rows: list[tuple]) -> dict:
    """Absolute and relative error of one release against the truth: the mean over the groups
    both have and their aggregates; ``groups`` is ``released/true`` (a released group the
    truth lacks counts as released), ``order`` whether ``ORDER BY``/``LIMIT`` were honoured."""
    t = dict(_split(r, st.keys) for r in true_rows)
    got = [_split(r, st.keys) for r in rows]
    a, rel = [], []
    for k, vals in got:
        if k in t:
            for v, tv in zip(vals, t[k]):
                a.append(abs(v - tv))
                rel.append(abs(v - tv) / abs(tv) if tv else math.inf)
    order = True
    if st.desc_col is not None:
        col = [float(r[st.desc_col]) for r in rows]
        order = all(x >= y for x, y in zip(col, col[1:]))
    if st.limit is not None and len(rows) > st.limit:
        order = False
    return {"abs": statistics.fmean(a) if a else math.nan,
            "rel": statistics.fmean(rel) if rel else math.nan,
            "groups": f"{sum(k in t for k, _ in got)}/{len(t)}" if st.keys else "",
            "order": order}


def first_sentence(message: str, width: int = 96) -> str:
    """An error's reason, short: its first clause, cut to ``width`` characters."""
    msg = " ".join(str(message).split())
    msg = re.split(r"(?<=[.;])\s", msg)[0]
    return msg if len(msg) <= width else msg[:width - 1] + "…"


def summarise(st: Statement, runs: list[tuple[list[tuple], float]], true_rows) -> dict:
    """Median errors and time over the releases ``runs`` (rows, seconds) of one statement."""
    errs = [errors(st, rows, true_rows) for rows, _ in runs]
    bad_order = sum(not e["order"] for e in errs)
    note = ""
    if bad_order:
        what = "LIMIT" if st.limit is not None and any(len(r) > st.limit for r, _ in runs) \
            else "ORDER BY"
        note = f"{what} not honoured in {bad_order}/{len(errs)} releases"
    return {"status": "answered", "answer": runs[len(runs) // 2][0],
            "abs": statistics.median(e["abs"] for e in errs),
            "rel": statistics.median(e["rel"] for e in errs),
            "groups": errs[0]["groups"], "seconds": statistics.median(s for _, s in runs),
            "note": note}


def run_ours(statements, releases: int, eps: float) -> dict[str, dict]:
    """Every statement through provsql_dp, ``releases`` times at ``eps`` each: per statement
    its summary, or ``{"status": "refused: <reason>"}``."""
    import provsql_dp
    from provsql_dp.errors import Error

    con = provsql_dp.connect(":memory:")
    load(con)
    for decl in DECLARATIONS:
        con.execute(decl)
    total = 10 * releases * eps * len(statements)
    try:  # an (ε, δ) budget where the checkout has one (issue 28's accounting), else pure ε
        con.execute(f"SET PRIVACY BUDGET EPSILON {total:g} DELTA 0.01")
        approx = True
    except Error:
        con.execute(f"SET PRIVACY BUDGET {total:g}")
        approx = False
    out = {}
    for st in statements:
        true_rows = truth(st)
        clause = f"WITH EPSILON {eps:g}" + (f" DELTA {DELTA:g}" if st.delta and approx else "")
        runs = []
        try:
            for _ in range(releases):
                t0 = time.perf_counter()
                rows = con.execute(f"{st.sql} {clause}").fetchall()
                runs.append((rows, time.perf_counter() - t0))
        except Error as e:
            out[st.name] = {"status": f"refused: {first_sentence(e)}"}
            continue
        out[st.name] = summarise(st, runs, true_rows)
    return out


def cell(v) -> str:
    """A released or true value, short."""
    if isinstance(v, float):
        return f"{v:,.1f}" if abs(v) < 1e6 else f"{v:,.3g}"
    return str(v)


def show_rows(rows: list[tuple], keys: int, ordered: bool = False) -> str:
    """A result in one short cell: ``344`` or ``Adelie 151, Gentoo 124, …`` (sorted by the group
    unless ``ordered``: then in the order it came)."""
    if not rows:
        return "(no rows)"
    if not keys:
        return ", ".join(cell(v) for v in rows[0])
    if not ordered:
        rows = sorted(rows, key=lambda r: tuple(str(v) for v in r[:keys]))
    parts = [" ".join(cell(v) for v in r) for r in rows[:3]]
    return ", ".join(parts) + (", …" if len(rows) > 3 else "")
