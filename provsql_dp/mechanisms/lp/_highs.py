"""The HiGHS adapter of the recursive mechanism's LPs: pass a model built from arrays, run it,
map the solver's status onto ours.

Private: the models are functions of the private data. A model is handed over whole (one
``passModel`` of row-wise arrays); a kept model can be re-solved warm from its last basis after
bound changes (:func:`resolve_lp`). Anything but a certified optimum with finite values and duals
raises :class:`~provsql_dp.errors.SolverError`.
"""

from __future__ import annotations

import math
import os
import sys
import time
from dataclasses import dataclass, field

import highspy
import numpy as np

from ..._cancel import run_solve, solving
from ..._deadline import time_limit as _within_deadline
from ..._progress import interruptible, tick
from ...errors import SolverError

#: HiGHS's HighsInt in the highspy wheels: LP positions and non-zero counts are 32-bit
_HIGHS_INT_MAX = 2**31 - 1

__all__ = ["LPStats", "solve_lp", "resolve_lp", "INF"]

INF = highspy.kHighsInf
_ROWWISE = 2  # HiGHS MatrixFormat::kRowwise
_MINIMIZE = 1  # HiGHS ObjSense::kMinimize


def _first_highs_quietly() -> None:
    """Make this process's first ``Highs`` with file descriptor 1 pointed at ``/dev/null``.

    highspy ≥ 1.16 prints its banner ("Running HiGHS …: Copyright …") on standard output when
    the first ``Highs`` of a process is constructed, before any option (``silent()``) can be set;
    later ones print nothing. Unsilenced, it lands in the middle of the shell's and the demo's
    output (and of a ``--mode csv`` export). Done once, at import, before any LP is built here
    or in the modules that import this one.
    """
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (AttributeError, OSError, ValueError):  # no usable standard output: nothing to hide
        highspy.Highs()
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        highspy.Highs()
        try:  # the banner may sit in C's stdio buffer: flush it into /dev/null
            import ctypes
            ctypes.CDLL(None).fflush(None)
        except (OSError, AttributeError, TypeError):  # pragma: no cover - no libc (Windows)
            pass
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


_first_highs_quietly()


@dataclass
class LPStats:
    """Counters of the LP work done for one computation (curator-only diagnostics)."""

    n_lps: int = 0
    lp_seconds: float = 0.0
    build_seconds: float = 0.0
    max_rows: int = 0
    max_cols: int = 0
    generation_rounds: int = 0
    solver: str = "simplex"
    log: list = field(default_factory=list)


def solve_lp(
    n_col: int,
    cost: np.ndarray,
    col_lower: np.ndarray,
    col_upper: np.ndarray,
    row_lower: np.ndarray,
    row_upper: np.ndarray,
    a_start: np.ndarray,
    a_index: np.ndarray,
    a_value: np.ndarray,
    *,
    offset: float = 0.0,
    solver: str = "simplex",
    time_limit: float | None = None,
    stats: LPStats | None = None,
    what: str = "LP",
    crossover: bool = True,
    keep: bool = False,
    approximate: bool = False,
    tolerance: float | None = None,
    presolve: bool = True,
):
    """Solve ``min cost·x + offset`` over a row-wise CSR model in one ``passModel``.

    Returns ``(objective, col_value, row_dual)`` as numpy arrays (and the ``Highs`` object as a
    fourth item when ``keep``, for warm-started re-solves with :func:`resolve_lp`); raises
    :class:`SolverError` unless HiGHS reports an optimal solution. With ``approximate`` (for a
    first-order solver whose answer is certified by the caller, see
    :mod:`provsql_dp.mechanisms.recursive._certify`) whatever
    primal and dual iterate HiGHS holds is returned even without an optimal status, and ``None``
    when it holds none. ``presolve=False`` skips HiGHS's presolve (before PDLP on millions of
    columns it costs more time and memory than the solve: TPC-H Q21 SF 1, 6.4 GB).
    """
    n_row = len(row_lower)
    _within_deadline(time_limit, f"the {what}")  # not even passed to HiGHS past the budget
    if max(len(a_index), int(n_col), n_row) > _HIGHS_INT_MAX:  # its indices are 32-bit
        raise SolverError(f"the {what} has more than 2^31 - 1 non-zeros, rows or columns; HiGHS "
                          "takes 32-bit indices (participant ids are 64-bit, LP positions not)")
    t0 = time.perf_counter()
    h = highspy.Highs()
    h.silent()
    h.setOptionValue("solver", solver)
    h.setOptionValue("threads", 1)
    if not crossover:
        h.setOptionValue("run_crossover", "off")
    if not presolve:
        h.setOptionValue("presolve", "off")
    if tolerance is not None:
        for opt in ("primal_feasibility_tolerance", "dual_feasibility_tolerance",
                    "pdlp_optimality_tolerance"):
            h.setOptionValue(opt, float(tolerance))
    status = h.passModel(
        int(n_col),
        int(n_row),
        int(len(a_index)),
        _ROWWISE,
        _MINIMIZE,
        float(offset),
        np.ascontiguousarray(cost, dtype=np.float64),
        np.ascontiguousarray(col_lower, dtype=np.float64),
        np.ascontiguousarray(col_upper, dtype=np.float64),
        np.ascontiguousarray(row_lower, dtype=np.float64),
        np.ascontiguousarray(row_upper, dtype=np.float64),
        np.ascontiguousarray(a_start[:n_row], dtype=np.int32),
        np.ascontiguousarray(a_index, dtype=np.int32),
        np.ascontiguousarray(a_value, dtype=np.float64),
        np.zeros(int(n_col), dtype=np.int32),
    )
    if status == highspy.HighsStatus.kError:
        raise SolverError(f"HiGHS rejected the {what} model ({n_row} rows, {n_col} columns)")
    out = _run(h, t0, stats=stats, what=what, time_limit=time_limit, approximate=approximate)
    if out is None:
        return None
    return (*out, h) if keep else out


