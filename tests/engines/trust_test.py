#!/usr/bin/env python3
"""Engines you can trust (docs/engines.md): the adapter judges only what the
engine's own code does.

- code that reads what real vLLM has (ForwardContext.additional_kwargs,
  speculative_config, get_pp_indices, ...) gets the verdict of its capture;
- a name r3check's stand-ins lack is a `fatal` naming the stand-in: never a
  verdict, however the engine wraps the exception;
- the constructor interfaces vLLM upstream had are driven;
- vLLM's own replay sizing (monolithic kernel, sink) is run per rank.

  /usr/bin/python3 tests/engines/trust_test.py          # exit 77: no torch
"""
import json
import pathlib
import shutil
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from adapter_test import (EAGER_SP, FIXTURES, HAVE_TORCH, INTERNAL_SP, NON_SP_NAIVE, TARGET_REL, AdapterTestBase, P, R,  # noqa: E402
                          fixture, make_case)

HEADER = """\
from vllm.config import VllmConfig
from vllm.distributed.parallel_state import get_tp_group
from vllm.forward_context import get_forward_context
from vllm.platforms import current_platform
"""

# The spec's warmup step, TP2/DP2 EP on: 16384 kernel input rows per rank.
WARMUP = make_case(2, 2, [8192, 8192], [R(0, 0, 8192), R(1, 0, 8192)], local_sizes=[4096] * 4)


class OneOffEngines(AdapterTestBase):
    """Capturers made of the post50874 fixture plus a few lines of code."""

    def engine(self, variant="{}", before_capture="", module_code="", init_code=""):
        tmp = pathlib.Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp)
        shutil.copy(FIXTURES / "capturer_template.py", tmp)
        path = tmp / "checkout" / TARGET_REL
        path.parent.mkdir(parents=True)
        body = HEADER + textwrap.dedent(module_code) + f"""
VARIANT = {variant}
import pathlib as _pathlib
_T = next(p / "capturer_template.py" for p in _pathlib.Path(__file__).resolve().parents if (p / "capturer_template.py").is_file())
exec(compile(_T.read_text(), str(_T), "exec"))
import functools as _functools
_capture, _init = RoutedExpertsCapturer.capture, RoutedExpertsCapturer.__init__

@_functools.wraps(_init)  # keeps the constructor's signature: the adapter picks the interface from it
def _wrapped_init(self, *args, **kwargs):
{textwrap.indent(textwrap.dedent(init_code) or "pass", "    ")}
    _init(self, *args, **kwargs)

@_functools.wraps(_capture)
def _wrapped_capture(self, layer_id, topk_ids):
{textwrap.indent(textwrap.dedent(before_capture) or "pass", "    ")}
    return _capture(self, layer_id, topk_ids)

RoutedExpertsCapturer.__init__ = _wrapped_init
RoutedExpertsCapturer.capture = _wrapped_capture
"""
        path.write_text(body)
        return tmp / "checkout"


