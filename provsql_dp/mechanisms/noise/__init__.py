"""Noise samplers: exact discrete Laplace on public grids (the only noise any release draws).

Imports no other family of :mod:`provsql_dp.mechanisms`.
"""
