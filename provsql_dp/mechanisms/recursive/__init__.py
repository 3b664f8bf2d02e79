"""The recursive mechanism (Chen & Zhou, SIGMOD'13): its framework, the efficient and general
mechanisms, the single-owner closed form, and the LP models and cut/barrier solvers behind them.

Imports :mod:`.noise` and :mod:`.lp` only.
"""