@unittest.skipUnless(HAVE_TORCH, "torch cannot be imported")
class FaithfulStandInsTest(OneOffEngines):
    def test_what_real_vllm_has_gives_the_captures_verdict(self):
        src = self.engine(before_capture="""
            ctx = get_forward_context()
            assert ctx.additional_kwargs == {}
            assert ctx.batch_descriptor is None and ctx.ubatch_slices is None and ctx.virtual_engine == 0
            assert not ctx.skip_compiled
            """, init_code="""
            from vllm.distributed.utils import get_pp_indices
            cfg = kwargs["vllm_config"]
            assert cfg.speculative_config is None and cfg.kv_transfer_config is None
            assert cfg.model_config.get_hidden_size() > 0
            # aoshen02's SHM artifact branch names the top-k so
            assert cfg.model_config.get_num_experts_per_token() == cfg.model_config.get_num_experts_per_tok()
            assert get_pp_indices(cfg.model_config.get_total_num_hidden_layers(), 0, 1) == (0, cfg.model_config.get_total_num_hidden_layers())
            """)
        _, (res,) = self.run_cases(src, [EAGER_SP])
        self.assert_ranks(res, {0: [R(0, 0, 5)], 1: [R(1, 0, 3)]})

    def test_a_getattr_default_on_a_name_vllm_lacks_is_not_a_gap(self):
        src = self.engine(before_capture="""
            assert getattr(get_forward_context(), "no_such_field_in_vllm", None) is None
            assert not hasattr(get_forward_context().dp_metadata, "no_such_field_either")
            """)
        _, (res,) = self.run_cases(src, [EAGER_SP])
        self.assert_ranks(res, {0: [R(0, 0, 5)], 1: [R(1, 0, 3)]})

    def test_the_engines_own_assert_is_a_verdict(self):
        src = self.engine(before_capture="assert topk_ids.shape[0] < 0, 'the engine says no'")
        _, (res,) = self.run_cases(src, [EAGER_SP])
        for r in res["ranks"]:
            self.assertEqual(r["error"], {"type": "AssertionError", "message": "the engine says no"})

    def test_the_engines_own_constructor_error_is_a_verdict(self):
        src = self.engine(init_code="fcntl.flock(0, 0)  # a port that dropped `import fcntl`")
        _, (res,) = self.run_cases(src, [EAGER_SP])
        for r in res["ranks"]:
            self.assertEqual(r["error"]["type"], "NameError", r)
            self.assertTrue(r["error"]["message"].startswith("building the capturer: name 'fcntl'"), r)
        self.assertIsNone(res["buffer_dtype"])

    def test_a_constructor_error_on_one_rank_still_reports_the_replay_buffer(self):
        src = self.engine(init_code="""
            from vllm.distributed.parallel_state import get_dp_group
            assert get_dp_group().rank_in_group == 0, "this port builds only on DP rank 0"
            """)
        sizing = fixture("monolithic-post50874") / "vllm/model_executor/layers/fused_moe/modular_kernel.py"
        _, (res,) = self.run_cases(src / TARGET_REL, [EAGER_SP], args=("--sizing", str(sizing)))
        ranks = res["ranks"]
        self.assertEqual([(r["error"] or {}).get("type") for r in ranks], [None] * 2 + ["AssertionError"] * 2)
        # Every rank reports vLLM's buffer; where no capturer was built, no kernel ran.
        self.assertEqual([(r["replay_rows"], r["kernel_slice_rows"]) for r in ranks], [(32768, 10)] * 2 + [(32768, None)] * 2)

    def test_pp_indices_split_like_vllm(self):
        sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "engines" / "runtime"))
        sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "engines" / "vllm"))
        from r3_vllm.standins import get_pp_indices

        self.assertEqual([get_pp_indices(10, r, 3) for r in range(3)], [(0, 3), (3, 7), (7, 10)])
        self.assertEqual([get_pp_indices(8, r, 2) for r in range(2)], [(0, 4), (4, 8)])
        self.assertEqual(get_pp_indices(5, 0, 1), (0, 5))


    def test_features_r3check_does_not_model_have_vllms_off_values(self):
        # A capturer may branch on any of these; each stand-in must say what
        # vLLM says without the feature (no pipeline or context parallelism,
        # no EPLB, DBO, speculation, LoRA or quantization), or r3check would
        # judge a code path no deployment it models takes.
        sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "engines" / "runtime"))
        sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "engines" / "vllm"))
        import types

        from r3_vllm import standins

        cfg = standins.make_config(M=16, num_experts=8, num_layers=2, D=2, T=2, d=1, t=1, ep=True,
                                   instance_id="r3check-test")
        par = cfg.parallel_config
        self.assertEqual(
            (par.pipeline_parallel_size, par.prefill_context_parallel_size, par.decode_context_parallel_size,
             par.enable_eplb, par.enable_dbo, par.disable_custom_all_reduce, par.distributed_executor_backend,
             par.data_parallel_backend),
            (1, 1, 1, False, False, False, None, "mp"))
        self.assertEqual((par.world_size, par.world_size_across_dp, par.rank, par.data_parallel_rank,
                          par.data_parallel_size, par.tensor_parallel_size), (2, 4, 1, 1, 2, 2))
        self.assertEqual((cfg.speculative_config, cfg.lora_config, cfg.quant_config, cfg.additional_config,
                          cfg.instance_id), (None, None, None, {}, "r3check-test"))
        model = cfg.model_config
        self.assertEqual((model.quantization, model.use_mla, model.is_deepseek_mla, model.enforce_eager,
                          model.enable_return_routed_experts), (None, False, False, False, True))
        self.assertEqual(cfg.scheduler_config.max_num_seqs, 16)  # min(M, vLLM's default 128)
        case = types.SimpleNamespace(D=2, T=2, ep=True, sp=None, E=8, M=16)
        moe = standins.make_moe_config(case, d=1, t=1, device="cpu").moe_parallel_config
        self.assertEqual((moe.pcp_size, moe.pcp_rank, moe.ep_size, moe.ep_rank), (1, 0, 4, 3))
        for group in (standins.get_pp_group(), standins.get_pcp_group(), standins.get_dcp_group()):
            self.assertEqual((group.world_size, group.rank_in_group), (1, 0), group)
        platform = standins.current_platform
        self.assertIs(platform.is_cuda(), platform.device_type == "cuda")
        self.assertIs(platform.is_cuda_alike(), platform.device_type == "cuda")
        self.assertIs(platform.is_cpu(), platform.device_type == "cpu")
        self.assertIs(platform.is_rocm(), False)
        self.assertIs(standins.is_full_attention_spec(standins.FullAttentionSpec()), True)
        self.assertIs(standins.is_full_attention_spec(object()), False)


