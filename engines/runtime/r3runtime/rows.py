"""The row codec: request cases, value encoding and buffer decoding (docs/engines.md, "Row encoding").

Rows are materialised as real tensors so the engine's slicing, gathering
and narrowing act on real values. Token i of DP rank d is the value
v = 1 + sum(N[:d]) + i, SP padding is 1 + sum(N), 0 is "never written";
v is written in base B over ENCODING_WIDTH columns, B the largest power of
two the buffer dtype holds. Run lists are tuples (dp, from, count), dp -1
for padding.
"""
import os

import torch

try:
    import numpy as _np
except Exception:  # the fast clean-buffer check falls back to torch
    _np = None

from r3runtime.errors import Fatal, exc_text
from r3runtime.rank import RankAbort

ENCODING_WIDTH = 8  # the top-k width capturers are built with
REPLAY_DTYPE_BASE = 1 << 15  # int16, the replay buffer's dtype

DTYPE_CODE = {}  # dtype -> small int, for the TP vote
_BASES = {}

def init_dtype_tables():
    """Before torch_compat.install(): it aliases missing unsigned dtypes."""
    names = ["bool", "uint8", "int8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
             "float16", "bfloat16", "float32", "float64"]
    bases = {"bool": 2, "uint8": 1 << 8, "int8": 1 << 7, "int16": 1 << 15, "uint16": 1 << 16, "int32": 1 << 31,
             "uint32": 1 << 31, "int64": 1 << 30, "uint64": 1 << 30,
             "float16": 1 << 11, "bfloat16": 1 << 8, "float32": 1 << 24, "float64": 1 << 30}
    for i, n in enumerate(names):
        dt = getattr(torch, n, None)
        if dt is not None:
            DTYPE_CODE[dt] = i
            _BASES[dt] = bases[n]
    for n in ("uint16", "uint32", "uint64"):
        if hasattr(torch, n):
            NEEDS_WIDEN.add(getattr(torch, n))


_DTYPE_NAMES = {}


def dtype_name(dt):
    name = _DTYPE_NAMES.get(dt)
    if name is None:
        name = _DTYPE_NAMES[dt] = str(dt).replace("torch.", "")
    return name


def base_for(dt):
    """B: the largest power of two the buffer dtype holds, at most 2^31 so
    that every digit fits the int32 topk_ids."""
    return _BASES.get(dt, 1 << 7)


_POWS = {}
TABLE_ROWS = 1 << 21  # values below this are encoded from a table (64 MiB of int32)
# R3_ADAPTER_SLOW=1: no table, no decode shortcuts (tests compare both ways).
SLOW = os.environ.get("R3_ADAPTER_SLOW", "") not in ("", "0")
if SLOW:
    TABLE_ROWS = 0


def _digits(v, B):
    """int32 (n, 8): base-B digits of the int64 values v (B a power of two)."""
    x = torch.zeros((v.shape[0], ENCODING_WIDTH), dtype=torch.int32)
    shift = B.bit_length() - 1
    top = int(v.max()) if v.numel() else 0
    for j in range(_ndigits(B, top)):
        x[:, j] = (v >> (shift * j)) & (B - 1)
    return x


class _Tables:
    """Row encodings of v = 0, 1, 2, ... per base and device (and narrowed
    per buffer dtype), grown on demand: encoding a run is a slice."""

    def __init__(self):
        self.tables = {}

    def get(self, B, device, rows, dtype=None):
        key = (B, device, dtype)
        t = self.tables.get(key)
        if t is None or t.shape[0] < rows:
            if dtype is not None:
                t = self.get(B, device, rows).to(dtype)
            else:
                size = max(rows, 4096, 2 * (t.shape[0] if t is not None else 0))
                t = _digits(torch.arange(size, dtype=torch.int64), B).to(device)
            self.tables[key] = t
        return t

    def np_words(self, B, device, rows, dtype):
        """The CPU table narrowed to dtype as numpy uint64 words, (values,
        words per row), or None where its rows are not whole words."""
        key = ("words", B, device, dtype)
        w = self.tables.get(key)
        if w is None or w.shape[0] < rows:
            t = self.get(B, device, rows, dtype)
            if _np is None or (t.shape[1] * t.element_size()) % 8 != 0 or dtype is torch.bool:
                return None
            w = t.view(torch.int64).numpy().view(_np.uint64)
            self.tables[key] = w  # the array holds its tensor
        return w


