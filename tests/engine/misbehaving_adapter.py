#!/usr/bin/env python3
"""A protocol-1 adapter that misbehaves on purpose, one way per --mode.

(Mode two-processes behaves, and claims a torchrun world of 2 processes with
real TP collectives for cases of TP <= 2; it captures nothing.)

The sizing modes load "sizing code" (the hello's optional "sizing") and
capture every rank's own rows correctly, so that only the replay buffer
decides the verdict: sizing-fits reports a buffer of 2^20 rows per rank;
sizing-raises vLLM's pre-#50874 buffer of M rows and its ValueError when the
kernel gets more; sink-short the sink era's M rows handed to the kernel as a
silently short slice; sizing-undeclared reports rows with no sizing in its
hello; sizing-missing loads sizing code and reports no rows.

r3check must turn each misbehaviour into a one-line error and exit 2, never
a verdict. Plain Python, no torch: the engine tests drive it as exec:CMD.
"""
import json
import sys
import time

MODE = sys.argv[sys.argv.index("--mode") + 1]


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


SIZING = MODE.startswith("sizing-") or MODE == "sink-short"


def hello():
    msg = {"type": "hello", "protocol": 2 if MODE == "wrong-protocol" else 1,
           "engine": "fake", "source": "/dev/null", "sha256": "0" * 64,
           "engine_version": "test", "interface": "none", "device": "cpu",
           "world_size": 2 if MODE == "two-processes" else 1,
           "backend": "gloo" if MODE == "two-processes" else "none"}
    if SIZING and MODE != "sizing-undeclared":
        sink = MODE == "sink-short"
        msg["sizing"] = {
            "source": "/fake/routed_experts_capturer.py" if sink else "/fake/modular_kernel.py",
            "sha256": "0123456789abcdef" * 4, "kind": "sink" if sink else "monolithic",
            "interface": "RoutedExpertsSink(moe_config, capture_fn)" if sink
            else "FusedMoEExpertsMonolithic.set_capture_fn(fn)"}
    send(msg)


def sized_rank(case, rank):
    """A correct capture (the rank's own rows), and the mode's replay buffer."""
    out = good_rank(rank)
    tokens = case["num_tokens_across_dp"][rank["dp"]]
    out["captured"] = [{"dp": rank["dp"], "from": 0, "count": tokens}] if tokens else []
    n, m = out["n"], case["max_num_batched_tokens"]
    if MODE == "sizing-missing":
        return out
    if MODE == "sizing-fits":
        out["replay_rows"] = 1 << 20
    elif MODE in ("sizing-raises", "sizing-undeclared"):
        out["replay_rows"] = m
        if n > m:
            out["replay_error"] = {
                "type": "ValueError",
                "message": "Routing replay buffer was initialized for %d tokens on cpu, but the "
                           "kernel received %d tokens on cpu." % (m, n)}
    elif MODE == "sink-short":
        out["replay_rows"] = m
        out["kernel_slice_rows"] = min(n, m)
    return out


def good_rank(rank):
    return {"dp": rank["dp"], "tp": rank["tp"], "n": sum(r.get("count", r.get("pad", 0))
                                                           for r in rank["rows"]),
            "error": None, "captured": [], "tp_gather": False, "stray": 0, "undecodable": 0}


def reply(request):
    cases = []
    for case in request["cases"]:
        ranks = [sized_rank(case, r) if SIZING else good_rank(r) for r in case["ranks"]]
        if MODE == "wrong-ranks":
            ranks = ranks[:-1]
        if MODE == "bad-owner":
            ranks[0]["captured"] = [{"dp": case["dp"], "from": 0, "count": 1}]
        if MODE == "bad-type":
            ranks[0]["n"] = "ten"
        if MODE == "wrong-n":
            ranks[0]["n"] += 1
        collective = "real" if MODE == "two-processes" and case["tp"] <= 2 else "emulated"
        cases.append({"collective": collective, "buffer_dtype": "int32", "ranks": ranks})
    if MODE == "wrong-cases":
        cases = cases[:-1]
    send({"type": "result", "id": request["id"] + (1 if MODE == "wrong-id" else 0),
          "cases": cases})


if MODE == "crash-at-start":
    sys.exit(3)
if MODE == "fatal-at-start":
    send({"type": "fatal", "error": "cannot load the engine: test says no"})
    sys.exit(1)
if MODE == "garbage-hello":
    print("Traceback (most recent call last): nonsense")
    sys.stdout.flush()
    time.sleep(30)
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        hello()
    elif msg["type"] == "bye":
        sys.exit(0)
    elif MODE == "crash-on-run":
        sys.exit(1)
    elif MODE == "hang-on-run":
        time.sleep(60)
    elif MODE == "input-on-run":
        # Engine code that stops in breakpoint() or input(): it reads the
        # protocol's stdin, where no more lines come.
        sys.stdin.readline()
    elif MODE == "huge-line":
        sys.stdout.write("x" * (5 << 20) + "\n")
        sys.stdout.flush()
        time.sleep(60)
    elif MODE == "endless-line":
        while True:
            sys.stdout.write("\0" * 65536)
    elif MODE == "garbage-on-run":
        print("{not json")
        sys.stdout.flush()
    elif MODE == "fatal-on-run":
        send({"type": "fatal", "error": "engine module raised SystemError at import"})
        sys.exit(1)
    else:
        reply(msg)