@unittest.skipUnless(HAVE_TORCH, "torch cannot be imported")
class StandInGapTest(OneOffEngines):
    def expect_gap(self, src, *needles):
        a = self.start(src)
        self.assertEqual(a.ask({"type": "hello", "protocol": 1})["type"], "hello", a.err_text())
        a.send({"type": "run", "id": 1, "cases": [EAGER_SP]})
        line = a.read_line()
        self.assertIsNotNone(line, a.err_text())
        msg = json.loads(line)
        self.assertEqual(msg["type"], "fatal", msg)  # never a result: no verdict on the engine
        self.assertIn("stand-in gap (r3check's, not a verdict on the engine)", msg["error"])
        for n in needles:
            self.assertIn(n, msg["error"])
        self.assertEqual(a.proc.wait(timeout=60), 1)
        return msg["error"]

    def test_a_forward_context_field_the_stand_in_lacks(self):
        err = self.expect_gap(self.engine(before_capture="get_forward_context().r3check_unknown_field"),
                              "vllm.forward_context.ForwardContext", "'r3check_unknown_field'")
        self.assertIn("routed_experts_capturer.py:", err)  # where the engine's code needed it

    def test_a_gap_the_engine_wraps_is_still_a_gap(self):
        self.expect_gap(self.engine(before_capture="""
            try:
                get_forward_context().r3check_unknown_field
            except Exception as e:
                raise RuntimeError("capture failed") from e
            """), "'r3check_unknown_field'")

    def test_a_placeholder_called_at_run_time(self):
        self.expect_gap(self.engine(module_code="from vllm.model_executor.r3check_unknown import helper\n",
                                    before_capture="helper(topk_ids)"), "helper")

    def test_a_config_field_the_stand_in_lacks(self):
        a = self.start(self.engine(init_code='kwargs["vllm_config"].parallel_config.r3check_unknown_setting'))
        a.send({"type": "hello", "protocol": 1})
        msg = json.loads(a.read_line())
        self.assertEqual(msg["type"], "fatal")
        self.assertIn("vllm.config.ParallelConfig", msg["error"])
        self.assertIn("'r3check_unknown_setting'", msg["error"])


@unittest.skipUnless(HAVE_TORCH, "torch cannot be imported")
class OldTorchTest(OneOffEngines):
    """What an older torch lacks (torch.dtype.itemsize came in 2.1) is this
    torch's gap, never a verdict: one fatal line, when building and when
    capturing."""

    def setUp(self):
        import torch

        if tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2]) >= (2, 1):
            self.skipTest(f"torch {torch.__version__} has what the engine reads")

    def test_at_construction(self):
        a = self.start(self.engine(init_code="import torch; torch.zeros(1).dtype.itemsize"))
        a.send({"type": "hello", "protocol": 1})
        msg = json.loads(a.read_line())
        self.assertEqual(msg["type"], "fatal")
        self.assertIn("has no torch.dtype.itemsize, which the engine's code at ", msg["error"])
        self.assertIn("needs while building the capturer (r3check's gap, not a verdict on the engine): judge it "
                      "with a newer torch (--engine-python)", msg["error"])

    def test_while_capturing(self):
        a = self.start(self.engine(before_capture="import torch; topk_ids.dtype.itemsize"))
        self.assertEqual(a.ask({"type": "hello", "protocol": 1})["type"], "hello", a.err_text())
        msg = a.ask({"type": "run", "id": 1, "cases": [EAGER_SP]})
        self.assertEqual(msg["type"], "fatal", msg)
        self.assertIn("has no torch.dtype.itemsize", msg["error"])
        self.assertIn("while capturing for rank (dp 0, tp 0)", msg["error"])
        self.assertEqual(a.proc.wait(timeout=60), 1)


