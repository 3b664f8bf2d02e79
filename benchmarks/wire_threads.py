"""Benchmark: cancelling a statement from a thread of a psycopg client — ``Connection.cancel()``
against ``cancel_safe()``, with the wire server in the client's process and in its own (issue 30).

What it runs
------------
A small database (``pub``: 3,000 public rows; ``emp``: 200 protected rows; analyst ``ann``). A
thread of the client runs a long public statement (a 3-way self-join of ``pub``, ~30 s alone);
one second later the main thread cancels it, by one of:

* ``in-process, cancel()``: the server (``WireServer``) runs in the client's own Python process,
  the cancel is psycopg's ``Connection.cancel()`` — it blocks in libpq holding the GIL, so the
  server cannot answer the CancelRequest: the process freezes (killed after ``--timeout`` s);
* ``in-process, cancel_safe()``: the same with psycopg's non-blocking cancel;
* ``own process, cancel()``: the server is ``provsql-dp serve`` in a process of its own.

Each mode runs in a child process (a frozen one is killed). Per mode: medians over ``--repeat``
runs of the time ``cancel*()`` took to return and of the time until the statement ended with
QueryCanceled, and how many runs froze. The machine's load average is printed.

Usage: ``python benchmarks/wire_threads.py [--repeat 3] [--timeout 20]``; ``--smoke``: one
run per mode, 4 s timeout.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

SLOW = "SELECT COUNT(*) FROM pub a, pub b, pub c WHERE (a.x * 7 + b.x * 13 + c.x) % 1000003 = 1"
PASSWORD = "ann-password"
MODES = {"inproc-cancel": "in-process, cancel()", "inproc-safe": "in-process, cancel_safe()",
         "own-cancel": "own process, cancel()"}


def build(path: str) -> None:
    import provsql_dp
    from provsql_dp.interfaces.web import accounts

    con = provsql_dp.connect(path)
    con.execute("CREATE TABLE emp(id INT PRIMARY KEY, salary DOUBLE)")
    con.execute("INSERT INTO emp SELECT range, range * 10.0 FROM range(200)")
    con.execute("CREATE TABLE pub(x INT)")
    con.execute("INSERT INTO pub SELECT range FROM range(3000)")
    con.execute("PROTECT TABLE emp")
    con.execute("SET PRIVACY BUDGET 3 FOR USER 'ann'")
    accounts.add_account(con._duck, "ann", "analyst", PASSWORD)
    con.commit()
    con.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def child(mode: str, path: str) -> None:
    """One run of ``mode``; prints a JSON line (cancel seconds, statement-end seconds, error)."""
    import psycopg

    server = engine = proc = None
    if mode.startswith("inproc"):
        from provsql_dp.interfaces.pgwire import WireServer
        from provsql_dp.interfaces.web.engine import Engine

        engine = Engine(path)
        server = WireServer(engine, "127.0.0.1", 0).start()
        port = server.port
    else:
        port = _free_port()
        proc = subprocess.Popen([sys.executable, "-m", "provsql_dp.interfaces.cli", "serve", path,
                                 "--pg-port", str(port), "--port", str(_free_port())],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        while "wire server on" not in (proc.stdout.readline() or "wire server on"):
            pass
    try:
        c = psycopg.connect(f"host=127.0.0.1 port={port} user=ann password={PASSWORD} dbname=x",
                            autocommit=True)
        out = {}

        def run():
            try:
                c.execute(SLOW)
            except psycopg.Error as e:
                out["e"] = type(e).__name__
        t = threading.Thread(target=run)
        t.start()
        time.sleep(1.0)
        t0 = time.perf_counter()
        (c.cancel_safe if mode == "inproc-safe" else c.cancel)()
        returned = time.perf_counter() - t0
        t.join(120)
        ended = time.perf_counter() - t0
        print(json.dumps({"cancel": returned, "ended": ended, "error": out.get("e")}), flush=True)
        c.close()
    finally:
        if server is not None:
            server.close()
            engine.close()
        if proc is not None:
            proc.terminate()
            proc.wait(30)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--smoke", action="store_true", help="one run per mode, 4 s timeout (CI)")
    ap.add_argument("--child", choices=list(MODES), help=argparse.SUPPRESS)
    ap.add_argument("--db", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    try:
        import psycopg  # noqa: F401
    except ImportError:
        print("skipped: psycopg is not installed (pip install '.[test]')")
        return 0
    if args.child:
        child(args.child, args.db)
        return 0
    if args.smoke:
        args.repeat, args.timeout = 1, 4.0
    tmp = tempfile.mkdtemp(prefix="pdp_wire_threads_")
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}; {args.repeat} run(s) per "
          f"mode, a frozen run killed after {args.timeout:g} s")
    print(f"{'mode':28} {'cancel returns':>15} {'statement ends':>15} {'outcome':>14} {'froze':>6}")
    ok = True
    for mode, label in MODES.items():
        cancels, ends, outcomes, froze = [], [], set(), 0
        for i in range(args.repeat):
            path = os.path.join(tmp, f"{mode}{i}.duckdb")
            build(path)
            try:
                done = subprocess.run([sys.executable, __file__, "--child", mode, "--db", path],
                                      capture_output=True, text=True, timeout=args.timeout + 1.0)
                line = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
                if not line:
                    raise RuntimeError(done.stderr[-2000:])
                r = json.loads(line)
                cancels.append(r["cancel"])
                ends.append(r["ended"])
                outcomes.add(r["error"])
            except subprocess.TimeoutExpired:
                froze += 1
        med = (lambda xs: f"{statistics.median(xs) * 1000:12.0f} ms" if xs else f"{'-':>15}")
        outcome = ",".join(sorted(map(str, outcomes))) or "-"
        print(f"{label:28} {med(cancels):>15} {med(ends):>15} {outcome:>14} {froze:>3}/{args.repeat}",
              flush=True)
        if mode != "inproc-cancel":
            ok = ok and froze == 0 and outcomes == {"QueryCanceled"}
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
