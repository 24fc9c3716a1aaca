"""Stand-ins for what vllm-ascend's capture code reads of its own package
(vllm_ascend.*), after vllm-ascend de2c7f84's
vllm_ascend/ascend_forward_context.py: the MoE communication types, and the
extra forward context (_EXTRA_CTX), a proxy over vLLM's forward context for
the fields vllm-ascend adds to it.

Every other vllm_ascend name is a placeholder (r3runtime.standins): reading
it while the engine's code runs is r3check's gap, never a verdict.
"""
import enum
import math

from r3runtime.errors import StandInGap
from r3runtime.rank import CUR


class MoECommType(enum.Enum):
    """vllm_ascend.ascend_forward_context.MoECommType."""

    ALLGATHER = 0
    MC2 = 1
    ALLTOALL = 2
    FUSED_MC2 = 3


# The case's moe_comm (protocol) -> the member vllm-ascend would pick.
COMM_OF_CASE = {"allgather": MoECommType.ALLGATHER, "alltoall": MoECommType.ALLTOALL, "mc2": MoECommType.MC2}

# _ExtraForwardContextProxy.extra_attrs: only these names pass the proxy.
EXTRA_ATTRS = (
    "capturing", "moe_comm_type", "moe_comm_method", "mmrs_fusion", "num_tokens", "flash_comm_v1_enabled",
    "flashcomm_v2_enabled", "pad_size", "padded_length", "num_tokens_across_dp", "mc2_mask", "is_draft_model",
    "is_draft_model_prefill", "prefetch_mlp_gate_up_proj", "prefetch_mlp_down_proj", "model_instance",
    "layer_idx", "max_tokens_across_dp", "max_tokens_across_pcp", "num_accept_tokens", "in_profile_run",
    "padded_num_tokens", "sinks",
)


def _fields(case, d):
    """What set_ascend_forward_context sets for DP rank d's step: the comm
    type, the token counts and MC2's padded count (ceil(max N / tp) * tp)."""
    key = ("vllm_ascend_extra", d)
    fields = case.engine_state.get(key)
    if fields is None:
        most = max(case.N) if case.N else 0
        fields = {
            "moe_comm_type": COMM_OF_CASE.get(case.moe_comm, MoECommType.ALLGATHER),
            "num_tokens": case.N[d],
            "max_tokens_across_dp": most if case.D > 1 else case.N[d],
            "padded_num_tokens": math.ceil((most if case.D > 1 else case.N[d]) / case.T) * case.T,
            "capturing": False,
            "in_profile_run": False,
            "is_draft_model": False,
            "is_draft_model_prefill": False,
        }
        case.engine_state[key] = fields
    return fields


class ExtraForwardContext:
    """vllm_ascend.ascend_forward_context._EXTRA_CTX. As the real proxy, a
    name outside extra_attrs raises AttributeError (the engine's mistake,
    judged); a name inside it that r3check does not model is a gap."""

    def _check(self, name):
        if name not in EXTRA_ATTRS:
            raise AttributeError(f"{name} is not extra forward context attribute, "
                                 "please get/set it from vllm's _forward_context directly.")

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        self._check(name)
        if CUR.case is None:
            raise AssertionError("Forward context is not set. Please use `set_forward_context` to set the forward context.")
        fields = _fields(CUR.case, CUR.d)
        if name not in fields:
            raise StandInGap("vllm_ascend._EXTRA_CTX", name, "an extra forward-context field r3check does not set")
        return fields[name]

    def __setattr__(self, name, value):
        self._check(name)
        if CUR.case is None:
            raise AssertionError("Forward context is not set. Please use `set_forward_context` to set the forward context.")
        _fields(CUR.case, CUR.d)[name] = value


EXTRA_CTX = ExtraForwardContext()

MODULES = {
    "vllm_ascend": {},
    "vllm_ascend.ascend_forward_context": {"_EXTRA_CTX": EXTRA_CTX, "MoECommType": MoECommType},
}
