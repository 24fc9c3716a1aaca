#!/usr/bin/env python3
"""r3check engine adapter for vLLM's routed-experts capturer (protocol 1).

  python3 engines/vllm/r3_adapter.py --source PATH|installed [--device cpu|cuda]
  torchrun --nproc-per-node N engines/vllm/r3_adapter.py --source PATH --device cuda

Runs vLLM's own `RoutedExpertsCapturer.capture()` on the rows r3check sends
and reports what it wrote. The protocol is docs/engines.md; how to point the
adapter at a checkout, a single file or an installed vLLM is
engines/vllm/README.md. Nothing of vLLM is copied here: the stand-ins below
(forward context, TP group, platform, config) are written from the spec
(shared/spec/vllm-routing-replay.md) and give the capturer module only what
its capture step reads.
"""

# --- stdout hygiene, before anything can print -----------------------------
# The real stdout is kept for the protocol; fd 1 and sys.stdout go to stderr
# so that a print() (or a C library write to fd 1) inside engine code cannot
# break a reply.
import os
import sys

if __name__ == "__main__":
    _PROTO_FD = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
else:  # imported (e.g. by a test): leave the process alone
    _PROTO_FD = None

import argparse
import collections
import contextlib
import functools
import glob
import hashlib
import importlib
import importlib.abc
import importlib.util
import inspect
import itertools
import json
import logging
import pathlib
import re
import select
import tempfile
import types

PROTOCOL = 1
TARGET = "vllm.model_executor.layers.fused_moe.routed_experts_capturer"
TARGET_REL = pathlib.Path(*TARGET.split(".")).with_suffix(".py")
ENCODING_WIDTH = 8  # num_experts_per_tok the capturer is built with
MAX_GATHERS = 4  # TP all-gathers one capture() may make under emulation
LRU_ENTRIES = 64
LRU_BYTES = 512 << 20

log = logging.getLogger("r3_adapter")

torch = None  # imported in main(), after stdout hygiene
dist = None


class Fatal(Exception):
    """An error that ends the adapter with a `fatal` line."""


def _one_line(text):
    text = str(text).strip()
    return text.splitlines()[0] if text else ""


def _exc_text(e):
    msg = _one_line(e)
    return f"{type(e).__name__}: {msg}" if msg else type(e).__name__


# ---------------------------------------------------------------------------
# Private control flow. BaseException subclasses, so that an engine's
# `except Exception` cannot swallow them.


class _GatherStop(BaseException):
    """Emulation pass k: this TP rank reached all-gather round k."""

    def __init__(self, tensor):
        super().__init__("gather stop")
        self.tensor = tensor


class _RankAbort(BaseException):
    """The capture must stop with an adapter-made error (hang, mismatch)."""

    def __init__(self, etype, message):
        super().__init__(message)
        self.etype = etype
        self.message = message


# ---------------------------------------------------------------------------
# The rank a capture runs as. The stand-ins read this.


class _Current:
    case = None  # _Case
    d = 0
    t = 0
    group = None  # the TP group stand-in of the running rank
    config = None  # the config of the running rank's capturer


CUR = _Current()