@unittest.skipUnless(HAVE_TORCH, "torch cannot be imported")
class InterfacesTest(OneOffEngines):
    def test_init_buffer_with_model_config_and_instance_id(self):
        src = self.engine(variant='{"interface": "legacy"}',
                          module_code="from vllm.distributed import get_tensor_model_parallel_rank\n")
        # The legacy fixture's init_buffer takes vllm_config: rewrite its signature.
        path = src / TARGET_REL
        path.write_text(path.read_text() + textwrap.dedent("""
            _ib = RoutedExpertsCapturer.init_buffer
            def _init_buffer(self, max_num_batched_tokens, max_num_kv_tokens, model_config, instance_id):
                import types
                cfg = types.SimpleNamespace(model_config=model_config, instance_id=instance_id,
                                            parallel_config=get_current_vllm_config().parallel_config)
                return _ib(self, max_num_batched_tokens, max_num_kv_tokens, cfg)
            RoutedExpertsCapturer.init_buffer = _init_buffer
            from vllm.config import get_current_vllm_config
            """))
        hello, (res,) = self.run_cases(src, [EAGER_SP])
        self.assertEqual(hello["interface"], "RoutedExpertsCapturer.create() + init_buffer(max_num_batched_tokens, "
                                             "max_num_kv_tokens, model_config, instance_id)")
        self.assert_ranks(res, {0: [R(0, 0, 5)], 1: [R(1, 0, 3)]})

    def test_a_method_inspect_cannot_read_is_one_fatal_line(self):
        # A C builtin or a wrapper with a broken __signature__: the adapter
        # cannot tell the interface, and says so instead of guessing one.
        src = self.engine(variant='{"interface": "legacy"}')
        path = src / TARGET_REL
        path.write_text(path.read_text() + "\nRoutedExpertsCapturer.init_buffer.__signature__ = 'broken'\n")
        a = self.start(src)
        msg = a.ask({"type": "hello", "protocol": 1})
        self.assertEqual(msg["type"], "fatal", msg)
        self.assertIn("cannot inspect RoutedExpertsCapturer.init_buffer", msg["error"])
        self.assertEqual(a.proc.wait(timeout=60), 1)

    def test_abstract_base_design_with_create_enable(self):
        """create(enable) picks a real or no-op subclass; init_buffer takes
        enable_shared_memory; the buffer has a name of its own."""
        tmp = pathlib.Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp)
        path = tmp / TARGET_REL
        path.parent.mkdir(parents=True)
        path.write_text(HEADER + textwrap.dedent("""
            import abc
            import torch
            _global = None

            class RoutedExpertsCapturer(abc.ABC):
                @staticmethod
                def create(enable):
                    global _global
                    assert _global is None, "already created"
                    _global = _Real() if enable else _Noop()
                    return _global

                @abc.abstractmethod
                def init_buffer(self, max_num_batched_tokens, max_num_kv_tokens, model_config, instance_id,
                                enable_shared_memory):
                    ...

                @abc.abstractmethod
                def capture(self, layer_id, topk_ids):
                    ...

            class _Noop(RoutedExpertsCapturer):
                def init_buffer(self, *a):
                    pass

                def capture(self, layer_id, topk_ids):
                    pass

            class _Real(RoutedExpertsCapturer):
                def init_buffer(self, max_num_batched_tokens, max_num_kv_tokens, model_config, instance_id,
                                enable_shared_memory):
                    assert enable_shared_memory is False
                    self._experts_capturer_device_buffer = torch.zeros(
                        (max_num_batched_tokens, model_config.get_total_num_hidden_layers(),
                         model_config.get_num_experts_per_tok()), dtype=torch.int32)

                def capture(self, layer_id, topk_ids):
                    md = get_forward_context().dp_metadata
                    n = topk_ids.shape[0]
                    start = 0
                    if md is not None:
                        d = get_current_vllm_config().parallel_config.data_parallel_rank
                        counts = md.num_tokens_across_dp_cpu
                        assert n == int(counts.sum()), f"unexpected batch {n}"
                        start, n = int(counts[:d].sum()), int(counts[d])
                    self._experts_capturer_device_buffer[:n, layer_id] = topk_ids[start:start + n]

            from vllm.config import get_current_vllm_config
            """))
        hello, (res,) = self.run_cases(tmp, [NON_SP_NAIVE])
        self.assertEqual(hello["interface"], "RoutedExpertsCapturer.create(enable) + init_buffer(max_num_batched_tokens, "
                                             "max_num_kv_tokens, model_config, instance_id, enable_shared_memory)")
        self.assert_ranks(res, {0: [R(0, 0, 5)], 1: [R(1, 0, 3)]})

    def test_the_hello_names_the_dtypes_that_stand_in(self):
        import torch
        old_torch = tuple(int(p) for p in torch.__version__.split(".")[:2]) < (2, 3)  # no torch.uint16 before 2.3
        hello, _ = self.run_cases(fixture("post50874"), [EAGER_SP])
        self.assertEqual(hello.get("dtype_map"), "uint16 -> int32, uint32 -> int64, uint64 -> int64" if old_torch else None)

    @unittest.skipIf(__import__("torch").cuda.is_available(), "the device map is for CPU-only torch")
    def test_a_positional_cuda_move_runs_on_the_cpu(self):
        # topk_ids.to("cuda") and .cuda(), as engine code writes them (issue
        # 23's gap list: the positional form was never executed).
        src = self.engine(before_capture="""
            assert topk_ids.to("cuda").device.type == "cpu"
            assert topk_ids.to("cuda:0", non_blocking=True).device.type == "cpu"
            assert topk_ids.cuda().device.type == "cpu"
            """)
        hello, (res,) = self.run_cases(src, [EAGER_SP])
        self.assert_ranks(res, {0: [R(0, 0, 5)], 1: [R(1, 0, 3)]})

    @unittest.skipIf(__import__("torch").cuda.is_available(), "the device map is for CPU-only torch")
    def test_a_hard_coded_cuda_device_runs_on_the_cpu(self):
        src = self.engine(module_code="""
            import torch as _torch
            class _CudaPlatform:
                device_type = "cuda"
            """, init_code="""
            globals()["current_platform"] = _CudaPlatform()
            """)
        hello, (res,) = self.run_cases(src, [EAGER_SP])
        self.assertEqual(hello["device_map"], "cuda -> cpu")
        self.assert_ranks(res, {0: [R(0, 0, 5)], 1: [R(1, 0, 3)]})


