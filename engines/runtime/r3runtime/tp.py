"""TP groups shaped like vLLM's GroupCoordinator (which SGLang shares).

`all_gather` of the running rank's TP group is the one collective capture
code makes, as the group's method or as torch.distributed.all_gather(list,
tensor, group.device_group) (vllm-ascend's form: `install_list_gather`). In one process the TP ranks of a DP rank are emulated in passes
(capture_engine.run_dp_emulated); under torchrun it is a real
torch.distributed collective among the processes holding those ranks.
"""
import weakref

import torch
import torch.distributed as dist

from r3runtime.errors import StandInGap
from r3runtime.rank import GatherStop, RankAbort
from r3runtime.rows import DTYPE_CODE

_IDENTITY_WHEN_ALONE = ("all_reduce", "all_gatherv", "reduce_scatter", "reduce_scatterv", "broadcast")
MAX_GATHERS = 4  # TP all-gathers one capture() may make under emulation

# Integer dtypes torch.distributed's NCCL backend has no type for (its
# ncclDataType map: int8, uint8, int32, int64, bool, the float types). A TP
# all-gather of such a tensor raises in a deployment, so it raises here too,
# in one process as under torchrun (where gloo would say "Invalid scalar
# type" instead): vLLM's monolithic replay hands capture() int16 rows.
_NCCL_LACKS = {getattr(torch, n): c for n, c in (("int16", "Short"), ("uint16", "UInt16"), ("uint32", "UInt32"),
                                                 ("uint64", "UInt64")) if hasattr(torch, n)}
_NCCL_LACKS = {d: c for d, c in _NCCL_LACKS.items() if d not in (torch.int32, torch.int64)}  # torch < 2.3 aliases


class DeviceGroup:
    """A TP group's `device_group`: torch.distributed.all_gather given it
    gathers over that TP group (install_list_gather)."""

    def __init__(self, group):
        # A weak reference: a strong one would make each rank's group a
        # reference cycle, left to the garbage collector (10 000 of them per
        # 8 192 rank captures, 40 % of the collector's time).
        self._group = weakref.ref(group)

    @property
    def group(self):
        return self._group()

    def size(self):
        return self.group.world_size

    def rank(self):
        return self.group.rank_in_group

    def __repr__(self):
        return f"<r3check TP device group of dp_rank={getattr(self.group, 'd', '?')}>"


def install_list_gather():
    """torch.distributed.all_gather(tensor_list, tensor, group) over one of
    our TP groups gathers over it; any other call goes to torch's own."""
    if getattr(dist.all_gather, "_r3_list_gather", False):
        return
    real = dist.all_gather

    def all_gather(tensor_list, tensor, group=None, async_op=False):
        if isinstance(group, DeviceGroup):
            group.group.gather_into(tensor_list, tensor)
            return None
        return real(tensor_list, tensor, group=group, async_op=async_op)

    all_gather._r3_list_gather = True
    dist.all_gather = all_gather


def _check_outputs(tensor_list, inputs, world):
    """What torch.distributed checks of an all_gather's outputs: one tensor
    per rank, each of the shape and dtype that rank sends."""
    if not isinstance(tensor_list, (list, tuple)) or len(tensor_list) != world:
        n = len(tensor_list) if isinstance(tensor_list, (list, tuple)) else type(tensor_list).__name__
        raise RuntimeError(f"all_gather: the output list holds {n} tensors for a group of {world} ranks "
                           "(torch.distributed needs one per rank)")
    for i, (out, x) in enumerate(zip(tensor_list, inputs)):
        if out.shape != x.shape or out.dtype != x.dtype:
            raise RuntimeError(f"all_gather: output tensor {i} is {list(out.shape)} {out.dtype}, "
                               f"but TP rank {i} sends {list(x.shape)} {x.dtype}")


