"""r3runtime.tp: the TP group capture code sees has vLLM's GroupCoordinator
attributes, makes no collective alone, and refuses what NCCL refuses."""
import unittest

import _path  # noqa: F401
import torch
from r3runtime import rank, tp


class GroupAttributesTest(unittest.TestCase):
    def test_ranks_of_dp_rank_1_of_tp_4(self):
        g = tp.EmulatedTPGroup(4, 2, 1, rounds=[])
        self.assertEqual(g.ranks, [4, 5, 6, 7])
        self.assertEqual((g.rank, g.rank_in_group, g.world_size), (6, 2, 4))
        self.assertEqual((g.first_rank, g.last_rank), (4, 7))
        self.assertEqual((g.is_first_rank, g.is_last_rank), (False, False))
        last = tp.EmulatedTPGroup(4, 3, 1, rounds=[])
        self.assertEqual((last.is_first_rank, last.is_last_rank), (False, True))
        first = tp.EmulatedTPGroup(4, 0, 1, rounds=[])
        self.assertEqual((first.is_first_rank, first.is_last_rank), (True, False))


class AllGatherTest(unittest.TestCase):
    def test_a_group_of_one_makes_no_collective(self):
        g = tp.EmulatedTPGroup(1, 0, 0, rounds=[])
        x = torch.arange(6, dtype=torch.int16).reshape(3, 2)
        self.assertIs(g.all_gather(x, dim=0), x)  # int16 too: vLLM returns before any backend
        self.assertTrue(g.called)

    def test_emulated_rounds_are_concatenated_in_tp_order(self):
        a = torch.tensor([[1, 2]], dtype=torch.int32)
        b = torch.tensor([[3, 4]], dtype=torch.int32)
        g = tp.EmulatedTPGroup(2, 1, 0, rounds=[[a, b]])
        self.assertEqual(g.all_gather(b.clone(), dim=0).tolist(), [[1, 2], [3, 4]])

    def test_the_first_pass_stops_at_the_gather_with_its_input(self):
        g = tp.EmulatedTPGroup(2, 0, 0, rounds=[])
        x = torch.tensor([[5, 6]], dtype=torch.int64)
        with self.assertRaises(rank.GatherStop) as stop:
            g.all_gather(x, dim=0)
        self.assertTrue(torch.equal(stop.exception.tensor, x))

    def test_dtypes_nccl_lacks_raise_its_type_error(self):
        g = tp.EmulatedTPGroup(2, 0, 0, rounds=[])
        with self.assertRaises(TypeError) as e:
            g.all_gather(torch.zeros(2, 1, dtype=torch.int16), dim=0)
        self.assertEqual(str(e.exception), "Input tensor data type is not supported for NCCL process group: Short")
        for dtype in (torch.int8, torch.uint8, torch.int32, torch.int64, torch.bool):  # NCCL has these
            with self.assertRaises(rank.GatherStop):
                tp.EmulatedTPGroup(2, 0, 0, rounds=[]).all_gather(torch.zeros(2, 1, dtype=dtype), dim=0)


if __name__ == "__main__":
    unittest.main()
