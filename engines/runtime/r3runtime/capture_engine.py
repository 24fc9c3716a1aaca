"""Runs an engine's capture for the ranks of a case and reads back what it wrote.

The engine's part is a *binding* (engines/NAME/): an object with

  name                                    "vllm"
  build(case, d, t, instance_id) -> cap   the engine's capturer for rank (d, t), built
                                          through the engine's own initialisation
  buffer_of(cap) -> tensor                its (tokens, layers, width) buffer
  capture(cap, case, d, t, topk_ids)      one capture call, as the engine's layer makes it
  cleanup(cap)                            free what the capturer holds (shared memory, files)
  build_key(case) (optional)              what else of the case the capturer depends on (a tuple),
                                          besides its shape and rank
  nbytes_of(cap) (optional)               the bytes the capturer holds, for the LRU (default: its buffer's)
  replay (optional)                       the engine's replay-buffer sizing: replay.run(case, d, t, x,
                                          deliver, record) calls record(ReplayResult) before it
                                          hands the rows on with deliver(topk), so that a capture
                                          that raises still reports the buffer; replay.rows(case,
                                          d, t) is the buffer's size alone
  sizing_rows(cap) (optional)             instead of replay: the rows of the capture buffer the
                                          engine's own code sized (SGLang's device buffer), which
                                          r3check judges as the replay buffer

Capturers are cached per shape and rank (LRU). The buffer is zeroed before
each capture; rows are encoded and decoded by r3runtime.rows. The TP group
the capture sees comes from the caller (tp.py).
"""
import collections
import itertools
import os

import torch

from r3runtime.errors import Refused, StandInGap, gap_in, one_line, torch_lack_in, torch_lack_text
from r3runtime.rank import CUR, GatherStop, RankAbort
from r3runtime.rows import (ENCODING_WIDTH, REPLAY_DTYPE_BASE, base_for, decode, dtype_name, runs_json,
                            take_expected, words_of)
from r3runtime.tp import EmulatedTPGroup, hang_message, mismatch_message

LRU_ENTRIES = 64
LRU_BYTES = 512 << 20


class ReplayResult:
    """What the engine's replay sizing did for one rank's kernel call.

    rows: rows of the replay buffer it allocated; error: (type, message) of
    its own check, or None; slice_rows: rows of the slice the kernel got, or
    None when its check raised (no kernel call).
    """

    __slots__ = ("rows", "error", "slice_rows")

    def __init__(self, rows, error=None, slice_rows=None):
        self.rows = rows
        self.error = error
        self.slice_rows = slice_rows


class GapDuringRun(BaseException):
    """A StandInGap escaped the engine's code: the whole run stops (fatal)."""

    def __init__(self, gap, while_doing):
        super().__init__(str(gap))
        self.gap = gap
        self.while_doing = while_doing


def held_bytes(cap, buf):
    """The memory a capturer holds, for the cache's budget: its buffer, every
    other tensor among its attributes (an engine may keep more than the
    capture buffer: a probability map of (tokens, layers, num_experts) fp16,
    say, which with tens of thousands of experts dwarfs the capture buffer),
    and its shared memory segments. A deployment holds one capturer per
    rank, each on its own GPU; this process holds the cache's."""
    seen = set()
    total = 0

    def tensor(x):
        nonlocal total
        try:
            storage = x.storage()
            key, n = storage.data_ptr(), storage.size() * x.element_size()
        except Exception:
            key, n = x.data_ptr(), x.numel() * x.element_size()
        if key not in seen:
            seen.add(key)
            total += n

    def value(v):
        nonlocal total
        if isinstance(v, torch.Tensor):
            tensor(v)
        elif type(v).__name__ == "SharedMemory" and isinstance(getattr(v, "size", None), int):
            if ("shm", id(v)) not in seen:
                seen.add(("shm", id(v)))
                total += v.size

    if buf is not None:
        tensor(buf)
    try:
        attrs = list(vars(cap).values())
    except TypeError:  # no __dict__
        attrs = [getattr(cap, a, None) for a in getattr(type(cap), "__slots__", ())]
    for v in attrs:
        if isinstance(v, (list, tuple)):
            for x in v:
                value(x)
        elif isinstance(v, dict):
            for x in v.values():
                value(x)
        else:
            value(v)
    return total


class _Entry:
    __slots__ = ("cap", "buf", "dirty", "nbytes", "error", "words")

    def __init__(self, cap, buf, error=None):
        self.cap = cap
        self.buf = buf
        self.words = None  # rows.words_of(buf), once needed
        self.dirty = False
        self.error = error
        self.nbytes = 0 if buf is None else held_bytes(cap, buf)


def _engine_error(ex):
    return {"type": type(ex).__name__, "message": one_line(ex)}


def _record_replay(res, out):
    res["replay_rows"] = out.rows
    res["replay_error"] = None if out.error is None else {"type": out.error[0], "message": out.error[1]}
    res["kernel_slice_rows"] = out.slice_rows


