"""The fork server (zygote) of `r3check sweep`: torch is imported once per
sweep, not once per version (docs/engines.md, "Sweeping versions").

    PY engines/runtime/r3runtime/zygote.py SOCKET

r3check starts it with a pipe on stdin (end of file: the sweep is over) and
one on stdout, on which it writes `listening` once SOCKET (a Unix seqpacket
socket in a private folder of r3check's) takes connections. It then imports
torch, torch.distributed and the runtime modules that touch no engine code,
and serves. It runs no torch op and starts no thread before it forks (a fork
after OpenMP or intra-op pools start can deadlock): it checks that it has
one thread before every fork.

A request comes from r3check's client, the process r3check starts in place
of the adapter (src/r3/engine/internal/fork_client.cc), in one message:

    b"r3zygote 1\\0" PGID \\0 UMASK \\0 ARGC \\0 ARGV... ENVC \\0 ENV...   (each field NUL-ended)

with four file descriptors (SCM_RIGHTS): its stdin, stdout, stderr and
working directory. ARGV is the adapter command a normal launch would exec
(`PY SCRIPT ARGS...`). The zygote forks a child that joins the client's
process group (so r3check's SIGTERM and SIGKILL of that group reach it as
they reach a normal adapter), takes the four descriptors, the umask, argv and
sys.path of `PY SCRIPT ARGS...`, says `pid N` to the client, and runs SCRIPT
as __main__: from there on it is the adapter process a normal launch would
have been, and exits the way it would. The zygote sends the child's raw wait
status (`status N`) when it reaps it; the client exits the same way. A
client whose connection closes while its child runs (it was SIGKILLed) gets
its child SIGKILLed.

It refuses (`refuse REASON`; the client then execs ARGV itself, as without
a fork server) a request whose interpreter, environment or runtime folder
is not the zygote's own, or that comes while the zygote has more than one
thread. If torch does not import it stops listening and exits 0: every
client then execs ARGV itself, whose error messages are the adapter's own.
R3_ADAPTER_LOG=INFO says on stderr why.

End of file on stdin, or SIGTERM: every child still running is SIGKILLed,
the socket removed, exit 0.
"""
import os
import select
import signal
import socket
import sys

MAGIC = b"r3zygote 1"
MAX_REQUEST = 1 << 20
_RUNTIME = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # engines/runtime


def _log(msg):
    if os.environ.get("R3_ADAPTER_LOG", "WARNING").upper() in ("INFO", "DEBUG"):
        try:
            os.write(2, f"r3check fork server: {msg}\n".encode("utf-8", "replace"))
        except OSError:
            pass


def _threads():
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


class Job:
    """What the child runs once it has left the serve loop: SCRIPT ARGS..."""

    def __init__(self, argv):
        self.argv = argv


