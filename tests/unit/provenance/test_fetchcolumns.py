"""``DuckDBBackend.fetchcolumns`` returns exactly what ``fetchall`` returns, by column: numpy
arrays only for the types whose numpy form converts back exactly, tuples otherwise — checked on
random tables of every such type and a few others, with NULLs, NaNs, signed zeros, extremes."""

from __future__ import annotations

import math

import duckdb
import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from provsql_dp.provenance.backends.duckdb import _EXACT_IN_NUMPY, DuckDBBackend

_LITERALS = {
    "BOOLEAN": st.sampled_from(["true", "false"]),
    "TINYINT": st.integers(-128, 127).map(str),
    "SMALLINT": st.integers(-(1 << 15), (1 << 15) - 1).map(str),
    "INTEGER": st.integers(-(1 << 31), (1 << 31) - 1).map(str),
    "BIGINT": st.integers(-(1 << 63), (1 << 63) - 1).map(str),
    "UTINYINT": st.integers(0, 255).map(str),
    "UBIGINT": st.integers(0, (1 << 64) - 1).map(str),
    "FLOAT": st.floats(width=32).map(lambda x: f"'{x!r}'"),
    "DOUBLE": st.floats().map(lambda x: f"'{x!r}'"),
    "VARCHAR": st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=4)
    .map(lambda s: "'" + s.replace("'", "''") + "'"),
    "DATE": st.dates().map(lambda d: f"'{d.isoformat()}'"),
    "DECIMAL(9,2)": st.decimals(-10**6, 10**6, places=2).map(lambda d: f"'{d}'"),
    "HUGEINT": st.integers(-(1 << 100), 1 << 100).map(str),
}


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is b
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) ==
                                                      math.copysign(1, b))
    return a == b


@st.composite
def _tables(draw):
    types = draw(st.lists(st.sampled_from(sorted(_LITERALS)), min_size=1, max_size=3))
    n = draw(st.integers(0, 5))
    rows = [[draw(st.one_of(st.just("NULL"), _LITERALS[t])) for t in types] for _ in range(n)]
    return types, rows


@settings(max_examples=150, deadline=None)
@given(_tables())
@example((["BIGINT", "TINYINT", "DOUBLE"], [["-9223372036854775808", "-128", "'-0.0'"],
                                            ["NULL", "127", "'nan'"]]))
def test_columns_are_fetchall_by_column(table):
    types, rows = table
    con = duckdb.connect()
    cols = ", ".join(f"c{j} {t}" for j, t in enumerate(types))
    con.execute(f"CREATE TABLE t ({cols})")
    for row in rows:
        con.execute("INSERT INTO t VALUES (" + ", ".join(f"({v})::{t}" for v, t in zip(row, types))
                    + ")")
    sql = "SELECT * FROM t"
    expected = list(zip(*con.execute(sql).fetchall())) or [() for _ in types]
    got = DuckDBBackend(con).fetchcolumns(sql)
    assert len(got) == len(types)
    numpy_form = all(t in _EXACT_IN_NUMPY for t in types)
    for col, want in zip(got, expected):
        assert isinstance(col, np.ndarray) == numpy_form
        values = col.tolist() if isinstance(col, np.ndarray) else list(col)
        assert len(values) == len(want) and all(map(_same, values, want)), (values, want)


def test_repeated_names_take_the_tuples():
    con = duckdb.connect()
    got = DuckDBBackend(con).fetchcolumns("SELECT 1 AS a, 2 AS a")
    assert got == [(1,), (2,)]