class _DPMetadata:
    """The fields of vLLM's DPMetadata that capture code reads."""

    def __init__(self, num_tokens, local_sizes):
        self.num_tokens_across_dp_cpu = torch.tensor(num_tokens, dtype=torch.int32)
        self.max_tokens_across_dp_cpu = (
            self.num_tokens_across_dp_cpu.max() if num_tokens else torch.tensor(0, dtype=torch.int32)
        )
        self.cu_tokens_across_dp_cpu = torch.cumsum(self.num_tokens_across_dp_cpu, dim=0, dtype=torch.int32)
        self.local_sizes = None if local_sizes is None else list(local_sizes)

    def get_chunk_sizes_across_dp_rank(self):
        assert self.local_sizes is not None
        return self.local_sizes

    @contextlib.contextmanager
    def sp_local_sizes(self, sequence_parallel_size):
        old = self.local_sizes
        sp = int(sequence_parallel_size)
        self.local_sizes = [(int(n) + sp - 1) // sp for n in self.num_tokens_across_dp_cpu.tolist() for _ in range(sp)]
        try:
            yield self.local_sizes
        finally:
            self.local_sizes = old

    def __repr__(self):
        return f"DPMetadata(num_tokens_across_dp_cpu={self.num_tokens_across_dp_cpu.tolist()}, local_sizes={self.local_sizes})"


class _ForwardContext:
    def __init__(self, dp_metadata):
        self.dp_metadata = dp_metadata
        self.attn_metadata = None
        self.virtual_engine = 0
        self.batch_descriptor = None
        self.cudagraph_runtime_mode = None
        self.ubatch_slices = None

    def __getattr__(self, name):
        raise AttributeError(f"r3check adapter's forward context has no attribute {name!r} (it models dp_metadata only)")


def get_forward_context():
    if CUR.case is None:
        raise AssertionError("Forward context is not set.")
    return CUR.case.forward_context


def is_forward_context_available():
    return CUR.case is not None


@contextlib.contextmanager
def set_forward_context(*args, **kwargs):
    yield


class _Group:
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
        raise RuntimeError(f"r3check adapter: all_gather on the {self.unique_name} group is not modelled")

    def _not_modelled(self, *args, **kwargs):
        raise RuntimeError(f"r3check adapter: this collective on the {self.unique_name} group is not modelled")

    all_reduce = reduce_scatter = all_gatherv = reduce_scatterv = broadcast = gather = _not_modelled

    def barrier(self):
        pass


class _TPGroupBase(_Group):
    def __init__(self, T, t, d):
        super().__init__(T, t, d * T, "tp")
        self.d = d
        self.called = False

    def all_gather(self, input_, dim=-1):
        self.called = True
        if self.world_size == 1:
            return input_
        return self._gather(input_, dim)

    def finish(self):
        pass


class _EmulatedTPGroup(_TPGroupBase):
    """One process plays every TP rank of a DP rank, in passes (see run_dp_emulated)."""

    def __init__(self, T, t, d, rounds):
        super().__init__(T, t, d)
        self.rounds = rounds  # rounds[k][t'] = TP rank t''s input to all-gather k
        self.calls = 0

    def _gather(self, x, dim):
        k = self.calls
        self.calls += 1
        if k < len(self.rounds):
            mine = self.rounds[k][self.rank_in_group]
            if mine.shape != x.shape or mine.dtype != x.dtype or not torch.equal(mine, x):
                raise _RankAbort(
                    "AdapterError",
                    f"TP rank {self.rank_in_group} of dp_rank={self.d} passed a different tensor to all-gather {k} "
                    "when its capture was run again (emulation needs a deterministic capture)",
                )
            return torch.cat(self.rounds[k], dim=dim)
        if k >= MAX_GATHERS:
            raise _RankAbort("AdapterError", f"capture made more than {MAX_GATHERS} TP all-gathers")
        raise _GatherStop(x.detach().clone())


class _RealTPGroup(_TPGroupBase):
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
            v[6] = _DTYPE_CODE.get(x.dtype, 99)
        mine = torch.tensor(v, dtype=torch.int64)
        out = [torch.empty_like(mine) for _ in range(self.world_size)]
        dist.all_gather(out, mine, group=self.g.gloo)
        return [o.tolist() for o in out]

    def _gather(self, x, dim):
        votes = self._vote(1, x)
        inside = sum(1 for v in votes if v[0] == 1)
        if inside != self.world_size:
            raise _RankAbort("hang", _hang_message(inside, self.world_size, self.d))
        if any(v[1:] != votes[0][1:] for v in votes):
            raise _RankAbort("CollectiveMismatch", _mismatch_message(self.d, [v[1:6] for v in votes]))
        send = x.contiguous()
        on_cpu_backend = self.g.data_is_gloo and send.device.type != "cpu"
        if on_cpu_backend:
            send = send.cpu()
        chunks = [torch.empty_like(send) for _ in range(self.world_size)]
        dist.all_gather(chunks, send, group=self.g.data)
        ordered = [chunks[self.g.index_of[(self.d * self.world_size + tt) % self.g.world]] for tt in range(self.world_size)]
        out = torch.cat(ordered, dim=dim)
        return out.to(x.device) if on_cpu_backend else out

    def finish(self):
        if self.world_size == 1:
            return
        while True:
            votes = self._vote(0, None)
            if all(v[0] == 0 for v in votes):
                return


def _hang_message(inside, T, d):
    return f"only {inside} of {T} TP ranks of dp_rank={d} reach the TP all-gather"


def _mismatch_message(d, shapes):
    return f"TP ranks of dp_rank={d} pass tensors of different shapes or dtypes to the TP all-gather: {shapes}"


class _SimpleGroup(_Group):
    pass


def get_tp_group():
    if CUR.group is None:
        raise AssertionError("tensor model parallel group is not initialized")
    return CUR.group


def get_dp_group():
    c = CUR.case
    return _SimpleGroup(c.D, CUR.d, 0, "dp")


def get_ep_group():
    c = CUR.case
    return _SimpleGroup(c.D * c.T, CUR.d * c.T + CUR.t, 0, "ep")


def get_pp_group():
    return _SimpleGroup(1, 0, 0, "pp")


def get_pcp_group():
    return _SimpleGroup(1, 0, 0, "pcp")


def get_dcp_group():
    return _SimpleGroup(1, 0, 0, "dcp")


def get_world_group():
    c = CUR.case
    return _SimpleGroup(c.D * c.T, CUR.d * c.T + CUR.t, 0, "world")


def get_tensor_model_parallel_rank():
    return CUR.t


def get_tensor_model_parallel_world_size():
    return CUR.case.T


def get_pipeline_model_parallel_rank():
    return 0


def get_pipeline_model_parallel_world_size():
    return 1


def tensor_model_parallel_all_gather(input_, dim=-1):
    return get_tp_group().all_gather(input_, dim)


def get_current_vllm_config():
    if CUR.config is None:
        raise AssertionError("no current vllm config")
    return CUR.config


def init_logger(name):
    return logging.getLogger(name)


def cdiv(a, b):
    return -(a // -b)


def round_up(x, y):
    return ((x + y - 1) // y) * y


class _Platform:
    """vllm.platforms.current_platform: the device the buffers live on."""

    def __init__(self):
        self.device_type = "cpu"
        self.device_name = "cpu"
        self.dispatch_key = "CPU"
        self.dist_backend = "gloo"
        self.simple_compile_backend = "inductor"

    def is_cuda(self):
        return self.device_type == "cuda"

    def is_cuda_alike(self):
        return self.device_type == "cuda"

    def is_cpu(self):
        return self.device_type == "cpu"

    def __getattr__(self, name):
        if name.startswith("is_"):
            return lambda *a, **k: False
        raise AttributeError(f"r3check adapter's current_platform has no attribute {name!r}")


current_platform = _Platform()


# KV-cache config, for capturers that key their routing data by the
# full-attention KV-cache group (some post-#50874 forks take it in __init__).
class _FullAttentionSpec:
    block_size = 16


def is_full_attention_spec(spec):
    return isinstance(spec, _FullAttentionSpec)


def make_kv_cache_config(M):
    group = types.SimpleNamespace(kv_cache_spec=_FullAttentionSpec(), layer_names=["r3check.attn"])
    return types.SimpleNamespace(
        kv_cache_groups=[group], num_blocks=cdiv(max(M, 1), _FullAttentionSpec.block_size) + 1, kv_cache_tensors=[]
    )

# Names the capturer module may bind from vLLM, mapped to the adapter's own.
KNOWN = {
    "get_forward_context": get_forward_context,
    "is_forward_context_available": is_forward_context_available,
    "set_forward_context": set_forward_context,
    "get_tp_group": get_tp_group,
    "get_dp_group": get_dp_group,
    "get_ep_group": get_ep_group,
    "get_pp_group": get_pp_group,
    "get_pcp_group": get_pcp_group,
    "get_dcp_group": get_dcp_group,
    "get_world_group": get_world_group,
    "get_tensor_model_parallel_rank": get_tensor_model_parallel_rank,
    "get_tensor_model_parallel_world_size": get_tensor_model_parallel_world_size,
    "get_pipeline_model_parallel_rank": get_pipeline_model_parallel_rank,
    "get_pipeline_model_parallel_world_size": get_pipeline_model_parallel_world_size,
    "tensor_model_parallel_all_gather": tensor_model_parallel_all_gather,
    "get_current_vllm_config": get_current_vllm_config,
    "current_platform": current_platform,
    "init_logger": init_logger,
    "is_full_attention_spec": is_full_attention_spec,
}
_DIST_NAMES = [
    "get_tp_group", "get_dp_group", "get_ep_group", "get_pp_group", "get_pcp_group", "get_dcp_group",
    "get_world_group", "get_tensor_model_parallel_rank", "get_tensor_model_parallel_world_size",
    "get_pipeline_model_parallel_rank", "get_pipeline_model_parallel_world_size",
    "tensor_model_parallel_all_gather",
]
MODULE_NAMES = {
    "vllm.forward_context": ["get_forward_context", "is_forward_context_available", "set_forward_context"],
    "vllm.distributed": _DIST_NAMES,
    "vllm.distributed.parallel_state": _DIST_NAMES,
    "vllm.distributed.communication_op": ["tensor_model_parallel_all_gather"],
    "vllm.platforms": ["current_platform"],
    "vllm.config": ["get_current_vllm_config"],
    "vllm.config.vllm": ["get_current_vllm_config"],
    "vllm.logger": ["init_logger"],
    "vllm.v1.kv_cache_interface": ["is_full_attention_spec"],
}
EXTRA_ATTRS = {
    "vllm.forward_context": {"ForwardContext": _ForwardContext, "DPMetadata": _DPMetadata},
    "vllm.v1.kv_cache_interface": {"FullAttentionSpec": _FullAttentionSpec},
    "vllm.utils": {"cdiv": cdiv, "round_up": round_up},
    "vllm.utils.math_utils": {"cdiv": cdiv, "round_up": round_up},
    "vllm": {"__version__": "unknown"},
}

# ---------------------------------------------------------------------------
# Stand-in modules for `--source PATH`: every vllm.* module except the
# capturer itself. Unknown attributes resolve to a harmless stand-in class.


class _StubMeta(type):
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _make_stub(f"{cls.__name__}.{name}")

    def __call__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]):
            return args[0]  # used as a decorator
        return super().__call__(*args, **kwargs)


class _Stub(metaclass=_StubMeta):
    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _make_stub(name)

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]):
            return args[0]
        return _Stub()


