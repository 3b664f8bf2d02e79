"""Tumult Analytics as a peer, run from its own virtualenv: the child of
``benchmarks/peers_tumult.py`` (issue 30's Spark workload) and of ``benchmarks/analyst_sql.py``
(issue 28's penguins).

``tmlt.analytics`` 0.21 cannot install beside our pins (it wants pandas < 2, numpy < 2 and
pyspark < 3.6 on Python 3.11; ``constraints.txt`` pins pandas 3, numpy 2 and pyspark 4.3), so it
lives in a virtualenv of its own and this module is run by *that* interpreter, in a subprocess::

    python3.11 -m venv /tmp/tmltvenv && /tmp/tmltvenv/bin/pip install tmlt.analytics
    /tmp/tmltvenv/bin/python benchmarks/_tumult_runner.py scale PARQUET --eps 1 --repeats 5
    /tmp/tmltvenv/bin/python benchmarks/_tumult_runner.py penguins CSV --eps 1 --releases 10

It prints one line of JSON on stdout (the last line). Nothing here imports ``provsql_dp`` and
``tmlt``/``pyspark`` are imported inside the functions, so the module imports (and its doctest
runs) in our own virtualenv too.

**Fairness.** The privacy unit is ours: one row is one participant (``PROTECT TABLE`` of a table
whose primary key is the row), which in Tumult is ``AddOneRow()``. The same ε per release under
``PureDPBudget`` (Tumult's default mechanisms there: the two-sided geometric for counts, Laplace
for sums of floats), and at ρ = ε²/2 under ``RhoZCDPBudget`` for the zCDP rows (Tumult's default
there: the discrete Gaussian). Clamping bounds are the ones our curator declared; a ``GROUP BY``
gets the declared keys as a ``KeySet``. Where we declare no bounds (the unbounded ``SUM``), Tumult
has none either: its recommended way is ``get_bounds`` (half the ε) then ``sum`` at those bounds
(the other half), which is what runs. Where we use private partition selection, Tumult's
``get_groups`` (under ``ApproxDPBudget``, half the ε and the δ) then a count on those keys.
A session is built once per table (like our connection), outside the per-release timing.

>>> sorted(SCALE)
['bounded_sum', 'count', 'group_by_50', 'unbounded_sum']
>>> plan = rho_of(1.0)
>>> plan
0.5
>>> sorted(PENGUIN_MISSING)
['exists', 'in (subquery)', 'not exists']
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time

#: issue 30's workload (``benchmarks/spark_scale.py``): name → (plain Spark SQL on view ``src``,
#: whether it has a zCDP row here)
SCALE = {
    "count": ("SELECT COUNT(*) FROM src WHERE age > 40", True),
    "bounded_sum": ("SELECT SUM(amount) FROM src", True),
    "group_by_50": ("SELECT g, COUNT(*) FROM src GROUP BY g", True),
    "unbounded_sum": ("SELECT SUM(age) FROM src", False),
}

#: penguin statements (``_analyst_workload.STATEMENTS``) written with Tumult's QueryBuilder
PENGUIN_OFFERED = ("count", "count where", "count filter", "sum case", "sum", "avg", "sum / count",
                   "group keys", "avg by group", "order by", "limit", "having", "group no keys",
                   "binning", "variance", "stddev", "count distinct", "median")
#: penguin statements Tumult's QueryBuilder does not offer, with the reason an analyst meets
PENGUIN_MISSING = {
    "in (subquery)": "a semi-join of the private table with itself: join_private needs a "
                     "truncation per join key and counts the join's rows, not the semi-join's",
    "exists": "a semi-join of the private table with itself (as IN (subquery))",
    "not exists": "an anti-join of the private table with itself: no such operation",
}


def round_thousands(x: float) -> int:
    """SQL's ``ROUND(x, -3)`` for x ≥ 0: half away from zero (Python's ``round`` goes to even, and
    penguin masses are multiples of 25: 2500, 3500 and 4500 occur).

    >>> [round_thousands(x) for x in (2500, 3499.9, 3500, 4500, 6300)]
    [3000, 3000, 4000, 5000, 6000]
    """
    return 1000 * math.floor(x / 1000 + 0.5)


def rho_of(eps: float) -> float:
    """ρ for an ε-DP release (ε-DP implies ε²/2-zCDP): the zCDP rows' budget."""
    return eps * eps / 2


