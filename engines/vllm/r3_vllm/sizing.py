"""vLLM's own replay-buffer sizing and hand-off, run per rank before capture.

Two layouts (shared/spec/vllm-routing-replay.md section 9):

- monolithic: a class of modular_kernel.py (FusedMoEExpertsMonolithic)
  with set_capture_fn(fn), which allocates the int16 buffer from its
  moe_config, _maybe_make_routing_replay_buffer(n, device), vLLM's size
  and device check (the "Routing replay buffer was initialized for ..."
  ValueError), and _maybe_dispatch_routing_replay(out, n), which hands
  out[:n] to fn.
- sink: RoutedExpertsSink(moe_config, capture_fn) with a .buffer. Some
  versions give the kernel sink.out(n) (with a size check of their own) and
  hand the rows on with sink.capture(n); others leave the kernel to take
  sink.buffer[:len(a1q)] (no size check at all) and call sink.capture_fn.

Either way the rows r3check built for the rank are written into the buffer
by a stand-in kernel, and vLLM's own hand-off passes them to capture().
The kernel itself (FlashInfer) is not run: only its input rows matter here.
"""
import collections

import torch

from r3runtime import profile
from r3runtime.capture_engine import ReplayResult
from r3runtime.errors import Fatal, StandInGap, gap_in, one_line
from r3_vllm.standins import make_moe_config

_MONOLITHIC_METHODS = ("set_capture_fn", "_maybe_make_routing_replay_buffer")
_CACHE_ENTRIES = 32


def _concrete(cls):
    """An instantiable subclass (abstract methods stubbed) built without
    running __init__: the sizing methods read only moe_config."""
    abstract = getattr(cls, "__abstractmethods__", frozenset())
    body = {name: (lambda *a, **k: None) for name in abstract}
    body["__abstractmethods__"] = frozenset()
    return type(f"R3Check{cls.__name__}", (cls,), body)


def _monolithic_class(module):
    for value in vars(module).values():
        if isinstance(value, type) and value.__module__ == module.__name__ and all(
                m in value.__dict__ for m in _MONOLITHIC_METHODS):
            return value
    return None


