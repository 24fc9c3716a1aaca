"""Loading vLLM's capture module, and its replay-sizing code, from a
checkout, a single file, or the installed package.

A checkout or a file is loaded under its real module name *without*
importing the checkout's vllm/__init__.py: every other vllm.* module is a
stand-in (r3runtime.standins, with the names of r3_vllm.standins). So a
checkout needs neither vLLM's dependencies nor a build.
"""
import importlib
import importlib.machinery
import importlib.util
import pathlib
import re
import sys

from r3runtime.errors import Fatal, exc_text
from r3runtime.loading import Loaded, exec_file
from r3runtime.standins import StandInFinder, go_live
from r3_vllm import standins

CAPTURE_MODULE = "vllm.model_executor.layers.fused_moe.routed_experts_capturer"
SIZING_MODULE = "vllm.model_executor.layers.fused_moe.modular_kernel"


def rel_path(module):
    return pathlib.Path(*module.split(".")).with_suffix(".py")


CAPTURE_REL = rel_path(CAPTURE_MODULE)
SIZING_REL = rel_path(SIZING_MODULE)
# What marks a file as holding replay sizing code.
SIZING_MARKERS = ("_maybe_make_routing_replay_buffer", "set_capture_fn", "class RoutedExpertsSink")


def resolve_source(source):
    path = pathlib.Path(source).expanduser()
    if not path.exists():
        raise Fatal(f"--source {source}: no such file or directory (give a vLLM checkout, a routed_experts_capturer.py, or 'installed')")
    path = path.resolve()
    if path.is_file():
        return path, None
    direct = path / CAPTURE_REL
    if direct.is_file():
        return direct, path
    found = sorted(p for p in path.rglob("routed_experts_capturer.py") if p.is_file())
    if len(found) == 1:
        return found[0].resolve(), None
    if not found:
        raise Fatal(f"--source {path}: no {CAPTURE_REL} and no routed_experts_capturer.py anywhere under it")
    names = ", ".join(str(p.relative_to(path)) for p in found[:6]) + (" ..." if len(found) > 6 else "")
    raise Fatal(f"--source {path}: {len(found)} routed_experts_capturer.py files under it ({names}); point --source at one")


def engine_version_of(checkout):
    """vLLM's version from a checkout, without importing it."""
    if checkout is None:
        return "unknown"
    for candidate in (checkout / "vllm" / "_version.py", checkout / "vllm" / "version.py"):
        try:
            text = candidate.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        m = re.search(r"""(?:__version__|version)\s*(?::\s*str\s*)?=\s*(?:version\s*=\s*)?['"]([^'"]+)['"]""", text)
        if m:
            return m.group(1)
    return "unknown"


def has_sizing_code(path):
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return any(m in text for m in SIZING_MARKERS[:2])


_FINDER = [None]


def _finder():
    if _FINDER[0] is None:
        _FINDER[0] = StandInFinder("vllm", {CAPTURE_MODULE, SIZING_MODULE}, standins.MODULES, standins.UNSET_SETTINGS)
        sys.meta_path.insert(0, _FINDER[0])
    return _FINDER[0]


def _load_file(name, path):
    _finder()
    module = exec_file(name, path)
    _point_at_standins(module)
    return module


def _point_at_standins(module):
    for name, value in standins.KNOWN.items():
        if name in vars(module):
            setattr(module, name, value)


def load_capture(source):
    """(Loaded capture module, checkout or None)."""
    if source == "installed":
        try:
            module = importlib.import_module(CAPTURE_MODULE)
        except Exception as e:
            raise Fatal(f"importing {CAPTURE_MODULE} from the installed vllm failed: {exc_text(e)}")
        version = "unknown"
        try:
            import importlib.metadata as md

            version = md.version("vllm")
        except Exception:
            version = str(getattr(sys.modules.get("vllm"), "__version__", "unknown"))
        # The real vllm modules are loaded: point them at the stand-ins too,
        # so that lazy `from vllm.x import y` inside functions finds them.
        for modname, names in standins.MODULES.items():
            real = sys.modules.get(modname)
            if real is not None and modname != "vllm":
                for name, value in names.items():
                    if name in standins.KNOWN and hasattr(real, name):
                        setattr(real, name, value)
        _point_at_standins(module)
        path = pathlib.Path(getattr(module, "__file__", "") or "").resolve()
        checkout = path.parents[len(CAPTURE_REL.parts) - 1] if len(path.parts) > len(CAPTURE_REL.parts) else None
        return Loaded(module, path, version), checkout
    path, checkout = resolve_source(source)
    return Loaded(_load_file(CAPTURE_MODULE, path), path, engine_version_of(checkout)), checkout


def load_sizing(sizing_arg, checkout, capture):
    """The module holding vLLM's replay sizing code, or None.

    --sizing FILE names it; else a checkout's modular_kernel.py when it has
    the routing-replay buffer, else the capture module itself when it holds
    RoutedExpertsSink (the later layout)."""
    if sizing_arg:
        path = pathlib.Path(sizing_arg).expanduser().resolve()
        if not path.is_file():
            raise Fatal(f"--sizing {sizing_arg}: no such file")
        if path == capture.path:
            return capture
        name = CAPTURE_MODULE + "_sizing" if path.name == "routed_experts_capturer.py" else SIZING_MODULE
        return Loaded(_load_file(name, path), path)
    if capture.module is not None and isinstance(getattr(capture.module, "RoutedExpertsSink", None), type):
        return capture
    if checkout is not None:
        path = checkout / SIZING_REL
        if path.is_file():
            try:
                return Loaded(_load_file(SIZING_MODULE, path), path)
            except Fatal:
                if has_sizing_code(path):
                    raise  # it has the routing-replay buffer, and cannot be driven: say so
                return None  # a modular_kernel.py from before routing replay
    return None


def go_live_now():
    """From here on the engine's code runs: placeholders are gaps."""
    go_live()
