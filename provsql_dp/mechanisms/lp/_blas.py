"""BLAS on one thread while a mechanism's solver runs.

OpenBLAS starts as many threads as cores and its threads spin while they wait; on a shared,
loaded machine a small dense solve then costs tens of times its single-thread time (measured
here: a 186 × 186 ``numpy.linalg.solve`` took 29 ms threaded, 0.8 ms on one thread, at load
~15 on 2 cores). The mechanisms' dense algebra is small (systems of a few hundred unknowns, dot
products of vectors), where threads never pay off: :func:`one_blas_thread` pins BLAS to one
thread for the duration of the decorated call and restores the previous setting after it.

It changes no result: the same routines run on the same inputs (single-threaded OpenBLAS may
sum in another order than the threaded one; every value a mechanism releases is decided by
certificates computed from exact arrays, not by the iterates these routines produce).

Examples
--------
>>> import numpy as np
>>> @one_blas_thread
... def solve(a, b):
...     return np.linalg.solve(a, b)
>>> solve(np.eye(2), np.ones(2)).tolist()
[1.0, 1.0]
"""

from __future__ import annotations

import functools
from typing import Callable, TypeVar

__all__ = ["one_blas_thread"]

F = TypeVar("F", bound=Callable)


def one_blas_thread(fn: F) -> F:
    """Run ``fn`` with BLAS limited to one thread (``threadpoolctl``); the limit is lifted on
    return or raise."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1, user_api="blas"):
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