def _spark(memory: str = "3g"):
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the workers import tmlt too
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    here = os.path.dirname(os.path.abspath(__file__))  # the workers unpickle this module's
    os.environ["PYTHONPATH"] = os.pathsep.join(  # functions (the binning map) by reference
        [here] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    from pyspark.sql import SparkSession

    s = (SparkSession.builder.master("local[2]").appName("provsql_dp-peer-tumult")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.shuffle.partitions", "4").config("spark.driver.memory", memory)
         # Tumult materialises tables (saveAsTable, tumult_temp_* databases): not in the cwd
         .config("spark.sql.warehouse.dir", tempfile.mkdtemp(prefix="tumult_warehouse_"))
         .getOrCreate())
    s.sparkContext.setLogLevel("ERROR")
    return s


def _timed(fn, repeats: int, warm: bool):
    out = fn() if warm else None
    times, values = [], []
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
        values.append(out)
    return times, values


def _rows(df) -> list:
    return [[_plain(v) for v in r] for r in df.collect()]


def _plain(v):
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v if isinstance(v, (int, float, str)) or v is None else str(v)


def run_scale(parquet: str, eps: float, repeats: int, warm: bool = True, only=None) -> dict:
    """Issue 30's four statements through Tumult on ``parquet`` (``people``: id, age, g,
    amount), each ``repeats`` times after a warm-up: seconds and released rows per release."""
    import tmlt.analytics as ta
    from tmlt.analytics import (AddOneRow, KeySet, PureDPBudget, QueryBuilder, RhoZCDPBudget,
                                Session)

    t = time.perf_counter()
    spark = _spark()
    out = {"tumult": ta.__version__ if hasattr(ta, "__version__") else "?",
           "jvm_s": time.perf_counter() - t, "work": []}
    import pyspark

    out["pyspark"] = pyspark.__version__
    df = spark.read.parquet(parquet)
    df.createOrReplaceTempView("src")
    keys = KeySet.from_dict({"g": list(range(50))})
    def people():  # a QueryBuilder changes itself as it is built: a fresh one each time
        return QueryBuilder("people")

    def unbounded(session, budget_half):
        b = session.evaluate(people().get_bounds("age"), budget_half).collect()[0].asDict()
        lo, hi = float(b["age_lower_bound"]), float(b["age_upper_bound"])
        return session.evaluate(people().sum("age", lo, hi), budget_half)

    queries = {
        "count": lambda s, b: s.evaluate(people().filter("age > 40").count(), b),
        "bounded_sum": lambda s, b: s.evaluate(people().sum("amount", 0, 100), b),
        "group_by_50": lambda s, b: s.evaluate(people().groupby(keys).count(), b),
        "unbounded_sum": None,  # below: two evaluations at half the budget each
    }
    sessions = {}
    for unit, big in (("pure", PureDPBudget(float("inf"))),
                      ("zcdp", RhoZCDPBudget(float("inf")))):
        t = time.perf_counter()
        sessions[unit] = Session.from_dataframe(privacy_budget=big, source_id="people",
                                                dataframe=df, protected_change=AddOneRow())
        out[f"session_{unit}_s"] = time.perf_counter() - t
    for name, (plain, has_zcdp) in SCALE.items():
        if only and name != only:
            continue
        plain_times, _ = _timed(lambda: spark.sql(plain).collect(), repeats, warm)
        rows = [("pure", PureDPBudget(eps))] + ([("zcdp", RhoZCDPBudget(rho_of(eps)))]
                                               if has_zcdp else [])
        for unit, budget in rows:
            s = sessions[unit]
            if name == "unbounded_sum":
                half = PureDPBudget(eps / 2)
                fn = (lambda s=s, half=half: _rows(unbounded(s, half)))
            else:
                fn = (lambda s=s, q=queries[name], b=budget: _rows(q(s, b)))
            try:
                times, values = _timed(fn, repeats, warm)
            except Exception as e:  # noqa: BLE001 (a peer's refusal, reported as it says it)
                out["work"].append({"workload": name, "unit": unit, "plain_s": plain_times,
                                    "refused": str(e).strip().split("\n")[0][:200]})
                continue
            out["work"].append({"workload": name, "unit": unit, "plain_s": plain_times,
                                "tumult_s": times, "values": values})
            print(json.dumps(out["work"][-1]), file=sys.stderr, flush=True)  # progress
    return out


# --- issue 28: the penguins --------------------------------------------------------------------

SPECIES = ("Adelie", "Chinstrap", "Gentoo")
BOUNDS = {"flipper_length_mm": (170, 235), "body_mass_g": (2500, 6500)}


def _penguin_builders(eps: float, delta: float):
    """name → fn(session) → rows, each spending ε (and δ where it needs one) in total."""
    from tmlt.analytics import (ApproxDPBudget, ColumnType, KeySet, PureDPBudget,
                                QueryBuilder)

    def q():  # a QueryBuilder changes itself as it is built: a fresh one each time
        return QueryBuilder("penguins")

    pure, half = PureDPBudget(eps), PureDPBudget(eps / 2)
    species = KeySet.from_dict({"species": list(SPECIES)})
    mass_lo, mass_hi = BOUNDS["body_mass_g"]
    def mass():
        return q().drop_null_and_nan(["body_mass_g"])

    def one(query, budget=pure, post=None):
        def run(s):
            df = s.evaluate(query, budget).toPandas()
            df = post(df) if post else df
            return [[_plain(v) for v in r] for r in df.itertuples(index=False)]
        return run

    def by_n(df):
        return df.sort_values("count", ascending=False)

    def sum_over_count(s):
        total = s.evaluate(mass().sum("body_mass_g", mass_lo, mass_hi), half).collect()[0][0]
        n = s.evaluate(q().count(), half).collect()[0][0]
        return [[total / n if n else None]]

    def selected(column, rows):
        def run(s):  # Tumult's partition selection, then the count on the released keys
            groups = s.evaluate(rows().get_groups([column]), ApproxDPBudget(eps / 2, delta))
            keys = KeySet.from_dataframe(groups)
            df = s.evaluate(rows().groupby(keys).count(), half).toPandas()
            return [[_plain(v) for v in r] for r in df.itertuples(index=False)]
        return run

    male = q().map(lambda row: {"is_male": 1 if row["sex"] == "male" else 0},
                 new_column_types={"is_male": ColumnType.INTEGER}, augment=True)
    def binned():  # ROUND(body_mass_g, -3)
        return mass().map(lambda row: {"mass": round_thousands(row["body_mass_g"])},
                          new_column_types={"mass": ColumnType.INTEGER}, augment=True)
    builders = {
        "count": one(q().count()),
        "count where": one(q().filter("sex = 'female'").count()),
        "count filter": one(q().filter("sex = 'female'").count()),  # no FILTER: a filter
        "sum case": one(male.sum("is_male", 0, 1)),
        "sum": one(q().drop_null_and_nan(["flipper_length_mm"])
                   .sum("flipper_length_mm", *BOUNDS["flipper_length_mm"])),
        "avg": one(mass().average("body_mass_g", mass_lo, mass_hi)),
        "sum / count": sum_over_count,
        "group keys": one(q().groupby(species).count()),
        "avg by group": one(mass().groupby(species).average("body_mass_g", mass_lo, mass_hi)),
        "order by": one(q().groupby(species).count(), post=by_n),
        "limit": one(q().groupby(species).count(), post=lambda df: by_n(df).head(2)),
        "having": one(q().groupby(species).count(), post=lambda df: df[df["count"] > 100]),
        "group no keys": selected("island", q),
        "binning": selected("mass", binned),
        "variance": one(mass().variance("body_mass_g", mass_lo, mass_hi)),
        "stddev": one(mass().stdev("body_mass_g", mass_lo, mass_hi)),
        "count distinct": one(q().count_distinct(["species"])),
        "median": one(mass().median("body_mass_g", mass_lo, mass_hi)),
    }
    assert tuple(builders) == PENGUIN_OFFERED
    return builders


def run_penguins(csv: str, eps: float, releases: int, delta: float, names=None) -> dict:
    """The penguin statements through Tumult, the JSON of ``_analyst_peers``: per statement
    ``{"status": "answered", "runs": [[rows, seconds], …]}`` or a ``not offered``/``refused``."""
    import pandas as pd
    from tmlt.analytics import AddOneRow, ApproxDPBudget, Session

    spark = _spark("1g")
    pdf = pd.read_csv(csv, na_values="NA")
    pdf.insert(0, "id", range(1, len(pdf) + 1))
    for c in ("species", "island", "sex"):
        pdf[c] = pdf[c].astype(object).where(pdf[c].notna(), None)
    df = spark.createDataFrame(pdf.astype({"year": "int64"}))
    # ApproxDP with an infinite budget: holds pure-ε and (ε, δ) releases alike
    session = Session.from_dataframe(privacy_budget=ApproxDPBudget(float("inf"), 1.0),
                                     source_id="penguins", dataframe=df,
                                     protected_change=AddOneRow())
    builders = _penguin_builders(eps, delta)
    out = {}
    for name in names or PENGUIN_OFFERED + tuple(PENGUIN_MISSING):
        if name in PENGUIN_MISSING:
            out[name] = {"status": f"not offered: {PENGUIN_MISSING[name]}"}
            continue
        runs = []
        try:
            for _ in range(releases):
                t = time.perf_counter()
                rows = builders[name](session)
                runs.append((rows, time.perf_counter() - t))
        except Exception as e:  # noqa: BLE001 (a peer's refusal, reported as it says it)
            out[name] = {"status": "refused: " + str(e).strip().split("\n")[0][:200]}
            continue
        out[name] = {"status": "answered", "runs": runs}
    return out


def main() -> None:
    import warnings

    warnings.simplefilter("ignore")
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=("scale", "penguins", "version"))
    ap.add_argument("path", nargs="?")
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-warm", action="store_true")
    ap.add_argument("--only", default=None)
    ap.add_argument("--names", default=None, help="penguin statements, comma-separated")
    a = ap.parse_args()
    if a.what == "version":
        from importlib.metadata import version

        res = {"tmlt.analytics": version("tmlt.analytics"), "pyspark": version("pyspark")}
    elif a.what == "scale":
        res = run_scale(a.path, a.eps, a.repeats, warm=not a.no_warm, only=a.only)
    else:
        res = run_penguins(a.path, a.eps, a.repeats, a.delta,
                           a.names.split(",") if a.names else None)
    sys.stdout.flush()
    print(json.dumps(res))


if __name__ == "__main__":
    main()
