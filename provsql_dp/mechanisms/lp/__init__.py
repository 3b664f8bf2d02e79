"""The LP plumbing every LP-based family shares: the HiGHS adapter and exact LP reductions.

Imports no other family of :mod:`provsql_dp.mechanisms`.
"""