def _make_stub(name):
    return _StubMeta(name.rsplit(".", 1)[-1], (_Stub,), {"__module__": "r3check_standin", "__qualname__": name})


class _StandInModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        sub = f"{self.__name__}.{name}"
        if sub in MODULE_NAMES or sub in EXTRA_ATTRS:
            return importlib.import_module(sub)
        if self.__name__ == "vllm.envs" and name.isupper():
            value = None  # an unset environment setting
        else:
            value = _make_stub(name)
        setattr(self, name, value)
        return value


class _StandInFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname == TARGET or not (fullname == "vllm" or fullname.startswith("vllm.")):
            return None
        return importlib.util.spec_from_loader(fullname, self, is_package=True)

    def create_module(self, spec):
        return _StandInModule(spec.name)

    def exec_module(self, module):
        module.__path__ = []
        for name in MODULE_NAMES.get(module.__name__, []):
            setattr(module, name, KNOWN[name])
        for name, value in EXTRA_ATTRS.get(module.__name__, {}).items():
            setattr(module, name, value)


def _install_torch_standins():
    # torch < 2.3 has no unsigned 16/32/64-bit dtypes, which capturer
    # modules name at construction (e.g. to pick a snapshot dtype by
    # num_experts). The next wider signed dtype stands in, so such a module
    # still builds; a buffer made with it reports that dtype.
    for name, wider in (("uint16", "int32"), ("uint32", "int64"), ("uint64", "int64")):
        if not hasattr(torch, name):
            setattr(torch, name, getattr(torch, wider))
            log.info("torch %s has no torch.%s: torch.%s stands in", torch.__version__, name, wider)
    lib = torch.library
    if not hasattr(lib, "custom_op"):

        def custom_op(name, fn=None, *, mutates_args=(), device_types=None, schema=None, **kwargs):
            def wrap(f):
                class _Op:
                    def __init__(self):
                        functools.update_wrapper(self, f)

                    def __call__(self, *a, **k):
                        return f(*a, **k)

                    def register_fake(self, g):
                        return g

                    def register_kernel(self, *a, **k):
                        return lambda g: g

                    def register_autograd(self, *a, **k):
                        return None

                return _Op()

            return wrap if fn is None else wrap(fn)

        lib.custom_op = custom_op
    if not hasattr(lib, "register_fake"):

        def register_fake(op, fn=None, **kwargs):
            return (lambda f: f) if fn is None else fn

        lib.register_fake = register_fake


# ---------------------------------------------------------------------------
# Loading the capturer module.


def resolve_source(source):
    path = pathlib.Path(source).expanduser()
    if not path.exists():
        raise Fatal(f"--source {source}: no such file or directory (give a vLLM checkout, a routed_experts_capturer.py, or 'installed')")
    path = path.resolve()
    if path.is_file():
        return path
    direct = path / TARGET_REL
    if direct.is_file():
        return direct
    found = sorted(p for p in path.rglob("routed_experts_capturer.py") if p.is_file())
    if len(found) == 1:
        return found[0].resolve()
    if not found:
        raise Fatal(f"--source {path}: no {TARGET_REL} and no routed_experts_capturer.py anywhere under it")
    names = ", ".join(str(p.relative_to(path)) for p in found[:6]) + (" ..." if len(found) > 6 else "")
    raise Fatal(f"--source {path}: {len(found)} routed_experts_capturer.py files under it ({names}); point --source at one")


def _engine_version_near(file_path):
    """vLLM's version from the checkout holding file_path, without importing it."""
    parts = file_path.parts
    if tuple(parts[-len(TARGET_REL.parts):]) != TARGET_REL.parts:
        return "unknown"
    root = pathlib.Path(*parts[: -len(TARGET_REL.parts)])
    for candidate in (root / "vllm" / "_version.py", root / "vllm" / "version.py"):
        try:
            text = candidate.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        m = re.search(r"""(?:__version__|version)\s*(?::\s*str\s*)?=\s*(?:version\s*=\s*)?['"]([^'"]+)['"]""", text)
        if m:
            return m.group(1)
    return "unknown"


def load_module(source):
    """Returns (module, file path, engine_version)."""
    _install_torch_standins()
    if source == "installed":
        try:
            module = importlib.import_module(TARGET)
        except Exception as e:
            raise Fatal(f"importing {TARGET} from the installed vllm failed: {_exc_text(e)}")
        version = "unknown"
        try:
            import importlib.metadata as md

            version = md.version("vllm")
        except Exception:
            version = str(getattr(sys.modules.get("vllm"), "__version__", "unknown"))
        path = pathlib.Path(getattr(module, "__file__", "") or "").resolve()
        # The real vllm modules are loaded: point them at the stand-ins too,
        # so that lazy `from vllm.x import y` inside functions finds them.
        for modname, names in MODULE_NAMES.items():
            real = sys.modules.get(modname)
            if real is not None:
                for name in names:
                    if hasattr(real, name):
                        setattr(real, name, KNOWN[name])
    else:
        path = resolve_source(source)
        version = _engine_version_near(path)
        sys.meta_path.insert(0, _StandInFinder())
        try:
            parent = importlib.import_module(TARGET.rsplit(".", 1)[0])
            spec = importlib.util.spec_from_file_location(TARGET, str(path))
            module = importlib.util.module_from_spec(spec)
            sys.modules[TARGET] = module
            spec.loader.exec_module(module)
            setattr(parent, TARGET.rsplit(".", 1)[1], module)
        except Exception as e:
            sys.modules.pop(TARGET, None)
            raise Fatal(f"loading {path} failed: {_exc_text(e)}")
    for name, value in KNOWN.items():
        if name in vars(module):
            setattr(module, name, value)
    return module, path, version


# ---------------------------------------------------------------------------
# The config the capturer is built from.


class _Cfg:
    def __init__(self, what, **fields):
        object.__setattr__(self, "_what", what)
        self.__dict__.update(fields)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        known = ", ".join(k for k in self.__dict__ if not k.startswith("_"))
        raise AttributeError(f"r3check adapter's {self._what} has no attribute {name!r} (it has: {known})")


def make_config(M, num_experts, num_layers, D, T, d, t, ep, instance_id):
    hf = _Cfg(
        "hf_text_config",
        num_hidden_layers=num_layers,
        num_experts_per_tok=ENCODING_WIDTH,
        num_experts=num_experts,
        n_routed_experts=num_experts,
        num_local_experts=num_experts,
        model_type="r3check",
    )
    parallel = _Cfg(
        "parallel_config",
        data_parallel_rank=d,
        data_parallel_rank_local=d,
        data_parallel_size=D,
        data_parallel_size_local=D,
        tensor_parallel_size=T,
        pipeline_parallel_size=1,
        prefill_context_parallel_size=1,
        decode_context_parallel_size=1,
        enable_expert_parallel=bool(ep),
        world_size=T,
        world_size_across_dp=T * D,
        rank=t,
    )
    model = _Cfg(
        "model_config",
        hf_text_config=hf,
        hf_config=hf,
        get_total_num_hidden_layers=lambda: num_layers,
        get_num_layers=lambda *a, **k: num_layers,
        get_num_experts=lambda: num_experts,
        get_num_experts_per_tok=lambda: ENCODING_WIDTH,
        max_model_len=M,
    )
    scheduler = _Cfg("scheduler_config", max_num_batched_tokens=M, max_num_seqs=M)
    return _Cfg(
        "vllm_config",
        model_config=model,
        parallel_config=parallel,
        scheduler_config=scheduler,
        instance_id=instance_id,
    )


