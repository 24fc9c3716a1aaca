#!/usr/bin/env python3
"""Tests of engines/sglang/r3_adapter.py over protocol 1, and of
`r3check verify/minimize --sut sglang:PATH` on the fixture engines of
tests/engines/sglang/ (README.md there): each seeded bug is found, the
correct fixture passes, and the sizing bug shrinks to 2 DP ranks.

  /usr/bin/python3 tests/engines/sglang_test.py [R3CHECK]    # exit 77: no torch
"""
import json
import os
import re
import pathlib
import subprocess
import sys
import textwrap
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
ADAPTER = ROOT / "engines" / "sglang" / "r3_adapter.py"
FIXTURES = ROOT / "tests" / "engines" / "sglang"
NEW_REL = pathlib.Path("python/sglang/srt/state_capturer")
R3CHECK = None
TIMEOUT_S = 300

try:
    import torch  # noqa: F401

    HAVE_TORCH = True
except Exception:  # pragma: no cover
    HAVE_TORCH = False


def R(dp, first, count):
    return {"dp": dp, "from": first, "count": count}


def naive_case(n, m=4, cps=None, tp=1):
    """The DP-gathered batch SGLang's TopK layer sees, on every rank."""
    rows = [R(d, 0, k) for d, k in enumerate(n) if k]
    c = {"dp": len(n), "tp": tp, "ep": False, "dispatch": "naive", "sp": False, "max_num_batched_tokens": m,
         "num_experts": 64, "top_k": 2, "num_layers": 2, "num_tokens_across_dp": n, "local_sizes": n,
         "ranks": [{"dp": d, "tp": t, "rows": rows} for d in range(len(n)) for t in range(tp)]}
    if cps is not None:
        c["chunked_prefill_size"] = cps
    return c


def deepep_case(n, m=4):
    """Internal dispatch (DeepEP) at tp 1: each rank's TopK sees its own tokens."""
    c = naive_case(n, m)
    c["dispatch"] = "internal"
    c["ranks"] = [{"dp": d, "tp": 0, "rows": [R(d, 0, k)] if k else []} for d, k in enumerate(n)]
    return c


def talk(source, cases, extra_files=None):
    """hello, one run, bye: (hello, result cases, stderr)."""
    p = subprocess.run([sys.executable, str(ADAPTER), "--source", str(source)],
                       input="\n".join(json.dumps(x) for x in (
                           {"type": "hello", "protocol": 1}, {"type": "run", "id": 1, "cases": cases},
                           {"type": "bye"})) + "\n",
                       capture_output=True, text=True, timeout=TIMEOUT_S)
    lines = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    return lines, p.stderr, p.returncode


def captured(result):
    return [r["captured"] for r in result["ranks"]]


