#!/usr/bin/env python3
"""Engine adapter benchmark: rank-captures per second through engines/vllm/r3_adapter.py.

  /usr/bin/python3 bench/engine_bench.py [--source tests/engines/fixtures/post50874]
      [--batches 8] [--cases 256] [--dp 2] [--tp 2] [--max-tokens 8192]
      [--tokens loguniform|uniform] [--seed 1] [--device cpu] [--sizing FILE]
      [--repeat 3] [--no-profile] [--save-replies FILE]

Starts the adapter (one process, CPU unless --device cuda), sends --batches
run requests of --cases generated cases each, and prints
{"rank_captures_per_s", "cases", "ranks", "seconds", ...}. The clock runs from
the first run request to the last reply (start-up and hello excluded);
"rank_captures_per_cpu_s" divides by the adapter's CPU time instead (steadier
on a shared machine).

Each measurement runs --repeat times (a fresh adapter each) and the median
is printed ("runs" lists every one). Then, unless --no-profile, as many runs
with R3_ADAPTER_PROFILE=1: the adapter times its calls into the engine's own
code (the capturer's constructor and capture(), vLLM's replay sizing and
hand-off) and prints the totals to stderr at exit (r3runtime/profile.py).
"engine_share" is the time inside engine code over the time the adapter
spent on the run requests (both perf_counter, from a request's line read to
its reply written); "engine_seconds" and "adapter_seconds" split the
adapter's CPU time over the run requests by that share; medians of those
runs. Engine time includes the stand-ins the engine's code calls
(get_forward_context, the TP group), since they run inside its calls.
Profiled runs are not used for the throughput.

--save-replies FILE writes the reply lines of the first plain run, as the
adapter sent them, to FILE (to compare the adapter before/after a change;
R3_ADAPTER_SLOW=1 in the environment reaches the adapter).

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
import statistics
import subprocess
import sys
import tempfile
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


PROFILE_PREFIX = "r3_adapter profile: "


def run_once(args, payloads, profile, save=None):
    """One adapter process over all payloads: (hello, replies, seconds, cpu, profile totals or None)."""
    env = dict(os.environ)
    env.pop("R3_ADAPTER_PROFILE", None)
    if profile:
        env["R3_ADAPTER_PROFILE"] = "1"
    cmd = [args.python, args.adapter, "--source", args.source, "--device", args.device]
    if args.sizing:
        cmd += ["--sizing", args.sizing]
    with tempfile.TemporaryFile(mode="w+") as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True, env=env)

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
        lines = []
        cpu0 = cpu_seconds(proc.pid)
        start = time.perf_counter()
        for payload in payloads:
            proc.stdin.write(payload + "\n")
            proc.stdin.flush()
            lines.append(proc.stdout.readline())
        seconds = time.perf_counter() - start
        cpu1 = cpu_seconds(proc.pid)
        cpu = None if cpu0 is None or cpu1 is None else cpu1 - cpu0
        proc.stdin.write('{"type":"bye"}\n')
        proc.stdin.close()
        proc.wait()
        err.seek(0)
        totals = None
        for line in err:
            if line.startswith(PROFILE_PREFIX):
                totals = json.loads(line[len(PROFILE_PREFIX):])
    if profile and totals is None:
        sys.exit("adapter printed no profile totals with R3_ADAPTER_PROFILE=1")
    if save:
        with open(save, "w", encoding="utf-8") as f:
            f.writelines(lines)
    return hello, [json.loads(x) for x in lines], seconds, cpu, totals


def check(batches, replies):
    """Rank count, and ranks checked against the spec's rows (naive dispatch)."""
    ranks = 0
    checked = 0
    for batch, reply in zip(batches, replies):
        if reply.get("type") != "result":
            sys.exit(f"adapter: {reply}")
        for (case, naive), res in zip(batch, reply["cases"]):
            ranks += len(res["ranks"])
            if not naive:
                continue
            for r in res["ranks"]:
                want = [{"dp": r["dp"], "from": 0, "count": case["num_tokens_across_dp"][r["dp"]]}]
                if r["error"] is None and r["captured"] != want:
                    sys.exit(f"wrong capture for {case} rank {r}")
                checked += 1
    return ranks, checked


