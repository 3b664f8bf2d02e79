"""The mechanisms, one folder per family (the import contract in ``pyproject.toml`` keeps the
arrows: a family imports only the families below it).

* :mod:`.subgraph` — k-star and k-triangle counts on constructions whose size does not depend on
  k, and their local-sensitivity baselines; built on :mod:`.recursive`.
* :mod:`.recursive` — the recursive mechanism: framework, efficient and general mechanisms, the
  single-owner closed form, the error estimate, and the LP models and cut/barrier solvers.
* :mod:`.r2t` — R2T (race-to-the-top truncation) and its truncation LP.
* :mod:`.global_sensitivity` — the Laplace mechanism on declared sensitivities, quantiles.
* :mod:`.lp` — the HiGHS adapter and exact LP reductions (equitable quotient, twin hashes).
* :mod:`.noise` — exact discrete Laplace on public grids: the only noise any release draws.
"""
