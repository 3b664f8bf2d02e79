"""Old Spark snapshot versions are removed once no open connection reads them (issue 30): each
reader holds a lease beside the snapshot; attaching a table again retires the version before and
removes every retired version without a live lease; a lease of a process that has ended does
not keep one."""

from __future__ import annotations

import os
import socket

import numpy as np
import pytest

import provsql_dp
from provsql_dp.errors import ProgrammingError
from provsql_dp.interfaces.dbapi.engines import vacuum_snapshots

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings("ignore:analyst connection")]


def _retired(con):
    return con._duck.execute("SELECT version, snapshot FROM _provsql_dp.engine_snapshots_retired "
                             "ORDER BY version").fetchall()


def test_old_versions_go_when_no_connection_reads_them(spark, tmp_path):
    spark.range(30).selectExpr("id", "id % 4 AS x").createOrReplaceTempView("ver_t")
    path = str(tmp_path / "ver.duckdb")
    v = [f"{path}.spark/t/v{i}" for i in (1, 2, 3, 4)]
    cur = provsql_dp.connect(path, engine=spark)
    cur.attach("t", "ver_t", primary_key=["id"])
    cur.execute("PROTECT TABLE t; SET PRIVACY BUDGET 10 FOR USER ann")
    cur.commit()
    ann = provsql_dp.connect(path, engine=spark, role="analyst", user="ann")  # reads v1
    with pytest.raises(ProgrammingError):
        vacuum_snapshots(ann)  # a curator's
    cur.attach("t", "ver_t", primary_key=["id"])  # v2: v1 is still read by ann
    assert os.path.isdir(v[0]) and os.path.isdir(v[1])
    assert _retired(cur) == [(1, v[0])]
    ann._rng = np.random.default_rng(1)
    assert isinstance(ann.execute("SELECT SUM(x) FROM t WITH EPSILON 1").fetchone()[0], float)
    ann.close()
    assert vacuum_snapshots(cur) == [v[0]]  # ann is gone: v1 goes
    assert not os.path.exists(v[0]) and not os.path.exists(v[0] + ".readers")
    assert _retired(cur) == []
    # a reader that ended without closing (its lease left behind) does not keep v2
    stale = os.path.join(v[1] + ".readers", f"{socket.gethostname()}-{2**22 + 12345}-dead")
    open(stale, "w").close()
    cur.attach("t", "ver_t", primary_key=["id"])  # v3; v2 (the curator's own) goes at once
    assert not os.path.exists(v[1]) and os.path.isdir(v[2]) and _retired(cur) == []
    # within an open transaction nothing is removed (a rollback could restore the record)
    cur.execute("BEGIN")
    assert cur._in_tx
    cur.attach("t", "ver_t", primary_key=["id"])
    assert os.path.isdir(v[2]) and _retired(cur) == [(3, v[2])]
    cur.commit()
    assert vacuum_snapshots(cur) == [v[2]]
    assert sorted(os.listdir(path + ".spark/t")) == ["v4", "v4.readers"]
    cur.close()
    assert os.listdir(v[3] + ".readers") == []  # the curator's lease given back on close
