#!/usr/bin/env python3
"""Fuzzing benchmark (docs/fuzzing.md): writes bench/results/fuzz.json.

  bench/fuzz_bench.py [--fuzz-build build-fuzz] [--r3check build-fuzzreplay/src/r3check]
                      [--limit-s 20] [--seeds 10] [--exec-s 10] [--mutants a,b]
  bench/fuzz_bench.py --table      # Markdown tables from bench/results/fuzz.json
  bench/fuzz_bench.py --exec-only  # re-measure part 1 only, keep the rest of the JSON

Every run uses the [libfuzzer] settings of fuzz/TARGET.options (dictionary,
max_len, use_counters, ...), as the overnight driver and ClusterFuzzLite do.
1. exec/s of each libFuzzer target (one process, seed corpus, --exec-s s;
   the median of --exec-repeats runs, each with the 1-minute load average).
2. For every non-equivalent host mutant: time to first detection by the
   layout target (one process, custom mutator, dictionary) over --seeds
   libFuzzer seeds, per start corpus:
     empty       - nothing: the mutator starts from fresh small cases;
     seeds       - corpus/seeds (several seeds kill each mutant outright);
     seeds-pass  - the seeds that PASS under the mutant: the mutator has
                   to walk from passing cases to a failing one.
   Each run stops at --limit-s; wall time includes start-up.
3. The minimizer on the smallest failing seed for each mutant.
Benchmarks, not tests: nothing here is run by `meson test`.
"""
import argparse
import datetime
import json
import os
import pathlib
import re
import resource
import shutil
import statistics
import subprocess
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def options_flags(target):
    """The [libfuzzer] section of fuzz/TARGET.options as flags: the settings
    the overnight driver and ClusterFuzzLite run the target with."""
    flags, section = [], None
    for line in (ROOT / "fuzz" / f"{target}.options").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line.startswith("["):
            section = line.strip("[]")
        elif "=" in line and section == "libfuzzer":
            key, value = (part.strip() for part in line.split("=", 1))
            if key == "dict":
                value = str(ROOT / "fuzz" / value)
            flags.append(f"-{key}={value}")
    return flags


def host_mutants(r3check):
    out = subprocess.run([r3check, "mutants"], capture_output=True, text=True, check=True).stdout
    names = []
    for line in out.split("systems under test")[0].splitlines()[1:]:
        words = line.split()
        if words and "[equivalent]" not in line and "[gpu only]" not in line:
            names.append(words[0])
    return names


def fails(r3check, mutant, case):
    return subprocess.run([r3check, "check", "--mutant", mutant, str(case)],
                          capture_output=True).returncode == 1


def exec_rate_once(fuzzer, target, corpus, seconds):
    with tempfile.TemporaryDirectory() as work:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run(
            [fuzzer, *options_flags(target), f"-max_total_time={seconds}",
             "-seed=1", "-print_final_stats=1", work, str(corpus)],
            capture_output=True, text=True).stderr
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    runs = int(re.search(r"stat::number_of_executed_units:\s*(\d+)", out).group(1))
    cov = re.findall(r"cov: (\d+)", out)
    # CPU seconds of the fuzzer itself: on a shared machine the wall-clock
    # rate also measures the neighbours.
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"execs": runs, "exec_per_s": round(runs / seconds),
            "exec_per_cpu_s": round(runs / cpu) if cpu > 0 else None,
            "final_cov": int(cov[-1]) if cov else None,
            "load_avg_1m": round(os.getloadavg()[0], 2)}