class Group:
    """Attributes of vLLM's GroupCoordinator; the collective is the subclass's."""

    def __init__(self, world_size, rank_in_group, first_global, name):
        self.world_size = world_size
        self.rank_in_group = rank_in_group
        self.ranks = list(range(first_global, first_global + world_size))
        self.rank = first_global + rank_in_group
        self.local_rank = rank_in_group
        self.unique_name = name
        self.device_group = None
        self.cpu_group = None

    @property
    def is_first_rank(self):
        return self.rank_in_group == 0

    @property
    def is_last_rank(self):
        return self.rank_in_group == self.world_size - 1

    @property
    def first_rank(self):
        return self.ranks[0]

    @property
    def last_rank(self):
        return self.ranks[-1]

    def all_gather(self, input_, dim=-1):
        if self.world_size == 1:
            return input_
        raise StandInGap(f"the {self.unique_name} group", "all_gather", "only the TP group's collective is modelled")

    def __getattr__(self, name):
        # all_reduce, reduce_scatter, broadcast, ...: collectives capture code
        # does not make, on groups whose world is not modelled.
        if name.startswith("__"):
            raise AttributeError(name)
        if self.world_size == 1 and name in _IDENTITY_WHEN_ALONE:
            return lambda input_, *args, **kwargs: input_  # GroupCoordinator's world-size-1 shortcut
        raise StandInGap(f"the {self.unique_name} group (GroupCoordinator)", name)

    def barrier(self):
        pass


class TPGroupBase(Group):
    def __init__(self, T, t, d):
        super().__init__(T, t, d * T, "tp")
        self.d = d
        self.called = False
        self.device_group = DeviceGroup(self)

    def gather_into(self, tensor_list, x):
        """torch.distributed.all_gather(tensor_list, x, this group)."""
        self.called = True
        if self.world_size == 1:
            _check_outputs(tensor_list, [x], 1)
            tensor_list[0].copy_(x)
            return
        lacks = _NCCL_LACKS.get(x.dtype)
        if lacks is not None:
            raise TypeError(f"Input tensor data type is not supported for NCCL process group: {lacks}")
        inputs = self._gather_list(x)
        _check_outputs(tensor_list, inputs, self.world_size)
        for out, got in zip(tensor_list, inputs):
            out.copy_(got)

    def all_gather(self, input_, dim=-1):
        self.called = True
        if self.world_size == 1:
            return input_  # as vLLM's GroupCoordinator: no collective
        lacks = _NCCL_LACKS.get(input_.dtype)
        if lacks is not None:
            raise TypeError(f"Input tensor data type is not supported for NCCL process group: {lacks}")
        return self._gather(input_, dim)

    def finish(self):
        pass


class EmulatedTPGroup(TPGroupBase):
    """One process plays every TP rank of a DP rank, in passes (see run_dp_emulated)."""

    def __init__(self, T, t, d, rounds):
        super().__init__(T, t, d)
        self.rounds = rounds  # rounds[k][t'] = TP rank t''s input to all-gather k
        self.calls = 0

    def _round(self, x, uneven):
        """Every TP rank's input to this all-gather (once the passes have
        them all); the first pass stops here to collect this rank's."""
        k = self.calls
        self.calls += 1
        if k < len(self.rounds):
            mine = self.rounds[k][self.rank_in_group]
            if mine.shape != x.shape or mine.dtype != x.dtype or not torch.equal(mine, x):
                raise RankAbort(
                    "AdapterError",
                    f"TP rank {self.rank_in_group} of dp_rank={self.d} passed a different tensor to all-gather {k} "
                    "when its capture was run again (emulation needs a deterministic capture)",
                )
            return self.rounds[k]
        if k >= MAX_GATHERS:
            raise RankAbort("AdapterError", f"capture made more than {MAX_GATHERS} TP all-gathers")
        raise GatherStop(x.detach().clone(), uneven=uneven)

    def _gather(self, x, dim):
        return torch.cat(self._round(x, uneven=False), dim=dim)

    def _gather_list(self, x):
        return self._round(x, uneven=True)


