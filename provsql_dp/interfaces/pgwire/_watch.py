"""Watching a wire client while its statement runs: a client that closes its connection (or
sends Terminate) stops the statement, as a CancelRequest does."""

from __future__ import annotations

import os
import select
import socket
import ssl
import threading

__all__ = ["watch_disconnect"]


def watch_disconnect(session, done: threading.Event) -> None:
    """Until ``done`` is set, cancel ``session``'s statement when its client goes away; return at
    the client's next message (it is read after this statement), nothing consumed."""
    raw = session.sock
    while not done.wait(0.05):
        try:
            readable, _, _ = select.select([raw], [], [], 0)
            if not readable:
                continue
            if isinstance(raw, ssl.SSLSocket):  # peek at the encrypted stream (nothing consumed)
                with socket.socket(fileno=os.dup(raw.fileno())) as dup:
                    peek = dup.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
                peek = peek or b""
                if peek:
                    return
            else:
                peek = raw.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            continue
        except OSError:
            peek = b""
        if peek in (b"", b"X"):
            session.cancel()
        return  # data: the client's next message (read after this statement)
