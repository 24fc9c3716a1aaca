"""Loading one of the engine's files under its real module name, without
the engine's package (whose other modules are stand-ins: standins.py)."""
import hashlib
import importlib
import importlib.machinery
import importlib.util
import sys

from r3runtime.errors import Fatal, exc_text, gap_in


class Loaded:
    """A loaded module and where it came from."""

    def __init__(self, module, path, version="unknown"):
        self.module = module
        self.path = path
        self.version = version

    def sha256(self):
        return hashlib.sha256(self.path.read_bytes()).hexdigest() if self.path.is_file() else "unknown"


def exec_file(name, path):
    """Runs `path` as module `name` (registered in sys.modules and on its
    parent package). A failure is a Fatal saying whether a stand-in's gap
    (r3check's) or the file itself raised."""
    try:
        parent = importlib.import_module(name.rsplit(".", 1)[0])
        # An explicit source loader: spec_from_file_location gives None for
        # a name without .py ("'NoneType' object has no attribute 'loader'").
        spec = importlib.util.spec_from_loader(name, importlib.machinery.SourceFileLoader(name, str(path)))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        setattr(parent, name.rsplit(".", 1)[1], module)
    except Fatal:
        raise
    except Exception as e:
        sys.modules.pop(name, None)
        gap = gap_in(e)
        why = f"stand-in gap (r3check's, not a verdict on the engine): {gap}" if gap else exc_text(e)
        raise Fatal(f"loading {path} failed: {why}")
    return module
