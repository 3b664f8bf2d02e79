"""R2T, race-to-the-top truncation (Dong et al., SIGMOD 2022): the race and its truncation LP.

Imports :mod:`.noise` and :mod:`.lp` only.
"""