# ---------------------------------------------------------------------------
# Driving the capturer's own initialisation.

_PARAM_VALUES = {
    "max_num_batched_tokens": lambda M, cfg: M,
    "max_num_tokens": lambda M, cfg: M,
    "max_tokens": lambda M, cfg: M,
    "max_num_kv_tokens": lambda M, cfg: M,
    "vllm_config": lambda M, cfg: cfg,
    "config": lambda M, cfg: cfg,
    "model_config": lambda M, cfg: cfg.model_config,
    "parallel_config": lambda M, cfg: cfg.parallel_config,
    "kv_cache_config": lambda M, cfg: make_kv_cache_config(M),
}


def _required_params(fn, skip_self):
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    if skip_self and params and params[0].kind in (params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD):
        params = params[1:]
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    shown = ["self"] + [p.name if p.kind in kinds else str(p) for p in params]
    return [p for p in params if p.kind in kinds and p.default is inspect.Parameter.empty], shown


class Interface:
    """How to build a capturer: `kind` is "init" or "init_buffer"."""

    def __init__(self, module):
        cls = getattr(module, "RoutedExpertsCapturer", None)
        if cls is None:
            names = sorted(n for n, v in vars(module).items() if isinstance(v, type) and v.__module__ == module.__name__)
            raise Fatal(f"{module.__name__} has no RoutedExpertsCapturer (classes there: {', '.join(names) or 'none'})")
        if not isinstance(cls, type):
            raise Fatal(f"RoutedExpertsCapturer is a {type(cls).__name__}, not a class")
        if not callable(getattr(cls, "capture", None)):
            raise Fatal("RoutedExpertsCapturer has no capture() method")
        self.module = module
        self.cls = cls
        known = " or ".join(
            [
                "RoutedExpertsCapturer(max_num_batched_tokens, vllm_config[, kv_cache_config])",
                "RoutedExpertsCapturer.create() + init_buffer(max_num_batched_tokens, max_num_kv_tokens, vllm_config)",
            ]
        )
        required = self._drivable_params(cls.__init__, "__init__", known)
        self.init_params = [p.name for p in required]
        self.buffer_params = None
        self.use_create = False
        if required:
            self.kind = "init"
            self.description = f"RoutedExpertsCapturer({', '.join(self.init_params)})"
            return
        init_buffer = getattr(cls, "init_buffer", None)
        if init_buffer is None:
            self.kind = "init"
            self.description = "RoutedExpertsCapturer()"
            return
        breq = self._drivable_params(init_buffer, "init_buffer", known)
        self.kind = "init_buffer"
        self.buffer_params = [p.name for p in breq]
        self.use_create = callable(getattr(cls, "create", None))
        head = "RoutedExpertsCapturer.create()" if self.use_create else "RoutedExpertsCapturer()"
        self.description = f"{head} + init_buffer({', '.join(self.buffer_params)})"

    @staticmethod
    def _drivable_params(fn, name, known):
        """The required parameters of RoutedExpertsCapturer.<name>; Fatal
        when one is not a value this adapter can supply."""
        try:
            required, shown = _required_params(fn, skip_self=True)
        except (TypeError, ValueError) as e:
            raise Fatal(f"cannot inspect RoutedExpertsCapturer.{name}: {_exc_text(e)}")
        unknown = [p.name for p in required if p.name not in _PARAM_VALUES]
        if unknown:
            raise Fatal(
                f"RoutedExpertsCapturer.{name} takes ({', '.join(shown)}): not an interface this adapter drives "
                f"(parameter{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} unknown; known: {known})"
            )
        return required

    def _reset_singletons(self):
        cls = self.cls
        for name, value in list(vars(self.module).items()):
            if isinstance(value, cls):
                setattr(self.module, name, None)
        for name in ("_instance", "_global_instance"):
            if isinstance(cls.__dict__.get(name), cls):
                setattr(cls, name, None)

    def construct(self, M, cfg):
        def args(names):
            return {n: _PARAM_VALUES[n](M, cfg) for n in names}

        if self.kind == "init":
            return self.cls(**args(self.init_params))
        self._reset_singletons()
        try:
            cap = self.cls.create() if self.use_create else self.cls()
        finally:
            self._reset_singletons()
        cap.init_buffer(**args(self.buffer_params))
        return cap


def find_buffer(cap):
    for name in ("device_buffer", "_device_buffer"):
        value = getattr(cap, name, None)
        if isinstance(value, torch.Tensor):
            return value
    present = sorted(k for k in vars(cap)) if hasattr(cap, "__dict__") else []
    raise LookupError(
        "the capturer has no device_buffer or _device_buffer tensor (attributes: " + (", ".join(present) or "none") + ")"
    )


def _cleanup_capturer(cap):
    fn = getattr(cap, "cleanup", None)
    if callable(fn):
        try:
            fn()
        except Exception:
            pass


# ---------------------------------------------------------------------------
# Row encoding.

_DTYPE_CODE = {}
_BASES = {}


def _init_dtype_tables():
    names = ["bool", "uint8", "int8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
             "float16", "bfloat16", "float32", "float64"]
    bases = {"bool": 2, "uint8": 1 << 8, "int8": 1 << 7, "int16": 1 << 15, "uint16": 1 << 16, "int32": 1 << 31,
             "uint32": 1 << 31, "int64": 1 << 30, "uint64": 1 << 30,
             "float16": 1 << 11, "bfloat16": 1 << 8, "float32": 1 << 24, "float64": 1 << 30}
    for i, n in enumerate(names):
        dt = getattr(torch, n, None)
        if dt is not None:
            _DTYPE_CODE[dt] = i
            _BASES[dt] = bases[n]


def dtype_name(dt):
    return str(dt).replace("torch.", "")


def base_for(dt):
    """B: the largest power of two the buffer dtype holds, at most 2^31 so
    that every digit fits the int32 topk_ids."""
    return _BASES.get(dt, 1 << 7)


_POWS = {}
TABLE_ROWS = 1 << 21  # values below this are encoded from a table (64 MiB of int32)
# R3_ADAPTER_SLOW=1: no table, no decode shortcuts (tests compare both ways).
SLOW = os.environ.get("R3_ADAPTER_SLOW", "") not in ("", "0")
if SLOW:
    TABLE_ROWS = 0


def _digits(v, B):
    """int32 (n, 8): base-B digits of the int64 values v (B a power of two)."""
    x = torch.zeros((v.shape[0], ENCODING_WIDTH), dtype=torch.int32)
    shift = B.bit_length() - 1
    top = int(v.max()) if v.numel() else 0
    for j in range(_ndigits(B, top)):
        x[:, j] = (v >> (shift * j)) & (B - 1)
    return x


class _Tables:
    """Row encodings of v = 0, 1, 2, ... per base and device (and narrowed
    per buffer dtype), grown on demand: encoding a run is a slice."""

    def __init__(self):
        self.tables = {}

    def get(self, B, device, rows, dtype=None):
        key = (B, device, dtype)
        t = self.tables.get(key)
        if t is None or t.shape[0] < rows:
            if dtype is not None:
                t = self.get(B, device, rows).to(dtype)
            else:
                size = max(rows, 4096, 2 * (t.shape[0] if t is not None else 0))
                t = _digits(torch.arange(size, dtype=torch.int64), B).to(device)
            self.tables[key] = t
        return t


