"""Which Spark snapshots are still read: a lease file per connection that reads one, so that a
curator who attaches a table again can remove the versions no open connection uses (issue 30).

A connection that reads the snapshot at ``path`` (its own attach, or one recorded in the catalog
and opened by :func:`provsql_dp.connect`) holds a *lease*: an empty file
``<path>.readers/<host>-<pid>-<random>`` beside the snapshot, created when it opens the snapshot
and removed when it stops reading it (it attaches the table again, or closes). A snapshot is
*in use* while a lease on it remains; a lease left by a process of this host that no longer
exists (a crash, a ``kill -9``) is stale and removed when found. A lease from another host
cannot be checked and keeps the snapshot (remove its file by hand once that host is gone).

Only snapshots on the local file system are tracked and removed (``file://`` or a plain path);
a snapshot elsewhere (HDFS, S3) has no lease and is left to the storage's own tools — the
catalog keeps its path in ``_provsql_dp.engine_snapshots_retired`` until then.

>>> import tempfile, os
>>> snap = os.path.join(tempfile.mkdtemp(), "v1")
>>> os.mkdir(snap)
>>> lease = take(snap)
>>> in_use(snap), os.path.basename(os.path.dirname(lease))
(True, 'v1.readers')
>>> release(lease)
>>> in_use(snap), remove(snap), os.path.exists(snap)
(False, True, False)
"""

from __future__ import annotations

import os
import shutil
import socket
import uuid

from ._spark_snapshot import _local as local  # a snapshot's local path, or None (HDFS, S3, …)

__all__ = ["take", "release", "in_use", "remove", "local"]

_SUFFIX = ".readers"


def take(path: str) -> str | None:
    """A lease on the snapshot at ``path`` (the lease file's path), None when it is not local."""
    where = local(path)
    if where is None:
        return None
    readers = where.rstrip("/") + _SUFFIX
    os.makedirs(readers, exist_ok=True)
    lease = os.path.join(readers, f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex}")
    with open(lease, "w"):
        pass
    return lease


def release(lease: str | None) -> None:
    """Give a lease back (nothing when there is none, or it is already gone)."""
    if lease is None:
        return
    try:
        os.remove(lease)
    except FileNotFoundError:
        pass


def in_use(path: str) -> bool:
    """Whether a connection still reads the snapshot at ``path`` (stale leases removed). A
    snapshot that is not local is always in use: nothing here can tell."""
    where = local(path)
    if where is None:
        return True
    readers = where.rstrip("/") + _SUFFIX
    try:
        names = os.listdir(readers)
    except FileNotFoundError:
        return False
    live = False
    for name in names:
        if _stale(name):
            release(os.path.join(readers, name))
        else:
            live = True
    return live


def remove(path: str) -> bool:
    """Remove the snapshot at ``path`` and its readers' folder unless a connection reads it;
    whether it is gone."""
    if in_use(path):
        return False
    where = local(path)
    shutil.rmtree(where, ignore_errors=True)
    shutil.rmtree(where.rstrip("/") + _SUFFIX, ignore_errors=True)
    return not os.path.exists(where)


def _stale(name: str) -> bool:
    """A lease of a process of this host that has ended."""
    parts = name.rsplit("-", 2)  # host (may hold dashes), pid, random
    if len(parts) != 3 or parts[0] != socket.gethostname() or not parts[1].isdigit():
        return False
    try:
        os.kill(int(parts[1]), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # a live process of another user
        return False
    return False
