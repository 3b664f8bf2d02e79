"""Running the privacy statements: ``PROTECT``/``UNPROTECT TABLE``, ``SHOW PROTECTED``,
``SET``/``SHOW PRIVACY BUDGET``, ``SET PRIVACY EPSILON`` and the policy statements.

Each one is run against a connection's catalog, ledger and session; the cursor shows what comes
back: a status line, or a result set.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> con.execute("SET PRIVACY BUDGET 2 FOR USER 'ann'").fetchall()
[("privacy budget of 'ann' set to 2",)]
>>> con.execute("SHOW PRIVACY BUDGET FOR USER 'ann'").fetchall()
[('ann', '2', '0', '2')]
"""

from __future__ import annotations

from ..._numbers import format_eps
from ...errors import InternalError, OperationalError, PrivacyError, ProgrammingError
from ...sql import dialect as d
from ...sql import policy_grammar as _policy_grammar

__all__ = ["execute_privacy_statement"]


def execute_privacy_statement(con, tree) -> str | tuple[list, list[tuple]]:
    """Run the parsed privacy statement ``tree`` on the connection ``con``; returns a status
    message, or a result set ``(description, rows)``."""
    cat = con._catalog
    if con.read_only and isinstance(tree, (d.Protect, d.Unprotect, d.SetPrivacyBudget)):
        raise OperationalError("the database is open read-only; declarations cannot change")
    if con._in_tx and not type(tree).__name__.startswith("Show"):
        # A declaration must never hang on an uncommitted transaction (a forgotten commit
        # would silently unprotect a table): commit first, like sqlite3 before DDL.
        con.commit()
    if isinstance(tree, d.Protect):
        table = [p.name for p in tree.this.parts]
        by = [c.name for c in tree.expressions] if tree.expressions else None
        domain = tree.text("domain") or None
        prot = cat.protect(table, by, domain)
        return f"protected {prot.table}: {prot.describe()}"
    if isinstance(tree, d.Unprotect):
        prot = cat.unprotect([p.name for p in tree.this.parts])
        return f"unprotected {prot.table}"
    if isinstance(tree, d.ShowProtected):
        rows = [
            (p.schema, p.table, p.domain, ", ".join(p.by_columns) or None,
             ", ".join(p.key_columns) if not p.by_columns else None,
             "owners" if p.by_columns else ("primary key" if p.key_columns else "rowid"))
            for p in cat.list_protected()
        ]
        return ([("schema", "VARCHAR"), ("table", "VARCHAR"), ("domain", "VARCHAR"),
                 ("by_columns", "VARCHAR"), ("key_columns", "VARCHAR"), ("participant", "VARCHAR")],
                rows)
    if isinstance(tree, d.SetPrivacyBudget):
        eps = d.exact_number(tree.args["epsilon"], "the privacy budget")
        user = tree.args.get("user")
        name = user.name if user is not None else con.user
        con._ledger.set_budget(name, eps)
        return f"privacy budget of {name!r} set to {format_eps(eps)}"
    if isinstance(tree, d.ShowPrivacyBudget):
        user = tree.args.get("user")
        users = con._ledger.users()
        if user is not None:
            users = [u for u in users if u[0] == user.name]
        if con.role == "analyst":
            if user is not None and user.name != con.user:
                raise PrivacyError("an analyst can see only their own budget")
            users = [u for u in users if u[0] == con.user]
        rows = [(u, format_eps(t), format_eps(s), format_eps(t - s)) for u, t, s in users]
        return ([("user", "VARCHAR"), ("total", "VARCHAR"), ("spent", "VARCHAR"),
                 ("remaining", "VARCHAR")], rows)
    if isinstance(tree, d.SetPrivacyEpsilon):
        eps = d.exact_number(tree.args["epsilon"], "epsilon")
        if eps <= 0:
            raise ProgrammingError("epsilon must be positive")
        con.default_epsilon = eps
        return f"default epsilon set to {format_eps(eps)}"
    if isinstance(tree, _policy_grammar.POLICY_STATEMENTS):
        from ...privacy.policy_statements import execute_policy_statement

        return execute_policy_statement(con, tree)
    raise InternalError(f"unhandled statement {type(tree).__name__}")  # pragma: no cover