TABLES = _Tables()


def _pows(B):
    p = _POWS.get(B)
    if p is None:
        vals = []
        for j in range(ENCODING_WIDTH):
            vals.append(min(B ** j, 1 << 62))
        p = torch.tensor(vals, dtype=torch.int64)
        _POWS[B] = p
    return p


class _Case:
    """One request case, parsed once; shared by all its ranks."""

    def __init__(self, index, raw):
        try:
            self.D = int(raw["dp"])
            self.T = int(raw["tp"])
            self.ep = bool(raw.get("ep", False))
            self.M = int(raw["max_num_batched_tokens"])
            self.E = int(raw["num_experts"])
            self.layers = int(raw["num_layers"])
            self.N = [int(x) for x in raw["num_tokens_across_dp"]]
            ls = raw.get("local_sizes")
            self.local_sizes = None if ls is None else [int(x) for x in ls]
            ranks = raw["ranks"]
        except (KeyError, TypeError, ValueError) as e:
            raise Fatal(f"case {index}: malformed ({_exc_text(e)})")
        where = f"case {index}"
        if self.D < 1 or self.T < 1:
            raise Fatal(f"{where}: dp and tp must be >= 1")
        if self.M < 1 or self.E < 1 or self.layers < 1:
            raise Fatal(f"{where}: max_num_batched_tokens, num_experts and num_layers must be >= 1")
        if len(self.N) != self.D or any(n < 0 for n in self.N):
            raise Fatal(f"{where}: num_tokens_across_dp must hold {self.D} counts >= 0")
        if not isinstance(ranks, list) or len(ranks) != self.D * self.T:
            raise Fatal(f"{where}: ranks must hold dp*tp = {self.D * self.T} entries")
        self.nl = min(self.layers, 2)
        self.layer = self.nl - 1
        self.offs = [0]
        for n in self.N:
            self.offs.append(self.offs[-1] + n)
        self.total = self.offs[-1]
        self.pad_v = self.total + 1
        self.runs = []
        for r, rank in enumerate(ranks):
            d, t = divmod(r, self.T)
            try:
                if int(rank["dp"]) != d or int(rank["tp"]) != t:
                    raise Fatal(f"{where}: ranks[{r}] is (dp {rank['dp']}, tp {rank['tp']}), expected (dp {d}, tp {t})")
                self.runs.append(self._parse_runs(rank["rows"], where + f" rank (dp {d}, tp {t})"))
            except (KeyError, TypeError, ValueError) as e:
                raise Fatal(f"{where}: ranks[{r}] malformed ({_exc_text(e)})")
        self.dp_metadata = None if self.D == 1 else _DPMetadata(self.N, self.local_sizes)
        self.forward_context = _ForwardContext(self.dp_metadata)
        self._encoded = {}
        self._cum_ends = None

    def _parse_runs(self, rows, where):
        out = []
        for run in rows:
            if "pad" in run:
                c = int(run["pad"])
                if c < 0:
                    raise Fatal(f"{where}: negative pad count")
                out.append((-1, 0, c))
            else:
                dp, frm, c = int(run["dp"]), int(run["from"]), int(run["count"])
                if not 0 <= dp < self.D or frm < 0 or c < 0 or frm + c > self.N[dp]:
                    raise Fatal(f"{where}: run dp{dp}[{frm}..{frm + c}) is outside N[{dp}]")
                out.append((dp, frm, c))
        return tuple(out)

    def _values(self, runs):
        """v of every row of a run list (1-D int64)."""
        parts = []
        for dp, frm, c in runs:
            if c == 0:
                continue
            if dp < 0:
                parts.append(torch.full((c,), self.pad_v, dtype=torch.int64))
            else:
                s = 1 + self.offs[dp] + frm
                parts.append(torch.arange(s, s + c, dtype=torch.int64))
        return torch.cat(parts) if parts else torch.zeros(0, dtype=torch.int64)

    def encoded(self, runs, B, device, dtype=None):
        """topk_ids for a run list: int32 (n, 8), v in base B, least
        significant digit first; with `dtype`, the same narrowed to it."""
        key = (runs, B, device, dtype)
        x = self._encoded.get(key)
        if x is None:
            if dtype is not None:
                x = self.encoded(runs, B, device).to(dtype)
            elif self.pad_v < TABLE_ROWS:
                table = TABLES.get(B, device, self.pad_v + 1)
                pieces = []
                for dp, frm, c in runs:
                    if c == 0:
                        continue
                    if dp < 0:
                        pieces.append(table[self.pad_v].expand(c, ENCODING_WIDTH))
                    else:
                        s = 1 + self.offs[dp] + frm
                        pieces.append(table[s: s + c])
                if not pieces:
                    x = torch.zeros((0, ENCODING_WIDTH), dtype=torch.int32, device=device)
                elif len(pieces) == 1:
                    x = pieces[0].clone()  # a copy: the engine may not alias the table
                else:
                    x = torch.cat(pieces)
            else:
                x = _digits(self._values(runs), B).to(device)
            self._encoded[key] = x
        return x

    def gathered(self, d, B, device, dtype=None):
        """DP rank d's TP inputs concatenated in TP order (what a TP
        all-gather of the unmodified inputs returns), and its run list."""
        key = ("gathered", d, B, device, dtype)
        hit = self._encoded.get(key)
        if hit is None:
            lists = self.runs[d * self.T: (d + 1) * self.T]
            hit = (torch.cat([self.encoded(r, B, device, dtype) for r in lists]), _concat_runs(lists))
            self._encoded[key] = hit
        return hit

    def cum_ends(self):
        if self._cum_ends is None:
            self._cum_ends = torch.tensor(self.offs[1:], dtype=torch.int64)
            self._cum_starts = torch.tensor(self.offs[:-1] + [self.total], dtype=torch.int64)
        return self._cum_ends, self._cum_starts


def _runs_json(runs):
    out = []
    for dp, frm, c in runs:
        out.append({"pad": c} if dp < 0 else {"dp": dp, "from": frm, "count": c})
    return out


def _append(out, dp, frm, c):
    if c <= 0:
        return
    if out:
        ldp, lfrm, lc = out[-1]
        if ldp == dp and (dp < 0 or lfrm + lc == frm):
            out[-1] = (ldp, lfrm if dp >= 0 else 0, lc + c)
            return
    out.append((dp, frm if dp >= 0 else 0, c))


def _slice_runs(runs, start, end):
    out = []
    pos = 0
    for dp, frm, c in runs:
        lo, hi = max(start, pos), min(end, pos + c)
        if lo < hi:
            _append(out, dp, frm + (lo - pos) if dp >= 0 else 0, hi - lo)
        pos += c
        if pos >= end:
            break
    return out


def _concat_runs(lists):
    out = []
    for runs in lists:
        for dp, frm, c in runs:
            _append(out, dp, frm, c)
    return out


def _position_of(runs, case, v):
    """Row index of token value v in a run list, or None (pads are ambiguous)."""
    if v < 1 or v > case.total:
        return None
    pos = 0
    for dp, frm, c in runs:
        if dp >= 0:
            s = 1 + case.offs[dp] + frm
            if s <= v < s + c:
                return pos + (v - s)
        pos += c
    return None


