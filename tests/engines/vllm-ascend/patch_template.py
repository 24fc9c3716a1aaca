"""Shared body of the vllm-ascend test fixtures (tests/engines/vllm-ascend/README.md).

Not imported as a module: each fixture's patch file imports what a
vllm-ascend capture patch imports, sets VARIANT, and exec()s this file into
its own globals. Written from docs/layouts.md ("vllm-ascend"), not from
vllm-ascend's code. It replaces vLLM's RoutedExpertsCapturer.capture (or,
with "subclass", overrides it in a subclass) with a capture that stores
this DP rank's T rows at [0, T) of the capturer's device buffer.

VARIANT flags (defaults below) turn it into the bugs of vllm-ascend's
history, or into its tests-on-n order:
"""
import torch.distributed as dist

_F = {
    "order": "comm",  # comm: the comm type decides; n: vllm-ascend's four tests on n, in order
    "padded": True,  # the padded all-gather's test (start r * max N) exists
    "floor": "//",  # the AllToAll floor shard test: T // tp ("%": the typo)
    "views": "tensor_split",  # the gather's views ("split": chunks of tp rows each)
    "ctx": "forward",  # where dp_metadata is read: forward (vLLM's) or extra (_EXTRA_CTX)
    "subclass": False,  # a subclass overriding capture, not a patch of the class
}
_F.update(VARIANT)


def _gather_over_tp(self, topk_ids, rows):
    tp = self.tp_size
    out = torch.empty((rows, topk_ids.shape[1]), dtype=topk_ids.dtype, device=topk_ids.device)
    views = torch.tensor_split(out, tp, dim=0) if _F["views"] == "tensor_split" else out.split(tp, dim=0)
    dist.all_gather(list(views), topk_ids, get_tp_group().device_group)
    return out


def _capture(self, layer_id, topk_ids):
    ctx = get_forward_context() if _F["ctx"] == "forward" else _EXTRA_CTX
    md = ctx.dp_metadata
    n = topk_ids.shape[0]
    tp = self.tp_size
    comm = _EXTRA_CTX.moe_comm_type
    sharded = comm in (MoECommType.ALLTOALL, MoECommType.MC2)
    if _F["order"] == "comm" and sharded:
        # The comm type says the rows are this TP rank's shard (padded, at
        # tp 1 too), whatever n is.
        T = int(md.num_tokens_across_dp_cpu[self.dp_rank]) if md is not None else _EXTRA_CTX.num_tokens
        rows = max(T, tp) if comm == MoECommType.ALLTOALL else n * tp
        topk_ids, start, end = _gather_over_tp(self, topk_ids, rows), 0, T
    elif md is None:
        T, start, end = n, 0, n
    else:
        counts = md.num_tokens_across_dp_cpu
        d = self.dp_rank
        T = int(counts[d])
        S = int(counts.sum())
        most = int(counts.max())
        before = int(counts[:d].sum())
        floor = T // tp if _F["floor"] == "//" else T % tp
        if n == S:
            start, end = before, before + T
        elif n == T:
            start, end = 0, T
        elif _F["padded"] and n == most * len(counts):
            start, end = d * most, d * most + T
        elif tp > 1 and n in ((T + tp - 1) // tp, floor, (most + tp - 1) // tp):
            rows = max(T, tp) if comm == MoECommType.ALLTOALL else n * tp
            topk_ids, start, end = _gather_over_tp(self, topk_ids, rows), 0, T
        else:
            raise AssertionError(f"unexpected topk_ids batch dim {n} for dp_rank={d}, tp_size={tp}")
    if layer_id >= self.device_buffer.shape[1]:
        return
    self.device_buffer[:T, layer_id, :] = topk_ids[start:end, :]


if _F["subclass"]:
    class AscendRoutedExpertsCapturer(RoutedExpertsCapturer):
        def capture(self, layer_id, topk_ids):
            _capture(self, layer_id, topk_ids)
else:
    RoutedExpertsCapturer.capture = _capture
