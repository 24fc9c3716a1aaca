"""Loading SGLang's routed-experts capturer, and its base class, from a
checkout or a single file, without SGLang's package: every other sglang.*
module is a stand-in (r3runtime.standins, with the names of
r3_sglang.standins), so a checkout needs neither SGLang's dependencies nor
a build.

The capturer has lived in two files; from c4c0376f (#24403) on it derives
from a base class in a file of its own, loaded from the same checkout:

  python/sglang/srt/layers/moe/routed_experts_capturer.py   bed301a5 .. c4c0376f
  python/sglang/srt/layers/topk_capturer_base.py            its base at c4c0376f
  python/sglang/srt/state_capturer/routed_experts.py        08d4c207 ..
  python/sglang/srt/state_capturer/base.py                  its base
"""
import importlib
import importlib.machinery
import importlib.util
import pathlib
import sys

from r3runtime.errors import Fatal, exc_text
from r3runtime.loading import Loaded, exec_file
from r3runtime.standins import StandInFinder, go_live
from r3_sglang import standins

NEW = "sglang.srt.state_capturer.routed_experts"
OLD = "sglang.srt.layers.moe.routed_experts_capturer"
BASES = ("sglang.srt.state_capturer.base", "sglang.srt.layers.topk_capturer_base")
# Third-party modules the capturer file imports for code r3check does not
# run (base64 of a finished request's rows): stand-ins when not installed.
OPTIONAL_THIRD_PARTY = ("pybase64",)


def rel_path(module):
    return pathlib.Path("python", *module.split(".")).with_suffix(".py")


def resolve_source(source):
    """(capture module name, its file, the checkout root or None)."""
    path = pathlib.Path(source).expanduser()
    if not path.exists():
        raise Fatal(f"--source {source}: no such file or directory (give an SGLang checkout, its "
                    f"state_capturer/routed_experts.py or layers/moe/routed_experts_capturer.py, or 'installed')")
    path = path.resolve()
    if path.is_dir():
        for module in (NEW, OLD):
            f = path / rel_path(module)
            if f.is_file():
                return module, f, path
        raise Fatal(f"--source {path}: neither {rel_path(NEW)} nor {rel_path(OLD)} under it")
    for module in (NEW, OLD):
        rel = rel_path(module)
        if path.parts[-len(rel.parts):] == rel.parts:
            return module, path, pathlib.Path(*path.parts[:-len(rel.parts)])
    # A lone file: named as the capturer it looks like, its base beside it.
    module = NEW if path.name == "routed_experts.py" else OLD
    return module, path, None


def base_files(module, path, root):
    """{base module: file} that exist for this capture file."""
    out = {}
    for base in BASES:
        if root is not None and (root / rel_path(base)).is_file():
            out[base] = root / rel_path(base)
    if root is None:
        beside = path.parent / ("base.py" if module == NEW else "topk_capturer_base.py")
        if beside.is_file():
            out[BASES[0] if module == NEW else BASES[1]] = beside
    return out


_FINDERS = []


def _install_finders(real):
    if _FINDERS:
        return
    finder = StandInFinder("sglang", set(real), standins.MODULES)
    sys.meta_path.insert(0, finder)
    _FINDERS.append(finder)
    for name in OPTIONAL_THIRD_PARTY:
        if importlib.util.find_spec(name) is None:
            extra = StandInFinder(name, (), {})
            sys.meta_path.insert(0, extra)
            _FINDERS.append(extra)


def load_capture(source):
    if source == "installed":
        try:
            module = importlib.import_module(NEW)
        except Exception as e:
            raise Fatal(f"importing {NEW} from the installed sglang failed: {exc_text(e)}")
        version = str(getattr(sys.modules.get("sglang"), "__version__", "unknown"))
        return Loaded(module, pathlib.Path(module.__file__).resolve(), version)
    module, path, root = resolve_source(source)
    bases = base_files(module, path, root)
    _install_finders([module, *bases])
    for base, f in bases.items():  # the capturer imports its base at import time
        exec_file(base, f)
    return Loaded(exec_file(module, path), path, _version(root))


def _version(root):
    if root is None:
        return "unknown"
    f = root / "python" / "sglang" / "version.py"
    try:
        text = f.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "unknown"
    import re

    m = re.search(r"""__version__\s*=\s*['"]([^'"]+)['"]""", text)
    return m.group(1) if m else "unknown"


def go_live_now():
    go_live()