def _row_nonzero(buf):
    """(rows, layers) bool: which rows of each layer hold a nonzero value."""
    esz = buf.element_size()
    w = buf
    if buf.is_contiguous() and (buf.shape[2] * esz) % 8 == 0 and buf.dtype is not torch.bool:
        w = buf.view(torch.int64)
    elif buf.dtype in _NEEDS_WIDEN:
        w = buf.to(torch.int64)
    nz = w.ne(0)
    return nz[:, :, 0] if nz.shape[2] == 1 else nz.any(2)


_NEEDS_WIDEN = set()


def _value_of_row(row, B):
    v = 0
    for j, digit in enumerate(row):
        v += int(digit) * (B ** j)
    return v


def _same(a, b):
    """torch.equal, on 8-byte words where the layout allows (faster)."""
    if a.shape != b.shape:
        return False
    try:
        if a.shape[-1] * a.element_size() % 8 == 0 and a.dtype is b.dtype:
            return torch.equal(a.view(torch.int64), b.view(torch.int64))
    except RuntimeError:
        pass
    return torch.equal(a, b)


def _ndigits(B, maxv):
    n = 1
    while B ** n <= maxv and n < ENCODING_WIDTH:
        n += 1
    return n


def decode(buf, case, candidates):
    """Reads the checked layer's written prefix. Returns (runs, stray, undecodable).

    candidates: [(get(dtype) -> tensor, runs)]: tensors the rows probably
    came from (the rank's input; what a TP all-gather of the inputs gives). A
    prefix equal to a slice of one is decoded from its run list; anything
    else digit by digit.
    """
    rows, layers = buf.shape[0], buf.shape[1]
    layer = case.layer
    if layer >= layers:
        raise _RankAbort("AdapterError", f"capturer buffer has {layers} layers, the checked layer is {layer}")
    rnz = _row_nonzero(buf)
    total = int(rnz.sum())
    if total == 0:
        return [], 0, 0
    col = rnz[:, layer]
    if total <= rows and bool(col[:total].all()):
        p = total  # every written row is in the prefix
    else:
        inv = ~col
        p = rows if not bool(inv.any()) else int(inv.to(torch.uint8).argmax())
    stray = total - p
    if p == 0:
        return [], stray, 0
    B = base_for(buf.dtype)
    prefix = buf[:p, layer, :]
    first = None
    if not buf.dtype.is_floating_point:
        first_row = prefix[0].tolist()
        if all(0 <= x < B for x in first_row):
            first = _value_of_row(first_row, B)
    if first is not None and first + p - 1 <= case.total and case.pad_v < TABLE_ROWS:
        # Consecutive tokens (the usual capture): compare with the table.
        table = TABLES.get(B, buf.device, case.pad_v + 1, buf.dtype)
        if _same(prefix, table[first: first + p]):
            return _token_range_runs(case, first, p), stray, 0
    if first is not None and not SLOW:
        for get, runs in candidates:
            s = _position_of(runs, case, first)
            if s is None:
                continue
            tensor = get(buf.dtype)
            if tensor.dim() != 2 or tensor.shape[1] != prefix.shape[1] or s + p > tensor.shape[0]:
                continue
            if _same(prefix, tensor[s: s + p]):
                return _slice_runs(runs, s, s + p), stray, 0
    # Full decode.
    maxv = case.pad_v
    ndig = _ndigits(B, maxv)
    if buf.dtype.is_floating_point:
        f = prefix.to(torch.float64)
        bad = (f != torch.floor(f)).any(1)
        digits = f.to(torch.int64)
    else:
        digits = prefix.to(torch.int64)
        bad = torch.zeros(p, dtype=torch.bool, device=digits.device)
    bad |= (digits < 0).any(1) | (digits >= B).any(1)
    if ndig < digits.shape[1]:
        bad |= (digits[:, ndig:] != 0).any(1)
    top_limit = maxv // (B ** (ndig - 1))
    bad |= digits[:, ndig - 1] > top_limit
    pows = _pows(B)[:ndig].to(digits.device)
    v = (digits[:, :ndig].clamp(0, B - 1) * pows).sum(1)
    bad |= (v < 1) | (v > maxv)
    undecodable = int(bad.sum())
    if undecodable:
        v = v[~bad]
    v = v.cpu()
    return _runs_from_values(v, case), stray, undecodable


def _token_range_runs(case, first, count):
    """Runs of the values first .. first+count-1 (all tokens, no pad)."""
    out = []
    idx = first - 1
    end = idx + count
    d = 0
    while idx < end:
        while case.offs[d + 1] <= idx:
            d += 1
        take = min(end, case.offs[d + 1]) - idx
        out.append((d, idx - case.offs[d], take))
        idx += take
    return out


def _runs_from_values(v, case):
    n = v.shape[0]
    if n == 0:
        return []
    cum_ends, cum_starts = case.cum_ends()
    idx = v - 1
    owner = torch.searchsorted(cum_ends, idx, right=True)  # pad: owner == D
    if n > 1:
        brk = (owner[1:] != owner[:-1]) | ((v[1:] != v[:-1] + 1) & (owner[1:] < case.D))
        starts = [0] + (torch.nonzero(brk).flatten() + 1).tolist()
    else:
        starts = [0]
    st = torch.tensor(starts, dtype=torch.int64)
    own = owner[st].tolist()
    tok = (idx[st] - cum_starts[owner[st]]).tolist()
    bounds = starts + [n]
    out = []
    for i, s in enumerate(starts):
        c = bounds[i + 1] - s
        if own[i] >= case.D:
            out.append((-1, 0, c))
        else:
            out.append((own[i], tok[i], c))
    return out


# ---------------------------------------------------------------------------
# Capturers, cached per shape and rank.


class _Entry:
    __slots__ = ("cap", "buf", "cfg", "dirty", "nbytes", "error")

    def __init__(self, cap, buf, cfg, error=None):
        self.cap = cap
        self.cfg = cfg
        self.buf = buf
        self.dirty = False
        self.error = error
        self.nbytes = 0 if buf is None else buf.numel() * buf.element_size()


