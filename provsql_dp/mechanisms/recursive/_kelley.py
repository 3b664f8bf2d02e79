"""The rounds of the recursive mechanism's iterative LP solvers, written once, and the monomials
a cut is taken on.

Private: computes functions of the private data; reached only through :mod:`._j_cuts` (the
Δ-search LP by cuts), :mod:`._x_cuts` (eq. 20 by cuts) and :mod:`._x_barrier` (H next to the
eq.-20 argmin by a trust region).

All three iterate the same way: solve an LP (a warm pool of cuts re-solved by dual simplex, or a
fresh trust-region LP), read its point in numpy (exact loads, exact objective), then either end —
the point is certified, the caller asks to stop, the pool outgrew the plain LP — or add what the
point violates and solve again; an LP that fails (time limit, no certified optimum) ends the
rounds and leaves the caller its last bounds. :func:`rounds` is that loop; what a point means
stays with each caller (its ``look``). Nothing here decides a value: every bound a caller returns
is certified by the caller from the exact arrays, whatever the rounds did.

:func:`tight_monomials` is the choice every cut makes at a point ``ĝ``: for each tuple, the
monomial of largest ``φ`` (smallest withdrawn mass ``s = Σ_{p ∈ m} k g_p``), and that mass;
:func:`restricted` the eq.-20 objective over the columns ``C`` only, shared by the cut model and
the barrier.

Examples
--------
>>> seen = []
>>> def look(point):
...     seen.append(point)
...     return DONE if point >= 3 else MORE
>>> points = iter(range(10))
>>> rounds(lambda: next(points), look, 10), seen
('done', [0, 1, 2, 3])
>>> rounds(lambda: 0, lambda p: MORE, 5, too_big=lambda: True)
'rows'
>>> import numpy as np
>>> from provsql_dp.provenance.krelation import KRelation
>>> from provsql_dp.mechanisms.recursive._structure import Structure
>>> st = Structure(KRelation.from_annotations(
...     rows=[(1,)], annotations=[[{("v", "a")}, {("v", "b")}]]))  # one tuple, two monomials
>>> m_star, s_min = tight_monomials(st, np.array([1.0, 0.25]))
>>> len(m_star), float(s_min[0])  # the monomial of b: withdrawn mass 0.25, φ = 0.75
(1, 0.25)
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from ...errors import SolverError
from ..lp._highs import resolve_lp

__all__ = ["DONE", "STOP", "MORE", "rounds", "warm_pool", "tight_monomials", "restricted"]

#: what ``look`` says of a round's point: certified (the rounds succeeded), stop (the caller's
#: target is met or the point is unusable), or more (cuts were added: solve again)
DONE, STOP, MORE = "done", "stop", "more"


def rounds(solve: Callable[[], Any], look: Callable[[Any], str], max_rounds: int, *,
           stats=None, too_big: Callable[[], bool] | None = None) -> str:
    """Up to ``max_rounds`` rounds of ``look(solve())``; why they ended.

    ``"done"`` or ``"stop"`` when ``look`` said so; ``"solver"`` when ``solve`` raised a
    :class:`~provsql_dp.errors.SolverError`; ``"rows"`` when, after ``look`` added cuts,
    ``too_big()`` holds; ``"rounds"`` when the rounds ran out. ``look``'s time is added to
    ``stats.build_seconds`` (``solve``'s LP time is the solver's own, in ``stats``).
    """
    for _ in range(max_rounds):
        try:
            point = solve()
        except SolverError:
            return "solver"
        t0 = time.perf_counter()
        verdict = look(point)
        if stats is not None:
            stats.build_seconds += time.perf_counter() - t0
        if verdict != MORE:
            return verdict
        if too_big is not None and too_big():
            return "rows"
    return "rounds"


def warm_pool(h, what: str, time_limit, stats) -> Callable[[], tuple]:
    """The ``solve`` of a cut pool: the kept HiGHS model re-solved by dual simplex from its
    last basis, ``(objective, x, row duals)``."""
    return lambda: resolve_lp(h, solver="simplex", time_limit=time_limit, stats=stats, what=what)


def tight_monomials(st, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(m_star, s_min)``: each tuple's monomial of largest ``φ`` at ``g`` (the first of ties)
    and its withdrawn mass ``Σ_{p ∈ m} k g_p`` (``φ = max(0, 1 − s_min)``), over the arrays of a
    structure or its load view."""
    s = np.bincount(st.ent_mono, weights=g[st.ent_part] * st.ent_coef, minlength=st.n_mono)
    if st.n_mono == st.n_tuples:  # one monomial per tuple
        return np.arange(st.n_tuples), s
    s_min = np.minimum.reduceat(s, st.tuple_mono_ptr[:-1])
    first = np.flatnonzero(s <= s_min[st.mono_tuple])
    _, fi = np.unique(st.mono_tuple[first], return_index=True)
    return first[fi], s_min


def restricted(st, cand: np.ndarray):
    """eq. 20's objective with ``g = 0`` outside the columns ``C = cand``:
    ``(cols, col, ent_c, t_kept, const, e)`` — the columns, each participant's position among
    them (−1 outside), which entries lie in ``C``, the tuples kept (every monomial meets ``C``;
    any other tuple keeps ``φ = 1`` whatever ``g_C``: a constant), the constant part of the
    objective, and the entries in ``C`` of kept tuples."""
    cols = np.flatnonzero(cand)
    col = np.full(st.n, -1, dtype=np.int64)
    col[cols] = np.arange(len(cols))
    ent_c = cand[st.ent_part]
    mono_has_c = np.bincount(st.ent_mono, weights=ent_c, minlength=st.n_mono) > 0
    t_kept = np.bincount(st.mono_tuple, weights=~mono_has_c, minlength=st.n_tuples) == 0
    const = st.const_true + float(st.q[~t_kept].sum())
    e = np.flatnonzero(ent_c & t_kept[st.mono_tuple[st.ent_mono]])
    return cols, col, ent_c, t_kept, const, e