def load_average():
    try:
        with open("/proc/loadavg") as f:
            return [float(x) for x in f.read().split()[:3]]
    except (OSError, ValueError):
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", default=str(ROOT / "tests" / "engines" / "fixtures" / "post50874"))
    ap.add_argument("--sizing", default=None, help="passed to the adapter's --sizing")
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--adapter", default=str(ROOT / "engines" / "vllm" / "r3_adapter.py"),
                    help="the adapter to run (another checkout's, to compare)")
    ap.add_argument("--batches", type=int, default=8)
    ap.add_argument("--cases", type=int, default=256)
    ap.add_argument("--dp", type=int, default=2)
    ap.add_argument("--tp", type=int, default=2)
    ap.add_argument("--max-tokens", type=int, default=8192)
    ap.add_argument("--tokens", choices=["loguniform", "uniform"], default="loguniform")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement; the median is reported")
    ap.add_argument("--no-profile", action="store_true", help="skip the R3_ADAPTER_PROFILE=1 runs")
    ap.add_argument("--save-replies", default=None, metavar="FILE")
    args = ap.parse_args()

    rng = random.Random(args.seed)
    batches = [gen_cases(rng, args.cases, args.dp, args.tp, args.max_tokens, args.tokens) for _ in range(args.batches)]
    payloads = [json.dumps({"type": "run", "id": i, "cases": [c for c, _ in b]}, separators=(",", ":")) for i, b in enumerate(batches)]
    load_before = load_average()
    runs = []
    hello = None
    ranks = checked = 0
    for k in range(max(1, args.repeat)):
        hello, replies, seconds, cpu, _ = run_once(args, payloads, False, args.save_replies if k == 0 else None)
        ranks, checked = check(batches, replies)
        runs.append({"seconds": round(seconds, 3), "adapter_cpu_s": None if cpu is None else round(cpu, 3),
                     "rank_captures_per_s": round(ranks / seconds, 1),
                     "rank_captures_per_cpu_s": None if not cpu else round(ranks / cpu, 1)})
    profiled = []
    if not args.no_profile:
        for _ in range(max(1, args.repeat)):
            _, replies, seconds, cpu, totals = run_once(args, payloads, True)
            check(batches, replies)
            share = totals["engine_s"] / totals["busy_s"] if totals["busy_s"] > 0 else None
            profiled.append({"adapter_cpu_s": None if cpu is None else round(cpu, 3),
                             "engine_share": None if share is None else round(share, 3),
                             "engine_seconds": None if cpu is None or share is None else round(cpu * share, 3),
                             "adapter_seconds": None if cpu is None or share is None else round(cpu * (1 - share), 3),
                             "engine_wall_s": round(totals["engine_s"], 3), "busy_wall_s": round(totals["busy_s"], 3),
                             "engine_calls": totals["engine_calls"], "wall_s": round(seconds, 3)})

    def med(rows, key):
        vals = [r[key] for r in rows if r.get(key) is not None]
        return round(statistics.median(vals), 3) if vals else None

    out = {
        "rank_captures_per_s": med(runs, "rank_captures_per_s"), "cases": args.batches * args.cases, "ranks": ranks,
        "seconds": med(runs, "seconds"),
        "rank_captures_per_cpu_s": med(runs, "rank_captures_per_cpu_s"), "adapter_cpu_s": med(runs, "adapter_cpu_s"),
        "engine_seconds": med(profiled, "engine_seconds"), "adapter_seconds": med(profiled, "adapter_seconds"),
        "engine_share": med(profiled, "engine_share"),
        "checked_ranks": checked, "tokens": args.tokens, "dp": args.dp, "tp": args.tp,
        "max_tokens": args.max_tokens, "seed": args.seed, "source": hello["source"], "interface": hello["interface"],
        "sizing": (hello.get("sizing") or {}).get("kind"), "device": hello["device"],
        "load_average": {"before": load_before, "after": load_average()},
        "runs": runs, "profiled_runs": profiled,
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
