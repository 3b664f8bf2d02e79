"""CBC for the PuLP cross-checks, through PuLP's non-deprecated ``COIN_CMD``.

PuLP 3.3 deprecates ``PULP_CBC_CMD`` (gone in 4.0, which no longer bundles CBC). ``COIN_CMD`` runs
a ``cbc`` found on PATH (``pip install pulp[cbc]`` provides one); without it, the CBC binary that
PuLP 3.x still ships (pyproject pins ``pulp<4``) is passed to ``COIN_CMD`` explicitly. Either way
the cross-checks stay on an LP solver independent of the HiGHS the mechanisms use.
"""

from __future__ import annotations

import os

import pulp


def cbc_solver() -> pulp.COIN_CMD:
    """A silent CBC solver for ``prob.solve(...)``; a clear error when no CBC binary exists."""
    solver = pulp.COIN_CMD(msg=False)
    if solver.available():
        return solver
    from pulp.apis import coin_api

    bundled = getattr(coin_api, "pulp_cbc_path", None)
    if bundled and os.path.exists(bundled):
        return pulp.COIN_CMD(msg=False, path=bundled)
    raise RuntimeError(
        "no CBC binary for the PuLP cross-checks: install the test extra (pulp<4 ships CBC) "
        "or `pip install 'pulp[cbc]'` to put a cbc on PATH"
    )
