"""R3_ADAPTER_PROFILE=1: time spent inside the engine's own code.

A binding wraps each call into engine code (its capturer's constructor and
capture(), an engine's replay sizing and hand-off) in `engine_call`; nested
calls (a hand-off that reaches capture()) count once. The protocol loop
marks each run request from the moment its line is read to the moment its
reply is written ("busy": what the adapter spends on requests, waiting for
the client excluded). At exit the totals after the hello (the probe's
construction excluded) go to stderr as one line,

  r3_adapter profile: {"engine_s", "busy_s", "engine_calls", "runs", "process_cpu_s"}

which bench/engine_bench.py reads. All are time.perf_counter() seconds
(CPU-time clocks are system calls on some machines, and would cost more
than the calls they time), but process_cpu_s. Engine time includes the
stand-ins the engine's code calls. Off (the default), the bindings call
engine code directly and nothing is timed.
"""
import atexit
import json
import os
import sys
import time

ON = os.environ.get("R3_ADAPTER_PROFILE", "") not in ("", "0")

_clock = time.perf_counter
_engine = 0.0
_calls = 0
_depth = 0
_busy = 0.0
_runs = 0
_read_at = None
_cpu_at_hello = 0.0


def engine_call(fn, *args):
    """fn(*args), its time added to the engine's (outermost calls only)."""
    global _engine, _calls, _depth
    if _depth:
        return fn(*args)
    _depth = 1
    t0 = _clock()
    try:
        return fn(*args)
    finally:
        _engine += _clock() - t0
        _calls += 1
        _depth = 0


def hello_sent():
    """Totals from here on: the probe and start-up are not the runs'."""
    global _engine, _calls, _busy, _runs, _cpu_at_hello
    _engine, _calls, _busy, _runs = 0.0, 0, 0.0, 0
    _cpu_at_hello = time.process_time()


def request_read():
    global _read_at
    _read_at = _clock()


def reply_sent():
    global _busy, _runs, _read_at
    if _read_at is not None:
        _busy += _clock() - _read_at
        _runs += 1
        _read_at = None


def _report():
    line = {"engine_s": round(_engine, 6), "busy_s": round(_busy, 6), "engine_calls": _calls, "runs": _runs,
            "process_cpu_s": round(time.process_time() - _cpu_at_hello, 6)}
    try:
        sys.stderr.write("r3_adapter profile: " + json.dumps(line) + "\n")
        sys.stderr.flush()
    except Exception:
        pass


if ON:
    atexit.register(_report)
