"""Build ``pdp_buckets.duckdb_extension`` from its C source, reproducibly, from PyPI only.

The headers ``duckdb.h`` and ``duckdb_extension.h`` come from the PyPI source distribution of
the *installed* ``duckdb`` (``external/duckdb/src/include/``), fetched by the URL and sha256 of
PyPI's simple JSON index and checked against that sha256 before anything is read from it; no
header of DuckDB's is kept in this repository. The library is compiled by the system ``cc`` with
``-O2 -ffp-contract=off`` (no FMA contraction, no fast-math: the floating-point operations are
the SQL's), and DuckDB's extension footer is appended (:func:`footer`: the format of DuckDB's
``scripts/append_metadata.cmake``, read by ``ParseExtensionMetaData`` in
``src/main/extension/extension_load.cpp``; ABI type ``C_STRUCT``, C API ``v1.5.6``, unsigned).

The result is cached under ``$PROVSQL_DP_NATIVE_DIR`` (default ``~/.cache/provsql_dp/native``),
keyed by the duckdb version and a hash of the C source and the flags: :func:`built_path` is the
file when it is built, None otherwise (then every release takes the SQL path).

>>> f = footer("linux_amd64")   # read by DuckDB from the file's last 512 bytes
>>> len(f), f[:3], f[-288:-256].rstrip(b"\\x00"), f[-320:-288].rstrip(b"\\x00")
(534, b'\\x00\\x93\\x04', b'4', b'linux_amd64')
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import urllib.request
from pathlib import Path

import duckdb

from ._trust import cache_dirs, untrusted, written

__all__ = ["build", "built_path", "cache_dir", "footer", "headers", "verify", "checksum_path",
           "SOURCE", "CFLAGS", "sources"]

#: the C source, shipped with the package: one translation unit, ``pdp_buckets.c``, which
#: includes the other parts (``pdp_*.h``, beside it)
SOURCE = Path(__file__).with_name("pdp_buckets.c")


def sources() -> list[Path]:
    """Every file of the C source (the cache key covers them all), in a fixed order."""
    return sorted(SOURCE.parent.glob("pdp_*.[ch]"))
#: the compiler's flags: no FMA contraction, no fast-math (the SQL's operations exactly)
CFLAGS = ["-O2", "-ffp-contract=off", "-fno-fast-math", "-fPIC", "-shared", "-std=c11",
          "-Werror=implicit-function-declaration"]
#: the stable C API version the source is written against (DuckDB's duckdb_extension.h default)
CAPI_VERSION = "v1.5.6"
_NAME = "pdp_buckets.duckdb_extension"
_INDEX = "https://pypi.org/simple/duckdb/"


def cache_dir() -> Path:
    """Where built extensions are kept: ``$PROVSQL_DP_NATIVE_DIR`` or the user's cache."""
    env = os.environ.get("PROVSQL_DP_NATIVE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "provsql_dp" / "native"


def _key() -> str:
    h = hashlib.sha256()
    for path in sources():
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    h.update(" ".join(CFLAGS).encode())
    return f"duckdb-{duckdb.__version__}-{h.hexdigest()[:16]}"


def built_path() -> Path | None:
    """The built extension for the installed duckdb and this source, or None."""
    path = cache_dir() / _key() / _NAME
    return path if path.is_file() else None


def checksum_path(path: Path) -> Path:
    """Where :func:`build` records the sha256 of the extension ``path`` (beside it)."""
    return path.with_name(path.name + ".sha256")


def verify(path: Path) -> str | None:
    """None when ``path`` is the file :func:`build` wrote (its sha256 is the one recorded beside
    it) and may be loaded, else why not. DuckDB checks only the footer before ``dlopen``, and an
    extension damaged inside its code but with its footer intact killed the process (SIGBUS:
    red-team finding h64native-1). The checksum is a check against damage, not an attacker:
    whoever can write the cache can write the checksum too. So the file, its checksum and the
    cache's directories above it must also be this user's and writable by them only
    (:func:`~provsql_dp.privacy.native._trust.untrusted`, as ssh requires of its keys: red-team
    finding h73attack-3)."""
    why = untrusted(path, cache_dir(), (checksum_path(path),))
    if why is not None:
        return why
    try:
        want = checksum_path(path).read_text().strip()
        got = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as e:
        return f"damaged: no checksum recorded by the build ({e.strerror})"
    return None if got == want else "damaged: its sha256 is not the one its build recorded"


def footer(platform: str, version: str = CAPI_VERSION, abi: str = "C_STRUCT") -> bytes:
    """DuckDB's extension footer: a WebAssembly-style custom section ``duckdb_signature`` (id
    0, payload length 531 as LEB128, the name) — 8 fields of 32 bytes, written last to first (magic ``4``, platform, C API
    version, extension version, ABI type, three empty), then a 256-byte signature (empty: the
    extension is loaded with ``allow_unsigned_extensions``)."""
    fields = [b"4", platform.encode(), version.encode(), b"provsql_dp", abi.encode(), b"", b"", b""]
    for f in fields:
        if len(f) > 32:
            raise ValueError(f"extension metadata field too long: {f!r}")
    body = b"".join(f.ljust(32, b"\x00") for f in reversed(fields))
    return b"\x00" + bytes([147, 4, 16]) + b"duckdb_signature" + bytes([128, 4]) + body + bytes(256)


def _sdist(version: str, download: Path | None) -> bytes:
    """The sdist of duckdb ``version``, its sha256 checked against PyPI's index."""
    req = urllib.request.Request(_INDEX, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        index = json.load(r)
    name = f"duckdb-{version}.tar.gz"
    files = [f for f in index.get("files", []) if f.get("filename") == name]
    if not files or "sha256" not in files[0].get("hashes", {}):
        raise RuntimeError(f"PyPI's index lists no {name} with a sha256: cannot build the "
                           "native bucket pass for this duckdb version")
    want = files[0]["hashes"]["sha256"]
    kept = cache_dir() / name  # the verified sdist of an earlier build
    if download is None and kept.is_file():
        download = kept
    if download is not None and download.is_file():
        data = download.read_bytes()
    else:
        with urllib.request.urlopen(files[0]["url"], timeout=300) as r:
            data = r.read()
    got = hashlib.sha256(data).hexdigest()
    if got != want:
        raise RuntimeError(f"{name}: sha256 {got} is not PyPI's {want}; not built")
    if not kept.is_file():
        cache_dirs(kept, cache_dir())
        kept.with_suffix(".part").write_bytes(data)
        written(kept.with_suffix(".part"))
        os.replace(kept.with_suffix(".part"), kept)
    return data


def headers(dest: Path, sdist: str | os.PathLike | None = None) -> Path:
    """``duckdb.h`` and ``duckdb_extension.h`` of the installed duckdb's sdist (checked against
    PyPI's sha256), written into the folder ``dest``; returns ``dest``."""
    data = _sdist(duckdb.__version__, Path(sdist) if sdist else None)
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for header in ("duckdb.h", "duckdb_extension.h"):
            member = f"duckdb-{duckdb.__version__}/external/duckdb/src/include/{header}"
            (dest / header).write_bytes(tar.extractfile(member).read())
    return dest


def build(sdist: str | os.PathLike | None = None, cc: str | None = None, force: bool = False) -> Path:
    """Build (or find in the cache) the extension for the installed duckdb; its path.
    ``sdist``: a local copy of the sdist (still checked against PyPI's sha256); by default the
    one an earlier build kept in :func:`cache_dir`, else PyPI's."""
    path = cache_dir() / _key() / _NAME
    if path.is_file() and not force and verify(path) is None:
        return path
    cc = cc or os.environ.get("CC") or shutil.which("cc")
    if not cc:
        raise RuntimeError("no C compiler (cc) found: install one (e.g. apt-get install gcc)")
    platform = duckdb.connect().execute("PRAGMA platform").fetchone()[0]
    with tempfile.TemporaryDirectory() as tmp:
        inc = headers(Path(tmp) / "include", sdist)
        lib = Path(tmp) / _NAME
        done = subprocess.run([cc, *CFLAGS, "-I", str(inc), "-o", str(lib), str(SOURCE), "-lm"],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{cc} could not compile {SOURCE.name}:\n{done.stderr[-2000:]}")
        with open(lib, "ab") as f:
            f.write(footer(platform))
        cache_dirs(path, cache_dir())
        part = path.with_suffix(".part")
        shutil.copyfile(lib, part)
        # its checksum first (verify), then the file: each atomic, a reader sees whole files
        digest = hashlib.sha256(part.read_bytes()).hexdigest()
        checksum_path(part).write_text(digest + "\n")
        written(part, checksum_path(part))
        os.replace(checksum_path(part), checksum_path(path))
        os.replace(part, path)
    why = verify(path)  # a cache others can write is built into but never loaded (_trust)
    if why is not None:
        raise RuntimeError(f"built {path}, but it will not be loaded: {why}")
    return path