TABLES = _Tables()


def _pows(B):
    p = _POWS.get(B)
    if p is None:
        vals = []
        for j in range(ENCODING_WIDTH):
            vals.append(min(B ** j, 1 << 62))
        p = torch.tensor(vals, dtype=torch.int64)
        _POWS[B] = p
    return p


class Case:
    """One request case, parsed once; shared by all its ranks."""

    def __init__(self, index, raw):
        try:
            self.D = int(raw["dp"])
            self.T = int(raw["tp"])
            self.ep = bool(raw.get("ep", False))
            self.M = int(raw["max_num_batched_tokens"])
            # SGLang's chunked prefill size per DP rank; absent: M.
            self.cps = int(raw.get("chunked_prefill_size") or self.M)
            self.E = int(raw["num_experts"])
            self.layers = int(raw["num_layers"])
            self.N = [int(x) for x in raw["num_tokens_across_dp"]]
            dispatch = raw.get("dispatch")  # "naive" | "internal"; None from an older r3check
            if dispatch not in (None, "naive", "internal"):
                raise ValueError(f"dispatch {dispatch!r} is not naive | internal")
            self.dispatch = dispatch
            # vllm-ascend's MoECommType; None: vLLM's own dispatch.
            comm = raw.get("moe_comm")
            if comm not in (None, "allgather", "alltoall", "mc2"):
                raise ValueError(f"moe_comm {comm!r} is not allgather | alltoall | mc2")
            self.moe_comm = comm
            sp = raw.get("sp")  # informational in the protocol; None when absent
            self.sp = None if sp is None else bool(sp)
            ls = raw.get("local_sizes")
            self.local_sizes = None if ls is None else [int(x) for x in ls]
            ranks = raw["ranks"]
        except (KeyError, TypeError, ValueError) as e:
            raise Fatal(f"case {index}: malformed ({exc_text(e)})")
        where = f"case {index}"
        if self.D < 1 or self.T < 1:
            raise Fatal(f"{where}: dp and tp must be >= 1")
        if self.M < 1 or self.E < 1 or self.layers < 1:
            raise Fatal(f"{where}: max_num_batched_tokens, num_experts and num_layers must be >= 1")
        if not 1 <= self.cps <= self.M:
            raise Fatal(f"{where}: chunked_prefill_size must be in [1, max_num_batched_tokens]")
        if len(self.N) != self.D or any(n < 0 for n in self.N):
            raise Fatal(f"{where}: num_tokens_across_dp must hold {self.D} counts >= 0")
        if not isinstance(ranks, list) or len(ranks) != self.D * self.T:
            raise Fatal(f"{where}: ranks must hold dp*tp = {self.D * self.T} entries")
        self.nl = min(self.layers, 2)
        self.layer = self.nl - 1
        self.offs = [0]
        for n in self.N:
            self.offs.append(self.offs[-1] + n)
        self.total = self.offs[-1]
        self.pad_v = self.total + 1
        self.runs = []
        self.run_rows = []  # rows of each rank's run list
        for r, rank in enumerate(ranks):
            d, t = divmod(r, self.T)
            try:
                if int(rank["dp"]) != d or int(rank["tp"]) != t:
                    raise Fatal(f"{where}: ranks[{r}] is (dp {rank['dp']}, tp {rank['tp']}), expected (dp {d}, tp {t})")
                runs = self._parse_runs(rank["rows"], where, d, t)
                self.runs.append(runs)
                self.run_rows.append(sum(c for _, _, c in runs))
            except (KeyError, TypeError, ValueError) as e:
                raise Fatal(f"{where}: ranks[{r}] malformed ({exc_text(e)})")
        self.engine_state = {}  # what an engine's stand-ins derive from the case, once
        self._encoded = {}
        self._cum_ends = None

    def _parse_runs(self, rows, case_where, d, t):
        out = []
        D, N = self.D, self.N
        for run in rows:
            if "pad" in run:
                c = int(run["pad"])
                if c < 0:
                    raise Fatal(f"{case_where} rank (dp {d}, tp {t}): negative pad count")
                out.append((-1, 0, c))
            else:
                dp, frm, c = int(run["dp"]), int(run["from"]), int(run["count"])
                if not 0 <= dp < D or frm < 0 or c < 0 or frm + c > N[dp]:
                    raise Fatal(f"{case_where} rank (dp {d}, tp {t}): run dp{dp}[{frm}..{frm + c}) is outside N[{dp}]")
                out.append((dp, frm, c))
        return tuple(out)

    def _values(self, runs):
        """v of every row of a run list (1-D int64)."""
        parts = []
        for dp, frm, c in runs:
            if c == 0:
                continue
            if dp < 0:
                parts.append(torch.full((c,), self.pad_v, dtype=torch.int64))
            else:
                s = 1 + self.offs[dp] + frm
                parts.append(torch.arange(s, s + c, dtype=torch.int64))
        return torch.cat(parts) if parts else torch.zeros(0, dtype=torch.int64)

    def encoded(self, runs, B, device, dtype=None):
        """topk_ids for a run list: int32 (n, 8), v in base B, least
        significant digit first; with `dtype`, the same narrowed to it."""
        key = (runs, B, device, dtype)
        x = self._encoded.get(key)
        if x is None:
            if dtype is not None:
                x = self.encoded(runs, B, device).to(dtype)
            elif self.pad_v < TABLE_ROWS:
                table = TABLES.get(B, device, self.pad_v + 1)
                pieces = []
                for dp, frm, c in runs:
                    if c == 0:
                        continue
                    if dp < 0:
                        pieces.append(table[self.pad_v].expand(c, ENCODING_WIDTH))
                    else:
                        s = 1 + self.offs[dp] + frm
                        pieces.append(table[s: s + c])
                if not pieces:
                    x = torch.zeros((0, ENCODING_WIDTH), dtype=torch.int32, device=device)
                elif len(pieces) == 1:
                    x = pieces[0].clone()  # a copy: the engine may not alias the table
                else:
                    x = torch.cat(pieces)
            else:
                x = _digits(self._values(runs), B).to(device)
            self._encoded[key] = x
        return x

    def gathered(self, d, B, device, dtype=None):
        """DP rank d's TP inputs concatenated in TP order (what a TP
        all-gather of the unmodified inputs returns), and its run list."""
        key = ("gathered", d, B, device, dtype)
        hit = self._encoded.get(key)
        if hit is None:
            lists = self.runs[d * self.T: (d + 1) * self.T]
            hit = (torch.cat([self.encoded(r, B, device, dtype) for r in lists]), _concat_runs(lists))
            self._encoded[key] = hit
        return hit

    def release(self):
        """Drops the case's tensors once its result is built: a request's
        cases are parsed together, and keeping every case's encodings alive
        until the reply made each request touch fresh memory (page faults)."""
        self._encoded = {}
        self.engine_state = {}

    def cum_ends(self):
        if self._cum_ends is None:
            self._cum_ends = torch.tensor(self.offs[1:], dtype=torch.int64)
            self._cum_starts = torch.tensor(self.offs[:-1] + [self.total], dtype=torch.int64)
        return self._cum_ends, self._cum_starts


