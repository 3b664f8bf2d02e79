"""A table's columns are read in their order whatever the session's ``default_order`` (a curator's
``SET default_order = 'desc'`` reversed them: the ORDER BY of the catalog reads had no ASC)."""

import provsql_dp


def test_columns_in_table_order_under_a_descending_default():
    con = provsql_dp.connect()
    con.execute("CREATE TABLE t(a INT, b VARCHAR, c DOUBLE)")
    con.execute("SET default_order = 'desc'")
    info = con._catalog.find_table(["t"])
    assert info.columns == ("a", "b", "c")
    assert info.types == ("INTEGER", "VARCHAR", "DOUBLE")
    con.close()
