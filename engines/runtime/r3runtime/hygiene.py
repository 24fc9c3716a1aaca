"""stdio hygiene, before anything can print or read.

The protocol keeps private duplicates of the real stdin and stdout. File
descriptor 1 and sys.stdout go to stderr, so that a print() (or a C library
write to fd 1) inside engine code cannot break a reply; fd 0 and sys.stdin
read /dev/null, so that engine code that reads stdin (input(), breakpoint())
gets EOF at once instead of eating requests or hanging.
"""
import io
import os
import select
import sys


class Stdio:
    """The protocol's own ends: `reader` (binary lines) and `writer` (text)."""

    def __init__(self, reader, writer):
        self.reader = reader
        self.writer = writer


def take_stdio():
    """Call once, first thing in an adapter's __main__."""
    proto_out = os.dup(1)
    proto_in = os.dup(0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)))
    reader = io.BufferedReader(io.FileIO(proto_in, "r"))
    writer = os.fdopen(proto_out, "w", encoding="utf-8")
    return Stdio(reader, writer)


def drain_stdin(stdio, seconds):
    """Reads what the client already sent, so that it does not meet a closed pipe."""
    try:
        ready, _, _ = select.select([stdio.reader], [], [], seconds)
        if ready:
            os.read(stdio.reader.fileno(), 1 << 16)
    except Exception:
        pass
