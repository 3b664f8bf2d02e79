"""Benchmark: the analyst's SQL as SmartNoise SQL and Tumult Analytics users write it (issue 28).

Twenty-one statements on the Palmer penguins (``provsql_dp/data/penguins.csv``, one participant
per penguin; :mod:`_analyst_workload`) — counts, bounded sums and means, grouped counts with
``ORDER BY``/``LIMIT``/``HAVING``, groups without declared keys, binning, variance, distinct
counts, the median, semi-joins — each released ``--releases`` times at ε = ``--eps``. It prints:

1. **ours**: per statement the truth, a release, the median absolute and relative error over the
   releases, the median time per release, or ``refused: <reason>`` (nothing charged);
2. **the peer table**: the same statements through smartnoise-sql, OpenDP (Polars API) and
   Tumult Analytics (QueryBuilder), same ε (δ = 10⁻⁶ where a peer needs one, and for us where
   the checkout has (ε, δ)), relative error and time side by side
   (:mod:`_analyst_peers`; a peer not installed is skipped with a printed line; smartnoise-sql
   needs ``pandas < 3`` and runs from its own virtualenv: ``--smartnoise-python``; Tumult needs
   ``pandas < 2`` and ``pyspark < 3.6``: ``--tumult-python`` or ``$PROVSQL_DP_TUMULT_PYTHON``,
   through :mod:`_tumult_runner`);
3. the other issue-28 sections when their modules are on this branch
   (``_analyst_aggregates``, ``_analyst_accounting``, ``_analyst_engine_speed``), else a line.

Usage::

    nice -n 19 python benchmarks/analyst_sql.py --releases 10
    nice -n 19 python benchmarks/analyst_sql.py --smartnoise-python /path/to/venv/bin/python \
        --tumult-python /path/to/tmltvenv/bin/python
    nice -n 19 python benchmarks/analyst_sql.py --smoke     # 2 releases, peers on 3 statements

The last measured run is ``benchmarks/analyst_sql_measured.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import io
import math
import os
import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(_HERE.parent), str(_HERE)]  # this checkout's provsql_dp, the sections

import _analyst_peers as peers  # noqa: E402
import _analyst_workload as w  # noqa: E402

#: the other issue-28 sections: (module under benchmarks/, function taking ``smoke``)
SECTIONS = (("_analyst_aggregates", "aggregates_section"),
            ("_analyst_accounting", "zcdp_vs_pure_section"),
            ("_analyst_accounting", "partition_selection_section"),
            ("_analyst_engine_speed", "engine_speed_section"))
SMOKE_PEER_STATEMENTS = ("count", "group keys", "median")


def pct(x: float) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.1%}"


def print_ours(results: dict, eps: float, releases: int) -> None:
    print(f"\nours (provsql_dp), ε = {eps:g} per statement, {releases} releases; errors are the "
          f"medians over the releases of the mean over groups")
    print(f"{'statement':<15} {'truth':<30} {'a release':<30} {'groups':>6} {'abs err':>9} "
          f"{'rel err':>8} {'ms':>7}  note")
    for st in w.STATEMENTS:
        ordered = st.desc_col is not None
        true = w.show_rows(w.truth(st), st.keys, ordered)
        r = results[st.name]
        if r["status"] != "answered":
            print(f"{st.name:<15} {true:<30.30} {r['status']}")
            continue
        print(f"{st.name:<15} {true:<30.30} {w.show_rows(r['answer'], st.keys, ordered):<30.30} "
              f"{r['groups']:>6} {w.cell(r['abs']):>9} {pct(r['rel']):>8} "
              f"{1000 * r['seconds']:7.1f}  {r['note']}")


def peer_summaries(raw: dict, statements) -> dict:
    """A peer's JSON (runs of rows) summarised like ours: errors against the truth."""
    out = {}
    for st in statements:
        r = raw.get(st.name, {"status": "not run"})
        if r["status"] != "answered":
            out[st.name] = r
            continue
        runs = [([tuple(_key(v) for v in row) for row in rows], s) for rows, s in r["runs"]]
        out[st.name] = w.summarise(st, runs, w.truth(st))
    return out