def runs_json(runs):
    out = []
    for dp, frm, c in runs:
        out.append({"pad": c} if dp < 0 else {"dp": dp, "from": frm, "count": c})
    return out


def _append(out, dp, frm, c):
    if c <= 0:
        return
    if out:
        ldp, lfrm, lc = out[-1]
        if ldp == dp and (dp < 0 or lfrm + lc == frm):
            out[-1] = (ldp, lfrm if dp >= 0 else 0, lc + c)
            return
    out.append((dp, frm if dp >= 0 else 0, c))


def _slice_runs(runs, start, end):
    out = []
    pos = 0
    for dp, frm, c in runs:
        lo, hi = max(start, pos), min(end, pos + c)
        if lo < hi:
            _append(out, dp, frm + (lo - pos) if dp >= 0 else 0, hi - lo)
        pos += c
        if pos >= end:
            break
    return out


def _concat_runs(lists):
    out = []
    for runs in lists:
        for dp, frm, c in runs:
            _append(out, dp, frm, c)
    return out


def _position_of(runs, case, v):
    """Row index of token value v in a run list, or None (pads are ambiguous)."""
    if v < 1 or v > case.total:
        return None
    pos = 0
    for dp, frm, c in runs:
        if dp >= 0:
            s = 1 + case.offs[dp] + frm
            if s <= v < s + c:
                return pos + (v - s)
        pos += c
    return None