class Zygote:
    def __init__(self, path):
        self.path = path
        self.python = getattr(sys, "orig_argv", [sys.executable])[0]
        self.env = dict(os.environb)  # before torch's import, which may set some
        # sys.path as `PY SCRIPT` would have it, without the script's folder.
        self.base_path = list(sys.path)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.listener.bind(path)
        self.listener.listen(256)
        self.children = {}  # pid -> connection
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        os.set_blocking(self.wake_r, False)
        self.handlers = {s: signal.getsignal(s) for s in (signal.SIGCHLD, signal.SIGTERM)}
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGTERM, lambda *_: None)
        self.wakeup = signal.set_wakeup_fd(self.wake_w)
        self.stopping = False

    # -- the parent ---------------------------------------------------------

    def serve(self):
        """Returns a Job in a child, None in the zygote once it is told to stop."""
        while not self.stopping:
            watched = [0, self.listener, self.wake_r] + [c for c in self.children.values() if c is not None]
            try:
                ready, _, _ = select.select(watched, [], [])
            except InterruptedError:
                ready = []
            for r in ready:
                if r == self.wake_r:
                    self.drain_wakeups()
                elif r == 0:
                    if not os.read(0, 4096):
                        self.stopping = True
                elif r is self.listener:
                    job = self.accept()
                    if job is not None:
                        return job
                else:
                    self.client_closed(r)
            self.reap()
        self.stop()
        return None

    def drain_wakeups(self):
        try:
            data = os.read(self.wake_r, 4096)
        except BlockingIOError:
            return
        if signal.SIGTERM in data:
            self.stopping = True

    def accept(self):
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return None
        fds = []
        try:
            conn.settimeout(10)
            data, fds, _, _ = socket.recv_fds(conn, MAX_REQUEST, 4)
            conn.settimeout(None)
            if len(fds) != 4 or not data:
                raise ValueError("not a request")
            req = self.parse(data)
            why = self.refusal(req)
            if why:
                _log(f"refused {req['argv']!r}: {why}")
                conn.sendall(b"refuse " + why.encode("utf-8", "replace"))
                raise ValueError(why)
            pid = os.fork()
            if pid == 0:
                return self.become(conn, fds, req)
            self.children[pid] = conn
            conn = None
        except (OSError, ValueError, UnicodeError):
            pass
        finally:
            for fd in fds:
                os.close(fd)
            if conn is not None:
                conn.close()
        return None

    @staticmethod
    def parse(data):
        fields = data.split(b"\0")
        if fields[0] != MAGIC or fields[-1] != b"":
            raise ValueError("not a request")
        pgid, umask, argc = int(fields[1]), int(fields[2]), int(fields[3])
        argv = [os.fsdecode(a) for a in fields[4:4 + argc]]
        envc = int(fields[4 + argc])
        env = fields[5 + argc:5 + argc + envc]
        if len(env) != envc or len(fields) != 6 + argc + envc:
            raise ValueError("not a request")
        environ = {}
        for e in env:
            k, sep, v = e.partition(b"=")
            if sep:
                environ.setdefault(k, v)
        return {"pgid": pgid, "umask": umask, "argv": argv, "env": environ}

    def refusal(self, req):
        argv = req["argv"]
        if len(argv) < 2 or argv[0] != self.python:
            return f"not this interpreter ({self.python})"
        if argv[1].startswith("-"):
            return "interpreter options"
        if req["env"] != self.env:
            return "another environment than the fork server's"
        script = os.path.realpath(argv[1])
        here = os.path.join(os.path.dirname(os.path.dirname(script)), "runtime")
        if not os.path.isfile(script) or os.path.realpath(here) != os.path.realpath(_RUNTIME):
            return f"{argv[1]} is no adapter of {os.path.dirname(_RUNTIME)}"
        n = _threads()
        if n != 1:
            return f"the fork server has {n} threads"
        return None

    def client_closed(self, conn):
        """The client is gone (SIGKILLed): its child must not outlive it."""
        try:
            if conn.recv(16):
                return  # clients send nothing after the request
        except OSError:
            pass
        for pid, c in self.children.items():
            if c is conn:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
                c.close()
                self.children[pid] = None  # reaped later; nobody to tell
                return

    def reap(self):
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            self.tell(self.children.pop(pid, None), status)

    @staticmethod
    def tell(conn, status):
        if conn is None:
            return
        try:
            conn.send(b"status %d" % status)
        except OSError:
            pass
        conn.close()

    def stop(self):
        for pid in self.children:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for pid, conn in self.children.items():
            try:
                _, status = os.waitpid(pid, 0)
            except OSError:
                status = signal.SIGKILL
            self.tell(conn, status)
        self.children.clear()
        self.close_listener()

    def close_listener(self):
        self.listener.close()
        try:
            os.unlink(self.path)
        except OSError:
            pass

    # -- the child ----------------------------------------------------------

    def become(self, conn, fds, req):
        """In the forked child: become the process `PY SCRIPT ARGS...` would be."""
        try:
            signal.set_wakeup_fd(self.wakeup)
            for s, h in self.handlers.items():
                signal.signal(s, h)
            # r3check stops the client's process group: this child is in it.
            os.setpgid(0, req["pgid"])
            self.listener.close()
            for c in self.children.values():
                if c is not None:
                    c.close()
            os.close(self.wake_r)
            os.close(self.wake_w)
            for target, fd in zip((0, 1, 2), fds):
                os.dup2(fd, target)
            os.fchdir(fds[3])
            for fd in fds:
                if fd > 2:
                    os.close(fd)
            fds.clear()
            os.umask(req["umask"])
            conn.sendall(b"pid %d" % os.getpid())
            conn.close()
        except BaseException:
            os._exit(127)
        argv = req["argv"][1:]
        sys.argv = list(argv)
        sys.path[:] = [os.path.dirname(os.path.realpath(argv[0]))] + self.base_path
        # Fresh random state, as a new interpreter would have (random reseeds
        # itself after fork; numpy's global generator does not).
        np_random = sys.modules.get("numpy.random")
        if np_random is not None:
            try:
                np_random.seed()
            except Exception:
                pass
        return Job(argv)