class Engine:
    def __init__(self, interface, device, world, rank):
        self.iface = interface
        self.device = device
        self.world = world
        self.rank = rank
        self.cache = collections.OrderedDict()
        self.cache_bytes = 0
        self.seq = itertools.count()
        self.instance_prefix = f"r3check_{os.getpid()}_{rank}"

    # -- capturers --
    def capturer(self, case, d, t):
        key = (case.M, case.E, case.nl, case.D, case.T, d, t, case.ep)
        e = self.cache.get(key)
        if e is not None:
            self.cache.move_to_end(key)
            return e
        cfg = make_config(case.M, case.E, case.nl, case.D, case.T, d, t, case.ep,
                          f"{self.instance_prefix}_{next(self.seq)}")
        CUR.config = cfg
        try:
            cap = self.iface.construct(case.M, cfg)
            buf = find_buffer(cap)
            if buf.dim() != 3:
                raise ValueError(f"capturer buffer has shape {tuple(buf.shape)}, expected (tokens, layers, {ENCODING_WIDTH})")
            e = _Entry(cap, buf, cfg)
            e.dirty = True
        except Exception as ex:
            e = _Entry(None, None, cfg, error={"type": type(ex).__name__, "message": "building the capturer: " + _one_line(ex)})
        self.cache[key] = e
        self.cache_bytes += e.nbytes
        while len(self.cache) > LRU_ENTRIES or (self.cache_bytes > LRU_BYTES and len(self.cache) > 1):
            _, old = self.cache.popitem(last=False)
            self.cache_bytes -= old.nbytes
            if old.cap is not None:
                _cleanup_capturer(old.cap)
        return e

    def close(self):
        for e in self.cache.values():
            if e.cap is not None:
                _cleanup_capturer(e.cap)
        self.cache.clear()
        # Shared memory and lock files named from our instance ids.
        tmp = tempfile.gettempdir()
        for pattern in (f"/dev/shm/*{self.instance_prefix}_*", os.path.join(tmp, f"*{self.instance_prefix}_*")):
            for p in glob.glob(pattern):
                try:
                    os.unlink(p)
                except OSError:
                    pass

    # -- one rank --
    def run_rank(self, case, d, t, group):
        """Runs one capture: ("stop", input, result) when it stopped at an
        emulated all-gather, else ("done", None, result)."""
        r = d * case.T + t
        runs = case.runs[r]
        n = sum(c for _, _, c in runs)
        res = {"dp": d, "tp": t, "n": n, "error": None, "captured": [], "tp_gather": False, "stray": 0, "undecodable": 0}
        CUR.case, CUR.d, CUR.t, CUR.group = case, d, t, group
        entry = None
        stopped = None
        x = None
        try:
            entry = self.capturer(case, d, t)
            if entry.error is not None:
                res["error"] = dict(entry.error)
            else:
                CUR.config = entry.cfg
                if entry.dirty:
                    entry.buf.zero_()
                    entry.dirty = False
                x = case.encoded(runs, base_for(entry.buf.dtype), self.device)
                try:
                    entry.cap.capture(case.layer, x)
                except _GatherStop as s:
                    stopped = s.tensor
                except _RankAbort as a:
                    res["error"] = {"type": a.etype, "message": a.message}
                    res["captured"] = None  # a rank stuck in a collective reports no rows
                except Exception as ex:
                    res["error"] = {"type": type(ex).__name__, "message": _one_line(ex)}
        finally:
            try:
                group.finish()
            finally:
                CUR.group = None
        res["tp_gather"] = group.called
        if entry is not None and entry.cap is not None:
            res["_dtype"] = dtype_name(entry.buf.dtype)
        if stopped is not None:
            entry.dirty = True
            return "stop", stopped, res
        if entry is None or entry.cap is None:
            return "done", None, res
        if res["captured"] is None:
            res["captured"] = []
            entry.dirty = True
            return "done", None, res
        try:
            buf = find_buffer(entry.cap)
            if buf is not entry.buf:
                entry.buf = buf
            B = base_for(entry.buf.dtype)
            cands = [(lambda dt: case.encoded(runs, B, self.device, dt), runs)]
            if group.called and case.T > 1:
                cands.append((lambda dt: case.gathered(d, B, self.device, dt)[0], case.gathered(d, B, self.device)[1]))
            captured, stray, undec = decode(buf, case, cands)
            res["captured"] = _runs_json(captured)
            res["stray"] = stray
            res["undecodable"] = undec
            if stray == 0 and captured is not None:
                p = sum(c for _, _, c in captured) + undec
                buf[:p, case.layer].zero_()
            else:
                buf.zero_()
        except _RankAbort as a:
            res["error"] = res["error"] or {"type": a.etype, "message": a.message}
            entry.dirty = True
        except Exception as ex:
            res["error"] = res["error"] or {"type": "AdapterError", "message": "decoding the buffer: " + _exc_text(ex)}
            entry.dirty = True
        return "done", None, res

    # -- one DP rank, all TP ranks on this process --
    def run_dp_emulated(self, case, d):
        T = case.T
        rounds = []
        while True:
            outs = [self.run_rank(case, d, t, _EmulatedTPGroup(T, t, d, rounds)) for t in range(T)]
            stopped = [t for t in range(T) if outs[t][0] == "stop"]
            if not stopped:
                return [o[2] for o in outs]
            if len(stopped) < T:
                results = []
                for t in range(T):
                    res = outs[t][2]
                    if outs[t][0] == "stop":
                        res["error"] = {"type": "hang", "message": _hang_message(len(stopped), T, d)}
                        res["captured"] = []
                    results.append(res)
                return results
            inputs = [o[1] for o in outs]
            if any(x.shape != inputs[0].shape or x.dtype != inputs[0].dtype for x in inputs):
                msg = _mismatch_message(d, [[x.dim()] + list(x.shape) for x in inputs])
                results = []
                for o in outs:
                    o[2]["error"] = {"type": "CollectiveMismatch", "message": msg}
                    o[2]["captured"] = []
                    results.append(o[2])
                return results
            rounds.append(inputs)

    def run_case_emulated(self, case):
        out = []
        for d in range(case.D):
            out.extend(self.run_dp_emulated(case, d))
        return out


def _case_result(case, ranks, collective):
    dtype = None  # no capturer could be built for this case
    for r in ranks:
        if "_dtype" in r:
            dtype = r["_dtype"]
            break
    for r in ranks:
        r.pop("_dtype", None)
    return {"collective": collective, "buffer_dtype": dtype, "ranks": ranks}


# ---------------------------------------------------------------------------
# torchrun: process groups for the TP groups of the cases.


class _ProcGroup:
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
    def __init__(self, device_kind):
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

    def bcast(self, obj):
        box = [obj]
        dist.broadcast_object_list(box, src=0, group=self.ctl)
        return box[0]

    def gather(self, obj):
        out = [None] * self.world if self.rank == 0 else None
        dist.gather_object(obj, out, dst=0, group=self.ctl)
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
                    self.groups[key] = _ProcGroup(key, self.backend, self.world)

    def run_real(self, engine, case, ci, results):
        W = self.world
        for d in range(case.D):
            procs = [(d * case.T + t) % W for t in range(case.T)]
            if self.rank not in procs:
                continue
            t = procs.index(self.rank)
            if case.T == 1:
                group = _TPGroupBase(1, 0, d)
            else:
                group = _RealTPGroup(case.T, t, d, self.groups[tuple(sorted(procs))])
            _, _, res = engine.run_rank(case, d, t, group)
            results[(ci, d, t)] = res


# ---------------------------------------------------------------------------
# The protocol loop.