def _key(v):
    """A peer's group key as ours (SmartNoise returns a binned number as text)."""
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return v
    return v


def print_peers(table: dict[str, dict], statements) -> None:
    names = list(table)
    print(f"\nthe peer table: relative error (median over releases) and ms per release; "
          f"'refused'/'not offered' reasons below")
    print(f"{'statement':<15} " + " ".join(f"{n:>24}" for n in names))
    reasons = []
    for st in statements:
        cells = []
        for n in names:
            r = table[n].get(st.name, {"status": "not run"})
            if r["status"] == "answered" and r["groups"].startswith("0/"):
                cells.append(f"{'no group released':>24}")
            elif r["status"] == "answered":
                mark = "*" if r["note"] else ""
                cells.append(f"{pct(r['rel']) + mark:>9} {1000 * r['seconds']:>8.1f} ms   ")
            else:
                word = r["status"].split(":")[0]
                cells.append(f"{word:>24}")
                if ":" in r["status"]:
                    reasons.append(f"  {st.name} / {n}: {r['status']}")
        print(f"{st.name:<15} " + " ".join(cells))
    print("  (* ORDER BY or LIMIT not honoured in some release)")
    print("\n".join(reasons))


def run_sections(smoke: bool) -> None:
    for module, fn in SECTIONS:
        if importlib.util.find_spec(module) is None:
            print(f"\n{fn}: benchmarks/{module}.py is not on this branch (skipped)")
            continue
        buf = io.StringIO()  # a section may print its table, return it, or both: print once
        with contextlib.redirect_stdout(buf):
            out = getattr(importlib.import_module(module), fn)(smoke)
        printed = buf.getvalue()
        print(printed if printed.strip() or not isinstance(out, str) else out, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--releases", type=int, default=10)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--smartnoise-python", default=sys.executable,
                    help="an interpreter with smartnoise-sql (it needs pandas < 3)")
    ap.add_argument("--opendp-python", default=sys.executable,
                    help="an interpreter with opendp[polars] (the peers extra)")
    ap.add_argument("--tumult-python", default=os.environ.get("PROVSQL_DP_TUMULT_PYTHON"),
                    help="an interpreter with tmlt.analytics, in a virtualenv of its own "
                         "(benchmarks/_tumult_runner.py says how to make it)")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--smoke", action="store_true",
                    help="2 releases; peers once on 3 statements; the sections' smoke size")
    a = ap.parse_args()
    if a.smoke:
        a.releases = 2
    ours = w.run_ours(w.STATEMENTS, a.releases, a.eps)
    print_ours(ours, a.eps, a.releases)
    if not a.no_peers:
        statements = [s for s in w.STATEMENTS if not a.smoke or s.name in SMOKE_PEER_STATEMENTS]
        table = {"provsql_dp": ours}
        for peer, module, python, child in (
                ("smartnoise-sql", "snsql", a.smartnoise_python, "smartnoise"),
                ("OpenDP", "opendp", a.opendp_python, "opendp"),
                ("Tumult", "tmlt.analytics", a.tumult_python, "tumult")):
            if not python or not peers.available(python, module):
                print(f"\n{peer} is not installed for {python or 'this run'} (skipped)" + (
                    "; tmlt.analytics needs pandas < 2 and pyspark < 3.6: a virtualenv of its "
                    "own, see benchmarks/_tumult_runner.py" if child == "tumult" else ""))
                continue
            raw = peers.run_peer(child, python, 1 if a.smoke else a.releases, a.eps,
                                 [s.name for s in statements])
            table[peer] = peer_summaries(raw, statements)
        print_peers(table, statements)
    run_sections(a.smoke)


if __name__ == "__main__":
    main()
