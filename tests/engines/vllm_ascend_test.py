#!/usr/bin/env python3
"""Tests of engines/vllm-ascend/r3_adapter.py over protocol 1, and of
`r3check verify/minimize/sweep --sut vllm-ascend:PATH --engine-base PATH` on
the fixture patches of tests/engines/vllm-ascend/ (README.md there), applied
over r3check's own vLLM fixture capturer (tests/engines/fixtures/post50874):
the correct patch passes under every comm type, each seeded bug is found for
its reason, and the tests-on-n order of vllm-ascend's own patch shrinks to a
one-rank case.

  /usr/bin/python3 tests/engines/vllm_ascend_test.py [R3CHECK]    # exit 77: no torch
"""
import json
import os
import pathlib
import socket
import subprocess
import sys
import tempfile
import textwrap
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
ADAPTER = ROOT / "engines" / "vllm-ascend" / "r3_adapter.py"
FIXTURES = ROOT / "tests" / "engines" / "vllm-ascend"
BASE = ROOT / "tests" / "engines" / "fixtures" / "post50874"
LEGACY_BASE = ROOT / "tests" / "engines" / "fixtures" / "legacy-singleton"
PATCH_REL = pathlib.Path("vllm_ascend/patch/worker/patch_routed_experts_capture.py")
R3CHECK = None
TIMEOUT_S = 300

try:
    import torch  # noqa: F401

    HAVE_TORCH = True
except Exception:  # pragma: no cover
    HAVE_TORCH = False


def R(dp, first, count):
    return {"dp": dp, "from": first, "count": count}


def P(count):
    return {"pad": count}


def case(n, tp, comm, ranks, m=8):
    return {"dp": len(n), "tp": tp, "ep": True, "dispatch": "naive", "sp": False, "max_num_batched_tokens": m,
            "num_experts": 64, "top_k": 2, "num_layers": 2, "num_tokens_across_dp": n, "local_sizes": None,
            "moe_comm": comm,
            "ranks": [{"dp": d, "tp": t, "rows": ranks[d * tp + t]} for d in range(len(n)) for t in range(tp)]}


# docs/layouts.md's example, N = [5, 3], tp 2, under each comm type.
GATHERED = [R(0, 0, 5), R(1, 0, 3), P(2)]
ALLGATHER = case([5, 3], 2, "allgather", [GATHERED] * 4)
ALLTOALL = case([5, 3], 2, "alltoall", [[R(0, 0, 3)], [R(0, 3, 2)], [R(1, 0, 2)], [R(1, 2, 1)]])
MC2 = case([5, 3], 2, "mc2", [[R(0, 0, 3)], [R(0, 3, 2), P(1)], [R(1, 0, 3)], [P(3)]])
OWN = [[R(0, 0, 5)], [R(0, 0, 5)], [R(1, 0, 3)], [R(1, 0, 3)]]


def talk(source, cases, base=BASE):
    p = subprocess.run([sys.executable, str(ADAPTER), "--source", str(source), "--base", str(base)],
                       input="\n".join(json.dumps(x) for x in (
                           {"type": "hello", "protocol": 1}, {"type": "run", "id": 1, "cases": cases},
                           {"type": "bye"})) + "\n",
                       capture_output=True, text=True, timeout=TIMEOUT_S)
    lines = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    return lines, p.stderr, p.returncode


def captured(result):
    return [r["captured"] for r in result["ranks"]]


def errors(result):
    return [None if r["error"] is None else r["error"]["type"] for r in result["ranks"]]


