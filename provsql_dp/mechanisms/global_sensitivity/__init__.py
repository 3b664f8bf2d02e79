"""Mechanisms whose noise scale is a global sensitivity fixed by the declarations: the Laplace
mechanism for sums and counts, and quantiles.

Imports :mod:`.noise` only.
"""
