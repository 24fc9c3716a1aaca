"""r3runtime.tp: the TP group capture code sees has vLLM's GroupCoordinator
attributes, makes no collective alone, and refuses what NCCL refuses."""
import os
import socket
import unittest

import _path  # noqa: F401
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
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

    def test_torch_all_gather_over_the_device_group_gathers_over_the_tp_group(self):
        # vllm-ascend's form: torch.distributed.all_gather(list, x, get_tp_group().device_group).
        tp.install_list_gather()
        a = torch.tensor([[1, 2]], dtype=torch.int32)
        b = torch.tensor([[3, 4], [5, 6]], dtype=torch.int32)
        g = tp.EmulatedTPGroup(2, 1, 0, rounds=[[a, b]])
        self.assertEqual((g.device_group.size(), g.device_group.rank()), (2, 1))
        out = [torch.zeros_like(a), torch.zeros_like(b)]
        self.assertIsNone(dist.all_gather(out, b.clone(), group=g.device_group))
        self.assertEqual([o.tolist() for o in out], [a.tolist(), b.tolist()])
        self.assertTrue(g.called)

    def test_dtypes_nccl_lacks_raise_its_type_error(self):
        g = tp.EmulatedTPGroup(2, 0, 0, rounds=[])
        with self.assertRaises(TypeError) as e:
            g.all_gather(torch.zeros(2, 1, dtype=torch.int16), dim=0)
        self.assertEqual(str(e.exception), "Input tensor data type is not supported for NCCL process group: Short")
        for dtype in (torch.int8, torch.uint8, torch.int32, torch.int64, torch.bool):  # NCCL has these
            with self.assertRaises(rank.GatherStop):
                tp.EmulatedTPGroup(2, 0, 0, rounds=[]).all_gather(torch.zeros(2, 1, dtype=dtype), dim=0)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _list_gather_on_rank(r, port, widths, rows, out):
    """One of two gloo processes: TP rank r sends rows[r] rows of widths[r]
    columns through the list-form all_gather; out[r] gets what it saw."""
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=r, world_size=2)
    from r3runtime.dist import ProcGroup
    g = tp.RealTPGroup(2, r, 0, ProcGroup([0, 1], "gloo", 2))
    x = torch.full((rows[r], widths[r]), r + 1, dtype=torch.int32)
    try:
        got = g._gather_list(x)
        out[r] = ("rows", [t.tolist() for t in got])
    except rank.RankAbort as e:
        out[r] = (e.etype, e.message)
    dist.destroy_process_group()


class RealListGatherTest(unittest.TestCase):
    """The uneven (list) all_gather over two real gloo processes: ranks may
    send different row counts, never different trailing shapes."""

    def run_two(self, widths, rows):
        # forked, not spawned: a spawned child re-imports the test runner
        ctx = mp.get_context("fork")
        out = ctx.Manager().dict()
        port = _free_port()
        procs = [ctx.Process(target=_list_gather_on_rank, args=(r, port, widths, rows, out))
                 for r in (0, 1)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(timeout=60)
        self.assertEqual([p.exitcode for p in procs], [0, 0], "a gloo process died")
        return out[0], out[1]

    def test_uneven_rows_come_back_cut_to_each_ranks_count(self):
        want = ("rows", [[[1, 1]] * 3, [[2, 2]] * 1])
        self.assertEqual(self.run_two(widths=[2, 2], rows=[3, 1]), (want, want))

    def test_another_trailing_shape_is_a_collective_mismatch(self):
        got = self.run_two(widths=[2, 3], rows=[1, 1])
        self.assertEqual([g[0] for g in got], ["CollectiveMismatch"] * 2, got)


if __name__ == "__main__":
    unittest.main()