class RealTPGroup(TPGroupBase):
    """A real collective among the processes holding the TP ranks of one DP rank.

    Every collective is preceded by a vote on the group's gloo twin: members
    inside all_gather vote 1 (with their tensor's shape); members whose capture
    has ended vote 0 until a round is all-0 (finish()). A mixed round means a
    real deployment would hang: the members inside all_gather abort.
    """

    def __init__(self, T, t, d, g):
        super().__init__(T, t, d)
        self.g = g  # _ProcGroups entry

    def _vote(self, flag, x):
        v = [flag, 0, 0, 0, 0, 0, 0]
        if x is not None:
            v[1] = x.dim()
            for i, s in enumerate(list(x.shape)[:4]):
                v[2 + i] = int(s)
            v[6] = DTYPE_CODE.get(x.dtype, 99)
        mine = torch.tensor(v, dtype=torch.int64)
        out = [torch.empty_like(mine) for _ in range(self.world_size)]
        dist.all_gather(out, mine, group=self.g.gloo)
        return [o.tolist() for o in out]

    def _gather(self, x, dim):
        votes = self._vote(1, x)
        inside = sum(1 for v in votes if v[0] == 1)
        if inside != self.world_size:
            raise RankAbort("hang", hang_message(inside, self.world_size, self.d))
        if any(v[1:] != votes[0][1:] for v in votes):
            raise RankAbort("CollectiveMismatch", mismatch_message(self.d, [v[1:6] for v in votes]))
        send = x.contiguous()
        on_cpu_backend = self.g.data_is_gloo and send.device.type != "cpu"
        if on_cpu_backend:
            send = send.cpu()
        chunks = [torch.empty_like(send) for _ in range(self.world_size)]
        dist.all_gather(chunks, send, group=self.g.data)
        ordered = [chunks[self.g.index_of[(self.d * self.world_size + tt) % self.g.world]] for tt in range(self.world_size)]
        out = torch.cat(ordered, dim=dim)
        return out.to(x.device) if on_cpu_backend else out

    def _gather_list(self, x):
        """The uneven form: ranks may send different row counts (the vote
        says each one's shape); sent padded to the most, then cut."""
        votes = self._vote(1, x)
        inside = sum(1 for v in votes if v[0] == 1)
        if inside != self.world_size:
            raise RankAbort("hang", hang_message(inside, self.world_size, self.d))
        # Before any data moves: ranks that differ in more than their row
        # count would make the collective abort the process (gloo) or hang
        # (NCCL) instead of failing the case.
        order = [self.g.index_of[(self.d * self.world_size + tt) % self.g.world]
                 for tt in range(self.world_size)]  # TP order
        if any(v[1] != votes[0][1] or v[3:7] != votes[0][3:7] for v in votes):
            raise RankAbort("CollectiveMismatch",
                            mismatch_message(self.d, [votes[m][1:6] for m in order]))
        send = x.contiguous()
        on_cpu_backend = self.g.data_is_gloo and send.device.type != "cpu"
        if on_cpu_backend:
            send = send.cpu()
        rows = [v[2] if v[1] > 0 else 1 for v in votes]
        most = max(rows + [1])
        if send.dim() > 0 and send.shape[0] < most:
            pad = send.new_zeros((most - send.shape[0],) + tuple(send.shape[1:]))
            send = torch.cat([send, pad])
        chunks = [torch.empty_like(send) for _ in range(self.world_size)]
        dist.all_gather(chunks, send, group=self.g.data)
        out = []
        for member in order:
            got = chunks[member][: votes[member][2]] if chunks[member].dim() > 0 else chunks[member]
            out.append(got.to(x.device) if on_cpu_backend else got)
        return out

    def finish(self):
        if self.world_size == 1:
            return
        while True:
            votes = self._vote(0, None)
            if all(v[0] == 0 for v in votes):
                return


def hang_message(inside, T, d):
    return f"only {inside} of {T} TP ranks of dp_rank={d} reach the TP all-gather"


def mismatch_message(d, shapes):
    return f"TP ranks of dp_rank={d} pass tensors of different shapes or dtypes to the TP all-gather: {shapes}"


class SimpleGroup(Group):
    pass

