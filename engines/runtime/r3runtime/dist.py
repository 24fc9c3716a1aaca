"""torchrun: the process groups of the cases' TP groups, and the control
channel (object broadcast and gather) over which process 0 hands out the
requests and collects the results."""
import os

import torch
import torch.distributed as dist

from r3runtime.tp import RealTPGroup, TPGroupBase


class ProcGroup:
    def __init__(self, members, backend, world):
        self.members = members  # sorted global ranks
        self.index_of = {m: i for i, m in enumerate(members)}
        self.world = world
        self.gloo = dist.new_group(ranks=list(members), backend="gloo")
        if backend == "gloo":
            self.data = self.gloo
            self.data_is_gloo = True
        else:
            self.data = dist.new_group(ranks=list(members), backend=backend)
            self.data_is_gloo = False


class Dist:
    """root: the process that speaks the protocol: the first process of the
    node r3check started (`--protocol-node`), whatever global rank the
    rendezvous gave it; process 0 when no node says so."""

    def __init__(self, device_kind, protocol_node=False):
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.rank = int(os.environ.get("RANK", "0"))
        self.local_rank = int(os.environ.get("LOCAL_RANK", str(self.rank)))
        local_world = int(os.environ.get("LOCAL_WORLD_SIZE", str(self.world)))
        if device_kind == "cuda":
            ndev = torch.cuda.device_count()
            own_gpu = local_world <= ndev
            self.device = torch.device("cuda", self.local_rank % ndev)
            torch.cuda.set_device(self.device)
            self.backend = "nccl" if own_gpu else "gloo"
        else:
            self.device = torch.device("cpu")
            self.backend = "gloo"
        dist.init_process_group(backend=self.backend)
        self.ctl = dist.new_group(backend="gloo") if self.backend != "gloo" else None
        self.groups = {}
        self.root = 0
        claims = [r for r, c in enumerate(self.all_gather_obj(bool(protocol_node) and self.local_rank == 0)) if c]
        if len(claims) > 1:
            raise RuntimeError(f"processes {claims} all say they speak the protocol (--protocol-node on more than one node)")
        if claims:
            self.root = claims[0]

    def bcast(self, obj):
        box = [obj]
        dist.broadcast_object_list(box, src=self.root, group=self.ctl)
        return box[0]

    def gather(self, obj):
        out = [None] * self.world if self.rank == self.root else None
        dist.gather_object(obj, out, dst=self.root, group=self.ctl)
        return out

    def all_gather_obj(self, obj):
        out = [None] * self.world
        dist.all_gather_object(out, obj, group=self.ctl)
        return out

    def ensure_groups(self, cases):
        for case in cases:
            if case.T < 2 or case.T > self.world:
                continue
            for d in range(case.D):
                key = tuple(sorted((d * case.T + t) % self.world for t in range(case.T)))
                if key not in self.groups:
                    self.groups[key] = ProcGroup(key, self.backend, self.world)

    def run_real(self, engine, case, ci, results):
        W = self.world
        for d in range(case.D):
            procs = [(d * case.T + t) % W for t in range(case.T)]
            if self.rank not in procs:
                continue
            t = procs.index(self.rank)
            if case.T == 1:
                group = TPGroupBase(1, 0, d)
            else:
                group = RealTPGroup(case.T, t, d, self.groups[tuple(sorted(procs))])
            _, _, res = engine.run_rank(case, d, t, group)
            results[(ci, d, t)] = res


# ---------------------------------------------------------------------------
# The protocol loop.

