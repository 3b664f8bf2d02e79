"""Subgraph counts (k-stars, k-triangles) released with the recursive mechanism on constructions
whose size does not depend on k, and their local-sensitivity baselines.

Imports :mod:`.recursive`, :mod:`.noise` and :mod:`.lp`.
"""
