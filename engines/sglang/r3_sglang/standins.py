"""Stand-ins for the sglang.* names SGLang's routed-experts capturer reads.

Modelled on sgl-project/sglang from bed301a5 (#12162, 2025-12-21) to
47d8b5b7 (#33170, 2026-08-01); docs/research/issue20-sglang-ascend.md has
the file and line of each. Every object has exactly the fields the real
one has that capture code reads, with SGLang's meaning; any other name is a
StandInGap (r3check's gap, exit 2), never a verdict on the engine.

The values come from the running rank (r3runtime.rank.CUR): its case, DP
rank and TP group, and the server settings the binding derived from the
case (`CUR.config`, a ServerSettings).
"""
import torch

from r3runtime.errors import Refused, StandInGap
from r3runtime.rank import CUR
from r3runtime.standins import StandInObject


class ServerSettings:
    """The launch settings of one case's server, per DP rank as SGLang
    holds them: ServerArgs divides chunked_prefill_size by dp_size in place
    under DP attention, and model_runner passes create() the per-rank
    max_running_requests."""

    def __init__(self, case):
        # The layouts r3check drives SGLang on (src/r3/case/layout_domain.h):
        # DP attention with the default MoE backend (naive dispatch), or
        # DeepEP (internal dispatch) with attention TP 1; never SP.
        if case.sp:
            raise Refused("case with MoE sequence parallelism: SGLang has none (r3check sends SGLang sp off)")
        if case.dispatch == "internal" and case.T > 1:
            raise Refused("case with internal dispatch and tp > 1: SGLang's DeepEP layout with attention TP "
                          "is not modelled (r3check sends SGLang tp 1 there)")
        # DeepEP: the TopK layer sees this rank's own tokens.
        self.a2a = "deepep" if case.dispatch == "internal" else "none"
        self.dp_size = case.D
        self.tp_size = case.D * case.T  # DP attention: the attention TP groups of all DP ranks
        self.attn_tp_size = case.T
        self.chunked_prefill_size = case.cps
        # A decode step of one token per request fills the step budget.
        self.max_running_requests = case.M
        self.enable_dp_attention = case.D > 1
        self.server_args = StandInObject(
            "sglang.srt.server_args.ServerArgs",
            chunked_prefill_size=self.chunked_prefill_size, dp_size=self.dp_size, tp_size=self.tp_size,
            enable_dp_attention=self.enable_dp_attention, enable_return_routed_experts=True,
            disable_shared_experts_fusion=False, max_running_requests=self.max_running_requests * case.D,
            moe_a2a_backend=self.a2a, disable_overlap_schedule=False, speculative_algorithm=None,
            enable_deterministic_inference=False)


def _settings(what):
    s = CUR.config
    if s is None:
        raise StandInGap(what, "value", "read outside a capture r3check drives")
    return s


# -- sglang.srt.server_args / sglang.srt.runtime_context --
def get_global_server_args():
    return _settings("sglang.srt.server_args.get_global_server_args()").server_args


def get_server_args():
    return _settings("sglang.srt.runtime_context.get_server_args()").server_args


def get_exec():
    """runtime_context.get_exec() (>= 55b6769b): the resolved execution flags."""
    _settings("get_exec()")
    return StandInObject("sglang.srt.runtime_context.get_exec()",
                         features=StandInObject("get_exec().features", enable_return_routed_experts=True),
                         moe=StandInObject("get_exec().moe", disable_shared_experts_fusion=False))


def get_schedule():
    s = _settings("get_schedule()")
    return StandInObject("sglang.srt.runtime_context.get_schedule()",
                         chunked_prefill_size=s.chunked_prefill_size,
                         max_running_requests=s.max_running_requests * s.dp_size)


def get_parallel():
    s = _settings("get_parallel()")
    return StandInObject("sglang.srt.runtime_context.get_parallel()", dp_size=s.dp_size, tp_size=s.tp_size,
                         attn_tp_size=s.attn_tp_size, attn_dp_rank=CUR.d, attn_tp_rank=CUR.t,
                         enable_dp_attention=s.enable_dp_attention)


_RESOURCES = StandInObject("sglang.srt.runtime_context.get_resources()", experts_capturer=None)


def get_resources():
    return _RESOURCES


# -- sglang.srt.layers.dp_attention --
def is_dp_attention_enabled():
    return _settings("is_dp_attention_enabled()").enable_dp_attention


def get_attention_dp_rank():
    return CUR.d


def get_attention_dp_size():
    return _settings("get_attention_dp_size()").dp_size


def get_attention_tp_size():
    return _settings("get_attention_tp_size()").attn_tp_size


def get_attention_tp_rank():
    return CUR.t