def exec_rate(fuzzer, target, corpus, seconds, repeats=3):
    """The median of `repeats` runs (the machine is shared), each run kept."""
    runs = [exec_rate_once(fuzzer, target, corpus, seconds) for _ in range(repeats)]
    mid = sorted(runs, key=lambda r: r["exec_per_s"])[len(runs) // 2]
    cpu_rates = sorted(r["exec_per_cpu_s"] for r in runs if r["exec_per_cpu_s"])
    return {"target": target, "seconds": seconds, "execs": mid["execs"],
            "exec_per_s": mid["exec_per_s"],
            "exec_per_cpu_s": cpu_rates[len(cpu_rates) // 2] if cpu_rates else None,
            "final_cov": mid["final_cov"], "runs": runs}


def detect(fuzzer, mutant, seed, corpus_dirs, limit_s):
    with tempfile.TemporaryDirectory() as work:
        env = dict(os.environ, R3_FUZZ_MUTANT=mutant, R3_FUZZ_SUT="vllm-post-50874",
                   R3_FUZZ_POLICY="pr50874")
        args = [fuzzer, *options_flags("layout"),
                f"-seed={seed}", f"-max_total_time={limit_s}", f"-artifact_prefix={work}/",
                "-print_final_stats=1",
                f"{work}/corpus"] + [str(d) for d in corpus_dirs]
        os.mkdir(f"{work}/corpus")
        start = time.monotonic()
        proc = subprocess.run(args, env=env, capture_output=True, text=True)
        wall = time.monotonic() - start
        crashes = [p for p in os.listdir(work) if p.startswith("crash-")]
        found = proc.returncode == 1 and bool(crashes)
        crash_text = None
        units = re.search(r"stat::number_of_executed_units:\s*(\d+)", proc.stderr)
        execs = int(units.group(1)) if units else None
        if found:
            crash_text = pathlib.Path(work, crashes[0]).read_text(errors="replace")
    return {"seed": seed, "found": found, "wall_s": round(wall, 3), "execs": execs,
            "crash": crash_text}


def summarize(runs, limit_s):
    times = [r["wall_s"] for r in runs if r["found"]]
    execs = [r["execs"] for r in runs if r["found"] and r["execs"] is not None]
    return {"detected": len(times), "runs": len(runs), "limit_s": limit_s,
            "median_s": round(statistics.median(times), 3) if times else None,
            "max_s": round(max(times), 3) if times else None,
            "median_execs": statistics.median(execs) if execs else None,
            "max_execs": max(execs) if execs else None,
            "runs_detail": [{k: r[k] for k in ("seed", "found", "wall_s", "execs")}
                            for r in runs]}


def print_table(path):
    """The Markdown tables of docs/fuzzing.md, from a results file."""
    r = json.loads(pathlib.Path(path).read_text())
    print("| target | exec/s (1 process, ASan+UBSan; median) | exec per CPU s (median) "
          "| runs: exec/s, per CPU s (load average) | final cov |")
    print("|---|---:|---:|---|---:|")
    for e in r["exec_rate"]:
        runs = ", ".join(f"{x['exec_per_s']}, {x.get('exec_per_cpu_s')} ({x['load_avg_1m']})"
                         for x in e.get("runs", []))
        print(f"| {e['target']} | {e['exec_per_s']} | {e.get('exec_per_cpu_s')} | {runs} "
              f"| {e['final_cov']} |")
    print()
    print(f"Detection by the layout target, {r['libfuzzer_seeds']} libFuzzer seeds per cell, "
          f"limit {r['limit_s']} s per run; wall time includes ~{r['startup_s']} s start-up. "
          "Cells: detected/runs, median / max seconds, median / max executions.")
    print()
    starts = ["empty", "seeds", "seeds-pass"]
    heads = ["empty corpus", "seed corpus", "passing seeds only"]
    if "bytes-only empty" in r["mutants"][0]["detection"]:
        starts += ["bytes-only empty", "bytes-only seeds-pass"]
        heads += ["bytes only: empty", "bytes only: passing seeds"]
    print("| mutant | " + " | ".join(heads) + " |")
    print("|---" * (len(heads) + 1) + "|")
    for m in r["mutants"]:
        cells = []
        for start in starts:
            d = m["detection"][start]
            cells.append(f"{d['detected']}/{d['runs']}: {d['median_s']} / {d['max_s']} s, "
                         f"{d['median_execs']:g} / {d['max_execs']} execs"
                         if d["detected"] else f"0/{d['runs']}")
        print(f"| {m['mutant']} | " + " | ".join(cells) + " |")
    print()
    print("| mutant | smallest killing seed | minimal case (r3case lines) | steps / tried | ms |")
    print("|---|---|---|---|---:|")
    for m in r["mutants"]:
        mz = m.get("minimizer")
        if not mz:
            print(f"| {m['mutant']} | none | | | |")
            continue
        case = mz["minimal_case"].splitlines()[1:]
        print(f"| {m['mutant']} | {mz['input']} | `{'; '.join(case)}` | "
              f"{mz['steps']} / {mz['tried']} | {mz['wall_ms']} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fuzz-build", default=str(ROOT / "build-fuzz"))
    ap.add_argument("--r3check", default=str(ROOT / "build-fuzzreplay" / "src" / "r3check"))
    ap.add_argument("--limit-s", type=int, default=20)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--exec-s", type=int, default=10)
    ap.add_argument("--exec-repeats", type=int, default=3,
                    help="exec/s runs per target; the median is reported")
    ap.add_argument("--mutants", default="")
    ap.add_argument("--ablation-seeds", type=int, default=3,
                    help="seeds for layout_fuzzer_bytes (no custom mutator); 0 skips it")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "fuzz.json"))
    ap.add_argument("--table", action="store_true", help="print --out as Markdown and exit")
    ap.add_argument("--exec-only", action="store_true",
                    help="measure exec/s only and update that part of --out")
    args = ap.parse_args()
    if args.table:
        print_table(args.out)
        return
    if args.exec_only:
        result = json.loads(pathlib.Path(args.out).read_text())
        result["exec_rate"] = [
            exec_rate(f"{args.fuzz_build}/fuzz/layout_fuzzer", "layout", ROOT / "corpus" / "seeds",
                      args.exec_s, args.exec_repeats),
            exec_rate(f"{args.fuzz_build}/fuzz/parser_fuzzer", "parser",
                      ROOT / "corpus" / "fuzz-parser", args.exec_s, args.exec_repeats)]
        result["exec_rate_date"] = datetime.date.today().isoformat()
        pathlib.Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
        print(json.dumps(result["exec_rate"]))
        return
    # Private copies: a rebuild during the (long) run must not swap binaries.
    bin_dir = tempfile.mkdtemp(prefix="r3-fuzz-bench-")
    layout = shutil.copy(f"{args.fuzz_build}/fuzz/layout_fuzzer", bin_dir)
    parser = shutil.copy(f"{args.fuzz_build}/fuzz/parser_fuzzer", bin_dir)
    args.r3check = shutil.copy(args.r3check, bin_dir)
    bytes_only = None
    if args.ablation_seeds > 0:
        bytes_only = shutil.copy(f"{args.fuzz_build}/fuzz/layout_fuzzer_bytes", bin_dir)
    seeds_dir = ROOT / "corpus" / "seeds"
    seeds = sorted(seeds_dir.glob("*.r3case"))
    mutants = args.mutants.split(",") if args.mutants else host_mutants(args.r3check)

    result = {"machine": f"{os.cpu_count()} cores (shared)",
              "clang": subprocess.run(["clang++", "--version"], capture_output=True,
                                      text=True).stdout.splitlines()[0],
              "limit_s": args.limit_s, "libfuzzer_seeds": args.seeds,
              "exec_rate": [exec_rate(layout, "layout", seeds_dir, args.exec_s,
                                      args.exec_repeats),
                            exec_rate(parser, "parser", ROOT / "corpus" / "fuzz-parser",
                                      args.exec_s, args.exec_repeats)],
              "mutants": []}
    # Start-up (ASan runtime, corpus load) is in every detection time below.
    with tempfile.TemporaryDirectory() as empty:
        start = time.monotonic()
        subprocess.run([layout, *options_flags("layout"), "-runs=0", empty], capture_output=True)
        result["startup_s"] = round(time.monotonic() - start, 3)
    print(json.dumps(result["exec_rate"]), result["startup_s"], flush=True)
    for mutant in mutants:
        killers = [s for s in seeds if fails(args.r3check, mutant, s)]
        passing = [s for s in seeds if s not in killers]
        entry = {"mutant": mutant, "killing_seeds": [s.name for s in killers], "detection": {}}
        with tempfile.TemporaryDirectory() as tmp:
            pass_dir = pathlib.Path(tmp, "seeds-pass")
            pass_dir.mkdir()
            for s in passing:
                shutil.copy(s, pass_dir)
            starts = {"empty": [], "seeds": [seeds_dir], "seeds-pass": [pass_dir]}
            for name, dirs in starts.items():
                runs = [detect(layout, mutant, seed, dirs, args.limit_s)
                        for seed in range(1, args.seeds + 1)]
                entry["detection"][name] = summarize(runs, args.limit_s)
                example = next((r["crash"] for r in runs if r["found"]), None)
                if example is not None and "example_crash" not in entry:
                    entry["example_crash"] = example
                    entry["example_crash_from"] = name
                d = entry["detection"][name]
                print(f"{mutant} {name}: {d['detected']}/{d['runs']} median {d['median_s']} "
                      f"max {d['max_s']} execs {d['median_execs']}/{d['max_execs']}", flush=True)
            # Baseline: byte mutations only (same dictionary), fewer seeds.
            if bytes_only is not None:
                for name in ("empty", "seeds-pass"):
                    runs = [detect(bytes_only, mutant, seed, starts[name], args.limit_s)
                            for seed in range(1, args.ablation_seeds + 1)]
                    entry["detection"]["bytes-only " + name] = summarize(runs, args.limit_s)
                    d = entry["detection"]["bytes-only " + name]
                    print(f"{mutant} bytes-only {name}: {d['detected']}/{d['runs']} median "
                          f"{d['median_s']} max {d['max_s']}", flush=True)
        # The minimizer on the smallest failing seed (fewest ranks, then rows).
        if killers:
            def size(path):
                text = path.read_text()
                get = lambda k: [int(x) for x in re.search(rf"^{k} (.*)$", text, re.M).group(1).split()]
                return (get("dp")[0] * get("tp")[0], sum(get("tokens")), path.name)
            smallest = min(killers, key=size)
            start = time.monotonic()
            out = subprocess.run([args.r3check, "minimize", "--mutant", mutant, str(smallest)],
                                 capture_output=True, text=True)
            ms = (time.monotonic() - start) * 1000
            steps = re.search(r"Shrunk in (\d+) steps \((\d+) candidates", out.stdout)
            entry["minimizer"] = {
                "input": smallest.name, "exit": out.returncode, "wall_ms": round(ms, 1),
                "steps": int(steps.group(1)) if steps else None,
                "tried": int(steps.group(2)) if steps else None,
                "minimal_case": out.stdout[out.stdout.find("r3case 1"):],
                "explanation": [l for l in out.stdout.splitlines() if l.startswith("#")]}
        result["mutants"].append(entry)
        pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    result["finished_utc"] = datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ")
    pathlib.Path(args.out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
