"""The constructor interfaces vLLM's RoutedExpertsCapturer has had, and
driving the one a loaded module has (docs/engines.md lists each with the
first and last upstream version that used it).

Chosen by signature: the required parameters of __init__ (or, when it has
none, of init_buffer after create()) must all be values this adapter can
supply (_PARAM_VALUES); anything else is a fatal naming the parameters. A
static create(enable, model_config, ...) without init_buffer is the
device-cache design (r3_vllm.device_cache: v0.21.0 and two forks).
"""
import inspect

import torch

from r3runtime.errors import Fatal, exc_text
from r3_vllm.device_cache import DeviceCacheInterface, is_device_cache_design
from r3_vllm.standins import make_kv_cache_config


_PARAM_VALUES = {
    "max_num_batched_tokens": lambda M, cfg: M,
    "max_num_tokens": lambda M, cfg: M,
    "max_tokens": lambda M, cfg: M,
    # Sizes only the host-side shared-memory copy, which capture() never
    # writes: kept small, so that a pre-#50874 capturer per rank and shape
    # does not pin max_num_batched_tokens rows of shared memory each.
    "max_num_kv_tokens": lambda M, cfg: min(M, 64),
    "vllm_config": lambda M, cfg: cfg,
    "config": lambda M, cfg: cfg,
    "model_config": lambda M, cfg: cfg.model_config,
    "parallel_config": lambda M, cfg: cfg.parallel_config,
    "kv_cache_config": lambda M, cfg: make_kv_cache_config(M),
    "instance_id": lambda M, cfg: cfg.instance_id,
    "num_layers": lambda M, cfg: cfg.model_config.get_total_num_hidden_layers(),
    # The abstract-base design's flag for the host-side copy; the device
    # buffer, which is what capture writes, exists either way.
    "enable_shared_memory": lambda M, cfg: False,
    # create(enable): the abstract-base design picks its real or no-op capturer.
    "enable": lambda M, cfg: True,
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
    """How to build a capturer: `kind` is "init", "init_buffer" or
    "device_cache" (then `device_cache` builds and drives it)."""

    def __init__(self, module, cls=None):
        # cls: another engine's class in the module's place (vllm-ascend's
        # subclass of it); the module's singletons are still the module's.
        cls = cls if cls is not None else getattr(module, "RoutedExpertsCapturer", None)
        if cls is None:
            names = sorted(n for n, v in vars(module).items() if isinstance(v, type) and v.__module__ == module.__name__)
            raise Fatal(f"{module.__name__} has no RoutedExpertsCapturer (classes there: {', '.join(names) or 'none'})")
        if not isinstance(cls, type):
            raise Fatal(f"RoutedExpertsCapturer is a {type(cls).__name__}, not a class")
        if not callable(getattr(cls, "capture", None)):
            raise Fatal("RoutedExpertsCapturer has no capture() method")
        self.module = module
        self.cls = cls
        self.device_cache = None
        if is_device_cache_design(cls):
            self.kind = "device_cache"
            self.device_cache = DeviceCacheInterface(module, cls)
            self.description = self.device_cache.description
            return
        known = " or ".join(
            [
                "RoutedExpertsCapturer(max_num_batched_tokens, vllm_config[, kv_cache_config])",
                "RoutedExpertsCapturer.create([enable]) + init_buffer(max_num_batched_tokens, max_num_kv_tokens, "
                "vllm_config | model_config[, instance_id[, enable_shared_memory]])",
                "static RoutedExpertsCapturer.create(enable, model_config, ...)",
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
        self.create_params = []
        if self.use_create:
            self.create_params = [p.name for p in self._drivable_params(cls.create, "create", known, skip_self=False)]
        head = (f"RoutedExpertsCapturer.create({', '.join(self.create_params)})" if self.use_create
                else "RoutedExpertsCapturer()")
        self.description = f"{head} + init_buffer({', '.join(self.buffer_params)})"

    @staticmethod
    def _drivable_params(fn, name, known, skip_self=True):
        """The required parameters of RoutedExpertsCapturer.<name>; Fatal
        when one is not a value this adapter can supply."""
        try:
            required, shown = _required_params(fn, skip_self=skip_self)
        except (TypeError, ValueError) as e:
            raise Fatal(f"cannot inspect RoutedExpertsCapturer.{name}: {exc_text(e)}")
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
            cap = self.cls.create(**args(self.create_params)) if self.use_create else self.cls()
        finally:
            self._reset_singletons()
        cap.init_buffer(**args(self.buffer_params))
        return cap


def find_buffer(cap):
    """The capturer's device buffer: `device_buffer` or `_device_buffer`, else
    the one 3-D tensor attribute whose name says device buffer (forks rename
    it, e.g. `_experts_capturer_device_buffer`)."""
    for name in ("device_buffer", "_device_buffer"):
        value = getattr(cap, name, None)
        if isinstance(value, torch.Tensor):
            return value
    fields = vars(cap) if hasattr(cap, "__dict__") else {}
    named = [v for k, v in fields.items() if "device_buffer" in k and isinstance(v, torch.Tensor) and v.dim() == 3]
    if len(named) == 1:
        return named[0]
    raise LookupError(
        "the capturer has no device_buffer or _device_buffer tensor (attributes: " + (", ".join(sorted(fields)) or "none") + ")"
    )


def cleanup_capturer(cap):
    fn = getattr(cap, "cleanup", None)
    if callable(fn):
        try:
            fn()
        except Exception:
            pass
