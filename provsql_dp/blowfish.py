"""Blowfish privacy for histogram and range workloads: the public face of :mod:`provsql_dp.policies.blowfish`.

``from provsql_dp import blowfish`` keeps working where users found it; the implementation lives
with the other policy engines under ``provsql_dp/policies/``.

>>> from provsql_dp import blowfish
>>> blowfish.Policy is __import__("provsql_dp.policies.blowfish", fromlist=["x"]).Policy
True
"""

from .policies.blowfish import *  # noqa: F401,F403
from .policies.blowfish import __all__  # noqa: F401
