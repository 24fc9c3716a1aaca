"""The protocol loop (docs/engines.md, protocol 1): requests on the
protocol's stdin, one reply line each on its stdout. Under torchrun process
0 alone speaks the protocol; it broadcasts each request to the others and
gathers their results."""
import json

from r3runtime import profile
from r3runtime.capture_engine import GapDuringRun, case_result
from r3runtime.errors import Fatal, Refused, exc_text, gap_fatal, one_line
from r3runtime.rows import Case

PROTOCOL = 1


def dumps(obj):
    """One protocol line: valid UTF-8 JSON whatever text the engine raised
    (a lone surrogate in an exception message becomes U+FFFD)."""
    text = _encode(obj)
    if text.isascii():  # no surrogate to replace
        return text + "\n"
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace") + "\n"


_encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


class Adapter:
    def __init__(self, stdio, adapter_dirs=()):
        self.stdio = stdio  # hygiene.Stdio, None on processes other than 0
        self.dist = None
        self.engine = None  # capture_engine.CaptureEngine
        self.hello = None
        self.adapter_dirs = adapter_dirs  # the engine adapter's own files: not the engine's frames

    def send(self, obj):
        if self.stdio is None:
            return
        self.stdio.writer.write(dumps(obj))
        self.stdio.writer.flush()

    def is_root(self):
        return self.dist is None or self.dist.rank == self.dist.root

    def handle_run(self, req):
        rid = req.get("id")
        cases = req.get("_parsed")
        if cases is None:
            cases = [Case(i, c) for i, c in enumerate(req["cases"])]
        eng = self.engine
        if self.dist is None:
            try:
                out = []
                for c in cases:
                    out.append(case_result(c, eng.run_case_emulated(c), "emulated"))
                    c.release()
            except GapDuringRun as g:
                raise gap_fatal(g.gap, g.while_doing, self.adapter_dirs)
            except Refused as r:
                raise Fatal(one_line(r))
            return {"type": "result", "id": rid, "cases": out}
        D = self.dist
        D.ensure_groups(cases)
        results = {}
        emulated = {}
        error = None
        try:
            for ci, case in enumerate(cases):
                if case.T > D.world:
                    if D.rank == D.root:
                        emulated[ci] = eng.run_case_emulated(case)
                else:
                    D.run_real(eng, case, ci, results)
                case.release()
        except GapDuringRun as g:  # every rank must still reach the gather
            error = str(gap_fatal(g.gap, g.while_doing, self.adapter_dirs))
        except Refused as r:
            error = one_line(r)
        except Exception as e:  # an adapter bug
            error = f"adapter failure during run: rank {D.rank}: {exc_text(e)}"
        gathered = D.gather((results, error))
        if D.rank != D.root:
            return None
        errors = [g[1] for g in gathered if g[1]]
        if errors:
            raise Fatal(errors[0])
        merged = {}
        for g in gathered:
            merged.update(g[0])
        out = []
        for ci, case in enumerate(cases):
            if ci in emulated:
                out.append(case_result(case, emulated[ci], "emulated"))
            else:
                ranks = [merged[(ci, d, t)] for d in range(case.D) for t in range(case.T)]
                out.append(case_result(case, ranks, "real"))
        return {"type": "result", "id": rid, "cases": out}

    def read_request(self):
        while True:
            line = self.stdio.reader.readline()
            if not line:
                return {"type": "__eof__"}
            if line.strip():
                break
        if profile.ON:
            profile.request_read()
        try:
            req = json.loads(line)
        except ValueError as e:
            raise Fatal(f"request is not JSON: {exc_text(e)}")
        if not isinstance(req, dict) or not isinstance(req.get("type"), str):
            raise Fatal("request is not a JSON object with a string \"type\"")
        if req["type"] not in ("hello", "run", "bye"):
            raise Fatal(f"unknown request type {req['type']!r}")
        if req["type"] == "hello" and req.get("protocol") != PROTOCOL:
            raise Fatal(f"protocol {req.get('protocol')!r} is not supported (this adapter speaks protocol {PROTOCOL})")
        if req["type"] == "run":
            if not isinstance(req.get("cases"), list):
                raise Fatal("run request without a cases list")
            # Parsed (and validated) before any rank starts.
            req["_parsed"] = [Case(i, c) for i, c in enumerate(req["cases"])]
        return req

    def loop(self):
        while True:
            if self.is_root():
                try:
                    req = self.read_request()
                except Fatal as f:
                    if self.dist is not None:
                        self.dist.bcast({"type": "__fatal__", "error": str(f)})
                    raise
                if self.dist is not None:
                    self.dist.bcast({k: v for k, v in req.items() if k != "_parsed"})
            else:
                req = self.dist.bcast(None)
            kind = req["type"]
            if kind == "__fatal__":
                raise Fatal(req["error"])
            if kind in ("bye", "__eof__"):
                return 0
            if kind == "hello":
                if self.is_root():
                    self.send(self.hello)
                if profile.ON:
                    profile.hello_sent()
                continue
            try:
                reply = self.handle_run(req)
            except Fatal as f:
                if self.dist is not None and self.is_root():
                    self.dist.bcast({"type": "__fatal__", "error": str(f)})
                raise
            if self.is_root():
                self.send(reply)
                if profile.ON:
                    profile.reply_sent()