@unittest.skipUnless(HAVE_TORCH, "no torch")
class AdapterTest(unittest.TestCase):
    def run_fixture(self, name, cases):
        lines, err, rc = talk(FIXTURES / name, cases)
        self.assertEqual(rc, 0, err)
        self.assertEqual(lines[0]["type"], "hello", lines)
        return lines[0], lines[1]["cases"]

    def test_hello_names_the_interface_and_the_sizing_code(self):
        hello, _ = self.run_fixture("correct", [naive_case([1, 1])])
        self.assertEqual(hello["engine"], "sglang")
        self.assertIn("create(*, model, model_config, num_tokens, max_running_requests, device)", hello["interface"])
        self.assertIn("on_forward_end(forward_batch, can_run_graph, cuda_graph_batch, no_copy_to_cpu)",
                      hello["interface"])
        self.assertEqual(hello["sizing"]["kind"], "device-buffer")
        self.assertTrue(hello["source"].endswith("state_capturer/routed_experts.py"))

    def test_each_dp_rank_gets_its_own_rows_from_the_gathered_batch(self):
        # eager, ragged [3, 1]; decode graph of batch 2 on both ranks; TP 2
        _, out = self.run_fixture("correct", [naive_case([3, 1]), naive_case([2, 2]), naive_case([2, 1], tp=2)])
        self.assertEqual(captured(out[0]), [[R(0, 0, 3)], [R(1, 0, 1)]])
        self.assertEqual(captured(out[1]), [[R(0, 0, 2)], [R(1, 0, 2)]])
        self.assertEqual(captured(out[2]), [[R(0, 0, 2)], [R(0, 0, 2)], [R(1, 0, 1)], [R(1, 0, 1)]])
        # SGLang's own sizing, reported per rank: max(cps * dp, mrr * dp), mrr = M
        self.assertEqual({r["replay_rows"] for c in out for r in c["ranks"]}, {8})

    def test_the_dp_less_mrr_term_overflows_on_a_full_decode_step(self):
        # cps 1, M (mrr) 4, dp 2: rows max(1 * 2, 4) = 4 < the 8 gathered rows
        _, out = self.run_fixture("pre26123", [naive_case([4, 4], cps=1), naive_case([4, 4])])
        bad, good = out
        for r in bad["ranks"]:
            self.assertEqual(r["replay_rows"], 4)
            self.assertEqual(r["error"]["type"], "RuntimeError")
            self.assertEqual(r["replay_error"], r["error"])  # the overflow is the sizing's
        # with cps = M the cps term covers the gathered batch
        self.assertEqual(captured(good), [[R(0, 0, 4)], [R(1, 0, 4)]])
        self.assertEqual({r["replay_error"] for r in good["ranks"]}, {None})

    def test_a_graph_offset_on_an_eager_step_reads_the_wrong_rows(self):
        _, out = self.run_fixture("graph-offset", [naive_case([3, 1]), naive_case([2, 2])])
        self.assertEqual(captured(out[0])[1], [R(0, 1, 1)])  # rank 1 at 1 * 1, inside dp0's rows
        self.assertEqual(captured(out[1]), [[R(0, 0, 2)], [R(1, 0, 2)]])  # right under a graph

    def test_no_dp_offset_gives_every_rank_dp0s_rows(self):
        _, out = self.run_fixture("no-dp-offset", [naive_case([2, 2])])
        self.assertEqual(captured(out[0]), [[R(0, 0, 2)], [R(0, 0, 2)]])

    def test_under_deepep_each_rank_captures_and_keeps_its_own_tokens(self):
        _, out = self.run_fixture("correct", [deepep_case([3, 2])])
        self.assertEqual(captured(out[0]), [[R(0, 0, 3)], [R(1, 0, 2)]])

    def test_the_dp_offset_under_deepep_reads_past_the_ranks_rows(self):
        _, out = self.run_fixture("deepep-offset", [deepep_case([3, 2]), naive_case([3, 2])])
        self.assertEqual(captured(out[0])[0], [R(0, 0, 3)])
        self.assertNotEqual(captured(out[0])[1], [R(1, 0, 2)])  # rows [3, 5) of a 2-row capture
        self.assertEqual(captured(out[1]), [[R(0, 0, 3)], [R(1, 0, 2)]])  # right without DeepEP

    def test_a_case_is_judged_alone_whatever_ran_before_it(self):
        # Each case starts from a fresh device buffer, and a capturer is built
        # per server setting: what an earlier case left at the rows the wrong
        # DeepEP slice reads ([3, 5) on DP rank 1) never shows.
        _, alone = self.run_fixture("deepep-offset", [deepep_case([3, 2], m=8)])
        for before in (deepep_case([1, 5], m=8), naive_case([3, 2], m=8)):
            with self.subTest(before["dispatch"]):
                _, after = self.run_fixture("deepep-offset", [before, deepep_case([3, 2], m=8)])
                self.assertEqual(after[1], alone[0])
        self.assertNotEqual(captured(alone[0])[1], [R(1, 0, 2)])
        # a capturer built for the naive case would slice the DeepEP one by the DP offset
        _, out = self.run_fixture("correct", [naive_case([3, 2], m=8), deepep_case([3, 2], m=8)])
        self.assertEqual(captured(out[1]), [[R(0, 0, 3)], [R(1, 0, 2)]])

    def test_a_layout_sglang_lacks_is_a_fatal_not_a_verdict(self):
        c = deepep_case([2, 1])
        c["tp"] = 2
        c["ranks"] = [{"dp": d, "tp": t, "rows": [R(d, 0, k)]} for d, k in enumerate([2, 1]) for t in range(2)]
        lines, err, rc = talk(FIXTURES / "correct", [c])
        self.assertEqual(rc, 1, err)
        self.assertEqual(lines[-1]["type"], "fatal", lines)
        self.assertIn("internal dispatch and tp > 1", lines[-1]["error"])

    def test_a_name_sglang_has_and_the_stand_in_lacks_is_a_gap_not_a_verdict(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = pathlib.Path(tmp) / NEW_REL
            d.mkdir(parents=True)
            (d / "base.py").write_text((FIXTURES / "correct" / NEW_REL / "base.py").read_text())
            src = (FIXTURES / "correct" / NEW_REL / "routed_experts.py").read_text()
            src += textwrap.dedent("""
                _capture = RoutedExpertsCapturer.capture
                def capture(self, layer_id, topk):
                    from sglang.srt.runtime_context import get_parallel
                    get_parallel().moe_ep_size  # a field SGLang has that r3check does not model
                    _capture(self, layer_id, topk)
                RoutedExpertsCapturer.capture = capture
            """)
            (d / "routed_experts.py").write_text(src)
            (pathlib.Path(tmp) / "base_template.py").write_text((FIXTURES / "base_template.py").read_text())
            (pathlib.Path(tmp) / "capturer_template.py").write_text((FIXTURES / "capturer_template.py").read_text())
            lines, err, rc = talk(tmp, [naive_case([1, 1])])
        self.assertEqual(rc, 1, err)
        fatal = lines[-1]
        self.assertEqual(fatal["type"], "fatal", lines)
        self.assertIn("stand-in gap (r3check's, not a verdict on the engine)", fatal["error"])
        self.assertIn("'moe_ep_size'", fatal["error"])

    def test_a_lone_file_finds_its_base_beside_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            for f in ("routed_experts.py", "base.py"):
                (pathlib.Path(tmp) / f).write_text((FIXTURES / "correct" / NEW_REL / f).read_text())
            for f in ("base_template.py", "capturer_template.py"):
                (pathlib.Path(tmp) / f).write_text((FIXTURES / f).read_text())
            lines, err, rc = talk(pathlib.Path(tmp) / "routed_experts.py", [naive_case([1, 2])])
        self.assertEqual(rc, 0, err)
        self.assertEqual(captured(lines[1]["cases"][0]), [[R(0, 0, 1)], [R(1, 0, 2)]])


def r3check(*args):
    p = subprocess.run([R3CHECK, *args], capture_output=True, text=True, timeout=TIMEOUT_S)
    return p.returncode, p.stdout, p.stderr


@unittest.skipUnless(HAVE_TORCH, "no torch")
class CliTest(unittest.TestCase):
    def verify(self, name):
        return r3check("verify", "--sut", f"sglang:{FIXTURES / name}", "--cases", "200", "--seed", "7")

    def test_the_correct_fixture_passes_and_the_vllm_only_corpus_is_said_not_run(self):
        rc, out, err = self.verify("correct")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("verify: OK", out)
        self.assertIn("findings case(s) not run: they pin findings in vLLM's code", err)
        self.assertIn("seeds case(s) not run: layouts sglang-engine does not have", err)

    def test_every_seeded_bug_fails_verify(self):
        for name, invariant in (("pre26123", "replay-fits"), ("graph-offset", "rows-exact"),
                                ("no-dp-offset", "rows-exact"), ("deepep-offset", "rows-exact")):
            with self.subTest(name):
                rc, out, err = self.verify(name)
                self.assertEqual(rc, 1, out + err)
                self.assertIn("verify: FAILED", out)
                self.assertIn(f"[{ {'replay-fits': 1, 'rows-exact': 3}[invariant]} {invariant}]", out)

    def test_the_sizing_bug_minimizes_to_two_dp_ranks_and_the_fix_passes_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            start = pathlib.Path(tmp) / "start.r3case"
            start.write_text("r3case 1\ndp 4\ntp 2\nep on\ndispatch naive\nsp off\nmax_num_batched_tokens 64\n"
                             "top_k 8\nnum_experts 256\nnum_layers 2\ntokens 64 64 64 64\nchunked_prefill_size 8\n")
            rc, out, err = r3check("minimize", "--sut", f"sglang:{FIXTURES / 'pre26123'}", str(start))
            self.assertEqual(rc, 0, out + err)
            self.assertIn("replay-fits", out)
            case = "".join(line + "\n" for line in out.splitlines() if not line.startswith("#"))
            self.assertIn("dp 2\n", case)
            small = pathlib.Path(tmp) / "small.r3case"
            small.write_text(case)
            rc, out, err = r3check("check", "--sut", f"sglang:{FIXTURES / 'pre26123'}", str(small))
            self.assertEqual(rc, 1, out + err)
            rc, out, err = r3check("check", "--sut", f"sglang:{FIXTURES / 'correct'}", str(small))
            self.assertEqual(rc, 0, out + err)

    def test_sweep_judges_each_fixture_checkout_as_a_version(self):
        names = ["correct", "pre26123", "graph-offset", "no-dp-offset", "deepep-offset"]
        rc, out, err = r3check("sweep", "--engine", "sglang", *[str(FIXTURES / n) for n in names],
                               "--cases", "100", "--seed", "7", "--jobs", "2")
        self.assertEqual(rc, 1, out + err)  # a version fails
        words = {line.split()[0].rsplit("/", 1)[-1]: line.split()[1] for line in out.splitlines()
                 if line.startswith(str(FIXTURES))}
        self.assertEqual(words, {"correct": "PASS", "pre26123": "FAIL", "graph-offset": "FAIL",
                                 "no-dp-offset": "FAIL", "deepep-offset": "FAIL"}, out)
        self.assertIn("sweep: 5 version(s), 5 judged", out)

    def test_sweep_takes_revisions_of_an_sglang_repository(self):
        # Self-contained files (no template beside them): a revision is
        # written out of git with its capturer and base alone.
        base = (FIXTURES / "base_template.py").read_text()
        capturer = (FIXTURES / "capturer_template.py").read_text()
        with tempfile.TemporaryDirectory() as tmp:
            repo = pathlib.Path(tmp) / "sglang"
            d = repo / NEW_REL
            d.mkdir(parents=True)
            git = lambda *a: subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True, text=True)
            git("init", "-q")
            git("config", "user.email", "t@example.com")
            git("config", "user.name", "t")
            (d / "base.py").write_text(base)
            git("add", "-A")
            git("commit", "-q", "-m", "the base alone")  # a revision without a capturer
            for variant, msg in (('{"sizing": "no-dp"}', "before the fix"), ("{}", "the fix")):
                (d / "routed_experts.py").write_text(f"VARIANT = {variant}\n" + capturer)
                git("add", "-A")
                git("commit", "-q", "-m", msg)
            rc, out, err = r3check("sweep", "--engine", "sglang", f"{repo}@HEAD~2", f"{repo}@HEAD~1",
                                   f"{repo}@HEAD", "--cases", "100", "--seed", "7")
        self.assertEqual(rc, 2, out + err)  # the base-only revision is an ERROR
        verdicts = [re.search(r"  (PASS|FAIL|ERROR)  ", line).group(1) for line in out.splitlines()
                    if line.startswith(str(repo))]
        self.assertEqual(verdicts, ["ERROR", "FAIL", "PASS"], out)
        self.assertIn("no vllm/model_executor/layers/fused_moe/routed_experts_capturer.py (or SGLang's or vllm-ascend's capture file) at",
                      out)

    def test_a_case_too_large_for_an_engine_is_refused_naming_the_limit(self):
        with tempfile.TemporaryDirectory() as tmp:
            for name, text, needle in (
                    ("ranks", "dp 1024\ntp 8\nmax_num_batched_tokens 1\ntokens" + " 1" * 1024,
                     "case too large for an engine SUT: 8192 ranks (limit 4096)"),
                    ("rows", "dp 8\ntp 1\nmax_num_batched_tokens 1048576\ntokens" + " 1" * 8,
                     "case too large for an engine SUT: dp * max_num_batched_tokens = 8388608 rows (limit 4194304)")):
                with self.subTest(name):
                    f = pathlib.Path(tmp) / f"{name}.r3case"
                    f.write_text("r3case 1\nep off\ndispatch naive\nsp off\ntop_k 1\nnum_experts 8\nnum_layers 1\n"
                                 + text + "\n")
                    rc, out, err = r3check("check", "--sut", f"sglang:{FIXTURES / 'correct'}", str(f))
                    self.assertEqual(rc, 2, out + err)
                    self.assertIn(needle, err)

    def test_a_case_with_a_layout_sglang_lacks_is_refused_naming_the_field(self):
        with tempfile.TemporaryDirectory() as tmp:
            f = pathlib.Path(tmp) / "sp.r3case"
            f.write_text("r3case 1\ndp 2\ntp 2\nep on\ndispatch naive\nsp auto\nmax_num_batched_tokens 8\n"
                         "top_k 8\nnum_experts 256\nnum_layers 1\ntokens 5 3\n")
            rc, out, err = r3check("check", "--sut", f"sglang:{FIXTURES / 'correct'}", str(f))
        self.assertEqual(rc, 2, out + err)
        self.assertIn("case outside the layouts of sglang:", err)
        self.assertIn(": sp: auto turns MoE sequence parallelism on", err)
        self.assertEqual(len([l for l in err.splitlines() if l.startswith("r3check: error") or "outside" in l]), 1, err)


if __name__ == "__main__":
    if not HAVE_TORCH:
        print("no torch: skipped")
        sys.exit(77)
    if len(sys.argv) > 1:
        R3CHECK = sys.argv.pop(1)
    else:
        del CliTest
    unittest.main(verbosity=1)