@unittest.skipUnless(HAVE_TORCH, "torch cannot be imported")
class ProtocolHygieneTest(OneOffEngines):
    def test_a_lone_surrogate_in_an_engine_message_is_valid_json(self):
        _, (res,) = self.run_cases(self.engine(before_capture="raise AssertionError('bad \\udc80 byte')"), [EAGER_SP])
        self.assertEqual(res["ranks"][0]["error"], {"type": "AssertionError", "message": "bad \ufffd byte"})

    def test_engine_code_reading_stdin_gets_eof(self):
        src = self.engine(before_capture="""
            import sys
            assert sys.stdin.read() == ""
            input()
            """)
        _, (res,) = self.run_cases(src, [EAGER_SP])
        self.assertEqual(res["ranks"][0]["error"]["type"], "EOFError")


    def test_a_python_without_torch_is_one_fatal_line(self):
        # --engine-python pointing at an interpreter without torch (issue
        # 23's gap list: main.py's import guard was never executed).
        tmp = pathlib.Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp)
        (tmp / "torch.py").write_text('raise ImportError("No module named \'torch\' (test)")\n')
        err = self.expect_fatal(fixture("post50874"), "cannot import torch with ", env={"PYTHONPATH": str(tmp)})
        self.assertIn(": ImportError: No module named 'torch' (test)", err)

    def test_a_file_not_named_py_loads_as_python(self):
        tmp = pathlib.Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp)
        shutil.copy(FIXTURES / "capturer_template.py", tmp)  # the fixture runs the template beside it
        saved = tmp / "routed_experts_capturer.py.orig"  # as a patch tool leaves it
        shutil.copy(fixture("post50874") / TARGET_REL, saved)
        _, (res,) = self.run_cases(saved, [EAGER_SP])
        self.assertEqual([r["captured"] for r in res["ranks"]], [[R(0, 0, 5)]] * 2 + [[R(1, 0, 3)]] * 2)
        text = tmp / "notes.txt"
        text.write_text("root:x:0:0:root:/root:/bin/bash\n")
        # Its own cause, not "'NoneType' object has no attribute 'loader'".
        self.expect_fatal(text, "loading " + str(text.resolve()) + " failed: SyntaxError: invalid syntax")