@unittest.skipUnless(HAVE_TORCH, "no torch")
class AdapterTest(unittest.TestCase):
    def run_fixture(self, name, cases, base=BASE):
        lines, err, rc = talk(FIXTURES / name, cases, base)
        self.assertEqual(rc, 0, err)
        self.assertEqual(lines[0]["type"], "hello", lines)
        return lines[0], lines[1]["cases"]

    def test_hello_names_the_patch_and_the_vllm_capturer_it_patches(self):
        hello, _ = self.run_fixture("correct", [ALLGATHER])
        self.assertEqual(hello["engine"], "vllm-ascend")
        self.assertTrue(hello["source"].endswith(str(PATCH_REL)), hello)
        self.assertIn("RoutedExpertsCapturer.capture patched, over vLLM's "
                      "RoutedExpertsCapturer(max_num_batched_tokens, vllm_config)", hello["interface"])
        self.assertIsNone(hello["sizing"])
        hello, _ = self.run_fixture("subclass", [ALLGATHER])
        self.assertIn("AscendRoutedExpertsCapturer(RoutedExpertsCapturer) overriding capture", hello["interface"])

    def test_the_correct_patch_keeps_each_dp_ranks_rows_under_every_comm_type(self):
        for name in ("correct", "subclass"):
            _, out = self.run_fixture(name, [ALLGATHER, ALLTOALL, MC2])
            for c in out:
                self.assertEqual(captured(c), OWN, name)
            # the shards are gathered over TP with torch.distributed.all_gather
            self.assertEqual([r["tp_gather"] for r in out[1]["ranks"]], [True] * 4)
            self.assertEqual([r["tp_gather"] for r in out[0]["ranks"]], [False] * 4)

    def test_testing_n_first_takes_a_pad_shard_for_the_ranks_tokens(self):
        # MC2: DP1's TP rank 1 holds 3 pad rows, and n == T = 3 holds
        _, out = self.run_fixture("tests-on-n", [MC2, ALLGATHER])
        self.assertEqual(captured(out[0])[3], [P(3)])
        self.assertEqual(captured(out[0])[2], [R(1, 0, 3)])
        self.assertEqual(captured(out[1]), OWN)

    def test_without_the_padded_test_a_padded_gather_is_unexpected(self):
        _, out = self.run_fixture("no-padded", [ALLGATHER])
        self.assertEqual(errors(out[0]), ["AssertionError"] * 4)

    def test_split_views_hand_all_gather_a_list_of_the_wrong_length(self):
        # DP0: 5 rows split in chunks of 2 are 3 views for 2 ranks; DP1's
        # 3 rows happen to split as tensor_split would ([2, 1]) and are right
        _, out = self.run_fixture("split-views", [ALLTOALL])
        for r in out[0]["ranks"][:2]:
            self.assertEqual(r["error"]["type"], "RuntimeError")
            self.assertIn("all_gather: the output list holds 3 tensors for a group of 2 ranks", r["error"]["message"])
        self.assertEqual(captured(out[0])[2:], OWN[2:])

    def test_the_typo_floor_test_misses_a_floor_shard(self):
        # T = 5, tp 2 under AllToAll: shards of 3 and 2 rows; 5 % 2 = 1 misses
        # the 2-row shard, which then matches no test
        _, out = self.run_fixture("floor-typo", [ALLTOALL])
        self.assertEqual(errors(out[0])[:2], ["hang", "AssertionError"])

    def test_dp_metadata_through_the_extra_context_is_the_proxys_attribute_error(self):
        _, out = self.run_fixture("extra-ctx", [ALLGATHER])
        r = out[0]["ranks"][0]
        self.assertEqual(r["error"]["type"], "AttributeError")
        self.assertIn("dp_metadata is not extra forward context attribute", r["error"]["message"])

    def test_a_patch_over_a_capturer_without_its_attributes_fails_in_the_patch(self):
        # legacy-singleton keeps _device_buffer only: the patch's device_buffer read raises
        _, out = self.run_fixture("correct", [ALLGATHER], base=LEGACY_BASE)
        self.assertEqual(errors(out[0]), ["AttributeError"] * 4)

    def test_an_extra_field_r3check_does_not_set_is_a_gap_not_a_verdict(self):
        with tempfile.TemporaryDirectory() as tmp:
            f = pathlib.Path(tmp) / "patch_routed_experts_capture.py"
            f.write_text(textwrap.dedent("""
                from vllm.model_executor.layers.fused_moe.routed_experts_capturer import RoutedExpertsCapturer
                from vllm_ascend.ascend_forward_context import _EXTRA_CTX

                def capture(self, layer_id, topk_ids):
                    _EXTRA_CTX.mc2_mask  # an extra field vllm-ascend has; r3check sets none
                RoutedExpertsCapturer.capture = capture
            """))
            lines, err, rc = talk(f, [ALLGATHER])
        self.assertEqual(rc, 1, err)
        self.assertEqual(lines[-1]["type"], "fatal", lines)
        self.assertIn("stand-in gap (r3check's, not a verdict on the engine)", lines[-1]["error"])
        self.assertIn("mc2_mask", lines[-1]["error"])

    def test_a_file_that_patches_another_module_or_nothing_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            f = pathlib.Path(tmp) / "patch_routed_experts_capture.py"
            f.write_text("from vllm.v1.routed_experts_capturer import RoutedExpertsCapturer\n"
                         "RoutedExpertsCapturer.capture = lambda self, layer_id, topk_ids: None\n")
            lines, err, rc = talk(f, [ALLGATHER])
            self.assertEqual(rc, 1, err)
            self.assertIn("patches the RoutedExpertsCapturer of vllm.v1.routed_experts_capturer", lines[-1]["error"])
            f.write_text("import torch\n")
            lines, err, rc = talk(f, [ALLGATHER])
            self.assertEqual(rc, 1, err)
            self.assertIn("neither patches vLLM's RoutedExpertsCapturer nor subclasses it", lines[-1]["error"])

    def test_an_npu_device_in_the_engines_code_is_the_runs_device(self):
        with tempfile.TemporaryDirectory() as tmp:
            f = pathlib.Path(tmp) / "patch_routed_experts_capture.py"
            src = (FIXTURES / "correct" / PATCH_REL).read_text()
            src = src.replace("import torch\n", "import torch\n_NPU_PROBE = None\n", 1)
            src += textwrap.dedent("""
                _inner = RoutedExpertsCapturer.capture
                def capture(self, layer_id, topk_ids):
                    self.device_buffer = self.device_buffer.to("npu")  # vllm-ascend's device
                    _inner(self, layer_id, topk_ids)
                RoutedExpertsCapturer.capture = capture
            """)
            f.write_text(src)
            (pathlib.Path(tmp) / "patch_template.py").write_text((FIXTURES / "patch_template.py").read_text())
            lines, err, rc = talk(f, [ALLGATHER])
        self.assertEqual(rc, 0, err)
        self.assertEqual(captured(lines[1]["cases"][0]), OWN)


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@unittest.skipUnless(HAVE_TORCH, "no torch")
class RealCollectivesTest(unittest.TestCase):
    """The list-form all_gather over real gloo collectives, two processes
    started by hand as torchrun would (torch 1.13's torchrun fails on
    Python 3.11: shared/notes/toolchain.md): the same rows as emulation,
    uneven shards (AllToAll's [3, 2]) included."""

    def test_two_processes_give_the_rows_of_one(self):
        cases = [ALLGATHER, ALLTOALL, MC2]
        for name in ("correct", "tests-on-n", "split-views"):
            with self.subTest(name):
                lines, err, rc = talk(FIXTURES / name, cases)
                self.assertEqual(rc, 0, err)
                emulated = lines[1]["cases"]
                env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), WORLD_SIZE="2")
                cmd = [sys.executable, str(ADAPTER), "--source", str(FIXTURES / name), "--base", str(BASE)]
                other = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, env=dict(env, RANK="1", LOCAL_RANK="1"))
                root = subprocess.run(cmd, input="\n".join(json.dumps(x) for x in (
                    {"type": "hello", "protocol": 1}, {"type": "run", "id": 1, "cases": cases},
                    {"type": "bye"})) + "\n", capture_output=True, text=True, timeout=TIMEOUT_S,
                    env=dict(env, RANK="0", LOCAL_RANK="0"))
                out, oerr = other.communicate(timeout=TIMEOUT_S)
                self.assertEqual((root.returncode, other.returncode), (0, 0), root.stderr + oerr.decode())
                got = [json.loads(line) for line in root.stdout.splitlines() if line.strip()]
                self.assertEqual((got[0]["world_size"], got[0]["backend"]), (2, "gloo"))
                real = got[1]["cases"]
                self.assertEqual([c["collective"] for c in real], ["real"] * 3)
                for e, g in zip(emulated, real):
                    self.assertEqual(e["ranks"], g["ranks"])