def get_dp_local_info(forward_batch):
    """As SGLang's (bed301a5 dp_attention.py): this DP rank's start and
    length in the gathered batch, from global_num_tokens_gpu (a prefix
    sum), cached on the batch; GPU scalars."""
    if forward_batch.dp_local_start_pos is None:
        sizes = forward_batch.global_num_tokens_gpu
        r = CUR.d
        cumsum = torch.cumsum(sizes, dim=0)
        forward_batch.dp_local_start_pos = torch.zeros_like(cumsum[0]) if r == 0 else cumsum[r - 1]
        forward_batch.dp_local_num_tokens = sizes[r]
    return forward_batch.dp_local_start_pos, forward_batch.dp_local_num_tokens


def get_dp_local_slice_cpu(forward_batch, can_run_graph, cuda_graph_batch):
    """As SGLang's (>= 4a279d9c): (start, length) of this DP rank on the
    CPU: r * cuda_graph_batch under a graph, else the sum of the ranks
    before it."""
    sizes = forward_batch.global_num_tokens_cpu
    r = CUR.d
    start = r * cuda_graph_batch if can_run_graph else sum(sizes[:r])
    return start, sizes[r]


def attn_tp_all_gather_into_tensor(output, input_):
    """The attention-TP all-gather, through the running rank's TP group
    (emulated, or torch.distributed under torchrun)."""
    gathered = CUR.group.all_gather(input_, dim=0)
    output.copy_(gathered)


# -- sglang.srt.layers.moe --
class _A2aBackend:
    """get_moe_a2a_backend(): SGLang's MoeA2ABackend enum, NONE (the
    default: the TopK layer sees the DP-gathered batch) or DEEPEP (it sees
    the rank's own tokens), as the case's dispatch says. As the enum's
    predicates: is_none() and is_deepep() tell which, every other is_*()
    (is_mooncake, is_hybridep, ...) is false."""

    def _backend(self):
        return _settings("get_moe_a2a_backend()").a2a

    def is_none(self):
        return self._backend() == "none"

    def is_deepep(self):
        return self._backend() == "deepep"

    def __getattr__(self, name):
        if name.startswith("is_"):
            return lambda: False
        raise StandInGap("get_moe_a2a_backend()", name, "only its is_*() predicates are modelled")


_A2A = _A2aBackend()


def get_moe_a2a_backend():
    return _A2A


# -- sglang.srt.model_executor.forward_batch_info --
class ForwardBatch:
    """The fields of SGLang's ForwardBatch that the capturer reads at the
    end of a step, for DP rank d: its KV slots (out_cache_loc; here rows
    0..n-1 of the host cache, n its padded count) and the gathered sizes."""

    def __init__(self, case, d, device):
        n = case.N[d]
        self.__dict__.update(
            out_cache_loc=torch.arange(n, dtype=torch.int64, device=device),
            global_num_tokens_cpu=list(case.N),
            global_num_tokens_gpu=torch.tensor(case.N, dtype=torch.int64, device=device),
            dp_local_start_pos=None, dp_local_num_tokens=None, batch_size=n)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise StandInGap("sglang ForwardBatch", name,
                         "it has: out_cache_loc, global_num_tokens_cpu, global_num_tokens_gpu, "
                         "dp_local_start_pos, dp_local_num_tokens, batch_size")


def model_config(case):
    """ModelConfig with the hf_text_config fields the capturer reads."""
    from r3runtime.rows import ENCODING_WIDTH

    hf = StandInObject("ModelConfig.hf_text_config", num_hidden_layers=case.nl,
                       num_experts_per_tok=ENCODING_WIDTH, num_experts=case.E, n_routed_experts=case.E)
    return StandInObject("sglang.srt.configs.model_config.ModelConfig", hf_text_config=hf,
                         hf_config=hf, num_hidden_layers=case.nl)


class ModelConfig:  # for annotations; instances come from model_config()
    pass


class ReqToTokenPool:  # for annotations; the readback of a request is not driven
    pass


_DP = {"is_dp_attention_enabled": is_dp_attention_enabled, "get_attention_dp_rank": get_attention_dp_rank,
       "get_attention_dp_size": get_attention_dp_size, "get_attention_tp_size": get_attention_tp_size,
       "get_attention_tp_rank": get_attention_tp_rank, "get_dp_local_info": get_dp_local_info,
       "get_dp_local_slice_cpu": get_dp_local_slice_cpu,
       "attn_tp_all_gather_into_tensor": attn_tp_all_gather_into_tensor}

MODULES = {
    "sglang.srt.configs.model_config": {"ModelConfig": ModelConfig},
    "sglang.srt.layers.dp_attention": _DP,
    "sglang.srt.layers.moe": {"get_moe_a2a_backend": get_moe_a2a_backend},
    "sglang.srt.mem_cache.memory_pool": {"ReqToTokenPool": ReqToTokenPool},
    "sglang.srt.model_executor.forward_batch_info": {"ForwardBatch": ForwardBatch},
    "sglang.srt.server_args": {"get_global_server_args": get_global_server_args},
    "sglang.srt.runtime_context": {"get_server_args": get_server_args, "get_exec": get_exec,
                                   "get_schedule": get_schedule, "get_parallel": get_parallel,
                                   "get_resources": get_resources},
}
