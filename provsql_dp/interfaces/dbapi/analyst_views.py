"""What an analyst's connection shows of the ledger and the catalog (``con.ledger``,
``con.catalog``): their own budget and charges; the declarations, read-only.

>>> import provsql_dp
>>> con = provsql_dp.connect(role="analyst", user="ann")
>>> con.ledger.users()
[]
>>> con.ledger.set_budget("ann", 10)
Traceback (most recent call last):
...
provsql_dp.errors.PrivacyError: only the curator sets privacy budgets
>>> con.catalog.protect(["t"], None, None)
Traceback (most recent call last):
...
provsql_dp.errors.PrivacyError: only the curator changes privacy declarations
"""

from __future__ import annotations

from fractions import Fraction

from ...errors import PrivacyError
from ...privacy.ledger import Ledger
from ...sql.catalog import Catalog

__all__ = ["OwnLedger", "ReadOnlyCatalog"]


class OwnLedger:
    """An analyst's view of the ledger: their own budget and charges, nothing else."""

    def __init__(self, ledger: Ledger, user: str):
        self._ledger = ledger
        self.user = user

    def _own(self, user: str) -> None:
        if user != self.user:
            raise PrivacyError("an analyst can see and spend only their own budget")

    def budget(self, user: str | None = None):
        self._own(user or self.user)
        return self._ledger.budget(self.user)

    def remaining(self, user: str | None = None) -> Fraction:
        self._own(user or self.user)
        return self._ledger.remaining(self.user)

    def users(self) -> list:
        return [u for u in self._ledger.users() if u[0] == self.user]

    def entries(self, user: str | None = None) -> list:
        self._own(user or self.user)
        return self._ledger.entries(self.user)

    def check(self, user: str, epsilon) -> None:
        self._own(user)
        self._ledger.check(user, epsilon)

    def charge(self, user: str, epsilon, statement, mechanism):
        self._own(user)
        return self._ledger.charge(user, epsilon, statement, mechanism)

    def set_budget(self, user: str, total) -> None:
        raise PrivacyError("only the curator sets privacy budgets")


class ReadOnlyCatalog:
    """An analyst's view of the catalog: the declarations can be read, not changed."""

    def __init__(self, catalog: Catalog):
        self._catalog = catalog

    def __getattr__(self, name: str):
        if name in ("protect", "unprotect", "ensure"):
            raise PrivacyError("only the curator changes privacy declarations")
        return getattr(self._catalog, name)
