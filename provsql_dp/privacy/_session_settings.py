"""DuckDB settings a private release relies on, checked before the ledger is charged.

:func:`provsql_dp.sql.total.make_total` makes every analyst expression total *under DuckDB's
defaults*: a float division by zero is ±inf or NaN (IEEE 754) and the SUM's clamp drops it,
``sqrt`` or ``ln`` out of their domain is NaN and guarded to NULL, and ``/`` is a float
division. Two settings undo that:

* ``ieee_floating_point_ops = false`` (DuckDB's older behaviour): those rows *raise* instead
  ("Division by zero", "cannot take square root of a negative number");
* ``integer_division = true``: ``/`` between integers becomes ``//``, which raises on a zero
  divisor.

A curator may set either on their own connection (``SET``) or, with ``SET GLOBAL``, on every
connection of the process, an analyst's included (an analyst connection opened in a process
that holds the database shares its configuration). The release then fails after its charge
exactly when some row makes the expression fail — ``1 / (salary - 50000)`` when someone earns
50 000 (red team h63attack, finding 3). So a private statement is refused before anything is
charged while either differs from the default: the refusal depends on the settings only,
never on the data, and names the setting and how to put it back. ``max_execution_time``
likewise (red team h73attack, finding 2): past it DuckDB interrupts a release's reads, after the
charge, as their running time decides; releases have their own clock, whose end gives the
data-independent fallback (:mod:`provsql_dp._deadline`). So are ``default_order`` and
``default_null_order`` (finding 6): a release's own queries sort by DuckDB's defaults; and
``default_collation`` (its strings compare as written; a column's own ``COLLATE`` is judged by
the planner). (The post-processing
database pins its own settings: :mod:`provsql_dp.privacy.post_sql`. Spark has its own guard.)

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> check_session_settings(con)
>>> _ = con.execute("SET integer_division = true")
>>> check_session_settings(con)
Traceback (most recent call last):
...
provsql_dp.errors.OperationalError: this connection's DuckDB setting integer_division is true; ...
"""

from __future__ import annotations

import duckdb

from ..errors import OperationalError
from ..provenance.backends import DuckDBBackend, engine_of

__all__ = ["PINNED", "check_session_settings"]

_ROWS = "the statement would fail on some rows after its charge, which tells about those rows"

#: setting → the value a release assumes (DuckDB's default), with what another value does
PINNED = {
    "ieee_floating_point_ops": ("true", "with it off, a float division by zero, or sqrt or ln "
                                        "out of their domain, raises on the row instead of "
                                        "giving ±inf or NaN: " + _ROWS),
    "integer_division": ("false", "with it on, / between integers is //, which raises on a "
                                  "zero divisor: " + _ROWS),
    # red team h73attack-2: DuckDB interrupts any query past it, so a release's reads would
    # fail after the charge or not as the data make them slow; the release's own clock
    # (release_time_limit, release_seconds) answers with the data-independent fallback instead
    "max_execution_time": ("0", "with a limit, DuckDB interrupts a release's reads after its "
                                "charge as their running time, which depends on the data, "
                                "decides; a connection's release_time_limit bounds releases "
                                "instead, ending in their data-independent fallback"),
    # red team h73attack-6: the capture numbers a group's tuples by an ORDER BY without a
    # direction; with DESC every tuple of a DISTINCT or a join under GROUP BY went to one group,
    # and per-key counts were released under each other's keys
    "default_order": ("asc", "with DESC, the ORDER BYs of a release's own queries sort the other "
                             "way, and its tuples and released values land in the wrong groups"),
    "default_null_order": ("nulls_last", "a release's own queries sort NULLs where DuckDB's "
                                         "default puts them"),
    # red team h85attack leftover 5 (h86follow): a collation the planner saw is refused where
    # it matters (_collated_keys, foreign_owners), but under SET GLOBAL default_collation =
    # 'nocase' a private COUNT(DISTINCT s) over 'A' and 'a' released about the row count, and
    # s = 'a' counted the 'A' rows as well
    "default_collation": ("", "with a collation, = between strings and the groups of a "
                              "release's own queries merge values that differ ('A' and 'a'), "
                              "while the release matches them by value"),
}

#: the spellings DuckDB reports for a pinned setting's default (``current_setting``)
_SAME = {"asc": {"asc", "ascending"}, "": {"", "binary"}}

# the catalog's fingerprint reads them (SETTINGS) at the start of each statement; one it did
# not read is read here
_READ = "SELECT " + ", ".join(f"current_setting('{n}')::VARCHAR" for n in PINNED)


def check_session_settings(con) -> None:
    """Refuse (:class:`~provsql_dp.errors.OperationalError`, nothing charged) a private
    statement on ``con`` while a setting of :data:`PINNED` differs from its default there.
    Inside a statement the values are those its catalog fingerprint read first
    (:meth:`provsql_dp.sql.catalog.Catalog.setting`), else one query of the settings; another
    engine than DuckDB is not concerned."""
    if not isinstance(engine_of(con), DuckDBBackend):
        return
    values = [con._catalog.setting(n) for n in PINNED]
    if None in values:
        try:
            values = con._duck.execute(_READ).fetchone()
        except duckdb.Error:  # an aborted transaction: the statement fails on its own, uncharged
            return
    for (name, (want, why)), got in zip(PINNED.items(), values):
        if str(got).lower() not in _SAME.get(want, {want}):
            raise OperationalError(
                f"this connection's DuckDB setting {name} is {str(got).lower()}; a private "
                f"statement is evaluated with it {want or 'unset'} ({why}). A curator puts it "
                f"back with RESET {name} (or RESET GLOBAL {name} when it was set with SET "
                f"GLOBAL). Nothing was charged")
