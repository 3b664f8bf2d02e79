"""The ``provsql-dp`` command: ``demo`` runs the main job on the embedded example database.

>>> main(["--version"])
provsql_dp 0.1.0
0
"""

from __future__ import annotations

import argparse
import sys

from . import __version__

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="provsql-dp", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command")
    demo = sub.add_parser("demo", help="private answers next to true answers on the bundled example database")
    demo.add_argument("--epsilon", type=float, default=1.0, help="ε per query (default 1.0)")
    args = parser.parse_args(argv)
    if args.version:
        print(f"provsql_dp {__version__}")
        return 0
    if args.command == "demo":
        from .demo import run

        if not args.epsilon > 0:
            parser.error("--epsilon must be positive")
        run(epsilon=args.epsilon)
        return 0
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