def _row_nonzero(buf):
    """(rows, layers) bool: which rows of each layer hold a nonzero value."""
    esz = buf.element_size()
    w = buf
    if buf.is_contiguous() and (buf.shape[2] * esz) % 8 == 0 and buf.dtype is not torch.bool:
        w = buf.view(torch.int64)
    elif buf.dtype in NEEDS_WIDEN:
        w = buf.to(torch.int64)
    nz = w.ne(0)
    return nz[:, :, 0] if nz.shape[2] == 1 else nz.any(2)


NEEDS_WIDEN = set()


def _value_of_row(row, B):
    v = 0
    for j, digit in enumerate(row):
        v += int(digit) * (B ** j)
    return v


def _same(a, b):
    """torch.equal, on 8-byte words where the layout allows (faster)."""
    if a.shape != b.shape:
        return False
    try:
        if a.shape[-1] * a.element_size() % 8 == 0 and a.dtype is b.dtype:
            return torch.equal(a.view(torch.int64), b.view(torch.int64))
    except RuntimeError:
        pass
    return torch.equal(a, b)


def _ndigits(B, maxv):
    n = 1
    while B ** n <= maxv and n < ENCODING_WIDTH:
        n += 1
    return n


def decode(buf, case, candidates, B=None):
    """Reads the checked layer's written prefix. Returns (runs, stray, undecodable).

    candidates: [(get(dtype) -> tensor, runs)]: tensors the rows probably
    came from (the rank's input; what a TP all-gather of the inputs gives). A
    prefix equal to a slice of one is decoded from its run list; anything
    else digit by digit.
    """
    rows, layers = buf.shape[0], buf.shape[1]
    layer = case.layer
    if layer >= layers:
        raise RankAbort("AdapterError", f"capturer buffer has {layers} layers, the checked layer is {layer}")
    rnz = _row_nonzero(buf)
    total = int(rnz.sum())
    if total == 0:
        return [], 0, 0
    col = rnz[:, layer]
    if total <= rows and bool(col[:total].all()):
        p = total  # every written row is in the prefix
    else:
        inv = ~col
        p = rows if not bool(inv.any()) else int(inv.to(torch.uint8).argmax())
    stray = total - p
    if p == 0:
        return [], stray, 0
    if B is None:
        B = base_for(buf.dtype)
    prefix = buf[:p, layer, :]
    first = None
    if not buf.dtype.is_floating_point:
        first_row = prefix[0].tolist()
        if all(0 <= x < B for x in first_row):
            first = _value_of_row(first_row, B)
    if first is not None and first + p - 1 <= case.total and case.pad_v < TABLE_ROWS:
        # Consecutive tokens (the usual capture): compare with the table.
        table = TABLES.get(B, buf.device, case.pad_v + 1, buf.dtype)
        if _same(prefix, table[first: first + p]):
            return _token_range_runs(case, first, p), stray, 0
    if first is not None and not SLOW:
        for get, runs in candidates:
            s = _position_of(runs, case, first)
            if s is None:
                continue
            tensor = get(buf.dtype)
            if tensor.dim() != 2 or tensor.shape[1] != prefix.shape[1] or s + p > tensor.shape[0]:
                continue
            if _same(prefix, tensor[s: s + p]):
                return _slice_runs(runs, s, s + p), stray, 0
    # Full decode.
    maxv = case.pad_v
    ndig = _ndigits(B, maxv)
    if buf.dtype.is_floating_point:
        f = prefix.to(torch.float64)
        bad = (f != torch.floor(f)).any(1)
        digits = f.to(torch.int64)
    else:
        digits = prefix.to(torch.int64)
        bad = torch.zeros(p, dtype=torch.bool, device=digits.device)
    bad |= (digits < 0).any(1) | (digits >= B).any(1)
    if ndig < digits.shape[1]:
        bad |= (digits[:, ndig:] != 0).any(1)
    top_limit = maxv // (B ** (ndig - 1))
    bad |= digits[:, ndig - 1] > top_limit
    pows = _pows(B)[:ndig].to(digits.device)
    v = (digits[:, :ndig].clamp(0, B - 1) * pows).sum(1)
    bad |= (v < 1) | (v > maxv)
    undecodable = int(bad.sum())
    if undecodable:
        v = v[~bad]
    v = v.cpu()
    return _runs_from_values(v, case), stray, undecodable


