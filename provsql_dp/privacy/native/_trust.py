"""Whether a file of the native cache may be loaded into this process: the ssh rule for keys.

A build in the cache is machine code that ``LOAD`` (DuckDB) or a class loader (Spark) runs
inside the process that holds the protected data and the ledger. Its recorded sha256
(:func:`provsql_dp.privacy.native._build.verify`) protects against damage, not against another
account of the machine: whoever can write the cache can write the checksum too. So, as ssh does
for ``~/.ssh`` and its keys, a file is used only when it, its checksum and every directory from
the cache directory down to it are owned by the process's user (or root) and writable by nobody
else (no group or world write bit), and neither file is a symbolic link. Otherwise the caller
warns and runs the SQL pass: which pass runs depends on the installation, never on the data.

>>> import os, tempfile, pathlib
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> f = root / "lib.so"; _ = f.write_bytes(b"x"); os.chmod(root, 0o700); os.chmod(f, 0o644)
>>> untrusted(f, root) is None
True
>>> os.chmod(f, 0o666)
>>> untrusted(f, root).split(": ")[0].endswith("lib.so is writable by other users (mode 666)")
True
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["untrusted", "cache_dirs", "written"]


def untrusted(path: Path, top: Path, extra: tuple[Path, ...] = ()) -> str | None:
    """None when ``path`` (and the files ``extra``, e.g. its checksum) may be loaded: each, and
    every directory from ``top`` (the cache directory, included) down to ``path``'s, owned by
    this process's user or root and not writable by group or others, the files not symbolic
    links; else why not, with how to fix it. Not checked where there are no POSIX owners."""
    if os.name != "posix":  # pragma: no cover - no owners or mode bits to check
        return None
    path, top = Path(path), Path(top)
    try:
        rel = path.parent.relative_to(top)
    except ValueError:
        return f"{path} is not inside the native cache {top}"
    dirs = [top]
    for part in rel.parts:
        dirs.append(dirs[-1] / part)
    for f in (path, *extra):
        try:
            if stat.S_ISLNK(os.lstat(f).st_mode):
                return (f"{f} is a symbolic link: a file run in this process must be a regular "
                        "file of the cache (rebuild it: provsql-dp build-native --force)")
        except OSError:
            continue  # a missing file: the checksum check says so
    for p in (*dirs, path, *extra):
        try:
            st = os.stat(p)
        except OSError:
            continue
        why = _unsafe(st)
        if why is not None:
            fix = "chown it to this user" if why.startswith("is owned") else f"chmod go-w {p}"
            return (f"{p} {why}: a file run in this process, and the directories above it in "
                    f"the cache, must be this user's and writable by them only ({fix})")
    return None


def _unsafe(st: os.stat_result) -> str | None:
    me = os.geteuid()
    if st.st_uid not in (me, 0):
        return f"is owned by user id {st.st_uid}, not by this process's user ({me})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"is writable by other users (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def cache_dirs(path: Path, top: Path) -> None:
    """Create ``top`` (the cache directory) and the directories from it down to ``path``'s, each
    writable by this user only (mode 755 at most, whatever the umask: a umask of 002, usual
    where every user has their own group, would otherwise make them group-writable and the
    build :func:`untrusted`). Directories that exist are left as they are."""
    path, top = Path(path), Path(top)
    top.parent.mkdir(parents=True, exist_ok=True)
    d = top
    for part in (None, *path.parent.relative_to(top).parts):
        d = d if part is None else d / part
        if not d.is_dir():
            d.mkdir(exist_ok=True)
            os.chmod(d, 0o755)


def written(*files: Path) -> None:
    """Make freshly written cache files readable by all and writable by this user only (mode
    644, whatever the umask), before they are moved into place."""
    for f in files:
        os.chmod(f, 0o644)