def _preload():
    """Everything a child needs that is no engine code and starts no thread."""
    import torch  # noqa: F401
    import torch.distributed  # noqa: F401

    sys.path.insert(0, _RUNTIME)
    try:
        from r3runtime import capture_engine, dist, errors, hygiene, protocol, rank, rows, tp  # noqa: F401
        from r3runtime import main, profile, standins, torch_compat  # noqa: F401
    finally:
        sys.path.remove(_RUNTIME)


def _run(job):
    """SCRIPT as __main__, the way `PY SCRIPT` runs it: a fresh __main__
    module, the file compiled under its absolute path, and an uncaught
    exception printed from the script's frame on (exit status 1)."""
    import builtins
    import importlib.machinery
    import types

    path = os.path.abspath(job.argv[0])
    main = types.ModuleType("__main__")
    main.__loader__ = importlib.machinery.SourceFileLoader("__main__", path)
    main.__annotations__ = {}
    main.__builtins__ = builtins
    main.__file__ = path
    main.__cached__ = None
    sys.modules["__main__"] = main
    with open(path, "rb") as f:
        source = f.read()
    code = compile(source, path, "exec", dont_inherit=True)
    try:
        exec(code, main.__dict__)
    except SystemExit:
        raise
    except BaseException as e:
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code is not code:
            tb = tb.tb_next
        if tb is not None:
            e.__traceback__ = tb  # what the default hook prints
        sys.excepthook(type(e), e, e.__traceback__)
        if isinstance(e, KeyboardInterrupt):
            sys.stderr.flush()
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        sys.exit(1)


def main(path):
    del sys.path[0]  # this file's folder: `PY SCRIPT` has SCRIPT's instead
    zygote = Zygote(path)
    os.write(1, b"listening\n")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    try:
        _preload()
    except BaseException as e:
        _log(f"unavailable: cannot import torch with {sys.executable}: {type(e).__name__}: {e}")
        zygote.close_listener()
        return None
    n = _threads()
    if n != 1:
        _log(f"unavailable: {n} threads after importing torch")
        zygote.close_listener()
        return None
    # What was imported moves to the collector's permanent generation, so
    # that a child's collections neither walk it nor copy its pages (each
    # gc header they touch is a copy-on-write fault): measured, a forked
    # adapter's 324 cases took 1.74 s without this and 1.39 s with it (an
    # exec'd one 1.4-1.6 s). Nothing frozen is garbage: modules and what
    # they hold.
    import gc

    gc.collect()
    gc.freeze()
    _log(f"ready (pid {os.getpid()}, torch imported)")
    return zygote.serve()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    _job = main(sys.argv[1])
    if _job is None:
        os._exit(0)  # the fork server's own exit: no atexit hook of what it imported runs
    _run(_job)
