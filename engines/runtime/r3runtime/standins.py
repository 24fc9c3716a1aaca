"""Stand-in modules and objects for an engine's package.

An adapter loads the engine's capture file without the engine's package:
every other module of the package (`vllm.*`, `sglang.*`) is a stand-in
module. Names the adapter models (its `names` table) are real stand-ins;
any other name is a *placeholder* so that imports, annotations, base classes
and decorators at import time still work. Once the engine's code runs
(`go_live()`), touching a placeholder (calling it, reading an attribute of
it) raises StandInGap: a gap of r3check's, never a verdict on the engine.
"""
import importlib
import importlib.abc
import importlib.util
import types

from r3runtime.errors import StandInGap

_LIVE = [False]  # placeholders are inert until the engine's code runs


def go_live():
    _LIVE[0] = True


def is_live():
    return _LIVE[0]


class _PlaceholderMeta(type):
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if _LIVE[0]:
            raise StandInGap(cls.__qualname__, name, "a placeholder: r3check does not model it")
        return make_placeholder(f"{cls.__qualname__}.{name}")

    def __call__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]) and not _LIVE[0]:
            return args[0]  # used as a decorator
        if _LIVE[0]:
            raise StandInGap(cls.__qualname__, "__call__", "a placeholder: r3check does not model it")
        return super().__call__(*args, **kwargs)


class Placeholder(metaclass=_PlaceholderMeta):
    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if _LIVE[0]:
            raise StandInGap(type(self).__qualname__ + " instance", name, "a placeholder")
        return make_placeholder(name)

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]) and not _LIVE[0]:
            return args[0]
        if _LIVE[0]:
            raise StandInGap(type(self).__qualname__ + " instance", "__call__", "a placeholder")
        return Placeholder()


def make_placeholder(qualname):
    return _PlaceholderMeta(qualname.rsplit(".", 1)[-1], (Placeholder,),
                            {"__module__": "r3check_standin", "__qualname__": qualname})


def is_placeholder(value):
    return isinstance(value, _PlaceholderMeta) or isinstance(value, Placeholder)


class StandInObject:
    """A config-like object with exactly the fields given; any other
    attribute is a StandInGap naming the object and what it has."""

    def __init__(self, what, **fields):
        object.__setattr__(self, "_what", what)
        self.__dict__.update(fields)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        known = ", ".join(k for k in self.__dict__ if not k.startswith("_"))
        raise StandInGap(self._what, name, f"it has: {known}")

    def __repr__(self):
        return f"<r3check stand-in {self._what}>"


class _StandInModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        finder = self.__dict__.get("_r3_finder")
        sub = f"{self.__name__}.{name}"
        if finder is not None and finder.is_known_module(sub):
            return importlib.import_module(sub)
        if finder is not None and finder.unset_settings.get(self.__name__) is not None and name.isupper():
            value = finder.unset_settings[self.__name__](name)  # an environment setting left unset
        elif _LIVE[0]:
            raise StandInGap(f"module {self.__name__}", name, "not modelled by r3check")
        else:
            value = make_placeholder(sub)
        setattr(self, name, value)
        return value


class StandInFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves every module of `package` except `exclude` as a stand-in.

    modules: {module name: {attribute: value}}: what each stand-in module
    holds. unset_settings: {module name: fn(NAME) -> value} for modules of
    upper-case settings (vllm.envs) that read as unset.
    """

    def __init__(self, package, exclude, modules, unset_settings=None):
        self.package = package
        self.exclude = set(exclude)
        self.modules = modules
        self.unset_settings = unset_settings or {}

    def is_known_module(self, name):
        return name in self.modules

    def find_spec(self, fullname, path=None, target=None):
        if fullname in self.exclude or not (fullname == self.package or fullname.startswith(self.package + ".")):
            return None
        return importlib.util.spec_from_loader(fullname, self, is_package=True)

    def create_module(self, spec):
        return _StandInModule(spec.name)

    def exec_module(self, module):
        module.__path__ = []
        module._r3_finder = self
        for name, value in self.modules.get(module.__name__, {}).items():
            setattr(module, name, value)
