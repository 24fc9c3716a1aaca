"""r3runtime's run requests leave no reference cycles behind: every object
a rank capture makes is freed by reference counting, so the collector has
nothing to find (cycles per rank, the TP group's and the emulation's
stopped traceback, once took 40 % of the collector's time in the adapter)."""
import gc
import unittest

import _path  # noqa: F401
import torch
from r3runtime import rows
from r3runtime.capture_engine import CaptureEngine
from r3runtime.protocol import Adapter
from r3runtime.rank import CUR


class GatheringBinding:
    """A capturer that all-gathers its TP shard (the emulated group's
    passes, GatherStop included) and writes the gathered rows."""

    name = "fake"

    def build(self, case, d, t, instance_id):
        return {"buf": torch.zeros((case.M, case.nl, rows.ENCODING_WIDTH), dtype=torch.int32)}

    def buffer_of(self, cap):
        return cap["buf"]

    def capture(self, cap, case, d, t, topk_ids):
        gathered = CUR.group.all_gather(topk_ids, dim=0)
        cap["buf"][: gathered.shape[0], case.layer] = gathered

    def cleanup(self, cap):
        pass


def sharded_case(n, tp):
    per = n // tp
    return {"dp": 1, "tp": tp, "max_num_batched_tokens": 64, "num_experts": 8, "num_layers": 2,
            "num_tokens_across_dp": [n],
            "ranks": [{"dp": 0, "tp": t, "rows": [{"dp": 0, "from": t * per, "count": per}]} for t in range(tp)]}


class NoGarbageTest(unittest.TestCase):
    def setUp(self):
        rows.init_dtype_tables()
        self.adapter = Adapter(stdio=None)
        self.adapter.engine = CaptureEngine(GatheringBinding(), torch.device("cpu"), 0)
        gc.collect()
        self.flags = gc.get_debug()
        gc.set_debug(gc.DEBUG_SAVEALL)  # what the collector finds stays in gc.garbage

    def tearDown(self):
        gc.set_debug(self.flags)
        gc.garbage.clear()
        self.adapter.engine.close()

    def test_a_tp_gathering_run_leaves_nothing_for_the_collector(self):
        req = {"type": "run", "id": 1, "cases": [sharded_case(8, 2), sharded_case(12, 4), sharded_case(6, 2)]}
        reply = self.adapter.handle_run(req)
        ranks = [r for c in reply["cases"] for r in c["ranks"]]
        # The gather ran (its emulated passes) and every rank wrote its DP rank's tokens.
        self.assertEqual(len(ranks), 8)
        for r, case in zip(ranks, [c for c in req["cases"] for _ in range(c["tp"])]):
            self.assertIsNone(r["error"])
            self.assertTrue(r["tp_gather"])
            self.assertEqual(r["captured"], [{"dp": 0, "from": 0, "count": case["num_tokens_across_dp"][0]}])
        del reply
        gc.collect()
        kinds = sorted({type(o).__name__ for o in gc.garbage})
        self.assertEqual(kinds, [], f"reference cycles left by the run: {kinds}")


if __name__ == "__main__":
    unittest.main()
