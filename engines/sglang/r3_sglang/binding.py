"""The SGLang binding of r3runtime: load the capturer, build it through its
own create(), and run one forward step's part of it for a DP rank:
capture() of what the TopK layer saw, then on_forward_end(), which slices
the rank's rows out of the device buffer and copies them to the host cache.

Layouts (docs/engines.md, "SGLang"): with DP attention and the default MoE
backend the TopK layer sees the DP-gathered batch, the rows r3check sends
for naive dispatch; each DP rank's padded count is its entry of
num_tokens_across_dp (SGLang's global_num_tokens). A step whose DP ranks are
all padded to one size runs as a decode CUDA graph of that batch size
(can_run_graph, cuda_graph_batch); any other as an eager step.
"""
import inspect
import logging
import pathlib

from r3runtime import profile
from r3runtime.errors import Fatal, Refused, exc_text, harness_fatal
from r3runtime.rank import CUR
from r3runtime.rows import Case
from r3runtime.standins import StandInObject
from r3_sglang import loader, standins

ADAPTER_DIRS = (str(pathlib.Path(__file__).resolve().parents[1]),)
log = logging.getLogger("r3_sglang")


def _params(fn):
    sig = inspect.signature(fn)
    return [p for p in sig.parameters.values() if p.name != "self"
            and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]


class Interface:
    """How this version builds its capturer and ends a step, read off the
    signatures (docs/engines.md lists the versions of each)."""

    def __init__(self, module):
        cls = getattr(module, "RoutedExpertsCapturer", None)
        if not isinstance(cls, type):
            raise Fatal(f"{module.__file__}: no class RoutedExpertsCapturer")
        self.cls = cls
        create = inspect.getattr_static(cls, "create", None)
        self.create = cls.create if isinstance(create, staticmethod) else None
        self.build_params = _params(self.create if self.create is not None else cls.__init__)
        end = getattr(cls, "on_forward_end", None)
        if end is None:
            raise Fatal(f"{module.__file__}: RoutedExpertsCapturer has no on_forward_end (the step's end "
                        f"that copies a rank's rows to the host); this adapter drives none other")
        self.end_params = [p.name for p in _params(end)]
        known = {"forward_batch", "can_run_graph", "cuda_graph_batch", "no_copy_to_cpu"}
        unknown = [p for p in self.end_params if p not in known]
        if unknown:
            raise Fatal(f"RoutedExpertsCapturer.on_forward_end({', '.join(self.end_params)}): cannot supply {unknown}")
        names = [("*, " if p.kind == p.KEYWORD_ONLY and i == 0 else "") + p.name
                 for i, p in enumerate(self.build_params)]
        what = "RoutedExpertsCapturer.create" if self.create is not None else "RoutedExpertsCapturer"
        self.description = f"{what}({', '.join(names)}) + on_forward_end({', '.join(self.end_params)})"

    def build(self, values):
        args, kwargs = [], {}
        missing = []
        for p in self.build_params:
            if p.name not in values:
                if p.default is inspect.Parameter.empty:
                    missing.append(p.name)
                continue
            if p.kind == p.POSITIONAL_ONLY:
                args.append(values[p.name])
            else:
                kwargs[p.name] = values[p.name]
        if missing:
            raise Fatal(f"{self.description}: cannot supply {', '.join(missing)}")
        fn = self.create if self.create is not None else self.cls
        return fn(*args, **kwargs)


