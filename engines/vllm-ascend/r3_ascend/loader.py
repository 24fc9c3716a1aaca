"""Loading vllm-ascend's capture file over vLLM's capturer.

vLLM's capture module comes first (r3_vllm.loader, from --base): the patch
imports RoutedExpertsCapturer from it. Then vllm-ascend's file runs under
its real module name, without vllm-ascend's package: every other
vllm_ascend.* module is a stand-in (r3_ascend.standins). Three generations
of the file exist (docs/engines.md, "vllm-ascend"):

  patch/worker/patch_routed_experts_capture.py   assigns RoutedExpertsCapturer.capture
  ops/fused_moe/routed_experts_capture.py        subclasses RoutedExpertsCapturer, overrides capture
  patch/worker/patch_routed_experts_capturer.py  assigns RoutedExpertsCapturer.init_buffer
"""
import importlib.util
import pathlib
import sys

from r3runtime.errors import Fatal
from r3runtime.loading import Loaded, exec_file
from r3runtime.standins import StandInFinder
from r3_ascend import standins
from r3_vllm import loader as vllm_loader

FILES = (
    "vllm_ascend/patch/worker/patch_routed_experts_capture.py",
    "vllm_ascend/ops/fused_moe/routed_experts_capture.py",
    "vllm_ascend/patch/worker/patch_routed_experts_capturer.py",
)
_MODULE_OF_NAME = {pathlib.PurePath(f).name: f[: -len(".py")].replace("/", ".") for f in FILES}
WHAT = "a vllm-ascend checkout, one of its routed-experts capture files, or 'installed'"


def resolve_source(source):
    """(the file, its module name, the checkout or None)."""
    if source == "installed":
        spec = importlib.util.find_spec("vllm_ascend")  # finds the package without importing it
        if spec is None or not spec.submodule_search_locations:
            raise Fatal("--source installed: no vllm_ascend package is importable")
        source = str(pathlib.Path(list(spec.submodule_search_locations)[0]).parent)
    path = pathlib.Path(source).expanduser()
    if not path.exists():
        raise Fatal(f"--source {source}: no such file or directory (give {WHAT})")
    path = path.resolve()
    if path.is_dir():
        for rel in FILES:
            if (path / rel).is_file():
                return path / rel, rel[: -len(".py")].replace("/", "."), path
        raise Fatal(f"--source {path}: none of {', '.join(FILES)} is there (give {WHAT})")
    name = _MODULE_OF_NAME.get(path.name)
    if name is None:
        raise Fatal(f"--source {path}: not a file this adapter knows ({', '.join(_MODULE_OF_NAME)})")
    return path, name, None


def version_of(checkout):
    if checkout is None:
        return "unknown"
    for candidate in (checkout / "vllm_ascend" / "_version.py",):
        try:
            text = candidate.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            if line.strip().startswith(("__version__", "version")) and "=" in line:
                return line.split("=", 1)[1].strip().strip("'\"")
    return "unknown"


class Patched:
    """vllm-ascend's file loaded over vLLM's capturer: `cls` is the class to
    drive (vLLM's, patched in place, or vllm-ascend's subclass) and `how`
    says which."""

    def __init__(self, loaded, base, cls, how):
        self.loaded = loaded
        self.base = base
        self.cls = cls
        self.how = how


_FINDER = [None]


def load(source, base_source):
    base, _ = vllm_loader.load_capture(base_source)
    vllm_cls = getattr(base.module, "RoutedExpertsCapturer", None)
    if not isinstance(vllm_cls, type):
        raise Fatal(f"--base {base.path}: no class RoutedExpertsCapturer to patch")
    path, name, checkout = resolve_source(source)
    if _FINDER[0] is None:
        _FINDER[0] = StandInFinder("vllm_ascend", {name}, standins.MODULES)
        sys.meta_path.insert(0, _FINDER[0])
    before = dict(vars(vllm_cls))
    module = exec_file(name, path)
    loaded = Loaded(module, path, version_of(checkout))
    patched = sorted(k for k in set(before) | set(vars(vllm_cls)) if vars(vllm_cls).get(k) is not before.get(k))
    subclasses = sorted((v for v in vars(module).values() if isinstance(v, type) and v is not vllm_cls
                         and issubclass(v, vllm_cls) and v.__module__ == module.__name__), key=lambda c: c.__name__)
    imported = getattr(module, "RoutedExpertsCapturer", None)
    if imported is not None and imported is not vllm_cls and not subclasses:
        where = getattr(imported, "__module__", "?")
        if where == "r3check_standin":
            where = getattr(imported, "__qualname__", "?").rsplit(".", 1)[0]
        raise Fatal(f"{path}: it patches the RoutedExpertsCapturer of {where}, not the one of "
                    f"{vllm_loader.CAPTURE_MODULE} (--base): nothing r3check can drive")
    if subclasses:
        cls = subclasses[0]
        return Patched(loaded, base, cls, f"{cls.__name__}(RoutedExpertsCapturer) overriding "
                                          f"{', '.join(k for k in vars(cls) if callable(vars(cls)[k]) and not k.startswith('__')) or 'nothing'}")
    if not patched:
        raise Fatal(f"{path}: it neither patches vLLM's RoutedExpertsCapturer nor subclasses it")
    return Patched(loaded, base, vllm_cls, f"RoutedExpertsCapturer.{', .'.join(patched)} patched")
