# r3check's own SGLang-style base capturer for the fixture engines (not
# SGLang's code): a device buffer the TopK layer's rows are written to, a
# host cache indexed by KV slot, and the step's end that moves this rank's
# slice from one to the other (inline, or handed back for the overlap
# scheduler's copy). Exec'd by each fixture's base.py.
import torch


class DeviceRows:
    def __init__(self, rows, layers, width, device):
        self.buffer = torch.zeros((rows, layers, width), dtype=torch.int32, device=device)

    def capture(self, layer_id, topk):
        n = topk.shape[0]
        self.buffer[:n, layer_id, :] = topk


class HostRows:
    def __init__(self, slots, layers, width):
        self.buffer = torch.zeros((slots, layers, width), dtype=torch.int32, device="cpu", pin_memory=True)


class PendingCopy:
    """The slice and its slots, until the overlap thread copies them."""

    def __init__(self, out_cache_loc, topk, host_cache):
        self.out_cache_loc, self.topk, self.host_cache = out_cache_loc, topk, host_cache

    def map_device_tensors(self, fn):
        self.out_cache_loc, self.topk = fn(self.out_cache_loc), fn(self.topk)

    def finalize(self):
        self.host_cache.buffer[self.out_cache_loc] = self.topk


class BaseTopkCapturer:
    def __init__(self, num_tokens, max_batch_size, num_layers, topk_size, device, name,
                 device_topk_size=None):
        self.topk_size = topk_size
        self.host_cache = HostRows(num_tokens, num_layers, topk_size)
        self.device_cache = DeviceRows(max_batch_size, num_layers, device_topk_size or topk_size, device)

    def capture(self, layer_id, topk_indices):
        self.device_cache.capture(layer_id, topk_indices)

    def _get_local_slice(self, forward_batch, can_run_graph, cuda_graph_batch):
        return self.device_cache.buffer[: forward_batch.out_cache_loc.shape[0], :, : self.topk_size]

    def on_forward_end(self, forward_batch, can_run_graph, cuda_graph_batch, no_copy_to_cpu=False):
        rows = self._get_local_slice(forward_batch, can_run_graph, cuda_graph_batch)
        if no_copy_to_cpu:
            return PendingCopy(forward_batch.out_cache_loc, rows, self.host_cache)
        self.host_cache.buffer[forward_batch.out_cache_loc.cpu()] = rows.cpu()
        return None
