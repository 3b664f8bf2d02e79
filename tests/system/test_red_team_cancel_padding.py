"""Red team h73attack, finding 5: a cancel told how long the padded work took.

``release_seconds`` pads every accepted release to a public duration, so that its running time
says nothing about the data. But a cancel (``con.cancel()``, the explorer's Cancel, a wire
client's CancelRequest or ``statement_timeout``) that arrived while the release still worked
ended it at once ("cancelled"), and one that arrived during the padding's sleep was ignored: the
answer came at the padded end. Cancelling at t thus told whether the work took less than t —
one bit of the time the padding hides, per statement, at a threshold of the analyst's choice.
Now a cancel during the padding ends the statement as a cancel during the work does.
"""

from __future__ import annotations

import threading
import time

import pytest

import provsql_dp
from provsql_dp.errors import StatementCancelled

PAD = 0.6
LONG_PAD = 4.0


def _connection():
    con = provsql_dp.connect(release_seconds=PAD)
    con.execute("CREATE TABLE t(id INT PRIMARY KEY, x DOUBLE)")
    con.execute("INSERT INTO t SELECT range, range % 10 FROM range(100)")
    con.execute("PROTECT TABLE t; SET PRIVACY BUDGET 10")
    return con


def test_a_cancel_during_the_padding_is_a_cancel():
    con = _connection()
    sql = "SELECT COUNT(*) FROM t WITH EPSILON 1"
    start = time.monotonic()
    con.execute(sql).fetchall()  # the work takes milliseconds; the padding the rest
    assert time.monotonic() - start >= PAD
    # a longer padding for the cancelled statement: the cancel still lands long after the work,
    # and the padded end (LONG_PAD) is seconds after it, a margin no busy neighbour eats up
    con.release_seconds = LONG_PAD
    timer = threading.Timer(PAD / 2, con.cancel)  # long after the work, well before the end
    timer.start()
    start = time.monotonic()
    with pytest.raises(StatementCancelled):
        con.execute(sql).fetchall()
    took = time.monotonic() - start
    timer.join()
    assert took < LONG_PAD * 0.9, f"the cancel waited for the padded end ({took:.2f} s)"
    assert con.ledger.remaining("default") == 8  # both charged: the cancel came after the charge
    con.close()