def resolve_lp(h, *, solver: str = "simplex", time_limit=None, stats=None, what="LP"):
    """Re-solve a kept model after bound changes, warm-started from its last basis."""
    h.setOptionValue("solver", solver)
    return _run(h, time.perf_counter(), stats=stats, what=what, time_limit=time_limit)


def _run(h, t0: float, *, stats, what: str, time_limit, approximate: bool = False):
    time_limit = _within_deadline(time_limit, f"the {what}")  # the release's budget (_deadline)
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    n_row, n_col = h.getNumRow(), h.getNumCol()
    tick("solving LPs")
    # a cancel of the statement stops the solve; the shell's Ctrl-C too (provsql_dp._cancel)
    with solving(h):
        run_status = run_solve(h, threaded=interruptible())
    model_status = h.getModelStatus()
    elapsed = time.perf_counter() - t0
    if stats is not None:
        stats.n_lps += 1
        stats.lp_seconds += elapsed
        stats.max_rows = max(stats.max_rows, n_row)
        stats.max_cols = max(stats.max_cols, int(n_col))
        alg = h.getOptionValue("solver")
        alg = alg[1] if isinstance(alg, tuple) else alg
        # (what, algorithm, rows, columns, non-zeros, seconds): curator-only diagnostics
        stats.log.append((what, alg, int(n_row), int(n_col), int(h.getNumNz()), elapsed))
    if approximate:
        sol = h.getSolution()
        if not (sol.value_valid and sol.dual_valid):
            return None
        col_value = np.nan_to_num(np.asarray(sol.col_value, dtype=np.float64))
        row_dual = np.nan_to_num(np.asarray(sol.row_dual, dtype=np.float64))
        return float("nan"), col_value, row_dual
    if run_status == highspy.HighsStatus.kError or model_status != highspy.HighsModelStatus.kOptimal:
        raise SolverError(
            f"the {what} did not solve to optimality (HiGHS: "
            f"{h.modelStatusToString(model_status)}); nothing was released"
        )
    sol = h.getSolution()
    info = h.getInfo()
    objective = info.objective_function_value
    if not sol.dual_valid:
        raise SolverError(f"the {what} returned no dual solution; nothing was released")
    col_value = np.asarray(sol.col_value, dtype=np.float64)
    row_dual = np.asarray(sol.row_dual, dtype=np.float64)
    if not (math.isfinite(objective) and np.all(np.isfinite(col_value))):
        raise SolverError(f"the {what} returned a non-finite solution; nothing was released")
    return objective, col_value, row_dual
