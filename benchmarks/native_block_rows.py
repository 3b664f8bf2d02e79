"""The native bucket pass's block code alone, per variant: ns a row on one thread (issue 28).

Compiles ``benchmarks/native_block_rows.c`` (which includes ``pdp_buckets.c``) against this
checkout's C source, or another's with ``--before``, with the extension's own flags
(``-O2 -ffp-contract=off``), and runs it: the unbounded SUM's direct path (signed, bounds
±1e12, θ 1, β 0.1) over ``--rows`` salary-like doubles (uniform integers in [0, 120000), as
``engine_speed_ab.py``'s table) in DuckDB's chunks of 2048, in random order and sorted; the
minimum over ``--reps`` runs of the CPU time per row, for each variant the CPU has (base,
SSE4.1, AVX2, AVX-512), then what ``same_state`` costs a row (DuckDB hands the aggregate 2048
state pointers a chunk, which the block path checks are one). Needs ``cc`` and the duckdb sdist
the native build keeps (``provsql-dp build-native`` first).

Usage::

    nice -n 19 python benchmarks/native_block_rows.py [--rows 10000000] [--reps 7]
        [--before /work/main] [--variant avx512] [--smoke]

``--smoke`` (tests/system/test_benchmarks_smoke.py): 20,000 rows, one run; it prints that it
skipped when there is no C compiler.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
from pathlib import Path

import duckdb

from provsql_dp.privacy.native import _build

HERE = Path(__file__).resolve().parent
DRIVER = HERE / "native_block_rows.c"


def compile_driver(native_dir: Path, out: Path, inc: Path) -> Path:
    """The driver built against the C source in ``native_dir``; its path."""
    flags = [f for f in _build.CFLAGS if f not in ("-shared", "-fPIC")]
    subprocess.run(["cc", *flags, "-I", str(inc), "-I", str(native_dir), "-o", str(out),
                    str(DRIVER), "-lm"], check=True)
    return out


def run(exe: Path, rows: int, reps: int, variant: str | None) -> dict[tuple[str, str], float]:
    """{(order, variant): ns a row} and {("same_state", name): ns a row}"""
    args = [str(exe), str(rows), str(reps)] + ([variant] if variant else [])
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    res = {}
    for line in out.splitlines():
        parts = line.split()
        if parts[0] in ("random", "sorted"):
            res[(parts[0], parts[1])] = float(parts[2])
        else:
            res[("same_state", parts[0])] = float(parts[1])
    return res


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10**7)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--before", type=Path, help="another checkout: its block code too")
    ap.add_argument("--variant", help="one variant only (base, sse41, avx2, avx512)")
    ap.add_argument("--smoke", action="store_true", help="a tiny run (the tests' smoke case)")
    args = ap.parse_args(argv)
    if args.smoke:
        args.rows, args.reps = 20_000, 1
    if shutil.which("cc") is None:
        print("no C compiler (cc): the block code cannot be built, nothing measured")
        return
    kept = _build.cache_dir() / f"duckdb-{duckdb.__version__}.tar.gz"
    with tempfile.TemporaryDirectory() as tmp:
        inc = _build.headers(Path(tmp) / "include", kept if kept.is_file() else None)
        codes = {"after": _build.SOURCE.parent}
        if args.before:
            codes = {"before": args.before / "provsql_dp" / "privacy" / "native", **codes}
        exes = {name: compile_driver(src, Path(tmp) / name, inc) for name, src in codes.items()}
        results = {name: run(exe, args.rows, args.reps, args.variant) for name, exe in exes.items()}
    keys = sorted({k for r in results.values() for k in r})
    print(f"block code alone, {args.rows:,} rows, min of {args.reps} runs, ns a row (CPU)")
    print(f"{'order':<11}{'variant':<20}" + "".join(f"{n:>9}" for n in results))
    for order, variant in keys:
        cells = "".join(f"{results[n].get((order, variant), float('nan')):>9.3f}" for n in results)
        print(f"{order:<11}{variant:<20}{cells}")


if __name__ == "__main__":
    main()
