"""Stand-ins for the vLLM objects capture and sizing code reads.

Each mirrors the attributes and defaults of vLLM's real class (read in
vllm-project/vllm main of 2026-08 to 2026-11, around and after PR #50874;
the class each mirrors is named in its docstring). They are written from
what those classes hold, not copied: fields that routing capture never
reads are present with vLLM's defaults so that code that reads them gets
what real vLLM gives, and anything else is a StandInGap (docs/engines.md).
"""
import contextlib
import logging

import torch

from r3runtime.errors import StandInGap
from r3runtime.rank import CUR
from r3runtime.rows import ENCODING_WIDTH
from r3runtime.standins import StandInObject
from r3runtime.tp import SimpleGroup


def cdiv(a, b):
    return -(a // -b)


def round_up(x, y):
    return ((x + y - 1) // y) * y


class DPMetadata:
    """vllm.forward_context.DPMetadata: the DP token counts of a step, and the
    SP local sizes the MoE runner installs."""

    def __init__(self, num_tokens, local_sizes):
        self.num_tokens_across_dp_cpu = torch.tensor(num_tokens, dtype=torch.int32)
        self.max_tokens_across_dp_cpu = (
            self.num_tokens_across_dp_cpu.max() if num_tokens else torch.tensor(0, dtype=torch.int32)
        )
        self.cu_tokens_across_dp_cpu = torch.cumsum(self.num_tokens_across_dp_cpu, dim=0, dtype=torch.int32)
        self.local_sizes = None if local_sizes is None else list(local_sizes)

    def get_chunk_sizes_across_dp_rank(self):
        assert self.local_sizes is not None
        return self.local_sizes

    def cu_tokens_across_sp(self, sp_size):
        per_rank = [cdiv(int(n), sp_size) for n in self.num_tokens_across_dp_cpu.tolist() for _ in range(sp_size)]
        return torch.cumsum(torch.tensor(per_rank, dtype=torch.int32), dim=0)

    @contextlib.contextmanager
    def sp_local_sizes(self, sequence_parallel_size):
        old = self.local_sizes
        sp = int(sequence_parallel_size)
        self.local_sizes = [cdiv(int(n), sp) for n in self.num_tokens_across_dp_cpu.tolist() for _ in range(sp)]
        try:
            yield self.local_sizes
        finally:
            self.local_sizes = old

    @contextlib.contextmanager
    def chunked_sizes(self, sequence_parallel_size, max_chunk_size_per_rank, chunk_idx):
        raise StandInGap("DPMetadata", "chunked_sizes", "capture under long-prefill chunking is out of r3check's scope")
        yield  # pragma: no cover

    def __repr__(self):
        return f"DPMetadata(num_tokens_across_dp_cpu={self.num_tokens_across_dp_cpu.tolist()}, local_sizes={self.local_sizes})"


class ForwardContext:
    """vllm.forward_context.ForwardContext (a dataclass there), with its
    defaults: eager mode, no attention metadata, no extra kwargs."""

    def __init__(self, dp_metadata):
        self.no_compile_layers = {}
        self.attn_metadata = {}
        self.slot_mapping = {}
        self.virtual_engine = 0
        self.dp_metadata = dp_metadata
        self.cudagraph_runtime_mode = CUDAGraphMode.NONE
        self.batch_descriptor = None
        self.ubatch_slices = None
        self.additional_kwargs = {}
        self.skip_compiled = False
        self.all_moe_layers = None
        self.moe_layer_index = 0
        self.remaining_moe_layers = None

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise StandInGap("vllm.forward_context.ForwardContext", name)


class CUDAGraphMode:
    """vllm.config.CUDAGraphMode's members as values compare (NONE = 0)."""

    NONE = 0
    PIECEWISE = 1
    FULL = 2
    FULL_DECODE_ONLY = (2, 0)
    FULL_AND_PIECEWISE = (2, 1)


def forward_context_of(case):
    fc = case.engine_state.get("vllm_forward_context")
    if fc is None:
        md = None if case.D == 1 else DPMetadata(case.N, case.local_sizes)
        fc = ForwardContext(md)
        case.engine_state["vllm_forward_context"] = fc
    return fc


def get_forward_context():
    if CUR.case is None:
        raise AssertionError("Forward context is not set. Please use `set_forward_context` to set the forward context.")
    return forward_context_of(CUR.case)


def is_forward_context_available():
    return CUR.case is not None


@contextlib.contextmanager
def set_forward_context(*args, **kwargs):
    yield


# --- vllm.distributed -------------------------------------------------------


def get_tp_group():
    if CUR.group is None:
        raise AssertionError("tensor model parallel group is not initialized")
    return CUR.group


def get_dp_group():
    return SimpleGroup(CUR.case.D, CUR.d, 0, "dp")


def get_ep_group():
    c = CUR.case
    return SimpleGroup(c.D * c.T, CUR.d * c.T + CUR.t, 0, "ep")


def get_pp_group():
    return SimpleGroup(1, 0, 0, "pp")


def get_pcp_group():
    return SimpleGroup(1, 0, 0, "pcp")


def get_dcp_group():
    return SimpleGroup(1, 0, 0, "dcp")


def get_world_group():
    c = CUR.case
    return SimpleGroup(c.D * c.T, CUR.d * c.T + CUR.t, 0, "world")


def get_tensor_model_parallel_rank():
    return CUR.t


def get_tensor_model_parallel_world_size():
    return CUR.case.T


def get_pipeline_model_parallel_rank():
    return 0


def get_pipeline_model_parallel_world_size():
    return 1


def get_decode_context_model_parallel_world_size():
    return 1


def get_decode_context_model_parallel_rank():
    return 0


def tensor_model_parallel_all_gather(input_, dim=-1):
    return get_tp_group().all_gather(input_, dim)


def get_pp_indices(num_hidden_layers, pp_rank, pp_size):
    """vllm.distributed.utils.get_pp_indices: the [start, end) layers of a
    pipeline stage; an even split, the remainder going to the stages before
    the last one, counting back from it."""
    per = num_hidden_layers // pp_size
    parts = [per] * pp_size
    for i in range(2, num_hidden_layers % pp_size + 2):
        parts[-i] += 1
    start = sum(parts[:pp_rank])
    return start, start + parts[pp_rank]


def get_current_vllm_config():
    if CUR.config is None:
        raise AssertionError("r3check: no current vllm config (none is set outside a capture)")
    return CUR.config


def init_logger(name):
    return logging.getLogger(name)


class Platform:
    """vllm.platforms.current_platform: the device the buffers live on."""

    def __init__(self):
        self.device_type = "cpu"
        self.device_name = "cpu"
        self.dispatch_key = "CPU"
        self.dist_backend = "gloo"
        self.simple_compile_backend = "inductor"
        self.ray_device_key = ""
        self.device_control_env_var = "CUDA_VISIBLE_DEVICES"

    def set_device_kind(self, kind):
        self.device_type = kind
        self.device_name = kind
        self.dispatch_key = "CUDA" if kind == "cuda" else "CPU"
        self.dist_backend = "nccl" if kind == "cuda" else "gloo"

    def is_cuda(self):
        return self.device_type == "cuda"

    def is_cuda_alike(self):
        return self.device_type == "cuda"

    def is_cpu(self):
        return self.device_type == "cpu"

    def is_rocm(self):
        return False

    def is_tpu(self):
        return False

    def is_xpu(self):
        return False

    def is_out_of_tree(self):
        return False

    def current_device(self):
        return torch.cuda.current_device() if self.device_type == "cuda" else 0

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name.startswith("is_"):
            return lambda *a, **k: False  # every other platform predicate: not this platform
        raise StandInGap("vllm.platforms.current_platform", name)


current_platform = Platform()


# --- KV-cache config (some post-#50874 forks key routing data by the
# full-attention KV-cache group and take it in __init__) ----------------------


class FullAttentionSpec:
    block_size = 16


class KVCacheGroupSpec:
    def __init__(self, layer_names, kv_cache_spec):
        self.layer_names = layer_names
        self.kv_cache_spec = kv_cache_spec


def is_full_attention_spec(spec):
    return isinstance(spec, FullAttentionSpec)


def make_kv_cache_config(M):
    group = KVCacheGroupSpec(["r3check.attn"], FullAttentionSpec())
    return StandInObject("vllm.v1.kv_cache_interface.KVCacheConfig", kv_cache_groups=[group],
                         num_blocks=cdiv(max(M, 1), FullAttentionSpec.block_size) + 1, kv_cache_tensors=[])


# --- VllmConfig ---------------------------------------------------------------


def make_config(M, num_experts, num_layers, D, T, d, t, ep, instance_id):
    """vllm.config.VllmConfig for one rank of a case, with the sub-configs
    routing capture and replay sizing read, each with vLLM's defaults."""
    hf = StandInObject(
        "hf_text_config (transformers PretrainedConfig)",
        num_hidden_layers=num_layers, num_experts_per_tok=ENCODING_WIDTH, num_experts=num_experts,
        n_routed_experts=num_experts, num_local_experts=num_experts, model_type="r3check",
        hidden_size=ENCODING_WIDTH * 8, num_attention_heads=8, num_key_value_heads=8, vocab_size=32000,
        architectures=["R3CheckMoeForCausalLM"], torch_dtype=torch.bfloat16,
        # The per-layer kinds Nemotron-H's config lists (transformers'
        # NemotronHConfig.layers_block_type): the static-create forks count
        # MoE layers by it alone, and v0.21.0's _count_moe_layers reads it
        # first. Every layer of r3check's model is an MoE layer.
        layers_block_type=["moe"] * num_layers,
    )
    parallel = StandInObject(
        "vllm.config.ParallelConfig",
        data_parallel_rank=d, data_parallel_rank_local=d, data_parallel_size=D, data_parallel_size_local=D,
        data_parallel_master_ip="127.0.0.1", data_parallel_master_port=29500, data_parallel_backend="mp",
        tensor_parallel_size=T, pipeline_parallel_size=1, prefill_context_parallel_size=1,
        decode_context_parallel_size=1, enable_expert_parallel=bool(ep), enable_eplb=False,
        all2all_backend="allgather_reducescatter", world_size=T, world_size_across_dp=T * D, rank=t,
        distributed_executor_backend=None, disable_custom_all_reduce=False, enable_dbo=False,
        use_sequence_parallel_moe=bool(ep) and T > 1 and D > 1,
    )

    def num_layers_of(parallel_config=None):
        return num_layers

    model = StandInObject(
        "vllm.config.ModelConfig",
        hf_text_config=hf, hf_config=hf, model="r3check/fixture", dtype=torch.bfloat16, max_model_len=M,
        enforce_eager=False, quantization=None, use_mla=False, is_deepseek_mla=False,
        enable_return_routed_experts=True,  # routing capture is what is being run
        get_total_num_hidden_layers=lambda: num_layers, get_num_layers=num_layers_of,
        get_layers_start_end_indices=lambda parallel_config=None: (0, num_layers),
        get_num_experts=lambda: num_experts, get_num_experts_per_tok=lambda: ENCODING_WIDTH,
        # The name aoshen02/vllm's SHM artifact branch gives it (156119a7,
        # 2026-08-03; its capturer reads it): the same top-k.
        get_num_experts_per_token=lambda: ENCODING_WIDTH,
        get_hidden_size=lambda: hf.hidden_size, get_vocab_size=lambda: hf.vocab_size,
        get_num_attention_heads=lambda parallel_config=None: hf.num_attention_heads,
        get_num_kv_heads=lambda parallel_config=None: hf.num_key_value_heads,
        get_head_size=lambda: hf.hidden_size // hf.num_attention_heads,
    )
    # max_num_seqs: SchedulerConfig's default (DEFAULT_MAX_NUM_SEQS = 128 in
    # v0.21.0), which vLLM requires to be at most max_num_batched_tokens.
    scheduler = StandInObject(
        "vllm.config.SchedulerConfig",
        max_num_batched_tokens=M, max_num_seqs=min(M, 128), max_model_len=M, enable_chunked_prefill=True,
        chunked_prefill_enabled=True, async_scheduling=False, max_num_partial_prefills=1,
    )
    cache = StandInObject("vllm.config.CacheConfig", block_size=16, num_gpu_blocks=None, cache_dtype="auto",
                          enable_prefix_caching=False)
    compilation = StandInObject("vllm.config.CompilationConfig", cudagraph_mode=CUDAGraphMode.NONE,
                                cudagraph_capture_sizes=[], max_cudagraph_capture_size=0, level=0, mode=0,
                                static_forward_context={})
    device = StandInObject("vllm.config.DeviceConfig", device=torch.device(current_platform.device_type),
                           device_type=current_platform.device_type)
    return StandInObject(
        "vllm.config.VllmConfig",
        model_config=model, parallel_config=parallel, scheduler_config=scheduler, cache_config=cache,
        compilation_config=compilation, device_config=device, load_config=None, lora_config=None,
        speculative_config=None, structured_outputs_config=None, observability_config=None, quant_config=None,
        kv_transfer_config=None, kv_events_config=None, ec_transfer_config=None, additional_config={},
        instance_id=instance_id,
    )


def make_moe_config(case, d, t, device):
    """vllm.model_executor.layers.fused_moe.config.FusedMoEConfig, the fields
    replay sizing reads: max_num_tokens (the MoE layer passes the scheduler's
    max_num_batched_tokens in the versions we read), experts_per_token, and
    dp_size / ep_size / use_ep (properties of its parallel config there)."""
    D, T = case.D, case.T
    ep_size = D * T if case.ep else 1
    # SP as the case's dispatch plan has it (its `sp`), else the spec's rule.
    sp = case.sp if case.sp is not None else bool(case.ep) and T > 1 and D > 1
    parallel = StandInObject("vllm.model_executor.layers.fused_moe.config.FusedMoEParallelConfig",
                             dp_size=D, dp_rank=d, tp_size=T, tp_rank=t, ep_size=ep_size,
                             ep_rank=d * T + t if case.ep else 0, use_ep=bool(case.ep), pcp_size=1, pcp_rank=0,
                             all2all_backend="allgather_reducescatter", sp_size=T if sp else 1,
                             is_sequence_parallel=sp)
    return StandInObject(
        "vllm.model_executor.layers.fused_moe.config.FusedMoEConfig",
        num_experts=case.E, experts_per_token=ENCODING_WIDTH, hidden_dim=ENCODING_WIDTH * 8,
        num_local_experts=case.E // ep_size if case.E >= ep_size else case.E, moe_parallel_config=parallel,
        in_dtype=torch.bfloat16, max_num_tokens=case.M, has_bias=False, is_act_and_mul=True,
        dp_size=D, dp_rank=d, tp_size=T, tp_rank=t, ep_size=ep_size, ep_rank=parallel.ep_rank,
        use_ep=bool(case.ep), device=device, is_sequence_parallel=parallel.is_sequence_parallel,
    )


# --- the model a runner binds routing capture to (v0.21.0's device-cache
# design: bind_routing_capture_to_model walks model.modules()) ---------------


class UnquantizedFusedMoEMethod:
    """vllm.model_executor.layers.fused_moe.unquantized_fused_moe_method.UnquantizedFusedMoEMethod
    of v0.21.0 without a modular kernel: supports_internal_mk is False, so
    with DP the MoE runner dispatches naively (do_naive_dispatch_combine);
    not monolithic (the router's topk_ids reach the layer)."""

    supports_internal_mk = False
    is_monolithic = False


class FusedMoEModularMethod:
    """vllm.model_executor.layers.fused_moe.fused_moe_modular_method.FusedMoEModularMethod
    of v0.21.0, what the layer's quant method becomes when a modular kernel
    that dispatches across DP itself is set up (internal dispatch):
    supports_internal_mk is True."""

    supports_internal_mk = True
    is_monolithic = False


class FusedMoE:
    """vllm.model_executor.layers.fused_moe.layer.FusedMoE, what routing
    capture reads of it in v0.21.0: moe_layer_id (its index among the
    model's MoE layers, FusedMoE._next_moe_layer_id), moe_config, and
    quant_method; bind_routing_capture_to_model sets _routing_replay_out."""

    def __init__(self, moe_layer_id, moe_config, quant_method):
        self.moe_layer_id = moe_layer_id
        self.moe_config = moe_config
        self.quant_method = quant_method

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise StandInGap("vllm.model_executor.layers.fused_moe.layer.FusedMoE", name)


class MoEModel:
    """The runner's model (a torch.nn.Module there): modules() gives the
    model, then its MoE layers in order, as nn.Module.modules() does."""

    def __init__(self, layers):
        self.layers = list(layers)

    def modules(self):
        yield self
        yield from self.layers

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise StandInGap("the model (torch.nn.Module)", name, "r3check's model has only MoE layers")


def make_moe_model(case, d, t, device, internal):
    """The model of one rank: min(num_layers, 2) MoE layers with the case's
    MoE config; `internal`: the case's MoE runner dispatches inside a
    modular kernel (else naively)."""
    moe = make_moe_config(case, d, t, device)
    method = FusedMoEModularMethod if internal else UnquantizedFusedMoEMethod
    return MoEModel(FusedMoE(i, moe, method()) for i in range(case.nl))


# --- what each stand-in vllm module holds -------------------------------------

_DIST = {f.__name__: f for f in (
    get_tp_group, get_dp_group, get_ep_group, get_pp_group, get_pcp_group, get_dcp_group, get_world_group,
    get_tensor_model_parallel_rank, get_tensor_model_parallel_world_size, get_pipeline_model_parallel_rank,
    get_pipeline_model_parallel_world_size, get_decode_context_model_parallel_world_size,
    get_decode_context_model_parallel_rank, tensor_model_parallel_all_gather)}
_FORWARD = {"get_forward_context": get_forward_context, "is_forward_context_available": is_forward_context_available,
            "set_forward_context": set_forward_context, "ForwardContext": ForwardContext, "DPMetadata": DPMetadata}
_MATH = {"cdiv": cdiv, "round_up": round_up}

MODULES = {
    "vllm": {"__version__": "unknown"},
    "vllm.forward_context": _FORWARD,
    "vllm.distributed": dict(_DIST),
    "vllm.distributed.parallel_state": dict(_DIST),
    "vllm.distributed.communication_op": {"tensor_model_parallel_all_gather": tensor_model_parallel_all_gather},
    "vllm.distributed.utils": {"get_pp_indices": get_pp_indices},
    "vllm.platforms": {"current_platform": current_platform},
    "vllm.config": {"get_current_vllm_config": get_current_vllm_config, "CUDAGraphMode": CUDAGraphMode},
    "vllm.config.vllm": {"get_current_vllm_config": get_current_vllm_config},
    "vllm.config.compilation": {"CUDAGraphMode": CUDAGraphMode},
    "vllm.logger": {"init_logger": init_logger},
    "vllm.v1.kv_cache_interface": {"is_full_attention_spec": is_full_attention_spec,
                                   "FullAttentionSpec": FullAttentionSpec, "KVCacheGroupSpec": KVCacheGroupSpec},
    "vllm.model_executor.layers.fused_moe.layer": {"FusedMoE": FusedMoE},
    "vllm.utils": dict(_MATH),
    "vllm.utils.math_utils": dict(_MATH),
    "vllm.envs": {},
}

# The names whose module-level bindings in a loaded engine module are
# pointed at the stand-ins (a module that did `from vllm.x import y`).
KNOWN = {}
for _names in MODULES.values():
    for _k, _v in _names.items():
        if callable(_v) and not isinstance(_v, type) or _k == "current_platform":
            KNOWN.setdefault(_k, _v)


def unset_env(name):
    """vllm.envs.NAME when unset: vLLM's defaults for the few that capture
    code reads are falsy, so None stands for every one."""
    return None


UNSET_SETTINGS = {"vllm.envs": unset_env}

