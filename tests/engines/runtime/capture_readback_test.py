"""r3runtime.capture_engine's read-back: a read-back that fails is that
rank's AdapterError, and the capturer's buffer is cleared before its next
capture (what the failed read-back left must not reach the next case)."""
import unittest

import _path  # noqa: F401
import torch
from r3runtime import rows
from r3runtime.capture_engine import CaptureEngine
from r3runtime.protocol import Adapter


class FlakyBufferBinding:
    """One capturer; the read-back after the first capture cannot get the buffer."""

    name = "fake"

    def __init__(self):
        self.buffer_calls = 0

    def build(self, case, d, t, instance_id):
        return {"buf": torch.zeros((case.M, case.nl, rows.ENCODING_WIDTH), dtype=torch.int32)}

    def buffer_of(self, cap):
        self.buffer_calls += 1
        if self.buffer_calls == 2:  # 1: at build, 2: the first read-back
            raise RuntimeError("the buffer is gone for a moment")
        return cap["buf"]

    def capture(self, cap, case, d, t, topk_ids):
        cap["buf"][: topk_ids.shape[0], case.layer] = topk_ids

    def cleanup(self, cap):
        pass


def case(n):
    return {"dp": 1, "tp": 1, "max_num_batched_tokens": 16, "num_experts": 8, "num_layers": 2,
            "num_tokens_across_dp": [n], "ranks": [{"dp": 0, "tp": 0, "rows": [{"dp": 0, "from": 0, "count": n}]}]}


class FailedReadBackTest(unittest.TestCase):
    def test_the_next_capture_starts_from_a_clean_buffer(self):
        rows.init_dtype_tables()
        adapter = Adapter(stdio=None)
        adapter.engine = CaptureEngine(FlakyBufferBinding(), torch.device("cpu"), 0)
        reply = adapter.handle_run({"type": "run", "id": 1, "cases": [case(5), case(3)]})
        first, second = (c["ranks"][0] for c in reply["cases"])
        self.assertEqual(first["error"], {"type": "AdapterError",
                                          "message": "decoding the buffer: the buffer is gone for a moment"})
        # Case 2 reuses the capturer: the 5 rows of case 1 were cleared first.
        self.assertIsNone(second["error"])
        self.assertEqual(second["captured"], [{"dp": 0, "from": 0, "count": 3}])
        self.assertEqual((second["stray"], second["undecodable"]), (0, 0))
        adapter.engine.close()


if __name__ == "__main__":
    unittest.main()