class CaptureEngine:
    def __init__(self, binding, device, rank):
        self.binding = binding
        self.device = device
        self.cache = collections.OrderedDict()
        self.cache_bytes = 0
        self.seq = itertools.count()
        self.instance_prefix = f"r3check_{os.getpid()}_{rank}"
        self._bases = {}  # buffer dtype -> B (the binding's replay is set once it is loaded)

    # -- capturers --
    def capturer(self, case, d, t):
        key = (case.M, case.E, case.nl, case.D, case.T, d, t, case.ep)
        build_key = getattr(self.binding, "build_key", None)
        if build_key is not None:
            key += tuple(build_key(case))
        e = self.cache.get(key)
        if e is not None:
            self.cache.move_to_end(key)
            return e
        try:
            cap = self.binding.build(case, d, t, f"{self.instance_prefix}_{next(self.seq)}")
            buf = self.binding.buffer_of(cap)
            if buf.dim() != 3:
                raise ValueError(f"capturer buffer has shape {tuple(buf.shape)}, expected (tokens, layers, {ENCODING_WIDTH})")
            e = _Entry(cap, buf)
            e.dirty = True
            nbytes_of = getattr(self.binding, "nbytes_of", None)
            if nbytes_of is not None:
                e.nbytes = nbytes_of(cap)
        except Exception as ex:
            gap = gap_in(ex)
            if gap is not None:
                raise GapDuringRun(gap, f"building the capturer for rank (dp {d}, tp {t})")
            lack = torch_lack_in(ex)
            if lack is not None:
                raise Refused(torch_lack_text(lack, f"building the capturer for rank (dp {d}, tp {t})",
                                              getattr(self.binding, "ADAPTER_DIRS", ())))
            e = _Entry(None, None, error={"type": type(ex).__name__, "message": "building the capturer: " + one_line(ex)})
        self.cache[key] = e
        self.cache_bytes += e.nbytes
        while len(self.cache) > LRU_ENTRIES or (self.cache_bytes > LRU_BYTES and len(self.cache) > 1):
            _, old = self.cache.popitem(last=False)
            self.cache_bytes -= old.nbytes
            if old.cap is not None:
                self.binding.cleanup(old.cap)
        return e

    def close(self):
        for e in self.cache.values():
            if e.cap is not None:
                self.binding.cleanup(e.cap)
        self.cache.clear()

    # -- one rank --
    def _capture(self, entry, case, d, t, x, res):
        """The capture call, through the engine's replay hand-off when it has one."""
        replay = getattr(self.binding, "replay", None)
        if replay is None:
            self.binding.capture(entry.cap, case, d, t, x)
            return
        replay.run(case, d, t, x, lambda topk: self.binding.capture(entry.cap, case, d, t, topk),
                   lambda out: _record_replay(res, out))

    def run_rank(self, case, d, t, group):
        """Runs one capture: ("stop", input, result) when it stopped at an
        emulated all-gather, else ("done", None, result)."""
        r = d * case.T + t
        runs = case.runs[r]
        n = case.run_rows[r]
        res = {"dp": d, "tp": t, "n": n, "error": None, "captured": [], "tp_gather": False, "stray": 0, "undecodable": 0}
        CUR.enter(case, d, t, group)
        entry = None
        stopped = None
        try:
            entry = self.capturer(case, d, t)
            if entry.error is not None:
                res["error"] = dict(entry.error)
                replay = getattr(self.binding, "replay", None)
                if replay is not None:
                    # Every rank of a case reports its replay buffer, also
                    # one whose capturer could not be built (no kernel call).
                    _record_replay(res, ReplayResult(replay.rows(case, d, t)))
            else:
                if entry.dirty:
                    entry.buf.zero_()
                    entry.dirty = False
                B = self._base(entry.buf)
                x = case.encoded(runs, B, self.device)
                try:
                    self._capture(entry, case, d, t, x, res)
                except GatherStop as s:
                    # Without its traceback: kept in this frame, the traceback
                    # (which holds this frame) would make a reference cycle.
                    stopped = s.with_traceback(None)
                except RankAbort as a:
                    res["error"] = {"type": a.etype, "message": a.message}
                    res["captured"] = None  # a rank stuck in a collective reports no rows
                except StandInGap as gap:
                    raise GapDuringRun(gap, f"capturing for rank (dp {d}, tp {t})")
                except Exception as ex:
                    gap = gap_in(ex)
                    if gap is not None:
                        raise GapDuringRun(gap, f"capturing for rank (dp {d}, tp {t})")
                    lack = torch_lack_in(ex)
                    if lack is not None:
                        raise Refused(torch_lack_text(lack, f"capturing for rank (dp {d}, tp {t})",
                                                      getattr(self.binding, "ADAPTER_DIRS", ())))
                    res["error"] = _engine_error(ex)
        finally:
            try:
                group.finish()
            finally:
                CUR.group = None
        if stopped is None and getattr(self.binding, "sizing_rows", None) is not None:
            self._report_sizing(entry, n, res)
        res["tp_gather"] = group.called
        if entry is not None and entry.cap is not None:
            res["_dtype"] = dtype_name(entry.buf.dtype)
        if stopped is not None:
            entry.dirty = True
            return "stop", stopped, res  # stopped: the GatherStop (its tensor, uneven or not)
        if entry is None or entry.cap is None:
            return "done", None, res
        if res["captured"] is None:
            res["captured"] = []
            entry.dirty = True
            return "done", None, res
        self._read_back(entry, case, d, runs, group, res)
        return "done", None, res

    def _report_sizing(self, entry, n, res):
        """The engine's own capture-buffer size (binding.sizing_rows): a
        capture that raised on a batch the buffer cannot hold carries that
        error as the sizing's."""
        rows = 0 if entry is None or entry.cap is None else self.binding.sizing_rows(entry.cap)
        error = None
        if n > rows and res["error"] is not None:
            error = (res["error"]["type"], res["error"]["message"])
        _record_replay(res, ReplayResult(rows, error))

    def _base(self, buf):
        """Digits must fit the capturer's dtype, and the int16 replay buffer
        when the engine's sizing hands the rows on."""
        dt = buf.dtype
        B = self._bases.get(dt)
        if B is None:
            B = base_for(dt)
            if getattr(self.binding, "replay", None) is not None:
                B = min(B, REPLAY_DTYPE_BASE)
            self._bases[dt] = B
        return B

    def _read_back(self, entry, case, d, runs, group, res):
        try:
            buf = self.binding.buffer_of(entry.cap)
            if buf is not entry.buf:
                entry.buf = buf
            B = self._base(buf)
            # A correct capture wrote DP rank d's own tokens, in order: checked
            # (and cleared) in one pass; anything else is decoded in full.
            view = entry.words
            if view is None or view.buf is not buf:
                view = entry.words = words_of(buf)
            fast = None if view is None else take_expected(view, case, B, 1 + case.offs[d], case.N[d])
            if fast is not None:
                res["captured"] = runs_json(fast)
                res["stray"] = 0
                res["undecodable"] = 0
                return
            cands = [(lambda dt: case.encoded(runs, B, self.device, dt), runs)]
            if group.called and case.T > 1:
                cands.append((lambda dt: case.gathered(d, B, self.device, dt)[0], case.gathered(d, B, self.device)[1]))
            captured, stray, undec = decode(buf, case, cands, B)
            res["captured"] = runs_json(captured)
            res["stray"] = stray
            res["undecodable"] = undec
            if stray == 0 and captured is not None:
                p = sum(c for _, _, c in captured) + undec
                buf[:p, case.layer].zero_()
            else:
                buf.zero_()
        except RankAbort as a:
            res["error"] = res["error"] or {"type": a.etype, "message": a.message}
            entry.dirty = True
        except Exception as ex:
            res["error"] = res["error"] or {"type": "AdapterError", "message": "decoding the buffer: " + one_line(ex)}
            entry.dirty = True

    # -- one DP rank, all TP ranks on this process --
    def run_dp_emulated(self, case, d):
        T = case.T
        rounds = []
        while True:
            outs = [self.run_rank(case, d, t, EmulatedTPGroup(T, t, d, rounds)) for t in range(T)]
            stopped = [t for t in range(T) if outs[t][0] == "stop"]
            if not stopped:
                return [o[2] for o in outs]
            if len(stopped) < T:
                results = []
                for t in range(T):
                    res = outs[t][2]
                    if outs[t][0] == "stop":
                        res["error"] = {"type": "hang", "message": hang_message(len(stopped), T, d)}
                        res["captured"] = []
                    results.append(res)
                return results
            inputs = [o[1].tensor for o in outs]
            # An all-gather into a list may take a different row count from
            # each rank: its outputs are checked against each rank's tensor.
            uneven = all(o[1].uneven for o in outs)
            if not uneven and any(x.shape != inputs[0].shape or x.dtype != inputs[0].dtype for x in inputs):
                msg = mismatch_message(d, [[x.dim()] + list(x.shape) for x in inputs])
                results = []
                for o in outs:
                    o[2]["error"] = {"type": "CollectiveMismatch", "message": msg}
                    o[2]["captured"] = []
                    results.append(o[2])
                return results
            rounds.append(inputs)

    def run_case_emulated(self, case):
        out = []
        for d in range(case.D):
            out.extend(self.run_dp_emulated(case, d))
        return out


def case_result(case, ranks, collective):
    dtype = None  # no capturer could be built for this case
    for r in ranks:
        if "_dtype" in r:
            dtype = r["_dtype"]
            break
    for r in ranks:
        r.pop("_dtype", None)
    return {"collective": collective, "buffer_dtype": dtype, "ranks": ranks}
