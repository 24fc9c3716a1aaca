#!/usr/bin/env python3
"""Tests of engines/vllm/r3_adapter.py, driven over protocol 1 (docs/engines.md).

  /usr/bin/python3 -m unittest discover -s tests/engines -p '*_test.py'   # from the repo root
  /usr/bin/python3 tests/engines/adapter_test.py                          # exit 77: no torch

The fixtures (tests/engines/fixtures, README.md next to this file) are small
capturers written from the spec; the expected rows below are the spec's
section 7 worked examples.
"""
import hashlib
import json
import os
import pathlib
import select
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
ADAPTER = ROOT / "engines" / "vllm" / "r3_adapter.py"
FIXTURES = ROOT / "tests" / "engines" / "fixtures"
TARGET_REL = pathlib.Path("vllm/model_executor/layers/fused_moe/routed_experts_capturer.py")
TIMEOUT_S = 120

try:
    import torch  # noqa: F401

    HAVE_TORCH = True
except Exception:  # pragma: no cover
    HAVE_TORCH = False


def R(dp, first, count):
    return {"dp": dp, "from": first, "count": count}


def P(count):
    return {"pad": count}


def make_case(dp, tp, n, rows, local_sizes=None, ep=True, sp=True, m=8192, experts=256, layers=1, dispatch=None):
    """rows: one run list for every rank, or a list of dp*tp run lists (order d*tp+t)."""
    if rows and isinstance(rows[0], dict):
        rows = [rows] * (dp * tp)
    assert len(rows) == dp * tp
    return {
        "dp": dp, "tp": tp, "ep": ep, "sp": sp, "max_num_batched_tokens": m, "num_experts": experts, "top_k": 8,
        "num_layers": layers, "num_tokens_across_dp": n, "local_sizes": local_sizes,
        "ranks": [{"dp": r // tp, "tp": r % tp, "rows": rows[r]} for r in range(dp * tp)],
        **({} if dispatch is None else {"dispatch": dispatch}),
    }


# The spec's section 7 (TP2/DP2, EP on, M = 8192).
EAGER_SP = make_case(2, 2, [5, 3], [R(0, 0, 5), P(1), R(1, 0, 3), P(1)], local_sizes=[3, 3, 2, 2])
GRAPH_DECODE = make_case(2, 2, [1, 1], [R(0, 0, 1), P(1), R(1, 0, 1), P(1)], local_sizes=[1, 1, 1, 1])
GRAPH_8 = make_case(2, 2, [8, 8], [R(0, 0, 8), R(1, 0, 8)], local_sizes=[4, 4, 4, 4])
INTERNAL_SP = make_case(
    2, 2, [5, 3],
    [[R(0, 0, 3)], [R(0, 3, 2), P(1)], [R(1, 0, 2)], [R(1, 2, 1), P(1)]],
    local_sizes=[3, 3, 2, 2],
)
NON_SP_NAIVE = make_case(2, 2, [5, 3], [R(0, 0, 5), R(1, 0, 3)], local_sizes=[5, 3], ep=False, sp=False)
SINGLE_DP = make_case(1, 2, [7], [R(0, 0, 7)], ep=False, sp=False)


class Adapter:
    """One adapter process."""

    def __init__(self, source, env=None, args=()):
        self.stderr = tempfile.TemporaryFile()
        full_env = dict(os.environ)
        full_env.pop("WORLD_SIZE", None)
        full_env.pop("RANK", None)
        full_env.update(env or {})
        self.proc = subprocess.Popen(
            [sys.executable, str(ADAPTER), "--source", str(source), *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, env=full_env,
        )
        self.buf = b""

    def send(self, obj):
        self.proc.stdin.write((json.dumps(obj) + "\n").encode())
        self.proc.stdin.flush()

    def read_line(self):
        deadline = time.monotonic() + TIMEOUT_S
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("adapter did not answer in time; stderr:\n" + self.err_text())
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return None
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def ask(self, obj):
        self.send(obj)
        line = self.read_line()
        if line is None:
            raise AssertionError("adapter closed stdout; stderr:\n" + self.err_text())
        return json.loads(line)

    def finish(self):
        """Sends bye; returns (exit code, lines written after)."""
        try:
            self.send({"type": "bye"})
        except BrokenPipeError:
            pass
        rest = []
        while True:
            line = self.read_line()
            if line is None:
                break
            rest.append(line)
        return self.proc.wait(timeout=TIMEOUT_S), rest

    def err_text(self):
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except Exception:
                pass
        self.stderr.close()


def fixture(name):
    return FIXTURES / name


@unittest.skipUnless(HAVE_TORCH, "torch cannot be imported")
class AdapterTestBase(unittest.TestCase):
    def start(self, source, **kw):
        a = Adapter(source, **kw)
        self.addCleanup(a.close)
        return a

    def run_cases(self, source, cases, **kw):
        """hello, run, bye; returns (hello reply, result cases)."""
        a = self.start(source, **kw)
        self.last_adapter = a
        hello = a.ask({"type": "hello", "protocol": 1})
        self.assertEqual(hello["type"], "hello", a.err_text())
        reply = a.ask({"type": "run", "id": 41, "cases": cases})
        self.assertEqual(reply["type"], "result", reply)
        self.assertEqual(reply["id"], 41)
        self.assertEqual(len(reply["cases"]), len(cases))
        rc, rest = a.finish()
        self.assertEqual(rc, 0, a.err_text())
        self.assertEqual(rest, [])
        for case, res in zip(cases, reply["cases"]):
            self.assertEqual([(r["dp"], r["tp"]) for r in res["ranks"]], [(r["dp"], r["tp"]) for r in case["ranks"]])
            for r, req in zip(res["ranks"], case["ranks"]):
                self.assertEqual(r["n"], sum(x.get("count", x.get("pad", 0)) for x in req["rows"]))
        return hello, reply["cases"]

    def run_one(self, source, case, **kw):
        return self.run_cases(source, [case], **kw)[1][0]

    def assert_ranks(self, result, captured, error=None, tp_gather=False, stray=0, undecodable=0):
        """captured: {dp: runs} or {(dp, tp): runs}; error: None or an error type for every rank."""
        for r in result["ranks"]:
            want = captured.get((r["dp"], r["tp"]), captured.get(r["dp"]))
            self.assertEqual(r["captured"], want, f"rank ({r['dp']}, {r['tp']}): {r}")
            if error is None:
                self.assertIsNone(r["error"], r)
            else:
                self.assertEqual(r["error"]["type"], error, r)
            self.assertEqual(r["tp_gather"], tp_gather, r)
            self.assertEqual(r["stray"], stray, r)
            self.assertEqual(r["undecodable"], undecodable, r)

    def expect_fatal(self, source, needle, first=None, **kw):
        a = self.start(source, **kw)
        if first is not None:
            a.send(first)
        else:
            a.send({"type": "hello", "protocol": 1})
        lines = []
        while True:
            line = a.read_line()
            if line is None:
                break
            lines.append(line)
        rc = a.proc.wait(timeout=TIMEOUT_S)
        self.assertEqual(rc, 1, a.err_text())
        self.assertEqual(len(lines), 1, lines)
        msg = json.loads(lines[0])
        self.assertEqual(msg["type"], "fatal")
        self.assertNotIn("\n", msg["error"])
        self.assertIn(needle, msg["error"])
        return msg["error"]


class HelloTest(AdapterTestBase):
    def test_hello_describes_the_engine(self):
        a = self.start(fixture("post50874"))
        hello = a.ask({"type": "hello", "protocol": 1})
        path = fixture("post50874") / TARGET_REL
        self.assertEqual(hello["protocol"], 1)
        self.assertEqual(hello["engine"], "vllm")
        self.assertEqual(hello["source"], str(path.resolve()))
        self.assertEqual(hello["sha256"], hashlib.sha256(path.read_bytes()).hexdigest())
        self.assertEqual(hello["interface"], "RoutedExpertsCapturer(max_num_batched_tokens, vllm_config)")
        self.assertEqual((hello["device"], hello["world_size"], hello["backend"]), ("cpu", 1, "none"))
        self.assertEqual(hello["engine_version"], "unknown")
        self.assertEqual(a.finish(), (0, []))

    def test_a_single_file_works_as_source(self):
        hello, (res,) = self.run_cases(fixture("post50874") / TARGET_REL, [EAGER_SP])
        self.assertTrue(hello["source"].endswith("post50874/" + str(TARGET_REL)))
        self.assert_ranks(res, {0: [R(0, 0, 5)], 1: [R(1, 0, 3)]})

    def test_engine_version_from_checkout(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = pathlib.Path(tmp) / "checkout"
            shutil.copytree(fixture("post50874"), root)
            shutil.copy(FIXTURES / "capturer_template.py", tmp)
            (root / "vllm" / "_version.py").write_text("__version__ = version = '0.11.1.dev7'\n")
            hello, (res,) = self.run_cases(root, [GRAPH_DECODE])
            self.assertEqual(hello["engine_version"], "0.11.1.dev7")
            self.assert_ranks(res, {0: [R(0, 0, 1)], 1: [R(1, 0, 1)]})


class Post50874Test(AdapterTestBase):
    """The correct fixture on every worked example of the spec."""

    def test_worked_examples(self):
        cases = [EAGER_SP, GRAPH_DECODE, GRAPH_8, INTERNAL_SP, NON_SP_NAIVE, SINGLE_DP]
        _, res = self.run_cases(fixture("post50874"), cases)
        for r in res:
            self.assertEqual(r["collective"], "emulated")
            self.assertEqual(r["buffer_dtype"], "uint8")
        self.assert_ranks(res[0], {0: [R(0, 0, 5)], 1: [R(1, 0, 3)]})
        self.assert_ranks(res[1], {0: [R(0, 0, 1)], 1: [R(1, 0, 1)]})
        self.assert_ranks(res[2], {0: [R(0, 0, 8)], 1: [R(1, 0, 8)]})
        self.assert_ranks(res[3], {0: [R(0, 0, 5)], 1: [R(1, 0, 3)]}, tp_gather=True)
        self.assert_ranks(res[4], {0: [R(0, 0, 5)], 1: [R(1, 0, 3)]})
        self.assert_ranks(res[5], {0: [R(0, 0, 7)]})

    def test_digits_beyond_one_byte_and_wide_dtypes(self):
        big = make_case(2, 1, [300, 200], [R(0, 0, 300), R(1, 0, 200)], local_sizes=[300, 200], ep=False, sp=False)
        wide = dict(big, num_experts=1000)
        _, res = self.run_cases(fixture("post50874"), [big, wide])
        self.assertEqual(res[0]["buffer_dtype"], "uint8")
        self.assertEqual(res[1]["buffer_dtype"], "uint16" if hasattr(torch, "uint16") else "int32")
        for r in res:
            self.assert_ranks(r, {0: [R(0, 0, 300)], 1: [R(1, 0, 200)]})

    def test_decode_shortcuts_agree_with_digit_by_digit_decoding(self):
        big = make_case(3, 2, [300, 0, 45], [R(0, 0, 300), R(2, 0, 45)], local_sizes=[150, 150, 0, 0, 23, 23])
        cases = [EAGER_SP, GRAPH_DECODE, GRAPH_8, INTERNAL_SP, NON_SP_NAIVE, SINGLE_DP, big]
        for name in ("post50874", "no-sp-trim", "shard-start-without-s", "no-tp-gather", "garbage-writes"):
            with self.subTest(fixture=name):
                _, fast = self.run_cases(fixture(name), cases)
                _, slow = self.run_cases(fixture(name), cases, env={"R3_ADAPTER_SLOW": "1"})
                self.assertEqual(fast, slow)
        # garbage-writes (the last one run): two corrupt rows per DP rank that has rows
        self.assertEqual([(r["captured"], r["undecodable"]) for r in slow[6]["ranks"]][::2],
                         [([R(0, 2, 298)], 2), ([], 0), ([R(2, 2, 43)], 2)])

    def test_buffer_is_cleared_between_captures(self):
        # The same capturers (same shape) see 8 rows, then 1: no leftover rows.
        _, res = self.run_cases(fixture("post50874"), [GRAPH_8, GRAPH_DECODE, GRAPH_8])
        self.assert_ranks(res[1], {0: [R(0, 0, 1)], 1: [R(1, 0, 1)]})
        self.assert_ranks(res[2], {0: [R(0, 0, 8)], 1: [R(1, 0, 8)]})

    def test_coincidental_local_branch_captures_the_pad(self):
        # Internal SP, N = [1, 3]: DP0's ranks see cdiv(1, 2) = 1 row == L,
        # branch 2, no gather: TP1 keeps its shard, which is SP padding.
        case = make_case(
            2, 2, [1, 3], [[R(0, 0, 1)], [P(1)], [R(1, 0, 2)], [R(1, 2, 1), P(1)]], local_sizes=[1, 1, 2, 2]
        )
        res = self.run_one(fixture("post50874"), case)
        self.assertEqual([r["captured"] for r in res["ranks"]], [[R(0, 0, 1)], [P(1)], [R(1, 0, 3)], [R(1, 0, 3)]])
        self.assertEqual([r["tp_gather"] for r in res["ranks"]], [False, False, True, True])

    def test_bad_layer_and_too_small_buffer_are_rank_errors(self):
        small = dict(GRAPH_8, max_num_batched_tokens=4)
        res = self.run_one(fixture("post50874"), small)
        for r in res["ranks"]:
            self.assertEqual(r["error"]["type"], "RuntimeError", r)
            self.assertEqual(r["captured"], [])

    def test_mismatched_shards_hang_one_rank(self):
        # DP0: TP0 gets cdiv(5,2) = 3 rows (branch 4, enters the gather), TP1
        # gets 2 rows (no branch): TP0 would hang, TP1 raises.
        case = make_case(
            2, 2, [5, 3], [[R(0, 0, 3)], [R(0, 3, 2)], [R(1, 0, 2)], [R(1, 2, 1), P(1)]], local_sizes=[3, 3, 2, 2]
        )
        res = self.run_one(fixture("post50874"), case)
        r00, r01, r10, r11 = res["ranks"]
        self.assertEqual(r00["error"], {"type": "hang", "message": "only 1 of 2 TP ranks of dp_rank=0 reach the TP all-gather"})
        self.assertEqual((r00["captured"], r00["tp_gather"]), ([], True))
        self.assertEqual(r01["error"]["type"], "AssertionError")
        self.assertIn("unexpected topk_ids batch dim 2", r01["error"]["message"])
        self.assertFalse(r01["tp_gather"])
        self.assertEqual((r10["error"], r10["captured"]), (None, [R(1, 0, 3)]))
        self.assertEqual((r11["error"], r11["captured"]), (None, [R(1, 0, 3)]))


class SeededBugTest(AdapterTestBase):
    def test_pre50874_asserts_on_the_eager_sp_step(self):
        _, (eager, graph8) = self.run_cases(fixture("pre50874"), [EAGER_SP, GRAPH_8])
        self.assertEqual(eager["buffer_dtype"], "int32")
        self.assert_ranks(eager, {0: [], 1: []}, error="AssertionError")
        for r in eager["ranks"]:
            self.assertIn("unexpected topk_ids batch dim 10", r["error"]["message"])
        self.assert_ranks(graph8, {0: [R(0, 0, 8)], 1: [R(1, 0, 8)]})

    def test_no_sp_trim_keeps_the_padding(self):
        res = self.run_one(fixture("no-sp-trim"), EAGER_SP)
        self.assert_ranks(res, {0: [R(0, 0, 5), P(1)], 1: [R(1, 0, 3), P(1)]})

    def test_shard_start_without_s_takes_dp0_rows(self):
        res = self.run_one(fixture("shard-start-without-s"), EAGER_SP)
        self.assert_ranks(res, {0: [R(0, 0, 5)], 1: [R(0, 3, 2), P(1)]})

    def test_no_tp_gather_keeps_each_shard(self):
        res = self.run_one(fixture("no-tp-gather"), INTERNAL_SP)
        self.assert_ranks(
            res, {(0, 0): [R(0, 0, 3)], (0, 1): [R(0, 3, 2), P(1)], (1, 0): [R(1, 0, 2)], (1, 1): [R(1, 2, 1), P(1)]}
        )

    def test_partial_gather_hangs(self):
        res = self.run_one(fixture("partial-gather"), INTERNAL_SP)
        for r in res["ranks"]:
            if r["tp"] == 0:
                self.assertEqual(
                    r["error"],
                    {"type": "hang", "message": f"only 1 of 2 TP ranks of dp_rank={r['dp']} reach the TP all-gather"},
                )
                self.assertEqual((r["captured"], r["tp_gather"]), ([], True))
        r01, r11 = res["ranks"][1], res["ranks"][3]
        self.assertEqual((r01["error"], r01["captured"], r01["tp_gather"]), (None, [R(0, 3, 2), P(1)], False))
        self.assertEqual((r11["error"], r11["captured"], r11["tp_gather"]), (None, [R(1, 2, 1), P(1)], False))

    def test_stray_writes_are_counted(self):
        two_layers = dict(NON_SP_NAIVE, num_layers=2, max_num_batched_tokens=16)
        one_layer = dict(NON_SP_NAIVE, num_layers=1, max_num_batched_tokens=16)
        _, (two, one) = self.run_cases(fixture("stray-writes"), [two_layers, one_layer])
        # stray: the layer-0 copy (L rows) + one row past the prefix
        for r in two["ranks"]:
            want = {0: ([R(0, 0, 5)], 6, 0), 1: ([R(1, 0, 3)], 4, 0)}[r["dp"]]
            self.assertEqual((r["captured"], r["stray"], r["undecodable"]), want, r)
        for r in one["ranks"]:
            want = {0: [R(0, 0, 5)], 1: [R(1, 0, 3)]}[r["dp"]]
            self.assertEqual((r["captured"], r["stray"], r["undecodable"]), (want, 1, 0), r)

    def test_garbage_rows_are_undecodable(self):
        res = self.run_one(fixture("garbage-writes"), EAGER_SP)
        self.assert_ranks(res, {0: [R(0, 2, 3)], 1: [R(1, 2, 1)]}, undecodable=2)

    def test_legacy_singleton_interface(self):
        before = set(os.listdir("/dev/shm"))
        other_m = dict(EAGER_SP, max_num_batched_tokens=64)
        hello, res = self.run_cases(fixture("legacy-singleton"), [EAGER_SP, other_m, INTERNAL_SP])
        self.assertEqual(
            hello["interface"],
            "RoutedExpertsCapturer.create() + init_buffer(max_num_batched_tokens, max_num_kv_tokens, vllm_config)",
        )
        self.assertEqual(res[0]["buffer_dtype"], "int32")
        self.assert_ranks(res[0], {0: [R(0, 0, 5)], 1: [R(1, 0, 3)]})
        self.assert_ranks(res[1], {0: [R(0, 0, 5)], 1: [R(1, 0, 3)]})
        self.assert_ranks(res[2], {0: [R(0, 0, 5)], 1: [R(1, 0, 3)]}, tp_gather=True)
        # Only this adapter's segments (their instance ids carry its pid):
        # other tests' adapters may hold theirs at the same moment.
        mine = f"r3fixture_r3check_{self.last_adapter.proc.pid}_"
        leaked = sorted(n for n in set(os.listdir("/dev/shm")) - before if n.startswith(mine))
        self.assertEqual(leaked, [])


class DeviceCacheTest(AdapterTestBase):
    """The device-cache design (upstream v0.21.0): a static create(enable,
    model_config, ...), layers writing through views of an (layers, tokens,
    top_k) cache, a host cache on TP rank 0 filled by a D2H copy."""

    INTERNAL = make_case(2, 2, [5, 3], [[R(0, 0, 5)], [R(0, 0, 5)], [R(1, 0, 3)], [R(1, 0, 3)]],
                         local_sizes=[5, 3], ep=False, sp=False)
    IDLE_PEER = make_case(2, 2, [0, 3], [[], [], [R(1, 0, 3)], [R(1, 0, 3)]], local_sizes=[0, 3], ep=False,
                          sp=False, layers=2, m=16)

    def test_built_and_driven_as_v021s_runner_and_moe_layer_do(self):
        hello, res = self.run_cases(fixture("device-cache"), [SINGLE_DP, self.INTERNAL, self.IDLE_PEER])
        self.assertEqual(
            hello["interface"],
            "RoutedExpertsCapturer.create(enable, model_config, num_fused_shared_experts, max_num_batched_tokens, "
            "max_model_len, device) via init_routed_experts_capturer_with_shared_cache(..., rank, world_size) + "
            "bind_routing_capture_to_model (the MoE layer writes _routing_replay_out)")
        for r in res:
            self.assertEqual(r["buffer_dtype"], "int16")
        # TP rank 0's rows come from its host cache, TP rank 1's from its device cache.
        self.assert_ranks(res[0], {0: [R(0, 0, 7)]})
        self.assert_ranks(res[1], {0: [R(0, 0, 5)], 1: [R(1, 0, 3)]})
        self.assert_ranks(res[2], {0: [], 1: [R(1, 0, 3)]})  # two layers: layer 1 written, layer 0 not

    def test_a_host_cache_read_by_pool_slot_gets_the_slot(self):
        # get_routed_experts(req_pool_idx, seqlen, free_slot): the adapter
        # passes the request's pool slot (0), not its request id, and gets the
        # same rows as the request-id form.
        _, res = self.run_cases(fixture("device-cache-pool-slot"), [SINGLE_DP, self.INTERNAL])
        self.assert_ranks(res[0], {0: [R(0, 0, 7)]})
        self.assert_ranks(res[1], {0: [R(0, 0, 5)], 1: [R(1, 0, 3)]})

    def test_sp_and_naive_dispatch_are_the_engines_own_refusal(self):
        _, (naive, sp) = self.run_cases(fixture("device-cache"), [NON_SP_NAIVE, EAGER_SP])
        self.assert_ranks(naive, {0: [], 1: []}, error="NotImplementedError")
        self.assert_ranks(sp, {0: [], 1: []}, error="NotImplementedError")
        self.assertIn("building the capturer: fixture: routing capture does not support naive DP dispatch",
                      naive["ranks"][0]["error"]["message"])
        self.assertIn("does not support sequence parallelism", sp["ranks"][3]["error"]["message"])

    def test_the_cases_dispatch_decides_even_when_every_peer_is_idle(self):
        """No rank sees another DP rank's rows, yet the deployment dispatches
        naively: the case says so, and v0.21.0's bind refuses it."""
        idle = dict(self.IDLE_PEER)
        _, (naive, internal) = self.run_cases(fixture("device-cache"),
                                              [dict(idle, dispatch="naive"), dict(idle, dispatch="internal")])
        self.assert_ranks(naive, {0: [], 1: []}, error="NotImplementedError")
        self.assert_ranks(internal, {0: [], 1: [R(1, 0, 3)]})

    def test_a_wrong_staged_slice_shows_on_tp_rank_0(self):
        """The broken fixture stages device rows from row 1: the host cache,
        which TP rank 0 returns, loses each request's first token."""
        _, (single, internal) = self.run_cases(fixture("device-cache-staging-shift"), [SINGLE_DP, self.INTERNAL])
        self.assert_ranks(single, {(0, 0): [R(0, 1, 6)], (0, 1): [R(0, 0, 7)]})
        self.assert_ranks(internal, {(0, 0): [R(0, 1, 4)], (0, 1): [R(0, 0, 5)], (1, 0): [R(1, 1, 2)],
                                     (1, 1): [R(1, 0, 3)]})

    def test_the_forks_layout_and_capture_entry(self):
        """Tokens-first cache, no init/bind functions: create() on every rank,
        capture(layer_id, topk_ids); nothing refuses naive dispatch, and the
        rows the host copy takes are the head of the gathered batch."""
        hello, (internal, naive) = self.run_cases(fixture("device-cache-fork"), [self.INTERNAL, NON_SP_NAIVE])
        self.assertEqual(hello["interface"], "RoutedExpertsCapturer.create(enable, model_config, "
                                             "num_fused_shared_experts, max_num_batched_tokens, max_model_len, "
                                             "device) + capture(layer_id, topk_ids)")
        self.assert_ranks(internal, {0: [R(0, 0, 5)], 1: [R(1, 0, 3)]})
        self.assert_ranks(naive, {0: [R(0, 0, 5)], 1: [R(0, 0, 3)]})

    def test_a_no_op_capturer_on_tp_rank_1_is_a_refusal(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = pathlib.Path(tmp) / "checkout"
            shutil.copytree(fixture("device-cache"), root)
            shutil.copy(FIXTURES / "device_cache_template.py", tmp)
            path = root / TARGET_REL
            path.write_text(path.read_text().replace("VARIANT = {}", 'VARIANT = {"noop_off_rank0": True}'))
            self.expect_fatal(root, "_Noop for TP rank 1 of 2 (dp 0): that rank has no device cache "
                                    "(get_device_cache() is None), so this version captures nothing there by design")


class RobustnessTest(AdapterTestBase):
    def test_prints_in_the_engine_do_not_reach_the_protocol(self):
        a = self.start(fixture("noisy"))
        self.assertEqual(a.ask({"type": "hello", "protocol": 1})["type"], "hello")
        reply = a.ask({"type": "run", "id": 1, "cases": [EAGER_SP, INTERNAL_SP]})
        self.assertEqual(reply["type"], "result")
        self.assert_ranks(reply["cases"][0], {0: [R(0, 0, 5)], 1: [R(1, 0, 3)]})
        self.assertEqual(a.finish(), (0, []))
        err = a.err_text()
        self.assertIn("fixture noise at import", err)
        self.assertIn("fixture noise on fd 1", err)

    def test_partial_write_before_an_exception_is_decoded(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = pathlib.Path(tmp) / "capturer.py"
            src.write_text(textwrap.dedent("""\
                import torch
                from vllm.forward_context import get_forward_context
                from vllm.platforms import current_platform


                class RoutedExpertsCapturer:
                    def __init__(self, max_num_batched_tokens, vllm_config):
                        mc = vllm_config.model_config
                        shape = (max_num_batched_tokens, mc.get_total_num_hidden_layers(), mc.get_num_experts_per_tok())
                        self.device_buffer = torch.zeros(shape, dtype=torch.int32, device=current_platform.device_type)

                    def capture(self, layer_id, topk_ids):
                        assert get_forward_context().dp_metadata is not None
                        self.device_buffer[:2, layer_id] = topk_ids[:2]
                        raise ValueError("half way\\nsecond line")
                """))
            hello, (res,) = self.run_cases(src, [EAGER_SP])
            self.assertEqual(hello["source"], str(src.resolve()))
        for r in res["ranks"]:
            self.assertEqual(r["error"], {"type": "ValueError", "message": "half way"})
            self.assertEqual(r["captured"], [R(0, 0, 2)])

    def test_installed_vllm_is_patched(self):
        # A fake installed vllm whose distributed/forward-context functions
        # refuse to run: the adapter must replace them.
        with tempfile.TemporaryDirectory() as tmp:
            site = pathlib.Path(tmp)
            shutil.copy(FIXTURES / "capturer_template.py", site)
            pkg = site / "vllm"
            files = {
                "__init__.py": "__version__ = '9.9.9-fake'\n",
                "config.py": "class VllmConfig:\n    pass\n",
                "forward_context.py": "def get_forward_context():\n    raise RuntimeError('real vllm forward context')\n",
                "distributed/__init__.py": "from .parallel_state import get_tp_group, get_tensor_model_parallel_rank\n",
                "distributed/parallel_state.py": (
                    "def get_tp_group():\n    raise RuntimeError('real vllm tp group')\n"
                    "def get_tensor_model_parallel_rank():\n    raise RuntimeError('real vllm tp rank')\n"
                ),
                "platforms/__init__.py": "class _P:\n    device_type = 'meta-bogus'\ncurrent_platform = _P()\n",
                "model_executor/__init__.py": "",
                "model_executor/layers/__init__.py": "",
                "model_executor/layers/fused_moe/__init__.py": "",
            }
            for rel, text in files.items():
                (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
                (pkg / rel).write_text(text)
            shutil.copy(fixture("post50874") / TARGET_REL, site / TARGET_REL)
            hello, (res,) = self.run_cases("installed", [INTERNAL_SP], env={"PYTHONPATH": str(site)})
        self.assertEqual(hello["source"], str((site / TARGET_REL).resolve()))
        self.assertEqual(hello["engine_version"], "9.9.9-fake")
        self.assert_ranks(res, {0: [R(0, 0, 5)], 1: [R(1, 0, 3)]}, tp_gather=True)

    def test_checkout_search(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = pathlib.Path(tmp)
            shutil.copy(FIXTURES / "capturer_template.py", root)
            one = root / "fork" / "python" / "routed_experts_capturer.py"
            one.parent.mkdir(parents=True)
            shutil.copy(fixture("post50874") / TARGET_REL, one)
            hello, (res,) = self.run_cases(root / "fork", [GRAPH_DECODE])
            self.assertEqual(hello["source"], str(one.resolve()))
            self.assert_ranks(res, {0: [R(0, 0, 1)], 1: [R(1, 0, 1)]})
            two = root / "fork" / "other" / "routed_experts_capturer.py"
            two.parent.mkdir()
            shutil.copy(one, two)
            err = self.expect_fatal(root / "fork", "2 routed_experts_capturer.py files")
            self.assertIn("python/routed_experts_capturer.py", err)
            self.assertIn("other/routed_experts_capturer.py", err)
            empty = root / "empty"
            empty.mkdir()
            self.expect_fatal(empty, "no routed_experts_capturer.py anywhere under it")


def free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class MultiProcessTest(AdapterTestBase):
    """torchrun mode with gloo: processes started by hand (torch 1.13's
    torchrun fails on Python 3.11, docs: shared/notes/toolchain.md)."""

    def start_world(self, source, world):
        env = {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port()), "WORLD_SIZE": str(world)}
        others = []
        for r in range(1, world):
            p = subprocess.Popen(
                [sys.executable, str(ADAPTER), "--source", str(source)],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                env=dict(os.environ, **env, RANK=str(r), LOCAL_RANK=str(r)),
            )
            self.addCleanup(lambda p=p: (p.poll() is None and p.kill(), p.wait(), p.stdout.close()))
            others.append(p)
        root = self.start(source, env=dict(env, RANK="0", LOCAL_RANK="0"))
        return root, others

    def test_real_collectives_match_emulation(self):
        mismatched = make_case(
            2, 2, [5, 3], [[R(0, 0, 3)], [R(0, 3, 2)], [R(1, 0, 2)], [R(1, 2, 1), P(1)]], local_sizes=[3, 3, 2, 2]
        )
        tp4 = make_case(1, 4, [6], [[R(0, 0, 2)], [R(0, 2, 2)], [R(0, 4, 2)], [P(2)]], ep=False, sp=False)
        dp3 = make_case(3, 2, [3, 2, 1], [R(0, 0, 3), R(1, 0, 2), R(2, 0, 1)], local_sizes=[3, 2, 1], sp=False)
        cases = [EAGER_SP, INTERNAL_SP, mismatched, tp4, dp3, GRAPH_DECODE, SINGLE_DP]
        for name in ("post50874", "partial-gather"):
            with self.subTest(fixture=name):
                _, emulated = self.run_cases(fixture(name), cases)
                root, others = self.start_world(fixture(name), 2)
                hello = root.ask({"type": "hello", "protocol": 1})
                self.assertEqual((hello["world_size"], hello["backend"]), (2, "gloo"), root.err_text())
                reply = root.ask({"type": "run", "id": 3, "cases": cases})
                self.assertEqual(reply["type"], "result", reply)
                self.assertEqual(root.finish(), (0, []))
                for p in others:
                    self.assertEqual(p.wait(timeout=TIMEOUT_S), 0)
                    self.assertEqual(p.stdout.read(), b"")
                got = reply["cases"]
                self.assertEqual([c["collective"] for c in got], ["real"] * 3 + ["emulated"] + ["real"] * 3)
                for e, g in zip(emulated, got):
                    self.assertEqual(e["ranks"], g["ranks"])
                    self.assertEqual(e["buffer_dtype"], g["buffer_dtype"])
        # Spot checks of what the real collective gave.
        self.assertEqual(emulated[3]["ranks"][0]["captured"], [R(0, 0, 2)])  # partial-gather, D = 1: local rows
        self.assertEqual(got[2]["ranks"][0]["error"]["type"], "hang")

    def test_fatal_ends_every_rank(self):
        root, others = self.start_world(fixture("post50874"), 2)
        self.assertEqual(root.ask({"type": "hello", "protocol": 1})["type"], "hello")
        msg = root.ask({"type": "run", "id": 1})
        self.assertEqual(msg["type"], "fatal")
        self.assertEqual(root.proc.wait(timeout=TIMEOUT_S), 1)
        self.assertEqual(others[0].wait(timeout=TIMEOUT_S), 1)


class FatalTest(AdapterTestBase):
    def test_bad_path(self):
        self.expect_fatal("/nonexistent/vllm", "/nonexistent/vllm: no such file or directory")

    def test_import_error(self):
        self.expect_fatal(fixture("import-error"), "ImportError: fixture: cannot import name 'fused_topk'")

    def test_no_capturer(self):
        self.expect_fatal(fixture("no-capturer"), "has no RoutedExpertsCapturer (classes there: RoutedExpertsReader)")

    def test_bad_interface(self):
        self.expect_fatal(
            fixture("bad-interface"),
            "RoutedExpertsCapturer.__init__ takes (self, a, b, c, d): not an interface this adapter drives",
        )

    def test_bad_json(self):
        a = self.start(fixture("post50874"))
        self.assertEqual(a.ask({"type": "hello", "protocol": 1})["type"], "hello")
        a.proc.stdin.write(b"{not json\n")
        a.proc.stdin.flush()
        msg = json.loads(a.read_line())
        self.assertEqual(msg["type"], "fatal")
        self.assertIn("request is not JSON", msg["error"])
        self.assertIsNone(a.read_line())
        self.assertEqual(a.proc.wait(timeout=TIMEOUT_S), 1)

    def test_wrong_protocol(self):
        self.expect_fatal(fixture("post50874"), "protocol 2 is not supported", first={"type": "hello", "protocol": 2})

    def test_malformed_case(self):
        bad = dict(EAGER_SP, ranks=EAGER_SP["ranks"][:3])
        self.expect_fatal(fixture("post50874"), "case 0: ranks must hold dp*tp = 4 entries",
                          first={"type": "run", "id": 1, "cases": [bad]})

    def test_run_outside_n(self):
        bad = make_case(2, 1, [2, 2], [R(0, 0, 3), R(1, 0, 2)], ep=False, sp=False)
        self.expect_fatal(fixture("post50874"), "run dp0[0..3) is outside N[0]",
                          first={"type": "run", "id": 1, "cases": [bad]})


if __name__ == "__main__":
    if not HAVE_TORCH:
        print("adapter_test: torch cannot be imported with", sys.executable, "- skipped", file=sys.stderr)
        sys.exit(77)
    unittest.main()
