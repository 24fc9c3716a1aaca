"""The vLLM binding of r3runtime: load the capture module (and its replay
sizing), build RoutedExpertsCapturer through its own initialisation, call
capture() the way vLLM's MoE layer does."""
import glob
import logging
import os
import pathlib
import tempfile
import traceback

from r3runtime import profile
from r3runtime import torch_compat
from r3runtime.errors import Fatal, Refused, exc_text, harness_fatal, one_line
from r3runtime.rank import CUR
from r3runtime.rows import Case
from r3_vllm import loader, standins
from r3_vllm.device_cache import Rank as DeviceCacheRank, naive_dispatch
from r3_vllm.interfaces import Interface, cleanup_capturer, find_buffer
from r3_vllm.sizing import ReplaySizing


ADAPTER_DIRS = (str(pathlib.Path(__file__).resolve().parents[1]),)
log = logging.getLogger("r3_vllm")


def _raised_by_the_call(e):
    """True when the exception comes from calling into the engine with
    arguments that do not bind (a TypeError raised in the adapter's own
    frame), not from inside the engine's code."""
    if not isinstance(e, TypeError):
        return False
    frames = traceback.extract_tb(e.__traceback__)
    here = ADAPTER_DIRS[0]
    return bool(frames) and os.path.abspath(frames[-1].filename).startswith(here + os.sep)


class VllmBinding:
    name = "vllm"
    ADAPTER_DIRS = ADAPTER_DIRS

    @classmethod
    def add_arguments(cls, parser):
        parser.add_argument("--sizing", default=None,
                            help="the file holding vLLM's replay sizing code (modular_kernel.py, or a capturer "
                                 "file with RoutedExpertsSink); a checkout's is found by itself")

    def __init__(self, args):
        self.args = args
        self.device = None
        self.iface = None
        self.replay = None
        self.configs = {}  # id(capturer) -> its VllmConfig stand-in
        self.prefixes = []
        if profile.ON:  # R3_ADAPTER_PROFILE=1: time the calls into vLLM's code
            self.capture = self._capture_profiled

    def set_device(self, device):
        self.device = device
        standins.current_platform.set_device_kind(device.type)
        if device.type == "cpu":
            torch_compat.cpu_streams()  # the device-cache design copies D2H on a stream of its own

    def load(self):
        capture, checkout = loader.load_capture(self.args.source)
        self.iface = Interface(capture.module)
        sizing = None
        if self.args.sizing or self.args.source != "installed":
            sizing = loader.load_sizing(self.args.sizing, checkout, capture)
        if sizing is not None and (self.args.sizing or sizing is capture or ReplaySizing.finds_code(sizing)):
            self.replay = ReplaySizing(sizing, self.device)
        loader.go_live_now()
        info = {"engine": "vllm", "source": str(capture.path), "sha256": capture.sha256(),
                "engine_version": capture.version, "interface": self.iface.description,
                "sizing": None if self.replay is None else self.replay.hello()}
        return info

    # -- capture_engine's calls --
    def build(self, case, d, t, instance_id):
        self.prefixes.append(instance_id.rsplit("_", 1)[0])
        cfg = standins.make_config(case.M, case.E, case.nl, case.D, case.T, d, t, case.ep, instance_id)
        CUR.config = cfg
        dc = self.iface.device_cache
        if dc is not None:
            build, args = dc.build, (case, d, t, cfg, self.device)
        else:
            build, args = self.iface.construct, (case.M, cfg)
        cap = profile.engine_call(build, *args) if profile.ON else build(*args)
        self.configs[id(cap)] = cfg
        return cap

    def build_key(self, case):
        """The device-cache design binds its layers by the case's SP and dispatch."""
        dc = self.iface.device_cache
        if dc is None or dc.bind is None:
            return ()
        return (case.sp, naive_dispatch(case))

    def nbytes_of(self, cap):
        if isinstance(cap, DeviceCacheRank):
            return self.iface.device_cache.nbytes_of(cap)
        buf = find_buffer(cap)
        return buf.numel() * buf.element_size()

    def buffer_of(self, cap):
        if isinstance(cap, DeviceCacheRank):
            return cap.readback
        return find_buffer(cap)

    def capture(self, cap, case, d, t, topk_ids):
        CUR.config = self.configs.get(id(cap))
        if isinstance(cap, DeviceCacheRank):
            self.iface.device_cache.capture(cap, case, d, t, topk_ids)
        else:
            cap.capture(case.layer, topk_ids)

    def _capture_profiled(self, cap, case, d, t, topk_ids):
        CUR.config = self.configs.get(id(cap))
        if isinstance(cap, DeviceCacheRank):
            profile.engine_call(self.iface.device_cache.capture, cap, case, d, t, topk_ids)
        else:
            profile.engine_call(cap.capture, case.layer, topk_ids)

    def cleanup(self, cap):
        self.configs.pop(id(cap), None)
        cleanup_capturer(cap.cap if isinstance(cap, DeviceCacheRank) else cap)

    def probe(self, engine):
        """One construction before any case: an undrivable constructor or a
        capturer without a buffer is a fatal now, not a verdict later. The
        device-cache design also builds TP rank 1 of 2 (the rank that may get
        the no-op capturer)."""
        self._probe_one(engine, 1, 0)
        if self.iface.device_cache is not None:
            self._probe_one(engine, 2, 1)

    def _probe_one(self, engine, T, t):
        one = [{"dp": 0, "from": 0, "count": 1}]
        probe = Case(0, {"dp": 1, "tp": T, "max_num_batched_tokens": 16, "num_experts": 256, "num_layers": 2,
                         "num_tokens_across_dp": [1], "ranks": [{"dp": 0, "tp": i, "rows": one} for i in range(T)]})
        CUR.enter(probe, 0, t)
        try:
            cap = self.build(probe, 0, t, f"{engine.instance_prefix}_probe{t}")
        except Refused as r:
            raise Fatal(one_line(r))
        except Exception as e:
            fatal = harness_fatal(e, "building the capturer", ADAPTER_DIRS)
            if fatal is not None:
                raise fatal
            if _raised_by_the_call(e):  # the arguments did not bind: our driving is wrong
                raise Fatal(f"{self.iface.description} failed: {exc_text(e)}")
            # The engine's own constructor raised: that is its result, reported
            # per case ("building the capturer: ...") and judged, not a refusal.
            log.warning("%s raised in the engine's code: %s", self.iface.description, exc_text(e))
            return
        finally:
            CUR.enter(None, 0, 0)
        try:
            if isinstance(cap, DeviceCacheRank):
                self.iface.device_cache.layer_first = cap.layer_first
                return
            try:
                find_buffer(cap)
            except LookupError as e:
                raise Fatal(str(e))
        finally:
            self.cleanup(cap)

    def close(self):
        # Shared memory and lock files named from our instance ids.
        tmp = tempfile.gettempdir()
        for prefix in set(self.prefixes):
            for pattern in (f"/dev/shm/*{prefix}_*", os.path.join(tmp, f"*{prefix}_*")):
                for p in glob.glob(pattern):
                    try:
                        os.unlink(p)
                    except OSError:
                        pass
