"""r3runtime.torch_compat: what an older torch lacks stands in, and CUDA
streams and events have CPU stand-ins for buffers on the CPU."""
import unittest

import _path  # noqa: F401
import torch

from r3runtime import torch_compat


class TorchCompatTest(unittest.TestCase):
    def test_tensor_sizes_and_torch_compiler(self):
        torch_compat.install()
        t = torch.zeros((3, 2, 8), dtype=torch.int16)
        self.assertEqual(t.nbytes, 96)
        self.assertEqual(t.itemsize, 2)
        self.assertFalse(hasattr(torch.compiler, "r3check_missing"))

    def test_cpu_streams_order_nothing_and_events_are_done(self):
        torch_compat.cpu_streams()
        src, dst = torch.arange(4), torch.zeros(4, dtype=torch.int64)
        s = torch.cuda.Stream(device=torch.device("cpu"))
        ev = torch.cuda.Event()
        with torch.cuda.stream(s):
            s.wait_stream(torch.cuda.current_stream(s.device))
            dst.copy_(src, non_blocking=True)
            ev.record()
        ev.synchronize()
        self.assertTrue(ev.query())
        self.assertTrue(torch.equal(dst, src))


if __name__ == "__main__":
    unittest.main()