class WordView:
    """A contiguous CPU capturer buffer as numpy uint64 words, (rows, layers,
    words per row), sharing its memory, for take_expected(); words_of()
    gives None for a buffer it cannot take (or without numpy)."""

    __slots__ = ("buf", "words", "flat")

    def __init__(self, buf, words):
        self.buf = buf
        self.words = words
        self.flat = words.reshape(-1)

    def all_zero(self):
        return self.flat.size == 0 or int(self.flat.max()) == 0


def words_of(buf):
    if (_np is None or SLOW or buf.dim() != 3 or buf.dtype.is_floating_point or buf.dtype is torch.bool
            or buf.device.type != "cpu" or not buf.is_contiguous() or (buf.shape[2] * buf.element_size()) % 8 != 0
            or buf.requires_grad):
        return None
    try:
        return WordView(buf, buf.view(torch.int64).numpy().view(_np.uint64))
    except Exception:
        return None


def take_expected(view, case, B, first, p):
    """The fast path of decode() + clearing, for the rows a correct capture
    writes. view: words_of(buf). When the checked layer's first p rows are
    the encodings of the values first .. first+p-1 and every other value of
    the buffer is 0, zeroes those rows and returns their run list, exactly
    what decode() returns then (no stray, nothing undecodable) and what the
    caller would clear. Otherwise leaves the buffer as it was and returns
    None (then decode()). Off under R3_ADAPTER_SLOW."""
    buf = view.buf
    if case.pad_v >= TABLE_ROWS or p < 0 or p > buf.shape[0] or case.layer >= buf.shape[1]:
        return None
    if p == 0:
        return [] if view.all_zero() else None
    if first < 1 or first + p - 1 > case.total:
        return None
    tw = TABLES.np_words(B, buf.device, case.pad_v + 1, buf.dtype)
    if tw is None:
        return None
    rows = view.words[:p, case.layer]
    want = tw[first: first + p]
    _np.bitwise_xor(rows, want, out=rows)  # 0 where the rows are the expected ones
    if view.all_zero():
        return _token_range_runs(case, first, p)
    _np.bitwise_xor(rows, want, out=rows)  # back as they were: decode() looks at all of it
    return None


def _token_range_runs(case, first, count):
    """Runs of the values first .. first+count-1 (all tokens, no pad)."""
    out = []
    idx = first - 1
    end = idx + count
    d = 0
    while idx < end:
        while case.offs[d + 1] <= idx:
            d += 1
        take = min(end, case.offs[d + 1]) - idx
        out.append((d, idx - case.offs[d], take))
        idx += take
    return out


def _runs_from_values(v, case):
    n = v.shape[0]
    if n == 0:
        return []
    cum_ends, cum_starts = case.cum_ends()
    idx = v - 1
    owner = torch.searchsorted(cum_ends, idx, right=True)  # pad: owner == D
    if n > 1:
        brk = (owner[1:] != owner[:-1]) | ((v[1:] != v[:-1] + 1) & (owner[1:] < case.D))
        starts = [0] + (torch.nonzero(brk).flatten() + 1).tolist()
    else:
        starts = [0]
    st = torch.tensor(starts, dtype=torch.int64)
    own = owner[st].tolist()
    tok = (idx[st] - cum_starts[owner[st]]).tolist()
    bounds = starts + [n]
    out = []
    for i, s in enumerate(starts):
        c = bounds[i + 1] - s
        if own[i] >= case.D:
            out.append((-1, 0, c))
        else:
            out.append((own[i], tok[i], c))
    return out


# ---------------------------------------------------------------------------
# Capturers, cached per shape and rank.