@unittest.skipUnless(HAVE_TORCH, "torch cannot be imported")
class ReplaySizingTest(AdapterTestBase):
    """vLLM's own sizing code, fixtures written from spec section 9."""

    def ranks(self, name, case=WARMUP):
        hello, (res,) = self.run_cases(fixture(name), [case])
        return hello, res["ranks"]

    def test_pre50874_sizing_raises_vllms_value_error_at_warmup(self):
        hello, ranks = self.ranks("monolithic-pre50874")
        self.assertEqual(hello["sizing"]["kind"], "monolithic")
        self.assertTrue(hello["sizing"]["source"].endswith("fused_moe/modular_kernel.py"))
        for r in ranks:
            self.assertEqual((r["n"], r["replay_rows"], r["kernel_slice_rows"]), (16384, 8192, None))
            self.assertEqual(r["replay_error"], {"type": "ValueError", "message": (
                "Routing replay buffer was initialized for 8192 tokens on cpu, but the kernel received "
                "16384 tokens on cpu.")})
            self.assertEqual(r["captured"], [R(r["dp"], 0, 8192)])  # the capture is judged apart

    def test_post50874_sizing_fits_and_hands_the_rows_on(self):
        _, ranks = self.ranks("monolithic-post50874")
        for r in ranks:
            self.assertEqual((r["replay_rows"], r["replay_error"], r["kernel_slice_rows"]), (32768, None, 16384))
            self.assertEqual(r["captured"], [R(r["dp"], 0, 8192)])
        _, ranks = self.ranks("monolithic-post50874", EAGER_SP)  # through the int16 buffer, SP padding and all
        self.assertEqual([r["captured"] for r in ranks], [[R(0, 0, 5)]] * 2 + [[R(1, 0, 3)]] * 2)

    def test_the_int16_replay_rows_cannot_be_tp_gathered_over_nccl(self):
        # Under SP-internal dispatch capture() all-gathers its shard over TP.
        # Handed the rows through vLLM's int16 replay buffer it gathers an
        # int16 tensor, which NCCL has no type for: the deployment raises,
        # so the verdict is the engine's error, in one process as under torchrun.
        _, ranks = self.ranks("monolithic-post50874", INTERNAL_SP)
        for r in ranks:
            self.assertEqual(r["error"], {"type": "TypeError", "message": (
                "Input tensor data type is not supported for NCCL process group: Short")}, r)
        _, (res,) = self.run_cases(fixture("post50874"), [INTERNAL_SP])  # int32 topk ids gather fine
        self.assertEqual([r["error"] for r in res["ranks"]], [None] * 4)

    def test_sink_sizing_fits(self):
        hello, ranks = self.ranks("sink")
        self.assertEqual(hello["sizing"]["kind"], "sink")
        for r in ranks:
            self.assertEqual((r["replay_rows"], r["replay_error"], r["kernel_slice_rows"]), (32768, None, 16384))

    def test_a_too_small_sink_gives_a_short_slice_and_no_error(self):
        _, ranks = self.ranks("sink-short")
        for r in ranks:
            self.assertEqual((r["n"], r["replay_rows"], r["replay_error"], r["kernel_slice_rows"]),
                             (16384, 8192, None, 8192))
        # The short slice reaches capture: DP rank 1 then takes DP rank 0's rows.
        self.assertEqual(ranks[2]["captured"], [R(0, 0, 8192)])

    def test_a_capture_that_raises_on_a_short_slice_still_reports_the_buffer(self):
        # The engine's own code fails on the short slice (a verdict); every
        # rank still reports the buffer vLLM allocated, as the protocol asks
        # of a case (found on the H200: verify stopped with exit 2 here).
        small = make_case(2, 2, [5, 3], [R(0, 0, 5), P(1), R(1, 0, 3), P(1)], local_sizes=[3, 3, 2, 2], m=3)
        _, ranks = self.ranks("sink-short", small)
        self.assertEqual([(r["n"], r["replay_rows"], r["kernel_slice_rows"]) for r in ranks], [(10, 3, 3)] * 4)  # 3 + 3 + 2 + 2 gathered rows
        # DP rank 0's 3-row slice is cdiv(5, 2): its TP all-gather of the
        # int16 rows raises as NCCL does; DP rank 1 takes DP rank 0's rows.
        self.assertEqual([(r["error"] or {}).get("type") for r in ranks], ["TypeError"] * 2 + [None] * 2)
        self.assertEqual(ranks[2]["captured"], [R(0, 0, 3)])

    def test_a_sink_with_its_own_check_raises_it(self):
        _, ranks = self.ranks("sink-checked-short")
        for r in ranks:
            self.assertEqual((r["replay_rows"], r["kernel_slice_rows"]), (8192, None))
            self.assertEqual(r["replay_error"], {"type": "ValueError", "message": (
                "Routing replay buffer holds 8192 tokens, but the kernel received 16384.")})
        _, ranks = self.ranks("sink-checked-short", EAGER_SP)  # 10 rows fit: out() and capture() hand them on
        self.assertEqual([(r["replay_error"], r["kernel_slice_rows"]) for r in ranks], [(None, 10)] * 4)
        self.assertEqual([r["captured"] for r in ranks], [[R(0, 0, 5)]] * 2 + [[R(1, 0, 3)]] * 2)

    def test_a_kernel_object_without_one_replay_buffer_is_a_gap(self):
        # The adapter finds vLLM's buffer by name, or as the one tensor the
        # object holds; with two (or none) it cannot tell which the kernel
        # writes: r3check's gap, a fatal naming it, never a verdict.
        tmp = pathlib.Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp)
        sizing = tmp / "modular_kernel.py"
        sizing.write_text(textwrap.dedent("""
            import torch

            class FusedMoEExpertsMonolithic:
                def set_capture_fn(self, fn):
                    self.fn = fn
                    rows = self.moe_config.max_num_tokens * self.moe_config.ep_size
                    self.ids = torch.empty((rows, self.moe_config.experts_per_token), dtype=torch.int16)
                    self.weights = torch.empty((rows, self.moe_config.experts_per_token))

                def _maybe_make_routing_replay_buffer(self, n, device):
                    return self.ids
            """))
        a = self.start(fixture("post50874") / TARGET_REL, args=("--sizing", str(sizing)))
        self.assertEqual(a.ask({"type": "hello", "protocol": 1})["type"], "hello", a.err_text())
        msg = a.ask({"type": "run", "id": 1, "cases": [EAGER_SP]})
        self.assertEqual(msg["type"], "fatal", msg)
        self.assertIn("the replay sizing adapter", msg["error"])
        self.assertIn("no replay buffer tensor after set_capture_fn", msg["error"])

    def test_no_sizing_code_no_replay_fields(self):
        hello, ranks = self.ranks("post50874", EAGER_SP)
        self.assertIsNone(hello["sizing"])
        self.assertNotIn("replay_rows", ranks[0])

    def test_sizing_flag_names_the_file(self):
        sizing = fixture("monolithic-pre50874") / "vllm/model_executor/layers/fused_moe/modular_kernel.py"
        hello, (res,) = self.run_cases(fixture("post50874") / TARGET_REL, [WARMUP], args=("--sizing", str(sizing)))
        self.assertEqual(hello["sizing"]["source"], str(sizing.resolve()))
        self.assertEqual(res["ranks"][0]["replay_rows"], 8192)


if __name__ == "__main__":
    if not HAVE_TORCH:
        print("torch cannot be imported: skipping")
        sys.exit(77)
    unittest.main()