class ReplaySizing:
    @staticmethod
    def finds_code(loaded):
        return _monolithic_class(loaded.module) is not None or isinstance(
            getattr(loaded.module, "RoutedExpertsSink", None), type)

    def __init__(self, loaded, device):
        self.loaded = loaded
        self.device = device
        module = loaded.module
        sink = getattr(module, "RoutedExpertsSink", None)
        mono = _monolithic_class(module)
        if mono is not None:
            self.kind = "monolithic"
            self.cls = _concrete(mono)
            self.interface = f"{mono.__name__}.set_capture_fn + _maybe_make_routing_replay_buffer"
        elif isinstance(sink, type):
            self.kind = "sink"
            self.cls = sink
            checked = callable(getattr(sink, "out", None))
            self.interface = ("RoutedExpertsSink(moe_config, capture_fn).out(n) + capture(n)" if checked
                              else "RoutedExpertsSink(moe_config, capture_fn).buffer[:n]")
        else:
            raise Fatal(f"{loaded.path}: no class with {' and '.join(_MONOLITHIC_METHODS)}, and no RoutedExpertsSink")
        self.cache = collections.OrderedDict()

    def hello(self):
        return {"source": str(self.loaded.path), "sha256": self.loaded.sha256(), "kind": self.kind,
                "interface": self.interface}

    def _holder(self, case, d, t):
        """The kernel object (or sink) for rank (d, t), and the box its capture fn delivers through."""
        key = (case.M, case.E, case.D, case.T, d, t, case.ep)
        hit = self.cache.get(key)
        if hit is not None:
            self.cache.move_to_end(key)
            return hit
        box = [None]

        def capture_fn(topk_ids):
            box[0](topk_ids)

        cfg = make_moe_config(case, d, t, self.device)
        if self.kind == "monolithic":
            obj = object.__new__(self.cls)
            obj.moe_config = cfg
            if profile.ON:
                profile.engine_call(obj.set_capture_fn, capture_fn)
            else:
                obj.set_capture_fn(capture_fn)
        elif profile.ON:
            obj = profile.engine_call(self.cls, cfg, capture_fn)
        else:
            obj = self.cls(cfg, capture_fn)
        hit = (obj, box)
        self.cache[key] = hit
        while len(self.cache) > _CACHE_ENTRIES:
            self.cache.popitem(last=False)
        return hit

    @staticmethod
    def _buffer(obj):
        if hasattr(obj, "buffer") and isinstance(obj.buffer, torch.Tensor):
            return obj.buffer
        for name in ("_routing_replay_buffer", "routing_replay_buffer"):
            value = obj.__dict__.get(name)
            if isinstance(value, torch.Tensor):
                return value
        tensors = [v for v in vars(obj).values() if isinstance(v, torch.Tensor)]
        if len(tensors) == 1:
            return tensors[0]
        raise StandInGap("the replay sizing adapter", "buffer", "no replay buffer tensor after set_capture_fn")

    def _allocated(self, case, d, t):
        try:
            return self._holder(case, d, t)
        except Exception as ex:
            if gap_in(ex) is not None:
                raise
            raise Fatal(f"vLLM's replay sizing ({self.interface}) failed to allocate: {type(ex).__name__}: {one_line(ex)}")

    def rows(self, case, d, t):
        """Rows of the replay buffer vLLM allocates for rank (d, t)."""
        return int(self._buffer(self._allocated(case, d, t)[0]).shape[0])

    def run(self, case, d, t, x, deliver, record):
        """Rank (d, t)'s kernel call on input x (n rows): record(ReplayResult)
        is called before deliver(topk), the capture call vLLM's hand-off
        reaches, so a capture that raises still reports the buffer."""
        n = x.shape[0]
        obj, box = self._allocated(case, d, t)
        box[0] = deliver
        buf = self._buffer(obj)
        rows = int(buf.shape[0])
        record(ReplayResult(rows))  # until the kernel call is known to happen
        if self.kind == "monolithic":
            try:
                make = obj._maybe_make_routing_replay_buffer
                out = profile.engine_call(make, n, x.device) if profile.ON else make(n, x.device)
            except Exception as ex:
                if gap_in(ex) is not None:
                    raise
                # vLLM's own check raised: the step stops before the kernel.
                # r3check still runs the capture on the kernel's rows
                # (docs/engines.md), so that sizing and capture are judged apart.
                record(ReplayResult(rows, (type(ex).__name__, one_line(ex)), None))
                deliver(x)
                return
            if out is None:
                raise Fatal(f"{self.interface}: returned no buffer although a capture fn is set")
            dst = out[:n]
            if dst.shape == x.shape:
                dst.copy_(x)  # the stand-in kernel writes its routing_replay_out (the cast .to() makes)
            else:
                out[:n] = x.to(out.dtype)  # (and whatever error a shape mismatch gives)
            record(ReplayResult(rows, None, n))
            dispatch = getattr(obj, "_maybe_dispatch_routing_replay", None)
            if callable(dispatch):
                if profile.ON:
                    profile.engine_call(dispatch, out, n)
                else:
                    dispatch(out, n)
            else:
                deliver(out[:n])
            return
        out_fn = getattr(obj, "out", None)
        if callable(out_fn):  # sinks with their own check: out(n) gives the kernel's routing_replay_out
            try:
                piece = profile.engine_call(out_fn, n) if profile.ON else out_fn(n)
            except Exception as ex:
                if gap_in(ex) is not None:
                    raise
                record(ReplayResult(rows, (type(ex).__name__, one_line(ex)), None))
                deliver(x)  # as for the monolithic check: capture is judged apart
                return
        else:
            piece = buf[:n]  # the kernel's sink.buffer[: len(a1q)], no check
        s = min(int(piece.shape[0]), n)
        piece[:s] = x[:s].to(piece.dtype)  # the stand-in kernel writes what fits of its rows
        record(ReplayResult(rows, None, s))
        hand_off = getattr(obj, "capture", None)
        if callable(hand_off):
            if profile.ON:
                profile.engine_call(hand_off, n)
            else:
                hand_off(n)
        else:
            obj.capture_fn(piece[:n])
