# r3check's own SGLang-style routed-experts capturer for the fixture
# engines (not SGLang's code), in the interface of SGLang's
# state_capturer/routed_experts.py: create(*, model, model_config,
# num_tokens, max_running_requests, device), a device buffer sized from the
# server's limits, capture() of the gathered batch, and a DP-rank slice at
# the step's end. VARIANT (set by the fixture before exec) seeds the bugs:
#   sizing: "dp"      max(cps * dp, mrr * dp) rows (after sglang #26123)
#           "no-dp"   max(cps * dp, mrr): the mrr term lacks dp (sglang #23999)
#   slice:  "cpu"     start = r * graph batch under a graph, else sum of the sizes before r
#           "graph"   start = r * graph batch always (eager steps too)
#           "none"    start = 0: no DP offset at all
#   deepep: "guard"   under DeepEP (the rank's own tokens were captured) start = 0
#           "offset"  the DP offset under DeepEP too (sgl-project@024911f2's slice)
from sglang.srt.layers.dp_attention import get_dp_local_slice_cpu, is_dp_attention_enabled
from sglang.srt.runtime_context import get_parallel, get_schedule
from sglang.srt.state_capturer.base import BaseTopkCapturer
from sglang.srt.layers.dp_attention import get_attention_dp_rank
from sglang.srt.layers.moe import get_moe_a2a_backend

_V = {"sizing": "dp", "slice": "cpu", "deepep": "guard", **globals().get("VARIANT", {})}


class RoutedExpertsCapturer(BaseTopkCapturer):
    @staticmethod
    def create(*, model, model_config, num_tokens, max_running_requests, device):
        return RoutedExpertsCapturer(model_config, num_tokens, max_running_requests, device)

    def __init__(self, model_config, num_tokens, max_running_requests, device):
        dp = get_parallel().dp_size
        mrr_rows = max_running_requests * (dp if _V["sizing"] == "dp" else 1)
        rows = max(get_schedule().chunked_prefill_size * dp, mrr_rows)
        k = model_config.hf_text_config.num_experts_per_tok
        super().__init__(num_tokens, rows, model_config.hf_text_config.num_hidden_layers, k, device,
                         "routed_experts")

    def _get_local_slice(self, forward_batch, can_run_graph, cuda_graph_batch):
        own = get_moe_a2a_backend().is_deepep() and _V["deepep"] == "guard"
        if not is_dp_attention_enabled() or own or _V["slice"] == "none":
            start, end = 0, forward_batch.out_cache_loc.shape[0]
        elif _V["slice"] == "graph":
            n = forward_batch.global_num_tokens_cpu[get_attention_dp_rank()]
            start = get_attention_dp_rank() * (cuda_graph_batch or n)
            end = start + n
        else:
            start, n = get_dp_local_slice_cpu(forward_batch, can_run_graph, cuda_graph_batch)
            end = start + n
        return self.device_cache.buffer[start:end, :, : self.topk_size]
