"""The peers of ``benchmarks/analyst_sql.py``: the same penguin statements through SmartNoise SQL
and OpenDP, each in a subprocess of its own interpreter (so a peer's dependencies need not fit
ours, and its time is its own).

* **smartnoise-sql** takes the statement's SQL as it is (table ``penguins.penguins``), with a
  metadata file stating what our declarations state (bounds, one row per penguin, ``max_ids`` 1)
  and ``Privacy(epsilon=ε, delta=δ)``; it needs ``pandas < 3``, which our ``constraints.txt``
  pins to 3.1.1, so it runs from its own virtualenv: ``--smartnoise-python PATH``.
* **OpenDP** (``opendp[polars]``, the ``peers`` extra) has no SQL: each statement is written in
  its Polars API as an analyst would, with ``ORDER BY``/``LIMIT``/``HAVING`` done on the released
  frame (post-processing); a statement its API does not offer is reported as such.

A peer's error is reported as it says it (``refused: …``); the child prints JSON: per statement
``{"status": "answered", "runs": [[rows, seconds], …]}`` or ``{"status": "refused: …"}``.

>>> import sys; sys.path.insert(0, "benchmarks")
>>> import _analyst_peers as p
>>> p.smartnoise_sql("SELECT COUNT(*) FROM penguins p WHERE EXISTS (SELECT 1 FROM penguins q)")
'SELECT COUNT(*) FROM penguins.penguins p WHERE EXISTS (SELECT 1 FROM penguins.penguins q)'
>>> sorted(set(p.OPENDP_MISSING) & set(p.OPENDP)), len(p.OPENDP_MISSING) + len(p.OPENDP)
([], 21)
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(_HERE))
import _analyst_workload as w  # noqa: E402

DELTA = w.DELTA  # OpenDP's largest accepted δ for its partition selection; the same for all


def smartnoise_sql(sql: str) -> str:
    """The statement for SmartNoise: its tables are named ``schema.table``."""
    return re.sub(r"\bpenguins\b(?!\.)", "penguins.penguins", sql)


def _smartnoise_metadata() -> dict:
    cols = {"id": {"type": "int", "private_id": True}, "species": {"type": "string"},
            "island": {"type": "string"}, "sex": {"type": "string"}, "year": {"type": "int"}}
    cols.update({c: {"type": "float", "lower": lo, "upper": hi}
                 for c, (lo, hi) in w.BOUNDS.items()})
    return {"penguins": {"penguins": {"penguins": {"max_ids": 1, "rows": 344, **cols}}}}


def _plain(v):
    if hasattr(v, "item"):
        v = v.item()
    return v if isinstance(v, (int, float, str)) or v is None else str(v)


def _chosen(names) -> list:
    return [st for st in w.STATEMENTS if names is None or st.name in names]


def run_smartnoise(releases: int, eps: float, names=None) -> dict:
    import pandas as pd
    import snsql

    df = pd.read_csv(w.CSV, na_values="NA")
    df.insert(0, "id", range(1, len(df) + 1))
    out = {}
    for st in _chosen(names):
        runs = []
        try:
            for _ in range(releases):
                reader = snsql.from_df(df, privacy=snsql.Privacy(epsilon=eps, delta=DELTA),
                                       metadata=_smartnoise_metadata())
                t0 = time.perf_counter()
                res = reader.execute(smartnoise_sql(st.sql))
                secs = time.perf_counter() - t0
                runs.append(([[_plain(v) for v in r] for r in res[1:]], secs))
        except Exception as e:  # noqa: BLE001 (a peer's refusal, reported as it says it)
            out[st.name] = {"status": f"refused: {w.first_sentence(e)}"}
            continue
        out[st.name] = {"status": "answered", "runs": runs}
    return out


# --- OpenDP: each statement in its Polars API -------------------------------------------------

def _od_builders():
    import opendp.prelude as dp
    import polars as pl

    dp.enable_features("contrib")
    mass = pl.col("body_mass_g").cast(float).fill_null(4000.0)
    species_keys = pl.LazyFrame({"species": list(w.SPECIES)})
    by_n = (lambda df: df.sort("len", descending=True))
    return {  # name -> (δ, margins needed, query builder, post-processing of the released frame)
        "count": (0, False, lambda q: q.select(dp.len()), None),
        "count where": (0, False, lambda q: q.filter(pl.col("sex") == "female").select(dp.len()),
                        None),
        "count filter": (0, False,
                         lambda q: q.filter(pl.col("sex") == "female").select(dp.len()), None),
        "sum": (0, True, lambda q: q.select(
            pl.col("flipper_length_mm").cast(int).fill_null(200).dp.sum((170, 235))), None),
        "avg": (0, True, lambda q: q.select(mass.dp.mean((2500.0, 6500.0))), None),
        "group keys": (0, False, lambda q: q.group_by("species").agg(dp.len())
                       .with_keys(species_keys), None),
        "avg by group": (0, True, lambda q: q.group_by("species").agg(
            mass.dp.mean((2500.0, 6500.0))).with_keys(species_keys), None),
        "order by": (0, False, lambda q: q.group_by("species").agg(dp.len())
                     .with_keys(species_keys), by_n),
        "limit": (0, False, lambda q: q.group_by("species").agg(dp.len())
                  .with_keys(species_keys), lambda df: by_n(df).head(2)),
        "having": (0, False, lambda q: q.group_by("species").agg(dp.len())
                   .with_keys(species_keys), lambda df: df.filter(pl.col("len") > 100)),
        "group no keys": (DELTA, False, lambda q: q.group_by("island").agg(dp.len()), None),
        "binning": (DELTA, False, lambda q: q.with_columns(
            (mass / 1000).round(0).mul(1000).alias("mass")).group_by("mass").agg(dp.len()),
            None),
        "count distinct": (0, False, lambda q: q.select(pl.col("species").dp.n_unique()), None),
        "median": (0, True, lambda q: q.select(mass.dp.median(
            candidates=[float(x) for x in range(2500, 6501, 10)])), None),
    }


#: statements OpenDP's Polars API does not offer, with the reason an analyst meets
OPENDP_MISSING = {
    "sum case": "no CASE/when expressions inside a DP aggregate",
    "sum / count": "no arithmetic across released aggregates inside a query (do it on the frame)",
    "variance": "no variance or standard deviation aggregate",
    "stddev": "no variance or standard deviation aggregate",
    "in (subquery)": "no joins of private data",
    "exists": "no joins of private data",
    "not exists": "no joins of private data",
}
OPENDP = ("count", "count where", "count filter", "sum", "avg", "group keys", "avg by group",
          "order by", "limit", "having", "group no keys", "binning", "count distinct", "median")


def run_opendp(releases: int, eps: float, names=None) -> dict:
    import opendp.prelude as dp
    import polars as pl

    lf = pl.scan_csv(w.CSV, null_values="NA")
    builders = _od_builders()
    out = {}
    for st in _chosen(names):
        if st.name in OPENDP_MISSING:
            out[st.name] = {"status": f"not offered: {OPENDP_MISSING[st.name]}"}
            continue
        delta, margins, build, post = builders[st.name]
        runs = []
        try:
            for _ in range(releases):
                t0 = time.perf_counter()
                ctx = dp.Context.compositor(
                    data=lf, privacy_unit=dp.unit_of(contributions=1),
                    privacy_loss=dp.loss_of(epsilon=eps, delta=delta) if delta
                    else dp.loss_of(epsilon=eps), split_evenly_over=1,
                    margins=[dp.polars.Margin(max_length=1000)] if margins else [])
                df = build(ctx.query()).release().collect()
                df = post(df) if post else df
                runs.append(([[_plain(v) for v in r] for r in df.rows()],
                             time.perf_counter() - t0))
        except Exception as e:  # noqa: BLE001 (a peer's refusal, reported as it says it)
            out[st.name] = {"status": f"refused: {w.first_sentence(e)}"}
            continue
        out[st.name] = {"status": "answered", "runs": runs}
    return out


def available(python: str, module: str) -> bool:
    """Whether ``python`` imports ``module`` (a peer is skipped, with a line, when not)."""
    return subprocess.run([python, "-c", f"import {module}"], capture_output=True,
                          check=False).returncode == 0


def run_peer(peer: str, python: str, releases: int, eps: float, names=None) -> dict:
    """One peer's results, from a subprocess of ``python`` (``child``); ``{}`` (and a printed
    line) when it fails."""
    code = (f"import sys; sys.path.insert(0, {str(_HERE)!r}); import _analyst_peers as p; "
            f"p.child({peer!r}, {releases}, {eps}, {names!r})")
    res = subprocess.run([python, "-c", code], capture_output=True, text=True, check=False)
    if res.returncode:
        print(f"{peer}: the run failed: {res.stderr.strip().splitlines()[-1:]}")
        return {}
    return json.loads(res.stdout.strip().splitlines()[-1])


def child(peer: str, releases: int, eps: float, names=None) -> None:
    """The subprocess's work: run ``peer`` (``smartnoise``, ``opendp`` or ``tumult``), print
    JSON."""
    import warnings

    warnings.simplefilter("ignore")
    if peer == "tumult":  # benchmarks/_tumult_runner.py, in tmlt.analytics's own virtualenv
        import _tumult_runner

        print(json.dumps(_tumult_runner.run_penguins(str(w.CSV), eps, releases, DELTA, names)))
        return
    run = run_smartnoise if peer == "smartnoise" else run_opendp
    print(json.dumps(run(releases, eps, names)))