class Adapter:
    def __init__(self, args):
        self.args = args
        self.proto = None
        self.dist = None
        self.engine = None
        self.hello = None

    def send(self, obj):
        if self.proto is None:
            return
        self.proto.write(json.dumps(obj, separators=(",", ":")) + "\n")
        self.proto.flush()

    def is_root(self):
        return self.dist is None or self.dist.rank == 0

    def handle_run(self, req):
        rid = req.get("id")
        cases = req.get("_parsed")
        if cases is None:
            cases = [_Case(i, c) for i, c in enumerate(req["cases"])]
        eng = self.engine
        if self.dist is None:
            out = [_case_result(c, eng.run_case_emulated(c), "emulated") for c in cases]
            return {"type": "result", "id": rid, "cases": out}
        D = self.dist
        D.ensure_groups(cases)
        results = {}
        emulated = {}
        error = None
        try:
            for ci, case in enumerate(cases):
                if case.T > D.world:
                    if D.rank == 0:
                        emulated[ci] = eng.run_case_emulated(case)
                else:
                    D.run_real(eng, case, ci, results)
        except Exception as e:  # an adapter bug: every rank must still reach the gather
            error = f"rank {D.rank}: {_exc_text(e)}"
        gathered = D.gather((results, error))
        if D.rank != 0:
            return None
        errors = [g[1] for g in gathered if g[1]]
        if errors:
            raise Fatal("adapter failure during run: " + errors[0])
        merged = {}
        for g in gathered:
            merged.update(g[0])
        out = []
        for ci, case in enumerate(cases):
            if ci in emulated:
                out.append(_case_result(case, emulated[ci], "emulated"))
            else:
                ranks = [merged[(ci, d, t)] for d in range(case.D) for t in range(case.T)]
                out.append(_case_result(case, ranks, "real"))
        return {"type": "result", "id": rid, "cases": out}

    def read_request(self):
        while True:
            line = sys.stdin.buffer.readline()
            if not line:
                return {"type": "__eof__"}
            if line.strip():
                break
        try:
            req = json.loads(line)
        except ValueError as e:
            raise Fatal(f"request is not JSON: {_exc_text(e)}")
        if not isinstance(req, dict) or not isinstance(req.get("type"), str):
            raise Fatal("request is not a JSON object with a string \"type\"")
        if req["type"] not in ("hello", "run", "bye"):
            raise Fatal(f"unknown request type {req['type']!r}")
        if req["type"] == "hello" and req.get("protocol") != PROTOCOL:
            raise Fatal(f"protocol {req.get('protocol')!r} is not supported (this adapter speaks protocol {PROTOCOL})")
        if req["type"] == "run":
            if not isinstance(req.get("cases"), list):
                raise Fatal("run request without a cases list")
            # Parsed (and validated) before any rank starts.
            req["_parsed"] = [_Case(i, c) for i, c in enumerate(req["cases"])]
        return req

    def loop(self):
        while True:
            if self.is_root():
                try:
                    req = self.read_request()
                except Fatal as f:
                    if self.dist is not None:
                        self.dist.bcast({"type": "__fatal__", "error": str(f)})
                    raise
                if self.dist is not None:
                    self.dist.bcast({k: v for k, v in req.items() if k != "_parsed"})
            else:
                req = self.dist.bcast(None)
            kind = req["type"]
            if kind == "__fatal__":
                raise Fatal(req["error"])
            if kind in ("bye", "__eof__"):
                return 0
            if kind == "hello":
                if self.is_root():
                    self.send(self.hello)
                continue
            try:
                reply = self.handle_run(req)
            except Fatal as f:
                if self.dist is not None and self.is_root():
                    self.dist.bcast({"type": "__fatal__", "error": str(f)})
                raise
            if self.is_root():
                self.send(reply)


def _drain_stdin(seconds):
    """Reads what the client already sent, so that it does not meet a closed pipe."""
    try:
        ready, _, _ = select.select([sys.stdin], [], [], seconds)
        if ready:
            os.read(sys.stdin.fileno(), 1 << 16)
    except Exception:
        pass


def main(argv=None):
    proto = os.fdopen(_PROTO_FD, "w", encoding="utf-8") if _PROTO_FD is not None else None
    logging.basicConfig(stream=sys.stderr, level=os.environ.get("R3_ADAPTER_LOG", "WARNING"),
                        format="r3_adapter: %(levelname)s %(name)s: %(message)s")

    class Parser(argparse.ArgumentParser):
        def error(self, message):
            raise Fatal(f"usage: {message} (r3_adapter.py --source PATH|installed [--device cpu|cuda])")

    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", required=True, help="vLLM checkout, routed_experts_capturer.py, or 'installed'")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    adapter = Adapter(None)
    adapter.proto = proto
    engine = None
    rc = 1
    torchrun = int(os.environ.get("WORLD_SIZE", "1")) > 1 or "RANK" in os.environ
    try:
        try:
            args = parser.parse_args(argv)
            adapter.args = args
            global torch, dist
            try:
                import torch as _torch
                import torch.distributed as _dist
            except Exception as e:
                raise Fatal(f"cannot import torch with {sys.executable}: {_exc_text(e)}")
            torch, dist = _torch, _dist
            # Capture tensors are small: intra-op threads only add overhead
            # (and spin on big hosts). R3_ADAPTER_THREADS overrides.
            torch.set_num_threads(int(os.environ.get("R3_ADAPTER_THREADS", "1")))
            _init_dtype_tables()
            for n in ("uint16", "uint32", "uint64"):
                if hasattr(torch, n):
                    _NEEDS_WIDEN.add(getattr(torch, n))
            if args.device == "cuda" and not torch.cuda.is_available():
                raise Fatal("--device cuda: torch sees no CUDA device")
            if torchrun:
                adapter.dist = Dist(args.device)
                device = adapter.dist.device
                world, rank, backend = adapter.dist.world, adapter.dist.rank, adapter.dist.backend
                if rank != 0:
                    adapter.proto = None
            else:
                device = torch.device("cuda", 0) if args.device == "cuda" else torch.device("cpu")
                if args.device == "cuda":
                    torch.cuda.set_device(device)
                world, rank, backend = 1, 0, "none"
            current_platform.device_type = device.type
            current_platform.device_name = device.type
            current_platform.dist_backend = "nccl" if device.type == "cuda" else "gloo"
            load_error = None
            try:
                module, path, version = load_module(args.source)
                iface = Interface(module)
                engine = Engine(iface, device, world, rank)
                # A probe construction: surfaces config or buffer problems now.
                probe = _Case(0, {"dp": 1, "tp": 1, "max_num_batched_tokens": 16, "num_experts": 256,
                                  "num_layers": 2, "num_tokens_across_dp": [1],
                                  "ranks": [{"dp": 0, "tp": 0, "rows": [{"dp": 0, "from": 0, "count": 1}]}]})
                CUR.case, CUR.d, CUR.t = probe, 0, 0
                cfg = make_config(16, 256, 2, 1, 1, 0, 0, False, f"{engine.instance_prefix}_probe")
                CUR.config = cfg
                try:
                    cap = iface.construct(16, cfg)
                except Exception as e:
                    raise Fatal(f"{iface.description} failed: {_exc_text(e)}")
                try:
                    try:
                        find_buffer(cap)
                    except LookupError as e:
                        raise Fatal(str(e))
                finally:
                    _cleanup_capturer(cap)
                    del cap
            except Fatal as f:
                load_error = str(f)
            if adapter.dist is not None:
                errors = [e for e in adapter.dist.all_gather_obj(load_error) if e]
                if errors:
                    raise Fatal(errors[0])
            elif load_error:
                raise Fatal(load_error)
            adapter.engine = engine
            adapter.hello = {
                "type": "hello", "protocol": PROTOCOL, "engine": "vllm", "source": str(path),
                "sha256": hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "unknown",
                "engine_version": version, "interface": iface.description, "device": device.type,
                "world_size": world, "backend": backend,
            }
            rc = adapter.loop()
        except Fatal as f:
            msg = _one_line(f) or "fatal error"
            log.error("%s", msg)
            if adapter.is_root() and adapter.proto is not None:
                try:
                    adapter.send({"type": "fatal", "error": msg})
                except OSError:
                    pass
                _drain_stdin(0.2)
            rc = 1
        except BrokenPipeError:
            rc = 1
    finally:
        if engine is not None:
            engine.close()
        if adapter.dist is not None and rc == 0:
            with contextlib.suppress(Exception):
                dist.destroy_process_group()
    return rc


if __name__ == "__main__":
    sys.exit(main())
