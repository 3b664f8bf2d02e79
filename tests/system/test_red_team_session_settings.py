"""Red team h63attack, finding 3: DuckDB settings a curator can change make a private release
fail on some rows after its charge.

``sql.total.make_total`` makes an analyst's expression total under DuckDB's defaults: ``x / 0``
is ±inf or NaN (IEEE 754) and the clamp drops it, ``sqrt``/``ln`` of a value out of their
domain is NaN and guarded to NULL. A curator who runs ``SET ieee_floating_point_ops = false``
(DuckDB's old behaviour: raise instead of inf/NaN) or ``SET integer_division = true`` (``/``
between integers becomes ``//``, which raises on a zero divisor) changes that on their own
connection, and with ``SET GLOBAL`` on every connection of the process — analysts' included
(an analyst connection opened in a process that holds the database shares its configuration).

Then ``SELECT COUNT(*) FROM t WHERE 1 / (salary - 50000) > 0`` answered when nobody earns
50 000 and failed after its charge when someone does: one bit about one participant, whatever
the noise, and ε spent. Now refused before the charge, on every database alike, naming the
setting and how to put it back (``privacy._session_settings``).
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import provsql_dp

_names = itertools.count()

QUERIES = (
    "SELECT COUNT(*) FROM t WHERE 1 / (salary - 50000) > 0",
    "SELECT SUM(1 / (salary - 50000)) FROM t",
    "SELECT SUM(sqrt(x)) FROM t",
    "SELECT COUNT(*) FROM t WHERE ln(x + 1) > 0",
    "SELECT COUNT(*), SUM(x) FROM t WHERE 1 / (salary - 50000) > 0 WITH RHO 0.5",
)


def _database(secret: bool, setting: str):
    name = f":memory:h63settings_{next(_names)}"
    cur = provsql_dp.connect(name)
    cur.autocommit = True
    cur.execute("CREATE TABLE t(id INT PRIMARY KEY, salary INT, x DOUBLE)")
    cur.execute("INSERT INTO t SELECT range, 40000 + range, range % 10 FROM range(100)")
    if secret:  # one participant earns 50 000 and holds x = -1
        cur.execute("INSERT INTO t VALUES (5000, 50000, -1)")
    cur.execute("PROTECT TABLE t; SET BOUNDS ON t (x) BETWEEN -10 AND 10")
    cur.execute("SET PRIVACY BUDGET 100; SET PRIVACY BUDGET 100 FOR USER 'ann'")
    cur.execute("SET PRIVACY BUDGET RHO 100 FOR USER 'zed'")
    cur.execute(setting)
    return name, cur


def _outcome(con, sql, user):
    con._rng = np.random.default_rng(1)
    before = con.ledger.remaining(user)
    try:
        cur = con.execute(sql if " WITH " in sql else f"{sql} WITH EPSILON 1")
        cur.fetchall()
        seen = ("answer",)
    except provsql_dp.Error as e:
        seen = (type(e).__name__, str(e))
    return seen, before - con.ledger.remaining(user)


def _outcomes(secret, setting, sql):
    name, curator = _database(secret, setting)
    user = "zed" if "RHO" in sql else "ann"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an analyst sharing the curator's configuration
        analyst = provsql_dp.connect(name, role="analyst", user=user)
    try:
        return {"analyst": _outcome(analyst, sql, user),
                "curator": _outcome(curator, sql.replace(" WITH RHO 0.5", ""), "default")}
    finally:
        analyst.close()
        curator.close()


SETTINGS = ("SET GLOBAL ieee_floating_point_ops = false", "SET GLOBAL integer_division = true",
            "SET ieee_floating_point_ops = false")


@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("sql", QUERIES)
def test_a_curators_setting_does_not_make_the_outcome_depend_on_the_data(setting, sql):
    without, with_ = _outcomes(False, setting, sql), _outcomes(True, setting, sql)
    assert without == with_, f"{setting}; {sql}\n  without: {without}\n  with: {with_}"


@pytest.mark.parametrize("setting", SETTINGS)
def test_refused_before_the_charge_naming_the_setting(setting):
    name, curator = _database(True, setting)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        analyst = provsql_dp.connect(name, role="analyst", user="ann")
    which = setting.split()[-3]
    for con, user in ((analyst, "ann"), (curator, "default")):
        if con is analyst and "GLOBAL" not in setting:
            continue  # a session setting stays on the curator's connection
        before = con.ledger.remaining(user)
        with pytest.raises(provsql_dp.OperationalError, match=f"{which}.*Nothing was charged"):
            con.execute(f"{QUERIES[0]} WITH EPSILON 1")
        assert con.ledger.remaining(user) == before
    analyst.close()
    curator.execute(f"RESET {'GLOBAL ' if 'GLOBAL' in setting else ''}{which}")
    curator.execute(f"{QUERIES[0]} WITH EPSILON 1").fetchall()  # answered once put back
    curator.close()


def test_the_defaults_answer():
    name, curator = _database(True, "SELECT 1")
    assert _outcome(curator, QUERIES[0], "default")[0] == ("answer",)
    curator.close()


def test_an_error_estimate_is_refused_too():
    """``EXPLAIN PRIVACY … ESTIMATE ERROR`` releases a noisy error of the statement's rows."""
    for secret in (False, True):
        _, curator = _database(secret, "SET ieee_floating_point_ops = false")
        before = curator.ledger.remaining("default")
        with pytest.raises(provsql_dp.OperationalError, match="ieee_floating_point_ops"):
            curator.execute(f"EXPLAIN PRIVACY {QUERIES[0]} WITH EPSILON 1 ESTIMATE ERROR "
                            "WITH EPSILON 0.5")
        assert curator.ledger.remaining("default") == before
        curator.close()
