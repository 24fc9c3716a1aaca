"""What the engine's code needs of torch that this torch lacks, and the
device map for code that hard-codes CUDA on a machine without it.

- torch < 2.3 has no unsigned 16/32/64-bit dtypes, which capturer modules
  name at construction; the next wider signed dtype stands in.
- torch < 2.4 has no torch.library.custom_op / register_fake, which some
  modules use at import time; pass-through stand-ins.
- torch < 2.0 has no Tensor.nbytes / itemsize: properties stand in.
- torch < 2.1 has no torch.compiler, whose functions some modules test
  with hasattr(torch.compiler, NAME); an empty module stands in (every
  such test is False, as on a torch without NAME).
- map_cuda_to(device): factory functions and Tensor.to/.cuda given a CUDA
  device put the tensor on `device` instead, so a file whose init_buffer
  says device="cuda" still gets a verdict on a CPU-only torch; the hello
  says so (`device_map`). Pinned memory, which needs CUDA, is plain memory
  there.
- cpu_streams(): with the buffers on the CPU, torch.cuda.Stream, Event,
  current_stream and stream are CPU stand-ins (a CPU copy is done when it
  returns: a stream orders nothing, an event is always complete), for
  code that overlaps its device-to-host copy on a stream of its own.
"""
import contextlib
import functools
import logging
import sys
import types

import torch

log = logging.getLogger("r3runtime")


_DTYPE_STANDINS = []


def install():
    # torch < 2.3 has no unsigned 16/32/64-bit dtypes, which capturer
    # modules name at construction (e.g. to pick a snapshot dtype by
    # num_experts). The next wider signed dtype stands in, so such a module
    # still builds; a buffer made with it reports that dtype.
    for name, wider in (("uint16", "int32"), ("uint32", "int64"), ("uint64", "int64")):
        if not hasattr(torch, name):
            setattr(torch, name, getattr(torch, wider))
            _DTYPE_STANDINS.append(f"{name} -> {wider}")
            log.info("torch %s has no torch.%s: torch.%s stands in", torch.__version__, name, wider)
    # torch < 2.0 has no Tensor.nbytes / Tensor.itemsize, which capturers
    # read to log their buffer's size.
    if not hasattr(torch.Tensor, "nbytes"):
        torch.Tensor.nbytes = property(lambda self: self.numel() * self.element_size())
    if not hasattr(torch.Tensor, "itemsize"):
        torch.Tensor.itemsize = property(lambda self: self.element_size())
    if not hasattr(torch, "compiler"):
        compiler = types.ModuleType("torch.compiler")
        compiler.__doc__ = "r3check: torch < 2.1 has no torch.compiler; an empty one stands in"
        torch.compiler = compiler
        sys.modules.setdefault("torch.compiler", compiler)
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


_FACTORIES = ("zeros", "ones", "empty", "full", "arange", "tensor", "as_tensor", "zeros_like", "ones_like",
              "empty_like", "full_like", "randint", "rand", "randn", "linspace", "eye", "empty_strided")
_MAPPED = []  # where a mapped device was asked for, for the hello
_KINDS = {}  # device type the engine names -> the device it gets (map_cuda_to, map_kind_to)


def _kind_of(dev):
    if isinstance(dev, torch.device):
        return dev.type
    if isinstance(dev, str):
        return dev.split(":", 1)[0]
    return None


def _is_cuda(dev):
    return _kind_of(dev) == "cuda"


def map_cuda_to(device):
    """Every CUDA device the engine's code names becomes `device` (a CPU device)."""
    map_kind_to("cuda", device)


def map_kind_to(kind, device):
    """Every device of type `kind` the engine's code names ("cuda" on a
    CPU-only torch, vllm-ascend's "npu" anywhere) becomes `device`."""
    first = not _KINDS
    _KINDS[kind] = device
    if first:
        _install_remap()


def _remap(dev):
    kind = _kind_of(dev)
    if kind in _KINDS:
        what = f"{kind} -> {_KINDS[kind].type}"
        if what not in _MAPPED:
            _MAPPED.append(what)
        return _KINDS[kind]
    return dev


def _install_remap():
    remap = _remap

    def wrap_factory(fn):
        @functools.wraps(fn)
        def f(*args, **kwargs):
            if "device" in kwargs:
                kwargs["device"] = remap(kwargs["device"])
            if kwargs.get("pin_memory") and _KINDS.get("cuda") is not None and _KINDS["cuda"].type == "cpu":
                kwargs["pin_memory"] = False  # pinning needs CUDA; plain memory here
            return fn(*args, **kwargs)

        return f

    for name in _FACTORIES:
        fn = getattr(torch, name, None)
        if fn is not None:
            setattr(torch, name, wrap_factory(fn))
    to = torch.Tensor.to

    def tensor_to(self, *args, **kwargs):
        if args and _kind_of(args[0]) in _KINDS:
            args = (remap(args[0]),) + args[1:]
        if "device" in kwargs:
            kwargs["device"] = remap(kwargs["device"])
        return to(self, *args, **kwargs)

    torch.Tensor.to = tensor_to
    if "cuda" in _KINDS:
        torch.Tensor.cuda = lambda self, *a, **k: self.to(remap("cuda"))
        torch.Tensor.pin_memory = lambda self, *a, **k: self
    torch.Tensor.npu = lambda self, *a, **k: self.to(remap("npu"))


class _CpuEvent:
    """torch.cuda.Event with the work on the CPU: always complete."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        pass

    def record(self, stream=None):
        pass

    def wait(self, stream=None):
        pass

    def synchronize(self):
        pass

    def query(self):
        return True


class _CpuStream:
    """torch.cuda.Stream with the work on the CPU: orders nothing."""

    def __init__(self, device=None, priority=0, **kwargs):
        self.device = torch.device("cpu")
        self.priority = priority

    def wait_stream(self, stream):
        pass

    def wait_event(self, event):
        pass

    def record_event(self, event=None):
        return event if event is not None else _CpuEvent()

    def synchronize(self):
        pass

    def query(self):
        return True


_CPU_STREAM = []


def cpu_streams():
    """torch.cuda's streams and events as CPU stand-ins (the buffers are on the CPU)."""
    if _CPU_STREAM:
        return
    _CPU_STREAM.append(_CpuStream())
    cuda = torch.cuda
    cuda.Stream = _CpuStream
    cuda.Event = _CpuEvent
    cuda.current_stream = lambda device=None: _CPU_STREAM[0]
    cuda.default_stream = lambda device=None: _CPU_STREAM[0]
    cuda.stream = lambda stream=None: contextlib.nullcontext(stream)
    cuda.synchronize = lambda device=None: None


def dtype_map():
    """"uint16 -> int32, ..." where this torch lacks a dtype and a wider one
    stands in (a buffer made as uint16 then reports int32), else None."""
    return ", ".join(_DTYPE_STANDINS) or None


def device_map():
    """"cuda -> cpu" (or "npu -> cuda", ...) once the engine asked for a
    mapped device and got another, else None."""
    return ", ".join(_MAPPED) or None
