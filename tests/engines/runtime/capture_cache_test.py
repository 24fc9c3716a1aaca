"""r3runtime.capture_engine's capturer cache: its budget counts everything a
capturer holds, not only its capture buffer (OmarBasit1 66304aa1 keeps a
(tokens, layers, num_experts) fp16 map per capturer: with the sampler's
70000 experts, 64 cached capturers outgrew the machine's memory)."""
import types
import unittest

import _path  # noqa: F401
import torch
from r3runtime import capture_engine
from r3runtime.capture_engine import CaptureEngine, held_bytes

MIB = 1 << 20


class FakeShm:
    """What multiprocessing.shared_memory.SharedMemory shows: a size."""

    def __init__(self, size):
        self.size = size


FakeShm.__name__ = "SharedMemory"


class Capturer:
    def __init__(self, tokens, extra_mib=0, shm_mib=0):
        self.buf = torch.zeros(tokens, 2, 8, dtype=torch.int32)
        self.view = self.buf[:1]  # a view: counted once
        if extra_mib:
            self.probabilities = torch.empty(extra_mib * MIB // 2, dtype=torch.float16)
        if shm_mib:
            self.segments = [FakeShm(shm_mib * MIB)]


class Binding:
    def __init__(self, extra_mib):
        self.extra_mib = extra_mib
        self.cleaned = []

    def build(self, case, d, t, instance_id):
        return Capturer(case.M, self.extra_mib)

    def buffer_of(self, cap):
        return cap.buf

    def cleanup(self, cap):
        self.cleaned.append(cap)


def case(m):
    return types.SimpleNamespace(M=m, E=70000, nl=2, D=1, T=1, ep=False)


class HeldBytesTest(unittest.TestCase):
    def test_every_tensor_and_segment_counts_once(self):
        cap = Capturer(16)
        self.assertEqual(held_bytes(cap, cap.buf), 16 * 2 * 8 * 4)
        cap = Capturer(16, extra_mib=3, shm_mib=5)
        self.assertEqual(held_bytes(cap, cap.buf), 16 * 2 * 8 * 4 + 3 * MIB + 5 * MIB)


class Holder:
    """Not a tensor, list or dict: held_bytes() does not look inside."""

    def __init__(self, tensor):
        self.tensor = tensor


class HeldBytesOfABufferOutOfSightTest(unittest.TestCase):
    def test_the_capture_buffer_counts_where_the_capturer_keeps_it(self):
        # A design whose buffer sits inside another object (the device-cache
        # design's rank wrapper, say): the buffer the binding found still counts.
        cap = types.SimpleNamespace(state=Holder(torch.zeros(16, 2, 8, dtype=torch.int32)))
        self.assertEqual(held_bytes(cap, cap.state.tensor), 16 * 2 * 8 * 4)


class CacheBudgetTest(unittest.TestCase):
    def test_big_capturers_are_not_kept_past_the_budget(self):
        binding = Binding(extra_mib=300)
        engine = CaptureEngine(binding, torch.device("cpu"), 0)
        for m in range(1, 6):
            engine.capturer(case(m), 0, 0)
        # 300 MiB each against 512 MiB: one kept (the newest), four cleaned up.
        self.assertEqual(len(engine.cache), 1)
        self.assertEqual(len(binding.cleaned), 4)
        self.assertLessEqual(engine.cache_bytes, capture_engine.LRU_BYTES + 301 * MIB)

    def test_small_capturers_are_kept_by_count(self):
        binding = Binding(extra_mib=0)
        engine = CaptureEngine(binding, torch.device("cpu"), 0)
        for m in range(1, capture_engine.LRU_ENTRIES + 3):
            engine.capturer(case(m), 0, 0)
        self.assertEqual(len(engine.cache), capture_engine.LRU_ENTRIES)
        self.assertEqual(len(binding.cleaned), 2)


if __name__ == "__main__":
    unittest.main()
