"""The wire server's array parameters as PostgreSQL's clients write them (``_types``): the
text form with its quoting and spaces, and the binary form, read back as lists."""

from __future__ import annotations

import pytest

from provsql_dp.interfaces.pgwire._types import decode_param, encode_binary


@pytest.mark.parametrize("text, values", [
    (b"{1,NULL,3}", [1, None, 3]), (b"{ 1 , 2 }", [1, 2]), (b"{}", []), (b"{ }", []),
])
def test_array_parameters_in_text_read_as_postgresql_writes_them(text, values):
    assert decode_param(1007, text, 0) == values
    assert decode_param(1007, encode_binary(values, 1007), 1) == values
    assert decode_param(1009, b'{ "a b" , x ,"q\\"",""}', 0) == ["a b", "x", 'q"', ""]
