#!/usr/bin/env python3
"""Two torchrun "nodes" on loopback give the verdicts of one process.

r3check starts node 0 (`--engine-launch torchrun` with a c10d rendezvous on
127.0.0.1, gloo on CPU); this test starts node 1 by hand, as another host's
scheduler would (docs/engines.md, "Multi-node"). With one process per node
every TP2 case's all-gather is a real collective between the two nodes.

Debian's torch 1.13 on Python 3.11 needs `--redirects 2 --tee 2` (its
launcher's default "0" hits an IntFlag change of Python 3.11);
`--monitor_interval=1` lets both agents notice their workers' exit and pass
torchrun's exit barrier within a second or two instead of five.

  R3CHECK_BIN=build/src/r3check /usr/bin/python3 tests/engine/multinode_test.py
"""
import json
import os
import pathlib
import socket
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "engines" / "fixtures"
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
CASES = ["--cases", "24", "--seed", "5"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launcher_args(port, node_rank):
    return ["--nnodes=2", f"--node_rank={node_rank}", "--rdzv_backend=c10d", f"--rdzv_endpoint=127.0.0.1:{port}",
            "--rdzv_id=r3check-multinode-test", "--monitor_interval=1", "--redirects=2", "--tee=2"]


def verify(binary, source, extra=()):
    p = subprocess.run([binary, "verify", "--sut", f"vllm:{source}", *CASES, "--json", *extra],
                       capture_output=True, text=True, timeout=600)
    return p


def verdicts(stdout):
    j = json.loads(stdout)
    return j["total"], [{k: v for k, v in f.items() if k != "sut"} for f in j["failures"]]


def main():
    binary = os.environ.get("R3CHECK_BIN")
    if not binary:
        print("R3CHECK_BIN is not set")
        return 1
    try:
        subprocess.run([PY, "-c", "import torch.distributed"], check=True, capture_output=True)
    except Exception:
        print("torch cannot be imported: skipping")
        return 77
    failures = 0
    for fixture in ("post50874", "no-sp-trim"):
        source = FIXTURES / fixture
        one = verify(binary, source)
        port = free_port()
        node1 = subprocess.Popen(
            [PY, "-m", "torch.distributed.run", "--nproc_per_node=1", *launcher_args(port, 1),
             str(ROOT / "engines" / "vllm" / "r3_adapter.py"), "--source", str(source), "--device", "cpu"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            extra = ["--engine-launch", "torchrun", "--nproc", "1", "--engine-python", PY]
            extra += [f"--engine-launch-arg={a}" for a in launcher_args(port, 0)]
            two = verify(binary, source, extra)
            node1_out, _ = node1.communicate(timeout=120)
        finally:
            if node1.poll() is None:
                node1.kill()
                node1.communicate()
        if two.returncode != one.returncode or not two.stdout:
            print(f"{fixture}: exit {two.returncode} on two nodes, {one.returncode} on one\n{two.stderr}\n{node1_out}")
            failures += 1
            continue
        if verdicts(one.stdout) != verdicts(two.stdout):
            print(f"{fixture}: verdicts differ\none: {one.stdout[:2000]}\ntwo: {two.stdout[:2000]}")
            failures += 1
            continue
        summary = [line for line in two.stderr.splitlines() if "real TP collectives over 2 processes" in line]
        if not summary or summary[0].split(" of ")[0].endswith(" 0"):
            print(f"{fixture}: no case ran with real collectives across the nodes:\n{two.stderr}")
            failures += 1
            continue
        total = json.loads(two.stdout)["total"]
        print(f"{fixture}: exit {two.returncode}, {total} on 2 nodes = 1 process; {summary[0]}")
        print(f"{fixture}: node 1 exit {node1.returncode}")
        if node1.returncode != 0:
            failures += 1
    print(f"{2 - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
