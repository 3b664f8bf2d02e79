"""δ-neighbourhood privacy for spatial and streaming data: the public face of :mod:`provsql_dp.policies.delta`.

``from provsql_dp import delta`` keeps working where users found it; the implementation lives
with the other policy engines under ``provsql_dp/policies/``.

>>> from provsql_dp import delta
>>> delta.Policy is __import__("provsql_dp.policies.delta", fromlist=["x"]).Policy
True
"""

from .policies.delta import *  # noqa: F401,F403
from .policies.delta import __all__  # noqa: F401