class SglangBinding:
    name = "sglang"
    ADAPTER_DIRS = ADAPTER_DIRS

    @classmethod
    def add_arguments(cls, parser):
        pass

    def __init__(self, args):
        self.args = args
        self.device = None
        self.iface = None
        self.loaded = None
        self.settings = {}  # id(capturer) -> its ServerSettings
        self.written = {}  # id(capturer) -> rows its last capture wrote to the device buffer

    def set_device(self, device):
        self.device = device

    def load(self):
        self.loaded = loader.load_capture(self.args.source)
        self.iface = Interface(self.loaded.module)
        loader.go_live_now()
        sizing = {"source": str(self.loaded.path), "sha256": self.loaded.sha256(), "kind": "device-buffer",
                  "interface": "device_cache.buffer, sized by the capturer's own constructor"}
        return {"engine": "sglang", "source": str(self.loaded.path), "sha256": self.loaded.sha256(),
                "engine_version": self.loaded.version, "interface": self.iface.description, "sizing": sizing}

    # -- capture_engine's calls --
    def build_key(self, case):
        """The server settings a capturer is built under (ServerSettings)."""
        return (case.cps, case.dispatch)

    def build(self, case, d, t, instance_id):
        s = standins.ServerSettings(case)
        CUR.config = s
        values = {"enable": True, "model_config": standins.model_config(case), "num_fused_shared_experts": 0,
                  # Host rows 0..n-1 are this rank's KV slots (ForwardBatch.out_cache_loc).
                  "num_tokens": case.M, "max_running_requests": s.max_running_requests,
                  "device": str(self.device),
                  "model": StandInObject("the model (torch.nn.Module)", num_fused_shared_experts=0)}
        cap = profile.engine_call(self.iface.build, values) if profile.ON else self.iface.build(values)
        if cap is None:
            raise ValueError("RoutedExpertsCapturer.create returned None (capture disabled)")
        # r3check judges the device buffer's dtype by the host cache's, which
        # it reads (protocol: buffer_dtype): they must be the same.
        dev, host = cap.device_cache.buffer.dtype, cap.host_cache.buffer.dtype
        if dev != host:
            raise Refused(f"the device buffer is {dev} but the host cache {host}: this adapter judges one dtype")
        self.settings[id(cap)] = s
        return cap

    def buffer_of(self, cap):
        return cap.host_cache.buffer

    def sizing_rows(self, cap):
        """Rows of the device buffer SGLang's own code allocated."""
        return int(cap.device_cache.buffer.shape[0])

    def capture(self, cap, case, d, t, topk_ids):
        CUR.config = self.settings.get(id(cap))
        call = profile.engine_call if profile.ON else (lambda f, *a, **k: f(*a, **k))
        # Every case is a step of a fresh server: the device buffer is as
        # built (zero), so a slice that misses this step's rows reads zeros,
        # never rows an earlier case left (which could pass for this one's).
        stale = self.written.pop(id(cap), 0)
        if stale:
            cap.device_cache.buffer[:stale].zero_()
        self.written[id(cap)] = min(int(topk_ids.shape[0]), int(cap.device_cache.buffer.shape[0]))
        call(cap.capture, case.layer, topk_ids)
        graph = case.D > 1 and len(set(case.N)) == 1
        values = {"forward_batch": standins.ForwardBatch(case, d, self.device), "can_run_graph": graph,
                  "cuda_graph_batch": case.N[0] if graph else None,
                  # SGLang's default (overlap scheduling on): the copy is handed back.
                  "no_copy_to_cpu": True}
        out = call(cap.on_forward_end, **{k: values[k] for k in self.iface.end_params})
        if out is not None:
            if hasattr(out, "map_device_tensors"):
                call(out.map_device_tensors, lambda x: x.to("cpu"))
            elif hasattr(out, "copy_to_cpu"):
                call(out.copy_to_cpu)
            if hasattr(out, "finalize"):
                call(out.finalize)

    def cleanup(self, cap):
        self.settings.pop(id(cap), None)
        self.written.pop(id(cap), None)

    def probe(self, engine):
        """One construction before any case: an undrivable constructor is a
        fatal now, not a verdict later."""
        one = [{"dp": 0, "from": 0, "count": 1}]
        probe = Case(0, {"dp": 1, "tp": 1, "max_num_batched_tokens": 16, "num_experts": 256, "num_layers": 2,
                         "num_tokens_across_dp": [1], "ranks": [{"dp": 0, "tp": 0, "rows": one}]})
        CUR.enter(probe, 0, 0)
        try:
            cap = self.build(probe, 0, 0, "probe")
        except Exception as e:
            fatal = harness_fatal(e, "building the capturer", ADAPTER_DIRS)
            if fatal is not None:
                raise fatal
            # SGLang's own constructor raised: its result, reported per case
            # ("building the capturer: ...") and judged, as for vLLM.
            log.warning("%s raised in the engine's code: %s", self.iface.description, exc_text(e))
            return
        finally:
            CUR.enter(None, 0, 0)
            CUR.config = None
        try:
            for attr in ("host_cache", "device_cache"):
                if not hasattr(cap, attr):
                    raise Fatal(f"{self.iface.description}: the capturer has no {attr}")
        finally:
            self.cleanup(cap)

    def close(self):
        pass