def r3check(*args):
    p = subprocess.run([R3CHECK, *args], capture_output=True, text=True, timeout=TIMEOUT_S)
    return p.returncode, p.stdout, p.stderr


@unittest.skipUnless(HAVE_TORCH, "no torch")
class CliTest(unittest.TestCase):
    def verify(self, name, cases="150"):
        return r3check("verify", "--sut", f"vllm-ascend:{FIXTURES / name}", "--engine-base", str(BASE),
                       "--cases", cases, "--seed", "7")

    def test_the_correct_patches_pass_and_vllms_corpus_is_said_not_run(self):
        for name in ("correct", "subclass"):
            rc, out, err = self.verify(name)
            self.assertEqual(rc, 0, out + err)
            self.assertIn("verify: OK", out)
            self.assertIn("seeds case(s) not run: layouts vllm-ascend-engine does not have", err)

    def test_every_seeded_bug_fails_verify(self):
        for name in ("tests-on-n", "no-padded", "floor-typo", "split-views", "extra-ctx"):
            with self.subTest(name):
                rc, out, err = self.verify(name)
                self.assertEqual(rc, 1, out + err)
                self.assertIn("[3 rows-exact]", out)

    def test_tests_on_n_minimizes_to_one_dp_rank_and_the_correct_patch_passes_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            start = pathlib.Path(tmp) / "start.r3case"
            start.write_text("r3case 1\ndp 3\ntp 4\nep on\ndispatch naive\nsp auto\nmax_num_batched_tokens 64\n"
                             "top_k 4\nnum_experts 64\nnum_layers 2\ntokens 9 3 7\nmoe_comm mc2\n")
            sut = ["--sut", f"vllm-ascend:{FIXTURES / 'tests-on-n'}", "--engine-base", str(BASE)]
            rc, out, err = r3check("minimize", *sut, str(start))
            self.assertEqual(rc, 0, out + err)
            case = "".join(line + "\n" for line in out.splitlines() if not line.startswith("#"))
            self.assertIn("dp 1\n", case)
            self.assertIn("tp 2\n", case)
            self.assertIn("moe_comm ", case)
            small = pathlib.Path(tmp) / "small.r3case"
            small.write_text(case)
            rc, out, err = r3check("check", *sut, str(small))
            self.assertEqual(rc, 1, out + err)
            rc, out, err = r3check("check", "--sut", f"vllm-ascend:{FIXTURES / 'correct'}", "--engine-base",
                                   str(BASE), str(small))
            self.assertEqual(rc, 0, out + err)

    def test_sweep_judges_each_fixture_checkout_as_a_version(self):
        names = ["correct", "subclass", "tests-on-n", "split-views"]
        rc, out, err = r3check("sweep", "--engine", "vllm-ascend", "--engine-base", str(BASE),
                               *[str(FIXTURES / n) for n in names], "--cases", "80", "--seed", "7", "--jobs", "2")
        self.assertEqual(rc, 1, out + err)
        words = {line.split()[0].rsplit("/", 1)[-1]: line.split()[1] for line in out.splitlines()
                 if line.startswith(str(FIXTURES))}
        self.assertEqual(words, {"correct": "PASS", "subclass": "PASS", "tests-on-n": "FAIL",
                                 "split-views": "FAIL"}, out)

    def test_the_base_is_required_and_named(self):
        rc, out, err = r3check("verify", "--sut", f"vllm-ascend:{FIXTURES / 'correct'}", "--cases", "1")
        self.assertEqual(rc, 2, out + err)
        self.assertIn("--sut vllm-ascend:PATH needs --engine-base PATH", err)
        rc, out, err = r3check("verify", "--sut", f"sglang:{FIXTURES / 'correct'}", "--engine-base", str(BASE),
                               "--cases", "1")
        self.assertEqual(rc, 2, out + err)
        self.assertIn("--engine-base: applies to vllm-ascend:PATH", err)

    def test_a_vllm_case_is_refused_naming_the_comm_type(self):
        with tempfile.TemporaryDirectory() as tmp:
            f = pathlib.Path(tmp) / "vllm.r3case"
            f.write_text("r3case 1\ndp 2\ntp 2\nep on\ndispatch naive\nsp auto\nmax_num_batched_tokens 8\n"
                         "top_k 8\nnum_experts 256\nnum_layers 1\ntokens 5 3\n")
            rc, out, err = r3check("check", "--sut", f"vllm-ascend:{FIXTURES / 'correct'}", "--engine-base",
                                   str(BASE), str(f))
        self.assertEqual(rc, 2, out + err)
        self.assertIn(": moe_comm: none (vLLM's dispatch): vllm-ascend-engine lays rows out by its comm type", err)

    def test_explain_says_how_the_comm_type_lays_out_rows(self):
        with tempfile.TemporaryDirectory() as tmp:
            f = pathlib.Path(tmp) / "mc2.r3case"
            body = ("r3case 1\ndp 2\ntp 2\nep on\ndispatch naive\nsp auto\nmax_num_batched_tokens 8\n"
                    "top_k 2\nnum_experts 64\nnum_layers 1\ntokens 5 3\nmoe_comm {}\n")
            lines = {}
            for comm in ("allgather", "alltoall", "mc2"):
                f.write_text(body.format(comm))
                rc, out, err = r3check("explain", "--sut", f"vllm-ascend:{FIXTURES / 'tests-on-n'}",
                                       "--engine-base", str(BASE), str(f))
                self.assertIn(rc, (0, 1), out + err)
                lines[comm] = [l for l in out.splitlines() if l.startswith(("dispatch:", "replay buffer:"))]
        self.assertEqual(lines["allgather"], [
            "dispatch: vllm-ascend allgather: every DP rank padded to max(N) rows, then all-gathered "
            "(pad rows between ranks)",
            "replay buffer: none: vllm-ascend's kernels have no replay buffer; kernel input 10 rows"])
        self.assertEqual(lines["alltoall"][0], "dispatch: vllm-ascend alltoall: each DP rank's rows (at least tp) "
                                               "tensor_split over TP")
        self.assertEqual(lines["mc2"], [
            "dispatch: vllm-ascend mc2: each DP rank's rows padded to tp chunks of cdiv(max(N), tp), one per TP rank",
            "replay buffer: none: vllm-ascend's kernels have no replay buffer; kernel input 3 rows"])

    def test_engines_lists_the_adapter_with_what_it_needs(self):
        rc, out, err = r3check("engines")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("vllm-ascend", out)
        self.assertIn("--engine-base PATH", out)


if __name__ == "__main__":
    if not HAVE_TORCH:
        print("no torch: skipped")
        sys.exit(77)
    if len(sys.argv) > 1:
        R3CHECK = sys.argv.pop(1)
    else:
        del CliTest
    unittest.main(verbosity=1)
