"""What ends an adapter, and how r3check's own gaps are told from the engine's errors.

The rule (docs/engines.md, "A stand-in gap is never a verdict"): an exception
that comes from one of r3check's stand-ins lacking something (an attribute,
a method, a module the engine's code reaches at run time) is a StandInGap.
However the engine's code wraps it, if one is in the chain of the exception
that leaves the engine, the adapter stops with a `fatal` naming the stand-in
and the missing name: exit 2, never a verdict. Only what the engine's own
code does (its asserts, its torch ops on the tensors it got, its writes) is
reported as the engine's result.
"""
import os
import traceback

_RUNTIME_DIR = os.path.dirname(os.path.abspath(__file__))


class Fatal(Exception):
    """An error that ends the adapter with a `fatal` line."""


class Refused(BaseException):
    """The binding cannot drive what the engine's code gave it for a rank
    (a capturer of a kind it cannot judge): the run stops with a `fatal`
    carrying the message, never a verdict. A BaseException, so that the
    per-rank `except Exception` of capture_engine cannot turn it into one."""


class StandInGap(AttributeError):
    """One of r3check's stand-ins lacks `name`.

    An AttributeError, so that `getattr(obj, name, default)` and `hasattr`
    in engine code behave as they do on a real object without the name.
    """

    def __init__(self, standin, name, detail=""):
        self.standin = standin
        self.name = name
        self.detail = detail
        text = f"r3check's stand-in for {standin} has no {name!r}"
        super().__init__(text + (f" ({detail})" if detail else ""))


MAX_MESSAGE = 400  # characters of an engine's message a reply carries (the protocol caps its lines)


def one_line(text):
    text = str(text).strip()
    line = text.splitlines()[0] if text else ""
    return line if len(line) <= MAX_MESSAGE else line[:MAX_MESSAGE - 3] + "..."


def exc_text(e):
    msg = one_line(e)
    return f"{type(e).__name__}: {msg}" if msg else type(e).__name__


def gap_in(exc, depth=16):
    """The StandInGap behind `exc` (itself, its cause or its context), or None."""
    seen = 0
    while exc is not None and seen < depth:
        if isinstance(exc, StandInGap):
            return exc
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None


OLD_TORCH = (2, 1)  # Debian's torch 1.13 and the like: no dtype.itemsize, no torch.compiler, ...


def torch_lack_in(exc, depth=16):
    """The AttributeError behind `exc` that names an attribute a torch
    object lacks, when this torch is older than OLD_TORCH, else None: what
    the engine's code reads of torch was added later (torch.dtype.itemsize
    came in 2.1), so it is this torch's gap, never a verdict. On a newer
    torch such an error is the engine's."""
    import torch

    try:
        version = tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2])
    except ValueError:
        return None
    if version >= OLD_TORCH:
        return None
    seen = 0
    while exc is not None and seen < depth:
        if isinstance(exc, AttributeError) and not isinstance(exc, StandInGap):
            obj = getattr(exc, "obj", None)
            owner = obj if isinstance(obj, type(torch)) else type(obj)
            name = getattr(owner, "__name__", "") if isinstance(obj, type(torch)) else getattr(owner, "__module__", "")
            if getattr(exc, "name", None) and (name == "torch" or name.startswith("torch.")):
                return exc
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None


def torch_lack_text(exc, while_doing, adapter_dirs=()):
    """The one line for torch_lack_in(): what this torch lacks, and where."""
    import torch

    obj = exc.obj
    what = obj.__name__ if isinstance(obj, type(torch)) else f"{type(obj).__module__}.{type(obj).__name__}"
    where = _engine_frame(exc, (_RUNTIME_DIR,) + tuple(adapter_dirs))
    at = f" at {where}" if where else ""
    return (f"this torch ({torch.__version__}) has no {what}.{exc.name}, which the engine's code{at} needs while "
            f"{while_doing} (r3check's gap, not a verdict on the engine): judge it with a newer torch (--engine-python)")


def _engine_frame(exc, skip_dirs):
    """file:line of the innermost frame of `exc` outside r3check's own code."""
    where = None
    for frame in traceback.extract_tb(exc.__traceback__):
        d = os.path.dirname(os.path.abspath(frame.filename))
        if not any(d == s or d.startswith(s + os.sep) for s in skip_dirs):
            where = f"{frame.filename}:{frame.lineno}"
    return where


def gap_fatal(gap, while_doing, adapter_dirs=()):
    """The one-line Fatal for a stand-in gap met while doing `while_doing`."""
    where = _engine_frame(gap, (_RUNTIME_DIR,) + tuple(adapter_dirs))
    at = f" at {where}" if where else ""
    return Fatal(
        f"stand-in gap (r3check's, not a verdict on the engine): {one_line(gap)}; the engine's code{at} "
        f"needs it while {while_doing}. Tell r3check's maintainers, or add it to the adapter's stand-ins."
    )


def harness_fatal(exc, while_doing, adapter_dirs):
    """The Fatal for an exception that is r3check's, not the engine's: a
    stand-in gap or a name this torch lacks; None when the engine's own
    code raised it (its result, to be judged)."""
    gap = gap_in(exc)
    if gap is not None:
        return gap_fatal(gap, while_doing, adapter_dirs)
    lack = torch_lack_in(exc)
    if lack is not None:
        return Fatal(torch_lack_text(lack, while_doing, adapter_dirs))
    return None
