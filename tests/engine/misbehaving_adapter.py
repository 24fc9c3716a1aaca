#!/usr/bin/env python3
"""A protocol-1 adapter that misbehaves on purpose, one way per --mode.

(Mode two-processes behaves, and claims a torchrun world of 2 processes with
real TP collectives for cases of TP <= 2; it captures nothing. Mode slow
behaves but takes 1/256 s per case, for verify's progress lines.)

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


def hello():
    send({"type": "hello", "protocol": 2 if MODE == "wrong-protocol" else 1,
          "engine": "fake", "source": "/dev/null", "sha256": "0" * 64,
          "engine_version": "test", "interface": "none", "device": "cpu",
          "world_size": 2 if MODE == "two-processes" else 1,
          "backend": "gloo" if MODE == "two-processes" else "none"})


def good_rank(rank):
    return {"dp": rank["dp"], "tp": rank["tp"], "n": sum(r.get("count", r.get("pad", 0))
                                                           for r in rank["rows"]),
            "error": None, "captured": [], "tp_gather": False, "stray": 0, "undecodable": 0}


def reply(request):
    cases = []
    for case in request["cases"]:
        ranks = [good_rank(r) for r in case["ranks"]]
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
    elif MODE == "garbage-on-run":
        print("{not json")
        sys.stdout.flush()
    elif MODE == "slow":
        # 1/256 s per case: r3check's batches of 256 generated cases take
        # about a second each, for the progress-line tests.
        time.sleep(len(msg["cases"]) / 256)
        reply(msg)
    elif MODE == "fatal-on-run":
        send({"type": "fatal", "error": "engine module raised SystemError at import"})
        sys.exit(1)
    else:
        reply(msg)
