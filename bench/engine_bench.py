#!/usr/bin/env python3
"""Engine adapter benchmark: rank-captures per second through engines/vllm/r3_adapter.py.

  /usr/bin/python3 bench/engine_bench.py [--source tests/engines/fixtures/post50874]
      [--batches 8] [--cases 256] [--dp 2] [--tp 2] [--max-tokens 8192]
      [--tokens loguniform|uniform] [--seed 1] [--device cpu]

Starts the adapter (one process, CPU unless --device cuda), sends --batches
run requests of --cases generated cases each, and prints
{"rank_captures_per_s", "cases", "ranks", "seconds", ...}. The clock runs from
the first run request to the last reply (start-up and hello excluded);
"rank_captures_per_cpu_s" divides by the adapter's CPU time instead (steadier
on a shared machine).

The rank run lists are built here from the spec's dispatch rules
(shared/spec/vllm-routing-replay.md sections 3-4), kept simple: EP on or off,
SP when EP and dp, tp > 1, naive (all_gatherv over the EP group under SP,
else the DP group) or internal dispatch. Every answer is checked against the
rows the spec says DP rank d owns when the capture ran through branch 1 or 3
(naive dispatch), so a wrong adapter cannot produce a fast number.
Benchmark, not a test: nothing here is run by `meson test`.
"""
import argparse
import json
import math
import os
import pathlib
import random
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def cdiv(a, b):
    return (a + b - 1) // b


def append(runs, run):
    """Appends a run dict, merging contiguous runs like the protocol's run lists."""
    count = run.get("count", run.get("pad", 0))
    if count <= 0:
        return
    if runs:
        last = runs[-1]
        if "pad" in run and "pad" in last:
            last["pad"] += run["pad"]
            return
        if "dp" in run and "dp" in last and last["dp"] == run["dp"] and last["from"] + last["count"] == run["from"]:
            last["count"] += run["count"]
            return
    runs.append(dict(run))


def shard(d, n, t, tp):
    """sequence_parallel_chunk: DP rank d's n rows padded to a multiple of tp; shard t."""
    c = cdiv(n, tp)
    lo, hi = t * c, (t + 1) * c
    out = []
    append(out, {"dp": d, "from": lo, "count": max(0, min(hi, n) - lo)})
    append(out, {"pad": hi - max(lo, n)})
    return out


def plan(dp, tp, ep, sp_backend, dispatch, num_tokens, m, experts=256, layers=1):
    sp = ep and sp_backend and dp > 1 and tp > 1
    naive = dispatch == "naive" and (dp > 1 or sp)
    if sp:
        local_sizes = [cdiv(n, tp) for n in num_tokens for _ in range(tp)]
    else:
        local_sizes = list(num_tokens) if dp > 1 else None
    own = []  # what rank d*tp+t holds before dispatch
    for d in range(dp):
        for t in range(tp):
            own.append(shard(d, num_tokens[d], t, tp) if sp else [{"dp": d, "from": 0, "count": num_tokens[d]}])
    if naive:
        gathered = []
        members = range(dp * tp) if sp else [d * tp for d in range(dp)]
        for r in members:
            for run in own[r]:
                append(gathered, run)
        rows = [gathered] * (dp * tp)
    else:
        rows = own
    case = {
        "dp": dp, "tp": tp, "ep": ep, "sp": sp, "max_num_batched_tokens": m, "num_experts": experts, "top_k": 8,
        "num_layers": layers, "num_tokens_across_dp": list(num_tokens), "local_sizes": local_sizes,
        "ranks": [{"dp": r // tp, "tp": r % tp, "rows": rows[r]} for r in range(dp * tp)],
    }
    return case, naive


def gen_cases(rng, count, dp, tp, m, dist):
    out = []
    for _ in range(count):
        if dist == "uniform":
            tokens = [rng.randint(1, m) for _ in range(dp)]
        else:
            tokens = [min(m, int(math.exp(rng.uniform(0, math.log(m))))) for _ in range(dp)]
        if rng.random() < 0.3:  # CUDA-graph padding: all N equal
            tokens = [max(tokens)] * dp
        ep = rng.random() < 0.8
        dispatch = "naive" if rng.random() < 0.7 else "internal"
        out.append(plan(dp, tp, ep, True, dispatch, tokens, m))
    return out


def cpu_seconds(pid):
    """utime + stime of a process (Linux), or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", default=str(ROOT / "tests" / "engines" / "fixtures" / "post50874"))
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--batches", type=int, default=8)
    ap.add_argument("--cases", type=int, default=256)
    ap.add_argument("--dp", type=int, default=2)
    ap.add_argument("--tp", type=int, default=2)
    ap.add_argument("--max-tokens", type=int, default=8192)
    ap.add_argument("--tokens", choices=["loguniform", "uniform"], default="loguniform")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()

    rng = random.Random(args.seed)
    batches = [gen_cases(rng, args.cases, args.dp, args.tp, args.max_tokens, args.tokens) for _ in range(args.batches)]
    proc = subprocess.Popen(
        [args.python, str(ROOT / "engines" / "vllm" / "r3_adapter.py"), "--source", args.source, "--device", args.device],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )

    def ask(obj):
        proc.stdin.write(json.dumps(obj, separators=(",", ":")) + "\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
        if not line:
            sys.exit("adapter exited")
        reply = json.loads(line)
        if reply["type"] == "fatal":
            sys.exit("adapter: " + reply["error"])
        return reply

    hello = ask({"type": "hello", "protocol": 1})
    payloads = [json.dumps({"type": "run", "id": i, "cases": [c for c, _ in b]}, separators=(",", ":")) for i, b in enumerate(batches)]
    ranks = 0
    checked = 0
    cpu0 = cpu_seconds(proc.pid)
    start = time.perf_counter()
    replies = []
    for payload in payloads:
        proc.stdin.write(payload + "\n")
        proc.stdin.flush()
        replies.append(json.loads(proc.stdout.readline()))
    seconds = time.perf_counter() - start
    cpu1 = cpu_seconds(proc.pid)
    cpu = None if cpu0 is None or cpu1 is None else cpu1 - cpu0
    proc.stdin.write('{"type":"bye"}\n')
    proc.stdin.close()
    proc.wait()
    for batch, reply in zip(batches, replies):
        for (case, naive), res in zip(batch, reply["cases"]):
            ranks += len(res["ranks"])
            if not naive:
                continue
            for r in res["ranks"]:
                want = [{"dp": r["dp"], "from": 0, "count": case["num_tokens_across_dp"][r["dp"]]}]
                if r["error"] is None and r["captured"] != want:
                    sys.exit(f"wrong capture for {case} rank {r}")
                checked += 1
    print(json.dumps({
        "rank_captures_per_s": round(ranks / seconds, 1), "cases": args.batches * args.cases, "ranks": ranks,
        "seconds": round(seconds, 3),
        "rank_captures_per_cpu_s": None if not cpu else round(ranks / cpu, 1), "adapter_cpu_s": cpu,
        "checked_ranks": checked, "tokens": args.tokens, "dp": args.dp, "tp": args.tp,
        "max_tokens": args.max_tokens, "source": hello["source"], "interface": hello["interface"],
        "device": hello["device"],
    }))


if __name__ == "__main__":
    main()
