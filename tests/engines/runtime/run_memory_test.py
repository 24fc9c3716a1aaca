"""What a run request keeps in memory: no reference cycles (every object a
rank capture makes is freed by reference counting, so the collector has
nothing to find: cycles per rank, the TP group's and the emulation's
stopped traceback, once took 40 % of the collector's time in the adapter),
and nothing of a case once its result is built (a request's cases used to
keep their topk_ids until the reply, so every request touched fresh
memory)."""
import gc
import types
import unittest
import weakref

import _path  # noqa: F401
import torch
from r3runtime import dist, rows
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


class RecordingBinding(GatheringBinding):
    """Keeps weak references to what each capture got (its topk_ids and a
    tensor its stand-ins derived from the case, as vLLM's forward context
    is) and, at every capture, which of the earlier cases' are still alive."""

    def __init__(self):
        self.seen = []  # (case index, weakref to topk_ids, weakref to the engine-state tensor)
        self.alive_at_start = []  # per capture: case indices of earlier captures still alive

    def capture(self, cap, case, d, t, topk_ids):
        state = case.engine_state.setdefault("fake", torch.zeros(4))
        index = case.engine_state.setdefault("index", len({i for i, _, _ in self.seen}))
        self.alive_at_start.append(sorted({i for i, x, y in self.seen
                                           if i != index and (x() is not None or y() is not None)}))
        self.seen.append((index, weakref.ref(topk_ids), weakref.ref(state)))
        if case.T > 1:
            super().capture(cap, case, d, t, topk_ids)
        else:
            cap["buf"][: topk_ids.shape[0], case.layer] = topk_ids


def one_rank_case(n):
    return {"dp": 1, "tp": 1, "max_num_batched_tokens": 64, "num_experts": 8, "num_layers": 2,
            "num_tokens_across_dp": [n], "ranks": [{"dp": 0, "tp": 0, "rows": [{"dp": 0, "from": 0, "count": n}]}]}


class FakeDist(dist.Dist):
    """Dist of a torchrun world of one, without torch.distributed: TP 1 cases
    run as real ranks (run_real), TP 2 ones emulated on the root."""

    def __init__(self):
        self.world, self.rank, self.root, self.groups = 1, 0, 0, {}

    def gather(self, obj):
        return [obj]


class CaseMemoryTest(unittest.TestCase):
    def run_request(self, dist_=None):
        rows.init_dtype_tables()
        binding = RecordingBinding()
        adapter = Adapter(stdio=None)
        adapter.dist = dist_
        adapter.engine = CaptureEngine(binding, torch.device("cpu"), 0)
        cases = [one_rank_case(5), sharded_case(8, 2), one_rank_case(7), sharded_case(6, 2)]
        reply = adapter.handle_run({"type": "run", "id": 1, "cases": cases})
        adapter.engine.close()
        self.assertEqual([r["error"] for c in reply["cases"] for r in c["ranks"]], [None] * 6)
        return binding

    def assert_earlier_cases_freed(self, binding):
        # Each capture (TP passes included) may see its own case alive, never an earlier one.
        self.assertGreaterEqual(len(binding.alive_at_start), 6)
        self.assertEqual(binding.alive_at_start, [[]] * len(binding.alive_at_start))

    def test_a_cases_tensors_are_freed_before_the_next_case_runs(self):
        self.assert_earlier_cases_freed(self.run_request())

    def test_also_under_torchrun(self):
        self.assert_earlier_cases_freed(self.run_request(FakeDist()))


if __name__ == "__main__":
    unittest.main()
