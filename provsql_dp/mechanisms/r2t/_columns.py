"""Column generation for R2T's reduced truncation LP: few rows, millions of columns.

The reduced LP (:mod:`.truncation`) keeps one row per heavy participant but a column per monomial
touching one — millions on a graph with millions of triangles, while a basis has at most as many
non-bound columns as rows. Every single-monomial column (``v_m ∈ [0, cap_m]``, objective 1) is
in one of three states: *at 0* or *at cap* (out of the LP, a constant), or *in* the restricted
LP; multi-monomial tuples' columns stay in. Each round solves the restricted LP (the at-cap
columns' load subtracted from the rows' ``τ``), prices every column with its duals
``d_m = 1 − Σ_{i ∈ m} y_i`` (numpy over the entries), and brings in the columns whose state
contradicts the sign of ``d_m`` (at 0 with ``d_m > tol``, at cap with ``d_m < −tol``); columns
of the restricted LP sitting at a bound with the matching sign leave it. When nothing
contradicts, the primal (restricted optimum plus constants) and the duals satisfy the full LP's
optimality conditions to the tolerance HiGHS itself uses — the same optimum, without ever
handing HiGHS the whole matrix. A start at cap that is feasible by construction (each heavy
participant's monomials taken in order of their largest load while their caps fit in ``τ``)
makes high thresholds, where most columns end at cap, converge in a few rounds.

Measured (2 cores, loaded machine): on ca-GrQc node privacy at τ = 64 (309 heavy rows, 42k
columns) HiGHS solves the whole reduced LP in 1.3 s, column generation needs 5 rounds and 4.3 s
(24 rounds, 15 s, when columns also leave the restricted LP); on ca-HepPh (3.4 M columns) one
threshold did not finish in 4 minutes either way. So it is off by default
(``R2TModel.colgen_above``), kept for experiments, and the column-leaving step is off
(``SHRINK``): with it, columns cycle in and out.

Exactness is tested against the plain LP in ``tests/unit/mechanisms/r2t/test_r2t_lp.py`` (with a
tiny batch, forcing many rounds). After ``MAX_ROUNDS`` rounds the full reduced LP is solved.

>>> from provsql_dp.provenance.krelation import KRelation
>>> from provsql_dp.mechanisms.r2t.truncation import R2TModel
>>> kr = KRelation.from_annotations(rows=[(k,) for k in range(6)],
...     annotations=[[{("p", k % 3), ("p", 3)}] for k in range(6)])
>>> m = R2TModel(kr)
>>> m.colgen_above, m.colgen_batch = 0, 1
>>> m.value(3.0), m.plain_value(3.0)
(3.0, 3.0)
"""

from __future__ import annotations

import numpy as np

__all__ = ["solve_by_columns", "MAX_ROUNDS", "TOLERANCE"]

#: rounds before the full reduced LP is solved instead
MAX_ROUNDS = 100
#: pricing tolerance on reduced costs (HiGHS's default dual feasibility tolerance)
TOLERANCE = 1e-7
#: columns of the restricted LP at a bound with the matching reduced-cost sign leave it
SHRINK = False


def solve_by_columns(model, keep_m: np.ndarray, rows: np.ndarray, tau: float,
                     time_limit: float | None) -> float:
    """The optimum of ``model``'s reduced LP on monomials ``keep_m`` and participant rows
    ``rows`` at threshold ``tau`` (without the free part), by column generation."""
    n_m = len(keep_m)
    single = keep_m & (model.n_mono_of[model.t_of_m] == 1)
    multi = keep_m & ~single
    p_rank = np.cumsum(rows) - 1
    n_p = int(rows.sum())
    sel = single[model.mono_of_entry] & rows[model.pid]
    e_m = model.mono_of_entry[sel]
    e_r = p_rank[model.pid[sel]]
    cap = model.cap
    batch = max(int(getattr(model, "colgen_batch", 0)) or 4 * n_p + 20_000, 1)
    status = np.zeros(n_m, dtype=np.int8)  # 0: at 0, 1: in, 2: at cap
    # a feasible start at cap: per heavy row, its monomials by largest load, while caps fit
    order = np.lexsort((model.maxload[e_m], e_r))
    seg_start = np.searchsorted(e_r[order], np.arange(n_p))
    csum = np.cumsum(cap[e_m[order]])
    base = np.concatenate([[0.0], csum])[seg_start]
    fits = np.empty(len(order), dtype=bool)
    fits[order] = csum - np.repeat(base, np.diff(np.append(seg_start, len(order)))) <= tau
    bad = np.bincount(e_m, weights=~fits, minlength=n_m) > 0
    status[single & ~bad] = 2
    rest = np.flatnonzero(single & bad)
    status[rest[np.argsort(model.maxload[rest], kind="stable")[:batch]]] = 1
    for _ in range(MAX_ROUNDS):
        at_cap = status[e_m] == 2
        capload = np.bincount(e_r[at_cap], weights=cap[e_m[at_cap]], minlength=n_p)
        master = multi | (status == 1)
        mdl = model._model(master, rows, tau, capped=True,
                           row_upper=np.maximum(tau - capload, 0.0))
        if mdl[0] == 0:
            value, x, dual = 0.0, np.zeros(0), np.zeros(n_p)
        else:
            value, x, dual = model.solve_full(mdl, time_limit)
        y = -np.asarray(dual[:n_p], dtype=np.float64)
        d = 1.0 - np.bincount(e_m, weights=y[e_r], minlength=n_m)
        wrong = single & (((status == 0) & (d > TOLERANCE)) | ((status == 2) & (d < -TOLERANCE)))
        if not wrong.any():
            return value + float(cap[single & (status == 2)].sum())
        if SHRINK:
            ms = np.flatnonzero(master)
            xv = x[: len(ms)]
            sm = single[ms]
            status[ms[sm & (xv >= cap[ms] - 1e-9) & (d[ms] > TOLERANCE)]] = 2
            status[ms[sm & (xv <= 1e-9) & (d[ms] < -TOLERANCE)]] = 0
        add = np.flatnonzero(wrong)
        if len(add) > batch:
            add = add[np.argpartition(-np.abs(d[add]), batch - 1)[:batch]]
        status[add] = 1
    full = model._model(keep_m, rows, tau, capped=True)
    return model.solve_full(full, time_limit)[0]
