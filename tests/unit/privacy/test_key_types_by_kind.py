"""``key_types.fits`` and ``value_type`` judge the set of the values' Python types (a pass in C)
instead of every value: checked against the obvious value-by-value rules on random lists of
every kind of value a route releases (subclasses, aware and naive datetimes, huge ints)."""

from __future__ import annotations

import datetime
import decimal
import enum
import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from provsql_dp.privacy import key_types
from provsql_dp.privacy.key_types import _DUCK, _PYTHON, fits, value_type
from provsql_dp.sql._typing import _parse_type


class Flag(enum.IntEnum):  # an int subclass: isinstance says int, as the old rule read it
    ON = 1


class When(datetime.datetime):  # a datetime subclass
    pass


_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-(1 << 70), 1 << 70), st.sampled_from([Flag.ON]),
    st.floats(allow_nan=True), st.text(max_size=3), st.dates(),
    st.datetimes(timezones=st.one_of(st.none(), st.just(datetime.timezone.utc))),
    st.builds(When, st.integers(2000, 2001), st.integers(1, 12), st.integers(1, 28)),
    st.timedeltas(), st.decimals(allow_nan=False, places=2), st.binary(max_size=2),
    st.uuids(), st.times())

_TYPES = ["INTEGER", "BIGINT", "HUGEINT", "DOUBLE", "DECIMAL(10,2)", "BOOLEAN", "VARCHAR",
          "DATE", "TIMESTAMP", "TIMESTAMP WITH TIME ZONE", "INTERVAL", "BLOB", "UUID", "TIME"]


def _fits_one_by_one(values, type_name):
    family = _parse_type(type_name).family
    want = _PYTHON.get(family)
    if want is None:
        return True
    for v in values:
        if v is None:
            continue
        if not isinstance(v, want) or isinstance(v, bool) != (family == "bool") or \
                family == "date" and isinstance(v, datetime.datetime) or \
                family.startswith("timestamp") and (v.tzinfo is None) != (family == "timestamp"):
            return False
    return True


def _value_type_one_by_one(values):
    kinds = set()
    for v in values:
        if v is None:
            continue
        name = next((n for t, n in _DUCK if isinstance(v, t)), None)
        if name == "TIMESTAMP" and v.tzinfo is not None:
            name = "TIMESTAMP WITH TIME ZONE"
        if name == "BIGINT" and not -(1 << 63) <= v < (1 << 63):
            name = "HUGEINT"
        kinds.add(name)
    if kinds == {"BIGINT", "HUGEINT"}:  # ints in and out of BIGINT's range: all fit HUGEINT
        kinds = {"HUGEINT"}
    if len(kinds) != 1 or None in kinds:
        return None
    return kinds.pop()


@settings(max_examples=400, deadline=None)
@given(st.lists(_VALUES, max_size=8), st.sampled_from(_TYPES))
def test_fits_is_the_value_by_value_rule(values, type_name):
    assert fits(values, type_name) == _fits_one_by_one(values, type_name)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.lists(_VALUES, max_size=8),
                 st.lists(st.one_of(st.none(), st.integers(-(1 << 65), 1 << 65)), max_size=6),
                 st.lists(st.one_of(st.none(), st.datetimes(timezones=st.one_of(
                     st.none(), st.just(datetime.timezone.utc)))), max_size=6)))
def test_value_type_is_the_value_by_value_rule(values):
    assert value_type(values) == _value_type_one_by_one(values)


def test_the_cases_by_name():
    aware = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
    naive = datetime.datetime(2020, 1, 1)
    assert value_type([aware, None]) == "TIMESTAMP WITH TIME ZONE"
    assert value_type([aware, naive]) is None
    assert value_type([1, 1 << 64]) == "HUGEINT" and value_type([Flag.ON, 2]) == "BIGINT"
    assert value_type([True, 1]) is None and value_type([uuid.uuid4()]) == "UUID"
    assert not fits([naive], "TIMESTAMP WITH TIME ZONE") and fits([aware], "TIMESTAMPTZ")
    assert not fits([When(2020, 1, 1)], "DATE") and fits([decimal.Decimal(1)], "DECIMAL(4,1)")
    assert key_types.fits([], "INTEGER") and value_type([None]) is None
